//! TCD end to end: pause spreading on a dumbbell makes a victim port, which TCD
//! marks UE and never CE, while the truly overloaded port is marked CE; DCQCN+TCD keeps the
//! victim's rate where plain DCQCN cuts it.
//!
//! Dumbbell numbering (`shapes::dumbbell(2, 6, …)`): left hosts 0 (contributor sender) and 1
//! (victim sender); right hosts 2 (hot receiver R0), 3 (victim receiver R1) and 4..=7 (local
//! incast senders to R0). Left switch = node 8, right switch = node 9. Host links 100 G, 1 µs.
//!
//! The incast 4..=7 + 0 → 2 overloads the right switch's port to host 2 (5 × 100 G into 100 G).
//! Host 0's share of that queue is charged to the right switch's ingress from the left switch,
//! which pauses the left switch's port to the right switch: that port stops for the victim
//! flow 1 → 3 too, although (with a 400 G core) its own link carries only 200 G of demand.

use sfc::cc::CcConfig;
use sfc::config::{BufferConfig, BufferMode, EcnConfig};
use sfc::registry::NetConfig;
use sfc::registry::SchemeConfigs;
use sfc::scheme::tcd::switch::TcdSwitch;
use sfc::scheme::tcd::{CeMarking, TcdConfig, TcdState};
use sfc::sim::Simulator;
use sfc::topology::{TopologySpec, shapes};
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

const HOST: u64 = 100 * GBPS;
const LEFT: u32 = 8;
const RIGHT: u32 = 9;
/// CE threshold (and, for the plain-ECN comparison, Kmin = Kmax): 40 KB.
const K: u64 = 40_000;
/// Switch buffer: 4 MB, so that PFC (dynamic ingress threshold α·free, α = 1/8 at 100 G and
/// 1/2 at 400 G ports) pauses within tens of microseconds.
const BUFFER: u64 = 4_000_000;

fn flow(src: u32, dst: u32, size: u64) -> FlowSpec {
    flow_at(src, dst, size, 0)
}

fn flow_at(src: u32, dst: u32, size: u64, start_ps: u64) -> FlowSpec {
    FlowSpec::background(src, dst, size, start_ps)
}

/// Lossless fabric, step ECN at `K` at every rate; TCD on or off.
fn net(tcd: bool) -> NetConfig {
    NetConfig {
        core: sfc::config::CoreConfig {
            buffer: BufferConfig {
                mode: BufferMode::Lossless,
                size_bytes: BUFFER,
                dt_alpha: 1.0,
            },
            ecn: EcnConfig::step(K, &[100 * GBPS, 400 * GBPS]),
            ..Default::default()
        },
        schemes: SchemeConfigs {
            tcd: TcdConfig {
                enabled: tcd,
                threshold_bytes: Some(K),
                ce_marking: CeMarking::Step,
                ..TcdConfig::default()
            },
            ..Default::default()
        },
    }
}

/// Contributor 0 → 2, victim 1 → 3, incast 4..=7 → 2; every flow `size` bytes.
fn victim_flows(size: u64) -> Vec<FlowSpec> {
    let mut f = vec![flow(0, 2, size), flow(1, 3, size)];
    f.extend((4..=7).map(|s| flow(s, 2, size)));
    f
}

fn tcd_of(sim: &Simulator, node: u32) -> &TcdSwitch {
    let s = sim.switches.iter().find(|s| s.node == node).unwrap();
    match &s.schemes.tcd {
        Some(t) => t,
        None => panic!("no TCD on switch {node}"),
    }
}

/// Port of switch `node` that leads to node `peer`.
fn port_to(sim: &Simulator, node: u32, peer: u32) -> usize {
    let s = sim.switches.iter().find(|s| s.node == node).unwrap();
    s.ports.iter().position(|p| p.tx.link.peer == peer).unwrap()
}

fn ecn_marks(sim: &Simulator, node: u32) -> u64 {
    let s = sim.switches.iter().find(|s| s.node == node).unwrap();
    s.schemes.ecn.as_ref().map_or(0, |e| e.marks)
}

/// The victim topology: the dumbbell's nodes, but hosts 0 and 1 on 50 G links, so that the
/// left switch's port to the right switch (100 G) carries at most its capacity (it is never
/// overloaded by its own inputs) and its release bursts do not overload host 3's 100 G port.
fn victim_topo() -> TopologySpec {
    victim_topo_n(4)
}

/// [`victim_topo`] with `n` local incast senders (hosts 4..4+n) on the right switch; the
/// switches are nodes `4 + n` (left) and `5 + n` (right).
fn victim_topo_n(n: u32) -> TopologySpec {
    let (l, r) = (4 + n, 5 + n);
    let mut t = format!(
        "{} 2 {}\n{l} {r}\n0 {l} 50Gbps 1000ns 0\n1 {l} 50Gbps 1000ns 0\n",
        n + 6,
        n + 5
    );
    for h in 2..4 + n {
        t.push_str(&format!("{h} {r} 100Gbps 1000ns 0\n"));
    }
    t.push_str(&format!("{l} {r} 100Gbps 1000ns 0\n"));
    sfc::topology::hpcc_file::parse(&t, "victim").unwrap()
}

fn run(topo_core: u64, cfg: NetConfig, cc: CcConfig, flows: &[FlowSpec], stop: u64) -> Simulator {
    let topo = shapes::dumbbell(2, 6, HOST, US, topo_core, US).unwrap();
    run_on(topo, cfg, cc, flows, stop)
}

fn run_on(
    topo: TopologySpec,
    cfg: NetConfig,
    cc: CcConfig,
    flows: &[FlowSpec],
    stop: u64,
) -> Simulator {
    let mut sim = Simulator::new(topo, cfg, cc, flows).unwrap();
    sim.cfg.stop_ps = stop;
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    sim
}

/// The victim port (left switch → right switch, 100 G, at most 2 × 50 G of demand) is paused
/// and resumed by the downstream incast: with plain ECN it is CE-marked (its queue exceeds K),
/// with TCD the same queue gives UE and never CE. The port to the hot receiver is truly
/// overloaded (5 × 100 G into 100 G) and never paused (a host never pauses it): CE under TCD.
#[test]
fn victim_port_gets_ue_never_ce_and_the_overloaded_port_gets_ce() {
    let flows = victim_flows(20_000_000);
    let stop = 1_000 * US;
    // Plain ECN: the paused port's queue exceeds K, so the victim's packets are CE-marked
    // on the left switch (its only data port is the one to the right switch).
    let plain = run_on(
        victim_topo(),
        net(false),
        CcConfig::none_unlimited(),
        &flows,
        stop,
    );
    assert!(
        ecn_marks(&plain, LEFT) > 100,
        "the victim port must build a queue above K without TCD ({} marks)",
        ecn_marks(&plain, LEFT)
    );
    assert!(plain.scheme_stat("pfc", "pauses") > 0);

    let sim = run_on(
        victim_topo(),
        net(true),
        CcConfig::none_unlimited(),
        &flows,
        stop,
    );
    assert_eq!(ecn_marks(&sim, LEFT), 0, "ECN must not run next to TCD");
    let l = tcd_of(&sim, LEFT);
    let victim = port_to(&sim, LEFT, RIGHT) * l.nq + 3;
    let m = l.marks[victim];
    assert!(m.ue > 100, "victim port UE marks: {m:?}");
    assert_eq!(m.ce, 0, "victim port must never mark CE: {m:?}");
    let q = l.queues[victim];
    assert!(q.time_in_ps[TcdState::Undetermined as usize] > 0);
    assert_eq!(q.time_in_ps[TcdState::Congestion as usize], 0);
    // The victim receiver's port on the right switch is neither paused nor loaded: no marks.
    let r = tcd_of(&sim, RIGHT);
    let to_r1 = port_to(&sim, RIGHT, 3) * r.nq + 3;
    assert_eq!((r.marks[to_r1].ce, r.marks[to_r1].ue), (0, 0));
    // The hot port: CE, never UE (never paused), in the congestion state most of the run.
    let hot = port_to(&sim, RIGHT, 2) * r.nq + 3;
    let h = r.marks[hot];
    assert!(h.ce > 100, "hot port CE marks: {h:?}");
    assert_eq!(h.ue, 0);
    let t = r.queues[hot].time_in_ps;
    assert!(t[TcdState::Congestion as usize] > t[TcdState::NonCongestion as usize]);
    // Summary section agrees with the per-port counters.
    let s = sim
        .scheme_summaries()
        .into_iter()
        .find(|(n, _)| *n == "tcd")
        .unwrap()
        .1;
    assert!(s["ue_marks"].as_u64().unwrap() >= m.ue);
    assert!(s["ce_marks"].as_u64().unwrap() >= h.ce);
    assert!(s["ports"].as_array().unwrap().len() >= 2);
}

/// A port paused first, overloaded later (100 G core): until 150 µs it carries only the
/// contributor 0 → 2 (100 G on 100 G) and is paused by the incast 4..=7 → 2 (300 KB each):
/// UE, no CE. From 150 µs host 1 adds 100 G more (200 G of demand): once the port has been ON
/// for longer than max(T_on) its queue grows above K: CE. The first CE comes at least
/// max(T_on) after the end of the latest OFF period.
#[test]
fn overloaded_port_gets_ce_once_on_longer_than_max_ton() {
    let mut flows = vec![flow(0, 2, 8_000_000), flow_at(1, 3, 8_000_000, 150 * US)];
    flows.extend((4..=7).map(|s| flow(s, 2, 300_000)));
    let sim = run(
        100 * GBPS,
        net(true),
        CcConfig::none_unlimited(),
        &flows,
        600 * US,
    );
    let l = tcd_of(&sim, LEFT);
    let port = port_to(&sim, LEFT, RIGHT);
    let i = port * l.nq + 3;
    let m = l.marks[i];
    assert!(m.ue > 0, "paused phase must give UE: {m:?}");
    assert!(m.ce > 0, "overloaded phase must give CE: {m:?}");
    let s = sim.switches.iter().find(|s| s.node == LEFT).unwrap();
    let off_end = s.ports[port].queues[3].off_end_ps;
    assert!(off_end > 0, "PFC must have paused and resumed the port");
    let max_ton = l.params[port].max_ton_ps;
    // Eq. (3) for this port: 100 G, B1 − B0 = 3072 B, ε = 0.05, τ = 2·1048 B/C + 2 µs
    // = 167.68 ns + 2 µs → 3072/(0.05·12.5 B/ns) = 4.9152 µs + 2.16768 µs · 11 = 28.76 µs.
    assert_eq!(max_ton, 28_759_680);
    assert!(
        m.first_ce_ps >= off_end + max_ton,
        "first CE at {} ps, latest OFF ended at {off_end} ps",
        m.first_ce_ps
    );
    assert!(m.last_ue_ps < m.first_ce_ps);
    assert!(m.first_ce_ps > 150 * US);
    assert!(l.queues[i].time_in_ps[TcdState::Congestion as usize] > 0);
}

/// DCQCN vs DCQCN+TCD on the victim scenario with 12 local incast senders (DCQCN reacts to
/// 4 senders before PFC spreads; 12 × 100 G overwhelm it for long enough) and a 1 MB buffer:
/// plain DCQCN cuts the victim flow (its port's queue exceeds Kmin = K while paused, CE),
/// DCQCN+TCD never cuts it (UE only: its reaction point never sees a CE echo), so its rate is
/// still its 50 G line rate at the end, and it delivers more.
#[test]
fn dcqcn_tcd_victim_keeps_line_rate_where_dcqcn_cuts_it() {
    const LINE: u64 = 50 * GBPS;
    let n = 12;
    let mut flows = vec![flow(0, 2, 20_000_000), flow(1, 3, 20_000_000)];
    flows.extend((4..4 + n).map(|s| flow(s, 2, 20_000_000)));
    let stop = 1_000 * US;
    let dcqcn = |tcd: bool| {
        let mut p = sfc::cc::dcqcn::DcqcnParams::hpcc_preset(LINE);
        p.hold = tcd;
        CcConfig::Dcqcn(p)
    };
    let cfg = |tcd: bool| {
        let mut c = net(tcd);
        c.buffer.size_bytes = 1_000_000;
        c
    };
    let plain = run_on(victim_topo_n(n), cfg(false), dcqcn(false), &flows, stop);
    let with = run_on(victim_topo_n(n), cfg(true), dcqcn(true), &flows, stop);
    assert!(plain.scheme_stat("pfc", "pauses") > 0);
    // The victim's port (left switch, node 4 + n) marked CE under plain ECN, UE under TCD.
    assert!(plain.scheme_stat("ecn", "marks") > 0);
    let l = tcd_of(&with, 4 + n);
    let i = port_to(&with, 4 + n, 5 + n) * l.nq + 3;
    assert!(l.marks[i].ue > 0);
    assert_eq!(l.marks[i].ce, 0);
    let victim_rate = |s: &Simulator| s.flow_cc(1).expect("flow active").rate_bps();
    assert!(
        victim_rate(&plain) < LINE / 2,
        "plain DCQCN must cut the victim ({} b/s)",
        victim_rate(&plain)
    );
    assert_eq!(
        victim_rate(&with),
        LINE,
        "DCQCN+TCD must not cut the victim"
    );
    // The contributors still get cut under TCD (CE at the hot port).
    assert!(with.flow_cc(0).expect("flow active").rate_bps() < LINE / 2);
    assert!(with.flow_cc(2).expect("flow active").rate_bps() < HOST / 2);
    // And the victim delivers more (≈ 5.6 MB vs ≈ 1.1 MB in 1 ms).
    let delivered = |s: &Simulator| s.delivered_bytes(1);
    assert!(
        delivered(&with) > 3 * delivered(&plain),
        "{} vs {}",
        delivered(&with),
        delivered(&plain)
    );
}

/// Bad `[tcd]` / `cc.tcd` input: an error naming the key, never a panic.
#[test]
fn scenario_keys_are_validated_with_the_key_named() {
    let base = r#"
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 2
[buffer]
mode = "lossless"
[cc]
kind = "dcqcn"
[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "1MB"
"#;
    let load = |extra: &str, sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        sfc::scenario::from_str(
            &format!("{base}{extra}"),
            "t.toml",
            std::path::Path::new("."),
            &sets,
        )
    };
    let ok = load("[tcd]\nenabled = true\n", &["cc.tcd=true"]).unwrap();
    assert!(ok.net.schemes.tcd.enabled);
    match &ok.cc {
        CcConfig::Dcqcn(p) => assert!(p.hold),
        c => panic!("{c:?}"),
    }
    let err = |extra: &str, sets: &[&str], key: &str, words: &str| {
        let Err(e) = load(extra, sets) else {
            panic!("{extra} {sets:?} was accepted");
        };
        assert!(e.contains(key) && e.contains(words), "{e}");
    };
    err(
        "[tcd]\nenabled = true\nepsilon = 2.0\n",
        &[],
        "tcd.epsilon",
        "(0, 1)",
    );
    err(
        "[tcd]\nenabled = true\nmax_ton = \"abc\"\n",
        &[],
        "tcd.max_ton",
        "abc",
    );
    err(
        "[tcd]\nenabled = true\nce_marking = \"maybe\"\n",
        &[],
        "tcd.ce_marking",
        "step",
    );
    err("", &["cc.tcd=true"], "cc.tcd", "tcd.enabled = true");
    err(
        "[tcd]\nenabled = true\n",
        &["buffer.mode=\"lossy\""],
        "tcd.enabled",
        "lossless",
    );
    err(
        "[tcd]\nenabled = true\n",
        &["cc.kind=\"hpcc\"", "cc.tcd=true"],
        "cc.tcd",
        "does not apply",
    );
    // No ECN thresholds (cc none) and no explicit threshold: named.
    err(
        "[tcd]\nenabled = true\n",
        &["cc.kind=\"none\""],
        "tcd.threshold",
        "Kmin",
    );
    err(
        "[tcd]\nenabled = true\nthreshold = \"10KB\"\nlow_threshold = \"20KB\"\n",
        &[],
        "tcd.low_threshold",
        "must not exceed",
    );
}

/// The victim scenario of [`dcqcn_tcd_victim_keeps_line_rate_where_dcqcn_cuts_it`], flows
/// and config, with controller `cc` and paper CNPs when `cnp`.
fn victim12(tcd: bool, cc: CcConfig, cnp: bool) -> Simulator {
    let n = 12;
    let mut flows = vec![flow(0, 2, 20_000_000), flow(1, 3, 20_000_000)];
    flows.extend((4..4 + n).map(|s| flow(s, 2, 20_000_000)));
    let mut cfg = net(tcd);
    cfg.buffer.size_bytes = 1_000_000;
    if cnp {
        cfg.cnp = sfc::config::CnpMode::Cnp {
            interval_ps: 50 * US,
        };
    }
    run_on(victim_topo_n(n), cfg, cc, &flows, 1_000 * US)
}

/// The UE echo in ACKs reaches TIMELY+TCD: the victim's once-per-RTT updates that followed
/// UE-only ACKs held the rate (and none do without the flag, with the same marks).
#[test]
fn ack_ue_echo_reaches_timely() {
    let timely = |tcd: bool| {
        let mut p = sfc::cc::timely::TimelyParams::hpcc_preset(50 * GBPS);
        p.hold = tcd;
        CcConfig::Timely(p)
    };
    let held = |s: &Simulator| match s.flow_cc(1).expect("flow active") {
        sfc::cc::CcRef::Timely(t) => t.held_updates(),
        c => panic!("{c:?}"),
    };
    let with = victim12(true, timely(true), false);
    assert!(held(&with) > 0, "victim updates held: {}", held(&with));
    let marks_only = victim12(true, timely(false), false);
    assert_eq!(held(&marks_only), 0);
}

/// Paper NP (`network.cnp = "cnp"`): the victim's receiver sends UE CNPs (never a CE one),
/// so the paper DCQCN+TCD victim is never cut; plain paper DCQCN cuts it.
#[test]
fn ue_cnp_variant_is_sent_and_does_not_cut() {
    let paper = |tcd: bool| {
        let mut p = sfc::cc::dcqcn::DcqcnParams::paper(50 * GBPS);
        p.ce_echo_is_cnp = false;
        p.hold = tcd;
        CcConfig::Dcqcn(p)
    };
    let with = victim12(true, paper(true), true);
    let v = with.rx_state(1).expect("victim's receiver open");
    assert_ne!(
        v.last_marked_cnp_ps,
        u64::MAX,
        "no UE CNP was sent for the victim"
    );
    assert_eq!(v.last_cnp_ps, u64::MAX, "a CE CNP was sent for the victim");
    assert_eq!(with.flow_cc(1).expect("flow active").rate_bps(), 50 * GBPS);
    let plain = victim12(false, paper(false), true);
    assert_ne!(
        plain
            .rx_state(1)
            .expect("victim's receiver open")
            .last_cnp_ps,
        u64::MAX
    );
    assert!(plain.flow_cc(1).expect("flow active").rate_bps() < 50 * GBPS);
}

/// DCQCN (HPCC-sim preset at the victim's 50 G line rate), plain or DCQCN+TCD.
fn dcqcn50(tcd: bool) -> CcConfig {
    let mut p = sfc::cc::dcqcn::DcqcnParams::hpcc_preset(50 * GBPS);
    p.hold = tcd;
    CcConfig::Dcqcn(p)
}

/// [`net`] with a 1 MB buffer (PFC spreads within microseconds of an incast).
fn net_1mb(tcd: bool) -> NetConfig {
    let mut c = net(tcd);
    c.buffer.size_bytes = 1_000_000;
    c
}

/// Why `tcd-workload` barely moves: a victim that fits in one BDP gains nothing from TCD.
///
/// [`victim_topo_n`]`(12)`: a one-shot congestion tree made of flows that each fit in one BDP,
/// as the workload's 64 KB incast flows do (BDP 104 KB there): 12 local senders (100 G) send
/// 40 KB each to host 2 at 0, and host 0 (50 G) sends eight 30 KB flows to host 2 back to
/// back; the right switch's ingress from the left one fills with host 0's bytes stuck behind
/// the hot port and PFC pauses the left switch's port to the right one. Host 1 (50 G) sends a
/// 20 KB victim to host 3 every 5 µs through that port.
///
/// By hand, every flow crossing the paused port is done sending before its first echo can
/// return: a victim's 20 packets of 1048 B take 20 · 1048 · 8 / 50 G = 3.354 µs at its line
/// rate (DCQCN starts there), its base RTT is 6.32 µs (ideal FCT 9.673 µs minus those
/// 3.354 µs); a contributor's 30 packets take 5.03 µs against the same RTT (each flow starts
/// when the previous one has sent its last byte, so each sends at line rate alone; a PAUSE
/// from the left switch would delay both runs alike until a sender reacts differently). The
/// local senders cross only the hot port, which is never paused (hosts send no PAUSE), so
/// TCD judges it by queue length, exactly as the step ECN of the plain run (CE iff the
/// backlog exceeds K): they see the same marks in both runs. The only difference between
/// DCQCN and DCQCN+TCD is then the mark on packets that crossed the paused port (CE or UE),
/// and it is echoed to senders with nothing left to send: no sending time can change, so every
/// FCT is the same to the picosecond (tolerance 0). Yet the victims that met the pause are
/// slowed 3–4.6× (they wait in the paused queue): a delay that TCD, which changes only how
/// senders react to marks, cannot remove.
#[test]
fn victim_within_one_bdp_has_the_same_fct_with_and_without_tcd() {
    let n = 12;
    let run = |tcd: bool| {
        // Host 0's flows back to back: 30 packets of 1048 B at 50 G = 5.0304 µs apart.
        let mut flows: Vec<FlowSpec> = (0..8)
            .map(|k| flow_at(0, 2, 30_000, k * 5_030_400))
            .collect();
        flows.extend((4..4 + n).map(|s| flow(s, 2, 40_000)));
        flows.extend((0..20).map(|k| flow_at(1, 3, 20_000, k * 5 * US)));
        run_on(
            victim_topo_n(n),
            net_1mb(tcd),
            dcqcn50(tcd),
            &flows,
            2_000 * US,
        )
    };
    let plain = run(false);
    let with = run(true);
    // The port to the right switch was paused and marked: CE by plain ECN, UE (never CE) by
    // TCD.
    assert!(plain.scheme_stat("pfc", "pauses") > 0);
    assert!(ecn_marks(&plain, 4 + n) > 0);
    let l = tcd_of(&with, 4 + n);
    let i = port_to(&with, 4 + n, 5 + n) * l.nq + 3;
    assert!(l.marks[i].ue > 0, "{:?}", l.marks[i]);
    assert_eq!(l.marks[i].ce, 0);
    let (p, w) = (plain.flow_records(), with.flow_records());
    for (a, b) in p.iter().zip(&w) {
        assert!(a.fct_ps.is_some(), "flow {} unfinished", a.id);
        assert_eq!(a.fct_ps, b.fct_ps, "flow {} {} -> {}", a.id, a.src, a.dst);
    }
    // The victims (host 1 → 3) met the pause: the slowest waited ≥ 3 ideal FCTs (4.6 here).
    let worst = w
        .iter()
        .filter(|r| r.src == 1)
        .map(|r| r.slowdown().unwrap())
        .fold(0.0, f64::max);
    assert!(worst >= 3.0, "victims' worst slowdown {worst}");
}

/// The victim TCD does help: one longer than a BDP. The same tree made of long flows (host 0
/// and the 12 local senders send 20 MB each to host 2 from 0) and a 2 MB victim 1 → 3 from
/// 100 µs, DCQCN vs DCQCN+TCD.
///
/// By hand. Unblocked, the victim takes its ideal FCT, 341.68 µs (base RTT + 2000 · 1048 B at
/// 50 G = 335.36 µs). With TCD its port is marked UE only, its reaction point never cuts and it
/// keeps 50 G; the paused port (100 G) catches up on its backlog at twice that rate after
/// each pause, so only a pause overlapping its last packets can delay it: tolerance 5 %
/// (17 µs, more than one such pause here). Without TCD its first CE echo (the port is paused
/// from its start on) cuts it to 50 G · (1 − α/2) ≤ 30 G (α ≥ 0.8 from its initial 1 within
/// 57 µs at g = 1/256 per µs), and the preset's increase timer (300 µs) gives nothing back
/// for 300 µs: by any time t after those 300 µs it has sent at most 50 G · t − 20 G · 300 µs,
/// so its FCT ≥ 335.36 + 120 = 455.36 µs (1.33 ideal FCTs).
#[test]
fn victim_longer_than_a_bdp_keeps_its_unblocked_fct_with_tcd() {
    let n = 12;
    let run = |tcd: bool| {
        let mut flows = vec![flow(0, 2, 20_000_000)];
        flows.extend((4..4 + n).map(|s| flow(s, 2, 20_000_000)));
        flows.push(flow_at(1, 3, 2_000_000, 100 * US));
        run_on(
            victim_topo_n(n),
            net_1mb(tcd),
            dcqcn50(tcd),
            &flows,
            1_000 * US,
        )
    };
    let victim = 1 + n as usize;
    let plain = run(false).flow_record(victim);
    let with = run(true).flow_record(victim);
    assert_eq!(with.ideal_fct_ps, 341_680_000);
    let (p, w) = (plain.fct_ps.unwrap(), with.fct_ps.unwrap());
    assert!(
        w <= with.ideal_fct_ps * 105 / 100,
        "DCQCN+TCD victim FCT {w} ps, ideal {} ps",
        with.ideal_fct_ps
    );
    assert!(p >= 455_360_000, "DCQCN victim FCT {p} ps");
}
