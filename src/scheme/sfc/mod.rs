//! SFC — Source Flow Control (`seeds/sfc.txt` §3–§4, Algorithm 1).
//!
//! Switch half ([`switch`]): at ingress, after the forwarding lookup, a data packet whose
//! egress queue is deeper than `Q_th` (or whose destination has a live entry in the pause
//! cache) triggers a Back-To-Sender (BTS) signal unless the Bloom filter says this 5-tuple was
//! signalled since the last reset. The BTS is a 64 B trimmed copy with src/dst swapped, routed
//! by the forwarding table in the strict-priority class, carrying
//! `pause = max(cache_time, (depth − Q_tg)/R)` in whole µs and a `cacheable` flag (the
//! congested queue is a server-facing port of a ToR). Switches the BTS crosses cache
//! `cache[receiver] = max(old, now + pause)`. Variants for the paper's Fig. 1: Egress BTS,
//! Ingress BTS (no cache), Ingress BTS + Cache (= SFC); SFC-P converts the BTS into a PFC
//! pause at the sender's ToR.
//!
//! Host half ([`host`]): a BTS pauses its QP until `now + pause` (a newer BTS replaces the end
//! time); the congestion controller keeps running underneath.
//!
//! The data structures here (Bloom filter, pause cache, incast estimator) are pure and tested
//! in isolation.

pub mod config;
pub mod host;
pub mod switch;
pub mod wire;

use std::collections::HashMap;

use crate::rng::mix64;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(1);

/// Which SFC variant runs (scenario spelling: `off`, `sfc`, `ingress`, `egress`, `sfcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SfcMode {
    /// No SFC.
    Off,
    /// Ingress BTS + near-source pause cache (the SFC design).
    Sfc,
    /// Ingress BTS without the cache.
    Ingress,
    /// BTS generated at dequeue from the congested queue (rate-limited by that port).
    Egress,
    /// SFC-P: like SFC, but the sender-side ToR turns the BTS into a PFC pause of the
    /// sender NIC's priority (for NICs that cannot pause a QP).
    SfcP,
}

/// Where SFC runs (scenario spelling: `tor`, `all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SfcDeploy {
    /// ToR switches only (the paper's default).
    Tor,
    /// Every switch.
    All,
}

/// SFC parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SfcConfig {
    /// Variant.
    pub mode: SfcMode,
    /// Deployment.
    pub deploy: SfcDeploy,
    /// Trigger threshold on the egress queue depth, bytes (0 = 2 × BDP).
    pub qth_bytes: u64,
    /// Target depth the pause drains to, bytes (0 = 1 × BDP).
    pub qtg_bytes: u64,
    /// Bloom filter reset period, picoseconds (0 = RTT/2).
    pub bloom_reset_ps: u64,
    /// Bloom filter size, bits (64..=[`MAX_BLOOM_BITS`]).
    pub bloom_bits: u32,
    /// Bloom filter hash functions.
    pub bloom_hashes: u32,
    /// Pause-cache entries (hash-addressed register).
    pub cache_entries: u32,
    /// Optional incast estimator window τ, picoseconds (0 = off).
    pub estimator_tau_ps: u64,
    /// How the estimated remote queue depth triggers and sizes a BTS ([`EstimatorRule`]).
    pub estimator_rule: EstimatorRule,
    /// BTS size on the wire, bytes (trimmed header).
    pub bts_bytes: u32,
    /// Pause-time granularity, picoseconds (paper: whole µs).
    pub pause_quantum_ps: u64,
    /// Latency from a trigger to its BTS entering the generating switch's forwarding,
    /// picoseconds; the pause is computed when it leaves, from the queue's depth then.
    /// Default 0: the paper states no latency for its simulated BTS path, and its appendix C
    /// analysis counts none. A nonzero value models a prototype-like path (the paper's
    /// switches have a 600 ns pipeline, and its prototype builds a BTS from a trimmed mirror
    /// copy at egress and recirculates it to ingress for its route, §3.1 and §4: one pipeline
    /// pass more than a forwarded packet); `sfc-fig7-bts-delay` sweeps it
    /// (docs/src/papers/sfc.md, "BTS path latency").
    pub bts_delay_ps: u64,
    /// Diagnostics: keep [`TriggerStats`] at every SFC switch (off by default; adds the
    /// `trigger_stats` object to the `sfc` summary). Does not change the simulation.
    pub trigger_stats: bool,
}

impl SfcConfig {
    /// Does SFC run (any mode but `off`)? Its host half then pauses QPs through the NICs'
    /// pause bits.
    pub fn is_on(&self) -> bool {
        self.mode != SfcMode::Off
    }
}

impl Default for SfcConfig {
    fn default() -> Self {
        SfcConfig {
            mode: SfcMode::Off,
            deploy: SfcDeploy::Tor,
            qth_bytes: 0,
            qtg_bytes: 0,
            bloom_reset_ps: 0,
            bloom_bits: 1 << 16,
            bloom_hashes: 3,
            cache_entries: 32 * 1024,
            estimator_tau_ps: 0,
            estimator_rule: EstimatorRule::Queue,
            bts_bytes: 64,
            pause_quantum_ps: 1_000_000,
            bts_delay_ps: 0,
            trigger_stats: false,
        }
    }
}

/// Bloom filter with k hashes, periodic reset, and a version counter in the hash input (so a
/// false positive does not persist across resets). Resets are applied lazily: the filter
/// belongs to the period `now / reset_ps`.
#[derive(Clone, Debug)]
pub struct Bloom {
    bits: Vec<u64>,
    m: u32,
    k: u32,
    reset_ps: u64,
    epoch: u64,
    /// Distinct keys inserted in the current period.
    pub occupancy: u32,
    /// Highest occupancy of any period.
    pub max_occupancy: u32,
}

impl Bloom {
    /// Filter of `m_bits` bits with `k` hashes, reset every `reset_ps`.
    pub fn new(m_bits: u32, k: u32, reset_ps: u64) -> Self {
        let m = m_bits.max(64);
        Bloom {
            bits: vec![0; m.div_ceil(64) as usize],
            m,
            k: k.max(1),
            reset_ps: reset_ps.max(1),
            epoch: 0,
            occupancy: 0,
            max_occupancy: 0,
        }
    }

    fn roll(&mut self, now_ps: u64) {
        let e = now_ps / self.reset_ps;
        if e != self.epoch {
            self.epoch = e;
            self.bits.iter_mut().for_each(|w| *w = 0);
            self.occupancy = 0;
        }
    }

    /// Test `key` and insert it. Returns true if it was (probably) present — i.e. suppress.
    pub fn check_and_insert(&mut self, key: u64, now_ps: u64) -> bool {
        self.roll(now_ps);
        let h1 = mix64(key ^ self.epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let h2 = mix64(h1 ^ 0x5851_F42D_4C95_7F2D) | 1;
        let mut present = true;
        for i in 0..self.k {
            let b = (h1.wrapping_add((i as u64).wrapping_mul(h2)) % self.m as u64) as usize;
            let (w, bit) = (b / 64, 1u64 << (b % 64));
            if self.bits[w] & bit == 0 {
                present = false;
                self.bits[w] |= bit;
            }
        }
        if !present {
            self.occupancy += 1;
            self.max_occupancy = self.max_occupancy.max(self.occupancy);
        }
        present
    }
}

/// Hash-addressed pause cache: key (destination, priority) → pause end time. A collision
/// with a live entry of another key skips the update (the optimization is lost, never a wrong
/// pause).
///
/// Looked up for every data packet at every switch running SFC, so the lookup is built to
/// stay in cache: the default table (32 K entries, 512 KiB) is far larger than the few
/// hundred (destination, priority) keys a switch ever caches, and a plain lookup was a cache
/// miss (two: keys and ends were separate arrays) plus a 64-bit division per packet —
/// ≈ 7 % of the §5.3 SFC benchmark's samples. Now a lookup answers 0 without touching the
/// table when no entry ever written is still in force (`latest_end_ps`, e.g. on every switch
/// that never caches: spines and cores), or when a bit per slot (`maybe_live`, 4 KiB) says
/// the slot holds no entry that could still be in force; keys and end times share one
/// 16-byte entry; a power-of-two size takes a mask instead of the division (the same slot).
/// The answers are those of the plain table while the times of the queries never decrease
/// (the simulation clock; see [`Self::lookup`]).
#[derive(Clone, Debug)]
pub struct PauseCache {
    /// Slot → (key, pause end); key `u64::MAX` = never written.
    entries: Vec<CacheEntry>,
    /// `len − 1` when the length is a power of two (slot by mask), else 0 (slot by `%`).
    mask: u64,
    /// Bit per slot: clear = the slot holds no entry still in force (never written, or found
    /// expired by a lookup). Set by every update of the slot.
    maybe_live: Vec<u64>,
    /// Latest pause end ever written: from then on no entry is in force.
    latest_end_ps: u64,
    live: Vec<u32>,
    /// Highest number of simultaneously live entries seen at an update.
    pub max_occupancy: u32,
    /// Updates skipped because of a collision.
    pub collisions: u64,
}

/// Largest accepted Bloom filter, bits ([`SfcConfig::bloom_bits`]): 16 × the default
/// (65,536 bits, 8 KiB). The filter is a switch register array allocated at every SFC switch
/// and cleared whole at every reset period it is used in; the paper's takes under 0.1 % of a
/// Tofino's SRAM and holds under 150 flows per period (Table 2: under 110), where the default
/// with 3 hashes already has a false-positive rate near 3e-7. At this bound (128 KiB) it is
/// near 1e-10.
pub const MAX_BLOOM_BITS: u32 = 1 << 20;

/// Largest accepted pause cache, entries ([`SfcConfig::cache_entries`]): twice the default;
/// the cache is a switch register array, and a larger one costs 16 B an entry at every SFC
/// switch (4294967295 entries tried to allocate 68 GB).
pub const MAX_CACHE_ENTRIES: u32 = 1 << 16;

/// One slot of a [`PauseCache`].
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct CacheEntry {
    key: u64,
    end_ps: u64,
}

impl PauseCache {
    /// Memory of a cache of `n` entries, bytes (for the run's memory estimate,
    /// [`crate::runguard::scheme_tables`]).
    pub fn bytes_for(n: u32) -> u64 {
        let n = n.max(1) as u64;
        n * std::mem::size_of::<CacheEntry>() as u64 + n.div_ceil(64) * 8
    }

    /// Cache with `n` entries.
    pub fn new(n: u32) -> Self {
        let n = n.max(1) as usize;
        PauseCache {
            entries: vec![
                CacheEntry {
                    key: u64::MAX,
                    end_ps: 0,
                };
                n
            ],
            mask: if n.is_power_of_two() { n as u64 - 1 } else { 0 },
            maybe_live: vec![0; n.div_ceil(64)],
            latest_end_ps: 0,
            live: Vec::new(),
            max_occupancy: 0,
            collisions: 0,
        }
    }

    fn key(dst: u32, prio: u8) -> u64 {
        ((dst as u64) << 8) | prio as u64
    }

    /// Slot of key `k`: its hash modulo the table size (a mask for a power of two, the same
    /// slot).
    #[inline]
    fn slot(&self, k: u64) -> usize {
        let h = mix64(k);
        if self.mask != 0 {
            (h & self.mask) as usize
        } else {
            (h % self.entries.len() as u64) as usize
        }
    }

    /// Record that traffic to `dst` at `prio` should pause until `end_ps` (keeps the later).
    pub fn update(&mut self, dst: u32, prio: u8, end_ps: u64, now_ps: u64) {
        let k = Self::key(dst, prio);
        let s = self.slot(k);
        let e = &mut self.entries[s];
        if e.key != k && e.key != u64::MAX && e.end_ps > now_ps {
            self.collisions += 1;
            return;
        }
        if e.key != k || e.end_ps <= now_ps {
            e.end_ps = 0;
        }
        e.key = k;
        e.end_ps = e.end_ps.max(end_ps);
        self.latest_end_ps = self.latest_end_ps.max(e.end_ps);
        self.maybe_live[s / 64] |= 1 << (s % 64);
        // Occupancy: live entries (end in the future).
        let entries = &self.entries;
        self.live
            .retain(|&i| entries[i as usize].end_ps > now_ps && i as usize != s);
        self.live.push(s as u32);
        self.max_occupancy = self.max_occupancy.max(self.live.len() as u32);
    }

    /// Remaining pause for traffic to `dst` at `prio`, picoseconds (0 = none). `now_ps` must
    /// not be earlier than that of the last [`Self::lookup`].
    #[inline]
    pub fn remaining(&self, dst: u32, prio: u8, now_ps: u64) -> u64 {
        self.find(dst, prio, now_ps).0
    }

    /// [`Self::remaining`] for the per-packet path: also clears the slot's `maybe_live` bit
    /// when it finds the entry expired, so later lookups of that slot stop at the bit. The
    /// answers equal [`Self::remaining`]'s as long as `now_ps` never decreases from one call
    /// to the next (the simulation clock); an earlier time after a clear could see 0 where
    /// the entry was still in force then.
    #[inline]
    pub fn lookup(&mut self, dst: u32, prio: u8, now_ps: u64) -> u64 {
        let (rem, expired) = self.find(dst, prio, now_ps);
        if let Some(s) = expired {
            self.maybe_live[s / 64] &= !(1 << (s % 64));
        }
        rem
    }

    /// The remaining pause, and the slot if its entry was found expired.
    #[inline]
    fn find(&self, dst: u32, prio: u8, now_ps: u64) -> (u64, Option<usize>) {
        if now_ps >= self.latest_end_ps {
            return (0, None);
        }
        let k = Self::key(dst, prio);
        let s = self.slot(k);
        if self.maybe_live[s / 64] & (1 << (s % 64)) == 0 {
            return (0, None);
        }
        let e = self.entries[s];
        if e.end_ps <= now_ps {
            // Expired (whatever its key): nothing here is in force until the next update.
            return (0, Some(s));
        }
        (if e.key == k { e.end_ps - now_ps } else { 0 }, None)
    }
}

/// Near-source incast estimator (§3.4): per destination, a discounting-rate estimator (low-pass
/// filter) of the bytes sent towards it in the last τ; the remote queue estimate is
/// `bytes − τ·R` and its drain time `(bytes − τ·R)/R` is the `local_estimate` pause.
#[derive(Clone, Debug)]
pub struct IncastEstimator {
    tau_ps: u64,
    bytes: Vec<f64>,
    last_ps: Vec<u64>,
}

/// How the incast estimator's remote queue depth D (bytes of the last τ towards a receiver
/// minus τ × the receiver's link rate) turns into a BTS. §3.4: "the estimated remote queue
/// depth is used to compute the pause time … we take the max of cache_time and
/// local_estimate in line 13" of Algorithm 1, whose trigger is a queue over Q_th and whose
/// pause drains the queue to Q_tg.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimatorRule {
    /// Algorithm 1 on D as if it were the remote queue's depth (the default): trigger when D > Q_th, pause (D − Q_tg) / rate, with the remote port's
    /// thresholds (2 and 1 BDP at the receiver's link rate, or `sfc.qth` / `sfc.qtg`).
    #[default]
    Queue,
    /// Trigger as soon as D > 0 and pause D / rate (the other reading of §3.4).
    Any,
}

impl IncastEstimator {
    /// Estimator for `n` destinations with window `tau_ps`.
    pub fn new(n: usize, tau_ps: u64) -> Self {
        IncastEstimator {
            tau_ps: tau_ps.max(1),
            bytes: vec![0.0; n],
            last_ps: vec![0; n],
        }
    }

    /// Account `size` bytes towards destination index `d` at `now_ps`; return the estimated
    /// drain time of the remote queue at rate `rate_bps`, picoseconds.
    pub fn observe(&mut self, d: usize, size: u64, now_ps: u64, rate_bps: u64) -> u64 {
        self.observe_above(d, size, now_ps, rate_bps, 0, 0)
    }

    /// [`Self::observe`] under [`EstimatorRule::Queue`]: the time to drain the estimated
    /// remote depth D down to `qtg_bytes` at `rate_bps`, picoseconds, when D > `qth_bytes`;
    /// 0 otherwise.
    pub fn observe_above(
        &mut self,
        d: usize,
        size: u64,
        now_ps: u64,
        rate_bps: u64,
        qth_bytes: u64,
        qtg_bytes: u64,
    ) -> u64 {
        let dt = now_ps.saturating_sub(self.last_ps[d]) as f64;
        let decay = (-dt / self.tau_ps as f64).exp();
        self.bytes[d] = self.bytes[d] * decay + size as f64;
        self.last_ps[d] = now_ps;
        let capacity = self.tau_ps as f64 * rate_bps as f64 / 8e12;
        let depth = self.bytes[d] - capacity;
        if depth <= qth_bytes as f64 {
            0
        } else {
            ((depth - qtg_bytes as f64) * 8e12 / rate_bps as f64) as u64
        }
    }
}

/// A flow's exact (src, dst, sport, dport) (the protocol is always UDP).
pub type FlowId = (u32, u32, u16, u16);

/// Upper bounds of the [`TriggerStats::per_period`] buckets: triggers of one flow in one Bloom
/// reset period at one switch (the last bucket is open).
pub const PER_PERIOD_BUCKETS: [u32; 6] = [1, 2, 4, 8, 16, u32::MAX];

/// Optional diagnostics of the BTS trigger path at one switch (`sfc.trigger_stats`): which
/// packets trigger (class: incast = dport 200, the rest background; reason: the local queue
/// over Q_th, or only a cache hit / the estimator), how many of them the Bloom filter
/// suppresses, and how many times each flow triggers within one reset period — the BTS
/// reduction is `1 − flows per period / triggers`, so this histogram is what sets it. Indices:
/// `[class][reason]`, class 0 = background, 1 = incast; reason 0 = congested, 1 = not.
#[derive(Clone, Debug)]
pub struct TriggerStats {
    reset_ps: u64,
    epoch: u64,
    /// Flows that triggered in the current period, by their exact (src, dst, sport, dport) —
    /// not the Bloom key, so that `generated == flow_periods` also rules out key collisions:
    /// → (triggers, class, reason of the first).
    cur: HashMap<FlowId, (u32, u8, u8)>,
    /// Triggering packets (generated + suppressed).
    pub triggers: [[u64; 2]; 2],
    /// BTS generated (a first trigger of the flow in the period, barring Bloom false positives).
    pub generated: [[u64; 2]; 2],
    /// Per class, (flow, period) pairs by their number of triggers ([`PER_PERIOD_BUCKETS`]).
    pub per_period: [[u64; 6]; 2],
    /// Periods in which at least one flow triggered.
    pub busy_periods: u64,
    /// Distinct triggering flows summed over the busy periods, `[class][reason]` of each flow's
    /// first trigger in the period.
    pub entries: [[u64; 2]; 2],
    /// The period with the most distinct triggering flows: their split, `[class][reason]`.
    pub max_entries: [[u32; 2]; 2],
}

impl TriggerStats {
    /// Stats for a filter reset every `reset_ps`.
    pub fn new(reset_ps: u64) -> Self {
        TriggerStats {
            reset_ps: reset_ps.max(1),
            epoch: 0,
            cur: HashMap::new(),
            triggers: [[0; 2]; 2],
            generated: [[0; 2]; 2],
            per_period: [[0; 6]; 2],
            busy_periods: 0,
            entries: [[0; 2]; 2],
            max_entries: [[0; 2]; 2],
        }
    }

    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        self.busy_periods += 1;
        let mut split = [[0u32; 2]; 2];
        for &(n, class, reason) in self.cur.values() {
            let b = PER_PERIOD_BUCKETS.iter().position(|&u| n <= u).unwrap_or(5);
            self.per_period[class as usize][b] += 1;
            split[class as usize][reason as usize] += 1;
        }
        for (c, row) in split.iter().enumerate() {
            for (r, &v) in row.iter().enumerate() {
                self.entries[c][r] += v as u64;
            }
        }
        let total = |m: &[[u32; 2]; 2]| m.iter().flatten().sum::<u32>();
        if total(&split) > total(&self.max_entries) {
            self.max_entries = split;
        }
        self.cur.clear();
    }

    /// Record a triggering packet of flow `id` at `now_ps`: `incast` class, `congested` (the
    /// local queue, not only the cache or estimator), and whether the Bloom filter
    /// `suppressed` it.
    pub fn record(
        &mut self,
        id: FlowId,
        incast: bool,
        congested: bool,
        suppressed: bool,
        now_ps: u64,
    ) {
        let e = now_ps / self.reset_ps;
        if e != self.epoch {
            self.flush();
            self.epoch = e;
        }
        let (c, r) = (incast as usize, (!congested) as usize);
        self.triggers[c][r] += 1;
        if !suppressed {
            self.generated[c][r] += 1;
        }
        self.cur.entry(id).or_insert((0, c as u8, r as u8)).0 += 1;
    }

    /// A copy with the current period flushed (for the summary at the end of a run).
    pub fn finished(&self) -> Self {
        let mut s = self.clone();
        s.flush();
        s
    }

    /// Add `o` (finished) to `self`; `max_entries` keeps the larger period.
    pub fn add(&mut self, o: &TriggerStats) {
        let add2 = |a: &mut [[u64; 2]; 2], b: &[[u64; 2]; 2]| {
            for (x, y) in a.iter_mut().flatten().zip(b.iter().flatten()) {
                *x += y;
            }
        };
        add2(&mut self.triggers, &o.triggers);
        add2(&mut self.generated, &o.generated);
        add2(&mut self.entries, &o.entries);
        for (x, y) in self
            .per_period
            .iter_mut()
            .flatten()
            .zip(o.per_period.iter().flatten())
        {
            *x += y;
        }
        self.busy_periods += o.busy_periods;
        let total = |m: &[[u32; 2]; 2]| m.iter().flatten().sum::<u32>();
        if total(&o.max_entries) > total(&self.max_entries) {
            self.max_entries = o.max_entries;
        }
    }

    /// The `trigger_stats` object of the `sfc` summary.
    pub fn json(&self) -> serde_json::Value {
        let class = |c: usize| {
            let trig: u64 = self.triggers[c].iter().sum();
            let gen_: u64 = self.generated[c].iter().sum();
            let flows: u64 = self.per_period[c].iter().sum();
            serde_json::json!({
                "triggers": trig,
                "triggers_congested": self.triggers[c][0],
                "triggers_cache": self.triggers[c][1],
                "bts_generated": gen_,
                "bts_generated_congested": self.generated[c][0],
                "bts_generated_cache": self.generated[c][1],
                "bts_reduction": if trig > 0 { serde_json::Value::from(1.0 - gen_ as f64 / trig as f64) } else { serde_json::Value::Null },
                "flow_periods": flows,
                "triggers_per_flow_period": if flows > 0 { serde_json::Value::from(trig as f64 / flows as f64) } else { serde_json::Value::Null },
                "flow_periods_by_triggers": {
                    "1": self.per_period[c][0], "2": self.per_period[c][1], "3-4": self.per_period[c][2],
                    "5-8": self.per_period[c][3], "9-16": self.per_period[c][4], "17+": self.per_period[c][5],
                },
                "mean_entries_per_busy_period": if self.busy_periods > 0 { serde_json::Value::from(self.entries[c].iter().sum::<u64>() as f64 / self.busy_periods as f64) } else { serde_json::Value::Null },
                "max_period_entries_congested": self.max_entries[c][0],
                "max_period_entries_cache": self.max_entries[c][1],
            })
        };
        serde_json::json!({
            "busy_periods": self.busy_periods,
            "max_period_entries": self.max_entries.iter().flatten().sum::<u32>(),
            "background": class(0),
            "incast": class(1),
        })
    }
}

/// SFC counters of one switch (summed over switches into the `sfc` object of
/// `summary.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SfcCounters {
    /// BTS packets generated.
    pub bts_generated: u64,
    /// BTS triggers suppressed by the Bloom filter.
    pub bts_suppressed: u64,
    /// BTS generated because of a cache hit (not local congestion).
    pub bts_from_cache: u64,
    /// BTS generated because of the incast estimator.
    pub bts_from_estimator: u64,
    /// BTS converted to PFC pauses (SFC-P).
    pub sfcp_pfc_frames: u64,
}

impl SfcCounters {
    /// Add `o` to `self`.
    pub fn add(&mut self, o: &SfcCounters) {
        self.bts_generated += o.bts_generated;
        self.bts_suppressed += o.bts_suppressed;
        self.bts_from_cache += o.bts_from_cache;
        self.bts_from_estimator += o.bts_from_estimator;
        self.sfcp_pfc_frames += o.sfcp_pfc_frames;
    }
}

/// Round a pause up to the quantum (paper: whole microseconds).
pub fn quantize(pause_ps: u64, quantum_ps: u64) -> u64 {
    if quantum_ps <= 1 {
        pause_ps
    } else {
        pause_ps.div_ceil(quantum_ps) * quantum_ps
    }
}

/// The `sfc` object of `summary.json`: the variant, BTS counts summed over switches, the
/// largest Bloom-filter and pause-cache occupancies, and the BTS reduction by the filter.
pub fn summary_json(
    switches: &[&switch::SfcSwitch],
    host: Option<&host::SfcHost>,
    cfg: &crate::scheme::Setup<'_, SfcConfig>,
) -> serde_json::Value {
    let mut c = SfcCounters::default();
    let (mut bloom, mut cache, mut collisions) = (0u32, 0u32, 0u64);
    let mut stats: Option<TriggerStats> = None;
    for s in switches {
        if let Some(st) = &s.stats {
            let st = st.finished();
            match stats.as_mut() {
                Some(acc) => acc.add(&st),
                None => stats = Some(st),
            }
        }
        c.add(&s.counters);
        bloom = bloom.max(s.bloom.max_occupancy);
        cache = cache.max(s.cache.max_occupancy);
        collisions += s.cache.collisions;
    }
    let trig = c.bts_generated + c.bts_suppressed;
    let mut v = serde_json::json!({
        "mode": cfg.own.mode,
        "deploy": cfg.own.deploy,
        "bts_generated": c.bts_generated,
        "bts_suppressed": c.bts_suppressed,
        "bts_from_cache": c.bts_from_cache,
        "bts_from_estimator": c.bts_from_estimator,
        "bts_received": host.map_or(0, |h| h.bts_received),
        "max_bloom_occupancy": bloom,
        "max_cache_occupancy": cache,
        "cache_collisions": collisions,
        "sfcp_pfc_frames": c.sfcp_pfc_frames,
        "bts_reduction": if trig > 0 { serde_json::Value::from(c.bts_suppressed as f64 / trig as f64) } else { serde_json::Value::Null },
    });
    if let Some(st) = stats {
        v["trigger_stats"] = st.json();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_one_per_period_no_false_negatives() {
        let mut b = Bloom::new(1 << 16, 3, 5_000_000);
        for k in 0..100u64 {
            assert!(!b.check_and_insert(k, 1000), "first sight of {k} must pass");
        }
        for k in 0..100u64 {
            assert!(b.check_and_insert(k, 2000), "no false negative for {k}");
        }
        assert_eq!(b.occupancy, 100);
        // Next period: reset, every key passes once again.
        for k in 0..100u64 {
            assert!(!b.check_and_insert(k, 5_000_001));
        }
        assert_eq!(b.max_occupancy, 100);
    }

    #[test]
    fn trigger_stats_histogram_and_fullest_period() {
        let id = |k: u32| (k, 0, 10_000, 100);
        let mut t = TriggerStats::new(1_000);
        // Period 0: flow 1 (background, congested) triggers 3 times, flow 2 (incast, cache)
        // once; period 1: flow 1 once; period 2: flows 1..=3 (background) and 4 (incast) once.
        t.record(id(1), false, true, false, 0);
        t.record(id(1), false, true, true, 10);
        t.record(id(2), true, false, false, 20);
        t.record(id(1), false, true, true, 999);
        t.record(id(1), false, true, false, 1_000);
        for k in 1..=3 {
            t.record(id(k), false, true, false, 2_500);
        }
        t.record(id(4), true, true, false, 2_600);
        // Unflushed so far: the last period counts only once finished.
        assert_eq!(t.busy_periods, 2);
        let f = t.finished();
        assert_eq!(f.busy_periods, 3);
        assert_eq!(f.triggers, [[7, 0], [1, 1]]);
        assert_eq!(f.generated, [[5, 0], [1, 1]]);
        assert_eq!(
            f.per_period[0],
            [4, 0, 1, 0, 0, 0],
            "3 triggers land in 3-4"
        );
        assert_eq!(f.per_period[1], [2, 0, 0, 0, 0, 0]);
        assert_eq!(f.entries, [[5, 0], [1, 1]]);
        assert_eq!(f.max_entries, [[3, 0], [1, 0]]);
        // Merging two switches keeps the fuller period and sums the rest.
        let mut other = TriggerStats::new(1_000);
        for k in 0..5 {
            other.record(id(k), true, false, false, 0);
        }
        let mut sum = f.clone();
        sum.add(&other.finished());
        assert_eq!(sum.max_entries, [[0, 0], [0, 5]]);
        assert_eq!(sum.busy_periods, 4);
        let j = sum.json();
        assert_eq!(j["max_period_entries"], 5);
        assert_eq!(j["incast"]["triggers"], 7);
        assert_eq!(j["incast"]["bts_reduction"], 0.0);
        assert_eq!(j["background"]["bts_reduction"], 1.0 - 5.0 / 7.0);
        assert_eq!(j["background"]["flow_periods_by_triggers"]["3-4"], 1);
        assert_eq!(j["background"]["triggers_per_flow_period"], 7.0 / 5.0);
    }

    #[test]
    fn cache_keeps_max_and_skips_collisions() {
        let mut c = PauseCache::new(32 * 1024);
        c.update(7, 3, 10_000, 0);
        c.update(7, 3, 8_000, 1);
        assert_eq!(c.remaining(7, 3, 2_000), 8_000);
        assert_eq!(c.remaining(7, 4, 2_000), 0);
        assert_eq!(c.remaining(7, 3, 20_000), 0);
        // A 1-entry cache: a second key collides while the first is live, then replaces it.
        let mut one = PauseCache::new(1);
        one.update(1, 3, 100, 0);
        one.update(2, 3, 200, 10);
        assert_eq!(one.collisions, 1);
        assert_eq!(one.remaining(2, 3, 10), 0);
        one.update(2, 3, 300, 150);
        assert_eq!(one.remaining(2, 3, 150), 150);
        assert_eq!(one.max_occupancy, 1);
    }

    /// The fast paths (no entry in force, slot bit clear, mask for a power-of-two size)
    /// answer exactly as a plain hash table of (key, end) per slot addressed by `hash % n`,
    /// over random updates and lookups with many collisions, at power-of-two and other sizes.
    #[test]
    fn cache_lookups_match_a_plain_table() {
        for n in [1u32, 3, 8, 64, 100, 1024] {
            let mut c = PauseCache::new(n);
            let mut keys = vec![u64::MAX; n as usize];
            let mut ends = vec![0u64; n as usize];
            let slot = |k: u64| (mix64(k) % n as u64) as usize;
            let mut rng = crate::rng::Rng::new(u64::from(n));
            let mut now = 0u64;
            let (mut hits, mut checks) = (0, 0);
            for _ in 0..20_000 {
                now += rng.below(400);
                let (dst, prio) = (rng.below(40) as u32, rng.below(2) as u8);
                let k = PauseCache::key(dst, prio);
                if rng.below(4) == 0 {
                    let end = now + rng.below(3_000);
                    c.update(dst, prio, end, now);
                    // The plain table's update.
                    let s = slot(k);
                    if keys[s] != k && keys[s] != u64::MAX && ends[s] > now {
                        continue;
                    }
                    if keys[s] != k || ends[s] <= now {
                        ends[s] = 0;
                    }
                    keys[s] = k;
                    ends[s] = ends[s].max(end);
                } else {
                    let s = slot(k);
                    let want = if keys[s] == k {
                        ends[s].saturating_sub(now)
                    } else {
                        0
                    };
                    assert_eq!(c.remaining(dst, prio, now), want, "n {n} t {now}");
                    assert_eq!(c.lookup(dst, prio, now), want, "n {n} t {now}");
                    assert_eq!(c.remaining(dst, prio, now), want, "n {n} t {now}");
                    checks += 1;
                    hits += usize::from(want > 0);
                }
            }
            assert!(
                hits > 100 && hits < checks,
                "n {n}: {hits} of {checks} in force"
            );
        }
    }

    #[test]
    fn estimator_sees_excess() {
        // 4 senders at 100 G into one destination for 2τ: the filtered bytes approach
        // 4·τ·R, i.e. an excess of 3·τ·R → drain time ≈ 3τ.
        let tau = 10_000_000u64; // 10 µs
        let mut e = IncastEstimator::new(1, tau);
        let mut est = 0;
        let step = 83_840; // 1048 B at 100 G
        let mut t = 0;
        while t < 20 * tau {
            for _ in 0..4 {
                est = e.observe(0, 1048, t, 100_000_000_000);
            }
            t += step;
        }
        let want = 3 * tau;
        assert!(
            (est as f64 - want as f64).abs() < 0.05 * want as f64,
            "{est} vs {want}"
        );
    }

    /// [`EstimatorRule::Queue`]: the estimated remote depth D = bytes − τ·R triggers only
    /// above Q_th and pauses for the drain down to Q_tg. 4 senders at 100 G (τ = 10 µs,
    /// τ·R = 125,000 B) in steady state: D → 3·τ·R = 375,000 B; with Q_th = 250,000 B and
    /// Q_tg = 125,000 B the pause is (375,000 − 125,000)·8 / 100 G = 20 µs (the `any` rule's
    /// 30 µs less one τ), and nothing triggers while D ≤ Q_th (the first packets).
    #[test]
    fn estimator_queue_rule_is_algorithm_1_on_the_estimate() {
        let tau = 10_000_000u64;
        let (qth, qtg) = (250_000, 125_000);
        let mut e = IncastEstimator::new(1, tau);
        let mut twin = IncastEstimator::new(1, tau);
        let step = 83_840;
        let (mut t, mut first_trigger, mut est) = (0u64, None, 0);
        while t < 20 * tau {
            for _ in 0..4 {
                est = e.observe_above(0, 1048, t, 100_000_000_000, qth, qtg);
                let any = twin.observe(0, 1048, t, 100_000_000_000);
                // Same filter: D is `any`'s drain time in bytes; the rule only moves the
                // threshold and the target.
                let depth = any as f64 * 100e9 / 8e12;
                if depth <= qth as f64 {
                    assert_eq!(est, 0, "t {t}: D = {depth} B ≤ Q_th");
                } else {
                    first_trigger.get_or_insert(t);
                    let want = (depth - qtg as f64) * 8e12 / 100e9;
                    assert!((est as f64 - want).abs() <= 2.0, "t {t}: {est} vs {want}");
                }
            }
            t += step;
        }
        assert!(first_trigger.is_some_and(|t| t > 0));
        let want = 20 * crate::units::US;
        assert!(
            (est as f64 - want as f64).abs() < 0.05 * want as f64,
            "{est} vs {want}"
        );
    }

    #[test]
    fn quantize_whole_us() {
        assert_eq!(quantize(1, 1_000_000), 1_000_000);
        assert_eq!(quantize(2_000_000, 1_000_000), 2_000_000);
        assert_eq!(quantize(0, 1_000_000), 0);
    }
}
