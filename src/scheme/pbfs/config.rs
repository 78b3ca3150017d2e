//! `[pbfs]`: PB-FS's scenario table and validation ([`SchemeConfig`] for [`PbfsConfig`]).

use serde::Deserialize;

use super::{MAX_SLOTS, PbfsConfig, PbfsDeploy};
use crate::scheme::config::{Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, KeyView, Peers};

/// `[pbfs]` as written: PB-FS, postcard-based fast start.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPbfs {
    /// On/off.
    pub enabled: Option<bool>,
    /// `all` (default) or `tor`.
    pub deploy: Option<Value>,
    /// N, slots per half DC_RTT (default 8).
    pub n_slots: Option<u32>,
    /// Δ, marking offset and distance in packets (default 6).
    pub delta: Option<u32>,
    /// DC_RTT (default: the topology's maximum base RTT).
    pub dc_rtt: Option<Value>,
    /// τ (default DC_RTT/2).
    pub tau: Option<Value>,
    /// I_min (default 20 % of the maximum BDP).
    pub i_min: Option<Value>,
    /// μ, target utilization (default 0.95).
    pub mu: Option<f64>,
}

impl SchemeConfig for PbfsConfig {
    const TABLE: &'static str = "pbfs";
    type Raw = RawPbfs;

    /// Zero/absent durations and sizes select the paper's defaults derived from the topology
    /// (DC_RTT = max base RTT, τ = DC_RTT/2, I_min = 20 % of the max BDP).
    fn resolve(&mut self, s: &RawPbfs, f: &impl Fields) -> Result<(), String> {
        self.enabled = s.enabled.unwrap_or(false);
        if let Some(d) = &s.deploy {
            self.deploy = match d.get_ref().as_str() {
                "all" => PbfsDeploy::All,
                "tor" => PbfsDeploy::Tor,
                _ => return Err(f.err(d, "pbfs.deploy", "expected all or tor")),
            };
        }
        self.n_slots = s.n_slots.unwrap_or(self.n_slots);
        self.delta = s.delta.unwrap_or(self.delta);
        self.mu = s.mu.unwrap_or(self.mu);
        self.dc_rtt_ps = f.time(&s.dc_rtt, "pbfs.dc_rtt", 0)?;
        self.tau_ps = f.time(&s.tau, "pbfs.tau", 0)?;
        self.i_min_bytes = f.bytes(&s.i_min, "pbfs.i_min", 0)?;
        Ok(())
    }

    fn issues(&self, _core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = Vec::new();
        if !(1..=MAX_SLOTS).contains(&self.n_slots) {
            v.push((
                "pbfs.n_slots",
                format!("must be in 1..={MAX_SLOTS} (got {})", self.n_slots),
            ));
        }
        if !(1..=1_000_000).contains(&self.delta) {
            v.push((
                "pbfs.delta",
                format!("must be in 1..=1000000 packets (got {})", self.delta),
            ));
        }
        if !(self.mu > 0.0 && self.mu <= 1.0) {
            v.push(("pbfs.mu", format!("must be in (0, 1] (got {})", self.mu)));
        }
        v
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            return Vec::new();
        }
        // A `[[compare]]` variant may switch PB-FS on: a warning, not an error.
        vec![Inert {
            keys: &[
                "pbfs.deploy",
                "pbfs.n_slots",
                "pbfs.delta",
                "pbfs.dc_rtt",
                "pbfs.tau",
                "pbfs.i_min",
                "pbfs.mu",
            ],
            why: "has no effect: PB-FS runs only with `pbfs.enabled = true`",
        }]
    }

    /// The host half keeps per-flow state indexed by flow id.
    fn needs_flow_list(&self) -> bool {
        self.enabled
    }

    /// PB-FS has no `sfc hpcc` keys (scenario files only); never reported there.
    fn hpcc_key(_key: &'static str) -> &'static str {
        "PBFS"
    }
}
