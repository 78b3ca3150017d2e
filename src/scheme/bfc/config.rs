//! `[bfc]`: BFC's scenario table, validation and memory ([`SchemeConfig`] for [`BfcConfig`]).

use serde::Deserialize;

use super::{BfcConfig, BfcMode, FlowTable, MIN_TAU_PS};
use crate::scheme::config::{CoreDefaults, Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, Declares, Exclusive, KeyView, Peers};
use crate::units::parse_bytes;

/// `[bfc]` as written: backpressure flow control (switches and NICs).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawBfc {
    /// On/off.
    pub enabled: Option<bool>,
    /// `bfc` (default), `vfid`, `sfq` or `ideal_fq`.
    pub mode: Option<Value>,
    /// Physical queues per port (default 32).
    pub queues: Option<usize>,
    /// First packets in the high-priority queue (default: on for bfc/vfid, off otherwise).
    pub high_priority_queue: Option<bool>,
    /// VFID space / flow-table buckets (default 16384).
    pub vfid_table: Option<u32>,
    /// Overflow-cache entries (default 100).
    pub overflow_cache: Option<usize>,
    /// Bloom filter size (default 128 B).
    pub bloom_bytes: Option<Value>,
    /// Bloom filter hashes (default 4).
    pub bloom_hashes: Option<u32>,
    /// One-hop RTT of the threshold (default: 2 × the ingress link's delay).
    pub hrtt: Option<Value>,
    /// Pause-frame period τ (default HRTT / 2).
    pub tau: Option<Value>,
    /// Flows resumed per physical queue per τ (default 1).
    pub resumes_per_tau: Option<u32>,
    /// BFC-BufferOpt: a queue at or below the threshold makes all its paused flows due
    /// (default false).
    pub resume_whole_queue: Option<bool>,
}

impl SchemeConfig for BfcConfig {
    const TABLE: &'static str = "bfc";
    type Raw = RawBfc;

    fn resolve(&mut self, b: &RawBfc, f: &impl Fields) -> Result<(), String> {
        self.enabled = b.enabled.unwrap_or(self.enabled);
        if let Some(m) = &b.mode {
            self.mode = match m.get_ref().as_str() {
                "bfc" => BfcMode::Bfc,
                "vfid" => BfcMode::Vfid,
                "sfq" => BfcMode::Sfq,
                "ideal_fq" => BfcMode::IdealFq,
                _ => {
                    return Err(f.err(
                        m,
                        "bfc.mode",
                        "expected `bfc`, `vfid`, `sfq` or `ideal_fq`",
                    ));
                }
            };
        }
        self.physical_queues = b.queues.unwrap_or(self.physical_queues);
        self.high_priority_queue = b.high_priority_queue.or(self.high_priority_queue);
        self.vfid_table = b.vfid_table.unwrap_or(self.vfid_table);
        self.overflow_cache = b.overflow_cache.unwrap_or(self.overflow_cache);
        self.bloom_hashes = b.bloom_hashes.unwrap_or(self.bloom_hashes);
        self.resumes_per_tau = b.resumes_per_tau.unwrap_or(self.resumes_per_tau);
        self.resume_whole_queue = b.resume_whole_queue.unwrap_or(self.resume_whole_queue);
        if let Some(v) = &b.bloom_bytes {
            let bytes = parse_bytes(v.get_ref()).map_err(|e| f.err(v, "bfc.bloom_bytes", e))?;
            self.bloom_bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
        }
        self.hrtt_ps = f.opt_time(&b.hrtt, "bfc.hrtt")?.or(self.hrtt_ps);
        self.tau_ps = f.opt_time(&b.tau, "bfc.tau")?.or(self.tau_ps);
        Ok(())
    }

    /// When on, the ports get `queues + 3` queues and a DRR scheduler of quantum one full
    /// data packet (paper: 1 MTU), unless `[network]` sets them.
    fn core_defaults(&self, max_packet_bytes: u64) -> CoreDefaults {
        if !self.enabled {
            return CoreDefaults::default();
        }
        CoreDefaults {
            queues_per_port: Some(self.queues_per_port()),
            drr_quantum_bytes: Some(max_packet_bytes as u32),
        }
    }

    fn issues(&self, core: &CoreView, _peers: &Peers) -> Issues {
        BfcConfig::issues(self, core.queues_per_port)
    }

    /// BFC assigns data queues to flows (PFC then pauses every data queue as one class), owns
    /// the switch queues and scheduler, and holds queues back hop by hop.
    fn declares(&self) -> Declares {
        if !self.enabled {
            return Declares::default();
        }
        Declares {
            on: Some(("BFC", "bfc.enabled")),
            queues_by_flow: true,
            exclusive: &[Exclusive::SwitchQueues, Exclusive::HopByHopHold],
            ..Declares::default()
        }
    }

    /// Without `bfc.hrtt` or `bfc.tau`, each port's τ defaults to its link's delay (HRTT =
    /// 2 × delay, τ = HRTT/2), which must not fall below the shortest accepted pause-frame
    /// period (100 ns, as `bfc.tau` itself): a shorter one floods the links with pause frames.
    fn topology_issues(&self, topo: &crate::topology::TopologySpec) -> Issues {
        if !self.enabled || self.tau_ps.is_some() || self.hrtt_ps.is_some() {
            return Vec::new();
        }
        match topo.links.iter().map(|l| l.delay_ps).min() {
            Some(d) if d < MIN_TAU_PS => vec![(
                "bfc.tau",
                format!(
                    "not given, so each port's τ defaults to its link's delay (HRTT = 2 × delay, \
                     τ = HRTT/2), and the shortest link delay, {}, is below the shortest \
                     accepted pause-frame period, {}: set `bfc.tau` (or `bfc.hrtt`)",
                    crate::units::fmt_time(d),
                    crate::units::fmt_time(MIN_TAU_PS)
                ),
            )],
            _ => Vec::new(),
        }
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            return Vec::new();
        }
        vec![Inert {
            keys: &[
                "bfc.mode",
                "bfc.queues",
                "bfc.high_priority_queue",
                "bfc.vfid_table",
                "bfc.overflow_cache",
                "bfc.bloom_bytes",
                "bfc.bloom_hashes",
                "bfc.hrtt",
                "bfc.tau",
                "bfc.resumes_per_tau",
                "bfc.resume_whole_queue",
            ],
            why: "has no effect: BFC runs only with `bfc.enabled = true`",
        }]
    }

    /// The flow table (`bfc.vfid_table`).
    fn tables(&self) -> Vec<(&'static str, u64)> {
        if !self.enabled {
            return Vec::new();
        }
        vec![("bfc.vfid_table", FlowTable::bytes_for(self))]
    }
}
