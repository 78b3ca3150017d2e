//! `[ndp]`: NDP's scenario table and validation ([`SchemeConfig`] for [`NdpConfig`]).

use serde::Deserialize;

use super::NdpConfig;
use crate::scheme::config::{Fields, Inert, Issues, SchemeConfig, Value};
use crate::scheme::{CoreView, Declares, Exclusive, KeyView, Peers};

/// `[ndp]` as written: NDP — trimming switches and the receiver-pulled transport.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNdp {
    /// On/off.
    pub enabled: Option<bool>,
    /// Capacity of each of a port's two queues, in full-size data packets (default 8).
    pub queue_pkts: Option<u32>,
    /// Byte capacity of the header (control) queue (default: the data queue's bytes).
    pub control_queue: Option<Value>,
    /// Header-queue packets per data-queue packet when both are backlogged (default 10).
    pub high_weight: Option<u16>,
    /// Initial window (default 1 BDP, max base RTT × host rate).
    pub iw: Option<Value>,
    /// Retransmission timeout (default 5 ms).
    pub rto: Option<Value>,
    /// Byte-level credits (default true; false = one packet per pull, original NDP).
    pub byte_credits: Option<bool>,
    /// Flow-level round robin at the sender (default true; false = FIFO, original NDP).
    pub sender_rr: Option<bool>,
    /// Pull rate as a fraction of the receiver's link rate (default 1).
    pub pull_rate: Option<f64>,
    /// Wire size of headers, ACKs, NACKs and PULLs (default 64 B).
    pub header_bytes: Option<Value>,
    /// Per-packet multipath (default false: a flow keeps one ECMP path).
    pub spray: Option<bool>,
}

impl SchemeConfig for NdpConfig {
    const TABLE: &'static str = "ndp";
    type Raw = RawNdp;

    fn resolve(&mut self, r: &RawNdp, f: &impl Fields) -> Result<(), String> {
        self.enabled = r.enabled.unwrap_or(self.enabled);
        self.queue_pkts = r.queue_pkts.unwrap_or(self.queue_pkts);
        self.control_queue_bytes = f.bytes(
            &r.control_queue,
            "ndp.control_queue",
            self.control_queue_bytes,
        )?;
        self.high_weight = r.high_weight.unwrap_or(self.high_weight);
        self.iw_bytes = f.bytes(&r.iw, "ndp.iw", self.iw_bytes)?;
        self.rto_ps = f.time(&r.rto, "ndp.rto", self.rto_ps)?;
        self.byte_credits = r.byte_credits.unwrap_or(self.byte_credits);
        self.sender_rr = r.sender_rr.unwrap_or(self.sender_rr);
        self.pull_rate = r.pull_rate.unwrap_or(self.pull_rate);
        self.spray = r.spray.unwrap_or(self.spray);
        let hb = f.bytes(
            &r.header_bytes,
            "ndp.header_bytes",
            self.header_bytes as u64,
        )?;
        self.header_bytes = hb.min(u32::MAX as u64) as u32;
        Ok(())
    }

    fn issues(&self, core: &CoreView, _peers: &Peers) -> Issues {
        let mut v = NdpConfig::issues(self, core.queues_per_port);
        if self.enabled && core.lossless {
            v.push((
                "buffer.mode",
                "NDP trims instead of pausing: use a lossy or unlimited buffer".into(),
            ));
        }
        v
    }

    fn rtt_issues(&self, base_rtt_ps: u64, short: &dyn Fn(u64) -> String) -> Issues {
        if self.enabled && self.rto_ps > 0 && self.rto_ps < base_rtt_ps {
            vec![("ndp.rto", short(self.rto_ps))]
        } else {
            Vec::new()
        }
    }

    /// NDP owns the switch queues and scheduler (trimming, its control queue, WRR).
    fn declares(&self) -> Declares {
        if !self.enabled {
            return Declares::default();
        }
        Declares {
            on: Some(("NDP", "ndp.enabled")),
            exclusive: &[Exclusive::SwitchQueues],
            ..Declares::default()
        }
    }

    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        if self.enabled {
            return vec![Inert {
                keys: &["network.scheduler"],
                why: "is replaced with NDP's weighted round robin (`ndp.high_weight`) when NDP \
                      is on",
            }];
        }
        // A `[[compare]]` variant may switch NDP on: a warning, not an error.
        vec![Inert {
            keys: &[
                "ndp.queue_pkts",
                "ndp.control_queue",
                "ndp.high_weight",
                "ndp.iw",
                "ndp.rto",
                "ndp.byte_credits",
                "ndp.sender_rr",
                "ndp.pull_rate",
                "ndp.header_bytes",
                "ndp.spray",
            ],
            why: "has no effect: NDP runs only with `ndp.enabled = true`",
        }]
    }

    /// The NDP transport keeps per-flow state indexed by flow id.
    fn needs_flow_list(&self) -> bool {
        self.enabled
    }
}
