//! PFC — Priority Flow Control (IEEE 802.1Qbb) and the lossless buffer it protects.
//!
//! - [`PfcState`] (this file): the ingress accounting of one switch, as HPCC-sim's
//!   `SwitchMmu` models it (below);
//! - [`PauseTimes`]: what a device does with PAUSE/RESUME frames it receives (pause bits of a
//!   port's priorities, real quanta with expiry, or hold-until-RESUME);
//! - [`switch::PfcSwitch`]: the switch half — lossless admission, XOFF/XON generation and
//!   refresh, frame receipt at switch ports;
//! - [`host::PfcHost`]: the host half — frame receipt at NICs (every NIC understands PFC, so
//!   SFC-P can pause a NIC's priority even in a lossy fabric).
//!
//! The ingress accounting of one switch, as HPCC-sim's `SwitchMmu` models it
//! (`specs/pfc.md` §2): per ingress (port, priority) a reserve, a share of the pool under a
//! dynamic threshold, and headroom that absorbs what is still in flight after XOFF.
//!
//! ```text
//! Threshold(port)   = α(port) · (B − Σ headroom − reserve·ports − shared_used)
//! SharedUsed(p, q)  = max(0, ingress(p, q) − reserve)
//! drop  ⟺ s + hdrm(p,q) > headroom(p)  and  s + SharedUsed(p,q) > Threshold(p)
//! XOFF  ⟺ hdrm(p,q) > 0  or  SharedUsed(p,q) ≥ Threshold(p)          (after enqueue)
//! XON   ⟺ hdrm(p,q) = 0  and (SharedUsed = 0 or SharedUsed + offset ≤ Threshold)  (after dequeue)
//! ```
//! α is 1/8 at host-rate ports and doubles per doubling of the port rate (400 G → 1/2), as
//! HPCC-sim's `pfc_a_shift`. Pure state, no I/O: the forwarding path calls it and sends the
//! frames.

pub mod config;
pub mod deadlock;
pub mod host;
pub mod switch;

use crate::link::TxPort;
use crate::scheme::pause::PfcHdr;
pub use config::{MIN_PFC_QUANTA, PfcConfig};

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::pause::PAUSE_OWNER;

/// The PFC counters of one ingress (port, priority) together with its port's parameters:
/// everything an admission, a release or an XOFF/XON decision reads, in one 64-byte cache
/// line (the port's headroom, α and zero-threshold bound are repeated in each of its
/// priorities' cells, so a packet touches one line instead of six arrays).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub struct PfcCell {
    /// Bytes counted against reserve + shared pool.
    pub ingress: u64,
    /// Headroom bytes in use.
    pub hdrm: u64,
    /// The port's headroom, bytes.
    pub headroom: u64,
    /// The port's largest free pool (`B − carved − shared_used`, bytes) whose dynamic
    /// threshold is 0 ([`PfcState::threshold`] is 0 for a free pool up to it and at least 1
    /// above it: the threshold is monotone in the free pool). Lets
    /// [`PfcState::should_pause`] skip the floating-point threshold within the reserve.
    pub zero_threshold_max_free: u64,
    /// The port's dynamic-threshold α.
    pub alpha: f64,
    /// Pending refresh time of the XOFF, picoseconds (0 = none).
    pub refresh_at: u64,
    /// XOFF sent upstream and not yet resumed.
    pub paused: bool,
}

/// PFC state of one switch: pool accounting and one [`PfcCell`] per (port, priority).
#[derive(Clone, Debug)]
pub struct PfcState {
    /// Shared-pool bytes in use (over all ingress queues).
    pub shared_used: u64,
    /// Σ headroom + reserve × ports: carved out of the pool.
    pub carved_bytes: u64,
    /// Total buffer, bytes.
    pub buffer_bytes: u64,
    /// Reserve per (port, priority), bytes.
    pub reserve_bytes: u64,
    nq: usize,
    /// Counters and port parameters per (port, priority), index [`Self::index`].
    cells: Vec<PfcCell>,
    /// XON offset, bytes.
    pub resume_offset_bytes: u64,
}

impl PfcState {
    /// State for a switch with ports of the given `(rate_bps, delay_ps)`, `nq` priorities,
    /// `buffer_bytes` of buffer, hosts at `host_rate_bps`.
    pub fn new(
        cfg: &PfcConfig,
        ports: &[(u64, u64)],
        nq: usize,
        buffer_bytes: u64,
        host_rate_bps: u64,
    ) -> Self {
        let headroom: Vec<u64> = ports
            .iter()
            .map(|&(rate, delay)| cfg.port_headroom_bytes(rate, delay))
            .collect();
        let alpha: Vec<f64> = ports
            .iter()
            .map(|&(rate, _)| {
                // HPCC-sim `third.cc`: `while (rate > nic_rate && shift > 0) { shift--;
                // rate /= 2; }` — α doubles while the port's rate, halved each time, is still
                // above the NIC's (40 G hosts: a 100 G port gets 1/2, not 1/4).
                // The doubling stops at 1 (HPCC-sim's shift stops at 0); an α configured
                // above 1 is kept as given, not capped.
                let mut a = cfg.alpha_host;
                let mut r = rate;
                let host = host_rate_bps.max(1);
                while r > host && a < 1.0 {
                    r /= 2;
                    a = (a * 2.0).min(1.0);
                }
                a
            })
            .collect();
        let carved = headroom.iter().sum::<u64>() + cfg.reserve_bytes * ports.len() as u64;
        let cells = headroom
            .iter()
            .zip(&alpha)
            .flat_map(|(&headroom, &alpha)| {
                let cell = PfcCell {
                    headroom,
                    alpha,
                    zero_threshold_max_free: zero_threshold_max_free(alpha),
                    ..PfcCell::default()
                };
                std::iter::repeat_n(cell, nq)
            })
            .collect();
        PfcState {
            buffer_bytes,
            reserve_bytes: cfg.reserve_bytes,
            resume_offset_bytes: cfg.resume_offset_bytes,
            carved_bytes: carved,
            shared_used: 0,
            cells,
            nq,
        }
    }

    /// Hint the CPU to load the counters of ingress (`port`, `q`) (no effect on state).
    #[inline]
    pub fn prefetch(&self, port: u16, q: usize) {
        if let Some(c) = self.cells.get(self.idx(port, q)) {
            crate::engine::prefetch(c as *const PfcCell as *const u8);
        }
    }

    /// The counters of ingress (`port`, `q`).
    #[inline]
    pub fn cell(&self, port: u16, q: usize) -> &PfcCell {
        &self.cells[self.idx(port, q)]
    }

    /// Every (port, priority)'s counters, index [`Self::index`].
    pub fn cells(&self) -> &[PfcCell] {
        &self.cells
    }

    /// The headroom of ingress `port`, bytes.
    pub fn headroom(&self, port: u16) -> u64 {
        self.cells[self.idx(port, 0)].headroom
    }

    #[inline]
    fn idx(&self, port: u16, q: usize) -> usize {
        port as usize * self.nq + q
    }

    /// Free shared pool, bytes: what the dynamic thresholds are a fraction of.
    #[inline]
    fn free_bytes(&self) -> u64 {
        self.buffer_bytes
            .saturating_sub(self.carved_bytes + self.shared_used)
    }

    /// Dynamic XOFF threshold of ingress `port`, bytes.
    #[inline]
    pub fn threshold(&self, port: u16) -> u64 {
        threshold_of(self.free_bytes(), self.cells[self.idx(port, 0)].alpha)
    }

    /// Shared-pool bytes attributed to (port, q).
    #[inline]
    pub fn shared_of(&self, port: u16, q: usize) -> u64 {
        self.cells[self.idx(port, q)]
            .ingress
            .saturating_sub(self.reserve_bytes)
    }

    /// May a `size`-byte packet from `port` in priority `q` be admitted?
    #[inline]
    pub fn admit(&self, port: u16, q: usize, size: u64) -> bool {
        let c = &self.cells[self.idx(port, q)];
        !(size + c.hdrm > c.headroom
            && size + c.ingress.saturating_sub(self.reserve_bytes)
                > threshold_of(self.free_bytes(), c.alpha))
    }

    /// Account an admitted packet.
    #[inline]
    pub fn charge(&mut self, port: u16, q: usize, size: u64) {
        let i = self.idx(port, q);
        let (reserve, free) = (self.reserve_bytes, self.free_bytes());
        let c = &mut self.cells[i];
        let new = c.ingress + size;
        if new <= reserve {
            c.ingress = new;
        } else if new - reserve > threshold_of(free, c.alpha) {
            c.hdrm += size;
        } else {
            c.ingress = new;
            self.shared_used += size.min(new - reserve);
        }
    }

    /// [`Self::admit`], then (if admitted) [`Self::charge`] and [`Self::should_pause`], in one
    /// pass over the counters of (`port`, `q`): `None` if refused, else whether to send an
    /// XOFF. Same results as the three calls in turn.
    #[inline]
    pub fn admit_charge(&mut self, port: u16, q: usize, size: u64) -> Option<bool> {
        let i = self.idx(port, q);
        let (reserve, free) = (self.reserve_bytes, self.free_bytes());
        let c = &mut self.cells[i];
        let (hdrm, ingress) = (c.hdrm, c.ingress);
        if size + hdrm > c.headroom
            && size + ingress.saturating_sub(reserve) > threshold_of(free, c.alpha)
        {
            return None;
        }
        let new = ingress + size;
        if new <= reserve && hdrm == 0 {
            // Within the reserve, no headroom in use: charge the ingress counter; the shared
            // part stays 0, so XOFF iff not yet paused and the threshold is 0.
            c.ingress = new;
            return Some(
                !c.paused && free <= c.zero_threshold_max_free && threshold_of(free, c.alpha) == 0,
            );
        }
        self.charge(port, q, size);
        Some(self.should_pause(port, q))
    }

    /// Should an XOFF be sent for (port, q) now (after an enqueue)?
    #[inline]
    pub fn should_pause(&self, port: u16, q: usize) -> bool {
        let c = &self.cells[self.idx(port, q)];
        if c.paused {
            return false;
        }
        if c.hdrm > 0 {
            return true;
        }
        let shared = c.ingress.saturating_sub(self.reserve_bytes);
        let free = self.free_bytes();
        if shared == 0 && free > c.zero_threshold_max_free {
            // Within the reserve and the threshold is at least 1: `0 >= threshold` is false.
            return false;
        }
        shared >= threshold_of(free, c.alpha)
    }

    /// Release a departing packet's bytes.
    #[inline]
    pub fn release(&mut self, port: u16, q: usize, size: u64) {
        let i = self.idx(port, q);
        let reserve = self.reserve_bytes;
        let c = &mut self.cells[i];
        let from_hdrm = c.hdrm.min(size);
        let from_shared = (size - from_hdrm).min(c.ingress.saturating_sub(reserve));
        c.hdrm -= from_hdrm;
        c.ingress -= size - from_hdrm;
        self.shared_used -= from_shared;
    }

    /// Should a RESUME be sent for (port, q) now (after a dequeue)?
    #[inline]
    pub fn should_resume(&self, port: u16, q: usize) -> bool {
        let c = &self.cells[self.idx(port, q)];
        if !c.paused || c.hdrm > 0 {
            return false;
        }
        let sh = c.ingress.saturating_sub(self.reserve_bytes);
        sh == 0 || sh + self.resume_offset_bytes <= threshold_of(self.free_bytes(), c.alpha)
    }

    /// Mark (port, q) paused / resumed.
    #[inline]
    pub fn set_paused(&mut self, port: u16, q: usize, v: bool) {
        let i = self.idx(port, q);
        self.cells[i].paused = v;
    }

    /// Set the pending XOFF refresh time of (port, q), picoseconds (0 = none).
    #[inline]
    pub fn set_refresh_at(&mut self, port: u16, q: usize, at_ps: u64) {
        let i = self.idx(port, q);
        self.cells[i].refresh_at = at_ps;
    }

    /// Index of (port, q) in [`Self::cells`].
    #[inline]
    pub fn index(&self, port: u16, q: usize) -> usize {
        self.idx(port, q)
    }
}

/// Dynamic threshold for a free pool of `free` bytes and factor `alpha`, bytes.
#[inline]
fn threshold_of(free: u64, alpha: f64) -> u64 {
    (free as f64 * alpha) as u64
}

/// The largest free pool whose threshold at factor `alpha` is 0 (`u64::MAX` if every one
/// is). [`threshold_of`] is monotone non-decreasing in the pool for any `alpha` (also
/// negative or NaN: then constant 0), so a binary search finds the boundary exactly.
fn zero_threshold_max_free(alpha: f64) -> u64 {
    if threshold_of(u64::MAX, alpha) == 0 {
        return u64::MAX;
    }
    // Invariant: threshold(lo) == 0, threshold(hi) >= 1.
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if threshold_of(mid, alpha) == 0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One received PFC frame (HPCC-sim `PFC_OUTPUT_FILE` record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcRecord {
    /// Receive time, picoseconds.
    pub time_ps: u64,
    /// Paused node.
    pub node: u32,
    /// The node is a switch.
    pub is_switch: bool,
    /// Port index (HPCC-sim interface index = port + 1).
    pub port: u16,
    /// PAUSE (true) or RESUME (false).
    pub pause: bool,
}

/// Receiver side of PFC for a set of ports: when each received pause of (port, priority)
/// ends and since when it holds. The pause bits themselves are in the ports' [`TxPort`].
#[derive(Clone, Debug)]
pub struct PauseTimes {
    nq: usize,
    /// 0: a pause of priority `q` stops queue `q` (queue = priority). Otherwise the queues a
    /// pause of any data priority stops: under BFC's per-flow queues (BFC, SFQ, Ideal-FQ,
    /// BFC-VFID) every data priority shares the physical queues, so 802.1Qbb's per-priority
    /// pause stops all of them (one data priority is assumed there; two paused priorities
    /// would share one set of pause bits).
    shared_mask: u64,
    /// Received pause of (port, prio) holds until this time (`u64::MAX` = until RESUME).
    until: Vec<u64>,
    /// Start of the current pause of (port, prio), picoseconds.
    since: Vec<u64>,
    /// Total time (port, priority) pairs spent paused, picoseconds (closed intervals).
    pub paused_ps: u64,
    /// (port, priority) pairs paused now (a received pause in force).
    held: u32,
    /// Frames received, with the event number (global order) they arrived in.
    pub log: Vec<(u64, PfcRecord)>,
}

/// Which port received a frame: its slot in the [`PauseTimes`] state and how the log names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxPort {
    /// Index of the port in the state (switch: port number; hosts: host index).
    pub slot: usize,
    /// Node id.
    pub node: u32,
    /// The node is a switch.
    pub is_switch: bool,
    /// Port number (hosts: 0).
    pub port: u16,
}

/// What a received frame did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Nothing (RESUME of an unpaused priority, or a priority out of range).
    Nothing,
    /// The priority is paused; check for expiry at this time (`None` = until RESUME).
    Paused(Option<u64>),
    /// The pause was lifted: restart the port.
    Resumed,
}

impl PauseTimes {
    /// A received pause of any data priority stops the queues of `mask` (see
    /// `PauseTimes::shared_mask`); `mask` = 0 keeps queue = priority.
    pub fn with_shared_queues(mut self, mask: u64) -> Self {
        self.shared_mask = mask;
        self
    }

    /// The pause bits of priority `q`.
    #[inline]
    fn mask(&self, q: usize) -> u64 {
        if self.shared_mask != 0 {
            self.shared_mask
        } else {
            1u64 << q
        }
    }

    /// Is priority `q` of the port in slot `slot` paused?
    #[inline]
    fn is_paused(&self, tx: &TxPort, slot: usize, q: usize) -> bool {
        if self.shared_mask != 0 {
            self.until[slot * self.nq + q] != 0
        } else {
            tx.paused(q)
        }
    }

    /// State for `ports` ports of `nq` priorities each.
    pub fn new(ports: usize, nq: usize) -> Self {
        PauseTimes {
            nq,
            shared_mask: 0,
            until: vec![0; ports * nq],
            since: vec![0; ports * nq],
            paused_ps: 0,
            held: 0,
            log: Vec::new(),
        }
    }

    /// Take over from `other` (the same ports' state in another partition of a run split
    /// over threads) the state of the ports (slots) for which `theirs` holds, its paused
    /// time and its log.
    pub fn absorb(&mut self, other: &PauseTimes, theirs: &dyn Fn(usize) -> bool) {
        let nq = self.nq.max(1);
        for i in 0..self.until.len().min(other.until.len()) {
            if theirs(i / nq) {
                self.until[i] = other.until[i];
                self.since[i] = other.since[i];
            }
        }
        self.paused_ps += other.paused_ps;
        self.held += other.held;
        self.log.extend_from_slice(&other.log);
    }

    /// A PAUSE/RESUME frame `f` arrived at the port `at` (whose transmit state is `tx`) at
    /// `now_ps`; `event_no` orders the log.
    pub fn receive(
        &mut self,
        tx: &mut TxPort,
        at: RxPort,
        f: &PfcHdr,
        now_ps: u64,
        event_no: u64,
    ) -> Received {
        let q = f.prio as usize;
        if q >= self.nq || q == 0 {
            return Received::Nothing; // queue 0 (control) is never paused
        }
        let pause = f.pause_ps > 0;
        self.log.push((
            event_no,
            PfcRecord {
                time_ps: now_ps,
                node: at.node,
                is_switch: at.is_switch,
                port: at.port,
                pause,
            },
        ));
        let i = at.slot * self.nq + q;
        if pause {
            let until = if f.pause_ps == u64::MAX {
                u64::MAX
            } else {
                now_ps + f.pause_ps
            };
            if !self.is_paused(tx, at.slot, q) {
                self.since[i] = now_ps;
            }
            if self.until[i] == 0 {
                self.held += 1;
            }
            self.until[i] = until;
            tx.paused_mask |= self.mask(q);
            Received::Paused((until != u64::MAX).then_some(until))
        } else if self.is_paused(tx, at.slot, q) {
            self.unpause(tx, at.slot, q, now_ps);
            Received::Resumed
        } else {
            Received::Nothing
        }
    }

    fn unpause(&mut self, tx: &mut TxPort, slot: usize, q: usize, now_ps: u64) {
        let i = slot * self.nq + q;
        tx.paused_mask &= !self.mask(q);
        if self.until[i] != 0 {
            self.held -= 1;
        }
        self.until[i] = 0;
        self.paused_ps += now_ps - self.since[i];
    }

    /// The link of the port in state slot `slot` (transmit state `tx`) went down at `now_ps`:
    /// every received pause in force on it ends, as if a RESUME had arrived (not logged: no
    /// frame arrived). See [`crate::config::Failures`].
    pub fn link_down(&mut self, tx: &mut TxPort, slot: usize, now_ps: u64) {
        for q in 1..self.nq {
            if self.until.get(slot * self.nq + q).is_some_and(|&u| u != 0) {
                self.unpause(tx, slot, q, now_ps);
            }
        }
    }

    /// Expiry check of priority `q` of the port in state slot `slot` at `now_ps`: true if the
    /// pause ended (restart the port).
    pub fn expire(&mut self, tx: &mut TxPort, slot: usize, q: usize, now_ps: u64) -> bool {
        let i = slot * self.nq + q;
        if self.until.get(i) == Some(&now_ps) {
            self.unpause(tx, slot, q, now_ps);
            true
        } else {
            false
        }
    }

    /// (port, priority) pairs with a received pause in force now.
    #[inline]
    pub fn held(&self) -> u32 {
        self.held
    }

    /// Since when priority `q` of the port in state slot `slot` has been paused without a
    /// break, picoseconds; `None` if no received pause of it is in force.
    pub fn paused_since(&self, slot: usize, q: usize) -> Option<u64> {
        let i = slot * self.nq + q;
        (q < self.nq && self.until.get(i).is_some_and(|&u| u != 0)).then(|| self.since[i])
    }

    /// Priorities per port.
    pub fn priorities(&self) -> usize {
        self.nq
    }

    /// Close the paused-time intervals of the port in state slot `slot` still open at
    /// `now_ps`.
    pub fn finish(&mut self, tx: &TxPort, slot: usize, now_ps: u64) {
        for q in 0..self.nq {
            if self.is_paused(tx, slot, q) {
                let i = slot * self.nq + q;
                self.paused_ps += now_ps - self.since[i];
                self.since[i] = now_ps;
            }
        }
    }
}

/// Duration of `quanta` PFC pause quanta (512 bit times each) at `rate_bps`, picoseconds.
pub fn quanta_ps(quanta: u32, rate_bps: u64) -> u64 {
    (quanta as u128 * 512 * 1_000_000_000_000 / rate_bps.max(1) as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> PfcState {
        // Two 100 G / 1 µs ports, 8 priorities, 1 MB buffer, hosts at 100 G.
        PfcState::new(
            &PfcConfig::default(),
            &[(100_000_000_000, 1_000_000); 2],
            8,
            1_000_000,
            100_000_000_000,
        )
    }

    #[test]
    fn headroom_and_alpha_as_hpcc_sim() {
        let s = state();
        assert_eq!((s.headroom(0), s.headroom(1)), (37_500, 37_500));
        assert_eq!((s.cell(0, 3).alpha, s.cell(1, 7).alpha), (0.125, 0.125));
        let s4 = PfcState::new(
            &PfcConfig::default(),
            &[(400_000_000_000, 1_000_000)],
            8,
            1 << 20,
            100_000_000_000,
        );
        assert_eq!(s4.headroom(0), 150_000);
        assert_eq!(s4.cell(0, 5).alpha, 0.5);
        // A ratio that is not a power of two, as `third.cc` halves it: 40 G hosts, 100 G port
        // → 100 > 40: 1/4, 50 > 40: 1/2, 25: stop. 1/2 (not 1/4).
        let s40 = PfcState::new(
            &PfcConfig::default(),
            &[(100_000_000_000, 1_000_000), (40_000_000_000, 1_000_000)],
            8,
            1 << 20,
            40_000_000_000,
        );
        assert_eq!(s40.cell(0, 3).alpha, 0.5);
        assert_eq!(s40.cell(1, 3).alpha, 0.125);
        assert_eq!(quanta_ps(65535, 100_000_000_000), 335_539_200);
        // The doubling stops at 1 (shift 0): 0.3 at a port 4× the NIC → 0.6 → 1, not 1.2;
        // an α configured above 1 is kept, at the NIC's rate and above it.
        let with_alpha = |alpha_host: f64| {
            PfcState::new(
                &PfcConfig {
                    alpha_host,
                    ..PfcConfig::default()
                },
                &[(100_000_000_000, 1_000_000), (400_000_000_000, 1_000_000)],
                8,
                1 << 20,
                100_000_000_000,
            )
        };
        let s = with_alpha(0.3);
        assert_eq!((s.cell(0, 3).alpha, s.cell(1, 3).alpha), (0.3, 1.0));
        let s = with_alpha(2.0);
        assert_eq!((s.cell(0, 3).alpha, s.cell(1, 3).alpha), (2.0, 2.0));
    }

    #[test]
    fn zero_threshold_boundary_is_exact() {
        for alpha in [0.125, 0.5, 1.0, 0.3, 1e-3, 0.0, -1.0, f64::NAN, 1e-25] {
            let m = zero_threshold_max_free(alpha);
            assert_eq!(threshold_of(m, alpha), 0, "α={alpha}");
            if m < u64::MAX {
                assert!(threshold_of(m + 1, alpha) >= 1, "α={alpha}");
            }
        }
        assert_eq!(zero_threshold_max_free(0.125), 7);
        assert_eq!(zero_threshold_max_free(1.0), 0);
        // should_pause agrees with its definition for ingress within the reserve, at any
        // pool use.
        let mut s = state();
        for used in [0, 900_000, 916_800, 916_807, 916_808, 2_000_000] {
            s.shared_used = used;
            let want = s.shared_of(1, 2) >= s.threshold(1);
            assert_eq!(s.should_pause(1, 2), want, "shared_used {used}");
        }
    }

    #[test]
    fn admit_charge_matches_admit_charge_should_pause() {
        // The fused admission gives the results and the state of the three calls in turn,
        // through reserve, shared pool, XOFF, headroom and drops, with releases between.
        let (mut a, mut b) = (state(), state());
        let mut rng = crate::rng::Rng::new(11);
        for step in 0..200_000 {
            let port = rng.below(2) as u16;
            let q = 1 + rng.below(3) as usize;
            let size = 64 + rng.below(1500);
            if rng.below(3) == 0 {
                let c = a.cell(port, q);
                let held = c.ingress + c.hdrm;
                if held >= size {
                    a.release(port, q, size);
                    b.release(port, q, size);
                }
                continue;
            }
            let got = a.admit_charge(port, q, size);
            let want = if b.admit(port, q, size) {
                b.charge(port, q, size);
                Some(b.should_pause(port, q))
            } else {
                None
            };
            assert_eq!(got, want, "step {step}");
            if want == Some(true) {
                a.set_paused(port, q, true);
                b.set_paused(port, q, true);
            }
            if rng.below(50) == 0 {
                let v = !a.cell(port, q).paused;
                a.set_paused(port, q, v);
                b.set_paused(port, q, v);
            }
            assert_eq!(
                (a.cells(), a.shared_used),
                (b.cells(), b.shared_used),
                "step {step}"
            );
        }
    }

    #[test]
    fn xoff_at_threshold_then_headroom_then_drop() {
        let mut s = state();
        // Pool = 1e6 − 2·37.5 K − 2·4096 = 916,808 B; threshold = pool_free / 8.
        let mut sent = 0u64;
        while !s.should_pause(0, 3) {
            assert!(s.admit(0, 3, 1000));
            s.charge(0, 3, 1000);
            sent += 1000;
        }
        // At XOFF: shared ≥ threshold, i.e. (sent − 4096) ≥ (916,808 − shared)/8.
        let shared = sent - 4096;
        assert!(shared as f64 >= (916_808 - shared) as f64 / 8.0 - 1.0);
        assert!((shared as f64) < (916_808 - shared) as f64 / 8.0 + 1000.0);
        s.set_paused(0, 3, true);
        // Headroom absorbs 37 more packets of 1000 B, then drops.
        let mut absorbed = 0;
        while s.admit(0, 3, 1000) {
            s.charge(0, 3, 1000);
            absorbed += 1;
        }
        assert_eq!(absorbed, 37);
        assert_eq!(s.cell(0, 3).hdrm, 37_000);
        // Drain: no resume while headroom is in use; resume once below threshold − offset.
        let mut released = 0;
        while !s.should_resume(0, 3) {
            s.release(0, 3, 1000);
            released += 1;
            assert!(released < 1000);
        }
        assert_eq!(s.cell(0, 3).hdrm, 0);
        assert!(released >= 38);
    }

    #[test]
    fn resume_waits_for_the_xon_offset() {
        // Pool = 1e6 − 2·37 500 − 2·4096 = 916 808 B, α = 1/8, threshold = (916 808 − S)/8.
        // 1000 B packets: ingress 1000·n, shared S = 1000·n − 4096. XOFF at the first n with
        // 9·S ≥ 916 808, i.e. S ≥ 101 867.6: n = 106, S = 101 904 (all in the shared pool:
        // before it, the threshold was 101 988 ≥ 101 904).
        let mut s = state();
        let mut n = 0;
        while !s.should_pause(0, 3) {
            s.charge(0, 3, 1000);
            n += 1;
        }
        assert_eq!(n, 106);
        assert_eq!(s.shared_used, 101_904);
        s.set_paused(0, 3, true);
        // XON needs S + 3072 ≤ (916 808 − S)/8, i.e. 9·S ≤ 892 232, S ≤ 99 136.9: three
        // releases (S = 98 904). Without the offset one release would do (S = 100 904).
        let mut k = 0;
        while !s.should_resume(0, 3) {
            s.release(0, 3, 1000);
            k += 1;
            assert!(k < 100);
        }
        assert_eq!(k, 3, "resume hysteresis");
        assert_eq!(s.shared_used, 98_904);
    }
}
