//! Flows taken from a lazy stream as the run reaches them (`Simulator::with_stream`) give the
//! run that the collected list gives (`Simulator::with_flows`): the same flow ids, source
//! ports, records and counters, also for flows a `stop` leaves unstarted, and the stream is
//! consumed as the clock advances, not up front.

use sfc::cc::CcConfig;
use sfc::metrics::FlowRecord;
use sfc::registry::NetConfig;
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;
use sfc::workload::stream::{FlowStream, Source};
use std::path::Path;

/// A 16-host leaf–spine with Poisson background, repeated incasts (with a synchronization
/// window, so incast flows interleave with the background) and a `stop` before the last
/// arrivals, under HPCC + IRN with lossless PFC off.
const SCENARIO: &str = r#"
name = "stream"
seed = 7
stop = "400us"

[topology]
kind = "leaf_spine"
spines = 2
tors = 2
hosts_per_tor = 8
host_rate = "100Gbps"
host_delay = "1us"
fabric_rate = "400Gbps"
fabric_delay = "1us"

[cc]
kind = "hpcc"

[[traffic]]
kind = "poisson"
cdf = "hadoop"
load = 0.5
duration = "500us"

[[traffic]]
kind = "incast"
degree = 6
size = "50KB"
load = 0.08
sync_window = "20us"
duration = "500us"
"#;

/// Flow `i` of the small-star tests: host `i % 4` to host `4 + i % 4`, `size_bytes`, one start
/// every `gap_ps` from 1 µs.
fn star_flow(i: u64, size_bytes: u64, gap_ps: u64) -> FlowSpec {
    FlowSpec {
        src: (i % 4) as u32,
        dst: 4 + (i % 4) as u32,
        size_bytes,
        start_ps: 1_000_000 + i * gap_ps,
        dport: 100,
        prio: 3,
    }
}

/// The small-star tests' topology: 8 hosts at 100 G, 1 µs links.
fn star8() -> sfc::topology::TopologySpec {
    shapes::star(8, 100 * GBPS, 1_000_000).unwrap()
}

/// A simulator on [`star8`] (default network, no CC) taking flows `star_flow(0..n, 1000 B,
/// gap_ps)` from a stream.
fn star8_streamed(n: u64, gap_ps: u64) -> Simulator {
    let flows = (0..n).map(|i| star_flow(i, 1000, gap_ps)).collect();
    Simulator::with_stream(
        star8(),
        NetConfig::default(),
        CcConfig::none_unlimited(),
        FlowStream::new(vec![Source::list(flows)]),
    )
    .unwrap()
}

fn records(sim: &Simulator) -> Vec<FlowRecord> {
    sim.records_iter().collect()
}

fn counters(sim: &Simulator) -> String {
    serde_json::to_string(&sim.counters).unwrap()
}

fn run_list() -> Simulator {
    let sc = sfc::scenario::from_str(SCENARIO, "stream.toml", Path::new("."), &[]).unwrap();
    let mut sim = Simulator::with_flows(sc.topo, sc.net, sc.cc, sc.flows).unwrap();
    sim.run_quiet();
    sim.finish();
    sim
}

fn stream_sim() -> Simulator {
    let (sc, stream) =
        sfc::scenario::from_str_streaming(SCENARIO, "stream.toml", Path::new("."), &[]).unwrap();
    assert!(sc.flows.is_empty());
    Simulator::with_stream(sc.topo, sc.net, sc.cc, stream).unwrap()
}

#[test]
fn a_streamed_run_equals_the_listed_run() {
    let list = run_list();
    let mut st = stream_sim();
    st.run_quiet();
    st.finish();
    assert!(st.stream_error().is_none());
    let (a, b) = (records(&list), records(&st));
    assert!(a.len() > 500, "a workload worth testing: {} flows", a.len());
    // Some flows finished, some were cut by `stop`, some never started.
    assert!(a.iter().any(|r| r.fct_ps.is_some()));
    assert!(
        a.iter()
            .any(|r| r.fct_ps.is_none() && r.start_ps <= 400 * US)
    );
    assert!(a.iter().any(|r| r.start_ps > 400 * US));
    assert_eq!(a, b);
    assert_eq!(counters(&list), counters(&st));
    assert_eq!(
        list.records_in_completion_order().collect::<Vec<_>>(),
        st.records_in_completion_order().collect::<Vec<_>>()
    );
}

#[test]
fn the_stream_is_taken_as_the_clock_advances() {
    let total = run_list().flows.len();
    let mut st = stream_sim();
    // Before the run: only the first flow is taken.
    assert_eq!(st.flows.len(), 1);
    st.cfg.stop_ps = 100 * US;
    st.run_quiet();
    // At 100 µs: the flows started by then, plus the next one, whose start is pending.
    let started = st.flows.iter().filter(|f| f.start_ps <= 100 * US).count();
    assert_eq!(st.flows.len(), started + 1);
    assert!(st.flows.len() < total / 2, "{} of {total}", st.flows.len());
    // The progress total is the stream's estimate of the whole run (within a few percent),
    // not flows taken plus the estimate again.
    let est = st.flows_expected();
    assert!(
        est >= total as u64 * 9 / 10 && est <= total as u64 * 11 / 10,
        "estimate {est} for {total} flows"
    );
    // The memory check's count is exact, and once given it is the total.
    st.expect_flows(total as u64);
    assert_eq!(st.flows_expected(), total as u64);
    st.cfg.stop_ps = 400 * US;
    st.run_quiet();
    st.finish();
    assert_eq!(st.flows.len(), total);
    assert_eq!(st.flows_expected(), total as u64);
}

#[test]
fn a_bad_flow_in_the_stream_is_a_clear_error() {
    let topo = shapes::star(4, 100 * GBPS, US).unwrap();
    let ok = |src, dst, t| FlowSpec::background(src, dst, 10_000, t * US);
    let flows = vec![ok(0, 1, 1), ok(1, 2, 2), ok(2, 2, 3), ok(3, 0, 4)];
    // The first flow bad: refused when the simulator is built, as with a list.
    let bad_first = FlowStream::new(vec![Source::list(vec![ok(2, 2, 1)])]);
    let e = Simulator::with_stream(
        topo.clone(),
        NetConfig::default(),
        CcConfig::none_unlimited(),
        bad_first,
    )
    .err()
    .expect("refused");
    assert!(e.contains("flow 0 (2 -> 2)"), "{e}");
    // A later one: the run takes no flow after it and says which.
    let mut sim = Simulator::with_stream(
        topo,
        NetConfig::default(),
        CcConfig::none_unlimited(),
        FlowStream::new(vec![Source::list(flows)]),
    )
    .unwrap();
    sim.run_quiet();
    sim.finish();
    let e = sim.stream_error().expect("the bad flow is reported");
    assert!(
        e.contains("flow 2 (2 -> 2)") && e.contains("same host"),
        "{e}"
    );
    assert_eq!(sim.flows.len(), 2);
    assert_eq!(sim.counters.flows_completed, 2);
}

#[test]
fn schemes_with_per_flow_host_state_run_on_the_collected_stream() {
    // OnRamp keeps state per flow id sized by the flow count: `with_stream` collects first,
    // and the run is the listed one.
    let sets = ["onramp.enabled=true".to_string()];
    let sc = sfc::scenario::from_str(SCENARIO, "stream.toml", Path::new("."), &sets).unwrap();
    let mut list = Simulator::with_flows(sc.topo, sc.net, sc.cc, sc.flows).unwrap();
    list.run_quiet();
    list.finish();
    let (sc, stream) =
        sfc::scenario::from_str_streaming(SCENARIO, "stream.toml", Path::new("."), &sets).unwrap();
    let mut st = Simulator::with_stream(sc.topo, sc.net, sc.cc, stream).unwrap();
    st.run_quiet();
    st.finish();
    assert_eq!(records(&list), records(&st));
    assert_eq!(counters(&list), counters(&st));
}

/// A run that streams its results (`Simulator::stream_results`) gives every flow's record to
/// the sink — each completed one at its completion, in completion order, the rest at
/// `finish` — equal to the listed run's, and keeps no record: the per-flow pages of the flows
/// done with are freed as the run goes.
#[test]
fn a_run_streaming_its_results_gives_every_record_and_keeps_none() {
    use std::sync::{Arc, Mutex};
    let list = run_list();
    let got: Arc<Mutex<Vec<FlowRecord>>> = Arc::default();
    let mut st = stream_sim();
    let sink = got.clone();
    assert!(st.stream_results(Box::new(move |r: &FlowRecord| {
        sink.lock().unwrap().push(r.clone());
        Ok(())
    })));
    st.run_quiet();
    st.finish();
    assert!(st.results_error().is_none());
    let got = got.lock().unwrap().clone();
    let total = list.flows.len();
    assert_eq!(got.len(), total);
    assert_eq!(st.retired_flows(), total as u64);
    // Completed flows first, in completion order: the listed run's fct.txt order.
    let done = list.counters.flows_completed as usize;
    assert!(
        done > 100 && done < total,
        "{done} of {total}: the stop leaves some unfinished"
    );
    assert_eq!(
        got[..done].to_vec(),
        list.records_in_completion_order().collect::<Vec<_>>()
    );
    assert!(got[done..].iter().all(|r| r.fct_ps.is_none()));
    let mut by_id = got.clone();
    by_id.sort_by_key(|r| r.id);
    assert_eq!(by_id, records(&list));
    assert_eq!(counters(&st), counters(&list));
    // Only the page being filled (606 flows < 4,096) is left; the next test sees pages go.
    assert_eq!(st.flow_pages(), (1, 1));
    assert!(st.completion_order.is_empty());
}

/// Retiring releases memory as the run goes: with thousands of short flows, the flow table
/// holds a few pages (the flows in progress) at any time, not one entry per flow of the run.
#[test]
fn streamed_results_hold_the_flows_in_progress_not_the_run() {
    let n = 30_000u64;
    let mut sim = star8_streamed(n, 200_000); // one per 200 ns: a few in flight at a time
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = count.clone();
    assert!(sim.stream_results(Box::new(move |_: &FlowRecord| {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })));
    let mut max_pages = 0;
    let mut last = 0;
    // Run in slices of simulated time and look at the table in between.
    for k in 1..=40u64 {
        sim.cfg.stop_ps = k * 200 * US;
        sim.run_quiet();
        max_pages = max_pages.max(sim.flow_pages().0);
        last = sim.counters.flows_completed;
    }
    sim.finish();
    assert_eq!(last, n, "every flow completed");
    assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), n);
    // 30,000 flows = 8 pages of 4,096; retired pages go, so at most the page being filled
    // and one with stragglers remain.
    assert!(max_pages <= 2, "{max_pages} pages held");
}

/// A `stop` long before the last arrivals: the flows never started are counted alike whether
/// the results are kept or streamed (their pages retired by the thousand).
#[test]
fn a_stopped_run_streaming_its_results_counts_the_unstarted_flows() {
    let spec = |i: u64| star_flow(i, 1000, 200_000);
    let flows: Vec<FlowSpec> = (0..30_000u64).map(spec).collect();
    let cfg = NetConfig::from(sfc::config::CoreConfig {
        stop_ps: 1_000 * US,
        ..Default::default()
    });
    let topo = star8;
    let mut list = Simulator::with_flows(
        topo(),
        cfg.clone(),
        CcConfig::none_unlimited(),
        flows.clone(),
    )
    .unwrap();
    let a = sfc::runguard::run_watched(&mut list, &mut |_| {});
    let stream = FlowStream::new(vec![Source::list(flows)]);
    let mut st = Simulator::with_stream(topo(), cfg, CcConfig::none_unlimited(), stream).unwrap();
    assert!(st.stream_results(Box::new(|_: &FlowRecord| Ok(()))));
    let b = sfc::runguard::run_watched(&mut st, &mut |_| {});
    assert!(a.flows_not_started > 20_000, "{a:?}");
    assert_eq!(a, b);
    assert_eq!(st.retired_flows(), 30_000);
    assert!(st.flow_pages().0 <= 1);
}

/// `Simulator::check_flows` (what `sfc validate` runs over a scenario's stream) finds a bad
/// flow anywhere in the stream, as building from the list does, and counts the good ones.
#[test]
fn check_flows_finds_a_bad_flow_deep_in_the_stream() {
    let spec = |i: u64| match i {
        7_000 => FlowSpec {
            dst: 99,
            ..star_flow(i, 1000, 200_000)
        },
        _ => star_flow(i, 1000, 200_000),
    };
    let topo = star8;
    let flows: Vec<FlowSpec> = (0..10_000u64).map(spec).collect();
    let stream = FlowStream::new(vec![Source::list(flows.clone())]);
    let sim = Simulator::with_stream(
        topo(),
        NetConfig::default(),
        CcConfig::none_unlimited(),
        stream.clone(),
    )
    .unwrap();
    let e = sim.check_flows(stream).unwrap_err();
    let list = Simulator::with_flows(
        topo(),
        NetConfig::default(),
        CcConfig::none_unlimited(),
        flows,
    )
    .err()
    .unwrap();
    assert_eq!(e, list);
    assert!(e.starts_with("flow 7000 (0 -> 99)"), "{e}");
    let good = FlowStream::new(vec![Source::list((0..5_000u64).map(spec).collect())]);
    assert_eq!(sim.check_flows(good), Ok(5_000));
}

/// A run streaming its results is over once its records are out: calling `run` again after
/// `runguard::run_watched` (which gives the unfinished flows' records) does nothing, instead
/// of touching the released flows.
#[test]
fn a_run_streaming_its_results_cannot_be_resumed_after_its_records_went() {
    let spec = |i: u64| star_flow(i, 20_000, 100_000);
    let stream = FlowStream::new(vec![Source::list((0..12_000u64).map(spec).collect())]);
    let cfg = NetConfig::from(sfc::config::CoreConfig {
        stop_ps: 100 * US,
        ..Default::default()
    });
    let topo = star8();
    let mut sim = Simulator::with_stream(topo, cfg, CcConfig::none_unlimited(), stream).unwrap();
    let n = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = n.clone();
    assert!(sim.stream_results(Box::new(move |_: &FlowRecord| {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })));
    let o = sfc::runguard::run_watched(&mut sim, &mut |_| {});
    assert!(o.incomplete() > 0);
    let events = sim.q.events();
    sim.cfg.stop_ps = u64::MAX;
    sim.run_quiet();
    sim.finish();
    assert_eq!(sim.q.events(), events);
    assert_eq!(n.load(std::sync::atomic::Ordering::Relaxed), 12_000);
}

/// A spill file a killed run left in an output directory is removed when the directory is
/// prepared for the next run (and nothing else of the user's is).
#[test]
fn preparing_an_output_directory_removes_a_killed_runs_spill_files() {
    let d = std::env::temp_dir().join(format!("sfc-stream-prep-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(".sfc-records-123-0.spill"), b"x").unwrap();
    std::fs::write(d.join(".sfc-records-123-0.spill.run-123-4"), b"x").unwrap();
    std::fs::write(d.join("notes.txt"), b"mine").unwrap();
    sfc::runguard::prepare_output_dir(&d).unwrap();
    let left: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["notes.txt".to_string()]);
    std::fs::remove_dir_all(&d).ok();
}

/// A sink that fails (a full disk) ends a watched run at the end of the slice in which it
/// failed, instead of simulating to the end for nothing; the error is kept for the caller.
#[test]
fn a_failing_record_sink_stops_the_watched_run_early() {
    let mut sim = star8_streamed(30_000, 1_000_000); // one per µs: 30 ms of arrivals
    let mut n = 0;
    assert!(sim.stream_results(Box::new(move |_: &FlowRecord| {
        n += 1;
        if n > 100 {
            Err(std::io::Error::other("disk full"))
        } else {
            Ok(())
        }
    })));
    let o = sfc::runguard::run_watched(&mut sim, &mut |_| {});
    let e = sim.results_error().expect("the sink's error").to_string();
    assert!(e.contains("disk full"), "{e}");
    // The first slice (a tenth of the stall window, ≥ 10 ms) ran, not the 30 ms.
    assert!(o.flows_completed < 20_000, "{o:?}");
}
