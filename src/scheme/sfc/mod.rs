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

pub mod host;
pub mod switch;

use crate::rng::mix64;

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
    /// Bloom filter size, bits.
    pub bloom_bits: u32,
    /// Bloom filter hash functions.
    pub bloom_hashes: u32,
    /// Pause-cache entries (hash-addressed register).
    pub cache_entries: u32,
    /// Optional incast estimator window τ, picoseconds (0 = off).
    pub estimator_tau_ps: u64,
    /// BTS size on the wire, bytes (trimmed header).
    pub bts_bytes: u32,
    /// Pause-time granularity, picoseconds (paper: whole µs).
    pub pause_quantum_ps: u64,
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
            bts_bytes: 64,
            pause_quantum_ps: 1_000_000,
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
#[derive(Clone, Debug)]
pub struct PauseCache {
    keys: Vec<u64>,
    ends: Vec<u64>,
    live: Vec<u32>,
    /// Highest number of simultaneously live entries seen at an update.
    pub max_occupancy: u32,
    /// Updates skipped because of a collision.
    pub collisions: u64,
}

impl PauseCache {
    /// Cache with `n` entries.
    pub fn new(n: u32) -> Self {
        let n = n.max(1) as usize;
        PauseCache {
            keys: vec![u64::MAX; n],
            ends: vec![0; n],
            live: Vec::new(),
            max_occupancy: 0,
            collisions: 0,
        }
    }

    fn key(dst: u32, prio: u8) -> u64 {
        ((dst as u64) << 8) | prio as u64
    }

    fn slot(&self, k: u64) -> usize {
        (mix64(k) % self.keys.len() as u64) as usize
    }

    /// Record that traffic to `dst` at `prio` should pause until `end_ps` (keeps the later).
    pub fn update(&mut self, dst: u32, prio: u8, end_ps: u64, now_ps: u64) {
        let k = Self::key(dst, prio);
        let s = self.slot(k);
        if self.keys[s] != k && self.keys[s] != u64::MAX && self.ends[s] > now_ps {
            self.collisions += 1;
            return;
        }
        if self.keys[s] != k || self.ends[s] <= now_ps {
            self.ends[s] = 0;
        }
        self.keys[s] = k;
        self.ends[s] = self.ends[s].max(end_ps);
        // Occupancy: live entries (end in the future).
        let ends = &self.ends;
        self.live
            .retain(|&i| ends[i as usize] > now_ps && i as usize != s);
        self.live.push(s as u32);
        self.max_occupancy = self.max_occupancy.max(self.live.len() as u32);
    }

    /// Remaining pause for traffic to `dst` at `prio`, picoseconds (0 = none).
    pub fn remaining(&self, dst: u32, prio: u8, now_ps: u64) -> u64 {
        let k = Self::key(dst, prio);
        let s = self.slot(k);
        if self.keys[s] == k {
            self.ends[s].saturating_sub(now_ps)
        } else {
            0
        }
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
        let dt = now_ps.saturating_sub(self.last_ps[d]) as f64;
        let decay = (-dt / self.tau_ps as f64).exp();
        self.bytes[d] = self.bytes[d] * decay + size as f64;
        self.last_ps[d] = now_ps;
        let capacity = self.tau_ps as f64 * rate_bps as f64 / 8e12;
        let excess = self.bytes[d] - capacity;
        if excess <= 0.0 {
            0
        } else {
            (excess * 8e12 / rate_bps as f64) as u64
        }
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
    cfg: &crate::config::NetConfig,
) -> serde_json::Value {
    let mut c = SfcCounters::default();
    let (mut bloom, mut cache, mut collisions) = (0u32, 0u32, 0u64);
    for s in switches {
        c.add(&s.counters);
        bloom = bloom.max(s.bloom.max_occupancy);
        cache = cache.max(s.cache.max_occupancy);
        collisions += s.cache.collisions;
    }
    let trig = c.bts_generated + c.bts_suppressed;
    serde_json::json!({
        "mode": cfg.sfc.mode,
        "deploy": cfg.sfc.deploy,
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
    })
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

    #[test]
    fn quantize_whole_us() {
        assert_eq!(quantize(1, 1_000_000), 1_000_000);
        assert_eq!(quantize(2_000_000, 1_000_000), 2_000_000);
        assert_eq!(quantize(0, 1_000_000), 0);
    }
}
