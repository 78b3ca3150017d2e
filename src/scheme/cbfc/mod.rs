//! CBFC — InfiniBand credit-based flow control (IBA Vol. 1 §7.9, "flow control"), the third
//! lossless buffer mode next to PFC, and IB's FECN/BECN congestion notification as the
//! baseline detector TCD-IB is compared against (`docs/src/model.md`, "CBFC, TCD-IB and FECN/BECN").
//!
//! Per link and per virtual lane (VL = the priority / data queue index): the downstream
//! ingress buffer of the VL holds `limit` credit blocks; the upstream sender (a switch
//! egress port or a host NIC) counts the blocks it sent (FCTBS) and may start a packet only
//! while the receiver's latest flow-control credit limit (FCCL) leaves it room; the receiver
//! frees blocks as packets leave its ingress buffer and advertises `FCCL = limit + blocks
//! freed so far` in a flow-control packet (FCP) every credit-update period `T_c` (only for
//! the VLs whose FCCL changed since the last FCP: an unchanged FCCL tells the sender
//! nothing on a loss-free link). Nothing is ever dropped: an admitted packet always had room.
//!
//! - [`CbfcConfig`] (this file): the `[cbfc]` scenario section;
//! - [`CbfcConfig::period_ps`], [`default_limit_blocks`]: `T_c` per port (65 536 symbol times) and the
//!   default per-(port, VL) credit limit that lets one flow run at line rate;
//! - [`Credits`]: the sender's per-VL state (FCTBS, FCCL, blocked or not, blocked time);
//! - [`switch::CbfcSwitch`]: the switch half — ingress accounting and FCPs (receiver),
//!   egress credits (sender), FECN marking;
//! - [`host::CbfcHost`]: the host half — NIC credits (sender).
//!
//! Host NICs are senders only: a switch port facing a host is not credit-limited (an HCA
//! drains its receive buffer at line rate, so with a limit ≥ the hop's credit loop its
//! credits never run out; `docs/src/model.md` lists this deviation).

pub mod config;
pub mod host;
pub mod switch;
pub mod wire;

use crate::units::SEC;

/// CBFC's FECN marking among the schemes that mark CE themselves on a lossless fabric
/// ([`crate::scheme::Declares::ce_precedence`]): it stands down where a scheme of higher
/// precedence (TCD) marks.
pub const FECN_PRECEDENCE: u8 = 1;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(8);

/// `[cbfc]` parameters. Times are picoseconds, sizes bytes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CbfcConfig {
    /// The lossless buffer (`buffer.mode = "lossless"`) runs CBFC instead of PFC.
    pub enabled: bool,
    /// Credit-update period `T_c`, picoseconds; `None` = 65 536 symbol times of the port
    /// (the IB specification's upper bound; a symbol time is 40 bit times of the port's
    /// rate: 4 ns at 10 G, 1 ns at 40 G, 0.4 ns at 100 G → 26.2144 µs).
    pub period_ps: Option<u64>,
    /// Credit limit per (port, VL) = the ingress buffer reserved for it, bytes (rounded up
    /// to whole blocks); `None` = [`default_limit_blocks`] per port.
    pub limit_bytes: Option<u64>,
    /// Credit block, bytes (IB: 64; 1 = byte credits).
    pub block_bytes: u64,
    /// Wire size of a flow-control packet, bytes; `None` = the PFC frame size of the framing
    /// (HPCC framing 43 B, Ethernet 64 B): the credit update travels as a MAC control frame,
    /// as in the paper's testbed (CBFC over Ethernet).
    pub fcp_bytes: Option<u32>,
    /// FECN marking (IB congestion control's detector): a data packet leaving a data queue
    /// whose backlog exceeds [`Self::fecn_threshold_bytes`] is marked (the CE bit); the
    /// receiver's CE echo / CNP is the BECN. Replaced by TCD's marks where TCD runs.
    pub fecn: bool,
    /// FECN threshold, bytes; `None` = the port's ECN Kmin.
    pub fecn_threshold_bytes: Option<u64>,
    /// IB's Victim_Mask: also mark at a port that is a victim (ran out of credits within the
    /// last credit-update period). `true` (default) = mark on queue length alone.
    pub fecn_victim_mask: bool,
}

impl Default for CbfcConfig {
    fn default() -> Self {
        CbfcConfig {
            enabled: false,
            period_ps: None,
            limit_bytes: None,
            block_bytes: 64,
            fcp_bytes: None,
            fecn: false,
            fecn_threshold_bytes: None,
            fecn_victim_mask: true,
        }
    }
}

impl CbfcConfig {
    /// Problems of this configuration on its own, as (scenario key, message). `lossless` =
    /// `buffer.mode = "lossless"`; `has_ecn` = ECN thresholds exist (default FECN threshold);
    /// `max_packet_bytes` = the largest data packet on the wire.
    pub fn issues(
        &self,
        lossless: bool,
        has_ecn: bool,
        max_packet_bytes: u64,
    ) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        if !self.enabled {
            return v;
        }
        if !lossless {
            v.push((
                "cbfc.enabled",
                "CBFC is a lossless buffer mode: it needs `buffer.mode = \"lossless\"`".into(),
            ));
        }
        if self.period_ps == Some(0) {
            v.push(("cbfc.period", "must be positive".into()));
        }
        if !(1..=4096).contains(&self.block_bytes) {
            v.push((
                "cbfc.block",
                format!("must be in 1..=4096 bytes (got {})", self.block_bytes),
            ));
        }
        if let Some(l) = self.limit_bytes
            && l < max_packet_bytes
        {
            v.push((
                "cbfc.limit",
                format!(
                    "({l} B) must hold at least one full-size packet ({max_packet_bytes} B), \
                     or nothing could ever be sent"
                ),
            ));
        }
        if self.fcp_bytes == Some(0) {
            v.push(("cbfc.fcp_size", "must be positive".into()));
        }
        if self.fecn && self.fecn_threshold_bytes.is_none() && !has_ecn {
            v.push((
                "cbfc.fecn_threshold",
                "is needed: no ECN thresholds to take Kmin from".into(),
            ));
        }
        v
    }
}

/// Blocks a packet of `size_bytes` takes (rounded up).
#[inline]
pub fn blocks(size_bytes: u64, block_bytes: u64) -> u64 {
    size_bytes.div_ceil(block_bytes.max(1))
}

/// Default credit-update period of a port of `rate_bps`: 65 536 symbol times (IB spec upper
/// bound, the TCD fragment's §4.4 and its footnote), a symbol time being 40 bit times
/// (4 ns at 10 Gb/s, 1 ns at 40 Gb/s), picoseconds.
pub fn ib_period_ps(rate_bps: u64) -> u64 {
    (65_536u128 * 40 * SEC as u128 / rate_bps.max(1) as u128) as u64
}

impl CbfcConfig {
    /// `T_c` of a port of `rate_bps` under this configuration, picoseconds (≥ 1): the
    /// configured period, else the IB default ([`ib_period_ps`]).
    pub fn port_period_ps(&self, rate_bps: u64) -> u64 {
        self.period_ps
            .unwrap_or_else(|| ib_period_ps(rate_bps))
            .max(1)
    }
}

/// What the default credit limit of a hop depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Credit-update period of the hop, picoseconds.
    pub period_ps: u64,
    /// Serialization time of a full-size data packet, picoseconds.
    pub packet_ser_ps: u64,
    /// Serialization time of an FCP, picoseconds.
    pub fcp_ser_ps: u64,
    /// One-way propagation delay, picoseconds.
    pub delay_ps: u64,
    /// Receiver pipeline delay added at each end (the larger of switch / NIC), picoseconds.
    pub proc_ps: u64,
    /// Data VLs (FCPs of one tick queue behind each other).
    pub vls: u64,
    /// Blocks of a full-size data packet.
    pub packet_blocks: u64,
}

/// The default credit limit of one (port, VL), blocks: the smallest whole number of
/// full-size packets that keeps a single sender at line rate.
///
/// With packets of serialization time `s` sent back to back from time 0, packet k is fully
/// received at `(k+1)·s + t_p + d` and (the egress being free at line rate) leaves the
/// ingress buffer at once. An FCP generated at `t_u` advertises every packet that left by
/// `t_u`; it waits for at most one packet on the reverse wire (`s`) and the FCPs of the other
/// VLs, then `f + t_p + d` to arrive. The sender, still on the previous FCP (`t_u − T_c`),
/// must not run out before: `L ≥ (T_c + 2·t_p + 2·d + V·f)/s + 3` packets, i.e.
/// `L = ⌈(T_c + 2·t_p + 2·d + V·f)/s⌉ + 3` packets of `packet_blocks` each. At 100 G with
/// 1 µs links, HPCC framing (1048 B packets: s = 83 ns, HPCC-sim's truncation of 83.84;
/// 17 blocks), `T_c` = 26.2144 µs, 43 B FCPs (f = 3 ns) and 7 data VLs:
/// ⌈28 235.4 / 83⌉ + 3 = 344 packets = 5848 blocks (374 272 B).
pub fn default_limit_blocks(h: &Hop) -> u64 {
    let loop_ps = h.period_ps + 2 * h.delay_ps + 2 * h.proc_ps + h.vls * h.fcp_ser_ps;
    (loop_ps.div_ceil(h.packet_ser_ps.max(1)) + 3) * h.packet_blocks
}

/// What the credit limit of a link depends on besides its rate and delay (from the
/// configuration): `cbfc.limit`, or the inputs of [`default_limit_blocks`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimitRule {
    /// `cbfc.limit`, bytes.
    pub limit_bytes: Option<u64>,
    /// `cbfc.period`, picoseconds.
    pub period_ps: Option<u64>,
    /// Credit block, bytes.
    pub block_bytes: u64,
    /// Framing (serialization times).
    pub framing: crate::engine::packet::Framing,
    /// Full-size data packet on the wire, bytes.
    pub packet_bytes: u64,
    /// FCP wire size, bytes.
    pub fcp_bytes: u32,
    /// Receiver pipeline delay (the larger of switch / NIC), picoseconds.
    pub proc_ps: u64,
    /// Data VLs.
    pub vls: u64,
}

impl LimitRule {
    /// The rule of configuration `cfg` on a network with environment `env`.
    pub fn new(cfg: &crate::scheme::Setup<'_, CbfcConfig>, env: &crate::scheme::Env) -> Self {
        let c = cfg.own;
        LimitRule {
            limit_bytes: c.limit_bytes,
            period_ps: c.period_ps,
            block_bytes: c.block_bytes,
            framing: cfg.framing,
            packet_bytes: cfg.max_packet_bytes(),
            fcp_bytes: fcp_bytes(c, env),
            proc_ps: cfg.switch_delay_ps.max(cfg.nic_delay_ps),
            vls: env.queues_per_port as u64 - 1,
        }
    }

    /// The credit limit of each VL of the link of `rate_bps` and one-way `delay_ps`, blocks:
    /// `cbfc.limit` if given, else [`default_limit_blocks`]. Sender and receiver compute it
    /// from the same link, so they agree.
    pub fn blocks(&self, rate_bps: u64, delay_ps: u64) -> u64 {
        if let Some(l) = self.limit_bytes {
            return blocks(l, self.block_bytes);
        }
        let period = self
            .period_ps
            .unwrap_or_else(|| ib_period_ps(rate_bps))
            .max(1);
        default_limit_blocks(&Hop {
            period_ps: period,
            packet_ser_ps: self.framing.ser_ps(self.packet_bytes as u32, rate_bps),
            fcp_ser_ps: self.framing.ser_ps(self.fcp_bytes, rate_bps),
            delay_ps,
            proc_ps: self.proc_ps,
            vls: self.vls,
            packet_blocks: blocks(self.packet_bytes, self.block_bytes),
        })
    }
}

/// Wire size of a flow-control packet, bytes (`cbfc.fcp_size`, default the PFC frame).
pub fn fcp_bytes(c: &CbfcConfig, env: &crate::scheme::Env) -> u32 {
    c.fcp_bytes.unwrap_or_else(|| env.sizes.mac_control())
}

/// The sender's credit state of one VL of one link (FCTBS and the latest FCCL), with the
/// time it spent blocked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Credits {
    /// FCTBS: blocks sent since the link came up.
    pub sent: u64,
    /// Latest FCCL received (initially the receiver's limit), blocks.
    pub fccl: u64,
    /// Blocked for lack of credits (less than one full-size packet available).
    pub blocked: bool,
    /// Start of the current blocked period, picoseconds.
    pub since_ps: u64,
    /// Time spent blocked, closed periods, picoseconds.
    pub blocked_ps: u64,
    /// Blocked periods.
    pub blockings: u64,
}

impl Credits {
    /// A VL whose receiver grants `limit` blocks.
    pub fn new(limit: u64) -> Self {
        Credits {
            fccl: limit,
            ..Credits::default()
        }
    }

    /// Blocks the sender may still send.
    #[inline]
    pub fn available(&self) -> u64 {
        self.fccl.saturating_sub(self.sent)
    }

    /// A packet of `n` blocks started transmission at `now_ps`; the VL blocks if fewer than
    /// `need` blocks (one full-size packet) remain. Returns true if it just blocked.
    #[inline]
    pub fn spend(&mut self, n: u64, need: u64, now_ps: u64) -> bool {
        self.sent += n;
        if !self.blocked && self.available() < need {
            self.blocked = true;
            self.since_ps = now_ps;
            self.blockings += 1;
            return true;
        }
        false
    }

    /// An FCP advertising `fccl` arrived at `now_ps`. Returns true if the VL was blocked and
    /// now has room for a full-size packet (`need` blocks): it is released.
    #[inline]
    pub fn update(&mut self, fccl: u64, need: u64, now_ps: u64) -> bool {
        self.fccl = self.fccl.max(fccl);
        if self.blocked && self.available() >= need {
            self.blocked = false;
            self.blocked_ps += now_ps - self.since_ps;
            return true;
        }
        false
    }

    /// Close an open blocked period at `now_ps` (end of the run).
    pub fn finish(&mut self, now_ps: u64) {
        if self.blocked {
            self.blocked_ps += now_ps - self.since_ps;
            self.since_ps = now_ps;
        }
    }
}

/// The VL a packet travels on: its priority for data, ACK and NACK packets (capped at the
/// last queue, as the switch queues it), 0 (the control class, not flow-controlled: IB's
/// FCPs and VL15) for everything else.
#[inline]
pub fn vl_of(pkt: &crate::engine::packet::Packet, nq: usize) -> usize {
    use crate::engine::packet::PktKind;
    match pkt.kind() {
        PktKind::Data | PktKind::Ack | PktKind::Nack => (pkt.prio as usize).min(nq - 1),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GBPS, NS, US};

    #[test]
    fn ib_period_is_65536_symbol_times() {
        // Fragment footnote: a symbol time is 4 ns at 10 G and 1 ns at 40 G.
        assert_eq!(ib_period_ps(10 * GBPS), 65_536 * 4 * NS);
        assert_eq!(ib_period_ps(40 * GBPS), 65_536 * NS);
        assert_eq!(ib_period_ps(100 * GBPS), 26_214_400);
    }

    #[test]
    fn default_limit_by_hand() {
        // See `default_limit_blocks`: 100 G, 1 µs, 1048 B packets, 43 B FCPs, 7 VLs, HPCC
        // framing (83 ns, 3 ns); with exact serialization (83.84 ns, 3.44 ns):
        // ⌈28 238.08 / 83.84⌉ + 3 = 337 + 3 = 340 packets.
        let h = Hop {
            period_ps: 26_214_400,
            packet_ser_ps: 83_000,
            fcp_ser_ps: 3_000,
            delay_ps: US,
            proc_ps: 0,
            vls: 7,
            packet_blocks: 17,
        };
        assert_eq!(default_limit_blocks(&h), 344 * 17);
        let exact = Hop {
            packet_ser_ps: 83_840,
            fcp_ser_ps: 3_440,
            ..h
        };
        assert_eq!(default_limit_blocks(&exact), 340 * 17);
        assert_eq!(blocks(1048, 64), 17);
        assert_eq!(blocks(1024, 64), 16);
        assert_eq!(blocks(60, 64), 1);
    }

    #[test]
    fn credits_block_and_release() {
        // Limit 40 blocks, packets of 17: two fit (34), the third would not (6 left < 17).
        let mut c = Credits::new(40);
        assert!(!c.spend(17, 17, 10));
        assert!(c.spend(17, 17, 20));
        assert!(c.blocked);
        assert_eq!(c.available(), 6);
        // An FCP that frees one packet's blocks (FCCL = 40 + 17 = 57): 23 ≥ 17 → released.
        assert!(!c.update(50, 17, 30)); // 16 available: still blocked
        assert!(c.update(57, 17, 45));
        assert_eq!(c.blocked_ps, 25);
        // An older FCCL never lowers the limit.
        c.update(40, 17, 50);
        assert_eq!(c.fccl, 57);
    }

    #[test]
    fn config_issues_name_the_key() {
        let c = CbfcConfig {
            enabled: true,
            period_ps: Some(0),
            block_bytes: 0,
            limit_bytes: Some(100),
            fcp_bytes: Some(0),
            fecn: true,
            ..CbfcConfig::default()
        };
        let keys: Vec<&str> = c.issues(false, false, 1048).iter().map(|i| i.0).collect();
        assert_eq!(
            keys,
            [
                "cbfc.enabled",
                "cbfc.period",
                "cbfc.block",
                "cbfc.limit",
                "cbfc.fcp_size",
                "cbfc.fecn_threshold"
            ]
        );
        let ok = CbfcConfig {
            enabled: true,
            ..CbfcConfig::default()
        };
        assert!(ok.issues(true, false, 1048).is_empty());
        assert!(CbfcConfig::default().issues(false, false, 1048).is_empty());
    }
}
