//! BFC's Ideal-FQ with the paper's per-flow queues (1,000 per port): N long flows into one
//! 100 G port each get a queue of their own and C/N; a short flow arriving behind them is
//! served once per DRR round; the wide queue set serves packets exactly as a port's own
//! queues do; `bfc.queues` ranges per mode.
//!
//! Star numbering (`shapes::star(n, …)`): hosts 0..n, switch n. Host 0 receives; every link
//! is 100 G with 1 µs of propagation delay. A data packet is 1000 B of payload + 48 B of
//! headers = 1048 B on the wire: 83.84 ns at 100 Gb/s, which the HPCC framing truncates to
//! 83 ns (as HPCC-sim).

mod common;

use common::bfc::{PKT, delivered, delivered_until, drr_one_packet, flow_at, scenario};
use sfc::cc::CcConfig;
use sfc::cc::none::{NoneParams, NoneWindow};
use sfc::config::{BufferMode, SchedulerKind};
use sfc::registry::NetConfig;
use sfc::scheme::bfc::{BfcConfig, BfcMode};
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

/// A data packet's serialization at 100 Gb/s, picoseconds: 1048 × 8 / 100 Gb/s = 83.84 ns,
/// truncated.
const SER_PS: u64 = 83_000;

/// Ideal-FQ with `queues` physical queues per port on an unlimited buffer, DRR of one
/// packet (`sched` overrides it); `wide` forces the wide queue set.
fn net(queues: usize, wide: bool, sched: Option<SchedulerKind>) -> NetConfig {
    let b = BfcConfig {
        enabled: true,
        mode: BfcMode::IdealFq,
        physical_queues: queues,
        wide_queue_set: wide,
        ..BfcConfig::default()
    };
    common::bfc::net(
        b,
        BufferMode::Unlimited,
        sched.unwrap_or_else(drr_one_packet),
    )
}

/// No congestion control, a window of one base BDP per flow (the experiments' Ideal-FQ).
fn bdp_window() -> CcConfig {
    CcConfig::None(NoneParams {
        window: NoneWindow::Bdp(1.0),
    })
}

/// N long flows (hosts 1..=N) into host 0 under Ideal-FQ with 1,000 queues per port. Each
/// has a window of one BDP (≈ 51 packets), so after the start every flow keeps ≈ 50
/// packets queued at the bottleneck and its queue never empties: DRR with a one-packet
/// quantum serves every flow one packet per round of N packets, N × 83 ns. Over a window of
/// W a flow thus gets W / (N × 83 ns) packets, ±1: its share of the goodput capacity C =
/// 1000 B per 83 ns is C/N within 1 / (packets per flow).
fn n_long_flows_each_get_c_over_n(n: u32, window_ps: u64, tolerance: f64) {
    let topo = shapes::star(n + 1, 100 * GBPS, US).unwrap();
    let flows: Vec<FlowSpec> = (1..=n).map(|s| flow_at(s, 0, 1 << 40, 0)).collect();
    let mut sim = Simulator::new(topo, net(1000, false, None), bdp_window(), &flows).unwrap();
    let t0 = 1_000 * US;
    let t1 = t0 + window_ps;
    sim.cfg.stop_ps = t0;
    sim.run_quiet();
    let before = delivered(&sim);
    let got = delivered_until(&mut sim, &before, t1);
    let cap = window_ps as f64 / SER_PS as f64 * 1000.0;
    let fair = cap / n as f64;
    let shares: Vec<f64> = got.iter().map(|&g| g as f64 / fair).collect();
    let (lo, hi) = shares
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    eprintln!("N = {n}: shares of C/N in [{lo:.4}, {hi:.4}]");
    for (f, r) in shares.iter().enumerate() {
        assert!(
            (1.0 - tolerance..=1.0 + tolerance).contains(r),
            "N = {n}: flow {f} got {r:.4} of C/N"
        );
    }
    let total: u64 = got.iter().sum();
    assert!(total as f64 >= 0.99 * cap, "N = {n}: utilization");
    // A queue per flow: no flow ever shared one (a flow whose queue ran empty in the start-up
    // may take a queue again); all N were active at once.
    let assigned = sim.scheme_stat("bfc", "assignments");
    eprintln!("N = {n}: {assigned} assignments");
    assert_eq!(sim.scheme_stat("bfc", "collisions"), 0, "N = {n}");
    assert!(assigned >= n as u64, "N = {n}");
    assert_eq!(
        sim.scheme_stat("bfc", "max_active_queues_per_port"),
        n as u64,
        "N = {n}"
    );
    assert_eq!(sim.counters.drops, 0);
}

/// N = 100: a round is 100 × 83 ns = 8.3 µs; over 2 ms a flow gets 241 packets, so ±1
/// packet is ±0.42 %: within 1 %.
#[test]
fn a_hundred_long_flows_each_get_a_hundredth() {
    n_long_flows_each_get_c_over_n(100, 2_000 * US, 0.01);
}

/// N = 1000, the paper's queue count: a round is 83 µs; over 4 ms a flow gets 48.2 packets,
/// so ±1 packet is ±2.1 %: within 3 %.
#[test]
fn a_thousand_long_flows_each_get_a_thousandth() {
    n_long_flows_each_get_c_over_n(1000, 4_000 * US, 0.03);
}

/// A short flow of 10 packets arriving behind N = 200 long flows gets a queue of its own and
/// one packet per DRR round of N + 1 packets: its first packet waits less than a round, the
/// others follow one round apart, so its FCT is the base RTT plus between 9 and 10 rounds —
/// the base RTT plus its 10 packets at its fair share C/(N + 1). With the ports' 61 queues
/// it shares a long flow's queue (FIFO behind ≈ 3 × 50 packets) and takes far longer.
#[test]
fn a_short_flow_behind_long_flows_is_served_once_per_round() {
    let n = 200u32;
    let start = 1_000 * US;
    let fct = |queues: usize| {
        let topo = shapes::star(n + 2, 100 * GBPS, US).unwrap();
        let mut flows: Vec<FlowSpec> = (1..=n).map(|s| flow_at(s, 0, 1 << 40, 0)).collect();
        flows.push(flow_at(n + 1, 0, 10_000, start));
        let mut sim = Simulator::new(topo, net(queues, false, None), bdp_window(), &flows).unwrap();
        sim.cfg.stop_ps = start + 2_000 * US;
        sim.run_quiet();
        sim.finish();
        let f = &sim.flows[n as usize];
        assert!(f.finish_ps > 0, "{queues} queues: the short flow finished");
        (f.finish_ps - start, sim.base_rtt_ps)
    };
    let (wide, base_rtt) = fct(1000);
    let round = (n as u64 + 1) * SER_PS;
    let (lo, hi) = (base_rtt + 9 * round, base_rtt + 10 * round + 2 * SER_PS);
    eprintln!("short-flow FCT {wide} ps: base RTT {base_rtt} ps, round {round} ps");
    assert!(
        (lo..=hi).contains(&wide),
        "FCT {wide} ps not in [{lo}, {hi}]"
    );
    let (narrow, _) = fct(61);
    eprintln!("with 61 queues: {narrow} ps");
    assert!(narrow > 2 * wide, "61 queues: {narrow} ps vs {wide} ps");
}

/// The wide queue set serves packets exactly as a port's own queues do: Ideal-FQ with 61
/// queues in the ports (the narrow layout) and in the wide set give the same run, flow for
/// flow and counter for counter — with more flows than queues (collisions, random picks),
/// a flow table small enough to spill into the overflow queue, for DRR with a quantum below,
/// at and above the packet size and for round robin.
#[test]
fn the_wide_set_serves_exactly_as_the_ports_own_queues() {
    let hosts = 100u32;
    let topo = shapes::star(hosts, 100 * GBPS, US).unwrap();
    let mut rng = 0x5eedu64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let flows: Vec<FlowSpec> = (0..1000)
        .map(|_| {
            let src = 1 + (next() % (hosts as u64 - 1)) as u32;
            let dst = if next() % 4 == 0 {
                (src + 1 + (next() % (hosts as u64 - 1)) as u32) % hosts
            } else {
                0
            };
            let size = 1 + next() % 60_000;
            flow_at(src, dst, size, next() % (300 * US))
        })
        .collect();
    let scheds = [
        SchedulerKind::Drr {
            quantum_bytes: PKT as u32,
        },
        SchedulerKind::Drr { quantum_bytes: 500 },
        SchedulerKind::Drr {
            quantum_bytes: 3000,
        },
        SchedulerKind::RoundRobin,
    ];
    for sched in scheds {
        for small_table in [false, true] {
            let run = |wide: bool| {
                let mut cfg = net(61, wide, Some(sched));
                if small_table {
                    cfg.schemes.bfc.vfid_table = 4;
                    cfg.schemes.bfc.overflow_cache = 2;
                }
                let mut sim = Simulator::new(topo.clone(), cfg, bdp_window(), &flows).unwrap();
                sim.run_quiet();
                sim.finish();
                sim.check_invariants().unwrap();
                let fin: Vec<u64> = sim.flows.iter().map(|f| f.finish_ps).collect();
                let summary = format!("{:?}", sim.scheme_summaries());
                let used = [
                    sim.counters.flows_completed,
                    sim.scheme_stat("bfc", "collisions"),
                    sim.scheme_stat("bfc", "overflow_queue_packets"),
                ];
                (fin, summary, used)
            };
            let (narrow, wide) = (run(false), run(true));
            let [done, collisions, overflow] = narrow.2;
            eprintln!(
                "{sched:?} small table {small_table}: {collisions} collisions, {overflow} overflow packets"
            );
            assert_eq!(done, flows.len() as u64, "{sched:?}: all finished");
            if !small_table {
                assert!(collisions > 0, "{sched:?}: more flows than queues at times");
            }
            assert_eq!(overflow > 0, small_table, "{sched:?}: the overflow queue");
            assert_eq!(
                narrow.0, wide.0,
                "{sched:?} small table {small_table}: FCTs"
            );
            assert_eq!(narrow.1, wide.1, "{sched:?} small table {small_table}");
        }
    }
}

fn with_bfc(mode: &str, queues: usize) -> String {
    format!(
        "name = \"q\"\n[topology]\nkind = \"star\"\nhosts = 4\nhost_rate = \"100Gbps\"\n\
         [buffer]\nmode = \"unlimited\"\n[bfc]\nenabled = true\nmode = \"{mode}\"\n\
         queues = {queues}\n[[traffic]]\nkind = \"long_lived\"\npairs = [[1, 0]]\nsize = \"10KB\"\n"
    )
}

/// `bfc.queues`: Ideal-FQ takes up to 4095 per port (a per-flow queue set of 4096 with the
/// overflow queue); the other modes keep 61 (the port's 64 queues); out-of-range values name
/// the key and the allowed range.
#[test]
fn queue_counts_per_mode() {
    for q in [1, 61, 62, 1000, 4095] {
        let s = scenario(&with_bfc("ideal_fq", q)).unwrap();
        let want = if q > 61 { 4 } else { q + 3 };
        assert_eq!(s.net.queues_per_port, want, "ideal_fq, {q} queues");
    }
    for q in [0, 4096, 100_000] {
        let e = scenario(&with_bfc("ideal_fq", q)).map(|_| ()).unwrap_err();
        assert!(
            e.contains("bfc.queues")
                && e.contains("must be in 1..=4095 under `bfc.mode = \"ideal_fq\"`"),
            "{q}: {e}"
        );
    }
    for mode in ["bfc", "vfid", "sfq"] {
        assert!(scenario(&with_bfc(mode, 61)).is_ok(), "{mode}");
        for q in [0, 62, 1000] {
            let e = scenario(&with_bfc(mode, q)).map(|_| ()).unwrap_err();
            assert!(
                e.contains("bfc.queues") && e.contains("must be in 1..=61"),
                "{mode} {q}: {e}"
            );
        }
    }
    // A wide port's own queue count is fixed.
    let e = scenario(
        &with_bfc("ideal_fq", 1000).replace("[buffer]", "[network]\nqueues_per_port = 8\n[buffer]"),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(
        e.contains("network.queues_per_port") && e.contains("must be 4"),
        "{e}"
    );
}
