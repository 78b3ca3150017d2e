//! Partitions of a network for a conservative parallel run, and the profile that measures, on
//! the sequential run, how much such a run could gain.
//!
//! A conservative parallel simulation gives each partition its own event queue and lets them
//! advance together in windows no longer than the *lookahead*: the smallest propagation delay
//! of a link between two partitions, so that nothing one partition does in a window can reach
//! another before the window ends. The time of a window is then that of its busiest partition,
//! plus a barrier. [`Simulator::run_partition_profile`] replays that accounting on a sequential run (it changes
//! nothing in the run): events per partition per window, the sum over windows of the busiest
//! partition's events (the *critical path*), and the packets that cross a cut. From those,
//! `total events / critical-path events` bounds the speed-up any windowed engine can reach on
//! this run with this partitioning, before synchronisation costs; `sfc bench --partitions`
//! prints it with the barrier cost measured on this machine.
//!
//! [`Partitioning::by_tor_groups`] keeps every host with its ToR (the switch its one link
//! leads to), gives each partition a contiguous range of ToRs (balanced by count), and puts each
//! other switch in the partition that holds most of its neighbours (pod aggregation switches
//! follow their pod; spines and cores, whose neighbours are spread evenly, go round-robin).

use super::Simulator;
use crate::engine::Event;
use crate::topology::{NodeKind, TopologySpec};

/// An assignment of the nodes to partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// Partitions asked for.
    pub parts: u32,
    /// Partition of each node (index: node id).
    pub part_of_node: Vec<u32>,
    /// The smallest one-way propagation delay of a link between two partitions, picoseconds
    /// (`None` when no link is cut: every node in one partition).
    pub lookahead_ps: Option<u64>,
    /// Links whose ends are in different partitions.
    pub cut_links: usize,
}

impl Partitioning {
    /// Hosts with their ToR, ToRs in `parts` contiguous ranges, the other switches with the
    /// majority of their neighbours (ties: round-robin by switch). `parts` ≥ 1; a network
    /// with fewer ToRs than `parts` leaves partitions empty.
    pub fn by_tor_groups(topo: &TopologySpec, parts: u32) -> Result<Partitioning, String> {
        if parts == 0 {
            return Err("partitions: at least 1".into());
        }
        let ports = topo.ports();
        let n = topo.num_nodes();
        let mut part = vec![u32::MAX; n];
        let tors = tors(topo);
        let t = tors.len().max(1);
        for (k, &s) in tors.iter().enumerate() {
            part[s as usize] = ((k * parts as usize) / t) as u32;
        }
        // Hosts follow their ToR (a host joined straight to another host: partition 0).
        for (h, kind) in topo.kinds.iter().enumerate() {
            if *kind == NodeKind::Host {
                part[h] = ports[h]
                    .first()
                    .map(|p| part[p.peer as usize])
                    .filter(|&q| q != u32::MAX)
                    .unwrap_or(0);
            }
        }
        // Other switches, in node order: the partition of most of their assigned neighbours.
        let mut rr = 0u32;
        for s in 0..n {
            if part[s] != u32::MAX {
                continue;
            }
            let mut count = vec![0usize; parts as usize];
            for p in &ports[s] {
                let q = part[p.peer as usize];
                if q != u32::MAX {
                    count[q as usize] += 1;
                }
            }
            let best = count.iter().copied().max().unwrap_or(0);
            let winners: Vec<u32> = (0..parts).filter(|&q| count[q as usize] == best).collect();
            part[s] = if best > 0 && winners.len() == 1 {
                winners[0]
            } else {
                let q = winners[rr as usize % winners.len()];
                rr += 1;
                q
            };
        }
        let mut lookahead: Option<u64> = None;
        let mut cut = 0;
        for l in &topo.links {
            if part[l.a as usize] != part[l.b as usize] {
                cut += 1;
                lookahead = Some(lookahead.map_or(l.delay_ps, |d| d.min(l.delay_ps)));
            }
        }
        Ok(Partitioning {
            parts,
            part_of_node: part,
            lookahead_ps: lookahead,
            cut_links: cut,
        })
    }
}

/// The ToRs of `topo`: the switches a host's link leads to, in node order.
pub fn tors(topo: &TopologySpec) -> Vec<u32> {
    let ports = topo.ports();
    let mut tors: Vec<u32> = topo
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == NodeKind::Host)
        .filter_map(|(h, _)| ports[h].first().map(|p| p.peer))
        .filter(|&s| topo.kinds[s as usize] == NodeKind::Switch)
        .collect();
    tors.sort_unstable();
    tors.dedup();
    tors
}

/// What [`Simulator::run_partition_profile`] measured for one partitioning.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PartitionReport {
    /// Partitions.
    pub parts: u32,
    /// Window length (the lookahead), picoseconds; 0 when no link is cut (one window).
    pub lookahead_ps: u64,
    /// Links between partitions.
    pub cut_links: usize,
    /// Events of the run.
    pub events: u64,
    /// Windows with at least one event (each costs a barrier in a windowed run).
    pub windows: u64,
    /// Sum over windows of the busiest partition's events.
    pub critical_events: u64,
    /// Events of each partition over the run.
    pub events_per_part: Vec<u64>,
    /// Packet arrivals whose sender is in another partition (a channel message each).
    pub cross_arrivals: u64,
    /// Packet arrivals.
    pub arrivals: u64,
    /// Events that act on the whole network (link changes, rerouting): a parallel run would
    /// have to stop every partition for them.
    pub global_events: u64,
}

impl PartitionReport {
    /// `events / critical_events`: the speed-up bound of a windowed run with this
    /// partitioning, before barrier and channel costs.
    pub fn speedup_bound(&self) -> f64 {
        self.events as f64 / self.critical_events.max(1) as f64
    }

    /// The modelled speed-up of a windowed run over this partitioning with the costs `c`:
    /// the sequential run's `events · e` over the parallel run's time, taken as
    ///
    /// `critical · e + windows · (2 · b + (parts − 1) · ch) + crossings · x / parts`
    ///
    /// — the busiest partition's events in every window, two barriers per window (the
    /// engine's: one to agree on the next window, one to agree on the stop rule), each
    /// partition taking its `parts − 1` incoming channels once per window, and the packets
    /// crossing a cut copied and adopted, spread evenly over the partitions.
    pub fn modelled_speedup(&self, c: &ModelCosts) -> f64 {
        let seq = self.events as f64 * c.event_ns;
        let per_window =
            2.0 * c.barrier_ns + f64::from(self.parts.saturating_sub(1)) * c.channel_ns;
        let par = self.critical_events as f64 * c.event_ns
            + self.windows as f64 * per_window
            + self.cross_arrivals as f64 * c.crossing_ns / f64::from(self.parts.max(1));
        seq / par
    }
}

/// The costs [`PartitionReport::modelled_speedup`] charges, nanoseconds, as `sfc bench
/// --partitions` measures them on the machine it runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ModelCosts {
    /// One event of the sequential run (its wall time over its events).
    pub event_ns: f64,
    /// One spin barrier among the run's threads: measured among 2 ([`barrier_cost_ns`]) and
    /// extrapolated to more by [`barrier_ns_among`].
    pub barrier_ns: f64,
    /// Taking one incoming channel: an uncontended lock and unlock ([`lock_cost_ns`]).
    pub channel_ns: f64,
    /// One packet crossing a cut: copied into its channel by the sender's partition and
    /// adopted into the receiver's arena and queue. Measured from a run split over two
    /// threads: its wall time beyond what the other terms account for (on the 2-partition
    /// profile's windows), per crossing arrival of the profile and thread.
    pub crossing_ns: f64,
}

/// The cost of a spin barrier among `threads` threads extrapolated from `two_ns`, its cost
/// among two: every arrival increments one shared counter, so the arrivals pass its cache
/// line from core to core one after another and the cost grows with the threads,
/// `two_ns · threads / 2` (the release, one store every spinner sees, is counted in the
/// measured two-thread cost).
pub fn barrier_ns_among(threads: u32, two_ns: f64) -> f64 {
    two_ns * f64::from(threads.max(2)) / 2.0
}

/// The cost of locking and unlocking an uncontended `std::sync::Mutex` on this machine,
/// nanoseconds: the mean of `rounds`.
pub fn lock_cost_ns(rounds: u32) -> f64 {
    let m = std::sync::Mutex::new(0u64);
    let start = std::time::Instant::now();
    for i in 0..rounds {
        *std::hint::black_box(&m).lock().expect("unpoisoned") += u64::from(i);
    }
    std::hint::black_box(&m);
    start.elapsed().as_nanos() as f64 / f64::from(rounds.max(1))
}

/// Per-window event counts of several partitionings at once (one pass over the run).
struct Tally<'a> {
    p: &'a Partitioning,
    window: u64,
    cur: Vec<u64>,
    report: PartitionReport,
}

impl<'a> Tally<'a> {
    fn new(p: &'a Partitioning) -> Tally<'a> {
        Tally {
            p,
            window: u64::MAX,
            cur: vec![0; p.parts as usize],
            report: PartitionReport {
                parts: p.parts,
                lookahead_ps: p.lookahead_ps.unwrap_or(0),
                cut_links: p.cut_links,
                events_per_part: vec![0; p.parts as usize],
                ..Default::default()
            },
        }
    }

    fn close_window(&mut self) {
        let m = self.cur.iter().copied().max().unwrap_or(0);
        if m > 0 {
            self.report.windows += 1;
            self.report.critical_events += m;
        }
        self.cur.iter_mut().for_each(|c| *c = 0);
    }

    #[inline]
    fn record(&mut self, t_ps: u64, node: u32) {
        let w = match self.p.lookahead_ps {
            Some(l) if l > 0 => t_ps / l,
            _ => 0,
        };
        if w != self.window {
            self.close_window();
            self.window = w;
        }
        let q = self.p.part_of_node[node as usize] as usize;
        self.cur[q] += 1;
        self.report.events_per_part[q] += 1;
        self.report.events += 1;
    }
}

impl Simulator {
    /// Run to the end as [`Simulator::run_quiet`] does (the same run, event for event) while
    /// counting, for each partitioning of `parts`, the events per partition in windows of its
    /// lookahead ([`PartitionReport`]). An event belongs to the node it acts on: arrivals,
    /// transmissions, NIC wake-ups and scheme timers to their node; a flow's start,
    /// retransmission and congestion-control timers to its sender; its receiver's CNP timer to
    /// its receiver; link changes and rerouting to none (counted as global, in partition 0).
    pub fn run_partition_profile(&mut self, parts: &[Partitioning]) -> Vec<PartitionReport> {
        let mut tallies: Vec<Tally> = parts.iter().map(Tally::new).collect();
        let ports = self.topo.ports();
        let stop = self.cfg.stop_ps;
        loop {
            if self.traffic_done() {
                break;
            }
            let Some((t, ev)) = self.q.pop_until(stop) else {
                break;
            };
            let (node, global, sender) = match ev {
                Event::Arrive { node, port, .. } => (
                    node,
                    false,
                    ports[node as usize].get(port as usize).map(|p| p.peer),
                ),
                Event::TxDone { node, .. }
                | Event::NicWake { node }
                | Event::Lost { node, .. }
                | Event::SchemeTimer { node, .. } => (node, false, None),
                // (A flow whose description a run streaming its results has retired: node 0.)
                Event::FlowStart { flow } | Event::Rto { flow } | Event::CcTimer { flow, .. } => (
                    self.flows.get(flow as usize).map_or(0, |f| f.src),
                    false,
                    None,
                ),
                Event::CnpDue { flow, .. } => (
                    self.flows.get(flow as usize).map_or(0, |f| f.dst),
                    false,
                    None,
                ),
                Event::LinkChange { .. } | Event::Reroute => (0, true, None),
            };
            for tl in &mut tallies {
                tl.record(t, node);
                if global {
                    tl.report.global_events += 1;
                }
                if let Some(s) = sender {
                    tl.report.arrivals += 1;
                    let pn = &tl.p.part_of_node;
                    if pn[s as usize] != pn[node as usize] {
                        tl.report.cross_arrivals += 1;
                    }
                }
            }
            self.dispatch(ev);
        }
        tallies
            .into_iter()
            .map(|mut t| {
                t.close_window();
                t.report
            })
            .collect()
    }
}

/// The cost of one barrier among `threads` threads on this machine, nanoseconds: the mean of
/// `rounds` rounds of a sense-reversing spin barrier (a shared arrival counter and a round
/// number the threads spin on: what a windowed engine with a core per partition would use; a
/// sleeping barrier costs microseconds). Meaningful on otherwise idle cores only: a spinning
/// thread that loses its core stalls every round.
pub fn barrier_cost_ns(threads: usize, rounds: u32) -> f64 {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
    struct Spin {
        arrived: AtomicUsize,
        round: AtomicU32,
        n: usize,
    }
    impl Spin {
        fn wait(&self) {
            let r = self.round.load(Ordering::Acquire);
            if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
                self.arrived.store(0, Ordering::Relaxed);
                self.round.store(r.wrapping_add(1), Ordering::Release);
            } else {
                while self.round.load(Ordering::Acquire) == r {
                    std::hint::spin_loop();
                }
            }
        }
    }
    let threads = threads.max(1);
    let b = Arc::new(Spin {
        arrived: AtomicUsize::new(0),
        round: AtomicU32::new(0),
        n: threads,
    });
    let start = std::time::Instant::now();
    let handles: Vec<_> = (1..threads)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    b.wait();
                }
            })
        })
        .collect();
    for _ in 0..rounds {
        b.wait();
    }
    for h in handles {
        let _ = h.join();
    }
    start.elapsed().as_nanos() as f64 / rounds.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::shapes;
    use crate::units::{GBPS, NS, US};

    /// Leaf–spine, 4 ToRs × 2 hosts, 2 spines, host links 1 µs, fabric 1.5 µs: two
    /// partitions take ToRs 0–1 and 2–3 with their hosts, the spines (two neighbours in each
    /// partition) go one to each; the cut links are the ToR–spine links that cross (4 of 8),
    /// and the lookahead is the fabric delay.
    #[test]
    fn tor_groups_keep_hosts_with_their_tor() {
        let topo = shapes::leaf_spine(shapes::LeafSpine {
            spines: 2,
            tors: 4,
            hosts_per_tor: 2,
            host_rate_bps: 100 * GBPS,
            host_delay_ps: US,
            fabric_rate_bps: 400 * GBPS,
            fabric_delay_ps: 1500 * NS,
            ..Default::default()
        })
        .unwrap();
        let p = Partitioning::by_tor_groups(&topo, 2).unwrap();
        let ports = topo.ports();
        for h in topo.hosts() {
            let tor = ports[h as usize][0].peer;
            assert_eq!(p.part_of_node[h as usize], p.part_of_node[tor as usize]);
        }
        let tors: Vec<u32> = topo
            .hosts()
            .iter()
            .map(|&h| ports[h as usize][0].peer)
            .collect();
        let parts_of_tors: Vec<u32> = tors.iter().map(|&t| p.part_of_node[t as usize]).collect();
        assert_eq!(parts_of_tors, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        let spines: Vec<u32> = topo
            .switches()
            .into_iter()
            .filter(|s| !tors.contains(s))
            .collect();
        let sp: Vec<u32> = spines.iter().map(|&s| p.part_of_node[s as usize]).collect();
        assert_eq!(sp, vec![0, 1]);
        assert_eq!(p.cut_links, 4);
        assert_eq!(p.lookahead_ps, Some(1500 * NS));
        // One partition: nothing is cut.
        let one = Partitioning::by_tor_groups(&topo, 1).unwrap();
        assert_eq!((one.cut_links, one.lookahead_ps), (0, None));
        assert!(Partitioning::by_tor_groups(&topo, 0).is_err());
    }

    /// Counting by hand: with one partition the critical path is every event (bound 1); the
    /// partition counts add up to the events; a window is closed only when non-empty.
    #[test]
    fn tally_counts_the_busiest_partition_per_window() {
        let p = Partitioning {
            parts: 2,
            part_of_node: vec![0, 1],
            lookahead_ps: Some(10),
            cut_links: 1,
        };
        let mut t = Tally::new(&p);
        // Window 0: node 0 ×3, node 1 ×1; window 2: node 1 ×2.
        for (time, node) in [(0, 0), (1, 0), (5, 1), (9, 0), (25, 1), (29, 1)] {
            t.record(time, node);
        }
        t.close_window();
        let r = t.report;
        assert_eq!((r.events, r.windows, r.critical_events), (6, 2, 5));
        assert_eq!(r.events_per_part, vec![3, 3]);
        assert!((r.speedup_bound() - 6.0 / 5.0).abs() < 1e-12);
        // 1 ns per event, 2 ns per barrier (two per window), 3 ns per channel (one other
        // partition), no crossing: 6 / (5 + 2 · (2 · 2 + 3)) = 6 / 19.
        let c = ModelCosts {
            event_ns: 1.0,
            barrier_ns: 2.0,
            channel_ns: 3.0,
            crossing_ns: 0.0,
        };
        assert!((r.modelled_speedup(&c) - 6.0 / 19.0).abs() < 1e-12);
        // Three crossing arrivals at 4 ns each, over two partitions: 6 ns more.
        let r = PartitionReport {
            cross_arrivals: 3,
            ..r
        };
        let c = ModelCosts {
            crossing_ns: 4.0,
            ..c
        };
        assert!((r.modelled_speedup(&c) - 6.0 / 25.0).abs() < 1e-12);
        // Free synchronisation: the bound.
        let free = ModelCosts {
            event_ns: 1.0,
            ..Default::default()
        };
        assert!((r.modelled_speedup(&free) - r.speedup_bound()).abs() < 1e-12);
    }

    /// A barrier among more threads costs proportionally more than among two.
    #[test]
    fn barrier_cost_grows_with_the_threads() {
        assert_eq!(barrier_ns_among(2, 200.0), 200.0);
        assert_eq!(barrier_ns_among(64, 200.0), 6_400.0);
        assert_eq!(barrier_ns_among(1, 200.0), 200.0);
        let lock = lock_cost_ns(1000);
        assert!(lock > 0.0 && lock < 1e6, "{lock} ns");
    }

    /// The spin barrier releases every thread each round (no deadlock, a finite cost).
    #[test]
    fn spin_barrier_completes() {
        let ns = barrier_cost_ns(2, 1000);
        assert!(ns.is_finite() && ns > 0.0);
        assert!(barrier_cost_ns(1, 10).is_finite());
    }
}
