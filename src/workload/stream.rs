//! Streaming arrivals: the flows of several traffic generators as one lazy, sorted stream.
//!
//! A [`FlowStream`] yields exactly the list that materializing every generator and merging the
//! lists with [`traffic::merge`] in generator order gives: sorted by `(start_ps, src, dst)`,
//! ties across generators to the earlier one, ties within a generator in its own order. It
//! merges one head flow per [`Source`] in a small binary heap, and the open-loop and repeated
//! incast sources generate their flows on demand ([`traffic::OpenLoopFlows`],
//! [`traffic::IncastFlows`]), so a stream holds O(hosts) flows (plus the flows of the incast
//! events whose sync window is open) instead of all of them.

use super::FlowSpec;
use super::flow_file::FileFlows;
use super::traffic::{self, IncastFlows, OpenLoopFlows};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One generator's flows, in its sorted order.
#[derive(Clone)]
enum Kind {
    /// Lazy open-loop (Poisson or lognormal) arrivals.
    OpenLoop(OpenLoopFlows),
    /// Lazy repeated incast.
    Incast(IncastFlows),
    /// A list already in memory (one-shot patterns, long-lived flows, flow files) and the
    /// position of its next flow: shared, so a clone of the stream (the memory check's
    /// passes) does not copy it.
    List(std::sync::Arc<[FlowSpec]>, usize),
    /// A flow file sorted by start time, read lazily from disk in file order (HPCC flow
    /// files, [`FileFlows`]).
    File(FileFlows),
}

/// The flows of one traffic generator, in `(start_ps, src, dst)` order (ties in the
/// generator's order), optionally with every flow's priority group overridden.
#[derive(Clone)]
pub struct Source {
    kind: Kind,
    /// Priority group given to every flow (`traffic[i].prio`), if any.
    prio: Option<u8>,
}

impl Source {
    /// A lazy open-loop source ([`traffic::open_loop_flows`]).
    pub fn open_loop(flows: OpenLoopFlows) -> Source {
        Source {
            kind: Kind::OpenLoop(flows),
            prio: None,
        }
    }

    /// A lazy repeated-incast source ([`traffic::incast_flows`]).
    pub fn incast(flows: IncastFlows) -> Source {
        Source {
            kind: Kind::Incast(flows),
            prio: None,
        }
    }

    /// The flows of a flow file checked by [`super::flow_file::scan`] and found sorted by
    /// start time, read from disk as they are needed, in file order (which is the order of
    /// [`super::flow_file::parse_with`]'s list for a sorted file). Unlike [`Source::list`] it
    /// does not reorder equal start times by `(src, dst)`: a stream of this source alone
    /// yields the file order.
    pub fn file(flows: FileFlows) -> Source {
        Source {
            kind: Kind::File(flows),
            prio: None,
        }
    }

    /// Why the source ended before its last flow (a flow file's read error), if it did.
    pub fn error(&self) -> Option<&str> {
        match &self.kind {
            Kind::File(f) => f.error(),
            _ => None,
        }
    }

    /// A materialized list, sorted here stably by `(start_ps, src, dst)` (a flow file is sorted
    /// by start time only), as [`traffic::merge`] would.
    pub fn list(mut flows: Vec<FlowSpec>) -> Source {
        traffic::sort_flows(&mut flows);
        Source {
            kind: Kind::List(flows.into(), 0),
            prio: None,
        }
    }

    /// The same flows, each with priority group `prio` (HPCC `pg`; the `prio` key of a
    /// `[[traffic]]` generator).
    pub fn with_prio(self, prio: u8) -> Source {
        Source {
            prio: Some(prio),
            ..self
        }
    }

    /// Flows this source holds and has not yet returned: the pending flows of a lazy source,
    /// the rest of a list.
    pub fn buffered(&self) -> usize {
        match &self.kind {
            Kind::OpenLoop(f) => f.buffered(),
            Kind::Incast(f) => f.buffered(),
            Kind::List(f, i) => f.len() - i,
            // One line buffer, no flow.
            Kind::File(_) => 0,
        }
    }

    /// About how many flows the source yields in all (a list's exact length, a lazy source's
    /// expected count), to size a list that collects them.
    pub fn capacity_hint(&self) -> usize {
        match &self.kind {
            Kind::OpenLoop(f) => f.capacity_hint(),
            Kind::Incast(f) => f.capacity_hint(),
            Kind::List(f, i) => f.len() - i,
            Kind::File(f) => usize::try_from(f.remaining()).unwrap_or(usize::MAX),
        }
    }
}

impl Iterator for Source {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        let mut f = match &mut self.kind {
            Kind::OpenLoop(s) => s.next(),
            Kind::Incast(s) => s.next(),
            Kind::List(f, i) => {
                let next = f.get(*i).cloned();
                *i += next.is_some() as usize;
                next
            }
            Kind::File(f) => f.next(),
        }?;
        if let Some(p) = self.prio {
            f.prio = p;
        }
        Some(f)
    }
}

/// The flows of a list of [`Source`]s (in scenario order) merged lazily into one stream
/// sorted by `(start_ps, src, dst)`; at equal keys the earlier source's flow comes first, and
/// a source's own flows keep their order. Collected, it equals the sources' lists merged one
/// after the other with [`traffic::merge`].
#[derive(Clone)]
pub struct FlowStream {
    sources: Vec<Source>,
    /// The next flow of each source (`None`: the source is exhausted).
    head: Vec<Option<FlowSpec>>,
    /// `(start_ps, src, dst, source index)` of every head.
    heap: BinaryHeap<Reverse<(u64, u32, u32, usize)>>,
    /// Most flows held at once (heads plus the sources' buffered flows).
    peak: usize,
    /// The shape of the whole stream (count, starts, sizes, gaps), when whoever built it
    /// gathered it ([`Self::set_shape`]); dropped when the first flow is taken, since it no
    /// longer describes what is left.
    shape: Option<Box<crate::workload::shape::FlowShape>>,
}

impl FlowStream {
    /// Merge `sources`; their order breaks ties (an earlier source's flow first). Takes the
    /// first flow of each source.
    pub fn new(sources: Vec<Source>) -> FlowStream {
        let mut s = FlowStream {
            head: Vec::with_capacity(sources.len()),
            heap: BinaryHeap::with_capacity(sources.len()),
            sources,
            peak: 0,
            shape: None,
        };
        for i in 0..s.sources.len() {
            let f = s.sources[i].next();
            if let Some(f) = &f {
                s.heap.push(Reverse((f.start_ps, f.src, f.dst, i)));
            }
            s.head.push(f);
        }
        s.note_peak();
        s
    }

    /// Record the [`crate::workload::shape::FlowShape`] of this stream's flows, from its first
    /// (gathered over a clone before any flow was taken); `None` forgets it. The memory check
    /// ([`crate::runguard::check_memory_stream`]) then needs no pass of its own.
    pub fn set_shape(&mut self, shape: Option<crate::workload::shape::FlowShape>) {
        self.shape = shape.map(Box::new);
    }

    /// The shape set by [`Self::set_shape`], while no flow has been taken.
    pub fn shape(&self) -> Option<&crate::workload::shape::FlowShape> {
        self.shape.as_deref()
    }

    /// The next flow, without taking it.
    pub fn peek(&self) -> Option<&FlowSpec> {
        let Reverse((.., i)) = self.heap.peek()?;
        self.head[*i].as_ref()
    }

    /// Flows held right now: the merge's heads plus every source's [`Source::buffered`].
    pub fn buffered(&self) -> usize {
        self.heap.len() + self.sources.iter().map(Source::buffered).sum::<usize>()
    }

    /// The most flows held at once so far ([`FlowStream::buffered`] after construction and
    /// after each flow returned): O(hosts) for open-loop sources, plus the flows of the
    /// incast events within one sync window, plus the not-yet-returned flows of list sources.
    pub fn peak_buffered(&self) -> usize {
        self.peak
    }

    /// About how many flows the stream yields in all (the sum of
    /// [`Source::capacity_hint`]), to size a list that collects it; 0 when unknown.
    pub fn capacity_hint(&self) -> usize {
        self.sources
            .iter()
            .map(Source::capacity_hint)
            .sum::<usize>()
            + self.heap.len()
    }

    /// Why a source ended before its last flow (the first such source's reason): a flow
    /// file that could no longer be read. The stream then ends early.
    pub fn error(&self) -> Option<&str> {
        self.sources.iter().find_map(Source::error)
    }

    /// Collect every flow into a list, sized by [`FlowStream::capacity_hint`].
    pub fn into_vec(self) -> Vec<FlowSpec> {
        let mut v = Vec::with_capacity(self.capacity_hint());
        v.extend(self);
        v
    }

    fn note_peak(&mut self) {
        self.peak = self.peak.max(self.buffered());
    }
}

impl Iterator for FlowStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        self.shape = None;
        let Reverse((.., i)) = self.heap.pop()?;
        let f = self.head[i].take();
        if let Some(g) = self.sources[i].next() {
            self.heap.push(Reverse((g.start_ps, g.src, g.dst, i)));
            self.head[i] = Some(g);
        }
        self.note_peak();
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GBPS, MS, US};
    use crate::workload::cdf::{Interp, SizeCdf, builtin};
    use crate::workload::traffic::{Gaps, IncastTiming, Locality, reference};

    fn hosts(n: u32) -> Vec<u32> {
        (0..n).collect()
    }

    /// Sizes 10–200 B: arrivals a few ns apart, so many round to the same ns.
    fn tiny() -> SizeCdf {
        SizeCdf::from_points(&[(10.0, 0.0), (200.0, 1.0)], Interp::Linear).unwrap()
    }

    /// `a == b` element by element, naming the first difference.
    fn same(a: &[FlowSpec], b: &[FlowSpec], what: &str) {
        if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
            panic!("{what}: flow {i} differs: {:?} vs {:?}", a[i], b[i]);
        }
        assert_eq!(a.len(), b.len(), "{what}: lengths");
    }

    /// Adjacent flows with equal `(start_ps, src)`: ties that only the destination (or the
    /// generation order) decides.
    fn ties(f: &[FlowSpec]) -> usize {
        f.windows(2)
            .filter(|w| (w[0].start_ps, w[0].src) == (w[1].start_ps, w[1].src))
            .count()
    }

    /// The old list of an open-loop generator, checked against the lazy one (streamed alone
    /// and through `open_loop`); returns the list.
    #[allow(clippy::too_many_arguments)]
    fn check_open_loop(
        h: &[u32],
        cdf: &SizeCdf,
        load: f64,
        gaps: Gaps,
        loc: Option<&Locality>,
        start_ps: u64,
        dur_ps: u64,
        seed: u64,
    ) -> Vec<FlowSpec> {
        let rate = 100 * GBPS;
        let old =
            reference::open_loop(h, cdf, load, rate, gaps, loc, start_ps, dur_ps, seed).unwrap();
        let lazy = traffic::open_loop_flows(h, cdf, load, rate, gaps, loc, start_ps, dur_ps, seed)
            .unwrap();
        let streamed: Vec<FlowSpec> = FlowStream::new(vec![Source::open_loop(lazy)]).collect();
        let what = format!("open loop {gaps:?} loc {} seed {seed}", loc.is_some());
        same(&streamed, &old, &what);
        let list =
            traffic::open_loop(h, cdf, load, rate, gaps, loc, start_ps, dur_ps, seed).unwrap();
        same(&list, &old, &what);
        old
    }

    #[test]
    fn open_loop_stream_equals_the_old_list() {
        let hadoop = builtin("hadoop").unwrap();
        let web = builtin("websearch").unwrap();
        let two_sites = Locality {
            site: (0..16).map(|i| i / 8).collect(),
            remote_fraction: 0.3,
        };
        let three_sites = Locality {
            site: (0..12).map(|i| i % 3).collect(),
            remote_fraction: 0.6,
        };
        let mut tied = 0;
        for seed in 1..=4 {
            let f = check_open_loop(
                &hosts(16),
                &hadoop,
                0.5,
                Gaps::Exponential,
                None,
                0,
                20 * MS,
                seed,
            );
            assert!(f.len() > 1_000, "{}", f.len());
            let s = 3 * MS + 17;
            check_open_loop(
                &hosts(8),
                &web,
                0.9,
                Gaps::Exponential,
                None,
                s,
                20 * MS,
                seed,
            );
            let g = Gaps::Lognormal { sigma: 2.0 };
            check_open_loop(&hosts(16), &hadoop, 0.3, g, None, 0, 50 * MS, seed);
            let loc = Some(&two_sites);
            check_open_loop(&hosts(16), &hadoop, 0.5, g, loc, 0, 20 * MS, seed);
            let loc = Some(&three_sites);
            check_open_loop(
                &hosts(12),
                &web,
                0.4,
                Gaps::Exponential,
                loc,
                MS,
                20 * MS,
                seed,
            );
            // Sub-ns gaps: many arrivals of a host round to the same ns, in any destination
            // order (only the per-host tie sort gets these right).
            let g = Gaps::Lognormal { sigma: 4.0 };
            let f = check_open_loop(&hosts(6), &hadoop, 0.8, g, None, 0, 50 * MS, seed);
            tied += ties(&f);
            // Two hosts: every flow of a host goes to the other, so equal start times are
            // equal keys, and only the generation order (visible in the sizes) orders them.
            let f = check_open_loop(
                &hosts(2),
                &tiny(),
                1.0,
                Gaps::Exponential,
                None,
                0,
                20 * US,
                seed,
            );
            tied += ties(&f);
            let f = check_open_loop(
                &[7, 3, 11],
                &tiny(),
                1.0,
                Gaps::Exponential,
                None,
                0,
                20 * US,
                seed,
            );
            tied += ties(&f);
        }
        assert!(tied > 1_000, "only {tied} ties: the tie cases test nothing");
    }

    /// The old list of a repeated incast, checked against the lazy one; returns the list.
    #[allow(clippy::too_many_arguments)]
    fn check_incast(
        h: &[u32],
        receivers: &[u32],
        degree: usize,
        size: u64,
        timing: IncastTiming,
        repeat: bool,
        window_ps: u64,
        start_ps: u64,
        dur_ps: u64,
        seed: u64,
    ) -> Vec<FlowSpec> {
        let args = (
            h, receivers, degree, size, timing, repeat, window_ps, start_ps, dur_ps, seed,
        );
        let old = reference::incast_with(
            h, receivers, degree, size, timing, repeat, window_ps, start_ps, dur_ps, seed,
        )
        .unwrap();
        let lazy = traffic::incast_flows(
            h, receivers, degree, size, timing, repeat, window_ps, start_ps, dur_ps, seed,
        )
        .unwrap();
        let streamed: Vec<FlowSpec> = FlowStream::new(vec![Source::incast(lazy)]).collect();
        let what = format!("incast {args:?}");
        same(&streamed, &old, &what);
        let list = traffic::incast_with(
            h, receivers, degree, size, timing, repeat, window_ps, start_ps, dur_ps, seed,
        )
        .unwrap();
        same(&list, &old, &what);
        old
    }

    #[test]
    fn incast_stream_equals_the_old_list() {
        let h = hosts(8);
        let poisson = |load| IncastTiming::Poisson {
            load,
            host_rate_bps: 100 * GBPS,
        };
        let periodic = |period_ps| IncastTiming::Periodic { period_ps };
        for seed in 1..=4 {
            // Poisson events, no window / a window spanning ~60 events.
            let f = check_incast(&h, &[], 3, 64_000, poisson(0.2), false, 0, 0, 5 * MS, seed);
            assert!(f.len() > 1_000, "{}", f.len());
            check_incast(&h, &[], 4, 1000, poisson(0.5), false, 5 * US, 7, MS, seed);
            check_incast(&h, &[2, 5], 6, 1000, poisson(0.5), false, US, 0, MS, seed);
            // A receiver outside `hosts`: every host sends.
            check_incast(&h, &[9], 8, 1000, poisson(0.3), false, 2 * US, 0, MS, seed);
            // Periodic, with and without a window longer than the period, and fan-in above
            // the host count (repeated senders).
            check_incast(
                &h,
                &[],
                5,
                4000,
                periodic(10 * US),
                false,
                0,
                MS,
                2 * MS,
                seed,
            );
            check_incast(&h, &[], 5, 4000, periodic(US), false, 3 * US, 0, MS, seed);
            check_incast(&h, &[], 20, 4000, periodic(US), true, 0, 0, MS, seed);
            check_incast(&h, &[], 20, 4000, periodic(US), true, 3 * US, 0, MS, seed);
            check_incast(
                &h,
                &[1, 2],
                19,
                4000,
                poisson(0.5),
                true,
                2 * US,
                0,
                MS,
                seed,
            );
            // Flows of different events at the same ps: events 3 ps apart, jitter up to 5 ps;
            // Poisson events ~10 ps apart, several rounding to the same ps.
            let f = check_incast(&h, &[], 3, 1, periodic(3), false, 5, 0, 30_000, seed);
            assert!(ties(&f) > 100, "{}", ties(&f));
            let f = check_incast(&h, &[], 1, 1, poisson(1.0), false, 20, 0, 100_000, seed);
            assert!(ties(&f) > 10, "{}", ties(&f));
            check_incast(&h, &[], 7, 1, poisson(1.0), false, 0, 0, 100_000, seed);
        }
    }

    /// Reference: every list merged in order with [`traffic::merge`], as the scenario did.
    fn merged(lists: &[Vec<FlowSpec>]) -> Vec<FlowSpec> {
        lists
            .iter()
            .fold(Vec::new(), |m, l| traffic::merge(m, l.clone()))
    }

    #[test]
    fn mixed_generators_equal_the_old_merge() {
        let h = hosts(8);
        let cdf = builtin("websearch").unwrap();
        for seed in 1..=3 {
            // Periodic incasts (no jitter) at 0, 10, 20, … µs; an all-to-all at 20 µs and a
            // one-shot incast at 30 µs tie with them on (start, src, dst); long-lived flows at
            // 10 µs; a "flow file" sorted by start time only.
            let per = IncastTiming::Periodic { period_ps: 10 * US };
            let inc = || {
                traffic::incast_flows(&h, &[], 4, 5000, per, false, 0, 0, 100 * US, seed).unwrap()
            };
            let inc_old =
                reference::incast_with(&h, &[], 4, 5000, per, false, 0, 0, 100 * US, seed).unwrap();
            let g = Gaps::Exponential;
            let ol = || {
                traffic::open_loop_flows(&h, &cdf, 0.5, 100 * GBPS, g, None, 0, 100 * US, seed)
                    .unwrap()
            };
            let ol_old =
                reference::open_loop(&h, &cdf, 0.5, 100 * GBPS, g, None, 0, 100 * US, seed)
                    .unwrap();
            let a2a = traffic::all_to_all(&h, 777, 20 * US).unwrap();
            let once =
                traffic::incast_once(&[1, 2, 3, 4, 5, 6, 7], 0, 999, 30 * US, 0, seed).unwrap();
            let ll = traffic::long_lived(&[(5, 1), (1, 5), (0, 3)], 10 * US, 1 << 40).unwrap();
            let mut file: Vec<FlowSpec> = (0..8u32)
                .rev()
                .map(|s| FlowSpec::background(s, (s + 1) % 8, 100 + s as u64, 20 * US))
                .collect();
            file.push(FlowSpec::background(0, 1, 55, 0));
            file.sort_by_key(|f| f.start_ps);
            // Scenario order 1: incast first, then the others.
            let want = merged(&[
                inc_old.clone(),
                a2a.clone(),
                ol_old.clone(),
                once.clone(),
                ll.clone(),
                file.clone(),
            ]);
            let s = FlowStream::new(vec![
                Source::incast(inc()),
                Source::list(a2a.clone()),
                Source::open_loop(ol()),
                Source::list(once.clone()),
                Source::list(ll.clone()),
                Source::list(file.clone()),
            ]);
            let got: Vec<FlowSpec> = s.collect();
            same(&got, &want, "incast first");
            // The ties are real: some all-to-all flow equals an incast flow's key.
            let key = |f: &FlowSpec| (f.start_ps, f.src, f.dst);
            let inc_keys: std::collections::HashSet<_> = inc_old.iter().map(key).collect();
            assert!(a2a.iter().any(|f| inc_keys.contains(&key(f))));
            // Scenario order 2: the reverse, and a priority override on the incast.
            let mut inc_prio = inc_old.clone();
            for f in &mut inc_prio {
                f.prio = 5;
            }
            let want = merged(&[file.clone(), ll, once, ol_old, a2a.clone(), inc_prio]);
            let s = FlowStream::new(vec![
                Source::list(file.clone()),
                Source::list(
                    traffic::long_lived(&[(5, 1), (1, 5), (0, 3)], 10 * US, 1 << 40).unwrap(),
                ),
                Source::list(
                    traffic::incast_once(&[1, 2, 3, 4, 5, 6, 7], 0, 999, 30 * US, 0, seed).unwrap(),
                ),
                Source::open_loop(ol()),
                Source::list(a2a),
                Source::incast(inc()).with_prio(5),
            ]);
            let got = s.into_vec();
            same(&got, &want, "reversed");
        }
        // No sources: an empty stream.
        let mut s = FlowStream::new(Vec::new());
        assert!(s.peek().is_none() && s.next().is_none());
    }

    /// Open-loop arguments: hosts, load, rate (bit/s), gaps, locality, duration (ps).
    type OpenCase = (Vec<u32>, f64, u64, Gaps, Option<Locality>, u64);
    /// Incast arguments: hosts, receivers, degree, size (bytes), timing, repeat, duration (ps).
    type IncastCase = (Vec<u32>, Vec<u32>, usize, u64, IncastTiming, bool, u64);

    #[test]
    fn lazy_generators_refuse_what_the_old_ones_refuse() {
        let cdf = builtin("hadoop").unwrap();
        let r = 100 * GBPS;
        let e = Gaps::Exponential;
        let loc = |site: Vec<u32>, p: f64| Locality {
            site,
            remote_fraction: p,
        };
        let open: Vec<OpenCase> = vec![
            (hosts(1), 0.5, r, e, None, MS),
            (vec![1, 2, 1], 0.5, r, e, None, MS),
            (hosts(4), 0.0, r, e, None, MS),
            (hosts(4), f64::NAN, r, e, None, MS),
            (hosts(4), 0.5, 0, e, None, MS),
            (hosts(4), 0.5, r, Gaps::Lognormal { sigma: -1.0 }, None, MS),
            (hosts(4), 0.5, r, e, Some(loc(vec![0, 0, 1], 0.2)), MS),
            (hosts(4), 0.5, r, e, Some(loc(vec![0, 0, 1, 1], 1.5)), MS),
            (hosts(4), 0.5, r, e, Some(loc(vec![0, 0, 0, 0], 0.2)), MS),
            (hosts(4), 0.5, r, e, Some(loc(vec![0, 1, 1, 1], 0.2)), MS),
            (hosts(64), 1.0, r, e, None, u64::MAX / 2),
        ];
        for (h, load, rate, gaps, l, dur) in open {
            let old = reference::open_loop(&h, &cdf, load, rate, gaps, l.as_ref(), 0, dur, 1);
            let new = traffic::open_loop_flows(&h, &cdf, load, rate, gaps, l.as_ref(), 0, dur, 1);
            let (old, new) = (old.unwrap_err(), new.err().unwrap());
            assert_eq!(new, old);
            assert_eq!(
                traffic::open_loop(&h, &cdf, load, rate, gaps, l.as_ref(), 0, dur, 1).unwrap_err(),
                old
            );
        }
        let p = |load| IncastTiming::Poisson {
            load,
            host_rate_bps: r,
        };
        let per = |period_ps| IncastTiming::Periodic { period_ps };
        let bad: Vec<IncastCase> = vec![
            (hosts(1), vec![], 1, 1000, p(0.1), false, MS),
            (hosts(4), vec![], 4, 1000, p(0.1), false, MS),
            (hosts(4), vec![], 0, 1000, p(0.1), false, MS),
            (hosts(4), vec![], 3, 0, p(0.1), false, MS),
            (hosts(4), vec![2, 2], 3, 10, p(0.1), false, MS),
            (hosts(4), vec![], 3, 10, p(1.5), false, MS),
            (
                hosts(4),
                vec![],
                3,
                10,
                IncastTiming::Poisson {
                    load: 0.1,
                    host_rate_bps: 0,
                },
                false,
                MS,
            ),
            (hosts(4), vec![], 3, 10, per(0), false, MS),
            (hosts(4), vec![], 3, 10, per(1), false, u64::MAX / 2),
            (hosts(4), vec![], 3, 1, p(1.0), false, u64::MAX / 2),
        ];
        for (h, recv, deg, size, t, rep, dur) in bad {
            let old =
                reference::incast_with(&h, &recv, deg, size, t, rep, 0, 0, dur, 1).unwrap_err();
            let new = traffic::incast_flows(&h, &recv, deg, size, t, rep, 0, 0, dur, 1)
                .err()
                .unwrap();
            assert_eq!(new, old);
            assert_eq!(
                traffic::incast_with(&h, &recv, deg, size, t, rep, 0, 0, dur, 1).unwrap_err(),
                old
            );
        }
    }

    #[test]
    fn long_open_loop_stream_holds_o_hosts_flows() {
        // 64 hosts, ~200 K flows: the stream never holds more than a few flows per host.
        let h = hosts(64);
        let cdf = builtin("websearch").unwrap();
        for gaps in [Gaps::Exponential, Gaps::Lognormal { sigma: 2.0 }] {
            let lazy =
                traffic::open_loop_flows(&h, &cdf, 0.6, 100 * GBPS, gaps, None, 0, 800 * MS, 5)
                    .unwrap();
            let mut s = FlowStream::new(vec![Source::open_loop(lazy)]);
            let mut n = 0usize;
            let mut last = (0, 0, 0);
            for f in s.by_ref() {
                let k = (f.start_ps, f.src, f.dst);
                assert!(k >= last, "unsorted at flow {n}");
                last = k;
                n += 1;
            }
            assert!(n > 150_000, "{n} flows");
            // One head in the merge, and per host its next flow plus the one drawn after it.
            assert!(
                s.peak_buffered() <= 2 * 64 + 1 + 8,
                "{gaps:?}: peak {}",
                s.peak_buffered()
            );
            assert!(s.peak_buffered() >= 64, "{}", s.peak_buffered());
            assert_eq!(s.buffered(), 0);
        }
    }

    #[test]
    fn long_incast_stream_holds_one_window_of_flows() {
        // Periodic incast: events every 2 µs, jitter up to 7 µs, 16 flows each: at most the
        // flows of the events within one window of the next (⌈7/2⌉ + 1 events) are held.
        let h = hosts(32);
        let (deg, period, win) = (16usize, 2 * US, 7 * US);
        let per = IncastTiming::Periodic { period_ps: period };
        let lazy =
            traffic::incast_flows(&h, &[], deg, 1000, per, false, win, 0, 25 * MS, 3).unwrap();
        let mut s = FlowStream::new(vec![Source::incast(lazy)]);
        let n = s.by_ref().count();
        assert_eq!(n, 12_500 * deg);
        let bound = deg * (win.div_ceil(period) as usize + 1) + 1;
        assert!(
            s.peak_buffered() <= bound,
            "peak {} > {bound}",
            s.peak_buffered()
        );
        assert!(s.peak_buffered() >= deg, "{}", s.peak_buffered());
        // Mixed with open-loop traffic on the same hosts: the bounds add up.
        let cdf = builtin("websearch").unwrap();
        let g = Gaps::Exponential;
        let ol =
            traffic::open_loop_flows(&h, &cdf, 0.5, 100 * GBPS, g, None, 0, 25 * MS, 3).unwrap();
        let lazy =
            traffic::incast_flows(&h, &[], deg, 1000, per, false, win, 0, 25 * MS, 3).unwrap();
        let mut s = FlowStream::new(vec![Source::open_loop(ol), Source::incast(lazy)]);
        let n = s.by_ref().count();
        assert!(n > 12_500 * deg + 1_000, "{n}");
        let bound = bound + 2 * 32 + 8 + 1;
        assert!(
            s.peak_buffered() <= bound,
            "peak {} > {bound}",
            s.peak_buffered()
        );
    }

    #[test]
    fn scenario_stream_equals_the_scenario_list() {
        let text = r#"
name = "s"
seed = 7
[topology]
kind = "star"
hosts = 8
[[traffic]]
kind = "incast"
degree = 4
size = "4KB"
period = "10us"
duration = "200us"
[[traffic]]
kind = "all_to_all"
size = "2KB"
start = "20us"
prio = 2
[[traffic]]
kind = "lognormal"
cdf = "websearch"
load = 0.5
duration = "200us"
[[traffic]]
kind = "incast"
degree = 3
size = "1KB"
load = 0.3
sync_window = "3us"
duration = "200us"
"#;
        let dir = std::path::Path::new(".");
        let sc = crate::scenario::from_str(text, "t.toml", dir, &[]).unwrap();
        let (sc2, st) = crate::scenario::from_str_streaming(text, "t.toml", dir, &[]).unwrap();
        assert!(sc2.flows.is_empty());
        assert!(sc.flows.len() > 500, "{}", sc.flows.len());
        assert!(sc.flows.iter().any(|f| f.prio == 2));
        same(&st.collect::<Vec<_>>(), &sc.flows, "scenario");
        // The same workload checks: a workload entirely after `stop`, or none at all, is the
        // same error in both.
        let late = text.replacen("seed = 7", "seed = 7\nstop = \"1us\"", 1);
        let late = late.replace(
            "period = \"10us\"\n",
            "period = \"10us\"\nstart = \"2us\"\n",
        );
        let late = late.replace(
            "sync_window = \"3us\"\n",
            "sync_window = \"3us\"\nstart = \"2us\"\n",
        );
        let late = late.replacen("load = 0.5\n", "load = 0.5\nstart = \"2us\"\n", 1);
        let none = "name = \"s\"\n[topology]\nkind = \"star\"\nhosts = 3\n[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.01\nduration = \"1ns\"\n";
        for (t, want) in [
            (late.as_str(), "every flow starts at or after the stop time"),
            (none, "produced no flows"),
        ] {
            let a = crate::scenario::from_str(t, "t.toml", dir, &[])
                .err()
                .unwrap();
            let b = crate::scenario::from_str_streaming(t, "t.toml", dir, &[])
                .err()
                .unwrap();
            assert!(a.contains(want), "{a}");
            assert_eq!(a, b);
        }
        // With a `stop` inside the traffic: the same warning as the list's, from the one pass
        // that also gathers the stream's shape, which the memory check takes in place of a
        // pass of its own (the same estimate). Without `stop`, no shape.
        let (_, unstopped) = crate::scenario::from_str_streaming(text, "t.toml", dir, &[]).unwrap();
        assert!(unstopped.shape().is_none());
        let stopped = text.replacen("seed = 7", "seed = 7\nstop = \"100us\"", 1);
        let sc = crate::scenario::from_str(&stopped, "t.toml", dir, &[]).unwrap();
        let (sc2, st) = crate::scenario::from_str_streaming(&stopped, "t.toml", dir, &[]).unwrap();
        assert_eq!(sc.warnings, sc2.warnings);
        assert!(
            sc2.warnings
                .iter()
                .any(|w| w.contains("flows start at or after the stop time 100.00us")),
            "{:?}",
            sc2.warnings
        );
        let mut want = crate::workload::shape::FlowShape::with_stop(100 * crate::units::US);
        for f in st.clone() {
            want.add(f.start_ps, f.size_bytes);
        }
        assert!(want.flows_after_stop() > 0 && want.flows_after_stop() < want.flows());
        assert_eq!(st.shape(), Some(&want));
        let mut bare = st.clone();
        bare.set_shape(None);
        for streamed in [false, true] {
            let check = |s: &FlowStream| {
                crate::runguard::check_memory_stream(&sc2.topo, &sc2.net, s, streamed).unwrap()
            };
            assert_eq!(check(&st), check(&bare));
        }
        // Taking a flow forgets the shape (it described the whole stream).
        let mut taken = st.clone();
        taken.next();
        assert!(taken.shape().is_none());
    }
}
