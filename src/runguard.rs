//! Guards around a run, so that no run is silently wrong, lost or unbounded:
//!
//! * [`check_memory`] estimates the memory a run needs from its flow count and the length of
//!   its monitor time series, and refuses (with the estimate) what the machine cannot hold,
//!   instead of aborting on an allocation hours later;
//! * [`prepare_output_dir`] checks the output directory *before* the simulation and removes
//!   the previous run's completion marker and files, so a directory never mixes two runs;
//! * [`run_watched`] runs the event loop in slices of simulated time and stops a run in which
//!   started flows make no progress (no payload byte delivered, no flow completed) for a long
//!   stretch, with a diagnosis;
//! * [`annotate`] records in `summary.json` how the run ended and everything needed to re-run
//!   it (seed, resolved scenario, program version);
//! * the flow-list shape the estimate reads is [`crate::workload::shape::FlowShape`]; the
//!   process-wide pieces (temporary files, the SIGINT/SIGTERM handler, available memory) are
//!   [`crate::process`]'s.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::LossRecovery;
use crate::registry::NetConfig;
use crate::sim::{Progress, Simulator};
use crate::topology::TopologySpec;
use crate::units::{MS, SEC, US, fmt_bytes, fmt_time};
use crate::workload::FlowSpec;
use crate::workload::shape::FlowShape;

/// Files a run writes into its output directory; `summary.json` is written last and marks a
/// complete set.
pub const OUTPUT_FILES: &[&str] = &[
    "summary.json",
    "flows.csv",
    "fct.txt",
    "buffer.csv",
    "links.csv",
    "throughput.csv",
    "sender_throughput.csv",
    "queues.csv",
    "flows.parquet",
    "buffer.parquet",
    "throughput.parquet",
    "sender_throughput.parquet",
    "queues.parquet",
    "scenario.toml",
];

/// Check that `dir` can take the outputs (before simulating) and remove the files of a
/// previous run there, the completion marker `summary.json` first: an interrupted run then
/// leaves a directory without `summary.json`, never new files beside an old summary.
pub fn prepare_output_dir(dir: &Path) -> Result<(), String> {
    crate::fsutil::check_output_dir(dir)?;
    for f in OUTPUT_FILES {
        remove_if_present(&dir.join(f))?;
    }
    // Spill files a killed run left behind (`report::ResultFiles`, `metrics::spill`), and
    // the temp files of outputs it was writing (`.fct.txt.tmp-PID-SEQ`,
    // `metrics::output::write_atomic`; a run killed by SIGKILL cannot remove them itself).
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let temp_of_output = OUTPUT_FILES
                .iter()
                .any(|f| name.starts_with(&format!(".{f}.tmp-")));
            if name.starts_with(".sfc-records-") || temp_of_output {
                remove_if_present(&e.path())?;
            }
        }
    }
    Ok(())
}

/// An exclusive lock on the output directory `dir` (`flock` on `.sfc-lock` in it, which is
/// created with the directory if needed), held while the returned file is open; the kernel
/// drops it when the process ends, however it ends. `busy`: the error when another process
/// holds it. `sfc run` takes it before clearing stale outputs, so that a second run into the
/// same directory stops at once instead of deleting the first one's spill file mid-run.
pub fn lock_output_dir(dir: &Path, busy: &str) -> Result<std::fs::File, String> {
    crate::fsutil::check_output_dir(dir)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::fsutil::describe("cannot create the output directory", dir, &e))?;
    let path = dir.join(".sfc-lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            crate::fsutil::describe(
                "cannot write into the output directory: creating",
                &path,
                &e,
            )
        })?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(format!("{}: {busy}", dir.display()));
        }
    }
    Ok(f)
}

/// Remove the file `p` if it exists (a missing file is fine).
fn remove_if_present(p: &Path) -> Result<(), String> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(crate::fsutil::describe("cannot remove stale output", p, &e)),
    }
}

/// Refuse an output directory in which a run would overwrite (or, removing stale outputs,
/// delete) one of its own input files: `inputs` are the scenario file and the files it reads.
/// Paths are compared after resolving symlinks and `.`/`..`.
pub fn check_outputs_spare_inputs(dir: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let Ok(dir_c) = std::fs::canonicalize(dir) else {
        return Ok(()); // not created yet: nothing in it can be an input
    };
    for input in inputs {
        let Ok(inp) = std::fs::canonicalize(input) else {
            continue;
        };
        for f in OUTPUT_FILES {
            let out = dir_c.join(f);
            let same = std::fs::canonicalize(&out).map_or(out == inp, |o| o == inp);
            if same {
                return Err(format!(
                    "output directory {}: the run writes `{f}` there, which is the input file {}; choose another --out",
                    dir.display(),
                    input.display()
                ));
            }
        }
    }
    Ok(())
}

/// Remove the previous run's output *files* at `paths` before a run (the completion marker
/// should come first), so an interrupted run never leaves new outputs beside stale ones. A
/// symbolic link is followed and its target removed (the link stays and is written through
/// again); a FIFO or device is left alone (it holds no stale content); a missing file is fine.
pub fn remove_stale_outputs(paths: &[&Path]) -> Result<(), String> {
    for p in paths {
        let target = crate::fsutil::resolve_symlinks(p)
            .map_err(|e| crate::fsutil::describe("cannot resolve", p, &e))?;
        if !std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()) {
            continue;
        }
        remove_if_present(&target)?;
    }
    Ok(())
}

/// How many runs to start at once (the variants of a `[[compare]]`): up to `threads`, and
/// no more than the largest of their memory estimates (`estimates_bytes`, each a
/// [`MemoryEstimate::total`]) fit together in 80 % of `avail_bytes`, the limit each run alone
/// is held to ([`check_estimate`]), so a run is never refused for memory its siblings hold.
/// At least one.
pub fn concurrent_runs(estimates_bytes: &[u64], avail_bytes: u64, threads: usize) -> usize {
    let mut e = estimates_bytes.to_vec();
    e.sort_unstable_by(|a, b| b.cmp(a));
    let budget = avail_bytes / 5 * 4;
    let mut sum = 0u64;
    let mut k = 0;
    for x in e.iter().take(threads.max(1)) {
        sum = sum.saturating_add(*x);
        if sum > budget {
            break;
        }
        k += 1;
    }
    k.max(1)
}

/// Bytes of memory per flow during a run: the simulator's per-flow record (description and
/// result), the workload entry (alive while the simulator is built), the flow's slot-map
/// entry (sender and receiver slots, 8 B) and completion-order entry (4 B) and one value of
/// the statistics at the end (with allocation slack). QP and controller state follow the
/// flows active at once, not counted here.
pub fn bytes_per_flow() -> u64 {
    (std::mem::size_of::<crate::host::Flow>() + std::mem::size_of::<FlowSpec>() + 8 + 4 + 8) as u64
        * 3
        / 2
}

/// [`bytes_per_flow`] for a run whose flows come from a stream ([`check_memory_stream`]): no
/// workload list.
pub fn bytes_per_streamed_flow() -> u64 {
    (std::mem::size_of::<crate::host::Flow>() + 8 + 4 + 8) as u64 * 3 / 2
}

/// Estimated memory of a run, bytes, with the parts for the message.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    /// Flows in the run.
    pub flows: u64,
    /// Flow state.
    pub flows_bytes: u64,
    /// Buffer and queue monitor time series.
    pub monitors_bytes: u64,
    /// Simulated time the monitors are sized for (from the first flow's start, idle stretches
    /// excluded), picoseconds.
    pub horizon_ps: u64,
    /// Ports and forwarding table ([`network_bytes`]).
    pub network_bytes: u64,
}

impl MemoryEstimate {
    /// Total, bytes.
    pub fn total(&self) -> u64 {
        self.flows_bytes
            .saturating_add(self.monitors_bytes)
            .saturating_add(self.network_bytes)
    }
}

/// The per-switch tables of the flow-control schemes that a run allocates when it is built,
/// whatever its traffic: `(key that sizes the table, bytes per switch)`, as each scheme
/// declares them ([`crate::scheme::SchemeConfig::tables`]), counted at every switch.
pub fn scheme_tables(net: &NetConfig) -> Vec<(&'static str, u64)> {
    net.schemes.tables()
}

/// The scheme table ([`scheme_tables`]) that takes the most memory over all switches of
/// `topo`, with that memory, when the tables together take more than the rest of the
/// network ([`network_bytes`]): the key to name when the network does not fit.
pub fn largest_scheme_table(topo: &TopologySpec, net: &NetConfig) -> Option<(&'static str, u64)> {
    let switches = topo.switches().len() as u64;
    let tables = scheme_tables(net);
    let all: u64 = tables
        .iter()
        .fold(0, |a, t| a.saturating_add(t.1.saturating_mul(switches)));
    let rest = network_bytes(topo, net).saturating_sub(all);
    if all <= rest {
        return None;
    }
    tables
        .into_iter()
        .max_by_key(|t| t.1)
        .map(|(k, b)| (k, b.saturating_mul(switches)))
}

/// Memory of the network itself, bytes: every switch port with its `queues_per_port`
/// queues and scheduler state, every NIC's port (counted as a switch port without queues,
/// an upper bound), and the forwarding table (two bytes per host per switch). Empty queues
/// allocate nothing, so this is what a run holds before its first packet; a 2,000 × 2,000
/// leaf–spine (8 M switch ports) needs about 5.7 GB of it. Plus every switch's scheme tables
/// ([`scheme_tables`]).
pub fn network_bytes(topo: &TopologySpec, net: &NetConfig) -> u64 {
    use crate::topology::NodeKind;
    use std::mem::size_of;
    let nq = net.queues_per_port as u64;
    let nic_port = size_of::<crate::switch::EgressPort>() as u64;
    let switch_port = nic_port + nq * (size_of::<crate::switch::PktQueue>() as u64 + 8);
    let (mut hosts, mut switches) = (0u64, 0u64);
    for k in &topo.kinds {
        match k {
            NodeKind::Host => hosts += 1,
            NodeKind::Switch => switches += 1,
        }
    }
    let ports: u64 = topo
        .links
        .iter()
        .flat_map(|l| [l.a, l.b])
        .map(|n| match topo.kinds.get(n as usize) {
            Some(NodeKind::Switch) => switch_port,
            _ => nic_port,
        })
        .fold(0, u64::saturating_add);
    let tables = scheme_tables(net)
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.1));
    ports
        .saturating_add(hosts.saturating_mul(switches).saturating_mul(2))
        .saturating_add(tables.saturating_mul(switches))
}

/// Estimate the memory of running `flows` on `topo` with `net`: flow state, plus one 4-byte
/// watermark per switch per buffer interval and per monitored port per queue interval over
/// the simulated time from the first flow's start (until `stop`, else the last flow start plus the time the hosts need to
/// send every byte at line rate, plus 10 ms), less the idle stretches the monitors elide (a
/// gap between consecutive flow starts counts at most `IDLE_SKIP_INTERVALS` intervals plus
/// that drain time).
pub fn estimate_memory(topo: &TopologySpec, net: &NetConfig, flows: &[FlowSpec]) -> MemoryEstimate {
    estimate_memory_of(topo, net, bytes_per_flow(), flows.iter().cloned())
}

/// Refuse a topology whose ports and forwarding table alone ([`network_bytes`]) exceed 80 %
/// of the memory available — checked before the routes are computed, which on such a
/// network takes minutes.
pub fn check_network_memory(topo: &TopologySpec, net: &NetConfig) -> Result<(), String> {
    let need = network_bytes(topo, net);
    let avail = crate::process::available_memory_bytes();
    if need <= avail / 5 * 4 {
        return Ok(());
    }
    if let Some((key, bytes)) = largest_scheme_table(topo, net) {
        return Err(format!(
            "`{key}`: the table it sizes needs about {} at each of the {} switches, {} in all, and the network about {}, more than 80 % of the {} available: lower `{key}`",
            fmt_bytes(bytes / (topo.switches().len() as u64).max(1)),
            topo.switches().len(),
            fmt_bytes(bytes),
            fmt_bytes(need),
            fmt_bytes(avail)
        ));
    }
    Err(format!(
        "the network's {} ports ({} queues per switch port) and its forwarding table need about {} of memory, more than 80 % of the {} available: a smaller topology (fewer links) or fewer queues per port reduce it",
        topo.links.len() as u64 * 2,
        net.queues_per_port,
        fmt_bytes(need),
        fmt_bytes(avail)
    ))
}

/// Time the hosts of `topo` need to send `total_bytes` at line rate, all at once, picoseconds.
fn drain_ps(topo: &TopologySpec, total_bytes: u128) -> u64 {
    let hosts = topo.hosts().len().max(1) as u128;
    let rate = topo.host_rate_bps().unwrap_or(1).max(1) as u128;
    (total_bytes * 8 * SEC as u128 / (rate * hosts)).min(u64::MAX as u128) as u64
}

/// The most a gap between consecutive flow starts counts towards the monitors' busy time,
/// picoseconds: `IDLE_SKIP_INTERVALS` + 2 intervals of `interval_ps` plus `drain_ps`.
fn idle_cap_ps(interval_ps: u64, drain_ps: u64) -> u64 {
    crate::metrics::buffer::IDLE_SKIP_INTERVALS
        .saturating_add(2)
        .saturating_mul(interval_ps.max(1))
        .saturating_add(drain_ps)
}

/// [`estimate_memory`] of the flows `flows` yields in run order, at `flow_bytes` per flow:
/// one pass ([`FlowShape`]), then [`estimate_from_shape`] (a lazy stream is given as a
/// clone).
pub fn estimate_memory_of(
    topo: &TopologySpec,
    net: &NetConfig,
    flow_bytes: u64,
    flows: impl IntoIterator<Item = FlowSpec>,
) -> MemoryEstimate {
    let mut shape = FlowShape::new();
    for f in flows {
        shape.add(f.start_ps, f.size_bytes);
    }
    estimate_from_shape(topo, net, flow_bytes, &shape)
}

/// [`estimate_memory`] of flows of the shape `shape`, at `flow_bytes` per flow.
///
/// The idle stretches come from the shape's gap buckets ([`FlowShape::busy_ps`]), so for
/// sorted flows the busy time the monitors are sized for is at least the exact sum over
/// consecutive starts of `min(gap, cap)` (cap: `IDLE_SKIP_INTERVALS` + 2 intervals plus the
/// drain time) and exceeds it by at most `count · (cap − lo)` of the one bucket straddling
/// the cap (less than the exact sum itself), before the same clamp to the whole span: the
/// monitor part may be up to (less than) twice the exact figure, never more than with
/// unsorted flows. An estimate for a refusal check, erring on the side of more memory; the
/// flow count and flow state are exact.
pub fn estimate_from_shape(
    topo: &TopologySpec,
    net: &NetConfig,
    flow_bytes: u64,
    shape: &FlowShape,
) -> MemoryEstimate {
    let n = shape.flows();
    let first_start = shape.first_start_ps();
    let last_start = shape.last_start_ps();
    let sorted = shape.sorted();
    let drain_ps = drain_ps(topo, shape.total_bytes());
    let horizon_ps = if net.stop_ps != u64::MAX {
        net.stop_ps
    } else {
        last_start.saturating_add(drain_ps).saturating_add(10 * MS)
    };
    // The series start at the first flow's start (`BufferMonitor::with_origin`), and idle
    // stretches longer than `IDLE_SKIP_INTERVALS` are not stored: a gap between two
    // consecutive flow starts counts at most that long plus the time to drain every byte
    // (flows sorted by start, as scenarios and HPCC flow files give them; otherwise the
    // whole span counts).
    let full_span_ps = horizon_ps.saturating_sub(first_start);
    let span_ps = |interval_ps: u64| -> u64 {
        if !sorted {
            return full_span_ps;
        }
        shape
            .busy_ps(idle_cap_ps(interval_ps, drain_ps))
            .saturating_add(drain_ps)
            .saturating_add(10 * MS)
            .min(full_span_ps)
    };
    let (span_b, span_q) = (span_ps(net.buffer_sample_ps), span_ps(net.queue_monitor_ps));
    MemoryEstimate {
        flows: n,
        flows_bytes: n.saturating_mul(flow_bytes),
        monitors_bytes: monitors_bytes(topo, net, span_b, span_q),
        horizon_ps: span_b,
        network_bytes: network_bytes(topo, net),
    }
}

/// Memory of the buffer and queue time series over spans of `span_b_ps` / `span_q_ps`: one
/// 4 B sample per switch (per monitored queue) per interval, ×1.5 for vector growth.
fn monitors_bytes(topo: &TopologySpec, net: &NetConfig, span_b_ps: u64, span_q_ps: u64) -> u64 {
    let samples = |span: u64, interval: u64| (span / interval.max(1)).saturating_add(1);
    (topo.switches().len() as u64)
        .saturating_mul(samples(span_b_ps, net.buffer_sample_ps))
        .saturating_add(
            (net.queue_monitor.len() as u64)
                .saturating_mul(samples(span_q_ps, net.queue_monitor_ps)),
        )
        .saturating_mul(4 * 3 / 2)
}

/// Refuse a run whose estimated memory ([`estimate_memory`]) exceeds 80 % of the memory
/// available, with the estimate and what to change (in scenario-file terms; other front ends
/// use [`check_memory_hinted`]).
pub fn check_memory(
    topo: &TopologySpec,
    net: &NetConfig,
    flows: &[FlowSpec],
) -> Result<(), String> {
    check_memory_hinted(topo, net, flows, &|_| SCENARIO_MEMORY_HINT.to_string())
}

/// [`check_memory`] with the advice phrased by the caller: `hint` receives the estimate and
/// returns the sentence (in the front end's own key names) appended to the refusal.
pub fn check_memory_hinted(
    topo: &TopologySpec,
    net: &NetConfig,
    flows: &[FlowSpec],
    hint: &dyn Fn(&MemoryEstimate) -> String,
) -> Result<(), String> {
    check_estimate(net, &estimate_memory(topo, net, flows), hint)
}

/// What to change when a scenario needs too much memory (scenario-file terms).
const SCENARIO_MEMORY_HINT: &str = "Fewer flows (a shorter traffic `duration`), an earlier `stop`, or longer `output.buffer_interval` / `output.queue_interval` reduce it";

/// [`check_memory`] for the flows of a lazy stream, `results_streamed` when the run also
/// streams its results ([`crate::sim::Simulator::stream_results`]): from the stream's own
/// [`FlowShape`] when it carries one (gathered while resolving the scenario,
/// [`crate::workload::stream::FlowStream::shape`]), else from one pass over a clone of
/// `stream` (nothing is kept). Returns the estimate, whose `flows` is the run's exact flow count.
pub fn check_memory_stream(
    topo: &TopologySpec,
    net: &NetConfig,
    stream: &crate::workload::stream::FlowStream,
    results_streamed: bool,
) -> Result<MemoryEstimate, String> {
    // Schemes that need the flow list (OnRamp, PB-FS, NDP:
    // [`crate::scheme::SchemeConfig::needs_flow_list`]) collect the stream into a list
    // (`Simulator::with_stream`) and keep their records; otherwise a flow costs its record until the end, or nothing past
    // its completion when the results stream too (the flows in progress, like their QP
    // state, are not counted).
    let per_flow = if net.schemes.needs_flow_list() {
        bytes_per_flow()
    } else if results_streamed {
        0
    } else {
        bytes_per_streamed_flow()
    };
    let est = match stream.shape() {
        Some(shape) => estimate_from_shape(topo, net, per_flow, shape),
        None => estimate_memory_of(topo, net, per_flow, stream.clone()),
    };
    check_estimate(net, &est, &|_| SCENARIO_MEMORY_HINT.to_string())?;
    Ok(est)
}

/// Refuse `est` if it exceeds 80 % of the memory available, with the estimate and the
/// caller's advice `hint` (see [`check_memory_hinted`]).
pub fn check_estimate(
    net: &NetConfig,
    est: &MemoryEstimate,
    hint: &dyn Fn(&MemoryEstimate) -> String,
) -> Result<(), String> {
    let avail = crate::process::available_memory_bytes();
    if est.total() <= avail / 5 * 4 {
        return Ok(());
    }
    let hint = if est.network_bytes > est.flows_bytes.max(est.monitors_bytes) {
        "A smaller topology (fewer links) or fewer queues per port reduce it".to_string()
    } else {
        hint(est)
    };
    Err(format!(
        "this run would need about {} of memory, more than 80 % of the {} available: {} flows need {}; the buffer/queue monitors need {} for {} of busy simulated time at {} / {} intervals; the network's ports and forwarding table need {}. {}",
        fmt_bytes(est.total()),
        fmt_bytes(avail),
        est.flows,
        fmt_bytes(est.flows_bytes),
        fmt_bytes(est.monitors_bytes),
        fmt_time(est.horizon_ps),
        fmt_time(net.buffer_sample_ps),
        fmt_time(net.queue_monitor_ps),
        fmt_bytes(est.network_bytes),
        hint,
    ))
}

/// How a run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Flows in the workload.
    pub flows_total: u64,
    /// Flows completed.
    pub flows_completed: u64,
    /// Flows whose start time was at or after the end of the run (never started).
    pub flows_not_started: u64,
    /// Why the run was stopped early for lack of progress, if it was.
    pub stalled: Option<String>,
    /// The PFC deadlock the run was stopped for, if it was
    /// ([`crate::sim::OnDeadlock::Stop`]).
    pub deadlock: Option<String>,
    /// Where the packets of the flows left unfinished are
    /// ([`Simulator::stuck_report`]); `None` when every started flow finished.
    pub stuck: Option<String>,
    /// Simulated time at the end, picoseconds.
    pub end_ps: u64,
}

/// Exit status of `sfc run` / `sfc hpcc` when a run was stopped for a PFC deadlock (1 is any
/// other failure, 130 an interrupt).
pub const DEADLOCK_EXIT_STATUS: u8 = 3;

/// Flows [`Outcome::stuck`] lists (the rest are counted).
pub const STUCK_FLOWS_LISTED: usize = 10;

static DEADLOCK_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Some run of this process was stopped for a PFC deadlock ([`run_watched`]): the process
/// exits with [`DEADLOCK_EXIT_STATUS`].
pub fn deadlock_stopped() -> bool {
    DEADLOCK_STOPPED.load(std::sync::atomic::Ordering::Relaxed)
}

impl Outcome {
    /// Flows that did not complete.
    pub fn incomplete(&self) -> u64 {
        self.flows_total - self.flows_completed
    }

    /// A note for stderr when a deliberate `stop` (at `stop_ps`) left flows unfinished: not a
    /// failure, but never silent.
    pub fn stop_note(&self, stop_set: bool) -> Option<String> {
        let unexplained = self.stalled.is_none() && self.deadlock.is_none();
        (stop_set && unexplained && self.incomplete() > 0).then(|| {
            format!(
                "note: the run stopped at `stop` = {} with {} of {} flows completed ({} unfinished, {} of them never started); their FCTs are missing from fct.txt and empty in flows.csv",
                fmt_time(self.end_ps),
                self.flows_completed,
                self.flows_total,
                self.incomplete(),
                self.flows_not_started
            )
        })
    }

    /// The failure to report (stderr, exit status), if any: a stalled run always; a run with
    /// incomplete flows unless `stop` was set deliberately (then they are expected).
    pub fn failure(&self, stop_set: bool) -> Option<String> {
        if let Some(d) = &self.deadlock {
            return Some(d.clone());
        }
        if let Some(s) = &self.stalled {
            return Some(s.clone());
        }
        if self.incomplete() > 0 && !stop_set {
            return Some(format!(
                "only {} of {} flows completed; the event list ran out at {} with {} flows unfinished (see flows.csv: empty fct_ns)",
                self.flows_completed,
                self.flows_total,
                fmt_time(self.end_ps),
                self.incomplete()
            ));
        }
        None
    }
}

/// Stretch of simulated time without progress after which a run is stopped: 4 × the longest
/// retransmission timeout, at least 100 ms and at most 10 s.
pub fn stall_window_ps(net: &NetConfig) -> u64 {
    let rto = match net.loss_recovery {
        LossRecovery::Gbn { rto_ps, .. } => rto_ps,
        LossRecovery::Irn { rto_high_ps, .. } => rto_high_ps,
    };
    rto.saturating_mul(4).clamp(100 * MS, 10 * SEC)
}

/// Run `sim` to the end (as [`Simulator::run`]), in slices of simulated time, stopping it if
/// started flows make no progress — no payload byte delivered for the first time, no flow
/// completed — for [`stall_window_ps`]. Idle stretches (no flow started and unfinished) are
/// skipped at no cost. Results are identical to one `run` call: a slice ends between events.
/// A run streaming its results stops at the end of the slice in which writing a record failed
/// ([`Simulator::results_error`]).
///
/// With lossless PFC, slices are at most [`Simulator::deadlock_period_ps`] long and each is
/// followed by a PFC deadlock check ([`Simulator::check_deadlocks`]); so is the end of a run
/// whose event list ran out before `stop` (its queues stay as they are until `stop`). A
/// deadlock is reported on stderr and, with [`crate::sim::OnDeadlock::Stop`] (the default),
/// stops the run ([`Outcome::deadlock`]). A run that ends stuck — stopped for a deadlock or
/// for lack of progress, or out of events before `stop` with flows unfinished — has its
/// buffer and queue monitors sample until its end ([`Simulator::monitor_until`]), and
/// [`Outcome::stuck`] says where the unfinished flows' packets are.
pub fn run_watched<S: Watched + ?Sized>(
    sim: &mut S,
    progress: &mut dyn FnMut(&Progress),
) -> Outcome {
    let stop = sim.stop_ps();
    let window = stall_window_ps(sim.net());
    let period = sim.deadlock_period_ps();
    // The watchdog looks at the run every `slice`; with lossless PFC the run is checked for
    // deadlocks every `fine` (at most `slice`) in between. The watchdog's slices are those
    // of a run without the checks, so its verdicts are too.
    let slice = (window / 10).max(US);
    let fine = period.map_or(slice, |p| p.min(slice));
    let stop_on_deadlock = sim.on_deadlock() == crate::sim::OnDeadlock::Stop;
    let c = sim.counters();
    let mut delivered = c.delivered_bytes;
    let mut completed = c.flows_completed;
    let mut last_progress = sim.now();
    let mut stalled = None;
    let mut deadlock = None;
    let mut reported = 0;
    // Report the deadlocks found since the last call; the first stops the run if asked to.
    let mut report_new = |sim: &S, deadlock: &mut Option<String>| {
        let d = sim.deadlocks();
        for x in d.found.iter().skip(reported) {
            eprintln!("{}", x.describe());
        }
        reported = d.found.len();
        if stop_on_deadlock && d.count > 0 && deadlock.is_none() {
            let first = d.found.first().map(|x| x.describe()).unwrap_or_default();
            *deadlock = Some(format!(
                "{first}; the run was stopped (`--on-deadlock continue` keeps it running)"
            ));
        }
    };
    // End of the watchdog's current slice.
    let mut slice_end: Option<u64> = None;
    loop {
        let next = sim.peek_time().filter(|&t| t <= stop);
        let ce = match (slice_end, next) {
            (Some(c), _) => c,
            (None, Some(n)) => *slice_end.insert(n.max(sim.now()).saturating_add(slice).min(stop)),
            (None, None) => break,
        };
        if let Some(n) = next {
            let end = n.max(sim.now()).saturating_add(fine).min(ce);
            sim.set_stop_ps(end);
            sim.run(progress);
            if crate::process::interrupt_requested() {
                // The caller drops the run ([`crate::process::request_interrupt`]).
                sim.set_stop_ps(stop);
                return Outcome {
                    flows_total: sim.flows_len(),
                    flows_completed: sim.counters().flows_completed,
                    flows_not_started: 0,
                    stalled: None,
                    deadlock: None,
                    stuck: None,
                    end_ps: sim.now(),
                };
            }
            if sim.all_flows_done() {
                break;
            }
            if sim.results_failed() {
                // The records can no longer be written (a full disk): going on would only
                // waste the time; the caller reports the error.
                break;
            }
            // The switches stay as they are from the last event to the next one.
            let frozen_until = sim.peek_time().map_or(stop, |t| t.min(stop));
            let now = sim.now();
            if period.is_some() && sim.check_deadlocks(now, frozen_until) > 0 {
                report_new(sim, &mut deadlock);
                if deadlock.is_some() {
                    sim.monitor_until(sim.deadlocks().found[0].detected_ps);
                    break;
                }
            }
            if end < ce {
                continue;
            }
        }
        slice_end = None;
        let c = sim.counters();
        let moved = c.delivered_bytes != delivered || c.flows_completed != completed;
        delivered = c.delivered_bytes;
        completed = c.flows_completed;
        let now = ce;
        // Flows started and unfinished: those with QP state (every start at or before `ce`
        // has run).
        let active = moved || sim.active_flows() > 0;
        if moved || !active {
            last_progress = now;
        } else if now - last_progress >= window {
            let unfinished = sim.active_flows();
            stalled = Some(format!(
                "no progress for {} of simulated time (no payload byte delivered, no flow completed) with {unfinished} flows started and unfinished; stopped at {} ({} drops, {} timeouts, {} PFC pauses so far). Typical causes: a buffer or threshold too small for one packet, a PFC deadlock, a loss no timeout recovers",
                fmt_time(window),
                // The clock of the last event: the `sim_time_ps` of summary.json.
                fmt_time(sim.now()),
                c.drops + c.drops_link_error,
                c.timeouts,
                sim.scheme_stat("pfc", "pauses"),
            ));
            let now = sim.now();
            sim.monitor_until(now);
            break;
        }
        if ce >= stop {
            break;
        }
    }
    let ran_out = sim.peek_time().is_none_or(|t| t > stop);
    if ran_out && deadlock.is_none() && stalled.is_none() && !sim.all_flows_done() {
        // No event before `stop`: the queues stay as they are until then.
        let now = sim.now();
        if period.is_some() && sim.check_deadlocks(now, stop) > 0 {
            report_new(sim, &mut deadlock);
        }
        let end = match &deadlock {
            Some(_) => sim.deadlocks().found[0].detected_ps,
            None if stop != u64::MAX => stop,
            None => sim.now(),
        };
        if sim.active_flows() > 0 {
            sim.monitor_until(end);
        }
    }
    if deadlock.is_some() {
        DEADLOCK_STOPPED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    sim.set_stop_ps(stop);
    let end_ps = sim.now();
    let stuck = sim.stuck_report(STUCK_FLOWS_LISTED);
    // Flows a stream still holds start after the end: their records exist, never started.
    sim.take_remaining_flows();
    Outcome {
        flows_total: sim.flows_len(),
        flows_completed: sim.counters().flows_completed,
        flows_not_started: sim.flows_not_started(end_ps),
        stalled,
        deadlock,
        stuck,
        end_ps,
    }
}

/// What [`run_watched`] drives: one [`Simulator`], or a run split over threads
/// ([`crate::sim::parallel::ParallelSim`]).
pub trait Watched {
    /// The model parameters (the stall window follows the loss recovery's timeouts).
    fn net(&self) -> &NetConfig;
    /// The run's stop time, picoseconds.
    fn stop_ps(&self) -> u64;
    /// Set the run's stop time (the next [`Self::run`] ends there).
    fn set_stop_ps(&mut self, t: u64);
    /// [`Simulator::deadlock_period_ps`].
    fn deadlock_period_ps(&self) -> Option<u64>;
    /// What a deadlock does to the run.
    fn on_deadlock(&self) -> crate::sim::OnDeadlock;
    /// The run's counters.
    fn counters(&self) -> crate::sim::Counters;
    /// Time of the next pending event.
    fn peek_time(&mut self) -> Option<u64>;
    /// Time of the last event executed.
    fn now(&self) -> u64;
    /// Run to the stop time or the end of traffic ([`Simulator::run`]).
    fn run(&mut self, progress: &mut dyn FnMut(&Progress));
    /// [`Simulator::all_flows_done`].
    fn all_flows_done(&self) -> bool;
    /// Writing the streamed results failed.
    fn results_failed(&self) -> bool;
    /// [`Simulator::check_deadlocks`].
    fn check_deadlocks(&mut self, now_ps: u64, horizon_ps: u64) -> usize;
    /// [`Simulator::deadlocks`].
    fn deadlocks(&self) -> &crate::registry::DeadlockDetector;
    /// [`Simulator::monitor_until`].
    fn monitor_until(&mut self, end_ps: u64);
    /// [`Simulator::active_flows`].
    fn active_flows(&self) -> usize;
    /// [`Simulator::scheme_stat`].
    fn scheme_stat(&self, section: &str, key: &str) -> u64;
    /// [`Simulator::stuck_report`].
    fn stuck_report(&self, max_flows: usize) -> Option<String>;
    /// [`Simulator::take_remaining_flows`].
    fn take_remaining_flows(&mut self);
    /// Flows in the run.
    fn flows_len(&self) -> u64;
    /// [`Simulator::flows_not_started`].
    fn flows_not_started(&self, end_ps: u64) -> u64;
}

impl Watched for Simulator {
    fn net(&self) -> &NetConfig {
        &self.cfg
    }
    fn stop_ps(&self) -> u64 {
        self.cfg.stop_ps
    }
    fn set_stop_ps(&mut self, t: u64) {
        self.cfg.stop_ps = t;
    }
    fn deadlock_period_ps(&self) -> Option<u64> {
        Simulator::deadlock_period_ps(self)
    }
    fn on_deadlock(&self) -> crate::sim::OnDeadlock {
        self.on_deadlock
    }
    fn counters(&self) -> crate::sim::Counters {
        self.counters.clone()
    }
    fn peek_time(&mut self) -> Option<u64> {
        self.q.peek_time()
    }
    fn now(&self) -> u64 {
        self.q.now()
    }
    fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        Simulator::run(self, progress)
    }
    fn all_flows_done(&self) -> bool {
        Simulator::all_flows_done(self)
    }
    fn results_failed(&self) -> bool {
        self.results_error().is_some()
    }
    fn check_deadlocks(&mut self, now_ps: u64, horizon_ps: u64) -> usize {
        Simulator::check_deadlocks(self, now_ps, horizon_ps)
    }
    fn deadlocks(&self) -> &crate::registry::DeadlockDetector {
        Simulator::deadlocks(self)
    }
    fn monitor_until(&mut self, end_ps: u64) {
        Simulator::monitor_until(self, end_ps)
    }
    fn active_flows(&self) -> usize {
        Simulator::active_flows(self)
    }
    fn scheme_stat(&self, section: &str, key: &str) -> u64 {
        Simulator::scheme_stat(self, section, key)
    }
    fn stuck_report(&self, max_flows: usize) -> Option<String> {
        Simulator::stuck_report(self, max_flows)
    }
    fn take_remaining_flows(&mut self) {
        Simulator::take_remaining_flows(self)
    }
    fn flows_len(&self) -> u64 {
        self.flows.len() as u64
    }
    fn flows_not_started(&self, end_ps: u64) -> u64 {
        Simulator::flows_not_started(self, end_ps)
    }
}

impl Watched for crate::sim::parallel::ParallelSim {
    fn net(&self) -> &NetConfig {
        &self.replicas()[0].cfg
    }
    fn stop_ps(&self) -> u64 {
        crate::sim::parallel::ParallelSim::stop_ps(self)
    }
    fn set_stop_ps(&mut self, t: u64) {
        crate::sim::parallel::ParallelSim::set_stop_ps(self, t)
    }
    fn deadlock_period_ps(&self) -> Option<u64> {
        crate::sim::parallel::ParallelSim::deadlock_period_ps(self)
    }
    fn on_deadlock(&self) -> crate::sim::OnDeadlock {
        self.replicas()[0].on_deadlock
    }
    fn counters(&self) -> crate::sim::Counters {
        crate::sim::parallel::ParallelSim::counters(self)
    }
    fn peek_time(&mut self) -> Option<u64> {
        crate::sim::parallel::ParallelSim::peek_time(self)
    }
    fn now(&self) -> u64 {
        crate::sim::parallel::ParallelSim::now(self)
    }
    fn run(&mut self, progress: &mut dyn FnMut(&Progress)) {
        crate::sim::parallel::ParallelSim::run(self, progress)
    }
    fn all_flows_done(&self) -> bool {
        crate::sim::parallel::ParallelSim::all_flows_done(self)
    }
    fn results_failed(&self) -> bool {
        false
    }
    fn check_deadlocks(&mut self, now_ps: u64, horizon_ps: u64) -> usize {
        crate::sim::parallel::ParallelSim::check_deadlocks(self, now_ps, horizon_ps)
    }
    fn deadlocks(&self) -> &crate::registry::DeadlockDetector {
        crate::sim::parallel::ParallelSim::deadlocks(self)
    }
    fn monitor_until(&mut self, end_ps: u64) {
        crate::sim::parallel::ParallelSim::monitor_until(self, end_ps)
    }
    fn active_flows(&self) -> usize {
        crate::sim::parallel::ParallelSim::active_flows(self)
    }
    fn scheme_stat(&self, section: &str, key: &str) -> u64 {
        crate::sim::parallel::ParallelSim::scheme_stat(self, section, key)
    }
    fn stuck_report(&self, max_flows: usize) -> Option<String> {
        crate::sim::parallel::ParallelSim::stuck_report(self, max_flows)
    }
    fn take_remaining_flows(&mut self) {
        crate::sim::parallel::ParallelSim::take_remaining_flows(self)
    }
    fn flows_len(&self) -> u64 {
        crate::sim::parallel::ParallelSim::flows_len(self)
    }
    fn flows_not_started(&self, end_ps: u64) -> u64 {
        crate::sim::parallel::ParallelSim::flows_not_started(self, end_ps)
    }
}

/// What `summary.json` records to make a run reproducible from its own directory.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// Master seed.
    pub seed: u64,
    /// `stop` was given.
    pub stop_set: bool,
    /// The resolved scenario (every override applied), as a JSON object; `Null` for HPCC-sim
    /// configs.
    pub scenario: Value,
    /// The input file (scenario or HPCC-sim config), for the record.
    pub source: String,
}

/// Add the run's ending and reproducibility keys to a summary object: `complete`,
/// `flows_incomplete`, `flows_not_started`, `stalled`, `failure`, `stop_ps`, `seed`,
/// `version`, `source`, `scenario`.
pub fn annotate(summary: &mut Value, o: &Outcome, stop_ps: u64, meta: &RunMeta) {
    let Some(m) = summary.as_object_mut() else {
        return;
    };
    m.insert(
        "complete".into(),
        (o.incomplete() == 0 && o.stalled.is_none()).into(),
    );
    m.insert("flows_incomplete".into(), o.incomplete().into());
    m.insert("flows_not_started".into(), o.flows_not_started.into());
    m.insert("stalled".into(), json!(o.stalled));
    m.insert("failure".into(), json!(o.failure(meta.stop_set)));
    m.insert(
        "stop_ps".into(),
        if stop_ps == u64::MAX {
            Value::Null
        } else {
            stop_ps.into()
        },
    );
    m.insert("seed".into(), meta.seed.into());
    m.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    m.insert("source".into(), meta.source.clone().into());
    m.insert("scenario".into(), meta.scenario.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Runs at once: bounded by the threads and by the largest estimates' sum against 80 %
    /// of the memory; never 0.
    #[test]
    fn concurrent_runs_fit_in_memory_together() {
        const G: u64 = 1 << 30;
        // 10 GiB available: 8 GiB budget.
        assert_eq!(concurrent_runs(&[G, G, G, G], 10 * G, 2), 2);
        assert_eq!(concurrent_runs(&[G, G, G, G], 10 * G, 8), 4);
        // The largest first: 5 + 3 = 8 fits, 5 + 3 + 1 does not.
        assert_eq!(concurrent_runs(&[G, 3 * G, G, 5 * G], 10 * G, 8), 2);
        assert_eq!(concurrent_runs(&[4 * G, 4 * G, 4 * G], 10 * G, 8), 2);
        // One run alone over the budget (refused by its own check) or no threads: still 1.
        assert_eq!(concurrent_runs(&[9 * G], 10 * G, 8), 1);
        assert_eq!(concurrent_runs(&[G], 10 * G, 0), 1);
        assert_eq!(concurrent_runs(&[], 10 * G, 4), 1);
        assert_eq!(concurrent_runs(&[u64::MAX, u64::MAX], u64::MAX, 4), 1);
    }

    /// The estimate as it was computed in two passes over `flows` (one for the counts and the
    /// drain time, one for `min(gap, cap)` over consecutive starts): the reference the
    /// one-pass [`estimate_from_shape`] is checked against.
    fn two_pass(
        topo: &TopologySpec,
        net: &NetConfig,
        flow_bytes: u64,
        flows: &[FlowSpec],
    ) -> MemoryEstimate {
        let (mut n, mut first_start, mut last_start, mut total_bytes) =
            (0u64, u64::MAX, 0u64, 0u128);
        let mut sorted = true;
        let mut prev = 0u64;
        for f in flows {
            n += 1;
            first_start = first_start.min(f.start_ps);
            last_start = last_start.max(f.start_ps);
            total_bytes += f.size_bytes as u128;
            sorted &= f.start_ps >= prev;
            prev = f.start_ps;
        }
        if n == 0 {
            first_start = 0;
        }
        let drain_ps = drain_ps(topo, total_bytes);
        let horizon_ps = if net.stop_ps != u64::MAX {
            net.stop_ps
        } else {
            last_start.saturating_add(drain_ps).saturating_add(10 * MS)
        };
        let full_span_ps = horizon_ps.saturating_sub(first_start);
        let (cap_b, cap_q) = (
            idle_cap_ps(net.buffer_sample_ps, drain_ps),
            idle_cap_ps(net.queue_monitor_ps, drain_ps),
        );
        let (mut busy_b, mut busy_q) = (0u64, 0u64);
        if sorted {
            for w in flows.windows(2) {
                let gap = w[1].start_ps - w[0].start_ps;
                busy_b = busy_b.saturating_add(gap.min(cap_b));
                busy_q = busy_q.saturating_add(gap.min(cap_q));
            }
        }
        let span_ps = |busy: u64| -> u64 {
            if !sorted {
                return full_span_ps;
            }
            busy.saturating_add(drain_ps)
                .saturating_add(10 * MS)
                .min(full_span_ps)
        };
        let (span_b, span_q) = (span_ps(busy_b), span_ps(busy_q));
        MemoryEstimate {
            flows: n,
            flows_bytes: n.saturating_mul(flow_bytes),
            monitors_bytes: monitors_bytes(topo, net, span_b, span_q),
            horizon_ps: span_b,
            network_bytes: network_bytes(topo, net),
        }
    }

    /// Star of 16 hosts at 100 Gb/s.
    fn star16() -> TopologySpec {
        crate::topology::shapes::star(16, 100_000_000_000, US).unwrap()
    }

    /// Default network with two monitored queues.
    fn net_with_queues() -> NetConfig {
        NetConfig::from(crate::config::CoreConfig {
            queue_monitor: vec![(16, 0), (16, 1)],
            ..Default::default()
        })
    }

    /// Flows of 1000 B from host 0 to 1 starting at `starts_ps`.
    fn flows_at(starts_ps: &[u64]) -> Vec<FlowSpec> {
        starts_ps
            .iter()
            .map(|&t| FlowSpec::background(0, 1, 1000, t))
            .collect()
    }

    /// The (buffer, queue) idle caps of `flows` under `net` on `topo`, picoseconds.
    fn caps(topo: &TopologySpec, net: &NetConfig, flows: &[FlowSpec]) -> (u64, u64) {
        let drain = drain_ps(topo, FlowShape::of(flows).total_bytes());
        (
            idle_cap_ps(net.buffer_sample_ps, drain),
            idle_cap_ps(net.queue_monitor_ps, drain),
        )
    }

    #[test]
    fn one_pass_estimate_equals_two_pass_when_no_gap_is_near_the_cap() {
        let topo = star16();
        let net = net_with_queues();
        // Gaps of 1 µs and 3 µs (far below both caps: ≈ 1 ms for the 1 µs queue interval,
        // ≈ 10 ms for the 10 µs buffer interval) and of 1 s and 5 s (far above them).
        let mut starts = vec![2 * SEC];
        for gap in [US, 3 * US, SEC, US, US, 5 * SEC, 3 * US, SEC, US] {
            starts.push(starts.last().unwrap() + gap);
        }
        let flows = flows_at(&starts);
        let shape = FlowShape::of(&flows);
        let (cap_b, cap_q) = caps(&topo, &net, &flows);
        assert_eq!(shape.busy_bound_slack_ps(cap_b), 0);
        assert_eq!(shape.busy_bound_slack_ps(cap_q), 0);
        // Exact: the short gaps in full, the three long ones at the cap.
        let small = US + 3 * US + US + US + 3 * US + US;
        assert_eq!(shape.busy_ps(cap_b), small + 3 * cap_b);
        assert_eq!(shape.busy_ps(cap_q), small + 3 * cap_q);
        let want = two_pass(&topo, &net, bytes_per_flow(), &flows);
        assert_eq!(estimate_memory(&topo, &net, &flows), want);
        assert_eq!(
            estimate_from_shape(&topo, &net, bytes_per_flow(), &shape),
            want
        );
        // Not the whole span: the long gaps are skipped.
        assert!(want.horizon_ps < 2 * SEC, "{want:?}");
        // With a stop time inside the span too.
        let mut stop = net.clone();
        stop.stop_ps = 4 * SEC;
        assert_eq!(
            estimate_memory(&topo, &stop, &flows),
            two_pass(&topo, &stop, bytes_per_flow(), &flows)
        );
    }

    /// A random sorted list of up to 300 flows whose gaps range over every scale from 0 to
    /// ≈ 10 s (log-uniform), of random sizes.
    fn random_sorted(rng: &mut Rng) -> Vec<FlowSpec> {
        let n = rng.below(300) as usize;
        let mut t = rng.below(10 * SEC);
        let mut flows = Vec::with_capacity(n);
        for _ in 0..n {
            let bits = 1 + rng.below(30);
            let size = 1 + rng.below(1 << bits);
            flows.push(FlowSpec::background(
                rng.below(16) as u32,
                rng.below(16) as u32,
                size,
                t,
            ));
            let e = rng.below(44);
            t += if rng.below(10) == 0 {
                0
            } else {
                rng.below(1 << e)
            };
        }
        flows
    }

    #[test]
    fn one_pass_estimate_bounds_the_two_pass_one_on_random_flows() {
        let topo = star16();
        let mut rng = Rng::new(0x0e57_1a7e);
        let (mut equal, mut above) = (0, 0);
        for _ in 0..400 {
            let flows = random_sorted(&mut rng);
            let pick =
                |rng: &mut Rng| [US, 10 * US, 100 * US, 1 + rng.below(MS)][rng.below(4) as usize];
            let net = NetConfig::from(crate::config::CoreConfig {
                buffer_sample_ps: pick(&mut rng),
                queue_monitor_ps: pick(&mut rng),
                queue_monitor: vec![(16, 0); rng.below(4) as usize],
                stop_ps: if rng.below(3) == 0 {
                    rng.below(2000 * SEC)
                } else {
                    u64::MAX
                },
                ..Default::default()
            });
            let one = estimate_memory(&topo, &net, &flows);
            let two = two_pass(&topo, &net, bytes_per_flow(), &flows);
            assert_eq!((one.flows, one.flows_bytes), (two.flows, two.flows_bytes));
            let shape = FlowShape::of(&flows);
            let (cap_b, cap_q) = caps(&topo, &net, &flows);
            let (slack_b, slack_q) = (
                shape.busy_bound_slack_ps(cap_b),
                shape.busy_bound_slack_ps(cap_q),
            );
            assert!(one.horizon_ps >= two.horizon_ps, "{one:?} {two:?}");
            assert!(
                one.horizon_ps - two.horizon_ps <= slack_b,
                "{one:?} {two:?} {slack_b}"
            );
            let sw = topo.switches().len() as u64;
            let nq = net.queue_monitor.len() as u64;
            let bound = 6
                * (sw * (slack_b / net.buffer_sample_ps + 1)
                    + nq * (slack_q / net.queue_monitor_ps + 1));
            assert!(one.monitors_bytes >= two.monitors_bytes);
            assert!(
                one.monitors_bytes - two.monitors_bytes <= bound,
                "{one:?} {two:?} {bound}"
            );
            if one == two {
                equal += 1;
            } else {
                above += 1;
            }
        }
        // Both kinds of case occur: the cap lands in a bucket holding gaps or not.
        assert!(equal > 20 && above > 20, "{equal} equal, {above} above");
    }

    #[test]
    fn busy_time_is_at_least_exact_and_less_than_twice_it() {
        let mut rng = Rng::new(77);
        for _ in 0..300 {
            let flows = random_sorted(&mut rng);
            let shape = FlowShape::of(&flows);
            for _ in 0..20 {
                let bits = rng.below(45);
                let cap = rng.below(1 << bits);
                let exact = flows
                    .windows(2)
                    .map(|w| (w[1].start_ps - w[0].start_ps).min(cap))
                    .sum::<u64>();
                let busy = shape.busy_ps(cap);
                assert!(exact <= busy, "cap {cap}: {exact} > {busy}");
                assert!(busy - exact <= shape.busy_bound_slack_ps(cap), "cap {cap}");
                assert!(busy <= 2 * exact, "cap {cap}: {busy} vs {exact}");
            }
        }
    }

    #[test]
    fn unsorted_and_empty_flows_estimate_as_before() {
        let topo = star16();
        let net = net_with_queues();
        // Unsorted: the whole span from the first start counts.
        let flows = flows_at(&[5 * SEC, 2 * SEC, 9 * SEC, 3 * SEC]);
        let shape = FlowShape::of(&flows);
        assert!(!shape.sorted());
        assert_eq!(
            (shape.flows(), shape.first_start_ps(), shape.last_start_ps()),
            (4, 2 * SEC, 9 * SEC)
        );
        let est = estimate_memory(&topo, &net, &flows);
        assert_eq!(est, two_pass(&topo, &net, bytes_per_flow(), &flows));
        let drain = drain_ps(&topo, 4000);
        assert_eq!(est.horizon_ps, 9 * SEC + drain + 10 * MS - 2 * SEC);
        let mut stop = net.clone();
        stop.stop_ps = 20 * SEC;
        let est = estimate_memory(&topo, &stop, &flows);
        assert_eq!(est, two_pass(&topo, &stop, bytes_per_flow(), &flows));
        assert_eq!(est.horizon_ps, 18 * SEC);
        // Empty.
        for net in [net.clone(), stop] {
            let est = estimate_memory(&topo, &net, &[]);
            assert_eq!(est, two_pass(&topo, &net, bytes_per_flow(), &[]));
            assert_eq!((est.flows, est.flows_bytes), (0, 0));
            assert_eq!(FlowShape::new().first_start_ps(), 0);
        }
        // Through `estimate_memory_of`, one pass over an iterator.
        let of = estimate_memory_of(&topo, &net, 7, flows.iter().cloned());
        assert_eq!(of, two_pass(&topo, &net, 7, &flows));
    }
}
