//! Running a resolved scenario end to end: build the simulator, run it with a progress bar,
//! and write the outputs (`flows.csv`, `summary.json`, `fct.txt`, `buffer.csv`, …; the tables
//! as Parquet with `output.format = "parquet"`), all atomically.

use crate::workload::stream::FlowStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::metrics::FlowRecord;
use crate::metrics::output::{
    AtomicWriter, write_atomic, write_fct_file, write_fct_line, write_flows_csv,
};
use crate::metrics::parquet::{OutputFormat, write_flows_parquet};
use crate::metrics::spill::{RecordSpill, records_by_id, stats_from_spill};
use crate::metrics::stats::{RunStats, SizeBins};
use crate::scenario::Scenario;
use crate::sim::{Progress, Simulator};
use crate::units::{fmt_bytes, fmt_time};
use std::sync::{Arc, Mutex};

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write outputs here (created if missing); `None` = write nothing.
    pub out_dir: Option<PathBuf>,
    /// Show a progress bar (only on a terminal, only for runs longer than ~2 s).
    pub progress: bool,
    /// In a streamed run ([`run_stream`]), stream the results too: each flow's record is
    /// written as the flow completes (`fct.txt` in completion order, and a binary spill file
    /// next to the outputs, or in the temp directory without them) and its memory released;
    /// the statistics and `flows.csv` are made from the spill file at the end with bounded
    /// memory ([`crate::metrics::spill`]). Same outputs, byte for byte; memory that follows
    /// the flows in progress, not the flows in the run. Ignored for a run given a list, and
    /// with OnRamp, PB-FS or NDP ([`Simulator::stream_results`]). [`RunResult::sim`] then
    /// holds no record.
    pub stream_results: bool,
    /// What the run does when it finds a PFC deadlock (`--on-deadlock`).
    pub on_deadlock: crate::sim::OnDeadlock,
    /// Threads for the one run (`--threads`; 0 and 1: one). More split the run over
    /// partitions of the network ([`crate::sim::parallel`]) with outputs identical to one
    /// thread's, apart from the measures of the run itself (wall time, rates, peak memory,
    /// peak pending events and live packets); results are then kept, not streamed. A run that
    /// cannot be split runs on one thread and says why in `summary.json`'s
    /// `one_thread_because` (and on stderr before the run, with `progress`).
    pub threads: usize,
}

/// Items the external sorts of the statistics hold in memory at once (16–32 B each: about
/// 40 MB at most, measured on 10 M records).
pub(crate) const SORT_BUDGET_ITEMS: usize = 1 << 20;
/// Records the id-order sort of `flows.csv` holds in memory (80 B each: 20 MB).
const ID_SORT_BUDGET: usize = 1 << 18;

/// The files of a run streaming its results: `fct.txt` being written, and the spill file.
pub(crate) struct ResultFiles {
    /// The FCT file (HPCC format, completion order, finished flows only), if one is written.
    pub(crate) fct: Option<AtomicWriter>,
    /// Every flow's record, in the order given (removed when dropped).
    pub(crate) spill: RecordSpill,
}

impl ResultFiles {
    /// Create the files (the FCT file at `fct_path`, if any; the spill file in `spill_dir`,
    /// else the temp directory) and hand `sim` the sink that fills them; `None` if `sim`
    /// refuses to stream its results (then they are kept as usual).
    pub(crate) fn start(
        sim: &mut Simulator,
        fct_path: Option<&Path>,
        spill_dir: Option<&Path>,
    ) -> Result<Option<Arc<Mutex<ResultFiles>>>, String> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = spill_dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let p = dir.join(format!(".sfc-records-{}-{seq}.spill", std::process::id()));
        let spill = RecordSpill::create(&p)
            .map_err(|e| crate::fsutil::describe("cannot create", &p, &e))?;
        let fct = match fct_path {
            Some(p) => Some(
                AtomicWriter::create(p)
                    .map_err(|e| crate::fsutil::describe("cannot write", p, &e))?,
            ),
            None => None,
        };
        let files = Arc::new(Mutex::new(ResultFiles { fct, spill }));
        let shared = files.clone();
        let sink = move |r: &FlowRecord| -> std::io::Result<()> {
            let mut g = shared
                .lock()
                .map_err(|_| std::io::Error::other("result writer poisoned"))?;
            if r.fct_ps.is_some()
                && let Some(w) = &mut g.fct
            {
                write_fct_line(w, r)?;
            }
            g.spill.push(r)
        };
        Ok(sim.stream_results(Box::new(sink)).then_some(files))
    }
}

/// The flows' records at the end of a run: kept by the simulator, or streamed to files.
enum Results<'a> {
    Kept,
    Streamed(&'a mut ResultFiles),
}

/// Everything a run produced.
pub struct RunResult {
    /// Slowdown statistics.
    pub stats: RunStats,
    /// The `summary.json` object.
    pub summary: serde_json::Value,
    /// The simulator in its final state (for tests and extra analysis).
    pub sim: Simulator,
    /// Wall-clock seconds spent in the event loop.
    pub wall_seconds: f64,
    /// How the run ended (flows completed, stalled).
    pub outcome: crate::runguard::Outcome,
    /// The failure to report after the outputs are written (a stalled run, or flows left
    /// unfinished without a deliberate `stop`): the caller prints it and exits non-zero.
    pub failure: Option<String>,
    /// A note for stderr (a deliberate `stop` left flows unfinished), not a failure.
    pub note: Option<String>,
}

/// Peak resident set size of this process, bytes (Linux `VmHWM`; 0 elsewhere).
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// A progress callback that lazily shows an indicatif bar after 2 s on a terminal.
pub fn progress_bar(enabled: bool, stop_ps: u64) -> impl FnMut(&Progress) {
    let t0 = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    move |p: &Progress| {
        if !enabled {
            return;
        }
        if bar.is_none() {
            if t0.elapsed().as_secs_f64() < 2.0
                || !std::io::IsTerminal::is_terminal(&std::io::stderr())
            {
                return;
            }
            let (len, style) = if stop_ps != u64::MAX {
                (
                    stop_ps / 1_000_000,
                    "{bar:40} {percent:>3}% sim {pos}/{len} us  ETA {eta}  {msg}",
                )
            } else {
                (
                    p.flows_total.max(1),
                    "{bar:40} {pos}/{len} flows  ETA {eta}  {msg}",
                )
            };
            let b = indicatif::ProgressBar::new(len);
            if let Ok(s) = indicatif::ProgressStyle::with_template(style) {
                b.set_style(s);
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            if stop_ps != u64::MAX {
                b.set_position(p.now_ps / 1_000_000);
            } else {
                b.set_position(p.flows_completed);
            }
            b.set_message(format!("{:.1} M events", p.events as f64 / 1e6));
        }
    }
}

/// Build the summary JSON of a finished simulation.
pub fn summary_json(sim: &Simulator, stats: &RunStats, name: &str, wall: f64) -> serde_json::Value {
    let events = sim.q.events();
    let hops = sim.counters.packet_hops;
    let ls = sim.link_stats();
    let n = ls.len().max(1) as f64;
    // Switch ports facing a host: the receivers' last hop (BFC Fig. 8's utilization).
    let host_nodes: std::collections::HashSet<u32> = sim.hosts.iter().map(|h| h.node).collect();
    let downs: Vec<f64> = ls
        .iter()
        .filter(|l| !host_nodes.contains(&l.0) && host_nodes.contains(&l.2))
        .map(|l| l.5)
        .collect();
    let link_util = json!({
        "mean": ls.iter().map(|l| l.5).sum::<f64>() / n,
        "max": ls.iter().map(|l| l.5).fold(0.0, f64::max),
        "host_down": downs.iter().sum::<f64>() / downs.len().max(1) as f64,
    });
    // P99 of the per-switch buffer watermarks (the `buffer_cdf` plot's 0.99 point).
    let buffer_p99 = sim
        .buffer_mon
        .cdf_points()
        .iter()
        .find(|&&(_, f)| f >= 0.99)
        .map_or(0, |&(b, _)| b);
    let counters = serde_json::to_value(&sim.counters).unwrap_or_default();
    // The receiver-throughput CDF's population (the `throughput_cdf` plot): every 100 µs
    // interval in which a host received payload. Percentiles at index ⌊n·p⌋ of the sorted
    // samples, as the slowdown percentiles.
    let mut tput = sim.throughput.samples_gbps();
    tput.sort_by(f64::total_cmp);
    let pct = |p: f64| (!tput.is_empty()).then(|| crate::metrics::stats::percentile(&tput, p));
    let throughput = json!({
        "samples": tput.len(),
        "p10_gbps": pct(0.10),
        "p50_gbps": pct(0.50),
        "p90_gbps": pct(0.90),
        "mean_gbps": (!tput.is_empty()).then(|| tput.iter().sum::<f64>() / tput.len() as f64),
    });
    let mut v = json!({
        "name": name,
        "flows_total": stats.flows_total,
        "flows_completed": stats.flows_completed,
        "events": events,
        "packet_hops": hops,
        "wall_seconds": wall,
        "events_per_second": events as f64 / wall.max(1e-9),
        "packet_hops_per_second": hops as f64 / wall.max(1e-9),
        "sim_time_ps": sim.q.now(),
        "drops": sim.counters.drops + sim.counters.drops_link_error,
        "peak_buffer_bytes": sim.peak_buffer_bytes(),
        "buffer_p99_bytes": buffer_p99,
        "peak_rss_bytes": peak_rss_bytes(),
        "base_rtt_ps": sim.base_rtt_ps,
        "bdp_bytes": sim.bdp_bytes,
        "cc": sim.cc_cfg.name(),
        "slowdown": {
            "p50": stats.slowdown.p50,
            "p95": stats.slowdown.p95,
            "p99": stats.slowdown.p99,
            "p999": stats.slowdown.p999,
            "mean": stats.slowdown.mean,
            "max": stats.slowdown.max,
        },
        "bins": stats.bins,
        "by_dport": stats.by_dport,
        "counters": counters,
        "packets_peak_live": sim.arena.peak_live(),
        "events_peak_pending": sim.q.peak_len(),
        "link_utilization": link_util,
        "throughput": throughput,
        "rtt": sim.rtt.summary_json(),
    });
    if let Some(o) = v.as_object_mut() {
        // The monitored queues (`output.queues`): peak and how they settled.
        if !sim.cfg.queue_monitor.is_empty() {
            let qs: Vec<_> = (0..sim.queue_mon.keys().len())
                .map(|k| sim.queue_mon.settle_stats(k))
                .collect();
            o.insert(
                "queues".into(),
                serde_json::to_value(qs).unwrap_or_default(),
            );
            o.insert(
                "queue_percentiles".into(),
                serde_json::to_value(sim.queue_mon.pooled_percentiles()).unwrap_or_default(),
            );
        }
        // Link failures (runs with link events only).
        if let Some(f) = sim.failure_summary() {
            o.insert("failures".into(), f);
        }
        // One section per scheme (`ecn`, `sfc`, `onramp`, `pfc`, …), written by the scheme
        // (the lossless fabric's deadlock watch adds what it found to its scheme's section).
        let mut sections = sim.scheme_summaries();
        crate::registry::add_deadlocks(&mut sections, sim.deadlocks());
        for (name, section) in sections {
            o.insert(name.into(), section);
        }
    }
    v
}

/// The packet capture's file in a run's output directory ([`crate::capture`]).
pub const CAPTURE_FILE: &str = "capture.pcapng";

/// Run `sc` and write its outputs.
pub fn run(sc: Scenario, opts: &RunOptions) -> Result<RunResult, String> {
    run_with(sc, None, opts)
}

/// Run `sc` (resolved by [`crate::scenario::from_str_streaming`], without its flow list) on
/// the flows of `stream`, taken as the run reaches their start
/// ([`Simulator::with_stream`]): the same outputs as [`run`] on the scenario with its list,
/// without the list.
pub fn run_stream(
    sc: Scenario,
    stream: FlowStream,
    opts: &RunOptions,
) -> Result<RunResult, String> {
    run_with(sc, Some(stream), opts)
}

fn run_with(
    sc: Scenario,
    stream: Option<FlowStream>,
    opts: &RunOptions,
) -> Result<RunResult, String> {
    let Scenario {
        name,
        topo,
        net,
        cc,
        flows,
        bins,
        flows_csv,
        format,
        dport_bins,
        stop_set,
        document,
        ..
    } = sc;
    let stop = net.stop_ps;
    let meta = crate::runguard::RunMeta {
        seed: net.seed,
        stop_set,
        scenario: serde_json::to_value(&document).unwrap_or_default(),
        source: name.clone(),
    };
    // Everything that can fail is checked before the simulation, not after it.
    if let Some(dir) = &opts.out_dir {
        crate::runguard::prepare_output_dir(dir)?;
    }
    let threads = opts.threads.max(1);
    // A run split over threads keeps its records (they are merged at the end).
    let build_opts = RunOptions {
        stream_results: opts.stream_results && threads == 1,
        ..opts.clone()
    };
    let (mut sim, files) = build_simulator(topo, net, cc, flows, stream, &build_opts)?;
    sim.on_deadlock = opts.on_deadlock;
    if sim.cfg.capture.is_some() {
        let Some(dir) = &opts.out_dir else {
            return Err(
                "`[capture]` writes capture.pcapng into the run's output directory: \
                        run with one (not --no-output)"
                    .into(),
            );
        };
        sim.start_capture(&dir.join(CAPTURE_FILE))?;
    }
    let t0 = Instant::now();
    let mut cb = progress_bar(opts.progress, stop);
    let (outcome, mut sim, used) = run_on_threads(sim, threads, opts.progress, &mut cb);
    if crate::process::interrupt_requested() {
        return Err(crate::process::INTERRUPTED.into());
    }
    let wall = t0.elapsed().as_secs_f64();
    sim.finish();
    let capture = sim.finish_capture()?;
    if let Some(e) = sim.stream_error() {
        return Err(e.to_string());
    }
    if let Some(e) = sim.results_error() {
        return Err(e.to_string());
    }
    sim.check_invariants()
        .map_err(|e| format!("internal invariant violated: {e}"))?;
    let mut guard = match &files {
        Some(f) => Some(f.lock().map_err(|_| "result writer poisoned".to_string())?),
        None => None,
    };
    let mut results = match guard.as_deref_mut() {
        Some(f) => Results::Streamed(f),
        None => Results::Kept,
    };
    let io = |e: std::io::Error| format!("the flow records' spill file: {e}");
    let stats = match &mut results {
        // From the spill file, with bounded memory: the same numbers, bit for bit.
        Results::Streamed(f) => {
            stats_from_spill(&mut f.spill, &bins, true, dport_bins, SORT_BUDGET_ITEMS)
                .map_err(io)?
        }
        // Statistics and output files read the records one at a time from the simulator's
        // compact per-flow state: no copy of all records.
        Results::Kept => {
            let stats = RunStats::compute(&sim, &bins).with_dport_breakdown(&sim);
            if dport_bins {
                stats.with_dport_bins(&sim, &bins)
            } else {
                stats
            }
        }
    };
    let mut summary = summary_json(&sim, &stats, &name, wall);
    used.annotate(&mut summary);
    if let (Some(f), Some(o)) = (fairness(&sim, &mut results)?, summary.as_object_mut()) {
        o.insert("fairness".into(), f);
    }
    if let (Some(c), Some(o)) = (&capture, summary.as_object_mut()) {
        o.insert(
            "capture".into(),
            serde_json::to_value(c).unwrap_or_default(),
        );
    }
    crate::runguard::annotate(&mut summary, &outcome, stop, &meta);
    if let Some(dir) = &opts.out_dir {
        // The resolved scenario first: `summary.json`, written last, marks a complete set.
        if let Ok(t) = toml::to_string(&document) {
            let p = dir.join("scenario.toml");
            write_atomic(&p, t.as_bytes())
                .map_err(|e| crate::fsutil::describe("cannot write", &p, &e))?;
        }
        let tables = Tables { flows_csv, format };
        write_outputs_of(dir, &sim, &summary, tables, results)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    drop(guard);
    // The spill file goes now, not when the caller drops the result.
    sim.close_results();
    drop(files);
    let failure = outcome.failure(stop_set);
    let note = [outcome.stop_note(stop_set), scheme_warnings(&sim)]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"));
    Ok(RunResult {
        stats,
        summary,
        sim,
        wall_seconds: wall,
        outcome,
        failure,
        note,
    })
}

/// The note for a run split over fewer threads (`parts`) than asked (`asked`): a partition
/// holds whole ToRs, so the network has only `parts` of them.
pub fn fewer_threads_note(parts: usize, asked: usize) -> String {
    format!(
        "this run uses {parts} threads, not {asked}: a partition holds whole ToRs and the \
         network has {parts}"
    )
}

/// What a run's `summary` says about how it used the `asked` threads, as notes for a person:
/// why it ran on one thread (`one_thread_because`), or that it was split over fewer threads
/// than asked (`parallel.threads` < `asked`). Empty when it used them all (or one was asked).
pub fn thread_notes(summary: &serde_json::Value, asked: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(why) = summary.get("one_thread_because").and_then(|w| w.as_str()) {
        notes.push(format!("this run uses one thread: {why}"));
    }
    if let Some(parts) = summary["parallel"]["threads"].as_u64()
        && (parts as usize) < asked
    {
        notes.push(fewer_threads_note(parts as usize, asked));
    }
    notes
}

/// How a run asked to use several threads ran ([`run_on_threads`]).
#[derive(Clone, Debug, Default)]
pub struct ThreadsUsed {
    /// The split run's synchronisation counts (`None`: it ran on one thread).
    pub parallel: Option<crate::sim::parallel::ParallelStats>,
    /// Why a run asked to use several threads ran on one (`summary.json`'s
    /// `one_thread_because`).
    pub one_thread_because: Option<String>,
}

impl ThreadsUsed {
    /// Add `parallel` (a split run's counts) or `one_thread_because` to `summary`.
    pub fn annotate(&self, summary: &mut serde_json::Value) {
        let Some(o) = summary.as_object_mut() else {
            return;
        };
        if let Some(p) = &self.parallel {
            o.insert(
                "parallel".into(),
                serde_json::to_value(p).unwrap_or_default(),
            );
        }
        if let Some(why) = &self.one_thread_because {
            o.insert("one_thread_because".into(), why.clone().into());
        }
    }
}

/// Run `sim` to its end under the watchdog ([`crate::runguard::run_watched`]) on `threads`
/// threads when it can be split ([`crate::sim::parallel::ParallelSim`]; else on one, saying
/// why on stderr before the run when `say` is set — a caller without a terminal reads it from
/// the returned [`ThreadsUsed`] instead): the outcome, the simulator holding the whole run
/// (merged), and how the threads were used.
pub fn run_on_threads(
    mut sim: Simulator,
    threads: usize,
    say: bool,
    progress: &mut dyn FnMut(&Progress),
) -> (crate::runguard::Outcome, Simulator, ThreadsUsed) {
    if threads > 1 {
        match crate::sim::parallel::ParallelSim::split(sim, threads) {
            Ok(mut par) => {
                if say && par.threads() < threads {
                    eprintln!("note: {}", fewer_threads_note(par.threads(), threads));
                }
                let outcome = crate::runguard::run_watched(&mut par, progress);
                let used = ThreadsUsed {
                    parallel: Some(par.stats()),
                    one_thread_because: None,
                };
                return (outcome, par.into_merged(), used);
            }
            Err((mut back, why)) => {
                if say {
                    eprintln!("note: this run uses one thread: {why}");
                }
                let outcome = crate::runguard::run_watched(&mut *back, progress);
                let used = ThreadsUsed {
                    parallel: None,
                    one_thread_because: Some(why),
                };
                return (outcome, *back, used);
            }
        }
    }
    let outcome = crate::runguard::run_watched(&mut sim, progress);
    (outcome, sim, ThreadsUsed::default())
}

/// Result files shared with the simulator's completion callback.
type SharedResultFiles = std::sync::Arc<std::sync::Mutex<ResultFiles>>;

/// The simulator of a run, its memory checked first (its flows from the list `flows`, or from
/// `stream` as the run goes), and, when it streams and `opts` asks to stream the results, the
/// result files its records go to as flows complete.
fn build_simulator(
    topo: crate::topology::TopologySpec,
    net: crate::registry::NetConfig,
    cc: crate::cc::CcConfig,
    flows: Vec<crate::workload::FlowSpec>,
    stream: Option<FlowStream>,
    opts: &RunOptions,
) -> Result<(Simulator, Option<SharedResultFiles>), String> {
    let streamed = stream.is_some();
    let mut sim = match stream {
        Some(stream) => {
            let est =
                crate::runguard::check_memory_stream(&topo, &net, &stream, opts.stream_results)?;
            let mut sim = Simulator::with_stream(topo, net, cc, stream)?;
            sim.expect_flows(est.flows);
            sim
        }
        None => {
            crate::runguard::check_memory(&topo, &net, &flows)?;
            // The workload list is released as the simulator builds its flow descriptions.
            Simulator::with_flows(topo, net, cc, flows)?
        }
    };
    let files = if streamed && opts.stream_results {
        let fct = opts.out_dir.as_ref().map(|d| d.join("fct.txt"));
        ResultFiles::start(&mut sim, fct.as_deref(), opts.out_dir.as_deref())?
    } else {
        None
    };
    Ok((sim, files))
}

/// The `fairness` section of `summary.json` (runs that track per-sender throughput), from
/// the records kept in the simulator or read back from the spill file.
fn fairness(
    sim: &Simulator,
    results: &mut Results<'_>,
) -> Result<Option<serde_json::Value>, String> {
    let io = |e: std::io::Error| format!("the flow records' spill file: {e}");
    Ok(match results {
        Results::Kept => fairness_json(sim),
        Results::Streamed(f) if sim.sender_throughput.is_some() => {
            let mut err = None;
            // Push order will do: the spans are sorted per sender.
            let recs = f.spill.read().map_err(io)?;
            let v = fairness_json_of(sim, recs.map_while(|r| r.map_err(|e| err = Some(e)).ok()));
            if let Some(e) = err {
                return Err(io(e));
            }
            v
        }
        Results::Streamed(_) => None,
    })
}

/// Which tables a run writes, and in which format.
#[derive(Clone, Copy, Debug)]
struct Tables {
    /// Write the per-flow table.
    flows_csv: bool,
    /// CSV or Parquet.
    format: OutputFormat,
}

/// Write `flows.csv`, `fct.txt` (HPCC format, completion order), `buffer.csv`, `links.csv`,
/// `throughput.csv`, `queues.csv` and, last, `summary.json` into `dir` (the CSV format): a
/// directory holding `summary.json` holds a complete set (see
/// [`crate::runguard::prepare_output_dir`]).
pub fn write_outputs(
    dir: &Path,
    sim: &Simulator,
    summary: &serde_json::Value,
    flows_csv: bool,
) -> std::io::Result<()> {
    let tables = Tables {
        flows_csv,
        format: OutputFormat::Csv,
    };
    write_outputs_of(dir, sim, summary, tables, Results::Kept)
}

/// Write the per-flow table `dir/flows.{csv,parquet}` of `records` (id order).
fn write_flows_table<R: std::borrow::Borrow<FlowRecord>>(
    dir: &Path,
    format: OutputFormat,
    records: impl IntoIterator<Item = R>,
) -> std::io::Result<()> {
    match format {
        OutputFormat::Csv => write_flows_csv(&dir.join("flows.csv"), records),
        OutputFormat::Parquet => write_flows_parquet(&dir.join("flows.parquet"), records),
    }
}

/// [`write_outputs`] with the records kept by `sim` or streamed to files, the tables in
/// `tables.format`.
fn write_outputs_of(
    dir: &Path,
    sim: &Simulator,
    summary: &serde_json::Value,
    tables: Tables,
    results: Results<'_>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let Tables { flows_csv, format } = tables;
    match results {
        Results::Kept => {
            if flows_csv {
                write_flows_table(dir, format, sim.records_iter())?;
            }
            // Completion order, each record built as it is written.
            write_fct_file(&dir.join("fct.txt"), sim.records_in_completion_order())?;
        }
        Results::Streamed(f) => {
            if flows_csv {
                // Id order from the spill file (an external sort: bounded memory).
                let mut err = None;
                let recs = records_by_id(&mut f.spill, ID_SORT_BUDGET)?;
                write_flows_table(
                    dir,
                    format,
                    recs.map_while(|r| r.map_err(|e| err = Some(e)).ok()),
                )?;
                if let Some(e) = err {
                    return Err(e);
                }
            }
            // Written as the flows completed.
            if let Some(w) = f.fct.take() {
                w.finish()?;
            }
        }
    }
    match format {
        OutputFormat::Csv => sim.buffer_mon.write_csv(&dir.join("buffer.csv"))?,
        OutputFormat::Parquet => sim.buffer_mon.write_parquet(&dir.join("buffer.parquet"))?,
    }
    // Link utilization per direction.
    let mut l = String::from("node,port,peer,rate_bps,tx_bytes,utilization\n");
    for (n, p, peer, r, b, u) in sim.link_stats() {
        l.push_str(&format!("{n},{p},{peer},{r},{b},{u}\n"));
    }
    write_atomic(&dir.join("links.csv"), l.as_bytes())?;
    // Receiver throughput samples (one per receiver per 100 µs interval with traffic):
    // interval start, receiving host's node id, Gb/s. The same per sender on request.
    let host_nodes: Vec<u32> = sim.hosts.iter().map(|h| h.node).collect();
    let meters = std::iter::once((&sim.throughput, "receiver", "throughput")).chain(
        sim.sender_throughput
            .as_ref()
            .map(|m| (m, "sender", "sender_throughput")),
    );
    for (m, who, file) in meters {
        match format {
            OutputFormat::Csv => {
                let t = throughput_csv(m, &host_nodes, who);
                write_atomic(&dir.join(format!("{file}.csv")), t.as_bytes())?;
            }
            OutputFormat::Parquet => {
                write_throughput_parquet(&dir.join(format!("{file}.parquet")), m, &host_nodes, who)?
            }
        }
    }
    if !sim.cfg.queue_monitor.is_empty() {
        match format {
            OutputFormat::Csv => sim.queue_mon.write_csv(&dir.join("queues.csv"))?,
            OutputFormat::Parquet => sim.queue_mon.write_parquet(&dir.join("queues.parquet"))?,
        }
    }
    let s = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("summary.json"), s.as_bytes())
}

/// [`throughput_csv`]'s rows as a Parquet table (`time_ns` and `gbps` doubles, the others
/// integers), streaming and atomically.
fn write_throughput_parquet(
    path: &Path,
    m: &crate::metrics::buffer::ThroughputMeter,
    host_nodes: &[u32],
    who: &str,
) -> std::io::Result<()> {
    use crate::metrics::parquet::{ColumnKind, ParquetTable, ns};
    let mut t = ParquetTable::create(
        path,
        &[
            ("sample", ColumnKind::Int),
            ("time_ns", ColumnKind::Float),
            (who, ColumnKind::Int),
            ("gbps", ColumnKind::Float),
        ],
    )?;
    for (i, (h, start_ps, g)) in m.rows_iter().enumerate() {
        let node = host_nodes.get(h).copied().unwrap_or(u32::MAX);
        t.int(0, i as i64);
        t.float(1, ns(start_ps));
        t.int(2, i64::from(node));
        t.float(3, g);
        t.end_row()?;
    }
    t.finish()
}

/// `sample,time_ns,<who>,gbps` rows of a goodput meter (host-major, then time; `who` names
/// the column of the host's node id).
fn throughput_csv(
    m: &crate::metrics::buffer::ThroughputMeter,
    host_nodes: &[u32],
    who: &str,
) -> String {
    let mut t = format!("sample,time_ns,{who},gbps\n");
    for (i, (h, start_ps, g)) in m.rows().into_iter().enumerate() {
        let node = host_nodes.get(h).copied().unwrap_or(u32::MAX);
        t.push_str(&format!(
            "{i},{},{node},{g}\n",
            crate::metrics::output::fmt_ns(start_ps)
        ));
    }
    t
}

/// The `fairness` section of `summary.json` (with `output.sender_throughput`): Jain's index of
/// the senders' goodput per interval among the senders with a flow in progress over all of it
/// ([`crate::metrics::fairness::interval_fairness`]). A flow is in progress from its start to
/// its completion, or to the end of the run if unfinished.
pub fn fairness_json(sim: &Simulator) -> Option<serde_json::Value> {
    fairness_json_of(sim, sim.records_iter())
}

/// [`fairness_json`] over the given records (every flow of the run, in id order).
fn fairness_json_of(
    sim: &Simulator,
    records: impl Iterator<Item = FlowRecord>,
) -> Option<serde_json::Value> {
    let m = sim.sender_throughput.as_ref()?;
    let end = sim.q.now();
    let mut spans = vec![Vec::new(); sim.hosts.len()];
    for r in records {
        let h = sim.host_index(r.src);
        let stop = r.fct_ps.map_or(end, |f| r.start_ps + f);
        spans[h].push((r.start_ps, stop));
    }
    serde_json::to_value(crate::metrics::fairness::interval_fairness(m, &spans)).ok()
}

/// The schemes' warnings about the finished run ([`crate::scheme::Scheme::warnings`]: PFC's
/// drops in a lossless fabric, pauses that hold on lossy links), one per line.
pub fn scheme_warnings(sim: &Simulator) -> Option<String> {
    let w = sim.scheme_warnings();
    (!w.is_empty()).then(|| w.join("\n"))
}

/// The stdout summary's line about PFC deadlocks, when the run found some: their number
/// and the first one's time and cycle.
pub fn deadlock_line(sim: &Simulator) -> Option<(String, String)> {
    let d = sim.deadlocks();
    let first = d.found.first()?;
    Some((
        "PFC deadlocks".into(),
        format!(
            "{} (first at {}: {})",
            d.count,
            fmt_time(first.detected_ps),
            first.cycle_text()
        ),
    ))
}

/// The `extra` lines of the stdout summary table.
pub fn extra_lines(r: &RunResult) -> Vec<(String, String)> {
    let s = &r.sim;
    let ev = s.q.events();
    let mut lines = vec![
        ("sim time".into(), fmt_time(s.q.now())),
        ("peak buffer".into(), fmt_bytes(s.peak_buffer_bytes())),
        (
            "drops".into(),
            format!("{}", s.counters.drops + s.counters.drops_link_error),
        ),
        (
            "retransmitted pkts".into(),
            format!("{}", s.counters.retx_packets),
        ),
        ("timeouts".into(), format!("{}", s.counters.timeouts)),
        (
            "PFC pauses".into(),
            format!("{}", s.scheme_stat("pfc", "pauses")),
        ),
        (
            "BTS generated / suppressed".into(),
            format!(
                "{} / {}",
                s.scheme_stat("sfc", "bts_generated"),
                s.scheme_stat("sfc", "bts_suppressed")
            ),
        ),
        (
            "QP pauses (SFC/OnRamp)".into(),
            format!("{}", s.counters.qp_pauses),
        ),
        ("events".into(), format!("{ev}")),
        ("packet hops".into(), format!("{}", s.counters.packet_hops)),
        ("wall time".into(), format!("{:.3} s", r.wall_seconds)),
        (
            "events/s".into(),
            format!("{:.2} M", ev as f64 / r.wall_seconds.max(1e-9) / 1e6),
        ),
        (
            "packet hops/s".into(),
            format!(
                "{:.2} M",
                s.counters.packet_hops as f64 / r.wall_seconds.max(1e-9) / 1e6
            ),
        ),
    ];
    if let Some(f) = &s.failures {
        let at = lines
            .iter()
            .position(|l| l.0 == "drops")
            .map_or(0, |i| i + 1);
        lines.insert(
            at,
            (
                "link failures".into(),
                format!(
                    "{} changes, {} reroutes, {} pkts lost",
                    f.changes, f.reroutes, f.link_drops
                ),
            ),
        );
    }
    if let Some(l) = deadlock_line(s) {
        // After the PFC pauses.
        let at = lines
            .iter()
            .position(|l| l.0 == "PFC pauses")
            .map_or(0, |i| i + 1);
        lines.insert(at, l);
    }
    lines
}

/// Default size bins.
pub fn default_bins() -> SizeBins {
    SizeBins::EqualCount(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notes follow the summary: none when the run used the threads asked, the reason
    /// when it ran on one, the partitions when there were fewer than asked.
    #[test]
    fn thread_notes_say_how_the_threads_were_used() {
        let split = serde_json::json!({ "parallel": { "threads": 2, "threads_asked": 2 } });
        assert!(thread_notes(&split, 2).is_empty());
        let fewer = serde_json::json!({ "parallel": { "threads": 2, "threads_asked": 3 } });
        assert_eq!(
            thread_notes(&fewer, 3),
            ["this run uses 2 threads, not 3: a partition holds whole ToRs and the network has 2"]
        );
        let one =
            serde_json::json!({ "one_thread_because": "the network has fewer than two ToRs" });
        assert_eq!(
            thread_notes(&one, 4),
            ["this run uses one thread: the network has fewer than two ToRs"]
        );
        assert!(thread_notes(&serde_json::json!({}), 1).is_empty());
    }
}
