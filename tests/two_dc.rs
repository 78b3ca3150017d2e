//! Two data centers (BFC Fig. 9): the `two_dc` topology kind, per-switch buffer
//! sizes, the destination-locality knob of the open-loop generators and per-pair windows, each
//! through a scenario file, with expected values derived by hand.
//!
//! The small two-DC shape used here: per DC 2 ToRs × 2 hosts and 2 spines, hosts and fabric at
//! 10 Gb/s with 1 µs of propagation, gateway–spine links at 100 Gb/s / 1 µs, the gateways
//! joined by a 100 Gb/s link with 200 µs. Nodes: hosts 0–3 (DC 0) and 4–7 (DC 1), ToRs 8–11,
//! spines 12–15, gateways 16 and 17.

use sfc::sim::Simulator;
use sfc::units::{GBPS, NS, US};

const TOPO: &str = r#"
name = "two-dc"
[topology]
kind = "two_dc"
spines = 2
tors = 2
hosts_per_tor = 2
host_rate = "10Gbps"
fabric_rate = "10Gbps"
gateway_rate = "100Gbps"
dci_rate = "100Gbps"
dci_delay = "200us"
"#;

/// Load a scenario; one long-lived flow (host 0 → 1) is added when it has no traffic.
fn load(text: &str) -> Result<sfc::scenario::Scenario, String> {
    let mut t = text.to_string();
    if !t.contains("[[traffic]]") {
        t.push_str("[[traffic]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nsize = \"1MB\"\n");
    }
    sfc::scenario::from_str(&t, "t.toml", std::path::Path::new("."), &[])
}

/// `TOPO` plus `extra`, which must be rejected with an error naming `key` and saying `words`.
fn rejected(base: &str, extra: &str, key: &str, words: &str) {
    let Err(e) = load(&format!("{base}{extra}")) else {
        panic!("accepted: {extra}");
    };
    assert!(e.contains(key) && e.contains(words), "{extra}:\n{e}");
}

#[test]
fn two_dc_scenario_builds_the_shape_and_its_rtts() {
    let sc = load(TOPO).unwrap();
    assert_eq!(sc.topo.hosts(), (0..8).collect::<Vec<_>>());
    assert_eq!(sc.topo.switches(), (8..18).collect::<Vec<_>>());
    let dci = sc.topo.links.last().unwrap();
    assert_eq!(
        (dci.a, dci.b, dci.rate_bps, dci.delay_ps),
        (16, 17, 100 * GBPS, 200 * US)
    );
    // Inter-DC base RTT (HPCC-sim's, 1000 B payload): 2 × (6 × 1 µs + 200 µs) of propagation
    // plus one serialization per link: 4 links at 10 G (800 ns) and 3 at 100 G (80 ns).
    let rt = sfc::topology::routing::RouteTable::try_build(&sc.topo).unwrap();
    let p = rt.path(&sc.topo, 0, 7);
    assert_eq!(p.hops, 7);
    assert_eq!(
        p.base_rtt_ps(&sc.topo, 1000),
        412 * US + 4 * 800 * NS + 3 * 80 * NS
    );
    // Missing or bad keys: clear errors.
    let no_delay = TOPO.replace("dci_delay = \"200us\"\n", "");
    let e = load(&no_delay).err().unwrap();
    assert!(e.contains("needs `topology.dci_delay`"), "{e}");
    let zero = TOPO.replace("dci_rate = \"100Gbps\"", "dci_rate = \"0Gbps\"");
    let e = load(&zero).err().unwrap();
    assert!(e.contains("topology.dci_rate"), "{e}");
    let ls = "name = \"ls\"\n[topology]\nkind = \"leaf_spine\"\nspines = 2\ntors = 2\nhosts_per_tor = 2\n";
    rejected(
        &ls.replace(
            "hosts_per_tor = 2\n",
            "hosts_per_tor = 2\ndci_delay = \"1ms\"\n",
        ),
        "",
        "topology.dci_delay",
        "does not apply",
    );
}

#[test]
fn per_switch_buffer_sizes_resolve_and_are_used() {
    let sc = load(&format!(
        "{TOPO}[buffer]\nmode = \"lossless\"\nsize = \"9MB\"\nswitch_sizes = {{ gateways = \"60MB\", 12 = \"1MB\" }}\n"
    ))
    .unwrap();
    let mut got = sc.net.switch_buffer_bytes.clone();
    got.sort_unstable();
    assert_eq!(
        got,
        vec![(12, 1_000_000), (16, 60_000_000), (17, 60_000_000)]
    );
    assert_eq!(sc.net.buffer_of(16).size_bytes, 60_000_000);
    assert_eq!(sc.net.buffer_of(8).size_bytes, 9_000_000);
    let sim = Simulator::new(sc.topo, sc.net, sc.cc, &[]).unwrap();
    for sw in &sim.switches {
        let want = match sw.node {
            16 | 17 => 60_000_000,
            12 => 1_000_000,
            _ => 9_000_000,
        };
        assert_eq!(sw.mmu.cfg.size_bytes, want, "switch {}", sw.node);
    }
    // Bad entries: each a clear error naming the key.
    let b = |t: &str| format!("[buffer]\nmode = \"lossless\"\nswitch_sizes = {{ {t} }}\n");
    rejected(
        TOPO,
        &b("3 = \"1MB\""),
        "buffer.switch_sizes",
        "node 3 is a host, not a switch (switches: 8..=17)",
    );
    rejected(
        TOPO,
        &b("99 = \"1MB\""),
        "buffer.switch_sizes",
        "node 99 does not exist",
    );
    rejected(
        TOPO,
        &b("spine = \"1MB\""),
        "buffer.switch_sizes.spine",
        "neither a switch node id nor `gateways`",
    );
    rejected(TOPO, &b("16 = \"lots\""), "buffer.switch_sizes.16", "lots");
    rejected(
        TOPO,
        &b("16 = \"1KB\""),
        "buffer.switch_sizes",
        "smaller than two packets",
    );
    rejected(
        "name = \"s\"\n[topology]\nkind = \"star\"\nhosts = 3\n",
        &b("gateways = \"1MB\""),
        "buffer.switch_sizes.gateways",
        "two_dc",
    );
}

/// Two senders into one receiver through a star switch (node 3) with a lossy buffer: 20 KB
/// cannot hold the excess of two 1 MB line-rate flows into one link (≈ 1 MB), so packets drop;
/// with the switch's own size at 10 MB nothing drops and the buffer holds far more than 20 KB.
#[test]
fn a_per_switch_buffer_size_is_respected() {
    let run = |own: Option<u64>| {
        let topo = sfc::topology::shapes::star(3, 10 * GBPS, US).unwrap();
        let mut net = sfc::config::CoreConfig {
            buffer: sfc::config::BufferConfig {
                mode: sfc::config::BufferMode::Lossy,
                size_bytes: 20_000,
                dt_alpha: 1.0,
            },
            ..Default::default()
        };
        if let Some(b) = own {
            net.switch_buffer_bytes = vec![(3, b)];
        }
        let flows = [
            sfc::workload::FlowSpec::background(1, 0, 1_000_000, 0),
            sfc::workload::FlowSpec::background(2, 0, 1_000_000, 0),
        ];
        let mut sim = Simulator::new(
            topo,
            net.into(),
            sfc::cc::CcConfig::none_unlimited(),
            &flows,
        )
        .unwrap();
        sim.run_quiet();
        sim.finish();
        let peak = sim.switches[0].mmu.peak_bytes;
        (sim.counters.drops, peak)
    };
    let (drops, peak) = run(None);
    assert!(drops > 0 && peak <= 20_000, "{drops} drops, peak {peak}");
    let (drops, peak) = run(Some(10_000_000));
    assert_eq!(drops, 0);
    assert!(peak > 500_000, "peak {peak}");
    // A per-switch entry that is not a switch: refused by the simulator too.
    let topo = sfc::topology::shapes::star(3, 10 * GBPS, US).unwrap();
    let net = sfc::config::CoreConfig {
        switch_buffer_bytes: vec![(0, 1_000_000)],
        ..Default::default()
    };
    let e = Simulator::new(topo, net.into(), sfc::cc::CcConfig::none_unlimited(), &[])
        .err()
        .unwrap();
    assert!(e.contains("node 0 is a host, not a switch"), "{e}");
}

#[test]
fn remote_fraction_sends_that_share_to_the_other_dc() {
    let text = format!(
        "{TOPO}[[traffic]]\nkind = \"lognormal\"\ncdf = \"fb_hadoop\"\nload = 0.5\nremote_fraction = 0.25\nduration = \"100ms\"\n"
    );
    let sc = load(&text).unwrap();
    let n = sc.flows.len() as f64;
    assert!(n > 3_000.0, "{n}");
    let dc = |h: u32| h / 4;
    let remote = sc.flows.iter().filter(|f| dc(f.src) != dc(f.dst)).count() as f64;
    // Binomial(n, 0.25): 4 standard deviations of the fraction.
    let sd = (0.25f64 * 0.75 / n).sqrt();
    assert!((remote / n - 0.25).abs() < 4.0 * sd, "{remote} of {n}");
    // Inter-DC flows carry dport 300, the others 100.
    assert!(
        sc.flows
            .iter()
            .all(|f| (f.dport == 300) == (dc(f.src) != dc(f.dst)))
    );
    // Bad values and topologies without data centers: clear errors.
    rejected(
        TOPO,
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\nremote_fraction = 1.5\nduration = \"1ms\"\n",
        "traffic[0].remote_fraction",
        "must be in [0, 1]",
    );
    rejected(
        "name = \"s\"\n[topology]\nkind = \"star\"\nhosts = 3\n",
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\nremote_fraction = 0.2\nduration = \"1ms\"\n",
        "traffic[0].remote_fraction",
        "two_dc",
    );
    // A single DC-1 host among the senders has no local peer.
    rejected(
        TOPO,
        "[[traffic]]\nkind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.5\nremote_fraction = 0.2\nhosts = [0, 1, 4]\nduration = \"1ms\"\n",
        "traffic[0].remote_fraction",
        "alone in site 1",
    );
    rejected(
        TOPO,
        "[[traffic]]\nkind = \"permutation\"\nsize = \"1KB\"\nremote_fraction = 0.2\n",
        "traffic[0].remote_fraction",
        "does not apply",
    );
}

/// `cc.window_scope = "pair"`: each DCQCN+Win flow's window is its own path's BDP.
/// Inter-DC (host 0 → 7): base RTT 415.44 µs (above) × 10 Gb/s / 8 = 519,300 B.
/// Same ToR (0 → 1): 2 × 2 µs + 2 × 800 ns = 5.6 µs → 7,000 B.
/// Other ToR, same DC (0 → 2): 2 × 4 µs + 4 × 800 ns = 11.2 µs → 14,000 B.
/// With the default global scope every flow gets the largest, 519,300 B.
#[test]
fn pair_window_scope_gives_each_flow_its_own_bdp() {
    let flows =
        "[[traffic]]\nkind = \"long_lived\"\npairs = [[0, 7], [0, 1], [0, 2]]\nsize = \"1MB\"\n";
    let windows = |scope: &str| {
        let sc = load(&format!(
            "{}stop = \"100ns\"\n{TOPO}[cc]\nkind = \"dcqcn+w\"\n{scope}{flows}",
            ""
        ))
        .unwrap();
        let mut sim = Simulator::new(sc.topo, sc.net, sc.cc, &sc.flows).unwrap();
        sim.run_quiet();
        let mut w: Vec<(u32, u64)> = (0..3)
            .map(|f| {
                let fl = &sim.flows[f];
                (fl.dst, sim.flow_cc(f).expect("active").window_bytes())
            })
            .collect();
        w.sort_unstable();
        w
    };
    assert_eq!(
        windows("window_scope = \"pair\"\n"),
        vec![(1, 7_000), (2, 14_000), (7, 519_300)]
    );
    assert_eq!(windows(""), vec![(1, 519_300), (2, 519_300), (7, 519_300)]);
    rejected(
        TOPO,
        "[cc]\nkind = \"dcqcn+w\"\nwindow_scope = \"local\"\n",
        "cc.window_scope",
        "expected `global`",
    );
    rejected(
        TOPO,
        "[cc]\nkind = \"hpcc\"\nwindow_scope = \"pair\"\n",
        "cc.window_scope",
        "does not apply",
    );
}

/// HPCC on the two-DC topology: an inter-DC path crosses six switches (ToR, spine, gateway,
/// gateway, spine, ToR), one more than the INT records a packet carries, so the scenario warns
/// (as `sfc hpcc` does); DCQCN does not.
#[test]
fn hpcc_across_six_switches_warns_about_int_records() {
    let hpcc = load(&format!("{TOPO}[cc]\nkind = \"hpcc\"\n")).unwrap();
    assert!(
        hpcc.warnings
            .iter()
            .any(|w| w.contains("crosses 6 switches") && w.contains("INT")),
        "{:?}",
        hpcc.warnings
    );
    let dcqcn = load(&format!("{TOPO}[cc]\nkind = \"dcqcn\"\n")).unwrap();
    assert!(
        !dcqcn.warnings.iter().any(|w| w.contains("INT")),
        "{:?}",
        dcqcn.warnings
    );
}
