//! The built-in default scenario, `scenarios/default.toml` compiled into the binary.

/// TOML text of the default scenario.
pub const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/default.toml");

/// Load the default scenario (with optional `--set` overrides).
pub fn load(sets: &[String]) -> Result<super::Scenario, String> {
    super::from_str(
        DEFAULT_SCENARIO,
        "<built-in default>",
        std::path::Path::new("."),
        sets,
    )
}
