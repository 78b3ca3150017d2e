//! Scenario building shared by the BFC integration tests (`tests/bfc.rs`, `tests/bfc_fq.rs`):
//! the network of a BFC run, flows, and a scenario read from TOML text.

use sfc::config::{BufferConfig, BufferMode, SchedulerKind};
use sfc::registry::{NetConfig, SchemeConfigs};
use sfc::scheme::bfc::BfcConfig;
use sfc::workload::FlowSpec;

/// Data packet on the wire: 1000 B payload + 48 B headers (HPCC framing), bytes.
pub const PKT: u64 = 1048;

/// Deficit round robin with a quantum of one data packet.
pub fn drr_one_packet() -> SchedulerKind {
    SchedulerKind::Drr {
        quantum_bytes: PKT as u32,
    }
}

/// The network of a BFC run: `bfc` (its queue count sets the ports' queues), `scheduler` at
/// every port and a 12 MB shared buffer in `buffer` mode (Dynamic Threshold α = 1).
pub fn net(bfc: BfcConfig, buffer: BufferMode, scheduler: SchedulerKind) -> NetConfig {
    NetConfig {
        core: sfc::config::CoreConfig {
            queues_per_port: bfc.queues_per_port(),
            scheduler,
            buffer: BufferConfig {
                mode: buffer,
                size_bytes: 12_000_000,
                dt_alpha: 1.0,
            },
            ..Default::default()
        },
        schemes: SchemeConfigs {
            bfc,
            ..Default::default()
        },
    }
}

/// A background flow of `size` bytes from host `src` to host `dst`, starting at `start_ps`.
pub fn flow_at(src: u32, dst: u32, size: u64, start_ps: u64) -> FlowSpec {
    FlowSpec::background(src, dst, size, start_ps)
}

/// The scenario of TOML `text` (as file `t.toml` in the current directory).
pub fn scenario(text: &str) -> Result<sfc::scenario::Scenario, String> {
    sfc::scenario::from_str(text, "t.toml", std::path::Path::new("."), &[])
}

/// Every flow's bytes delivered by `sim` at its current time (the start of a measurement).
pub fn delivered(sim: &sfc::sim::Simulator) -> Vec<u64> {
    (0..sim.flows.len())
        .map(|f| sim.delivered_bytes(f))
        .collect()
}

/// Run `sim` to `t1_ps`, finish it, check its invariants, and return every flow's bytes
/// delivered since `before` ([`delivered`] at the start of the window).
pub fn delivered_until(sim: &mut sfc::sim::Simulator, before: &[u64], t1_ps: u64) -> Vec<u64> {
    sim.cfg.stop_ps = t1_ps;
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    before
        .iter()
        .enumerate()
        .map(|(f, b)| sim.delivered_bytes(f) - b)
        .collect()
}
