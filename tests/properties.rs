//! Property-based tests: generated scenarios and HPCC-sim config/topology/flow
//! files — valid, mutated and truncated — never panic and never hang: each gives either a
//! clear error (naming a file, key or line) or a run whose invariants hold. Simulated time is
//! capped at 20 ms per case and cases are tiny, so the suite runs in seconds.

use proptest::prelude::*;
use std::path::Path;

/// Simulated-time cap of every generated run, picoseconds (20 ms).
const CAP_PS: u64 = 20 * sfc::units::MS;

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"1us\"".to_string()),
        Just("\"0ns\"".to_string()),
        Just("\"1e30s\"".to_string()),
        Just("\"100Gbps\"".to_string()),
        Just("\"1bps\"".to_string()),
        Just("\"4MiB\"".to_string()),
        Just("\"-1\"".to_string()),
        Just("0".to_string()),
        Just("1e-30".to_string()),
        Just("99999999999".to_string()),
        Just("[0, 1]".to_string()),
        Just("\"nan\"".to_string()),
        Just("true".to_string()),
    ]
}

/// A small valid scenario: a star of 2..=5 hosts, one generator, optional CC and buffer keys.
fn scenario() -> impl Strategy<Value = String> {
    (
        2u32..=5,
        prop_oneof![Just("none"), Just("dcqcn"), Just("hpcc"), Just("dctcp"), Just("timely")],
        prop_oneof![Just("lossy"), Just("lossless"), Just("unlimited")],
        1u64..64,
        0u32..3,
    )
        .prop_map(|(hosts, cc, mode, kb, which)| {
            let traffic = match which {
                0 => format!(
                    "kind = \"incast\"\nsenders = [{}]\nreceivers = [0]\nsize = \"{kb}KB\"\nat = \"1us\"",
                    (1..hosts).map(|h| h.to_string()).collect::<Vec<_>>().join(", ")
                ),
                1 => "kind = \"poisson\"\ncdf = \"fb_hadoop\"\nload = 0.3\nduration = \"20us\"".into(),
                _ => format!("kind = \"permutation\"\nsize = \"{kb}KB\""),
            };
            format!(
                "name = \"p\"\nseed = 3\n\n[topology]\nkind = \"star\"\nhosts = {hosts}\nhost_delay = \"1us\"\n\n[buffer]\nmode = \"{mode}\"\nsize = \"4MiB\"\n\n[cc]\nkind = \"{cc}\"\n\n[[traffic]]\n{traffic}\n"
            )
        })
}

/// Mutate a scenario: truncate it, replace a value, or add a key with an odd value.
fn mutated() -> impl Strategy<Value = String> {
    (
        scenario(),
        0usize..3,
        any::<prop::sample::Index>(),
        value(),
        prop_oneof![
            Just("topology.host_rate"),
            Just("buffer.dt_alpha"),
            Just("loss_recovery.rto"),
            Just("stop"),
            Just("output.buffer_interval"),
            Just("cc.eta"),
            Just("traffic.0.size"),
            Just("network.mtu"),
            Just("topology.hosts"),
            Just("ecn.kmin"),
            Just("pfc.quanta"),
        ],
    )
        .prop_map(|(text, how, at, val, key)| match how {
            0 => {
                let cut = at.index(text.len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| text.is_char_boundary(c))
                    .unwrap_or(0);
                text[..cut].to_string()
            }
            1 => {
                let lines: Vec<&str> = text.lines().collect();
                let i = at.index(lines.len());
                let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                if let Some((k, _)) = lines[i].split_once('=') {
                    out[i] = format!("{k}= {val}");
                }
                out.join("\n")
            }
            _ => format!("{text}\n# set {key}\n") + &set_line(key, &val),
        })
}

/// `key = value` appended in the right table (a new table header for dotted keys).
fn set_line(key: &str, val: &str) -> String {
    match key.split_once('.') {
        None => format!("{key} = {val}\n"),
        Some(("traffic", rest)) => format!(
            "[[traffic]]\nkind = \"permutation\"\n{} = {val}\n",
            rest.trim_start_matches("0.")
        ),
        Some((t, k)) => format!("[{t}]\n{k} = {val}\n"),
    }
}

/// Resolve `text`; if it resolves, run it (capped) and check that it ends cleanly.
fn check_scenario(text: &str) -> Result<(), TestCaseError> {
    let r =
        std::panic::catch_unwind(|| sfc::scenario::from_str(text, "p.toml", Path::new("."), &[]));
    let Ok(res) = r else {
        return Err(TestCaseError::fail(format!("panic resolving:\n{text}")));
    };
    match res {
        Err(e) => {
            // Each error starts with the file (TOML reader errors continue with a snippet).
            prop_assert!(
                e.starts_with("p.toml"),
                "error without the file name: {e}\n{text}"
            );
        }
        Ok(mut sc) => {
            sc.net.stop_ps = sc.net.stop_ps.min(CAP_PS);
            sc.stop_set = true;
            match sfc::report::run(sc, &sfc::report::RunOptions::default()) {
                Ok(r) => {
                    prop_assert!(r.sim.q.now() <= CAP_PS);
                    prop_assert!(r.outcome.flows_completed <= r.outcome.flows_total);
                }
                Err(e) => prop_assert!(
                    !e.contains("internal invariant"),
                    "invariant violated: {e}\n{text}"
                ),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn valid_scenarios_run_cleanly(text in scenario()) {
        let r = sfc::scenario::from_str(&text, "p.toml", Path::new("."), &[]);
        // A short Poisson generator may draw no flow at all: that is reported, not run.
        prop_assert!(
            r.as_ref().err().is_none_or(|e| e.contains("produced no flows")),
            "{:?}\n{text}",
            r.err()
        );
        check_scenario(&text)?;
    }

    #[test]
    fn mutated_scenarios_error_or_run(text in mutated()) {
        check_scenario(&text)?;
    }

    #[test]
    fn hpcc_inputs_error_or_run(
        cc in prop_oneof![Just("none"), Just("1"), Just("3"), Just("7"), Just("8"), Just("x")],
        extra in prop_oneof![Just(""), Just("DT_ALPHA 1e-30\n"), Just("BUFFER_SIZE 0.001\n"),
            Just("PACKET_PAYLOAD_SIZE 0\n"), Just("GBN_RTO_US 0.0000001\n"), Just("SIMULATOR_STOP_TIME 0\n"),
            Just("EWMA_GAIN 7\n"), Just("BUFFER_MODE lossy\n")],
        topo_cut in any::<prop::sample::Index>(),
        flow_cut in any::<prop::sample::Index>(),
        truncate in 0u8..3,
    ) {
        let dir = std::env::temp_dir().join(format!("sfc-prop-{}-{}", std::process::id(), topo_cut.index(1 << 30)));
        let _ = std::fs::create_dir_all(&dir);
        let topo = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n";
        let flows = "2\n0 1 3 100 10000 0.000001\n1 0 3 100 5000 0.000002\n";
        let cut = |t: &str, i: &prop::sample::Index, on: bool| if on { t[..i.index(t.len() + 1)].to_string() } else { t.to_string() };
        std::fs::write(dir.join("topo.txt"), cut(topo, &topo_cut, truncate == 1)).unwrap();
        std::fs::write(dir.join("flow.txt"), cut(flows, &flow_cut, truncate == 2)).unwrap();
        let cfg = format!("TOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nCC_MODE {cc}\nRP_TIMER 300\nEWMA_GAIN 0.0625\nSIMULATOR_STOP_TIME 0.01\n{extra}");
        let res = std::panic::catch_unwind(|| -> Result<(), String> {
            let (c, _) = sfc::hpcc::HpccConfig::parse(&cfg, "c.txt")?;
            let r = sfc::hpcc::resolve(&c, &dir)?;
            let flows = r.flows.into_vec()?;
            let mut sim = sfc::sim::Simulator::new(r.topo, r.net, r.cc, &flows)?;
            sim.cfg.stop_ps = sim.cfg.stop_ps.min(CAP_PS);
            sfc::runguard::run_watched(&mut sim, &mut |_| {});
            sim.finish();
            sim.check_invariants().map_err(|e| format!("internal invariant: {e}"))
        });
        let _ = std::fs::remove_dir_all(&dir);
        match res {
            Err(_) => prop_assert!(false, "panic on:\n{cfg}"),
            Ok(Err(e)) => prop_assert!(!e.contains("internal invariant") && !e.is_empty(), "{e}\n{cfg}"),
            Ok(Ok(())) => {}
        }
    }
}
