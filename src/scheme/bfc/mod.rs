//! BFC — Backpressure Flow Control (Goyal, Shah, Sharma, Alizadeh, Anderson;
//! `../shared/seeds/bfc.txt` §3, `SPEC.md` §4): per-hop, per-flow pauses with dynamic
//! assignment of flows to a port's physical queues.
//!
//! - Every switch computes the same *VFID* of a flow, a hash of its 5-tuple into
//!   [`BfcConfig::vfid_table`] values ([`vfid`]).
//! - A [`FlowTable`] (one bucket of 4 entries per VFID, plus a small associative overflow
//!   cache) keeps, while a flow has packets queued here (or is paused), its physical queue,
//!   its packet count and its pause state; an entry is told apart from others of the same VFID
//!   by its (ingress, egress) ports, as in the paper §3.8.
//! - A flow with nothing queued takes a free physical queue of its egress port, or a random
//!   one if none is free (a *collision*); when the last packet of a queue leaves, the queue is
//!   free again.
//! - A flow is paused when one of its packets finds its physical queue above
//!   [`threshold_bytes`] `= (HRTT + τ) · μ / N_active`; it becomes due for resumption when a
//!   packet of it leaves and the queue is at or below the threshold (or when its last packet
//!   leaves), and at most [`BfcConfig::resumes_per_tau`] flows of one physical queue are
//!   resumed per τ.
//! - Every τ the switch sends each upstream neighbour that has paused flows (or whose filter
//!   changed) a pause frame: a Bloom filter ([`CountingBloom`], multistage, 4 hashes, 128 B) of
//!   the VFIDs paused on that ingress link. The upstream holds back a physical queue whose head
//!   packet matches the latest filter from downstream; a NIC does the same per flow.
//! - The first packet of a flow with no state at the switch goes to a strict-priority
//!   *high-priority queue*; ACKs and NACKs travel there too.
//!
//! Queue layout of a port under BFC: 0 = control class, [`HPQ`] = high-priority queue,
//! `FIRST_PHYSICAL .. FIRST_PHYSICAL + P` = the P physical queues (DRR, quantum one MTU), then
//! one overflow queue (flows that found the table and the cache full). `queues_per_port` must
//! be `P + 3` (the scenario sets it), so P ≤ [`MAX_PORT_PHYSICAL`] = 61.
//!
//! Modes ([`BfcMode`]) give the paper's baselines with the same machinery: BFC-VFID (static
//! hash onto the physical queues, same pauses), SFQ (static hash, no pauses) and Ideal-FQ
//! (dynamic assignment, no pauses; with an unlimited buffer). Ideal-FQ takes up to
//! [`MAX_FQ_PHYSICAL`] physical queues (the paper: 1000, a queue per flow): above 61 they and
//! the overflow queue live in a wide queue set of the BFC port state ([`fq`]), served by the
//! same DRR, and the port has [`WIDE_PORT_QUEUES`] queues, [`FQ_QUEUE`] standing for the set.

pub mod config;
pub mod fq;
pub mod host;
pub mod switch;
pub mod wire;

use crate::rng::mix64;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(7);

/// Index of the high-priority (first-packet, ACK) queue.
pub const HPQ: usize = 1;
/// Index of the first physical queue.
pub const FIRST_PHYSICAL: usize = 2;
/// Most physical queues a port holds in its own queues (with the control, high-priority and
/// overflow queues, 64: the width of its queue masks). Ideal-FQ with more keeps them in the
/// wide queue set ([`fq`]).
pub const MAX_PORT_PHYSICAL: usize = 61;
/// Most physical queues under Ideal-FQ (with the overflow queue, a full wide queue set).
pub const MAX_FQ_PHYSICAL: usize = fq::MAX_FQ_QUEUES - 1;
/// The port queue that stands for the wide queue set of an Ideal-FQ port ([`fq`]): the last
/// of the port's [`WIDE_PORT_QUEUES`]; queue [`FIRST_PHYSICAL`] stays empty.
pub const FQ_QUEUE: usize = 3;
/// Queues of a port whose physical queues live in the wide queue set: control, high-priority,
/// an empty one (so that data priorities 1..=3 stay valid, as on other ports) and
/// [`FQ_QUEUE`].
pub const WIDE_PORT_QUEUES: usize = FQ_QUEUE + 1;
/// Ways (entries) per bucket of the flow table.
pub const WAYS: usize = 4;
/// Largest Bloom filter, bytes (the pause frame's payload side table holds 128 B).
pub const MAX_BLOOM_BYTES: u32 = (crate::engine::arena::PAYLOAD_WORDS * 8) as u32;

/// How flows are put onto physical queues and whether they are paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BfcMode {
    /// BFC: dynamic assignment and per-flow pauses.
    Bfc,
    /// BFC-VFID: a static hash of the VFID onto the physical queues, same pauses.
    Vfid,
    /// Stochastic fair queueing: static hash, no pauses (DCQCN+Win+SFQ, SFQ+InfBuffer).
    Sfq,
    /// Ideal-FQ approximation: dynamic assignment (a queue per flow while there are fewer
    /// flows than queues), no pauses; run with an unlimited buffer.
    IdealFq,
}

impl BfcMode {
    /// Does this mode pause flows (send pause frames)?
    pub fn pauses(self) -> bool {
        matches!(self, BfcMode::Bfc | BfcMode::Vfid)
    }
    /// Does this mode assign queues dynamically?
    pub fn dynamic(self) -> bool {
        matches!(self, BfcMode::Bfc | BfcMode::IdealFq)
    }
}

/// BFC parameters (`[bfc]` scenario section); defaults from the paper §4.1.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BfcConfig {
    /// Switches run BFC (and NICs obey its pause frames).
    pub enabled: bool,
    /// Assignment / pausing mode.
    pub mode: BfcMode,
    /// Physical data queues per egress port (paper: 32).
    pub physical_queues: usize,
    /// First packets go to the high-priority queue; `None` = on for BFC and BFC-VFID, off for
    /// SFQ and Ideal-FQ.
    pub high_priority_queue: Option<bool>,
    /// VFID space = buckets of the flow table (paper: 16 K).
    pub vfid_table: u32,
    /// Entries of the associative overflow cache (paper: 100).
    pub overflow_cache: usize,
    /// Bloom filter size, bytes (paper: 128; at most [`MAX_BLOOM_BYTES`]).
    pub bloom_bytes: u32,
    /// Bloom filter hash functions (= stages of the multistage filter; paper: 4).
    pub bloom_hashes: u32,
    /// One-hop RTT used in the threshold, picoseconds; `None` = twice the propagation delay
    /// of the flow's ingress link (paper: 2 µs for 1 µs links).
    pub hrtt_ps: Option<u64>,
    /// Pause-frame (and resume-pacing) period τ, picoseconds; `None` = HRTT / 2.
    pub tau_ps: Option<u64>,
    /// Flows resumed per physical queue per τ (paper: 1, "two per RTT").
    pub resumes_per_tau: u32,
    /// BFC-BufferOpt, the §3.5 strawman the paper's Fig. 10 compares BFC with: when a departure
    /// leaves a physical queue at or below the pause threshold, every paused flow with packets
    /// in that queue becomes due for resumption ("unpause all n flows associated with the
    /// physical queue if the queue length drops below the threshold"), not only the flow whose
    /// packet left. With [`Self::resumes_per_tau`] large they all resume at the next τ tick.
    /// Default off (BFC's own rule).
    pub resume_whole_queue: bool,
    /// Keep Ideal-FQ's queues in the wide queue set ([`fq`]) even when they fit a port
    /// (at most [`MAX_PORT_PHYSICAL`]): both serve packets identically, which tests check.
    /// Not a scenario key.
    #[serde(skip)]
    pub wide_queue_set: bool,
}

impl Default for BfcConfig {
    fn default() -> Self {
        BfcConfig {
            enabled: false,
            mode: BfcMode::Bfc,
            physical_queues: 32,
            high_priority_queue: None,
            vfid_table: 16_384,
            overflow_cache: 100,
            bloom_bytes: 128,
            bloom_hashes: 4,
            hrtt_ps: None,
            tau_ps: None,
            resumes_per_tau: 1,
            resume_whole_queue: false,
            wide_queue_set: false,
        }
    }
}

impl BfcConfig {
    /// `queues_per_port` BFC needs: control, high-priority, the physical queues, overflow; or,
    /// when the physical and overflow queues live in the wide queue set ([`Self::wide`]),
    /// [`WIDE_PORT_QUEUES`].
    pub fn queues_per_port(&self) -> usize {
        if self.wide() {
            WIDE_PORT_QUEUES
        } else {
            self.physical_queues + 3
        }
    }

    /// Do the ports keep their physical and overflow queues in the wide queue set ([`fq`])?
    /// Ideal-FQ with more than [`MAX_PORT_PHYSICAL`] physical queues (or with
    /// [`Self::wide_queue_set`]).
    pub fn wide(&self) -> bool {
        self.mode == BfcMode::IdealFq
            && (self.physical_queues > MAX_PORT_PHYSICAL || self.wide_queue_set)
    }

    /// Is the high-priority queue in use?
    pub fn hpq(&self) -> bool {
        self.high_priority_queue
            .unwrap_or(matches!(self.mode, BfcMode::Bfc | BfcMode::Vfid))
    }

    /// Problems of this configuration, as (scenario key, message); `queues_per_port` is the
    /// network's.
    pub fn issues(&self, queues_per_port: usize) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        if !self.enabled {
            return v;
        }
        if self.mode == BfcMode::IdealFq && !(1..=MAX_FQ_PHYSICAL).contains(&self.physical_queues) {
            v.push((
                "bfc.queues",
                format!(
                    "must be in 1..={MAX_FQ_PHYSICAL} under `bfc.mode = \"ideal_fq\"` (got {}): with the overflow queue, a port's per-flow queue set holds at most {}",
                    self.physical_queues,
                    fq::MAX_FQ_QUEUES
                ),
            ));
        } else if self.mode != BfcMode::IdealFq
            && !(1..=MAX_PORT_PHYSICAL).contains(&self.physical_queues)
        {
            v.push((
                "bfc.queues",
                format!(
                    "must be in 1..=61 (got {}): with the control, high-priority and overflow queues a port has at most 64",
                    self.physical_queues
                ),
            ));
        } else if queues_per_port != self.queues_per_port() && self.wide() {
            v.push((
                "network.queues_per_port",
                format!(
                    "must be {WIDE_PORT_QUEUES} under BFC's Ideal-FQ with more than {MAX_PORT_PHYSICAL} queues (got {queues_per_port}): the per-flow queues live in a set of their own; leave it unset"
                ),
            ));
        } else if queues_per_port != self.queues_per_port() {
            v.push((
                "network.queues_per_port",
                format!(
                    "must be bfc.queues + 3 = {} under BFC (got {queues_per_port}); leave it unset",
                    self.queues_per_port()
                ),
            ));
        }
        if !(1..=(1 << 24)).contains(&self.vfid_table) {
            v.push((
                "bfc.vfid_table",
                format!("must be in 1..=16777216 (got {})", self.vfid_table),
            ));
        }
        if self.overflow_cache > 100_000 {
            v.push((
                "bfc.overflow_cache",
                format!(
                    "must be at most 100000 entries (got {})",
                    self.overflow_cache
                ),
            ));
        }
        if !(1..=8).contains(&self.bloom_hashes) {
            v.push((
                "bfc.bloom_hashes",
                format!("must be in 1..=8 (got {})", self.bloom_hashes),
            ));
        } else if !(1..=MAX_BLOOM_BYTES).contains(&self.bloom_bytes)
            || !(self.bloom_bytes * 8).is_multiple_of(self.bloom_hashes)
        {
            v.push((
                "bfc.bloom_bytes",
                format!(
                    "must be in 1..={MAX_BLOOM_BYTES} bytes with 8 × bytes a multiple of bloom_hashes ({}) (got {})",
                    self.bloom_hashes, self.bloom_bytes
                ),
            ));
        }
        if self.hrtt_ps == Some(0) {
            v.push(("bfc.hrtt", "must be positive".into()));
        }
        if let Some(t) = self.tau_ps
            && t < MIN_TAU_PS
        {
            v.push((
                "bfc.tau",
                format!(
                    "{} is below the shortest accepted pause-frame period, {}",
                    crate::units::fmt_time(t),
                    crate::units::fmt_time(MIN_TAU_PS)
                ),
            ));
        }
        // Without `tau`, τ defaults to HRTT/2: the same floor applies to it.
        if self.tau_ps.is_none()
            && let Some(h) = self.hrtt_ps
            && h > 0
            && h / 2 < MIN_TAU_PS
        {
            v.push((
                "bfc.hrtt",
                format!(
                    "{} gives the default τ = HRTT/2 = {}, below the shortest accepted \
                     pause-frame period, {} (set `bfc.tau` or a longer `bfc.hrtt`)",
                    crate::units::fmt_time(h),
                    crate::units::fmt_time(h / 2),
                    crate::units::fmt_time(MIN_TAU_PS)
                ),
            ));
        }
        if self.resumes_per_tau == 0 {
            v.push((
                "bfc.resumes_per_tau",
                "must be at least 1: paused flows would never resume".into(),
            ));
        }
        if self.resume_whole_queue && !self.mode.pauses() {
            v.push((
                "bfc.resume_whole_queue",
                "has no effect: this `bfc.mode` pauses no flow (only `bfc` and `vfid` do)".into(),
            ));
        }
        v
    }
}

/// Shortest accepted pause-frame period τ (`bfc.tau`, or its defaults HRTT/2 and the link
/// delay), picoseconds: one pause frame per τ per link, and below 100 ns the frames alone
/// (≈ 15 ns each at 100 Gb/s) take a large share of the link and the run drowns in timer
/// events.
pub const MIN_TAU_PS: u64 = 100 * crate::units::NS;

/// VFID of a flow: the same hash of its 5-tuple at every switch and NIC, in `0..table`.
#[inline]
pub fn vfid(src: u32, dst: u32, sport: u16, dport: u16, table: u32) -> u32 {
    let k = ((src as u64) << 32) | dst as u64;
    let h = mix64(0xbfc0_5eed ^ mix64(k ^ mix64(((sport as u64) << 16) | dport as u64)));
    ((h as u128 * table as u128) >> 64) as u32
}

/// Pause threshold of a physical queue, bytes: `(HRTT + τ) · μ / N_active` (paper §3.4) with
/// `hrtt_ps` and `tau_ps` in picoseconds, `rate_bps` the port rate μ and `n_active` the
/// active physical queues of the port (at least 1 is used).
#[inline]
pub fn threshold_bytes(hrtt_ps: u64, tau_ps: u64, rate_bps: u64, n_active: u32) -> u64 {
    let bits = (hrtt_ps + tau_ps) as u128 * rate_bps as u128 / 1_000_000_000_000;
    (bits / 8 / n_active.max(1) as u128) as u64
}

/// Bit positions of `vfid` in a multistage Bloom filter of `m_bits` bits and `k` stages of
/// `m_bits / k` bits each, one hash per stage (`out[..k]`).
#[inline]
pub fn bloom_positions(vfid: u32, m_bits: u32, k: u32, out: &mut [u32; 8]) {
    let stage = (m_bits / k) as u64;
    let mut h = mix64(vfid as u64 ^ 0x5bd1_e995_0000_0000);
    for (i, o) in out.iter_mut().take(k as usize).enumerate() {
        h = mix64(h.wrapping_add(0x9e37_79b9_7f4a_7c15));
        *o = i as u32 * stage as u32 + ((h as u128 * stage as u128) >> 64) as u32;
    }
}

/// Does the filter `bits` (of `m_bits` bits, `k` stages) match `vfid` (all `k` bits set)?
#[inline]
pub fn bloom_contains(bits: &[u64; 16], m_bits: u32, k: u32, vfid: u32) -> bool {
    let mut pos = [0u32; 8];
    bloom_positions(vfid, m_bits, k, &mut pos);
    pos[..k as usize]
        .iter()
        .all(|&p| bits[(p / 64) as usize] & (1u64 << (p % 64)) != 0)
}

/// Counting Bloom filter of the VFIDs paused on one ingress link (the sender of pauses keeps
/// counts so that a VFID can be removed while others sharing its bits stay), with the bit
/// array it sends upstream maintained alongside.
#[derive(Clone, Debug)]
pub struct CountingBloom {
    /// Count per bit.
    counts: Vec<u16>,
    /// Bit i set iff `counts[i] > 0`.
    pub bits: [u64; 16],
    /// Filter size, bits.
    pub m_bits: u32,
    /// Hash functions (stages).
    pub k: u32,
    /// VFIDs currently inserted (with multiplicity).
    pub members: u32,
}

impl CountingBloom {
    /// Empty filter of `m_bits` bits (≤ 1024) and `k` stages (≤ 8, dividing `m_bits`).
    pub fn new(m_bits: u32, k: u32) -> Self {
        CountingBloom {
            counts: vec![0; m_bits as usize],
            bits: [0; 16],
            m_bits,
            k,
            members: 0,
        }
    }

    /// Add `vfid`.
    pub fn insert(&mut self, vfid: u32) {
        let mut pos = [0u32; 8];
        bloom_positions(vfid, self.m_bits, self.k, &mut pos);
        for &p in &pos[..self.k as usize] {
            let c = &mut self.counts[p as usize];
            *c = c.saturating_add(1);
            self.bits[(p / 64) as usize] |= 1u64 << (p % 64);
        }
        self.members += 1;
    }

    /// Remove `vfid` (which must have been inserted).
    pub fn remove(&mut self, vfid: u32) {
        let mut pos = [0u32; 8];
        bloom_positions(vfid, self.m_bits, self.k, &mut pos);
        for &p in &pos[..self.k as usize] {
            let c = &mut self.counts[p as usize];
            *c = c.saturating_sub(1);
            if *c == 0 {
                self.bits[(p / 64) as usize] &= !(1u64 << (p % 64));
            }
        }
        self.members = self.members.saturating_sub(1);
    }

    /// Does the filter match `vfid`?
    pub fn contains(&self, vfid: u32) -> bool {
        bloom_contains(&self.bits, self.m_bits, self.k, vfid)
    }
}

/// Entry flag: the entry is in use.
pub const VALID: u8 = 1;
/// Entry flag: the flow is paused (its VFID is in the ingress link's filter).
pub const PAUSED: u8 = 2;
/// Entry flag: the flow waits on a resume list.
pub const RESUME_PENDING: u8 = 4;
/// `queue` of an entry with no physical queue.
pub const NO_QUEUE: u16 = u16::MAX;

/// State of one flow at one switch (paper §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowEntry {
    /// Packets of the flow queued in its physical queue.
    pub packets: u32,
    /// Ingress port.
    pub in_port: u16,
    /// Egress port.
    pub egress: u16,
    /// Assigned physical queue (port queue index; under the wide queue set, [`FQ_QUEUE`] + its
    /// index in the set), or [`NO_QUEUE`].
    pub queue: u16,
    /// [`VALID`], [`PAUSED`], [`RESUME_PENDING`].
    pub flags: u8,
}

impl FlowEntry {
    /// Is flag `f` set?
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// The VFID hash table (one bucket of [`WAYS`] entries per VFID, so no key is stored; the
/// entries of a bucket are told apart by their ports) and the associative overflow cache.
/// Entries are named by a stable `u32` id: `bucket · WAYS + way` in the table, `buckets ·
/// WAYS + i` in the cache.
#[derive(Clone, Debug)]
pub struct FlowTable {
    table: Vec<[FlowEntry; WAYS]>,
    cache: Vec<(u32, FlowEntry)>,
    /// Entries in use in the overflow cache.
    pub cache_used: usize,
    /// Entries in use in the table.
    pub table_used: usize,
    /// Highest number of entries in use at once (table + cache).
    pub peak_used: usize,
}

impl FlowTable {
    /// Memory of the flow table one switch allocates under `cfg` (the VFID buckets, one per
    /// [`BfcConfig::vfid_table`] entry and a single one for SFQ, and the overflow cache),
    /// bytes: for the run's memory estimate ([`crate::runguard::scheme_tables`]).
    pub fn bytes_for(cfg: &BfcConfig) -> u64 {
        let buckets = if cfg.mode == BfcMode::Sfq {
            1
        } else {
            cfg.vfid_table as u64
        };
        let entry = std::mem::size_of::<FlowEntry>() as u64;
        buckets.saturating_mul(WAYS as u64 * entry).saturating_add(
            (cfg.overflow_cache as u64)
                .saturating_mul(std::mem::size_of::<(u32, FlowEntry)>() as u64),
        )
    }

    /// Empty table of `buckets` buckets and `cache` overflow entries.
    pub fn new(buckets: u32, cache: usize) -> Self {
        FlowTable {
            table: vec![[FlowEntry::default(); WAYS]; buckets as usize],
            cache: vec![(0, FlowEntry::default()); cache],
            cache_used: 0,
            table_used: 0,
            peak_used: 0,
        }
    }

    fn base(&self) -> u32 {
        (self.table.len() * WAYS) as u32
    }

    /// The entry of (`vfid`, `in_port`, `egress`), if any.
    #[inline]
    pub fn lookup(&self, vfid: u32, in_port: u16, egress: u16) -> Option<u32> {
        let b = &self.table[vfid as usize];
        for (w, e) in b.iter().enumerate() {
            if e.flags & VALID != 0 && e.in_port == in_port && e.egress == egress {
                return Some(vfid * WAYS as u32 + w as u32);
            }
        }
        if self.cache_used > 0 {
            for (i, (v, e)) in self.cache.iter().enumerate() {
                if e.flags & VALID != 0 && *v == vfid && e.in_port == in_port && e.egress == egress
                {
                    return Some(self.base() + i as u32);
                }
            }
        }
        None
    }

    /// Would [`Self::insert`] of `vfid` find room?
    #[inline]
    pub fn has_room(&self, vfid: u32) -> bool {
        self.table[vfid as usize]
            .iter()
            .any(|e| e.flags & VALID == 0)
            || self.cache_used < self.cache.len()
    }

    /// A new entry for (`vfid`, `in_port`, `egress`) in its bucket, else in the overflow cache;
    /// `None` when both are full.
    pub fn insert(&mut self, vfid: u32, in_port: u16, egress: u16) -> Option<u32> {
        let fresh = FlowEntry {
            packets: 0,
            in_port,
            egress,
            queue: NO_QUEUE,
            flags: VALID,
        };
        let b = &mut self.table[vfid as usize];
        if let Some(w) = b.iter().position(|e| e.flags & VALID == 0) {
            b[w] = fresh;
            self.table_used += 1;
            self.peak_used = self.peak_used.max(self.table_used + self.cache_used);
            return Some(vfid * WAYS as u32 + w as u32);
        }
        let base = self.base();
        let i = self.cache.iter().position(|(_, e)| e.flags & VALID == 0)?;
        self.cache[i] = (vfid, fresh);
        self.cache_used += 1;
        self.peak_used = self.peak_used.max(self.table_used + self.cache_used);
        Some(base + i as u32)
    }

    /// Entry `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &FlowEntry {
        let base = self.base();
        if id < base {
            &self.table[(id / WAYS as u32) as usize][(id % WAYS as u32) as usize]
        } else {
            &self.cache[(id - base) as usize].1
        }
    }

    /// Mutable entry `id`.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut FlowEntry {
        let base = self.base();
        if id < base {
            &mut self.table[(id / WAYS as u32) as usize][(id % WAYS as u32) as usize]
        } else {
            &mut self.cache[(id - base) as usize].1
        }
    }

    /// VFID of entry `id`.
    #[inline]
    pub fn vfid_of(&self, id: u32) -> u32 {
        let base = self.base();
        if id < base {
            id / WAYS as u32
        } else {
            self.cache[(id - base) as usize].0
        }
    }

    /// Free entry `id`.
    pub fn remove(&mut self, id: u32) {
        let base = self.base();
        if id < base {
            self.table_used -= 1;
        } else {
            self.cache_used -= 1;
        }
        *self.get_mut(id) = FlowEntry::default();
    }

    /// Paused entries per ingress port (`ports` ports): what the ingress filters must hold.
    pub fn paused_per_in_port(&self, ports: usize) -> Vec<u32> {
        let mut n = vec![0u32; ports];
        let entries = self
            .table
            .iter()
            .flatten()
            .chain(self.cache.iter().map(|(_, e)| e));
        for e in entries {
            if e.flags & VALID != 0
                && e.flags & PAUSED != 0
                && let Some(c) = n.get_mut(e.in_port as usize)
            {
                *c += 1;
            }
        }
        n
    }

    /// Is `id` an overflow-cache entry?
    #[inline]
    pub fn in_cache(&self, id: u32) -> bool {
        id >= self.base()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GBPS, US};

    #[test]
    fn threshold_formula_by_hand() {
        // HRTT 2 µs, τ 1 µs, μ 100 Gb/s: (2 + 1) µs × 100 Gb/s = 300,000 bits = 37,500 B for
        // one active queue; 37,500 / 4 = 9,375 B for four; 37,500 / 32 = 1,171.875 → 1,171 B.
        assert_eq!(threshold_bytes(2 * US, US, 100 * GBPS, 1), 37_500);
        assert_eq!(threshold_bytes(2 * US, US, 100 * GBPS, 4), 9_375);
        assert_eq!(threshold_bytes(2 * US, US, 100 * GBPS, 32), 1_171);
        // N_active = 0 is taken as 1 (the arriving packet's own queue is active).
        assert_eq!(threshold_bytes(2 * US, US, 100 * GBPS, 0), 37_500);
        // 10 µs + 5 µs at 25 Gb/s: 15e-6 × 25e9 = 375,000 bits = 46,875 B; / 3 = 15,625 B.
        assert_eq!(threshold_bytes(10 * US, 5 * US, 25 * GBPS, 3), 15_625);
    }

    #[test]
    fn bloom_has_no_false_negatives_and_the_expected_false_positive_rate() {
        // A multistage filter of m = 1024 bits in k_h = 4 stages of 256 bits: with n VFIDs
        // inserted, a stage bit is set with probability 1 − (1 − 1/256)^n ≈ 1 − e^(−n/256),
        // and a foreign VFID matches when its bit in all 4 stages is set:
        // FP ≈ (1 − e^(−n/256))^4 = (1 − e^(−4n/1024))^4 (the specification's formula).
        for &n in &[32u32, 64, 128, 256] {
            let mut f = CountingBloom::new(1024, 4);
            for v in 0..n {
                f.insert(v * 7 + 1);
            }
            for v in 0..n {
                assert!(f.contains(v * 7 + 1), "false negative for {v}");
            }
            let trials = 400_000u32;
            let fp =
                (0..trials).filter(|t| f.contains(10_000_000 + t)).count() as f64 / trials as f64;
            let expect = (1.0 - (-4.0 * n as f64 / 1024.0).exp()).powi(4);
            assert!(
                fp <= 1.5 * expect && fp >= expect / 1.5,
                "n {n}: FP {fp:.6} vs formula {expect:.6}"
            );
        }
    }

    #[test]
    fn counting_bloom_removes_one_member_and_keeps_the_others() {
        let mut f = CountingBloom::new(1024, 4);
        for v in 0..50 {
            f.insert(v);
        }
        f.insert(7); // a second pause of the same VFID
        for v in 0..50 {
            f.remove(v);
        }
        assert!(f.contains(7), "the second insertion of 7 is still there");
        assert_eq!(f.members, 1);
        f.remove(7);
        assert_eq!(f.bits, [0; 16]);
    }

    #[test]
    fn flow_table_buckets_then_cache_then_full() {
        let mut t = FlowTable::new(16, 2);
        // Five flows of VFID 3 on different ports: four fill the bucket, one goes to the cache.
        let ids: Vec<u32> = (0..5).map(|p| t.insert(3, p, 9).unwrap()).collect();
        assert_eq!(&ids[..4], &[12, 13, 14, 15]);
        assert!(t.in_cache(ids[4]));
        assert_eq!(t.vfid_of(ids[4]), 3);
        assert_eq!(t.lookup(3, 4, 9), Some(ids[4]));
        assert_eq!(t.lookup(3, 5, 9), None);
        assert!(t.insert(3, 5, 9).is_some());
        assert!(!t.has_room(3), "bucket and cache full");
        assert_eq!(t.insert(3, 6, 9), None);
        assert!(t.has_room(4));
        t.remove(ids[1]);
        assert_eq!(t.lookup(3, 1, 9), None);
        assert_eq!(t.insert(3, 6, 9), Some(13));
        assert_eq!((t.table_used, t.cache_used), (4, 2));
        // The peak counts entries in use at once: 6, and it stays after removals.
        assert_eq!(t.peak_used, 6);
        for id in ids {
            t.remove(id);
        }
        assert_eq!(t.peak_used, 6);
    }

    #[test]
    fn vfid_is_stable_and_spread() {
        assert_eq!(vfid(1, 2, 3, 4, 16_384), vfid(1, 2, 3, 4, 16_384));
        let mut seen = std::collections::HashSet::new();
        for s in 0..1000 {
            seen.insert(vfid(s, 5000, 10, 100, 16_384));
        }
        // 1000 balls into 16,384 bins: ≈ 1000 − 1000²/(2·16,384) ≈ 970 distinct.
        assert!(seen.len() > 940, "{}", seen.len());
    }
}
