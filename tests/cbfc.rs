//! InfiniBand credit-based flow control (CBFC), TCD-IB and IB's FECN marking end to end
//! Expected values are derived by hand in each test's comment.
//!
//! HPCC framing at 100 Gb/s: a 1000 B payload is a 1048 B packet, serialized in 83 ns (83.84
//! truncated to whole ns, as HPCC-sim), 17 credit blocks of 64 B; a 43 B flow-control packet
//! (FCP) takes 3 ns. Links are 1 µs; switch and NIC pipeline delays are 0.

use sfc::cc::CcConfig;
use sfc::config::{BufferConfig, BufferMode, EcnConfig};
use sfc::registry::HostScheme;
use sfc::registry::NetConfig;
use sfc::registry::SchemeConfigs;
use sfc::scheme::cbfc::host::CbfcHost;
use sfc::scheme::cbfc::switch::CbfcSwitch;
use sfc::scheme::cbfc::{CbfcConfig, Credits};
use sfc::scheme::tcd::switch::TcdSwitch;
use sfc::scheme::tcd::{CeMarking, TcdConfig};
use sfc::sim::Simulator;
use sfc::topology::{TopologySpec, shapes};
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

const HOST: u64 = 100 * GBPS;
/// Data priority of `FlowSpec::background` flows = their VL.
const VL: usize = 3;
/// Blocks of a 1048 B packet.
const PKT_BLOCKS: u64 = 17;

fn flow(src: u32, dst: u32, size: u64) -> FlowSpec {
    FlowSpec::background(src, dst, size, 0)
}

/// A lossless CBFC fabric with `cbfc` settings, no marking.
fn net(cbfc: CbfcConfig) -> NetConfig {
    NetConfig {
        core: sfc::config::CoreConfig {
            buffer: BufferConfig {
                mode: BufferMode::Lossless,
                size_bytes: 4_000_000,
                dt_alpha: 1.0,
            },
            ..Default::default()
        },
        schemes: SchemeConfigs {
            cbfc: CbfcConfig {
                enabled: true,
                ..cbfc
            },
            ..Default::default()
        },
    }
}

fn sim(topo: TopologySpec, cfg: NetConfig, cc: CcConfig, flows: &[FlowSpec]) -> Simulator {
    Simulator::new(topo, cfg, cc, flows).unwrap()
}

/// Run until `t` (inclusive).
fn run_to(s: &mut Simulator, t: u64) {
    s.cfg.stop_ps = t;
    s.run_quiet();
}

fn cbfc_of(s: &Simulator, node: u32) -> &CbfcSwitch {
    let sw = s.switches.iter().find(|x| x.node == node).unwrap();
    sw.schemes.cbfc.as_ref().expect("CBFC runs on every switch")
}

fn host_half(s: &Simulator) -> &CbfcHost {
    s.host_schemes
        .iter()
        .find_map(|h| match h {
            HostScheme::Cbfc(c) => Some(c),
            _ => None,
        })
        .expect("CBFC host half")
}

fn host_credits(s: &Simulator, host: usize) -> Credits {
    let h = host_half(s);
    h.credits[host * h.nq + VL]
}

fn port_to(s: &Simulator, node: u32, peer: u32) -> usize {
    let sw = s.switches.iter().find(|x| x.node == node).unwrap();
    sw.ports
        .iter()
        .position(|p| p.tx.link.peer == peer)
        .unwrap()
}

fn summary(s: &Simulator) -> serde_json::Value {
    s.scheme_summaries()
        .into_iter()
        .find(|(n, _)| *n == "cbfc")
        .unwrap()
        .1
}

/// A sender with zero credits stops: with a limit of one packet (1048 B → 17 blocks) and
/// `T_c` = 10 µs on a star (hosts 0, 1; switch 2), host 0 sends packet 0 at 0 and is left
/// with 0 < 17 blocks: blocked. Packet 0 reaches the switch at 83 ns + 1 µs = 1.083 µs and
/// leaves at once towards host 1 (its blocks are freed). The switch's tick for that port
/// fires at the next multiple of T_c, 10 µs: FCP (FCCL = 17 + 17) serialized 3 ns, 1 µs on
/// the wire → host 0 at 11.003 µs, which sends packet 1 at that very instant (and is blocked
/// again). Packet 1 is freed at 11.003 + 1.083 = 12.086 µs, advertised at 20 µs, and packet 2
/// leaves at 21.003 µs: one packet per credit period, exactly as the receiver frees them.
#[test]
fn zero_credits_stop_the_sender_until_the_credit_update() {
    let cfg = net(CbfcConfig {
        limit_bytes: Some(1048),
        period_ps: Some(10 * US),
        ..CbfcConfig::default()
    });
    let topo = shapes::star(2, HOST, US).unwrap();
    let mut s = sim(topo, cfg, CcConfig::none_unlimited(), &[flow(0, 1, 10_000)]);
    let tx = |s: &Simulator| s.hosts[0].tx.link.tx_bytes;
    run_to(&mut s, 11_002_999);
    let c = host_credits(&s, 0);
    assert_eq!((c.sent, c.fccl, c.blocked, c.blockings), (17, 17, true, 1));
    assert_eq!(tx(&s), 1048, "nothing leaves host 0 without credits");
    // Two FCPs at 10 µs: towards host 0 (data freed) and host 1 (its ACK freed); both in flight.
    assert_eq!(cbfc_of(&s, 2).updates_sent, 2);
    assert_eq!(host_half(&s).updates_received, 0);
    run_to(&mut s, 11_003_000);
    let c = host_credits(&s, 0);
    assert_eq!((c.sent, c.fccl, c.blocked, c.blockings), (34, 34, true, 2));
    assert_eq!(
        c.blocked_ps, 11_003_000,
        "blocked from 0 to the FCP's arrival"
    );
    assert_eq!(tx(&s), 2 * 1048);
    run_to(&mut s, 21_002_999);
    assert_eq!(tx(&s), 2 * 1048);
    run_to(&mut s, 21_003_000);
    assert_eq!(tx(&s), 3 * 1048);
    assert_eq!(host_credits(&s, 0).fccl, 3 * PKT_BLOCKS);
    // The switch's ingress from host 0 never held more than its one-packet limit.
    let sw = cbfc_of(&s, 2);
    let p0 = port_to(&s, 2, 0);
    assert_eq!(sw.ingress[p0 * sw.nq + VL].max_occupancy, PKT_BLOCKS);
    assert_eq!(sw.overruns, 0);
}

/// Credits come back at the rate the receiver drains: host 0 (100 G) → left switch → 25 G
/// link → right switch → host 1 (dumbbell(1, 1); switches 2 and 3), `T_c` = 10 µs. The left
/// switch's ingress from host 0 drains at 25 G: one 1048 B packet per 335 ns (335.36
/// truncated), minus the wire time of the left switch's own FCPs on that link (one per tick
/// for the VL of host 1's ACKs: 40 in the window, 43 B = 13 ns each), so in [300 µs, 700 µs]
/// it frees ⌊(400 000 − 40 · 13) / 335⌋ = 1192 (or 1193, by phase) packets' blocks. Its FCPs hand them back within one tick (≤ 10 µs + 1.003 µs later), and the
/// NIC, blocked most of the time, sends what it gets: its bytes sent over the window equal
/// the blocks freed within one credit loop (≤ 11.003 µs · 25 G ≈ 33 packets), i.e. it runs at
/// 25 G, not at its 100 G line rate.
#[test]
fn credits_return_at_the_rate_the_receiver_drains() {
    let cfg = net(CbfcConfig {
        period_ps: Some(10 * US),
        ..CbfcConfig::default()
    });
    let topo = shapes::dumbbell(1, 1, HOST, US, 25 * GBPS, US).unwrap();
    let mut s = sim(
        topo,
        cfg,
        CcConfig::none_unlimited(),
        &[flow(0, 1, 10_000_000)],
    );
    let p0 = port_to(&s, 2, 0);
    let freed = |s: &Simulator| {
        let sw = cbfc_of(s, 2);
        sw.ingress[p0 * sw.nq + VL].freed
    };
    run_to(&mut s, 300 * US);
    let (f1, c1) = (freed(&s), host_credits(&s, 0));
    run_to(&mut s, 700 * US);
    let (f2, c2) = (freed(&s), host_credits(&s, 0));
    let drained = (f2 - f1) / PKT_BLOCKS;
    assert!(
        (1192..=1193).contains(&drained),
        "packets drained in 400 µs at 25 G: {drained}"
    );
    assert_eq!((f2 - f1) % PKT_BLOCKS, 0);
    let lag = 33 * PKT_BLOCKS;
    let returned = c2.fccl - c1.fccl;
    assert!(
        returned.abs_diff(f2 - f1) <= lag,
        "credits returned {returned} vs freed {}",
        f2 - f1
    );
    let sent = c2.sent - c1.sent;
    assert!(
        sent.abs_diff(f2 - f1) <= lag,
        "blocks sent {sent} vs freed {}",
        f2 - f1
    );
    // Blocked (waiting for credits) most of the window: ≥ 3/4 minus the burst times.
    assert!(c2.blockings > c1.blockings + 30);
    // The 25 G link's own credits (limit ≥ one credit loop at 25 G) never ran out.
    let sw = cbfc_of(&s, 2);
    let core = port_to(&s, 2, 3);
    assert_eq!(sw.credits[core * sw.nq + VL].blockings, 0);
}

/// A 7-to-1 incast under CBFC never drops and no (port, VL) ingress buffer ever holds more
/// than its credit limit, with the default limit and with a small one (20 000 B → 313
/// blocks). Dumbbell(4, 4): left hosts 0..3, right hosts 4..7, switches 8 (left) and 9
/// (right); hosts 0..3 and 5..7 send 1 MB each to host 4. The bottleneck (9 → 4) backs up
/// into the right switch's ingress buffers, which stop returning credits: the left switch's
/// port to the right switch and the NICs block; everything still completes.
#[test]
fn incast_under_cbfc_never_drops_and_occupancy_stays_within_the_limit() {
    let mut flows: Vec<FlowSpec> = (0..4).map(|h| flow(h, 4, 1_000_000)).collect();
    flows.extend((5..8).map(|h| flow(h, 4, 1_000_000)));
    for limit in [None, Some(20_000)] {
        let cfg = net(CbfcConfig {
            limit_bytes: limit,
            ..CbfcConfig::default()
        });
        let topo = shapes::dumbbell(4, 4, HOST, US, HOST, US).unwrap();
        let mut s = sim(topo, cfg, CcConfig::none_unlimited(), &flows);
        s.cfg.stop_ps = 20_000 * US;
        s.run_quiet();
        s.finish();
        s.check_invariants().unwrap();
        assert_eq!(s.counters.drops, 0, "limit {limit:?}");
        assert_eq!(s.counters.flows_completed, 7, "limit {limit:?}");
        assert_eq!(s.scheme_stat("pfc", "pauses"), 0, "PFC is off under CBFC");
        for sw in &s.switches {
            let c = sw.schemes.cbfc.as_ref().unwrap();
            assert_eq!(c.overruns, 0);
            for (i, g) in c.ingress.iter().enumerate() {
                assert!(
                    g.max_occupancy <= c.limit[i / c.nq],
                    "switch {} port {} VL {}: {} > {} blocks",
                    sw.node,
                    i / c.nq,
                    i % c.nq,
                    g.max_occupancy,
                    c.limit[i / c.nq]
                );
            }
        }
        // The limit was exercised: the right switch's ingress from the left switch filled to
        // more than 3/4 of it (the rest is on the wire or freed but not yet advertised), and
        // the left switch's port to the right switch blocked.
        let right = cbfc_of(&s, 9);
        let from_left = port_to(&s, 9, 8);
        let g = right.ingress[from_left * right.nq + VL];
        assert!(
            4 * g.max_occupancy > 3 * right.limit[from_left],
            "limit {limit:?}: ingress from the left switch peaked at {} of {} blocks",
            g.max_occupancy,
            right.limit[from_left]
        );
        let left = cbfc_of(&s, 8);
        let to_right = port_to(&s, 8, 9);
        assert!(left.credits[to_right * left.nq + VL].blockings > 0);
        let sum = summary(&s);
        assert_eq!(sum["overruns"], 0);
        assert!(sum["max_occupancy_over_limit"].as_f64().unwrap() <= 1.0);
        assert!(sum["host_blocked_ps"].as_u64().unwrap() > 0);
        assert!(sum["credit_updates_sent"].as_u64().unwrap() > 0);
        assert_eq!(sum["credit_updates_sent"], sum["credit_updates_received"]);
    }
}

/// A single flow over two switch hops reaches line rate with the default credit limit
/// (`cbfc::default_limit_blocks`: ⌈(T_c + 2 t_p + 7 f)/s⌉ + 3 packets = ⌈(26 214 400 +
/// 2 000 000 + 21 000)/83 000⌉ + 3 = 344 packets = 5848 blocks = 374 272 B at 100 G / 1 µs):
/// no VL ever blocks and the 10 MB flow completes in its ideal time. With half that limit
/// (172 packets = 14.3 µs of line rate < T_c) the sender runs dry every credit period.
#[test]
fn single_flow_reaches_line_rate_with_the_default_limit() {
    let run = |limit: Option<u64>| {
        let cfg = net(CbfcConfig {
            limit_bytes: limit,
            ..CbfcConfig::default()
        });
        let topo = shapes::dumbbell(1, 1, HOST, US, HOST, US).unwrap();
        let mut s = sim(
            topo,
            cfg,
            CcConfig::none_unlimited(),
            &[flow(0, 1, 10_000_000)],
        );
        s.cfg.stop_ps = 10_000 * US;
        s.run_quiet();
        s.finish();
        s
    };
    let s = run(None);
    let sw = cbfc_of(&s, 2);
    assert_eq!(sw.limit[port_to(&s, 2, 0)], 5848);
    assert_eq!(sw.limit[port_to(&s, 2, 3)], 5848);
    let r = &s.flow_records()[0];
    let slowdown = r.fct_ps.expect("completes") as f64 / r.ideal_fct_ps as f64;
    assert!(slowdown < 1.0005, "slowdown {slowdown}");
    let sum = summary(&s);
    assert_eq!(sum["blockings"], 0, "{sum}");
    // Half the limit: blocked, clearly slower.
    let s = run(Some(5848 / 2 * 64));
    let r = &s.flow_records()[0];
    let slowdown = r.fct_ps.expect("completes") as f64 / r.ideal_fct_ps as f64;
    assert!(host_credits(&s, 0).blockings > 10);
    assert!(slowdown > 1.3, "slowdown {slowdown} with half the limit");
}

/// The TCD victim topology (hosts 0, 1 on 50 G links to the left switch, node 8; hosts
/// 2..7 on 100 G to the right switch, node 9; 100 G core): contributor 0 → 2, victim 1 → 3,
/// incast 4..7 → 2. Under CBFC the contributor's packets queued at the hot port 9 → 2 fill
/// the right switch's ingress buffer from the left switch: the left switch's port 8 → 9
/// (whose own inputs are at most 2 × 50 G = its rate) is blocked for credits, and the victim
/// queues there.
fn victim_topo() -> TopologySpec {
    let mut t = String::from("10 2 9\n8 9\n0 8 50Gbps 1000ns 0\n1 8 50Gbps 1000ns 0\n");
    for h in 2..8 {
        t.push_str(&format!("{h} 9 100Gbps 1000ns 0\n"));
    }
    t.push_str("8 9 100Gbps 1000ns 0\n");
    sfc::topology::hpcc_file::parse(&t, "victim").unwrap()
}

fn victim_flows() -> Vec<FlowSpec> {
    let mut f = vec![flow(0, 2, 20_000_000), flow(1, 3, 20_000_000)];
    f.extend((4..=7).map(|s| flow(s, 2, 20_000_000)));
    f
}

/// Step marking at 40 KB: TCD-IB (`tcd`) or FECN (`!tcd`).
fn marking_net(tcd: bool) -> NetConfig {
    const K: u64 = 40_000;
    let mut n = net(CbfcConfig {
        fecn: !tcd,
        fecn_threshold_bytes: Some(K),
        ..CbfcConfig::default()
    });
    n.ecn = EcnConfig::step(K, &[50 * GBPS, 100 * GBPS]);
    n.schemes.tcd = TcdConfig {
        enabled: tcd,
        threshold_bytes: Some(K),
        ce_marking: CeMarking::Step,
        ..TcdConfig::default()
    };
    n
}

/// TCD-IB marks the credit-starved victim port UE and never CE (its ON periods are cut by
/// the credit updates: shorter than max(T_on) = T_c = 26.2144 µs), and the truly overloaded
/// port (right switch → host 2: 5 × 100 G of demand into 100 G, never credit-blocked) CE and
/// never UE. IB's FECN, on queue length alone (Victim_Mask set), marks the victim port's
/// packets too; without the Victim_Mask it mostly does not.
#[test]
fn tcd_ib_marks_the_victim_port_ue_not_ce() {
    let run = |tcd: bool| {
        let mut s = sim(
            victim_topo(),
            marking_net(tcd),
            CcConfig::none_unlimited(),
            &victim_flows(),
        );
        s.cfg.stop_ps = 1_000 * US;
        s.run_quiet();
        s.finish();
        s.check_invariants().unwrap();
        s
    };
    let s = run(true);
    assert!(s.switches.iter().all(|w| w.schemes.ecn.is_none()));
    let sw = s.switches.iter().find(|w| w.node == 8).unwrap();
    let l: &TcdSwitch = sw.schemes.tcd.as_ref().unwrap();
    let victim_port = port_to(&s, 8, 9);
    assert_eq!(
        l.params[victim_port].max_ton_ps, 26_214_400,
        "max(T_on) = T_c"
    );
    let c = cbfc_of(&s, 8);
    assert!(
        c.credits[victim_port * c.nq + VL].blockings > 0,
        "the victim port must run out of credits"
    );
    assert!(s.switches[0].ports[victim_port].queues[VL].off_end_ps > 0);
    let m = l.marks[victim_port * l.nq + VL];
    assert!(m.ue > 100, "victim port UE marks: {m:?}");
    assert_eq!(m.ce, 0, "victim port must never mark CE: {m:?}");
    let rsw = s.switches.iter().find(|w| w.node == 9).unwrap();
    let r: &TcdSwitch = rsw.schemes.tcd.as_ref().unwrap();
    let hot = port_to(&s, 9, 2) * r.nq + VL;
    assert!(r.marks[hot].ce > 100, "hot port: {:?}", r.marks[hot]);
    assert_eq!(r.marks[hot].ue, 0);
    assert_eq!(s.counters.drops, 0);
    assert_eq!(summary(&s)["fecn_marks"], 0, "TCD replaces FECN");

    // Baseline: FECN on queue length marks the victim port's packets as well.
    let b = run(false);
    assert!(b.switches.iter().all(|w| w.schemes.tcd.is_none()));
    assert!(
        cbfc_of(&b, 8).fecn_marks > 100,
        "FECN at the victim port: {}",
        cbfc_of(&b, 8).fecn_marks
    );
    assert!(cbfc_of(&b, 9).fecn_marks > 100);
    assert_eq!(b.counters.drops, 0);

    // Without IB's Victim_Mask a port released from a credit block within the last T_c does
    // not mark: the victim port (released every credit period) marks far less; the hot port
    // (never credit-blocked: it faces a host) marks as before.
    let mut cfg = marking_net(false);
    cfg.schemes.cbfc.fecn_victim_mask = false;
    let mut nv = sim(
        victim_topo(),
        cfg,
        CcConfig::none_unlimited(),
        &victim_flows(),
    );
    nv.cfg.stop_ps = 1_000 * US;
    nv.run_quiet();
    nv.finish();
    assert!(
        2 * cbfc_of(&nv, 8).fecn_marks < cbfc_of(&b, 8).fecn_marks,
        "victim port FECN without / with the victim mask: {} / {}",
        cbfc_of(&nv, 8).fecn_marks,
        cbfc_of(&b, 8).fecn_marks
    );
    assert!(cbfc_of(&nv, 9).fecn_marks > 100);
}

/// Bad `[cbfc]` input: an error naming the key, never a panic; PFC and CBFC together are an
/// error.
#[test]
fn scenario_keys_are_validated_with_the_key_named() {
    let base = r#"
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 2
[cc]
kind = "dcqcn"
[[traffic]]
kind = "long_lived"
pairs = [[0, 1]]
size = "1MB"
"#;
    let load = |extra: &str| {
        sfc::scenario::from_str(
            &format!("{base}{extra}"),
            "t.toml",
            std::path::Path::new("."),
            &[],
        )
    };
    let ok = load("[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\nfecn = true\nperiod = \"10us\"\nlimit = \"100KB\"\n").unwrap();
    assert!(ok.net.schemes.cbfc.enabled && ok.net.schemes.cbfc.fecn);
    assert_eq!(ok.net.schemes.cbfc.period_ps, Some(10 * US));
    assert_eq!(ok.net.schemes.cbfc.limit_bytes, Some(100_000));
    let err = |extra: &str, key: &str, words: &str| {
        let Err(e) = load(extra) else {
            panic!("accepted: {extra}");
        };
        assert!(e.contains(key) && e.contains(words), "{extra}: {e}");
    };
    err("[cbfc]\nenabled = true\n", "cbfc.enabled", "lossless");
    err(
        "[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\n[pfc]\nquanta = 100\n",
        "pfc.quanta",
        "PFC and CBFC",
    );
    err(
        "[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\nlimit = \"500B\"\n",
        "cbfc.limit",
        "full-size packet",
    );
    err(
        "[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\nperiod = \"0us\"\n",
        "cbfc.period",
        "positive",
    );
    err(
        "[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\nperiod = \"fast\"\n",
        "cbfc.period",
        "",
    );
    err(
        "[buffer]\nmode = \"lossless\"\n[cbfc]\nenabled = true\n[bfc]\nenabled = true\n",
        "bfc.enabled",
        "CBFC",
    );
}

/// CBFC on a link that loses packets is refused with a clear error (a lost packet would keep
/// its credits: IB's FCTBS resynchronisation is not modelled), not run silently.
#[test]
fn lossy_links_are_refused_under_cbfc() {
    let topo = sfc::topology::hpcc_file::parse(
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0.001\n",
        "lossy",
    )
    .unwrap();
    let r = Simulator::new(
        topo,
        net(CbfcConfig::default()),
        CcConfig::none_unlimited(),
        &[flow(0, 1, 10_000)],
    );
    let Err(e) = r else {
        panic!("CBFC on a lossy link was accepted");
    };
    assert!(
        e.contains("cbfc.enabled") && e.contains("lossy links"),
        "{e}"
    );
}
