//! PB-FS — Postcard-Based Fast Start (`seeds/pbfs.txt` §III, Algorithm 1; SPEC §6).
//!
//! Every flow starts at line rate. A flow that needs at least τ at line rate (size ≥ T·τ
//! bytes) marks every Δ-th data packet, from the Δ-th on, as *PBT-triggering* until its first
//! ACK or CC-postcard (paper Fig. 2; [`PbfsFlow::on_send`]).
//!
//! Switch half ([`switch`]): every egress port keeps N time slots of DC_RTT/(2N) — bytes
//! received for the port in each of the last N complete slots and the port's queue at the
//! start of each ([`PortSlots`]) — plus the bytes and marked bytes received over the last T_Δ
//! ([`RecentWindow`]). A marked packet makes the switch assess its egress port (Definition 1,
//! [`PortSlots::assess`]): congested iff `I_p = Σ I_T^i + N·I_T^N > T·DC_RTT − Q¹`. A
//! congested port sends the sender a CC-postcard ([`wire::PostcardHdr`]) in
//! the strict-priority control class, routed by the forwarding tables like any packet.
//!
//! Host half ([`host`]): Algorithm 1 ([`reaction`]) turns a postcard into a reduction factor
//! `c` and a rate `MaxRate / c`, and hands the rate to its congestion controller
//! ([`crate::cc::SchemeSignal::SetRate`]). Which postcard sets the rate follows
//! Algorithm 1, not §III's prose: the prose has the sender take "the minimum of these rates",
//! the pseudo-code (`if ID == nil or ID == p.sID or c > L[ID]`) lets the switch that set the
//! rate (`ID`) change it either way, so a switch whose congestion eases can raise the rate past
//! another switch's latest, less restrictive demand (switch 1 c = 2, switch 2 c = 1.5, switch
//! 1 c = 1.2: MaxRate/1.2, where the minimum would be MaxRate/1.5). The pseudo-code is the
//! precise statement of the two, and the one the authors' simulator would run. The flow
//! ignores postcards after the first ACK that follows a PB-FS rate update or by which the
//! controller changed its rate — on that ACK or, for controllers that change it on timers
//! (DCQCN), since the previous ACK (the end of the *PBT interval*).
//!
//! Choices where the paper is not explicit (documented at each item): the N slots are the N
//! most recent *complete* slots of a fixed grid (`t / slot`), the slot containing t₀ being
//! excluded (§IV: "the switch must also receive this number of bytes during the previous
//! slot"); bytes are counted at ingress after the forwarding lookup, before buffer admission
//! (the bytes the switch "receives and needs to forward to the port", dropped or not);
//! recentBytes use 16 buckets of T_Δ/16; the Δ·marked/recent share is capped at 1.

pub mod config;
pub mod host;
pub mod switch;
pub mod wire;

use crate::engine::packet::Marks;
use crate::units::bytes_in_ps;
use wire::PostcardHdr;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(4);

/// PBT-triggering ("subject to CC-postcards"): set on a data packet by its sender (the paper
/// uses a TOS bit); switches assess a port when such a packet arrives for it.
pub const PBT: Marks = Marks::bit(0);

/// Where PB-FS's switch half runs (scenario spelling: `all`, `tor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PbfsDeploy {
    /// Every switch (the paper's evaluation).
    All,
    /// ToR switches only (the paper's gradual deployment, §III-A).
    Tor,
}

/// PB-FS parameters (`[pbfs]` in scenarios). Zero means "the paper's default, derived from
/// the topology" where noted.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PbfsConfig {
    /// PB-FS on/off.
    pub enabled: bool,
    /// Which switches run the switch half.
    pub deploy: PbfsDeploy,
    /// N: slots per half DC_RTT (paper: 8).
    pub n_slots: u32,
    /// Δ: marking offset and distance, packets (paper: 6).
    pub delta: u32,
    /// DC_RTT, picoseconds (0 = the topology's maximum base RTT).
    pub dc_rtt_ps: u64,
    /// τ: minimum line-rate transmission time of a flow using PB-FS, picoseconds
    /// (0 = DC_RTT/2).
    pub tau_ps: u64,
    /// I_min, bytes (0 = 20 % of the maximum BDP, max base RTT × host rate).
    pub i_min_bytes: u64,
    /// μ: target utilization (paper: 0.95).
    pub mu: f64,
}

impl Default for PbfsConfig {
    fn default() -> Self {
        PbfsConfig {
            enabled: false,
            deploy: PbfsDeploy::All,
            n_slots: 8,
            delta: 6,
            dc_rtt_ps: 0,
            tau_ps: 0,
            i_min_bytes: 0,
            mu: 0.95,
        }
    }
}

/// Largest accepted N (slot records per port are allocated up front).
pub const MAX_SLOTS: u32 = 1024;

/// Buckets of the recentBytes window (T_Δ is measured to 1/`RECENT_BUCKETS` of its length).
pub const RECENT_BUCKETS: usize = 16;

/// One complete slot of a port: bytes received for it, and its queue at the slot's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotRec {
    /// Bytes received for the port during the slot.
    pub bytes: u64,
    /// The port's queue at the start of the slot, bytes.
    pub q_start_bytes: u64,
}

/// Definition 1 evaluated at one instant: the inequality's two sides and the verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Assessment {
    /// I_p^before = Σ_{i=1..N} I_T^i, bytes.
    pub i_before: u64,
    /// I_T^N: bytes of the most recent complete slot.
    pub i_last: u64,
    /// I_p = I_p^before + N·I_T^N, bytes.
    pub i_p: u64,
    /// Q¹: the queue at the start of the oldest of the N slots, bytes.
    pub q1: u64,
    /// T·DC_RTT: what the port can transmit in 2N slots, bytes.
    pub capacity: u64,
    /// `I_p > T·DC_RTT − Q¹` (the right side may be negative: then always congested).
    pub congested: bool,
}

/// Slot accounting of one egress port (paper Fig. 3). Slots form a fixed grid: slot k is
/// `[k·slot_ps, (k+1)·slot_ps)`. The last N complete slots are kept in a ring; the slot in
/// progress accumulates separately. Rollover is lazy (at the next arrival or departure of the
/// port) and exact: between two such events the queue does not change, so every slot that
/// started in between started with the queue the earlier event left.
#[derive(Clone, Debug)]
pub struct PortSlots {
    /// Slot length, picoseconds.
    slot_ps: u64,
    /// End of the slot in progress, picoseconds (a time check instead of a division per
    /// packet).
    end_ps: u64,
    /// Index of the slot in progress.
    cur: u64,
    /// Bytes received in the slot in progress.
    cur_bytes: u64,
    /// Queue at the start of the slot in progress, bytes.
    cur_q: u64,
    /// Ring position of the oldest complete slot (Q¹'s slot).
    head: u32,
    /// The N complete slots, oldest at `head`.
    ring: Box<[SlotRec]>,
}

impl PortSlots {
    /// An idle port with `n` slots of `slot_ps` of history (all empty, queue 0) at time 0.
    pub fn new(n: u32, slot_ps: u64) -> Self {
        let slot_ps = slot_ps.max(1);
        PortSlots {
            slot_ps,
            end_ps: slot_ps,
            cur: 0,
            cur_bytes: 0,
            cur_q: 0,
            head: 0,
            ring: vec![SlotRec::default(); n.max(1) as usize].into_boxed_slice(),
        }
    }

    /// N.
    #[inline]
    pub fn n(&self) -> usize {
        self.ring.len()
    }

    #[inline]
    fn push(&mut self, r: SlotRec) {
        let h = self.head as usize;
        self.ring[h] = r;
        self.head = ((h + 1) % self.ring.len()) as u32;
    }

    /// Advance to the slot containing `now_ps`; `q_now` is the port's queue since the last
    /// event of the port (hence at the start of every slot begun since), bytes.
    #[inline]
    pub fn roll(&mut self, now_ps: u64, q_now: u64) {
        if now_ps >= self.end_ps {
            self.roll_to(now_ps / self.slot_ps, q_now);
        }
    }

    #[cold]
    fn roll_to(&mut self, slot: u64, q_now: u64) {
        self.end_ps = (slot + 1).saturating_mul(self.slot_ps);
        let n = self.ring.len() as u64;
        let steps = slot - self.cur;
        if steps <= n {
            self.push(SlotRec {
                bytes: self.cur_bytes,
                q_start_bytes: self.cur_q,
            });
        }
        // Empty slots between the last one with traffic and the current one (at most N of
        // them matter).
        for _ in 1..steps.min(n + 1) {
            self.push(SlotRec {
                bytes: 0,
                q_start_bytes: q_now,
            });
        }
        self.cur = slot;
        self.cur_bytes = 0;
        self.cur_q = q_now;
    }

    /// `bytes` received for the port in the slot in progress (call [`Self::roll`] first).
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        self.cur_bytes += bytes;
    }

    /// Bytes received so far in the slot in progress.
    pub fn current_bytes(&self) -> u64 {
        self.cur_bytes
    }

    /// The N complete slots, oldest first (I_T^1 … I_T^N, Q¹ … Q^N).
    pub fn slots(&self) -> Vec<SlotRec> {
        let n = self.ring.len();
        (0..n)
            .map(|i| self.ring[(self.head as usize + i) % n])
            .collect()
    }

    /// Definition 1 for a port of `rate_bps` with `dc_rtt_ps`, on the N complete slots
    /// (call [`Self::roll`] for the current time first).
    pub fn assess(&self, rate_bps: u64, dc_rtt_ps: u64) -> Assessment {
        let n = self.ring.len();
        let i_before: u64 = self.ring.iter().map(|r| r.bytes).sum();
        let i_last = self.ring[(self.head as usize + n - 1) % n].bytes;
        let q1 = self.ring[self.head as usize].q_start_bytes;
        let i_p = i_before.saturating_add((n as u64).saturating_mul(i_last));
        let capacity = bytes_in_ps(dc_rtt_ps, rate_bps);
        Assessment {
            i_before,
            i_last,
            i_p,
            q1,
            capacity,
            congested: i_p as i128 > capacity as i128 - q1 as i128,
        }
    }
}

/// Bytes and PBT-marked bytes received by a port over the last T_Δ (paper Fig. 4b), in
/// [`RECENT_BUCKETS`] buckets of `ceil(T_Δ / RECENT_BUCKETS)`: the window read at t is the
/// bucket containing t and the `RECENT_BUCKETS − 1` before it.
#[derive(Clone, Debug)]
pub struct RecentWindow {
    /// Bucket width, picoseconds.
    width_ps: u64,
    /// Index of the bucket in progress.
    cur: u64,
    /// End of the bucket in progress, picoseconds.
    end_ps: u64,
    /// (bucket index, bytes, marked bytes) per ring position.
    b: [(u64, u64, u64); RECENT_BUCKETS],
}

impl RecentWindow {
    /// An empty window of buckets of `width_ps`.
    pub fn new(width_ps: u64) -> Self {
        let width_ps = width_ps.max(1);
        RecentWindow {
            width_ps,
            cur: 0,
            end_ps: width_ps,
            b: [(0, 0, 0); RECENT_BUCKETS],
        }
    }

    /// Count `bytes` (marked or not) received at `now_ps` (times never decrease).
    #[inline]
    pub fn add(&mut self, now_ps: u64, bytes: u64, marked: bool) {
        if now_ps >= self.end_ps {
            self.cur = now_ps / self.width_ps;
            self.end_ps = (self.cur + 1).saturating_mul(self.width_ps);
        }
        let bucket = self.cur;
        let e = &mut self.b[(bucket % RECENT_BUCKETS as u64) as usize];
        if e.0 != bucket {
            *e = (bucket, 0, 0);
        }
        e.1 += bytes;
        if marked {
            e.2 += bytes;
        }
    }

    /// (recentBytes, recentMarkedBytes) of the window ending at `now_ps`.
    pub fn read(&self, now_ps: u64) -> (u64, u64) {
        let bucket = now_ps / self.width_ps;
        let lo = bucket.saturating_sub(RECENT_BUCKETS as u64 - 1);
        self.b
            .iter()
            .filter(|e| e.0 >= lo && e.0 <= bucket && (e.1 > 0))
            .fold((0, 0), |(a, m), e| (a + e.1, m + e.2))
    }
}

/// Algorithm 1, lines 4–8, for one postcard: every intermediate quantity, bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reaction {
    /// I_PBT = min(Δ · recentMarkedBytes / recentBytes, 1) · I_p.
    pub i_pbt: f64,
    /// I_nonPBT = I_p − I_PBT.
    pub i_nonpbt: f64,
    /// BDP = T · DC_RTT.
    pub bdp: f64,
    /// I = max(BDP − Q¹ − I_nonPBT, I_min).
    pub i: f64,
    /// c = I_PBT / (μ · I).
    pub c: f64,
}

/// Algorithm 1's estimate for postcard `p` with Δ = `delta`, `dc_rtt_ps`, `i_min_bytes` and
/// μ = `mu`. The PBT share Δ·marked/recent is capped at 1: it estimates the *fraction* of I_p
/// sent by PB-FS flows (§III-D), and a window holding a marked packet but fewer than Δ − 1
/// of the others would otherwise make I_nonPBT negative.
pub fn reaction(
    p: &PostcardHdr,
    delta: u32,
    dc_rtt_ps: u64,
    i_min_bytes: u64,
    mu: f64,
) -> Reaction {
    let i_p = p.i_p_bytes as f64;
    let share = if p.recent_bytes == 0 {
        0.0
    } else {
        (delta as f64 * p.recent_marked_bytes as f64 / p.recent_bytes as f64).min(1.0)
    };
    let i_pbt = share * i_p;
    let i_nonpbt = i_p - i_pbt;
    let bdp = bytes_in_ps(dc_rtt_ps, p.rate_mbps as u64 * 1_000_000) as f64;
    let i = (bdp - p.q1_bytes as f64 - i_nonpbt).max(i_min_bytes as f64);
    let c = if i > 0.0 { i_pbt / (mu * i) } else { 0.0 };
    Reaction {
        i_pbt,
        i_nonpbt,
        bdp,
        i,
        c,
    }
}

/// Per-flow PB-FS state at the sender.
#[derive(Clone, Debug, Default)]
pub struct PbfsFlow {
    /// Data packets sent so far (every transmission).
    pub sent: u32,
    /// The flow is large enough to use PB-FS (decided at its first packet).
    pub uses: bool,
    /// Still marking (no ACK or postcard received yet).
    pub marking: bool,
    /// The PBT interval is over: postcards are ignored.
    pub ignore: bool,
    /// PB-FS set the flow's rate at least once.
    pub rate_updated: bool,
    /// Postcards received.
    pub postcards: u32,
    /// Postcards received after the PBT interval (ignored).
    pub ignored: u32,
    /// The first postcard received (statistics, tests).
    pub first: Option<PostcardHdr>,
    /// Switch whose postcard determined the current rate (Algorithm 1's `ID`).
    pub id: Option<u32>,
    /// Algorithm 1's `L`: the latest `c` from each switch, in order of first postcard.
    pub l: Vec<(u32, f64)>,
    /// Rate PB-FS set, bits per second (0 = none).
    pub rate_bps: u64,
    /// The controller's rate at the previous ACK (at the first packet: the line rate every
    /// flow starts at), bits per second; 0 before the first packet.
    pub seen_rate_bps: u64,
}

impl PbfsFlow {
    /// The flow sends a data packet; `uses` says whether it is large enough for PB-FS
    /// (evaluated at the first packet). Returns whether to mark it PBT-triggering: packets
    /// Δ, 2Δ, 3Δ, … (1-based) while marking.
    #[inline]
    pub fn on_send(&mut self, uses: impl FnOnce() -> bool, delta: u32, line_bps: u64) -> bool {
        if self.sent == 0 {
            self.uses = uses();
            self.marking = self.uses;
            self.seen_rate_bps = line_bps;
        }
        self.sent = self.sent.saturating_add(1);
        self.marking && self.sent.is_multiple_of(delta.max(1))
    }

    /// Algorithm 1, HandleCCPostcard + UpdateRate, for switch `sw` with reduction `c` and
    /// sender maximum rate `max_rate_bps`. Returns the new rate when it changes the flow's
    /// rate.
    pub fn on_postcard(&mut self, sw: u32, c: f64, max_rate_bps: u64) -> Option<u64> {
        self.marking = false;
        if self.ignore {
            return None;
        }
        match self.l.iter_mut().find(|e| e.0 == sw) {
            Some(e) => e.1 = c,
            None => self.l.push((sw, c)),
        }
        if c <= 1.0 {
            return None;
        }
        let l_id = self
            .id
            .and_then(|id| self.l.iter().find(|e| e.0 == id))
            .map_or(0.0, |e| e.1);
        if self.id.is_none() || self.id == Some(sw) || c > l_id {
            self.id = Some(sw);
            let r = ((max_rate_bps as f64 / c) as u64).max(1);
            self.rate_bps = r;
            self.rate_updated = true;
            return Some(r);
        }
        None
    }

    /// Algorithm 1, HandleAck (and the end of marking, Fig. 2): `cc_changed_rate` says the
    /// controller changed the rate on this ACK, `cc_rate_bps` is its rate after it. A rate
    /// that differs from the previous ACK's without PB-FS having set one was changed by the
    /// controller between ACKs (DCQCN cuts and raises on timers, after the CNP's ACK): that
    /// ends the interval too — the paper's "the congestion control protocol updates the
    /// transmission rate", so that a late postcard cannot override a DCQCN cut. Returns true
    /// if the PBT interval ends now.
    pub fn on_ack(&mut self, cc_changed_rate: bool, cc_rate_bps: u64) -> bool {
        self.marking = false;
        let between = self.seen_rate_bps != 0 && cc_rate_bps != self.seen_rate_bps;
        self.seen_rate_bps = cc_rate_bps;
        if !self.ignore && (self.rate_updated || cc_changed_rate || between) {
            self.ignore = true;
            return true;
        }
        false
    }
}

/// Histogram buckets of postcard path lengths (links back to the sender; the last bucket
/// collects longer paths).
pub const HOPS_HIST: usize = 8;

/// Build the `pbfs` summary section.
pub fn summary_json(
    switches: &[&switch::PbfsSwitch],
    host: Option<&host::PbfsHost>,
    cfg: &crate::scheme::Setup<'_, PbfsConfig>,
) -> serde_json::Value {
    let mut generated = 0u64;
    let mut assessed = 0u64;
    let mut tor_down = 0u64;
    let mut hist = [0u64; HOPS_HIST];
    for s in switches {
        generated += s.counters.postcards_generated;
        assessed += s.counters.marked_assessed;
        tor_down += s.counters.postcards_tor_down;
        for (h, x) in hist.iter_mut().zip(s.counters.hops_hist.iter()) {
            *h += x;
        }
    }
    let (mut using, mut received, mut ignored, mut updates, mut pc_max, mut pc_sum) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut marked = 0u64;
    if let Some(h) = host {
        received = h.postcards_received;
        ignored = h.postcards_ignored;
        updates = h.rate_updates;
        marked = h.marked_packets;
        for f in h.flows.iter().filter(|f| f.uses) {
            using += 1;
            pc_sum += f.postcards as u64;
            pc_max = pc_max.max(f.postcards as u64);
        }
    }
    serde_json::json!({
        "enabled": cfg.own.enabled,
        "postcards_generated": generated,
        "postcards_received": received,
        "postcards_ignored": ignored,
        "marked_packets": marked,
        "marked_assessed": assessed,
        "flows_using_pbfs": using,
        "postcards_per_flow_mean": if using > 0 { pc_sum as f64 / using as f64 } else { 0.0 },
        "postcards_per_flow_max": pc_max,
        "postcard_hops_hist": hist.to_vec(),
        "postcards_tor_down": tor_down,
        "postcard_tor_down_share": if generated > 0 { tor_down as f64 / generated as f64 } else { 0.0 },
        "rate_updates": updates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-built arrival sequence on one port: N = 4 slots of 1 µs (DC_RTT = 8 µs), port at
    /// 8 Gb/s (1 B/ns: T·DC_RTT = 8,000 B).
    #[test]
    fn slot_accounting_and_definition_1_with_rollover() {
        const SLOT: u64 = 1_000_000;
        let rate = 8_000_000_000;
        let dc_rtt = 8 * SLOT;
        let mut s = PortSlots::new(4, SLOT);
        let at = |s: &mut PortSlots, t: u64, q: u64, b: u64| {
            s.roll(t, q);
            s.add(b);
        };
        // Slot 0: 1000 + 500 B, queue 0 at its start.
        at(&mut s, 100_000, 0, 1000);
        at(&mut s, 900_000, 1000, 500);
        // Slot 1 begins with 700 B queued (the queue after the last event of slot 0).
        at(&mut s, 1_200_000, 700, 2000);
        // Slot 2 carries nothing; slot 3 first event at 3.5 µs, queue 1500 since 1.2 µs.
        at(&mut s, 3_500_000, 1500, 1000);
        // Complete slots at 3.5 µs: (oldest first) slot −1 (empty, q 0), 0, 1, 2.
        assert_eq!(
            s.slots(),
            vec![
                SlotRec {
                    bytes: 0,
                    q_start_bytes: 0
                },
                SlotRec {
                    bytes: 1500,
                    q_start_bytes: 0
                },
                SlotRec {
                    bytes: 2000,
                    q_start_bytes: 700
                },
                SlotRec {
                    bytes: 0,
                    q_start_bytes: 1500
                },
            ]
        );
        assert_eq!(s.current_bytes(), 1000);
        // I_before = 3500, I_last = 0 → I_p = 3500; T·DC_RTT − Q¹ = 8000 − 0: not congested.
        let a = s.assess(rate, dc_rtt);
        assert_eq!(
            (a.i_before, a.i_last, a.i_p, a.q1, a.capacity),
            (3500, 0, 3500, 0, 8000)
        );
        assert!(!a.congested);
        // Slot 3 gets 1000 more (2000 in all); rollover to slot 4 at 4.1 µs with 2500 queued.
        at(&mut s, 3_900_000, 2000, 1000);
        at(&mut s, 4_100_000, 2500, 100);
        // Complete: slots 0, 1, 2, 3 → I_before = 1500 + 2000 + 0 + 2000 = 5500,
        // I_last = 2000, I_p = 5500 + 4·2000 = 13,500 > 8000 − 0: congested.
        let a = s.assess(rate, dc_rtt);
        assert_eq!((a.i_before, a.i_last, a.i_p, a.q1), (5500, 2000, 13_500, 0));
        assert!(a.congested);
        // Rollover by more than N slots: at 20 µs every remembered slot is empty with the
        // queue 3000 B the port had since its last event → I_p = 0 > 8000 − 3000? No.
        s.roll(20 * SLOT, 3000);
        let a = s.assess(rate, dc_rtt);
        assert_eq!((a.i_p, a.q1), (0, 3000));
        assert!(!a.congested);
        assert!(s.slots().iter().all(|r| *r
            == SlotRec {
                bytes: 0,
                q_start_bytes: 3000
            }));
        // Boundary: I_p equal to T·DC_RTT − Q¹ is not congested; one byte more is.
        let mut s = PortSlots::new(4, SLOT);
        at(&mut s, 3_000_000, 0, 1000); // slot 3: 1000 B
        s.roll(4 * SLOT, 0); // complete: −1, 0, 1 empty, 3 → I_p = 1000 + 4000 = 5000
        assert_eq!(s.assess(rate, 5 * SLOT + 1).capacity, 5000);
        assert!(!s.assess(rate, 5 * SLOT).congested); // 5000 > 5000 − 0? no
        assert!(s.assess(rate, 4_999_000).congested); // 5000 > 4999
        // A queue above T·DC_RTT makes the right side negative: congested even with I_p = 0.
        let mut s = PortSlots::new(2, SLOT);
        s.roll(5 * SLOT, 9000);
        let a = s.assess(rate, dc_rtt);
        assert_eq!((a.i_p, a.q1), (0, 9000));
        assert!(a.congested);
    }

    #[test]
    fn recent_window_covers_the_last_buckets() {
        // Buckets of 1 ps: times are bucket indices.
        let mut w = RecentWindow::new(1);
        w.add(0, 1000, false);
        w.add(5, 1000, true);
        w.add(15, 500, false);
        assert_eq!(w.read(15), (2500, 1000));
        // Bucket 16 replaces bucket 0's ring position; the window (1..=16) drops bucket 0.
        w.add(16, 100, true);
        assert_eq!(w.read(16), (1600, 1100));
        // Much later: only what is in the window counts.
        assert_eq!(w.read(40), (0, 0));
    }

    /// Algorithm 1 by hand: I_p = 40,000 B, Q¹ = 2,000 B, T = 25 Gb/s, DC_RTT = 10 µs
    /// (BDP = 31,250 B), recent = 6,000 B of which 500 B marked, Δ = 6 → share 0.5,
    /// I_PBT = 20,000, I_nonPBT = 20,000, I = max(31,250 − 2,000 − 20,000, I_min = 5,000) =
    /// 9,250, c = 20,000 / (0.95 · 9,250) = 2.27596…, rate = 25 G / c = 10.984375 Gb/s.
    #[test]
    fn algorithm_1_by_hand() {
        let p = PostcardHdr {
            switch: 9,
            i_p_bytes: 40_000,
            q1_bytes: 2_000,
            rate_mbps: 25_000,
            recent_bytes: 6_000,
            recent_marked_bytes: 500,
            hops: 1,
        };
        let r = reaction(&p, 6, 10_000_000, 5_000, 0.95);
        assert_eq!(r.i_pbt, 20_000.0);
        assert_eq!(r.i_nonpbt, 20_000.0);
        assert_eq!(r.bdp, 31_250.0);
        assert_eq!(r.i, 9_250.0);
        assert!((r.c - 20_000.0 / (0.95 * 9_250.0)).abs() < 1e-12);
        let mut f = PbfsFlow::default();
        let rate = f.on_postcard(9, r.c, 25_000_000_000).unwrap();
        assert_eq!(rate, 10_984_375_000);
        // I_min binds: Q¹ = 20,000 → BDP − Q¹ − I_nonPBT < 0 → I = 5,000, c = 20000/4750.
        let r2 = reaction(
            &PostcardHdr {
                q1_bytes: 20_000,
                ..p
            },
            6,
            10_000_000,
            5_000,
            0.95,
        );
        assert_eq!(r2.i, 5_000.0);
        // The share is capped at 1: all recent bytes marked → I_PBT = I_p.
        let r3 = reaction(
            &PostcardHdr {
                recent_marked_bytes: 6_000,
                ..p
            },
            6,
            10_000_000,
            5_000,
            0.95,
        );
        assert_eq!((r3.i_pbt, r3.i_nonpbt), (40_000.0, 0.0));
    }

    #[test]
    fn algorithm_1_keeps_the_most_restrictive_switch() {
        let max = 100_000_000_000;
        let mut f = PbfsFlow::default();
        assert_eq!(f.on_postcard(1, 2.0, max), Some(50_000_000_000));
        // A less restrictive switch does not raise the rate.
        assert_eq!(f.on_postcard(2, 1.5, max), None);
        // A more restrictive one lowers it.
        assert_eq!(f.on_postcard(2, 4.0, max), Some(25_000_000_000));
        // The switch that set the rate may raise it again (ID == sID).
        assert_eq!(f.on_postcard(2, 3.0, max), Some(33_333_333_333));
        // Switch 1 now beats L[2] = 3? 2.5 < 3: no.
        assert_eq!(f.on_postcard(1, 2.5, max), None);
        // c ≤ 1: recorded, no change.
        assert_eq!(f.on_postcard(3, 0.9, max), None);
        assert_eq!(f.l, vec![(1, 2.5), (2, 3.0), (3, 0.9)]);
        // The first ACK after a rate update ends the PBT interval; later postcards ignored.
        assert!(f.on_ack(false, 0));
        assert!(f.ignore);
        assert_eq!(f.on_postcard(1, 10.0, max), None);
        assert_eq!(f.rate_bps, 33_333_333_333);
    }

    /// Where Algorithm 1 and §III's "minimum of these rates" differ: the switch that set the
    /// rate raises it past another switch's latest (lower) demand.
    #[test]
    fn the_switch_that_set_the_rate_may_raise_it_past_another_demand() {
        let max = 25_000_000_000u64;
        let mut f = PbfsFlow::default();
        assert_eq!(f.on_postcard(1, 2.0, max), Some(12_500_000_000));
        // Switch 2 asks for less of a cut: ignored (c ≤ L[ID] = 2).
        assert_eq!(f.on_postcard(2, 1.5, max), None);
        // Switch 1 (ID) eases to 1.2: the rate becomes MaxRate/1.2, above switch 2's
        // MaxRate/1.5 (the prose's minimum would stay at 16.7 G).
        assert_eq!(f.on_postcard(1, 1.2, max), Some(20_833_333_333));
        assert!(20_833_333_333 > max * 2 / 3);
    }

    #[test]
    fn ack_without_rate_update_only_stops_marking() {
        let mut f = PbfsFlow::default();
        assert!(!f.on_send(|| true, 2, 10));
        assert!(f.marking);
        assert!(!f.on_ack(false, 10));
        assert!(!f.marking && !f.ignore);
        // Postcards still count until a rate-changing ACK.
        assert_eq!(f.on_postcard(4, 2.0, 10), Some(5));
        assert!(f.on_ack(false, 5));
        let mut g = PbfsFlow::default();
        assert!(g.on_ack(true, 0));
        assert!(g.ignore);
        // A rate the controller changed between two ACKs (a DCQCN timer cut) ends it too.
        let mut h = PbfsFlow::default();
        assert!(!h.on_send(|| true, 2, 10));
        assert!(!h.on_ack(false, 10));
        assert!(!h.ignore);
        assert!(h.on_ack(false, 8));
        assert!(h.ignore);
        assert_eq!(h.on_postcard(4, 2.0, 10), None);
    }

    /// Fig. 2: packets Δ, 2Δ, … are marked while marking; a postcard or ACK stops it; a
    /// flow too small never marks.
    #[test]
    fn marking_every_delta_th_packet() {
        let mut f = PbfsFlow::default();
        let marks: Vec<u32> = (1..=20)
            .filter(|_| f.on_send(|| true, 6, 1))
            .collect::<Vec<_>>();
        // `filter` runs on_send once per index in order: indices of the marked sends.
        assert_eq!(marks, vec![6, 12, 18]);
        let mut g = PbfsFlow::default();
        assert!((1..=20).all(|_| !g.on_send(|| false, 6, 1)));
        assert!(!g.uses);
        let mut h = PbfsFlow::default();
        let mut m = Vec::new();
        for i in 1..=20u32 {
            if i == 8 {
                h.on_postcard(1, 0.5, 1);
            }
            if h.on_send(|| true, 6, 1) {
                m.push(i);
            }
        }
        assert_eq!(m, vec![6]);
    }
}
