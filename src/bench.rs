//! `sfc bench`: fixed benchmark scenarios, each run in a fresh child process so that its peak
//! RSS is its own. Reports wall time, events, packet-hops (one packet crossing one link),
//! packet-hops/s, events/s and peak RSS, and writes `out/bench.json`.

use std::time::Instant;

use serde_json::json;

use crate::cc::CcConfig;
use crate::cc::none::{NoneParams, NoneWindow};
use crate::config::LossRecovery;
use crate::registry::NetConfig;
use crate::sim::Simulator;
use crate::topology::shapes;
use crate::units::{GBPS, MS, US};
use crate::workload::{cdf, traffic};

/// A benchmark: name and a description.
pub struct Bench {
    /// Name (for `--filter` and the table).
    pub name: &'static str,
    /// What it runs.
    pub about: &'static str,
}

/// All benchmarks, in run order.
pub const BENCHES: &[Bench] = &[
    Bench {
        name: "hpcc-fat-ws30-dcqcn",
        about: "sfc hpcc: fat.txt, WebSearch 30% for 5 ms (seed 1), CC_MODE 1 (DCQCN preset), lossless PFC",
    },
    Bench {
        name: "hpcc-fat-ws30-dcqcn-pbfs",
        about: "hpcc-fat-ws30-dcqcn with PB-FS on (paper defaults): its cost per packet-hop vs the run without",
    },
    Bench {
        name: "hpcc-fat-ws30-dcqcn-tcd",
        about: "hpcc-fat-ws30-dcqcn with TCD on (fragment defaults) and DCQCN+TCD: its cost per packet-hop vs the run without",
    },
    Bench {
        name: "hpcc-fat-ws30-hpcc",
        about: "sfc hpcc: fat.txt, WebSearch 30% for 5 ms (seed 1), CC_MODE 3 (HPCC preset), lossless PFC",
    },
    Bench {
        name: "fattree320-websearch30",
        about: "HPCC fat.txt (320 hosts, 100/400G), WebSearch 30%, 5 ms of arrivals, IRN, 1-BDP window",
    },
    Bench {
        name: "bfc-t1-google-bfc",
        about: "BFC paper T1 (128 hosts, 8 ToRs × 16, 8 spines, 100 G, 1 µs, 12 MB lossless), Google 60 % lognormal + 5 % 100→1 × 20 MB incast, 1 ms of arrivals (seed 1); BFC, no CC",
    },
    Bench {
        name: "bfc-t1-google-dcqcn",
        about: "bfc-t1-google-bfc with DCQCN (Kmin 100 KB, Kmax 400 KB) instead of BFC: BFC's cost per packet-hop against DCQCN's",
    },
    Bench {
        name: "tcd-ws40-incast-dcqcn",
        about: "tcd-workload with 2 spines (32 hosts, leaf-spine 4:1, 100 G, lossless 2 MB PFC), WebSearch 40 % + 24:1 × 64 KB incasts at 5 %, 5 ms of arrivals (seed 1), DCQCN; PFC pauses happen. Quick: 1 ms",
    },
    Bench {
        name: "tcd-ws40-incast-dcqcn-tcd",
        about: "tcd-ws40-incast-dcqcn with TCD on every switch and DCQCN+TCD: TCD's cost per packet-hop against the run without",
    },
    Bench {
        name: "sec53-hadoop50-incast-none",
        about: "SFC paper §5.3 default (sfc-fig7): 512 hosts (8 spines, 16 ToRs × 32, 100/400 G), 32 MiB DT buffer, HPCC + IRN, Hadoop 50 % + 8 % 128:1 incast of 250 KB, 2 ms of arrivals; no flow control. Quick: 128 hosts, 32:1, 500 µs",
    },
    Bench {
        name: "sec53-hadoop50-incast-sfc",
        about: "sec53-hadoop50-incast-none with SFC (paper defaults)",
    },
    Bench {
        name: "sec53-rpc30-incast-none",
        about: "SFC paper §5.3 (sfc-fig8): as sec53-hadoop50-incast-none with Google RPC 30 % (mean 3.6 KB: ~0.7 M flows in 2 ms) instead of Hadoop",
    },
    Bench {
        name: "scale-64",
        about: "leaf-spine 64 hosts, FB_Hadoop 40%, 1 ms of arrivals",
    },
    Bench {
        name: "scale-256",
        about: "leaf-spine 256 hosts, FB_Hadoop 40%, 1 ms of arrivals",
    },
    Bench {
        name: "scale-1024",
        about: "leaf-spine 1024 hosts, FB_Hadoop 40%, 1 ms of arrivals",
    },
];

/// HPCC-sim `config.txt` used by the `hpcc-*` benchmarks (`run.py` presets at 100 G).
fn hpcc_config(cc_mode: u32) -> String {
    let (win, ack_hi) = if cc_mode == 3 { (1, 0) } else { (0, 1) };
    format!(
        "TOPOLOGY_FILE fat.txt\nFLOW_FILE flow.txt\nSIMULATOR_STOP_TIME 4.0\nPACKET_PAYLOAD_SIZE 1000\n\
         CC_MODE {cc_mode}\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 300\n\
         EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 40Mb/s\nRATE_HAI 200Mb/s\nMIN_RATE 1000Mb/s\n\
         DCTCP_RATE_AI 615Mb/s\nL2_ACK_INTERVAL 1\nHAS_WIN {win}\nGLOBAL_T 1\nVAR_WIN {win}\nFAST_REACT 1\n\
         U_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 4\nMULTI_RATE 0\nACK_HIGH_PRIO {ack_hi}\nENABLE_TRACE 0\n\
         KMAX_MAP 2 100000000000 1600 400000000000 6400\nKMIN_MAP 2 100000000000 400 400000000000 1600\n\
         PMAX_MAP 2 100000000000 0.2 400000000000 0.2\nBUFFER_SIZE 32\n"
    )
}

/// The BFC paper's Fig. 5a setting (`experiments/bfc-fig5.toml`) as a scenario: T1, Google
/// (`homa_w3`) 60 % with lognormal (σ = 2) arrivals + 5 % 100→1 incasts of 20 MB aggregate,
/// `{dur}` of arrivals. The benchmarks add the scheme with overrides.
const BFC_T1: &str = r#"
name = "bench-bfc-t1"
seed = 1
[topology]
kind = "leaf_spine"
spines = 8
tors = 8
hosts_per_tor = 16
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "100Gbps"
fabric_delay = "1us"
[buffer]
mode = "lossless"
size = "12MB"
[loss_recovery]
kind = "gbn"
[output]
flows_csv = false
[[traffic]]
kind = "lognormal"
cdf = "homa_w3"
load = 0.6
sigma = 2.0
duration = "{dur}"
[[traffic]]
kind = "incast"
degree = 100
size = "200KB"
load = 0.05
duration = "{dur}"
"#;

/// The SFC paper's §5.3 default setting (`experiments/sfc-fig7.toml`): `{cdf}` Poisson at
/// `{load}` plus 8 % `{degree}`:1 incasts of 250 KB, `{dur}` of arrivals, on `{spines}` spines
/// × `{tors}` ToRs × `{hpt}` hosts. The SFC benchmark adds the scheme with an override.
const SEC53: &str = r#"
name = "bench-sec53"
seed = 1
[topology]
kind = "leaf_spine"
spines = {spines}
tors = {tors}
hosts_per_tor = {hpt}
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "400Gbps"
fabric_delay = "1.5us"
[buffer]
mode = "lossy"
size = "32MiB"
dt_alpha = 1.0
[loss_recovery]
kind = "irn"
[cc]
kind = "hpcc"
[output]
flows_csv = false
[[traffic]]
kind = "poisson"
cdf = "{cdf}"
load = {load}
duration = "{dur}"
[[traffic]]
kind = "incast"
degree = {degree}
size = "250KB"
load = 0.08
sync_window = "100us"
duration = "{dur}"
"#;

/// The `tcd-workload` experiment's scenario (`experiments/tcd-workload.toml`) with 2 spines
/// (4:1; the experiment has 4, 2:1), so that the benchmark's figures stay comparable;
/// arrivals `{dur}`.
const TCD_WS40: &str = r#"
name = "bench-tcd-ws40"
seed = 1
[topology]
kind = "leaf_spine"
spines = 2
tors = 4
hosts_per_tor = 8
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "100Gbps"
fabric_delay = "1us"
[buffer]
mode = "lossless"
size = "2MB"
[cc]
kind = "dcqcn"
[ecn]
kmin = "40KB"
kmax = "160KB"
pmax = 0.2
[[traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.4
duration = "{dur}"
[[traffic]]
kind = "incast"
degree = 24
size = "64KB"
load = 0.05
duration = "{dur}"
"#;

/// Build the simulator of benchmark `name`.
pub fn build(name: &str, quick: bool) -> Result<Simulator, String> {
    let scale = if quick { 5 } else { 1 };
    if let Some(mode) = name.strip_prefix("hpcc-fat-ws30-") {
        // A suffix adds a scheme to DCQCN: its table's keys, and whether DCQCN holds its
        // rate on the scheme's hold marks.
        let (mode, sets, hold): (&str, &[&str], bool) = if let Some(m) = mode.strip_suffix("-pbfs")
        {
            (m, &["pbfs.enabled=true"], false)
        } else if let Some(m) = mode.strip_suffix("-tcd") {
            (m, &["tcd.enabled=true"], true)
        } else {
            (mode, &[], false)
        };
        if !matches!(mode, "dcqcn" | "hpcc") || (!sets.is_empty() && mode != "dcqcn") {
            return Err(format!("unknown benchmark `{name}`"));
        }
        // Exactly what `sfc hpcc` does, on files written to a scratch directory.
        let dir = std::env::temp_dir().join(format!("sfc-bench-{}-{mode}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let topo = shapes::hpcc_fat_tree_320()?;
        std::fs::write(
            dir.join("fat.txt"),
            crate::topology::hpcc_file::write(&topo),
        )
        .map_err(|e| e.to_string())?;
        let ws = cdf::builtin("websearch").ok_or("websearch CDF missing")?;
        let flows = traffic::poisson(
            &topo.hosts(),
            &ws,
            0.3,
            100 * GBPS,
            2_000 * MS,
            5 * MS / scale,
            1,
        )?;
        crate::workload::flow_file::save(&dir.join("flow.txt"), &flows)?;
        let cfg = hpcc_config(if mode == "hpcc" { 3 } else { 1 });
        let (c, _) = crate::hpcc::HpccConfig::parse(&cfg, "bench-config.txt")?;
        // The flows as a list (read before the files go).
        let mut r = crate::hpcc::resolve_with(&c, &dir, false)?;
        let flows =
            std::mem::replace(&mut r.flows, crate::hpcc::HpccFlows::List(Vec::new())).into_vec()?;
        let _ = std::fs::remove_dir_all(&dir);
        for s in sets {
            r.net.schemes.set(s)?;
        }
        if let CcConfig::Dcqcn(p) = &mut r.cc {
            p.hold = hold;
        }
        return Simulator::with_flows(r.topo, r.net, r.cc, flows);
    }
    if let Some((text, sets)) = scenario_of(name, quick)? {
        return from_scenario(&text, name, &sets);
    }
    let net = NetConfig::from(crate::config::CoreConfig {
        loss_recovery: LossRecovery::irn(),
        ..Default::default()
    });
    let cc = CcConfig::None(NoneParams {
        window: NoneWindow::Bdp(1.0),
    });
    let (topo, flows) = match name {
        "fattree320-websearch30" => {
            let topo = shapes::hpcc_fat_tree_320()?;
            let hosts = topo.hosts();
            let ws = cdf::builtin("websearch").ok_or("websearch CDF missing")?;
            let flows = traffic::poisson(&hosts, &ws, 0.3, 100 * GBPS, 0, 5 * MS / scale, 1)?;
            (topo, flows)
        }
        n if n.starts_with("scale-") => {
            let hosts: u32 = n[6..].parse().map_err(|_| format!("bad bench {n}"))?;
            let tors = hosts / 16;
            let topo = shapes::leaf_spine(shapes::LeafSpine {
                spines: 4,
                tors,
                hosts_per_tor: 16,
                links_per_spine: 1,
                host_rate_bps: 100 * GBPS,
                host_delay_ps: US,
                fabric_rate_bps: 400 * GBPS,
                fabric_delay_ps: US,
            })?;
            let h = topo.hosts();
            let hd = cdf::builtin("fb_hadoop").ok_or("hadoop CDF missing")?;
            let flows = traffic::poisson(&h, &hd, 0.4, 100 * GBPS, 0, MS / scale, 7)?;
            (topo, flows)
        }
        _ => return Err(format!("unknown benchmark `{name}`")),
    };
    Simulator::with_flows(topo, net, cc, flows)
}

/// The scenario file (TOML) and `--set` overrides of a benchmark defined as a scenario (the
/// BFC T1, TCD and §5.3 ones), or `None` for the benchmarks built in code. `sfc bench
/// --print-scenario NAME` prints it, so a script can run variants of exactly the benchmark's
/// scenario with `sfc run --set …` (`scripts/sec53-cost-breakdown.sh`).
pub fn scenario_of(name: &str, quick: bool) -> Result<Option<(String, Vec<String>)>, String> {
    if let Some(scheme) = name.strip_prefix("bfc-t1-google-") {
        // 1 ms of arrivals (four 20 MB incasts expected); quick: 200 µs.
        let dur = if quick { "200us" } else { "1ms" };
        let sets: Vec<String> = match scheme {
            "bfc" => vec!["bfc.enabled=true".into(), "cc.kind=\"none\"".into()],
            "dcqcn" => vec![
                "cc.kind=\"dcqcn\"".into(),
                "ecn.kmin=\"100KB\"".into(),
                "ecn.kmax=\"400KB\"".into(),
                "ecn.pmax=0.2".into(),
            ],
            _ => return Err(format!("unknown benchmark `{name}`")),
        };
        let text = BFC_T1.replace("{dur}", dur);
        return Ok(Some((text, sets)));
    }
    if let Some(scheme) = name.strip_prefix("tcd-ws40-incast-") {
        let dur = if quick { "1ms" } else { "5ms" };
        let sets: Vec<String> = match scheme {
            "dcqcn" => vec![],
            "dcqcn-tcd" => vec!["tcd.enabled=true".into(), "cc.tcd=true".into()],
            _ => return Err(format!("unknown benchmark `{name}`")),
        };
        let text = TCD_WS40.replace("{dur}", dur);
        return Ok(Some((text, sets)));
    }
    if let Some(rest) = name.strip_prefix("sec53-") {
        let (cdf, load, scheme) = match rest {
            "hadoop50-incast-none" => ("fb_hadoop", "0.5", None),
            "hadoop50-incast-sfc" => ("fb_hadoop", "0.5", Some("sfc.mode=\"sfc\"")),
            "rpc30-incast-none" => ("google_rpc", "0.3", None),
            _ => return Err(format!("unknown benchmark `{name}`")),
        };
        let (spines, tors, hpt, degree, dur) = if quick {
            ("4", "8", "16", "32", "500us")
        } else {
            ("8", "16", "32", "128", "2ms")
        };
        let text = SEC53
            .replace("{spines}", spines)
            .replace("{tors}", tors)
            .replace("{hpt}", hpt)
            .replace("{degree}", degree)
            .replace("{dur}", dur)
            .replace("{cdf}", cdf)
            .replace("{load}", load);
        let sets: Vec<String> = scheme.into_iter().map(String::from).collect();
        return Ok(Some((text, sets)));
    }
    Ok(None)
}

/// The simulator of a scenario benchmark, its flows taken from the generators as the run
/// reaches them, as `sfc run` does ([`Simulator::with_stream`]).
fn from_scenario(text: &str, name: &str, sets: &[String]) -> Result<Simulator, String> {
    let (sc, stream) =
        crate::scenario::from_str_streaming(text, name, std::path::Path::new("."), sets)?;
    Simulator::with_stream(sc.topo, sc.net, sc.cc, stream)
}

/// A digest of every flow's record (id, completion time, retransmissions, pauses): two runs
/// with equal digests gave every flow the same result.
fn records_digest(sim: &Simulator) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for r in sim.records_iter() {
        eat(u64::from(r.id));
        eat(r.fct_ps.unwrap_or(u64::MAX));
        eat(r.retx_packets);
        eat(u64::from(r.pauses));
        eat(r.paused_ps);
    }
    format!("{h:016x}")
}

/// Run one benchmark in this process on `threads` threads and return its figures as JSON.
pub fn run_one(name: &str, quick: bool, threads: usize) -> Result<serde_json::Value, String> {
    let t_build = Instant::now();
    let sim = build(name, quick)?;
    let build_s = t_build.elapsed().as_secs_f64();
    let (mut sim, wall, parallel, split_note) = if threads > 1 {
        match crate::sim::parallel::ParallelSim::split(sim, threads) {
            Ok(mut par) => {
                let t0 = Instant::now();
                par.run(&mut |_| {});
                let wall = t0.elapsed().as_secs_f64();
                let stats = par.stats();
                (par.into_merged(), wall, Some(stats), None)
            }
            Err((sim, why)) => {
                let mut sim = *sim;
                let t0 = Instant::now();
                sim.run_quiet();
                (sim, t0.elapsed().as_secs_f64(), None, Some(why))
            }
        }
    } else {
        let mut sim = sim;
        let t0 = Instant::now();
        sim.run_quiet();
        (sim, t0.elapsed().as_secs_f64(), None, None)
    };
    sim.finish();
    let ev = sim.q.events();
    let hops = sim.counters.packet_hops;
    // Every packet the run created: data, ACK/NACK (a data packet's slot turned into its
    // ACK counts again), CNP and scheme frames.
    let packets = sim.arena.created();
    let p99 = crate::metrics::stats::RunStats::compute(
        &sim,
        &crate::metrics::stats::SizeBins::EqualCount(10),
    )
    .slowdown
    .p99;
    Ok(json!({
        "name": name,
        "quick": quick,
        "hosts": sim.hosts.len(),
        "flows": sim.flows.len(),
        "flows_completed": sim.counters.flows_completed,
        "bytes": sim.flows.iter().map(|f| f.size_bytes).sum::<u64>(),
        "sim_time_ps": sim.q.now(),
        "events": ev,
        "packet_hops": hops,
        "build_seconds": build_s,
        "wall_seconds": wall,
        "events_per_second": ev as f64 / wall,
        "packet_hops_per_second": hops as f64 / wall,
        "ns_per_packet_hop": wall * 1e9 / hops.max(1) as f64,
        "packets": packets,
        "hops_per_packet": hops as f64 / packets.max(1) as f64,
        "ns_per_packet": wall * 1e9 / packets.max(1) as f64,
        "peak_rss_bytes": crate::report::peak_rss_bytes(),
        "rss_bytes_per_million_flows": crate::report::peak_rss_bytes() as f64 * 1e6 / sim.flows.len().max(1) as f64,
        "pfc_pauses": sim.scheme_stat("pfc", "pauses"),
        "drops": sim.counters.drops,
        "slowdown_p99": p99,
        "events_peak_pending": sim.q.peak_len(),
        "packets_peak_live": sim.arena.peak_live(),
        "threads": parallel.as_ref().map_or(1, |p| p.threads),
        "parallel": parallel,
        "one_thread_because": split_note,
        "records_digest": records_digest(&sim),
    }))
}

/// `sfc bench --threads`: each selected benchmark run on each of `counts` threads, `repeat`
/// times each (alternating the counts), in child processes as `sfc bench` runs them. Prints
/// per benchmark and count the best and median wall time, the speed-up of the best against
/// one thread's best, the windows, the time each thread waited at barriers, and whether the
/// run is the same (events, packet-hops and every flow's record equal to one thread's);
/// writes out/bench-threads.json.
pub fn threads(
    quick: bool,
    filter: Option<&str>,
    repeat: u32,
    counts: &[u32],
) -> Result<(), String> {
    let mut counts: Vec<usize> = counts.iter().map(|&c| c.max(1) as usize).collect();
    if !counts.contains(&1) {
        counts.insert(0, 1);
    }
    counts.sort_unstable();
    counts.dedup();
    let selected = select(filter)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the sfc binary: {e}"))?;
    let mut out = Vec::new();
    println!(
        "{:<28} {:>7} {:>9} {:>9} {:>8} {:>9} {:>8} {:>22} {:>5}",
        "benchmark",
        "threads",
        "best s",
        "median s",
        "speed-up",
        "windows",
        "ev/win",
        "barrier wait s/thread",
        "same"
    );
    for b in selected {
        let mut runs: Vec<Vec<serde_json::Value>> = vec![Vec::new(); counts.len()];
        for r in 0..repeat.max(1) as usize {
            // Alternate the order of the counts from one repetition to the next.
            let order: Vec<usize> = if r % 2 == 0 {
                (0..counts.len()).collect()
            } else {
                (0..counts.len()).rev().collect()
            };
            for i in order {
                runs[i].push(run_child_threads(&exe, b.name, quick, counts[i])?);
            }
        }
        let wall = |v: &serde_json::Value| v["wall_seconds"].as_f64().unwrap_or(f64::INFINITY);
        let reference = runs[0]
            .iter()
            .min_by(|a, b| wall(a).total_cmp(&wall(b)))
            .cloned()
            .expect("one run");
        let same_run = |v: &serde_json::Value| {
            [
                "events",
                "packet_hops",
                "records_digest",
                "sim_time_ps",
                "flows_completed",
            ]
            .iter()
            .all(|k| v[k] == reference[k])
        };
        let mut rows = Vec::new();
        for (i, rs) in runs.iter().enumerate() {
            let mut walls: Vec<f64> = rs.iter().map(wall).collect();
            let (best, median) = best_median(&mut walls);
            let v = rs
                .iter()
                .min_by(|a, b| wall(a).total_cmp(&wall(b)))
                .expect("one run");
            let speedup = wall(&reference) / best;
            let same = rs.iter().all(same_run);
            let p = &v["parallel"];
            let windows = p["windows"].as_u64().unwrap_or(0);
            let events = v["events"].as_f64().unwrap_or(0.0);
            let waits: Vec<String> = p["wait_seconds"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|x| format!("{:.2}", x.as_f64().unwrap_or(0.0)))
                        .collect()
                })
                .unwrap_or_default();
            println!(
                "{:<28} {:>7} {:>9.3} {:>9.3} {:>7.2}× {:>9} {:>8} {:>22} {:>5}",
                b.name,
                v["threads"],
                best,
                median,
                speedup,
                windows,
                if windows > 0 {
                    format!("{:.0}", events / windows as f64)
                } else {
                    "-".into()
                },
                if waits.is_empty() {
                    "-".into()
                } else {
                    waits.join(" ")
                },
                if same { "yes" } else { "NO" }
            );
            if let Some(why) = v["one_thread_because"].as_str() {
                println!("{:<28} (one thread: {why})", "");
            }
            rows.push(json!({
                "threads_asked": counts[i],
                "threads": v["threads"],
                "wall_seconds_best": best,
                "wall_seconds_median": median,
                "wall_seconds_all": walls,
                "speedup": speedup,
                "same_run": same,
                "run": v,
            }));
        }
        out.push(json!({"name": b.name, "quick": quick, "counts": rows}));
    }
    let path = std::path::Path::new("out/bench-threads.json");
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| crate::fsutil::describe("cannot create", d, &e))?;
    }
    crate::metrics::output::write_atomic(path, json!(out).to_string().as_bytes())
        .map_err(|e| crate::fsutil::describe("cannot write", path, &e))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// `sfc bench --partitions`: for each selected benchmark, one sequential run profiled for
/// every partition count of `counts` ([`crate::sim::partition`]): the windows a conservative
/// parallel run would synchronise, the events of its critical path, the packets crossing a cut,
/// the speed-up bound `events / critical-path events`, and the speed-up modelled
/// ([`crate::sim::partition::PartitionReport::modelled_speedup`]) with the costs measured
/// here: the time per event of a plain sequential run, the spin barrier among 2 threads
/// (extrapolated to more, [`crate::sim::partition::barrier_ns_among`]), an uncontended lock,
/// and the cost per crossing packet taken from the same run split over 2 threads (on a
/// machine with 2 cores or more; else no crossing cost is charged, and the table says so).
/// The plain and the split runs are repeated `repeat` times; the best of each counts.
/// A count above the benchmark's ToRs is profiled as that many partitions (a partition holds
/// whole ToRs, as in a split run). Prints a table per benchmark and writes
/// out/bench-partitions.json.
pub fn partitions(
    quick: bool,
    filter: Option<&str>,
    repeat: u32,
    counts: &[u32],
) -> Result<(), String> {
    use crate::sim::partition::{ModelCosts, Partitioning, barrier_ns_among};
    if counts.is_empty() || counts.contains(&0) {
        return Err("--partitions: one or more counts ≥ 1, comma-separated (e.g. 2,4,8)".into());
    }
    let benches = select(filter)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let barrier2_ns = crate::sim::partition::barrier_cost_ns(2, 200_000);
    let channel_ns = crate::sim::partition::lock_cost_ns(1_000_000);
    println!(
        "this machine: {cores} core(s); spin barrier among 2 threads {barrier2_ns:.0} ns \
         (among N: × N/2); uncontended lock {channel_ns:.0} ns"
    );
    let mut all = Vec::new();
    for b in benches {
        // The plain sequential run: the time per event (best of `repeat`).
        let mut seq_s = f64::INFINITY;
        let mut hosts = 0;
        for _ in 0..repeat.max(1) {
            let mut plain = build(b.name, quick)?;
            let t0 = Instant::now();
            plain.run_quiet();
            seq_s = seq_s.min(t0.elapsed().as_secs_f64());
            hosts = plain.hosts.len();
        }
        // The profile, with 2 partitions among the counts (the crossing cost's reference).
        // A partition holds whole ToRs: a count above the ToRs runs as many partitions as
        // there are ToRs, as a split run does.
        let mut sim = build(b.name, quick)?;
        let tors = crate::sim::partition::tors(&sim.topo).len().max(1) as u32;
        let mut all_counts: Vec<u32> = counts.iter().map(|&n| n.min(tors)).collect();
        if !all_counts.contains(&2) && tors >= 2 {
            all_counts.push(2);
        }
        all_counts.sort_unstable();
        all_counts.dedup();
        let parts: Vec<Partitioning> = all_counts
            .iter()
            .map(|&n| Partitioning::by_tor_groups(&sim.topo, n))
            .collect::<Result<_, _>>()?;
        let reports = sim.run_partition_profile(&parts);
        drop(sim);
        let events = reports.first().map_or(0, |r| r.events);
        let event_ns = seq_s * 1e9 / events.max(1) as f64;
        // The run split over 2 threads: what its wall time has beyond the critical path,
        // the barriers and the channels is the crossings' cost.
        let two = reports.iter().find(|r| r.parts == 2);
        let mut split: Option<(f64, crate::sim::parallel::ParallelStats)> = None;
        if let Some(two) = two
            && cores >= 2
            && two.lookahead_ps > 0
        {
            for _ in 0..repeat.max(1) {
                let Ok(mut par) =
                    crate::sim::parallel::ParallelSim::split(build(b.name, quick)?, 2)
                else {
                    break;
                };
                let t0 = Instant::now();
                par.run(&mut |_| {});
                let wall = t0.elapsed().as_secs_f64();
                if split.as_ref().is_none_or(|(best, _)| wall < *best) {
                    split = Some((wall, par.stats()));
                }
            }
        }
        // On the profile's own counts (its windows, its crossing arrivals), so that the
        // model reproduces the measured 2-thread speed-up exactly.
        let crossing_ns = split.as_ref().zip(two).map_or(0.0, |((wall, _), two)| {
            let accounted = two.critical_events as f64 * event_ns
                + two.windows as f64 * (2.0 * barrier2_ns + channel_ns);
            ((wall * 1e9 - accounted) / (two.cross_arrivals.max(1) as f64 / 2.0)).max(0.0)
        });
        println!(
            "\n{} ({} hosts, {tors} ToRs, {} events; sequential {seq_s:.2} s, {event_ns:.0} \
             ns/event{})",
            b.name,
            hosts,
            events,
            match &split {
                Some((w, st)) => format!(
                    "; 2 threads {w:.2} s, {:.2}×, {} crossings: {crossing_ns:.0} ns each",
                    seq_s / w,
                    st.crossings
                ),
                None => "; not split over 2 threads here: no crossing cost charged".into(),
            }
        );
        println!(
            "{:>5} {:>10} {:>5} {:>10} {:>11} {:>8} {:>9} {:>9}",
            "parts", "window", "cut", "windows", "events/win", "cross %", "bound", "modelled"
        );
        let mut rows = Vec::new();
        for r in reports
            .iter()
            .filter(|r| counts.iter().any(|&n| n.min(tors) == r.parts))
        {
            let costs = ModelCosts {
                event_ns,
                barrier_ns: barrier_ns_among(r.parts, barrier2_ns),
                channel_ns,
                crossing_ns,
            };
            let per_window = r.events as f64 / r.windows.max(1) as f64;
            let cross = 100.0 * r.cross_arrivals as f64 / r.arrivals.max(1) as f64;
            let modelled = if r.parts > 1 {
                r.modelled_speedup(&costs)
            } else {
                1.0
            };
            println!(
                "{:>5} {:>10} {:>5} {:>10} {:>11.1} {:>8.2} {:>8.2}× {:>8.2}×",
                r.parts,
                if r.lookahead_ps > 0 {
                    format!("{:.2} µs", r.lookahead_ps as f64 / 1e6)
                } else {
                    "run".into()
                },
                r.cut_links,
                r.windows,
                per_window,
                cross,
                r.speedup_bound(),
                modelled
            );
            let mut j = serde_json::to_value(r).unwrap_or_default();
            j["speedup_bound"] = json!(r.speedup_bound());
            j["modelled_speedup"] = json!(modelled);
            j["costs"] = serde_json::to_value(costs).unwrap_or_default();
            rows.push(j);
        }
        all.push(json!({
            "name": b.name,
            "quick": quick,
            "events": events,
            "sequential_seconds": seq_s,
            "event_ns": event_ns,
            "tors": tors,
            "cores": cores,
            "barrier_ns_2_threads": barrier2_ns,
            "channel_ns": channel_ns,
            "crossing_ns": crossing_ns,
            "two_threads": split.as_ref().map(|(w, st)| json!({
                "wall_seconds": w,
                "speedup": seq_s / w,
                "windows": st.windows,
                "crossings": st.crossings,
            })),
            "partitions": rows,
        }));
    }
    let path = std::path::Path::new("out/bench-partitions.json");
    std::fs::create_dir_all("out").map_err(|e| format!("out/: {e}"))?;
    let txt = serde_json::to_string_pretty(&all).unwrap_or_default();
    crate::metrics::output::write_atomic(path, txt.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    println!("\nwritten {}", path.display());
    Ok(())
}

/// Check that `exe` is an `sfc` binary before benchmarking with it: `exe --version` must
/// answer `sfc …` within 10 s (at most 4 KB of it is read), so another program given to
/// `--against` by mistake is refused at once instead of hanging the comparison or filling
/// memory with its output.
fn probe_sfc(exe: &std::path::Path) -> Result<(), String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let not_sfc = |why: String| {
        format!(
            "--against {}: {why}; give the path of another sfc binary",
            exe.display()
        )
    };
    let mut child = Command::new(exe)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| not_sfc(format!("cannot run it: {e}")))?;
    let mut pipe = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut pipe).take(4096).read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    let out = rx.recv_timeout(std::time::Duration::from_secs(10));
    let _ = child.kill();
    let _ = child.wait();
    match out {
        Ok(buf) if buf.starts_with(b"sfc ") => Ok(()),
        Ok(buf) => Err(not_sfc(format!(
            "`--version` printed {:?}, not `sfc …`",
            String::from_utf8_lossy(&buf)
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect::<String>()
        ))),
        Err(_) => Err(not_sfc("`--version` did not answer within 10 s".into())),
    }
}

/// Run benchmark `name` in a fresh process of the `sfc` binary `exe` (`SFC_BENCH_ONE`
/// child mode, which every build since the benchmarks exist has) and parse its JSON line.
fn run_child(exe: &std::path::Path, name: &str, quick: bool) -> Result<serde_json::Value, String> {
    run_child_threads(exe, name, quick, 1)
}

/// [`run_child`] on `threads` threads.
fn run_child_threads(
    exe: &std::path::Path,
    name: &str,
    quick: bool,
    threads: usize,
) -> Result<serde_json::Value, String> {
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("bench").env("SFC_BENCH_ONE", name);
    if threads > 1 {
        cmd.env("SFC_BENCH_THREADS", threads.to_string());
    }
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{name}: cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{name} ({}): {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // The JSON is the last line (older builds may print more before it).
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line).map_err(|e| format!("{name} ({}): {e}", exe.display()))
}

/// The benchmarks whose name contains `filter`, or one of its comma-separated parts (all
/// without one); an error naming every benchmark if none does.
fn select(filter: Option<&str>) -> Result<Vec<&'static Bench>, String> {
    let selected: Vec<&Bench> = BENCHES
        .iter()
        .filter(|b| {
            filter.is_none_or(|f| {
                f.trim().is_empty()
                    || f.split(',').any(|part| {
                        let part = part.trim();
                        !part.is_empty() && b.name.contains(part)
                    })
            })
        })
        .collect();
    if selected.is_empty() {
        return Err(format!(
            "--filter `{}` matches no benchmark ({}); out/ left unchanged",
            filter.unwrap_or_default(),
            BENCHES
                .iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(selected)
}

/// Best (smallest) and median of `v` (not empty; sorted in place).
fn best_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (v[0], med)
}

/// `sfc bench --against OTHER [--quick] [--filter S] [--repeat N]`: each selected benchmark
/// run `repeat` times by this binary and by the `sfc` binary `other` (e.g. a build of an
/// older commit), alternating which goes first (ours, theirs, then theirs, ours, …) so that a
/// machine whose speed drifts treats both alike. Prints, per benchmark, both builds' best and
/// median wall time of the run (building excluded), the speed-up `theirs / ours` of each, and
/// whether both simulated the same run (equal events and packet-hops); writes every run to
/// `out/bench-compare.json`. A benchmark the other build does not have is reported and skipped.
pub fn compare(
    quick: bool,
    filter: Option<&str>,
    repeat: u32,
    other: &std::path::Path,
) -> Result<(), String> {
    if !other.is_file() {
        return Err(format!(
            "--against {}: no such file (give the path of another sfc binary)",
            other.display()
        ));
    }
    probe_sfc(other)?;
    let ours_exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the sfc binary: {e}"))?;
    let selected = select(filter)?;
    println!(
        "{:<28} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>9}",
        "benchmark",
        "ours best",
        "ours med",
        "theirs best",
        "theirs med",
        "best ×",
        "median ×",
        "same run"
    );
    let mut out = Vec::new();
    for b in selected {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut missing = None;
        for i in 0..repeat.max(1) {
            let order = if i % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for is_ours in order {
                if is_ours {
                    ours.push(run_child(&ours_exe, b.name, quick)?);
                } else {
                    match run_child(other, b.name, quick) {
                        Ok(v) => theirs.push(v),
                        Err(e) => {
                            missing = Some(e);
                            break;
                        }
                    }
                }
            }
            if missing.is_some() {
                break;
            }
        }
        if let Some(e) = missing {
            println!("{:<28} not run by the other build: {e}", b.name);
            out.push(json!({"name": b.name, "quick": quick, "error": e}));
            continue;
        }
        let walls = |runs: &[serde_json::Value]| -> Vec<f64> {
            runs.iter()
                .map(|v| v["wall_seconds"].as_f64().unwrap_or(f64::INFINITY))
                .collect()
        };
        let (mut wo, mut wt) = (walls(&ours), walls(&theirs));
        let (ob, om) = best_median(&mut wo);
        let (tb, tm) = best_median(&mut wt);
        let key = |v: &serde_json::Value| (v["events"].as_u64(), v["packet_hops"].as_u64());
        let same = key(&ours[0]) == key(&theirs[0]);
        println!(
            "{:<28} {:>10.3}s {:>10.3}s {:>10.3}s {:>10.3}s {:>8.3}× {:>8.3}× {:>9}",
            b.name,
            ob,
            om,
            tb,
            tm,
            tb / ob,
            tm / om,
            if same { "yes" } else { "no" }
        );
        out.push(json!({
            "name": b.name,
            "quick": quick,
            "against": other.display().to_string(),
            "ours_wall_seconds": wo,
            "theirs_wall_seconds": wt,
            "speedup_best": tb / ob,
            "speedup_median": tm / om,
            "same_run": same,
            "ours": ours,
            "theirs": theirs,
        }));
    }
    std::fs::create_dir_all("out").map_err(|e| e.to_string())?;
    let txt = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    crate::metrics::output::write_atomic(
        std::path::Path::new("out/bench-compare.json"),
        txt.as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    eprintln!(
        "written out/bench-compare.json (speed-up = theirs / ours: > 1 means this build is faster)"
    );
    Ok(())
}

/// `sfc bench [--quick] [--filter S] [--repeat N]`: each benchmark `repeat` times in a fresh
/// child process; the fastest run is reported (all wall times and the median are kept in
/// `out/bench.json`).
pub fn run(quick: bool, filter: Option<&str>, repeat: u32) -> Result<(), String> {
    // Child mode: `SFC_BENCH_ONE=name sfc bench` runs one benchmark and prints its JSON.
    if let Ok(one) = std::env::var("SFC_BENCH_ONE") {
        let threads = std::env::var("SFC_BENCH_THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(1);
        let v = run_one(&one, quick, threads)?;
        println!("{v}");
        return Ok(());
    }
    let selected = select(filter)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the sfc binary: {e}"))?;
    let mut results = Vec::new();
    println!(
        "{:<28} {:>6} {:>7} {:>12} {:>12} {:>9} {:>10} {:>10} {:>8} {:>9}",
        "benchmark",
        "hosts",
        "flows",
        "events",
        "pkt-hops",
        "wall s",
        "Mhops/s",
        "Mev/s",
        "ns/hop",
        "RSS MB"
    );
    for b in selected {
        let mut runs = Vec::new();
        for _ in 0..repeat.max(1) {
            runs.push(run_child(&exe, b.name, quick)?);
        }
        let wall = |v: &serde_json::Value| v["wall_seconds"].as_f64().unwrap_or(f64::INFINITY);
        let mut walls: Vec<f64> = runs.iter().map(wall).collect();
        let (_, median) = best_median(&mut walls);
        let mut v = runs
            .into_iter()
            .min_by(|a, b| wall(a).total_cmp(&wall(b)))
            .expect("at least one run");
        v["runs"] = json!(walls.len());
        v["wall_seconds_all"] = json!(walls);
        v["wall_seconds_median"] = json!(median);
        let g = |k: &str| v[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<28} {:>6} {:>7} {:>12} {:>12} {:>9.3} {:>10.2} {:>10.2} {:>8.1} {:>9.1}",
            b.name,
            g("hosts"),
            g("flows"),
            g("events"),
            g("packet_hops"),
            g("wall_seconds"),
            g("packet_hops_per_second") / 1e6,
            g("events_per_second") / 1e6,
            g("ns_per_packet_hop"),
            g("peak_rss_bytes") / 1e6
        );
        results.push(v);
    }
    // Scaling of the cost per packet-hop with network size (the leaf-spine series).
    let ns = |name: &str| {
        results
            .iter()
            .find(|v| v["name"] == name)
            .and_then(|v| v["ns_per_packet_hop"].as_f64())
    };
    // Cost per packet-hop of a run relative to its reference: (reference, run, what).
    const RATIOS: &[(&str, &str, &str)] = &[
        (
            "hpcc-fat-ws30-dcqcn",
            "hpcc-fat-ws30-dcqcn-pbfs",
            "PB-FS on vs off (DCQCN, fat tree)",
        ),
        (
            "hpcc-fat-ws30-dcqcn",
            "hpcc-fat-ws30-dcqcn-tcd",
            "TCD on vs off (DCQCN, fat tree)",
        ),
        (
            "tcd-ws40-incast-dcqcn",
            "tcd-ws40-incast-dcqcn-tcd",
            "TCD on vs off (DCQCN, WebSearch 40 % + incast, PFC pausing)",
        ),
        (
            "bfc-t1-google-dcqcn",
            "bfc-t1-google-bfc",
            "BFC vs DCQCN (T1, Google 60 % + incast)",
        ),
        ("scale-64", "scale-1024", "1,024 vs 64 hosts"),
    ];
    for &(reference, run, what) in RATIOS {
        if let (Some(r), Some(x)) = (ns(reference), ns(run)) {
            println!(
                "cost per packet-hop, {what}: {:.2}× ({x:.0} vs {r:.0} ns)",
                x / r
            );
        }
    }
    // The paper-scale runs against the plain fat tree, per packet-hop
    // and per packet created: the fat tree's packets cross more switches (≈ 5.6 hops
    // against ≈ 3.9 on the two-tier leaf–spine), which spreads each packet's NIC work (send,
    // receive, ACK, controller) over more hops.
    let get = |name: &str| results.iter().find(|v| v["name"] == name);
    if let Some(r) = get("fattree320-websearch30") {
        for run in ["sec53-hadoop50-incast-none", "sec53-hadoop50-incast-sfc"] {
            if let Some(x) = get(run) {
                let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
                println!(
                    "cost of {run} vs fattree320-websearch30: per packet-hop {:.2}× ({:.0} vs \
                     {:.0} ns), per packet {:.2}× ({:.0} vs {:.0} ns; {:.2} vs {:.2} hops per packet)",
                    f(x, "ns_per_packet_hop") / f(r, "ns_per_packet_hop"),
                    f(x, "ns_per_packet_hop"),
                    f(r, "ns_per_packet_hop"),
                    f(x, "ns_per_packet") / f(r, "ns_per_packet"),
                    f(x, "ns_per_packet"),
                    f(r, "ns_per_packet"),
                    f(x, "hops_per_packet"),
                    f(r, "hops_per_packet"),
                );
            }
        }
    }
    std::fs::create_dir_all("out").map_err(|e| e.to_string())?;
    let txt = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    crate::metrics::output::write_atomic(std::path::Path::new("out/bench.json"), txt.as_bytes())
        .map_err(|e| e.to_string())?;
    eprintln!("written out/bench.json");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--filter` takes one substring or several, comma-separated (any of them matches).
    #[test]
    fn filter_matches_any_comma_separated_part() {
        let names =
            |f: &str| -> Vec<&str> { select(Some(f)).unwrap().iter().map(|b| b.name).collect() };
        assert_eq!(names("fattree320"), ["fattree320-websearch30"]);
        assert_eq!(
            names("fattree320,sec53-hadoop"),
            [
                "fattree320-websearch30",
                "sec53-hadoop50-incast-none",
                "sec53-hadoop50-incast-sfc"
            ]
        );
        // An empty part matches nothing (a trailing comma does not select everything);
        // spaces around parts are ignored; an empty filter selects every benchmark.
        assert_eq!(names("fattree320,"), ["fattree320-websearch30"]);
        assert_eq!(
            names("fattree320, scale-64"),
            ["fattree320-websearch30", "scale-64"]
        );
        assert_eq!(names("").len(), BENCHES.len());
        assert!(select(Some("no-such,bench")).is_err());
    }

    /// Every listed benchmark builds (quick), and no unknown name does.
    #[test]
    fn every_benchmark_builds() {
        for b in BENCHES {
            if b.name.starts_with("scale-1024") || b.name.starts_with("sec53") {
                continue; // large flow lists: built by `sfc bench` itself
            }
            build(b.name, true).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        }
        assert!(build("hpcc-fat-ws30-foo", true).is_err());
        assert!(build("hpcc-fat-ws30-hpcc-tcd", true).is_err());
        assert!(build("nope", true).is_err());
        assert!(build("tcd-ws40-incast-hpcc", true).is_err());
    }

    /// `sfc bench --print-scenario`: the scenario-defined benchmarks give a scenario file that
    /// parses with their overrides (what `sfc run FILE --set …` does), in both sizes; the
    /// ones built in code give none.
    #[test]
    fn scenario_benchmarks_print_a_runnable_scenario() {
        let mut n = 0;
        for b in BENCHES {
            for quick in [true, false] {
                match scenario_of(b.name, quick).unwrap() {
                    Some((text, sets)) => {
                        n += 1;
                        crate::scenario::from_str_streaming(
                            &text,
                            b.name,
                            std::path::Path::new("."),
                            &sets,
                        )
                        .unwrap_or_else(|e| panic!("{} (quick {quick}): {e}", b.name));
                    }
                    None => assert!(
                        b.name.starts_with("hpcc-fat")
                            || b.name.starts_with("fattree")
                            || b.name.starts_with("scale-"),
                        "{} has no scenario",
                        b.name
                    ),
                }
            }
        }
        assert_eq!(n, 2 * 7, "bfc-t1 ×2, tcd-ws40 ×2, sec53 ×3, both sizes");
        assert!(scenario_of("sec53-nope", false).is_err());
    }

    /// The TCD benchmark pair measures what it says: the same traffic, PFC pauses in both, and
    /// TCD marking (UE as well as CE) only in the second.
    #[test]
    fn tcd_bench_pair_pauses_and_marks() {
        let mut off = build("tcd-ws40-incast-dcqcn", true).unwrap();
        let mut on = build("tcd-ws40-incast-dcqcn-tcd", true).unwrap();
        off.run_quiet();
        on.run_quiet();
        off.finish();
        on.finish();
        // Same traffic (compared after the run: the flows come from a stream as it goes).
        let flows = |s: &Simulator| -> Vec<(u32, u32, u64, u64)> {
            s.flows
                .iter()
                .map(|f| (f.src, f.dst, f.size_bytes, f.start_ps))
                .collect()
        };
        assert!(off.flows.len() > 100);
        assert_eq!(flows(&off), flows(&on));
        assert!(off.scheme_stat("pfc", "pauses") > 0);
        assert!(on.scheme_stat("pfc", "pauses") > 0);
        assert_eq!(off.scheme_stat("tcd", "ue_marks"), 0);
        assert!(on.scheme_stat("tcd", "ue_marks") > 0);
        assert!(on.scheme_stat("tcd", "ce_marks") > 0);
    }
}
