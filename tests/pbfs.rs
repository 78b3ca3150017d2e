//! PB-FS (postcard-based fast start, `seeds/pbfs.txt` §III) end to end, with every expected
//! value derived by hand below.
//!
//! Setting of the hand derivations (unless a test says otherwise): a star of 25 Gb/s, 1 µs
//! links; HPCC framing (1000 B payload + 48 B = `PKT` = 1048 B, serialized in 335 ns at 25 G
//! — 335.36 truncated to whole ns as HPCC-sim does; a 60 B ACK in 19 ns; an 88 B postcard in
//! 28 ns); no switch or NIC delay. PB-FS with N = 8, Δ = 6 and DC_RTT = 16 µs set explicitly,
//! so a slot is 1 µs, T·DC_RTT = 50,000 B at 25 G, τ = 8 µs and T·τ = 25,000 B. T_Δ = 6 × 335
//! = 2,010 ns is measured in 16 buckets of 126 ns (window = the bucket of t and the 15 before).
//!
//! A sender starting at 0 at line rate starts packet k (1-based) at (k − 1)·335 ns; it reaches
//! the switch (store and forward) at `k·335 + 1000` ns. Packet 1 reaches the receiver at
//! 1335 + 335 + 1000 = 2670 ns when it is alone on the egress port; its ACK is back at the
//! sender at 2670 + 2·(19 + 1000) = 4708 ns.

use sfc::cc::CcConfig;
use sfc::cc::CongestionControl;
use sfc::config::{BufferConfig, BufferMode};
use sfc::registry::HostScheme;
use sfc::registry::NetConfig;
use sfc::registry::SchemeConfigs;
use sfc::scheme::Scheme;
use sfc::scheme::pbfs::host::PbfsHost;
use sfc::scheme::pbfs::switch::PbfsSwitch;
use sfc::scheme::pbfs::{PbfsConfig, reaction};
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

const LINE: u64 = 25 * GBPS;
const PKT: u64 = 1048;
const PRIO: u8 = 3;

fn flow(src: u32, dst: u32, size: u64) -> FlowSpec {
    FlowSpec {
        src,
        dst,
        size_bytes: size,
        start_ps: 0,
        prio: PRIO,
        dport: 100,
    }
}

fn pbfs() -> PbfsConfig {
    PbfsConfig {
        enabled: true,
        dc_rtt_ps: 16 * US,
        i_min_bytes: 10_000,
        ..PbfsConfig::default()
    }
}

fn star_sim(hosts: u32, cfg: NetConfig, flows: &[FlowSpec]) -> Simulator {
    let topo = shapes::star(hosts, LINE, US).unwrap();
    Simulator::new(topo, cfg, CcConfig::none_unlimited(), flows).unwrap()
}

fn run_to(sim: &mut Simulator, t_ps: u64) {
    sim.cfg.stop_ps = t_ps;
    sim.run_quiet();
}

fn host(sim: &Simulator) -> &PbfsHost {
    sim.host_schemes
        .iter()
        .find_map(|h| match h {
            HostScheme::Pbfs(p) => Some(p),
            _ => None,
        })
        .expect("PB-FS host half")
}

fn switch(sim: &Simulator, i: usize) -> &PbfsSwitch {
    match &sim.switches[i].schemes.pbfs {
        Some(p) => p,
        None => panic!("PB-FS does not run on switch {i}"),
    }
}

fn pbfs_json(sim: &Simulator) -> serde_json::Value {
    sim.scheme_summaries()
        .into_iter()
        .find(|(n, _)| *n == "pbfs")
        .map(|(_, v)| v)
        .expect("pbfs section")
}

/// One flow into an idle port. Its marked packets 6 and 12 (started at 1675 and 3685 ns,
/// before the first ACK at 4708 ns; packet 18 would start at 5695 ns) reach the switch at
/// 3010 and 5020 ns.
/// - At 3010 ns (slot 3): complete slots hold packets 1–2 (1335, 1670 ns: slot 1) and 3–5
///   (2005, 2340, 2675 ns: slot 2) → I_before = 5 PKT = 5,240, I_last = 3,144,
///   I_p = 5,240 + 8·3,144 = 30,392 ≤ 50,000 − Q¹ (0): not congested.
/// - At 5020 ns (slot 5): slots 1..4 hold 2, 3, 3 (6–8), 3 (9–11) packets → I_before =
///   11 PKT = 11,528, I_last = 3,144, I_p = 36,680 ≤ 50,000: not congested.
///
/// No postcard; the flow's rate stays the line rate.
#[test]
fn one_marked_flow_into_an_idle_port_gets_no_postcard() {
    let cfg = NetConfig {
        schemes: SchemeConfigs {
            pbfs: pbfs(),
            ..Default::default()
        },
        ..NetConfig::default()
    };
    let mut sim = star_sim(2, cfg, &[flow(0, 1, 100 * 1000)]);
    // Both assessments are over by 20 µs; the flow (≈ 33 µs of data) is still active.
    run_to(&mut sim, 20 * US);
    assert_eq!(sim.flow_cc(0).expect("flow active").rate_bps(), LINE);
    run_to(&mut sim, 40 * US);
    let h = host(&sim);
    assert_eq!(h.marked_packets, 2);
    assert_eq!(switch(&sim, 0).counters.marked_assessed, 2);
    assert_eq!(switch(&sim, 0).counters.postcards_generated, 0);
    assert_eq!(h.postcards_received, 0);
    assert!(h.flows[0].uses);
    let j = pbfs_json(&sim);
    assert_eq!(j["flows_using_pbfs"], 1);
    assert_eq!(j["postcards_generated"], 0);
}

/// Two line-rate flows (hosts 0 and 1 → host 2) starting together into one 25 G port. Both
/// packets k reach the switch at `k·335 + 1000` ns.
///
/// Marked packets 6 arrive at 3010 ns (slot 3). Complete slots: slot 1 has packets 1–2 of
/// both (4 PKT), slot 2 packets 3–5 of both (6 PKT) → I_before = 10 PKT = 10,480,
/// I_last = 6,288, I_p = 10,480 + 8·6,288 = 60,784 > 50,000 − Q¹ (Q¹ = 0): congested, one
/// postcard per flow. The recentBytes window at 3010 ns (buckets 8..=23 of 126 ns:
/// [1008, 3024) ns) holds packets 1–5 of both flows plus the packet 6 processed first, and
/// then the other one:
/// - first-processed flow: recent = 11 PKT = 11,528, marked = 1,048 → share 6/11,
///   I_PBT = 60,784·6/11, I_nonPBT = 60,784·5/11, I = 50,000 − 60,784·5/11 = 246,080/11,
///   c = 364,704 / (0.95·246,080) = 1.5600575, rate = 25 G / c = 16,025,050,451 b/s;
/// - second: recent = 12 PKT = 12,576, marked = 2,096 → share 1, I_PBT = I_p, I = 50,000,
///   c = 60,784 / 47,500 = 1.2796632, rate = 19,536,391,155 b/s.
///
/// Each postcard leaves at 3010 ns on an idle port and reaches its sender at 3010 + 28 +
/// 1000 = 4038 ns, before either flow's first ACK (4708 ns for the flow served first at the
/// egress, 5043 ns for the other), so each sets its flow's rate and stops its marking: the
/// next marked packets (12, started at 3685 ns) are the last. They reach the switch at
/// 5020 ns, when slots 1..4 hold 4, 6, 6, 6 PKT → I_p = 22 PKT + 8·6 PKT = 73,360 > 50,000:
/// two more postcards, generated after each flow's PBT interval ended (its first ACK, which
/// follows a rate update) and therefore ignored. So: exactly one postcard per switch per
/// flow within the PBT interval, 4 generated in all, 2 rate updates, 2 ignored.
#[test]
fn two_line_rate_flows_one_postcard_each_and_algorithm_1_rate() {
    let cfg = NetConfig {
        schemes: SchemeConfigs {
            pbfs: pbfs(),
            ..Default::default()
        },
        ..NetConfig::default()
    };
    let mut sim = star_sim(3, cfg, &[flow(0, 2, 1_000_000), flow(1, 2, 1_000_000)]);
    // Just after the postcards arrived (4038 ns), before any ACK.
    run_to(&mut sim, 4_500_000);
    {
        let h = host(&sim);
        assert_eq!(h.rate_updates, 2);
        assert_eq!(h.postcards_received, 2);
        let sw = switch(&sim, 0);
        assert_eq!(sw.counters.postcards_generated, 2);
        let a = sw.last.unwrap();
        assert_eq!(
            (a.i_before, a.i_last, a.i_p, a.q1),
            (10 * PKT, 6 * PKT, 60_784, 0)
        );
        assert_eq!(a.capacity, 50_000);
        let mut seen = Vec::new();
        for f in 0..2 {
            let pc = h.flows[f].first.expect("a postcard");
            assert_eq!(pc.switch, sim.switches[0].node);
            assert_eq!(
                (pc.i_p_bytes, pc.q1_bytes, pc.rate_mbps),
                (60_784, 0, 25_000)
            );
            assert_eq!(pc.hops, 1);
            let expect = match (pc.recent_bytes, pc.recent_marked_bytes) {
                (11_528, 1_048) => 16_025_050_451.873,
                (12_576, 2_096) => 19_536_391_155.567,
                other => panic!("flow {f}: unexpected recent bytes {other:?}"),
            };
            seen.push(pc.recent_bytes);
            let rate = sim.flow_cc(f).expect("flow active").rate_bps();
            assert!(
                (rate as f64 - expect).abs() < 2.0,
                "flow {f}: rate {rate}, by hand {expect}"
            );
            assert_eq!(h.flows[f].rate_bps, rate);
            // Algorithm 1 on the postcard's fields gives the same c.
            let r = reaction(&pc, 6, 16 * US, 10_000, 0.95);
            assert!((LINE as f64 / r.c - expect).abs() < 2.0);
            assert!(!h.flows[f].marking);
        }
        seen.sort();
        assert_eq!(seen, vec![11_528, 12_576]);
    }
    run_to(&mut sim, 40 * US);
    let h = host(&sim);
    assert_eq!(h.marked_packets, 4);
    assert_eq!(switch(&sim, 0).counters.postcards_generated, 4);
    assert_eq!(h.postcards_received, 4);
    assert_eq!(h.postcards_ignored, 2);
    assert_eq!(h.rate_updates, 2);
    for f in 0..2 {
        assert!(h.flows[f].ignore);
        assert_eq!((h.flows[f].postcards, h.flows[f].ignored), (2, 1));
    }
    let j = pbfs_json(&sim);
    assert_eq!(j["postcards_generated"], 4);
    assert_eq!(j["postcards_per_flow_max"], 2);
    assert_eq!(j["postcards_per_flow_mean"], 2.0);
    assert_eq!(j["postcard_hops_hist"][1], 4);
    // The star's switch is a ToR and host 2's port is host-facing.
    assert_eq!(j["postcards_tor_down"], 4);
    assert_eq!(j["postcard_tor_down_share"], 1.0);
    assert_eq!(j["rate_updates"], 2);
}

/// Marking threshold: T·τ = 25 G × 8 µs = 25,000 B on the wire (the flows that need τ "to
/// transmit all their data"). A payload of P bytes is ⌈P/1000⌉ packets of 48 B more: 23,847 B
/// is 24 packets, 23,847 + 1,152 = 24,999 B on the wire, and does not use PB-FS; 23,848 B
/// (25,000 B on the wire) and 23,849 B do and mark packets 6 and 12 — the ones sent before
/// the first ACK at 4708 ns (packet 15 starts at 4690 ns, packet 18 would at 5695 ns).
#[test]
fn marking_just_below_and_above_tau_times_line_rate() {
    for (size, uses, marked) in [
        (23_847u64, false, 0u64),
        (23_848, true, 2),
        (23_849, true, 2),
    ] {
        let cfg = NetConfig {
            schemes: SchemeConfigs {
                pbfs: pbfs(),
                ..Default::default()
            },
            ..NetConfig::default()
        };
        let mut sim = star_sim(2, cfg, &[flow(0, 1, size)]);
        run_to(&mut sim, 100 * US);
        let h = host(&sim);
        assert_eq!(h.flows[0].uses, uses, "size {size}");
        assert_eq!(h.marked_packets, marked, "size {size}");
        assert_eq!(switch(&sim, 0).counters.marked_assessed, marked);
        assert!(sim.flows[0].finished());
    }
    // With τ = 4 µs (T·τ = 12,500 B) the 23,847 B flow uses PB-FS too.
    let cfg = NetConfig {
        schemes: SchemeConfigs {
            pbfs: PbfsConfig {
                tau_ps: 4 * US,
                ..pbfs()
            },
            ..Default::default()
        },
        ..NetConfig::default()
    };
    let mut sim = star_sim(2, cfg, &[flow(0, 1, 23_847)]);
    run_to(&mut sim, 100 * US);
    assert_eq!(host(&sim).marked_packets, 2);
}

/// Incast of 7 senders into one 25 G port with a small shared buffer. Postcards are control
/// packets: they travel in queue 0 (strict priority, outside the MMU), so every postcard
/// generated reaches its sender — lossless (PFC pausing the data class) and lossy (the data
/// class dropping).
#[test]
fn postcards_travel_in_the_control_class_and_are_never_dropped() {
    for mode in [BufferMode::Lossless, BufferMode::Lossy] {
        let mut cfg = NetConfig::from(sfc::config::CoreConfig {
            buffer: BufferConfig {
                mode,
                size_bytes: 60_000,
                dt_alpha: 1.0,
            },
            ..Default::default()
        });
        cfg.schemes.pbfs = pbfs();
        let flows: Vec<_> = (1..=7).map(|s| flow(s, 0, 200_000)).collect();
        let mut sim = star_sim(8, cfg, &flows);
        run_to(&mut sim, 3_000 * US);
        let h = host(&sim);
        let generated = switch(&sim, 0).counters.postcards_generated;
        assert!(generated >= 7, "{mode:?}: {generated} postcards");
        assert_eq!(h.postcards_received, generated, "{mode:?}");
        match mode {
            BufferMode::Lossless => {
                assert_eq!(sim.counters.drops, 0);
                assert!(sim.scheme_stat("pfc", "pauses") > 0, "PFC never paused");
            }
            _ => assert!(sim.counters.drops > 0, "no data drops in the lossy run"),
        }
        assert!(sim.flows.iter().all(|f| f.finished()), "{mode:?}");
    }
}

/// A run without PB-FS has no `pbfs` section and no PB-FS state anywhere.
#[test]
fn off_by_default() {
    let mut sim = star_sim(3, NetConfig::default(), &[flow(0, 2, 100_000)]);
    run_to(&mut sim, 100 * US);
    assert!(sim.scheme_summaries().iter().all(|(n, _)| *n != "pbfs"));
    assert!(
        sim.host_schemes
            .iter()
            .all(|h| h.id() != <sfc::scheme::pbfs::switch::PbfsSwitch as Scheme>::ID)
    );
    assert!(sim.switches[0].schemes.pbfs.is_none());
}

/// The rate PB-FS hands over, as each controller takes it (`CongestionControl::set_rate`).
#[test]
fn each_controller_takes_the_rate() {
    use sfc::scenario::cc::preset;
    let bdp = 50_000;
    for name in ["dcqcn", "timely", "hpcc", "dctcp"] {
        let s = preset(name, LINE).unwrap();
        let mut c = s.cc.build(LINE, 16 * US, bdp);
        assert_eq!(c.rate_bps(), LINE, "{name} starts at line rate");
        c.on_scheme_signal(0, sfc::cc::SchemeSignal::SetRate(10 * GBPS));
        let r = c.rate_bps();
        assert!(r.abs_diff(10 * GBPS) <= 1, "{name}: {r}");
        if let sfc::cc::Cc::Dcqcn(d) = &c {
            // A cut without a CNP: the target keeps the rate before it.
            assert_eq!(d.target_rate_bps(), LINE);
        }
        // Never above the line rate.
        c.on_scheme_signal(0, sfc::cc::SchemeSignal::SetRate(2 * LINE));
        assert_eq!(c.rate_bps(), LINE, "{name}");
    }
}

const SCENARIO: &str = r#"
name = "pbfs_star"
[topology]
kind = "star"
hosts = 3
host_rate = "25Gbps"
host_delay = "1us"
[cc]
kind = "none"
window = "none"
[[traffic]]
kind = "incast"
senders = [0, 1]
receivers = [2]
size = "1MB"
at = "0us"
sync_window = "0us"
"#;

fn scenario(extra: &str, sets: &[&str]) -> Result<sfc::scenario::Scenario, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sfc::scenario::from_str(
        &format!("{SCENARIO}\n{extra}"),
        "p.toml",
        std::path::Path::new("."),
        &sets,
    )
}

/// `[pbfs]` keys reach the configuration; defaults are the paper's.
#[test]
fn scenario_keys_and_defaults() {
    let s = scenario("[pbfs]\nenabled = true\n", &[]).unwrap();
    assert_eq!(
        s.net.schemes.pbfs,
        PbfsConfig {
            enabled: true,
            ..PbfsConfig::default()
        }
    );
    assert_eq!(
        (
            s.net.schemes.pbfs.n_slots,
            s.net.schemes.pbfs.delta,
            s.net.schemes.pbfs.mu
        ),
        (8, 6, 0.95)
    );
    let s = scenario(
        "[pbfs]\nenabled = true\ndeploy = \"tor\"\nn_slots = 4\ndelta = 3\ndc_rtt = \"20us\"\ntau = \"5us\"\ni_min = \"4KB\"\nmu = 0.9\n",
        &[],
    )
    .unwrap();
    let p = &s.net.schemes.pbfs;
    assert_eq!(p.deploy, sfc::scheme::pbfs::PbfsDeploy::Tor);
    assert_eq!(
        (p.n_slots, p.delta, p.dc_rtt_ps, p.tau_ps),
        (4, 3, 20 * US, 5 * US)
    );
    assert_eq!((p.i_min_bytes, p.mu), (4_000, 0.9));
    // The run: both senders use PB-FS and get a postcard from the one switch (1 link away).
    let mut sim = Simulator::new(s.topo, s.net, s.cc, &s.flows).unwrap();
    sim.run_quiet();
    let j = pbfs_json(&sim);
    assert_eq!(j["flows_using_pbfs"], 2);
    assert!(j["rate_updates"].as_u64().unwrap() >= 1);
    assert!(j["postcard_hops_hist"][1].as_u64().unwrap() >= 1);
}

/// Bad values are errors naming the key (never a panic).
#[test]
fn scenario_errors_name_the_key() {
    for (extra, key) in [
        ("[pbfs]\nenabled = true\nn_slots = 0\n", "pbfs.n_slots"),
        ("[pbfs]\nenabled = true\nn_slots = 5000\n", "pbfs.n_slots"),
        ("[pbfs]\nenabled = true\ndelta = 0\n", "pbfs.delta"),
        ("[pbfs]\nenabled = true\nmu = 0.0\n", "pbfs.mu"),
        ("[pbfs]\nenabled = true\nmu = 1.5\n", "pbfs.mu"),
        (
            "[pbfs]\nenabled = true\ndeploy = \"spine\"\n",
            "pbfs.deploy",
        ),
        ("[pbfs]\nenabled = true\ntau = \"fast\"\n", "pbfs.tau"),
        ("[pbfs]\nenabled = true\ni_min = \"-3KB\"\n", "pbfs.i_min"),
        ("[pbfs]\nenabled = true\nslots = 3\n", "slots"),
    ] {
        let Err(e) = scenario(extra, &[]) else {
            panic!("{extra}: accepted");
        };
        assert!(e.contains(key), "{extra}: {e}");
    }
    // Keys while PB-FS is off only warn.
    let s = scenario("[pbfs]\ndelta = 4\n", &[]).unwrap();
    assert!(!s.net.schemes.pbfs.enabled);
    assert!(
        s.warnings.iter().any(|w| w.contains("pbfs.delta")),
        "{:?}",
        s.warnings
    );
    // `--set` switches it on.
    let s = scenario("", &["pbfs.enabled=true"]).unwrap();
    assert!(s.net.schemes.pbfs.enabled);
}

/// The paper's topology (§V-A) as a `three_tier` scenario: 320 hosts, 20 ToRs, 20 aggregation
/// switches, 16 cores, 25 G host / 100 G fabric links of 2 µs. Shape keys are required; keys
/// of other kinds are errors.
#[test]
fn three_tier_topology_kind() {
    let topo = |extra: &str| {
        sfc::scenario::from_str(
            &format!(
                "[topology]\nkind = \"three_tier\"\n{extra}host_rate = \"25Gbps\"\nhost_delay = \"2us\"\nfabric_rate = \"100Gbps\"\nfabric_delay = \"2us\"\n[cc]\nkind = \"none\"\n[[traffic]]\nkind = \"permutation\"\nsize = \"10KB\"\n"
            ),
            "t.toml",
            std::path::Path::new("."),
            &[],
        )
    };
    let s = topo(
        "pods = 5\ntors_per_pod = 4\naggs_per_pod = 4\ncores_per_agg = 4\nhosts_per_tor = 16\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.topo.hosts().len(), 320);
    assert_eq!(s.topo.links.len(), 320 + 20 * 4 + 20 * 4);
    let tiers = shapes::tiers(&s.topo);
    for (tier, n) in [(1u8, 20), (2, 20), (3, 16)] {
        assert_eq!(tiers.iter().filter(|&&t| t == tier).count(), n);
    }
    let Err(e) = topo("pods = 5\ntors_per_pod = 4\naggs_per_pod = 4\ncores_per_agg = 4\n") else {
        panic!("accepted without hosts_per_tor");
    };
    assert!(e.contains("topology.hosts_per_tor"), "{e}");
    let Err(e) = topo(
        "k = 4\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\ncores_per_agg = 4\nhosts_per_tor = 16\n",
    ) else {
        panic!("accepted k");
    };
    assert!(e.contains("topology.k"), "{e}");
}

/// The two-flow case of `two_line_rate_flows_one_postcard_each_and_algorithm_1_rate` with the
/// DCQCN and DCTCP presets (their ECN / CNP settings; no INT, so packets stay 1048 B): the
/// postcards arrive at 4038 ns, before any ACK or CNP (the queue at the port, ≤ 10 PKT by
/// 4.5 µs, is below both presets' marking thresholds), so at 4.5 µs each flow runs at the
/// Algorithm 1 rate derived there, handed over through `CongestionControl::set_rate`.
#[test]
fn dcqcn_and_dctcp_run_at_the_postcard_rate() {
    use sfc::scenario::cc::preset;
    for name in ["dcqcn", "dctcp"] {
        let s = preset(name, LINE).unwrap();
        assert_eq!(s.int_bytes, 0);
        let cfg = NetConfig {
            core: sfc::config::CoreConfig {
                ecn: s.ecn,
                cnp: s.cnp,
                ack_high_prio: s.ack_high_prio,
                ..Default::default()
            },
            schemes: SchemeConfigs {
                pbfs: pbfs(),
                ..Default::default()
            },
        };
        let topo = shapes::star(3, LINE, US).unwrap();
        let mut sim = Simulator::new(
            topo,
            cfg,
            s.cc,
            &[flow(0, 2, 1_000_000), flow(1, 2, 1_000_000)],
        )
        .unwrap();
        run_to(&mut sim, 4_500_000);
        assert_eq!(sim.counters.cnps, 0, "{name}");
        let h = host(&sim);
        assert_eq!(h.rate_updates, 2, "{name}");
        let mut rates: Vec<u64> = (0..2)
            .map(|f| sim.flow_cc(f).expect("flow active").rate_bps())
            .collect();
        rates.sort();
        assert!(rates[0].abs_diff(16_025_050_451) <= 2, "{name}: {rates:?}");
        assert!(rates[1].abs_diff(19_536_391_155) <= 2, "{name}: {rates:?}");
        if let Some(sfc::cc::CcRef::Dcqcn(d)) = sim.flow_cc(0) {
            // Recovery heads back to the line rate the flow had before the correction.
            assert_eq!(d.target_rate_bps(), LINE);
        }
    }
}

/// Path length of postcards: two racks of 2 hosts under one spine (25 G hosts, 100 G fabric,
/// 1 µs links). Hosts 0 and 1 (rack 0) send line-rate flows to host 2 (rack 1): the only
/// oversubscribed port is ToR 1's port to host 2 (50 G in, 25 G out; the 100 G uplinks carry
/// 50 G), so every postcard comes from ToR 1 (switch index 1), about a ToR down-port, 3 links
/// from its sender (ToR 1 → spine → ToR 0 → sender). Senders' marked packets are assessed at
/// the three switches of their path.
#[test]
fn postcards_from_the_remote_tor_travel_three_links() {
    let topo = shapes::leaf_spine(shapes::LeafSpine {
        spines: 1,
        tors: 2,
        hosts_per_tor: 2,
        host_rate_bps: LINE,
        host_delay_ps: US,
        fabric_rate_bps: 4 * LINE,
        fabric_delay_ps: US,
        links_per_spine: 1,
    })
    .unwrap();
    let cfg = NetConfig {
        schemes: SchemeConfigs {
            pbfs: pbfs(),
            ..Default::default()
        },
        ..NetConfig::default()
    };
    let mut sim = Simulator::new(
        topo,
        cfg,
        CcConfig::none_unlimited(),
        &[flow(0, 2, 1_000_000), flow(1, 2, 1_000_000)],
    )
    .unwrap();
    run_to(&mut sim, 60 * US);
    let (tor0, tor1, spine) = (switch(&sim, 0), switch(&sim, 1), switch(&sim, 2));
    assert_eq!(tor0.counters.postcards_generated, 0);
    assert_eq!(spine.counters.postcards_generated, 0);
    let n = tor1.counters.postcards_generated;
    assert!(n >= 2, "{n}");
    assert_eq!(tor1.counters.hops_hist[3], n);
    assert_eq!(tor1.counters.postcards_tor_down, n);
    let m = host(&sim).marked_packets;
    for sw in [tor0, tor1, spine] {
        assert_eq!(sw.counters.marked_assessed, m);
    }
    assert_eq!(host(&sim).postcards_received, n);
}

/// PB-FS hands DCQCN a corrected rate as a cut that no CNP caused: R_C = the corrected rate,
/// R_T = the rate before it (the line rate), and DCQCN's recovery restarts from it. With
/// HPCC-sim's DCQCN (RP timer 300 µs, F = 1) and no CNP ever (a 25 G port fed by two
/// flows below any ECN threshold after the correction), the 2 MB flow keeps its corrected
/// rate r₀ until its increase timer fires 300 µs after the correction, then runs at
/// r₀/2 + 25 G/2 (fast recovery towards R_T, each half truncated). Before, R_T was set to
/// r₀ and the timer did not exist before a CNP: the flow kept r₀ to its end.
#[test]
fn dcqcn_recovers_from_a_pbfs_correction_without_a_cnp() {
    let cfg = NetConfig {
        schemes: SchemeConfigs {
            pbfs: pbfs(),
            ..Default::default()
        },
        ..NetConfig::default()
    };
    let topo = shapes::star(3, LINE, US).unwrap();
    let cc = CcConfig::Dcqcn(sfc::cc::dcqcn::DcqcnParams::hpcc_preset(LINE));
    let flows = [flow(0, 2, 2_000_000), flow(1, 2, 60_000)];
    let mut sim = Simulator::new(topo, cfg, cc, &flows).unwrap();
    // Both postcards reach their senders at 4038 ns (see the two-flow test above).
    run_to(&mut sim, 4_038_000 + 1_000);
    let r0 = sim.flow_cc(0).expect("active").rate_bps();
    assert!(r0 < LINE, "the 2 MB flow was corrected: {r0}");
    assert_eq!(host(&sim).rate_updates, 2);
    run_to(&mut sim, 4_038_000 + 300 * US - 1_000);
    assert_eq!(
        sim.flow_cc(0).expect("active").rate_bps(),
        r0,
        "no CNP, no change"
    );
    run_to(&mut sim, 4_038_000 + 300 * US + 1_000);
    assert_eq!(
        sim.flow_cc(0).expect("active").rate_bps(),
        r0 / 2 + LINE / 2,
        "fast recovery towards the rate before the correction"
    );
}

// ------------------------------------------------------------------------------------------
// PFC head-of-line blocking: what PB-FS removes (the mechanism behind Fig. 5's "over eight
// times shorter").

/// Victim sent by host 4, 1,000 B to host 6; the rest of the setting is [`hol`]'s.
const VICTIM_AT: u64 = 60 * US;

/// A dumbbell (`shapes::dumbbell(5, 2, 25 G, 1 µs, 100 G, 1 µs)`: hosts 0–4 on the left
/// switch, node 7, whose port 5 is the uplink; hosts 5, 6 on the right switch, node 8) with a
/// 1 MB lossless buffer per switch and PFC at its defaults, no controller (`none`, with
/// `window`). Hosts 0–3 each send 2 MB to host 5 from t = 0 — 4 × 25 G into one 25 G port,
/// carried by the 100 G uplink without a queue of its own — and host 4 sends one packet (the
/// victim, flow 0) to host 6, whose port is idle, at [`VICTIM_AT`]. All in priority 3, the
/// one lossless class. Returns the finished run.
fn hol(pbfs_on: bool, window: sfc::cc::none::NoneWindow) -> Simulator {
    let mut cfg = NetConfig::from(sfc::config::CoreConfig {
        buffer: BufferConfig {
            mode: BufferMode::Lossless,
            size_bytes: 1_000_000,
            dt_alpha: 1.0,
        },
        ..Default::default()
    });
    if pbfs_on {
        cfg.schemes.pbfs = pbfs();
    }
    let topo = shapes::dumbbell(5, 2, LINE, US, 4 * LINE, US).unwrap();
    let mut flows = vec![FlowSpec {
        start_ps: VICTIM_AT,
        ..flow(4, 6, 1000)
    }];
    flows.extend((0..4).map(|h| flow(h, 5, 2_000_000)));
    let cc = CcConfig::None(sfc::cc::none::NoneParams { window });
    let mut sim = Simulator::new(topo, cfg, cc, &flows).unwrap();
    sim.cfg.stop_ps = u64::MAX;
    sim.run_quiet();
    assert_eq!(sim.counters.drops, 0);
    assert_eq!(sim.counters.flows_completed, 5);
    sim
}

/// The victim's FCT and the PAUSE frames received before it finished.
fn victim(sim: &Simulator) -> (u64, usize) {
    let fct = sim.flow_records()[0].fct_ps.expect("victim finished");
    let pauses = sim
        .pause_log()
        .iter()
        .filter(|r| r.pause && r.time_ps < VICTIM_AT + fct)
        .count();
    (fct, pauses)
}

/// The victim's FCT when nothing holds it, and at most what it can wait behind the incast's
/// packets when nothing is queued (by hand, picoseconds).
///
/// Base: its 1,048 B packet serialized at 25 G (335 ns: 335.36 truncated, as HPCC-sim does),
/// at 100 G (83 ns) and at 25 G again, its 60 B ACK at 25 G, 100 G, 25 G (19 + 4 + 19 ns),
/// 6 links of 1 µs: 6,795 ns. Its own path (host 4's link, port 6) is idle; the uplink carries
/// the incast, whose 4 ingresses each deliver at most one packet per 335 ns while the uplink
/// sends four in 332 ns, so with no PAUSE at most one packet of each sender is ahead of the
/// victim there (4 × 83 ns) and one ACK ahead of its ACK on the way back (4 ns): ≤ 7,131 ns.
fn unblocked_fct_ps() -> (u64, u64) {
    let ser = |b: u64, r: u64| sfc::units::ser_time_ps_hpcc(b, r);
    let base = 2 * ser(PKT, LINE) + ser(PKT, 4 * LINE) + 2 * ser(60, LINE) + ser(60, 4 * LINE);
    let base = base + 6 * US;
    assert_eq!(base, 6_795_000);
    (base, base + 4 * ser(PKT, 4 * LINE) + ser(60, 4 * LINE))
}

/// Head-of-line blocking by a PFC PAUSE, by hand.
///
/// Thresholds (`specs/dt.md`): the right switch's shared pool is 1 MB − 2 × 9,375 (headroom
/// of a 25 G port: 3 × 3,125 B) − 37,500 (the 100 G uplink's) − 3 × 4,096 (reserves) =
/// 931,462 B; its uplink ingress (α = 1/8 doubled twice from 25 G to 100 G: 1/2) pauses the
/// left switch's uplink when its shared bytes s reach (931,462 − s)/2, s = 310,487 B: a queue
/// towards host 5 of 314,583 B = 300.2 packets. That queue grows by 3 packets per 335 ns (4
/// arrive, 1 leaves) from ≈ 2.4 µs, so XOFF comes at t_x ≈ 2.4 + 100.1 × 0.335 = 35.9 µs and
/// reaches node 7's port 5 a link later, at ≈ 36.9 µs. The left switch's sender ingresses
/// (pool 891,049 B, α = 1/8, four of them) pause their hosts only at s = 891,049/12 = 74,254 B
/// each (≈ 70 µs), so until then the uplink queue receives the 4 line rates, 4 × 1,048 B per
/// 335 ns = 12.513 B/ns.
///
/// After t_x the uplink brings into the right switch no more than port 5 drains (1,048 B per
/// 335 ns = 3.128 B/ns) plus the rise of the right ingress's occupancy, ≤ its headroom and a
/// packet (38,548 B). The victim reaches the left switch at t_a = 60 µs + 1,335 ns; with
/// t_x ≤ 37 µs (1 µs of margin) the left uplink queue ahead of it, arrivals − departures since
/// t_x − 1 µs, is ≥ (12.513 − 3.128) B/ns × 25,335 ns − 38,548 B = 199,221 B. Those bytes
/// leave no faster than port 5 drains plus what the right ingress can
/// take in above its XON level (headroom + the 3,072 B XON offset + a packet: 41,620 B): the
/// victim waits ≥ (199,221 − 41,620) B / 3.128 B/ns = 50,384 ns, FCT ≥ 57,179 ns, 8.4 × its
/// base, although its own path is idle.
///
/// With PB-FS (N = 8, Δ = 6, DC_RTT = 16 µs): each 2 MB flow's marked packet 6 finds port 5's
/// slots overflowing (4 line rates into one), so postcards cut the senders within the first
/// RTT, when the queue towards host 5 holds < 9.4 B/ns × 10 µs ≈ 94 KB, a third of what
/// pauses: no PAUSE before the victim is done, and its FCT is the unblocked one (≤ 7,131 ns;
/// `unblocked_fct_ps`). No controller nor window is needed for that.
///
/// With a window of 50,000 B per flow (50 packets, 52,400 B on the wire) the 4 senders never
/// have more than 209,600 B in flight, below the 314,583 B at which the right ingress pauses
/// (and each left ingress holds < 74,254 B): no PAUSE ever, with or without PB-FS, and the
/// victim's FCT is the unblocked one in both runs — PB-FS has no blocking to remove. This is
/// the `pbfs-fig5` setting, where PFC does not pause at all in the quick run.
#[test]
fn pfc_pause_blocks_a_one_packet_victim_and_pbfs_removes_the_pause() {
    use sfc::cc::none::NoneWindow;
    let (base, unblocked) = unblocked_fct_ps();
    let blocked_min = base + 50_384_000;

    // No PB-FS, no window: the incast pauses the uplink and the victim waits behind it.
    let sim = hol(false, NoneWindow::Unlimited);
    let (fct, pauses) = victim(&sim);
    let first = sim.pause_log().into_iter().find(|r| r.pause).unwrap();
    assert_eq!((first.node, first.port, first.is_switch), (7, 5, true));
    assert!(
        (36 * US..38 * US).contains(&first.time_ps),
        "first PAUSE at {} ps, by hand 36.9 µs",
        first.time_ps
    );
    assert!(pauses > 0);
    assert!(
        fct >= blocked_min,
        "blocked victim {fct} ps < {blocked_min}"
    );

    // PB-FS, still no window nor controller: no PAUSE before the victim is done.
    let sim = hol(true, NoneWindow::Unlimited);
    let (fct, pauses) = victim(&sim);
    assert!(
        (base..=unblocked).contains(&fct),
        "victim {fct} ps with PB-FS, unblocked {base}..={unblocked}"
    );
    assert_eq!(pauses, 0);
    assert_eq!(host(&sim).rate_updates, 4, "every incast sender corrected");

    // A window small enough that PFC never pauses: nothing for PB-FS to remove.
    for on in [false, true] {
        let sim = hol(on, NoneWindow::Bytes(50_000));
        let (fct, _) = victim(&sim);
        assert_eq!(sim.scheme_stat("pfc", "pauses"), 0, "PB-FS {on}");
        assert!(
            (base..=unblocked).contains(&fct),
            "PB-FS {on}: victim {fct} ps, unblocked {base}..={unblocked}"
        );
    }
}
