//! `[pfc]`: PFC's configuration (HPCC-sim's switch MMU model, `specs/pfc.md`), its scenario
//! table and validation ([`SchemeConfig`] for [`PfcConfig`]). PFC runs on a lossless fabric
//! (`buffer.mode = "lossless"`) unless another scheme runs the lossless buffer instead
//! ([`crate::scheme::Peers::replaces_pfc`]).

use serde::Deserialize;

use crate::scheme::config::{Fields, HpccFields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, Declares, KeyView, Peers};

/// PFC (lossless fabric) parameters, HPCC-sim's switch MMU model (`specs/pfc.md`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PfcConfig {
    /// Guaranteed bytes per ingress (port, priority) before the shared pool is used (4 KiB).
    pub reserve_bytes: u64,
    /// XON hysteresis: resume when shared use + this ≤ threshold (3 KiB).
    pub resume_offset_bytes: u64,
    /// Headroom per port = factor × link rate × one-way delay (HPCC-sim: 3).
    pub headroom_factor: f64,
    /// Fixed extra headroom per port, bytes (e.g. 2 MTU), added to the above.
    pub headroom_extra_bytes: u64,
    /// α of the ingress dynamic threshold at host-rate ports (HPCC-sim 1/8); it doubles for
    /// every doubling of the port rate above the host rate, up to 1 (400 G → 1/2).
    pub alpha_host: f64,
    /// Pause frames carry real quanta and expire unless refreshed (the switch refreshes XOFF
    /// at half the pause time). `false` = HPCC-sim: a PAUSE holds until an explicit RESUME.
    pub expiry: bool,
    /// Pause quanta in a PAUSE frame ([`MIN_PFC_QUANTA`]..=65535; one quantum = 512 bit times).
    pub quanta: u32,
    /// The NIC rate α's doubling starts from, bits per second. `None` (TOML scenarios): the
    /// slowest host link. `sfc hpcc` sets HPCC-sim's `get_nic_rate`: the link of the host with
    /// the lowest node id (they differ only with host links of mixed rates).
    pub nic_rate_bps: Option<u64>,
}

/// Fewest pause quanta a PAUSE frame may carry. A switch refreshes an XOFF every half pause
/// time, and a PAUSE frame takes one quantum (64 B) to send: with 1 quantum the refreshes alone
/// would need twice the link, with 2 all of it. From 8 the refreshes take at most a quarter of
/// the link (one frame per 4 quanta).
pub const MIN_PFC_QUANTA: u32 = 8;

impl PfcConfig {
    /// PFC headroom of one port, bytes: HPCC-sim's integer `rate · delay_ns / 8 / 1e9` (the
    /// one-way bytes in flight) times `headroom_factor`, plus `headroom_extra_bytes`. The one
    /// formula for the switches' PFC state and the carve-out check.
    pub fn port_headroom_bytes(&self, rate_bps: u64, delay_ps: u64) -> u64 {
        let one_way = (rate_bps as u128 * (delay_ps / 1000) as u128 / 8 / 1_000_000_000)
            .min(u64::MAX as u128) as u64;
        ((one_way as f64 * self.headroom_factor) as u64).saturating_add(self.headroom_extra_bytes)
    }
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            reserve_bytes: 4096,
            resume_offset_bytes: 3072,
            headroom_factor: 3.0,
            headroom_extra_bytes: 0,
            alpha_host: 0.125,
            expiry: true,
            quanta: 65535,
            nic_rate_bps: None,
        }
    }
}

/// `[pfc]` as written: lossless-mode parameters.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPfc {
    /// Pauses expire unless refreshed (real quanta); false = HPCC-sim (hold until RESUME).
    pub expiry: Option<bool>,
    /// Pause quanta per PAUSE frame.
    pub quanta: Option<u32>,
    /// Headroom = factor × rate × link delay.
    pub headroom_factor: Option<f64>,
    /// Ingress dynamic-threshold α at host-rate ports.
    pub alpha: Option<f64>,
    /// Per-(port, priority) reserve.
    pub reserve: Option<Value>,
}

/// The `[pfc]` keys.
const KEYS: [&str; 5] = [
    "pfc.expiry",
    "pfc.quanta",
    "pfc.headroom_factor",
    "pfc.alpha",
    "pfc.reserve",
];

impl SchemeConfig for PfcConfig {
    const TABLE: &'static str = "pfc";
    type Raw = RawPfc;
    const HPCC_KEYS: &'static [&'static str] = &["PFC_EXPIRY"];

    fn resolve(&mut self, r: &RawPfc, f: &impl Fields) -> Result<(), String> {
        self.expiry = r.expiry.unwrap_or(self.expiry);
        self.quanta = r.quanta.unwrap_or(self.quanta);
        self.headroom_factor = r.headroom_factor.unwrap_or(self.headroom_factor);
        self.alpha_host = r.alpha.unwrap_or(self.alpha_host);
        self.reserve_bytes = f.bytes(&r.reserve, "pfc.reserve", self.reserve_bytes)?;
        Ok(())
    }

    /// PFC is the lossless buffer's flow control unless a scheme replaces it; what others
    /// read of it is its XON hysteresis (TCD's default B1 − B0).
    fn declares(&self) -> Declares {
        Declares {
            on: Some(("PFC", "buffer.mode")),
            xon_hysteresis_bytes: Some(self.resume_offset_bytes),
            ..Declares::default()
        }
    }

    fn issues(&self, _core: &CoreView, _peers: &Peers) -> Issues {
        let mut v: Issues = Vec::new();
        if !(MIN_PFC_QUANTA..=65535).contains(&self.quanta) {
            v.push((
                "pfc.quanta",
                format!(
                    "must be in {MIN_PFC_QUANTA}..=65535 (got {}; a switch refreshes a pause every \
                     half pause time, and below {MIN_PFC_QUANTA} quanta the refresh frames alone \
                     take more than a quarter of the link)",
                    self.quanta
                ),
            ));
        }
        if !(self.headroom_factor.is_finite() && self.headroom_factor >= 0.0) {
            v.push((
                "pfc.headroom_factor",
                format!("must be a finite number ≥ 0 (got {})", self.headroom_factor),
            ));
        }
        if !(self.alpha_host.is_finite() && self.alpha_host > 0.0) {
            v.push((
                "pfc.alpha",
                format!("must be a positive number (got {})", self.alpha_host),
            ));
        }
        v
    }

    /// PFC runs only on a lossless fabric.
    fn inert(&self, core: &KeyView, peers: &Peers) -> Vec<Inert> {
        if core.lossless || peers.replaces_pfc.is_some() {
            return Vec::new();
        }
        vec![Inert {
            keys: &KEYS,
            why: "has no effect: PFC runs only with `buffer.mode = \"lossless\"`",
        }]
    }

    /// Every PFC key, when another scheme runs the lossless buffer.
    fn refused(&self, peers: &Peers) -> Vec<Inert> {
        match peers.replaces_pfc {
            Some(why) => vec![Inert { keys: &KEYS, why }],
            None => Vec::new(),
        }
    }

    /// HPCC-sim: a PAUSE holds until RESUME (no quanta) unless `PFC_EXPIRY 1`.
    fn resolve_hpcc(&mut self, c: &impl HpccFields) -> Result<(), String> {
        self.expiry = c.flag("PFC_EXPIRY", false)?;
        Ok(())
    }

    /// `PFC_EXPIRY` off a lossless fabric.
    fn hpcc_inert(&self, core: &KeyView) -> Vec<(&'static [&'static str], &'static str)> {
        if core.lossless {
            return Vec::new();
        }
        vec![(
            &["PFC_EXPIRY"],
            "PFC runs only with BUFFER_MODE lossless (the default)",
        )]
    }

    /// PFC's α scales from HPCC-sim's `get_nic_rate`: the first host's link, not the slowest.
    fn resolve_hpcc_topology(&mut self, topo: &crate::topology::TopologySpec) {
        self.nic_rate_bps = topo.first_host_rate_bps();
    }

    /// `sfc hpcc` has one PFC key: every PFC issue names it.
    fn hpcc_key(_key: &'static str) -> &'static str {
        "PFC_EXPIRY"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PFC's keys: no effect on a lossy fabric (warnings), errors when another scheme runs
    /// the lossless buffer, neither on a lossless PFC fabric.
    #[test]
    fn pfc_keys_are_inert_off_lossless_and_refused_when_replaced() {
        let c = PfcConfig::default();
        let lossy = KeyView { lossless: false };
        let lossless = KeyView { lossless: true };
        let alone = Peers::default();
        let replaced = Peers {
            replaces_pfc: Some("PFC and CBFC cannot run together"),
            ..Peers::default()
        };
        let inert = c.inert(&lossy, &alone);
        assert_eq!(inert.len(), 1);
        assert_eq!(inert[0].keys, KEYS);
        assert!(inert[0].why.contains("buffer.mode"));
        assert!(c.inert(&lossless, &alone).is_empty());
        assert!(c.refused(&alone).is_empty());
        let refused = c.refused(&replaced);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].why, "PFC and CBFC cannot run together");
        // Refused keys are not also warned about.
        assert!(c.inert(&lossy, &replaced).is_empty());
    }

    /// Each bad value is an issue on its own key, with the messages the scenario reader
    /// prints; 8 quanta is the smallest accepted.
    #[test]
    fn bad_values_name_their_keys() {
        let core = CoreView {
            lossless: true,
            has_ecn: false,
            queues_per_port: 8,
            max_packet_bytes: 1048,
            smallest_buffer_bytes: 1 << 20,
        };
        let c = PfcConfig {
            quanta: MIN_PFC_QUANTA - 1,
            headroom_factor: f64::NAN,
            alpha_host: 0.0,
            ..PfcConfig::default()
        };
        let keys: Vec<&str> = c
            .issues(&core, &Peers::default())
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(keys, ["pfc.quanta", "pfc.headroom_factor", "pfc.alpha"]);
        let ok = PfcConfig {
            quanta: MIN_PFC_QUANTA,
            ..PfcConfig::default()
        };
        assert!(ok.issues(&core, &Peers::default()).is_empty());
    }
}
