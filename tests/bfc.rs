//! BFC end to end: N long flows into one 100 G port share it fairly with no drop,
//! no PFC, full utilization and per-queue occupancy near one hop's BDP; a first packet
//! overtakes paused bulk traffic; queue assignment counters.
//!
//! Star numbering (`shapes::star(n, …)`): hosts 0..n, switch n. Host 0 receives; every link
//! is 100 G with 1 µs of propagation delay, so the one-hop RTT is 2 µs, τ = 1 µs and
//! 1-hop BDP = 100 Gb/s × 2 µs = 25,000 B.

mod common;

use common::bfc::{PKT, delivered, delivered_until, drr_one_packet, flow_at, scenario};
use sfc::cc::CcConfig;
use sfc::config::BufferMode;
use sfc::registry::NetConfig;
use sfc::scheme::bfc::switch::BfcSwitch;
use sfc::scheme::bfc::{BfcConfig, BfcMode};
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

/// BFC in `mode` on a lossless (PFC) 12 MB buffer: PFC stays as the backstop, and must never
/// fire.
fn net(mode: BfcMode) -> NetConfig {
    let b = BfcConfig {
        enabled: true,
        mode,
        ..BfcConfig::default()
    };
    common::bfc::net(b, BufferMode::Lossless, drr_one_packet())
}

fn bfc_of(sim: &Simulator) -> &BfcSwitch {
    sim.switches[0].schemes.bfc.as_ref().expect("BFC runs")
}

/// N senders (hosts 1..=N), one endless flow each into host 0; measure from 200 µs to
/// 1,200 µs.
fn n_long_flows(n: u32) {
    let topo = shapes::star(n + 1, 100 * GBPS, US).unwrap();
    let flows: Vec<FlowSpec> = (1..=n).map(|s| flow_at(s, 0, 1 << 30, 0)).collect();
    let mut sim =
        Simulator::new(topo, net(BfcMode::Bfc), CcConfig::none_unlimited(), &flows).unwrap();
    let (t0, t1) = (200 * US, 1_200 * US);
    sim.cfg.stop_ps = t0;
    sim.run_quiet();
    let before = delivered(&sim);
    // The occupancy bound is a steady-state one: forget the start-up transient (every flow
    // starts at line rate at once; with N = 64, 6.4 Tb/s arrive for one pause delay).
    let b = sim.switches[0].schemes.bfc.as_mut().unwrap();
    let startup_max = b.max_occupancy_bytes;
    b.max_occupancy_bytes = 0;
    b.occupancy_hist.iter_mut().for_each(|h| *h = 0);
    let got = delivered_until(&mut sim, &before, t1);
    // Goodput capacity of the bottleneck: 100 Gb/s × 1000/1048 payload share over 1 ms =
    // 11,927,480 B; a fair share is that over N.
    let cap = 100e9 / 8.0 * (t1 - t0) as f64 / 1e12 * 1000.0 / PKT as f64;
    let total: u64 = got.iter().sum();
    let util = total as f64 / cap;
    assert_eq!(sim.counters.drops, 0, "N = {n}: drops");
    assert_eq!(sim.scheme_stat("pfc", "pauses"), 0, "N = {n}: PFC fired");
    assert!(util >= 0.98, "N = {n}: utilization {util:.4}");
    let fair = cap / n as f64;
    let shares: Vec<f64> = got.iter().map(|&g| g as f64 / fair).collect();
    eprintln!(
        "N = {n}: shares min {:.3} max {:.3} util {util:.4}",
        shares.iter().cloned().fold(f64::MAX, f64::min),
        shares.iter().cloned().fold(0.0, f64::max)
    );
    // Jain's index of the shares.
    let jain = shares.iter().sum::<f64>().powi(2)
        / (shares.len() as f64 * shares.iter().map(|x| x * x).sum::<f64>());
    eprintln!("N = {n}: Jain's index {jain:.4}");
    if n <= 32 {
        // A physical queue per flow: DRR gives each exactly C/N.
        for (f, r) in shares.iter().enumerate() {
            assert!(
                (0.95..=1.05).contains(r),
                "N = {n}: flow {f} got {r:.4} of its fair share"
            );
        }
    } else {
        // More flows than the 32 physical queues: flows share queues (FIFO inside), so the
        // per-flow shares spread out; a ±5 % fairness bound is NOT met here (see the module
        // docs and the book's model chapter, "BFC"); only a loose fairness floor is checked.
        assert!(jain >= 0.75, "N = {n}: Jain's index {jain:.4}");
    }
    eprintln!("N = {n}: start-up max queue {startup_max} B");
    // Per-queue occupancy (after 200 µs): at most Th + what arrives during one pause delay, bounded by
    // 2 × 1-hop BDP + 2 packets = 2 × 25,000 + 2 × 1,048 = 52,096 B.
    let b = bfc_of(&sim);
    eprintln!("N = {n}: steady max queue {} B", b.max_occupancy_bytes);
    // The paper's own occupancy claim (§4.3, Fig. 10) is on the P99 of the per-physical-queue
    // occupancy: "about twice the per-hop BDP, regardless of the number of concurrent flows"
    // (depth after each enqueue, 256 B bins, upper bin edge: conservative).
    let p99 = BfcSwitch::occupancy_quantile(&b.occupancy_hist, 0.99);
    eprintln!("N = {n}: steady P99 queue {p99} B");
    if n <= 32 {
        assert!(
            p99 <= 2 * 25_000 + 2 * PKT,
            "N = {n}: P99 physical-queue occupancy {p99} B"
        );
    }
    // KNOWN GAP (N > 32): the P99 exceeds it too (experiment bfc-fig10: ≈ 190 KB at 64
    // flows, ≈ 480 KB at 256); see the book's model chapter, "BFC". Not asserted: a known deviation.
    if n <= 32 {
        assert!(
            b.max_occupancy_bytes <= 2 * 25_000 + 2 * PKT,
            "N = {n}: a physical queue reached {} B",
            b.max_occupancy_bytes
        );
    } else {
        // KNOWN GAP (N = 64 > 32 queues): a flow resumed with nothing queued lands on a random
        // occupied queue and brings a full pause delay of line-rate data (≈ 37.5 KB) into a
        // queue that drains at C/32; several such landings stack up (measured ≈ 270 KB).
        // Only the shared buffer's safety is checked here.
        assert!(
            b.max_occupancy_bytes <= 1_000_000,
            "N = {n}: {} B",
            b.max_occupancy_bytes
        );
    }
    assert!(b.c.flows_paused > 0, "N = {n}: BFC never paused");
    if n <= 32 {
        assert_eq!(b.c.collisions, 0, "N = {n} ≤ 32 queues: no collision");
    }
    eprintln!(
        "N = {n}: util {util:.4}, max queue {} B, pauses {}, resumes {}",
        b.max_occupancy_bytes, b.c.flows_paused, b.c.flows_resumed
    );
}

#[test]
fn four_long_flows_share_one_port() {
    n_long_flows(4);
}

#[test]
fn sixteen_long_flows_share_one_port() {
    n_long_flows(16);
}

#[test]
fn sixty_four_long_flows_share_one_port() {
    n_long_flows(64);
}

/// The pause overshoot of flows that share a physical queue (the mechanism behind the BFC
/// paper's Fig. 10 gap, worked by hand). k long flows from hosts 1..=k into host 0 through
/// one switch with a single physical queue per port, all starting at t = 0 at line rate. The
/// queue is the port's only active one, so Th = (HRTT + τ)·μ / 1 = 3 µs × 100 Gb/s =
/// 37,500 B. It grows at (k − 1)·μ from the first arrival (1 µs + one serialization) and
/// crosses Th at t_c; every flow is paused at its next arrival, the pause leaves at the
/// ingress's next τ tick (≤ τ later), reaches the host one propagation delay later, and the
/// packets already sent arrive one more propagation delay later: the flows keep arriving for
/// between HRTT and HRTT + τ (plus a packet's serialization) after t_c. So the queue peaks
/// at Th + (k − 1)·μ·[HRTT, HRTT + τ] (+ k packets): the paper's own per-flow worst case,
/// "can exceed Th … by (HRTT + τ)·μ" (§3.4), once per flow that arrives at line rate. With
/// k = 2 that is 62.5–77.1 KB, above 2 × one-hop BDP = 50 KB, and it grows linearly with
/// the flows per queue — as the measured P99 of `bfc-fig10` does above 32 flows (32 queues).
#[test]
fn flows_sharing_a_physical_queue_each_overshoot_the_pause_threshold() {
    const TH: u64 = 37_500;
    const HRTT_BYTES: u64 = 25_000; // μ × HRTT = 100 Gb/s × 2 µs
    const TAU_BYTES: u64 = 12_500; // μ × τ
    let mut peaks = Vec::new();
    for k in [2u32, 4, 8] {
        let topo = shapes::star(k + 1, 100 * GBPS, US).unwrap();
        let flows: Vec<FlowSpec> = (1..=k).map(|s| flow_at(s, 0, 1 << 30, 0)).collect();
        let b = BfcConfig {
            enabled: true,
            physical_queues: 1,
            ..BfcConfig::default()
        };
        let cfg = common::bfc::net(b, BufferMode::Lossless, drr_one_packet());
        let mut sim = Simulator::new(topo, cfg, CcConfig::none_unlimited(), &flows).unwrap();
        // The start-up transient: the first pauses act by ≈ 7 µs (k = 2).
        sim.cfg.stop_ps = 20 * US;
        sim.run_quiet();
        let peak = bfc_of(&sim).max_occupancy_bytes;
        let extra = (k - 1) as u64;
        let (lo, hi) = (
            TH + extra * HRTT_BYTES,
            TH + extra * (HRTT_BYTES + TAU_BYTES) + k as u64 * PKT,
        );
        eprintln!("k = {k}: peak {peak} B, by hand {lo}..={hi} B");
        assert!((lo..=hi).contains(&peak), "k = {k}: peak {peak} B");
        assert!(
            peak > 2 * 25_000 + 2 * PKT,
            "k = {k}: above 2 × one-hop BDP"
        );
        assert_eq!(sim.counters.drops, 0);
        peaks.push(peak);
    }
    // Linear in the flows per queue: each extra flow adds between HRTT·μ and (HRTT + τ)·μ.
    assert!(peaks[1] - peaks[0] >= 2 * HRTT_BYTES && peaks[2] - peaks[1] >= 4 * HRTT_BYTES);
}

/// Hosts 1 and 2 send 20 MB each to host 0 (their flows are paused and resumed all along);
/// at 300 µs host 1 sends a one-packet flow to host 0. It is the first packet of its flow:
/// the NIC sends it at once (its own per-flow queue, not paused) and the switch puts it in
/// the strict high-priority queue, so it completes in the base RTT (4 µs of propagation plus
/// the serialization of the data packet at two hops and of the ACK at two hops) plus at most
/// one packet already on the wire at each of the two data hops: 2 × 83.84 ns.
#[test]
fn first_packet_overtakes_paused_bulk_flows() {
    let topo = shapes::star(3, 100 * GBPS, US).unwrap();
    let small = 300 * US;
    let flows = vec![
        flow_at(1, 0, 20_000_000, 0),
        flow_at(2, 0, 20_000_000, 0),
        flow_at(1, 0, 1000, small),
    ];
    let mut sim =
        Simulator::new(topo, net(BfcMode::Bfc), CcConfig::none_unlimited(), &flows).unwrap();
    sim.cfg.stop_ps = 5_000 * US;
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    let fct = sim.flows[2].finish_ps - small;
    let ser = 83_840; // 1048 B at 100 Gb/s
    let bound = sim.base_rtt_ps + 2 * ser;
    eprintln!("one-packet FCT {fct} ps, base RTT {} ps", sim.base_rtt_ps);
    assert!(fct <= bound, "FCT {fct} ps > {bound} ps");
    let b = bfc_of(&sim);
    assert!(b.c.flows_paused > 0, "the bulk flows were paused");
    assert!(
        b.c.hpq_packets >= 3,
        "three first packets took the high-priority queue"
    );
    assert_eq!(sim.counters.drops, 0);
    // Everything finished: the flow table is empty again.
    assert!(sim.flows.iter().all(|f| f.finish_ps > 0));
    assert_eq!(b.table.table_used + b.table.cache_used, 0);
}

/// 40 flows into one port (more than the 32 physical queues) must collide; the summary
/// reports it.
#[test]
fn forty_flows_collide_and_the_summary_reports_it() {
    let topo = shapes::star(41, 100 * GBPS, US).unwrap();
    let flows: Vec<FlowSpec> = (1..=40).map(|s| flow_at(s, 0, 200_000, 0)).collect();
    let mut sim =
        Simulator::new(topo, net(BfcMode::Bfc), CcConfig::none_unlimited(), &flows).unwrap();
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    assert!(sim.flows.iter().all(|f| f.finish_ps > 0));
    assert_eq!(sim.counters.drops, 0);
    assert!(sim.scheme_stat("bfc", "collisions") > 0);
    assert!(sim.scheme_stat("bfc", "pause_frames") > 0);
    assert_eq!(sim.scheme_stat("bfc", "max_active_queues_per_port"), 32);
}

/// The baselines run through the same machinery: SFQ never pauses; BFC-VFID pauses with a
/// static hash.
#[test]
fn sfq_and_vfid_modes() {
    let topo = shapes::star(9, 100 * GBPS, US).unwrap();
    let flows: Vec<FlowSpec> = (1..=8).map(|s| flow_at(s, 0, 300_000, 0)).collect();
    for mode in [BfcMode::Sfq, BfcMode::Vfid, BfcMode::IdealFq] {
        let mut cfg = net(mode);
        if mode != BfcMode::Vfid {
            cfg.buffer.mode = BufferMode::Unlimited;
        }
        let mut sim =
            Simulator::new(topo.clone(), cfg, CcConfig::none_unlimited(), &flows).unwrap();
        sim.run_quiet();
        sim.finish();
        sim.check_invariants().unwrap();
        assert!(sim.flows.iter().all(|f| f.finish_ps > 0), "{mode:?}");
        let paused = sim.scheme_stat("bfc", "flows_paused");
        assert_eq!(
            paused > 0,
            mode == BfcMode::Vfid,
            "{mode:?}: {paused} pauses"
        );
    }
}

/// PFC as the backstop under BFC's per-flow queues pauses the packet's *priority* (802.1Qbb),
/// not the physical queue the packet took: SFQ (no BFC pauses) with 16 senders at line rate
/// into one port of a 1 MB lossless buffer must PFC-pause the senders' priority 3 and lose
/// nothing. (When the pause named the physical queue, e.g. 17, the NICs, whose flows are in
/// priority 3, never stopped and the ingress headroom overflowed.)
#[test]
fn pfc_backstop_under_sfq_pauses_the_priority_and_never_drops() {
    let n = 16;
    let topo = shapes::star(n + 1, 100 * GBPS, US).unwrap();
    let flows: Vec<FlowSpec> = (1..=n).map(|s| flow_at(s, 0, 2_000_000, 0)).collect();
    let mut cfg = net(BfcMode::Sfq);
    cfg.buffer.size_bytes = 1_000_000;
    let mut sim = Simulator::new(topo, cfg, CcConfig::none_unlimited(), &flows).unwrap();
    sim.cfg.stop_ps = u64::MAX;
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    assert!(
        sim.scheme_stat("pfc", "pauses") > 0,
        "the 1 MB buffer must trigger PFC"
    );
    assert_eq!(sim.counters.drops, 0, "lossless: no drop");
    assert_eq!(sim.scheme_stat("pfc", "drops_lossless"), 0);
    assert_eq!(sim.counters.flows_completed, n as u64);
    // The NICs were paused (priority 3), so PFC-paused time is > 0 at hosts.
    let paused: u64 = sim
        .scheme_summaries()
        .iter()
        .find(|(n, _)| *n == "pfc")
        .and_then(|(_, v)| v["paused_ps"].as_u64())
        .unwrap();
    assert!(paused > 0);
}

/// `sfc run --json --no-output` on scenario `text` (with `extra` files beside it).
fn run_json(text: &str, extra: &[(&str, &str)]) -> serde_json::Value {
    let d = common::TempDir::new("bfc-json");
    d.write("s.toml", text);
    for (name, body) in extra {
        d.write(name, body);
    }
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sfc"));
    cmd.args(["run", "s.toml", "--no-output", "--json"])
        .current_dir(d.path());
    let r = common::run_with_timeout(cmd, std::time::Duration::from_secs(60));
    assert_eq!(r.status.and_then(|s| s.code()), Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("summary JSON")
}

/// A scenario with BFC on a lossless 12 MB buffer, no CC, and one long flow of `size` from
/// host 0 to host 1 on the `[topology]` body `topology`, stopped at `stop`.
fn one_flow(stop: &str, topology: &str, size: &str) -> String {
    format!(
        "name = \"one\"\nseed = 1\nstop = \"{stop}\"\n[topology]\n{topology}\n[buffer]\n\
         mode = \"lossless\"\nsize = \"12MB\"\n[cc]\nkind = \"none\"\n[bfc]\nenabled = true\n\
         [[traffic]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nsize = \"{size}\"\n"
    )
}

/// A resume leaves in the interval it is made in. One endless flow from a 100 G host into
/// a 50 G link (dumbbell, 1 µs links: HRTT 2 µs, τ 1 µs): the switch pauses the flow above
/// Th = (HRTT + τ)·50 G = 18,750 B and resumes it, one flow per τ, when its queue drains;
/// the resumed data arrives within HRTT, before the 18.75 KB drain (3 µs at 50 G), so the
/// bottleneck never idles. At an instant with both ticks, the egress's tick clears the flow
/// before the ingress's tick sends its frame; in the other order the resume would leave one
/// τ late and the 50 G link would be idle 7 % of the time (utilization 0.93).
#[test]
fn a_resume_leaves_in_its_interval_and_the_bottleneck_stays_busy() {
    let s = run_json(
        &one_flow(
            "2ms",
            "kind = \"dumbbell\"\nleft_hosts = 1\nright_hosts = 1\nhost_rate = \"100Gbps\"\n\
             host_delay = \"1us\"\nfabric_rate = \"50Gbps\"\nfabric_delay = \"1us\"",
            "1GB",
        ),
        &[],
    );
    let u = s["link_utilization"]["max"].as_f64().unwrap();
    assert!(u >= 0.99, "bottleneck utilization {u}");
    assert!(
        s["bfc"]["flows_paused"].as_u64().unwrap() > 100,
        "{}",
        s["bfc"]
    );
}

/// A link that loses frames cannot pause a flow for good: one 20 MB flow whose host link
/// loses 1 % of its packets (the BFC frames to the host included). After the filter
/// empties, the switch repeats the empty frame `empty_frame_repeats(0.01)` = 4 more times,
/// one per τ (all five lost with probability 10⁻¹⁰), so the NIC always learns of the
/// resume. With the "all clear" sent once, the flow would stall for good at 9.5 MB after
/// one was lost (≈ 550 pause/resume cycles, each a 1 % chance).
#[test]
fn a_lost_all_clear_frame_does_not_pause_a_flow_forever() {
    assert_eq!(sfc::scheme::bfc::switch::empty_frame_repeats(0.01), 4);
    assert_eq!(sfc::scheme::bfc::switch::empty_frame_repeats(0.0), 0);
    let s = run_json(
        &one_flow("20ms", "kind = \"file\"\nfile = \"topo.txt\"", "20MB"),
        &[(
            "topo.txt",
            "4 2 3\n2 3\n0 2 100Gbps 1000ns 0.01\n2 3 50Gbps 1000ns 0\n3 1 100Gbps 1000ns 0\n",
        )],
    );
    assert_eq!(s["flows_completed"], 1, "{}", s["bfc"]);
    assert!(
        s["drops"].as_u64().unwrap() > 0,
        "the link did lose packets"
    );
}

/// The BFC paper's T1 (8 ToRs × 16 hosts, 8 spines, 100 G) with a Google lognormal
/// background and a 100→1 incast, each `load` followed by `extra` (e.g. a `load_basis`).
fn t1_loads(bg: &str, incast: &str, extra: &str) -> String {
    format!(
        r#"name = "t1"
[topology]
kind = "leaf_spine"
spines = 8
tors = 8
hosts_per_tor = 16
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[[traffic]]
kind = "lognormal"
cdf = "homa_w3"
load = {bg}
{extra}
duration = "200us"
[[traffic]]
kind = "incast"
degree = 100
size = "200KB"
load = {incast}
{extra}
duration = "200us"
"#
    )
}

/// `load_basis = "fabric"`: the paper's "60 % + 5 % of the network capacity" on T1 is the
/// same workload as 0.60 / k and 0.05 / k of each host link, k = 2 × 112/127 (a ToR's 16
/// hosts send 112/127 of their load to other ToRs over 8 uplinks of their rate), flow for flow.
#[test]
fn a_fabric_load_is_the_host_load_over_the_uplink_factor() {
    let k = 2.0 * 112.0 / 127.0;
    let fabric = scenario(&t1_loads("0.6", "0.05", "load_basis = \"fabric\"")).unwrap();
    let host = scenario(&t1_loads(
        &format!("{}", 0.6 / k),
        &format!("{}", 0.05 / k),
        "",
    ))
    .unwrap();
    let as_given = scenario(&t1_loads("0.6", "0.05", "load_basis = \"host\"")).unwrap();
    assert!(fabric.flows.len() > 100, "{} flows", fabric.flows.len());
    assert_eq!(fabric.flows, host.flows);
    // 0.6 / k = 0.340 of each host link: fewer flows than at 0.6 of it.
    assert!(
        (fabric.flows.len() as f64) < 0.8 * as_given.flows.len() as f64,
        "{} vs {}",
        fabric.flows.len(),
        as_given.flows.len()
    );
}

#[test]
fn fabric_load_errors_name_their_key() {
    let err = |text: &str| scenario(text).map(|_| ()).unwrap_err();
    let e = err(&t1_loads("0.6", "0.05", "load_basis = \"bisection\""));
    assert!(
        e.contains("traffic[0].load_basis") && e.contains("unknown load basis `bisection`"),
        "{e}"
    );
    // On a star nothing crosses a fabric.
    let star = r#"name = "s"
[topology]
kind = "star"
hosts = 4
host_rate = "100Gbps"
[[traffic]]
kind = "poisson"
cdf = "fb_hadoop"
load = 0.5
load_basis = "fabric"
duration = "100us"
"#;
    let e = err(star);
    assert!(
        e.contains("traffic[0].load_basis") && e.contains("no traffic crosses an uplink"),
        "{e}"
    );
    // A periodic incast has no `load` for the basis to qualify.
    let periodic = star.replace(
        "kind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\n",
        "kind = \"incast\"\ndegree = 2\nsize = \"10KB\"\nperiod = \"10us\"\n",
    );
    let e = err(&periodic);
    assert!(
        e.contains("traffic[0].load_basis") && e.contains("has no `load`"),
        "{e}"
    );
    // Without oversubscription (4 hosts and 8 uplinks per ToR) all of the fabric is more
    // than each host link can send.
    let wide = t1_loads("1.0", "0.05", "load_basis = \"fabric\"")
        .replace("hosts_per_tor = 16", "hosts_per_tor = 4");
    let e = err(&wide);
    assert!(
        e.contains("traffic[0].load") && e.contains("more than the hosts can send"),
        "{e}"
    );
}
