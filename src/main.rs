//! `sfc` command-line interface.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use sfc::metrics::output::summary_table;
use sfc::report::{RunOptions, extra_lines};

/// Large arenas (packets, flows, events) on transparent huge pages: see
/// `sfc::engine::hugepage` (`SFC_HUGEPAGES=0` turns it off).
#[global_allocator]
static ALLOC: sfc::engine::hugepage::HugePageAlloc = sfc::engine::hugepage::HugePageAlloc;

/// sfc — a fast, faithful packet-level datacenter network simulator (SFC, HPCC, DCQCN, PFC, IRN…).
///
/// `sfc run` writes DIR/flows.csv, DIR/summary.json, DIR/fct.txt (HPCC-sim format) and
/// DIR/buffer.csv; `sfc hpcc` writes the files its config names.
#[derive(Parser)]
#[command(version, about, after_help = EX_SFC)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a TOML scenario (or the built-in default one) and print a summary table.
    ///
    /// Writes DIR/flows.csv (one row per flow), DIR/summary.json (counters, slowdown
    /// percentiles), DIR/fct.txt (HPCC-sim FCT format) and DIR/buffer.csv (per-switch shared
    /// buffer, max over each 10 µs interval); with `--format parquet` the tables are
    /// DIR/flows.parquet, DIR/buffer.parquet, … instead.
    #[command(after_help = EX_RUN)]
    Run {
        /// Scenario file (TOML). Omit to run the built-in default scenario
        /// (scenarios/default.toml).
        scenario: Option<PathBuf>,
        /// Output directory [default: out/<scenario name>].
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Override a scenario key, e.g. `--set buffer.size=\"16MB\"` or `--set traffic.0.load=0.3`.
        /// Repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Do not write any output files.
        #[arg(long)]
        no_output: bool,
        /// Print the summary as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Capture the frames crossing some links into OUT/capture.pcapng (Wireshark reads
        /// it): comma-separated node ids (every link of that node) and `A-B` pairs (the links
        /// between nodes A and B), e.g. `--capture 0,16-20`. On `sfc run` it sets
        /// `capture.links` / `capture.nodes`; the rest of `[capture]` (window, flows, caps)
        /// applies.
        #[arg(long, value_name = "WHAT")]
        capture: Option<String>,
        /// What to do when a PFC deadlock (a cycle of paused switch queues that cannot
        /// drain) is found: `stop` the run, report it and exit with status 3 (after writing
        /// the outputs), or report it and `continue`.
        #[arg(long, value_enum, default_value = "stop", value_name = "ACTION")]
        on_deadlock: OnDeadlockArg,
        /// File format of the tables: `csv` writes flows.csv, buffer.csv, throughput.csv,
        /// queues.csv; `parquet` writes flows.parquet, buffer.parquet, throughput.parquet,
        /// queues.parquet instead (typed columns, Snappy-compressed). Sets `output.format`
        /// [default: the scenario's `output.format`, else csv].
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<FormatArg>,
        /// Threads for each run: more than 1 splits the network into that many partitions
        /// (hosts with their ToR), simulated in parallel in windows of the smallest delay of
        /// a link between partitions. The outputs equal one thread's byte for byte, apart
        /// from the measures of the run itself (wall time, rates, peak memory). Runs with
        /// link failures, a capture, NDP, BFC, CBFC or PB-FS, or fewer than two ToRs, use
        /// one thread (a note says why); a partition holds whole ToRs, so a network with
        /// fewer ToRs than N uses as many threads as it has ToRs (a note says so). Results
        /// are kept in memory, not streamed.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: u32,
    },
    /// Check a scenario file without running it (reports every problem with file:line).
    #[command(after_help = EX_VALIDATE)]
    Validate {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Overrides as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Run an HPCC ns-3 simulator config.txt unchanged (drop-in mode); see the book's chapter
    /// "Coming from the HPCC ns-3 simulator" (docs/src/hpcc.md).
    #[command(after_help = EX_HPCC)]
    Hpcc {
        /// The HPCC-sim config file. Paths inside are relative to the current directory.
        config: PathBuf,
        /// Capture the frames crossing some links into capture.pcapng, next to the config's
        /// FCT_OUTPUT_FILE (Wireshark reads it): comma-separated node ids (every link of that
        /// node) and `A-B` pairs (the links between nodes A and B), e.g. `--capture 0,16-20`.
        /// The whole run, at most 1,000,000 frames or 1 GiB, whole frames.
        #[arg(long, value_name = "WHAT")]
        capture: Option<String>,
        /// What to do when a PFC deadlock (a cycle of paused switch queues that cannot
        /// drain) is found: `stop` the run, report it and exit with status 3 (after writing
        /// the outputs), or report it and `continue`.
        #[arg(long, value_enum, default_value = "stop", value_name = "ACTION")]
        on_deadlock: OnDeadlockArg,
        /// Threads for the run, as `sfc run --threads`: the same output files as one
        /// thread's (the summary's timings aside).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: u32,
    },
    /// Generate an HPCC-sim flow file (like HPCC's traffic_gen.py, but seeded): Poisson
    /// arrivals per host at a load, sizes from a CDF, uniform destinations; optionally incasts.
    #[command(after_help = EX_TRACE)]
    Trace(sfc::workload::trace_cmd::TraceArgs),
    /// Reproduce a paper figure: `sfc experiment list`, `sfc experiment run NAME`,
    /// `sfc experiment validate NAME`.
    #[command(after_help = EX_EXPERIMENT)]
    Experiment {
        #[command(subcommand)]
        cmd: ExpCmd,
    },
    /// Run the fixed benchmark scenarios and report wall time, events, packet-hops/s, peak RSS.
    #[command(after_help = EX_BENCH)]
    Bench {
        /// Smaller scenarios (seconds instead of minutes).
        #[arg(long)]
        quick: bool,
        /// Run only benchmarks whose name contains this string (or one of several, comma-separated:
        /// `--filter fattree320,sec53-hadoop` runs the fat tree and both §5.3 Hadoop runs and
        /// prints their per-hop and per-packet cost ratios).
        #[arg(long)]
        filter: Option<String>,
        /// Run each benchmark N times and report the fastest (timings on shared machines vary
        /// by a few percent; the JSON keeps every run's wall time and the median).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Print the scenario file (TOML) of benchmark NAME instead of running anything (the
        /// benchmarks defined as scenarios: `bfc-t1-…`, `tcd-ws40-…`, `sec53-…`); its `--set`
        /// overrides follow as comments. With `--quick`, the small variant's.
        #[arg(long, value_name = "NAME")]
        print_scenario: Option<String>,
        /// Compare with another sfc binary (e.g. a build of an older commit): run each selected
        /// benchmark `--repeat` times with both, alternating which goes first, and print both
        /// builds' best and median times, the speed-ups and whether both simulated the same
        /// run; writes out/bench-compare.json.
        #[arg(long, value_name = "SFC_BINARY", conflicts_with = "print_scenario")]
        against: Option<PathBuf>,
        /// Profile each selected benchmark for a conservative parallel run split into each of
        /// these partition counts (comma-separated, e.g. `2,4,8,16,32,64`; a count above the
        /// ToRs counts as the ToRs): hosts with their ToR, windows of the lookahead (the
        /// smallest delay of a cut link). Per benchmark, three runs of the same simulation: a
        /// plain sequential one (the time per event), a profiled one (per count: the windows,
        /// the packets crossing a cut, the speed-up bound = events / the busiest partition's
        /// events summed over windows) and one split over 2 threads (the cost per crossing
        /// packet), the plain and the split runs `--repeat` times each (the best of each
        /// counts); prints the bound and the speed-up modelled with those costs, a spin
        /// barrier's and a lock's; writes out/bench-partitions.json.
        #[arg(long, value_name = "N,N,…", value_delimiter = ',', conflicts_with_all = ["print_scenario", "against"])]
        partitions: Vec<u32>,
        /// Run each selected benchmark on each of these thread counts (comma-separated, e.g.
        /// `1,2`; 1 is always included), `--repeat` times each, and print the best and median
        /// wall times, the speed-up over one thread, the windows, the time each thread waited
        /// at barriers and whether every flow's result equals one thread's; writes
        /// out/bench-threads.json.
        #[arg(long, value_name = "N,N,…", value_delimiter = ',', conflicts_with_all = ["print_scenario", "against", "partitions"])]
        threads: Vec<u32>,
    },
}

/// `--format`: the file format of a run's tables.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FormatArg {
    /// CSV text.
    Csv,
    /// Apache Parquet.
    Parquet,
}

/// `--on-deadlock`: what a run does when it finds a PFC deadlock.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum OnDeadlockArg {
    /// Report it, stop the run, exit with status 3.
    Stop,
    /// Report it and keep running.
    Continue,
}

impl From<OnDeadlockArg> for sfc::sim::OnDeadlock {
    fn from(a: OnDeadlockArg) -> Self {
        match a {
            OnDeadlockArg::Stop => sfc::sim::OnDeadlock::Stop,
            OnDeadlockArg::Continue => sfc::sim::OnDeadlock::Continue,
        }
    }
}

// Examples that end each command's `--help`.

/// Examples after `sfc --help`.
const EX_SFC: &str = "\
Examples:
  sfc run                                   # the built-in scenario: none vs OnRamp vs SFC
  sfc run scenarios/incast_star.toml --set buffer.mode=lossy --set buffer.size=512KB
  sfc experiment run sfc-fig7 --quick       # reproduce SFC Fig. 7 (small variant)
  sfc hpcc mix/config.txt                   # an HPCC ns-3 simulator config, unchanged

Documentation: `mdbook build`, then target/book/index.html (sources in docs/src/).";

/// Examples after `sfc run --help`.
const EX_RUN: &str = "\
Examples:
  sfc run                                   # scenarios/default.toml, outputs in out/default/
  sfc run scenarios/incast_star.toml --out results/star
  sfc run my.toml --set seed=2 --set traffic.0.load=0.7 --json --no-output
  sfc run my.toml --format parquet          # flows.parquet, buffer.parquet, … instead of CSV
  sfc run big.toml --threads 4              # one run on 4 cores: the same outputs as on one
  sfc run ring.toml --on-deadlock continue  # report PFC deadlocks, do not stop (exit status 3 if stopped)";

/// Examples after `sfc validate --help`.
const EX_VALIDATE: &str = "\
Examples:
  sfc validate scenarios/default.toml       # hosts, switches, links and flows, or every error
  sfc validate my.toml --set 'cc.kind=\"dcqcn\"' --set buffer.mode=lossless";

/// Examples after `sfc hpcc --help`.
const EX_HPCC: &str = "\
Examples:
  cd simulation && sfc hpcc mix/config.txt  # reads mix/topology.txt, mix/flow.txt; writes mix/fct.txt
  sfc hpcc mix/config.txt > run.log         # HPCC-sim's stdout lines; warnings stay on stderr
  sfc hpcc mix/config.txt --on-deadlock continue  # report PFC deadlocks, keep running
  sfc hpcc mix/config.txt --threads 2       # one run on 2 cores: the same output files";

/// Examples after `sfc trace --help`.
const EX_TRACE: &str = "\
Examples:
  sfc trace --topology fat.txt --cdf websearch --load 0.3 --time 5ms -o flow.txt
  sfc trace --hosts 64 --cdf fb_hadoop --load 0.5 --time 2ms --seed 2 -o flow.txt";

/// Examples after `sfc experiment --help`.
const EX_EXPERIMENT: &str = "\
Examples:
  sfc experiment list
  sfc experiment validate my.toml           # every point checked, nothing run
  sfc experiment run sfc-fig7 --quick       # minutes on 2 cores; without --quick: the paper's scale
  sfc experiment run sfc-fig7 --seeds 1,2,3 --jobs 2";

/// Examples after `sfc experiment list --help`.
const EX_EXP_LIST: &str = "\
Examples:
  sfc experiment list                       # the experiments built into sfc
  sfc experiment list --dir my-experiments  # the files of another directory";

/// Examples after `sfc experiment run --help`.
const EX_EXP_RUN: &str = "\
Examples:
  sfc experiment run hpcc-fig13             # outputs in out/experiments/hpcc-fig13/
  sfc experiment run sfc-fig7 --quick --jobs 2
  sfc experiment run my.toml --out results/x --seed 2
  sfc experiment run sfc-fig7 --out /shared/fig7 --shard 0/4   # one of 4 shares (0-based)";

/// Examples after `sfc experiment merge --help`.
const EX_EXP_MERGE: &str = "\
Examples:
  sfc experiment merge /shared/fig7               # shards ran into /shared/fig7 itself
  sfc experiment merge out/fig7 out/s0 out/s1     # copy the shards' points, then report
  sfc experiment merge /shared/fig7 --no-timings  # outputs comparable byte for byte";

/// Examples after `sfc experiment status --help`.
const EX_EXP_STATUS: &str = "\
Examples:
  sfc experiment status /shared/fig7
  until sfc experiment status /shared/fig7 --complete >/dev/null; do sleep 60; done";

/// Examples after `sfc experiment slurm --help`.
const EX_EXP_SLURM: &str = "\
Examples:
  sfc experiment slurm sfc-fig7 --out /shared/fig7 --shards 8 --cpus-per-task 4 --time 2:00:00
  sfc experiment slurm sfc-fig7 --quick --out /shared/fig7q --shards 2 --submit";

/// Examples after `sfc experiment k8s --help`.
const EX_EXP_K8S: &str = "\
Examples:
  sfc experiment k8s sfc-fig7 --shards 8 --image registry.example/sfc:1 --pvc sfc-results > fig7.yaml
  kubectl apply -f fig7.yaml";

/// Examples after `sfc experiment validate --help`.
const EX_EXP_VALIDATE: &str = "\
Examples:
  sfc experiment validate sfc-fig7          # every point of the sweep and of its --quick variant
  sfc experiment validate my.toml --quick   # only the points --quick runs";

/// Examples after `sfc bench --help`.
const EX_BENCH: &str = "\
Examples:
  sfc bench --quick                         # every benchmark, small variants (about a minute)
  sfc bench --filter sec53 --repeat 3       # best of three, the SFC paper-scale runs
  sfc bench --filter hpcc-fat --against ./old-sfc
  sfc bench --filter fattree320 --threads 2 --repeat 3       # speed-up of one run on 2 cores
  sfc bench --filter fattree320 --partitions 2,4,8,16,32,64   # how far a parallel run could scale";

#[derive(Subcommand)]
enum ExpCmd {
    /// List the experiments (checked-in TOML descriptions in DIR).
    #[command(after_help = EX_EXP_LIST)]
    List {
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Run an experiment's sweep in parallel (resumable), then write CSVs, PNG/SVG plots and
    /// REPORT.md into DIR (default out/experiments/NAME[-quick]).
    #[command(after_help = EX_EXP_RUN)]
    Run {
        /// Experiment name (see `list`) or path to an experiment TOML file.
        name: String,
        /// The smaller variant that finishes in minutes on 2 cores.
        #[arg(long)]
        quick: bool,
        /// Parallel runs (at least 1) [default: number of cores / --threads].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        jobs: Option<u32>,
        /// Output directory.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Run the experiment's scenario with this seed instead of its own (another sample of
        /// its random workload; default output directory NAME[-quick]-seedN).
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Run every point once per seed (comma-separated, e.g. `1,2,3`): REPORT.md checks each
        /// claim on the seeds' mean and at each seed alone (default output directory
        /// NAME[-quick]-seedsA-B-C).
        #[arg(long, value_delimiter = ',')]
        seeds: Option<Vec<u64>>,
        /// Run only this point (by id) into --out, without the report (how the sweep runs
        /// each point in a child process of its own; `merge` lists these commands for the
        /// points it misses). A point already complete is left as it is.
        #[arg(long, requires = "out", conflicts_with = "shard")]
        point: Option<String>,
        /// Run only shard I of N (I from 0 to N-1): a deterministic share of the points,
        /// balanced by their estimated cost; no report. Shards may share one --out (each
        /// point has its own lock); `sfc experiment merge OUT` then writes the report.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Leave the wall times (the `wall_seconds` column of results.csv, the run times in
        /// REPORT.md) out of the outputs, so that two runs of the sweep give identical files.
        #[arg(long)]
        no_timings: bool,
        /// Threads for each point's run, as `sfc run --threads` (the same point files);
        /// `--jobs` points run at once (by default cores / threads, so that `--jobs` ×
        /// `--threads` ≤ cores).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: u32,
    },
    /// Write the report of a sweep run in shards: copy into OUT the complete points of each
    /// SHARD_DIR that OUT lacks (none needed when the shards ran into OUT), then write the
    /// CSVs, plots and REPORT.md as `run` does. Lists the missing points with the commands
    /// that run them.
    #[command(after_help = EX_EXP_MERGE)]
    Merge {
        /// The sweep's output directory.
        out: PathBuf,
        /// Output directories of shards run elsewhere.
        shard_dirs: Vec<PathBuf>,
        /// Leave the wall times out of results.csv and REPORT.md (see `run --no-timings`).
        #[arg(long)]
        no_timings: bool,
    },
    /// Show a sweep's progress: its points done, running, failed and missing (also across
    /// shards sharing OUT), the share of the estimated cost finished and an ETA.
    #[command(after_help = EX_EXP_STATUS)]
    Status {
        /// The sweep's output directory.
        out: PathBuf,
        /// Exit with status 1 unless every point has finished (done or failed).
        #[arg(long)]
        complete: bool,
    },
    /// Write a Slurm job array (one task per shard, SLURM_ARRAY_TASK_ID → --shard) and a merge
    /// job to OUT/slurm/, and print the sbatch commands that submit them (the merge with
    /// --dependency=afterok on the array); --submit runs them.
    #[command(after_help = EX_EXP_SLURM)]
    Slurm {
        /// Experiment name (see `list`) or path to an experiment TOML file.
        name: String,
        /// Shared output directory, on a file system every node mounts [default:
        /// out/experiments/NAME[-quick]].
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Array tasks (shards).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100000))]
        shards: u32,
        /// Slurm partition.
        #[arg(long)]
        partition: Option<String>,
        /// Time limit of each task and of the merge job (Slurm syntax, e.g. 2:00:00).
        #[arg(long)]
        time: Option<String>,
        /// CPUs of each task: the points it runs at once.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        cpus_per_task: Option<u32>,
        /// Memory of each task (Slurm syntax, e.g. 8G).
        #[arg(long)]
        mem: Option<String>,
        /// The `--quick` variant.
        #[arg(long)]
        quick: bool,
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Run the experiment with this seed (see `run --seed`).
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Run every point once per seed (see `run --seeds`).
        #[arg(long, value_delimiter = ',')]
        seeds: Option<Vec<u64>>,
        /// The merge leaves the wall times out of its outputs.
        #[arg(long)]
        no_timings: bool,
        /// Submit the jobs with sbatch.
        #[arg(long)]
        submit: bool,
    },
    /// Print a Kubernetes manifest: an Indexed Job (one completion per shard,
    /// JOB_COMPLETION_INDEX → --shard) writing into a PersistentVolumeClaim, and a merge Job
    /// that waits for every point and writes the report.
    #[command(after_help = EX_EXP_K8S)]
    K8s {
        /// Experiment name (see `list`) or path (inside the pods) to an experiment TOML file.
        name: String,
        /// Output directory inside the pods [default: MOUNT/NAME[-quick]].
        #[arg(long, short)]
        out: Option<String>,
        /// Completions (shards).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100000))]
        shards: u32,
        /// Pods running at once [default: every shard].
        #[arg(long)]
        parallelism: Option<u32>,
        /// Container image with `sfc` on its PATH.
        #[arg(long, default_value = "sfc:latest")]
        image: String,
        /// PersistentVolumeClaim that holds the output directory (ReadWriteMany when pods run
        /// on several nodes).
        #[arg(long, default_value = "sfc-results")]
        pvc: String,
        /// Where the claim is mounted in the pods.
        #[arg(long, default_value = "/results")]
        mount: String,
        /// CPUs of each shard pod: the points it runs at once.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        cpus: u32,
        /// Memory request and limit of each shard pod (e.g. 8Gi).
        #[arg(long)]
        memory: Option<String>,
        /// The `--quick` variant.
        #[arg(long)]
        quick: bool,
        /// Directory of experiment files, inside the pods [default: the built-in ones].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Run the experiment with this seed (see `run --seed`).
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Run every point once per seed (see `run --seeds`).
        #[arg(long, value_delimiter = ',')]
        seeds: Option<Vec<u64>>,
        /// The merge leaves the wall times out of its outputs.
        #[arg(long)]
        no_timings: bool,
        /// Write the manifest to this file instead of standard output.
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// Check an experiment without running it: every point's scenario (each grid point with
    /// its series' and axes' overrides) is resolved and checked as `sfc validate` checks a
    /// scenario, and every error of every point is listed. `run` makes the same checks
    /// before it starts a sweep.
    #[command(after_help = EX_EXP_VALIDATE)]
    Validate {
        /// Experiment name (see `list`) or path to an experiment TOML file.
        name: String,
        /// Check only the points of the `--quick` variant [default: the full sweep's and the
        /// quick variant's].
        #[arg(long)]
        quick: bool,
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Count the claims of experiments already run, per paper: point/range/bound claims
    /// matched of total, direction claims matched of total, the scored claims evaluated on
    /// three seeds or more (and how many match at every seed), calibrated, repeated and
    /// unaudited claims (not scored), and a total row. Reads each experiment's `claims.csv`
    /// from the first of OUT/NAME-seeds… (most seeds), OUT/NAME, OUT/NAME-quick-seeds…,
    /// OUT/NAME-quick.
    Score {
        /// Experiments to count [default: every experiment with results in OUT].
        names: Vec<String>,
        /// Directory holding the experiments' output directories.
        #[arg(long, short, default_value = "out/experiments")]
        out: PathBuf,
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print the score as JSON (per paper and total) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Check that every claim's `quote` is in the text of the paper it cites (whitespace,
    /// hyphenation and case ignored); lists each quote not found with its file:line.
    Quotes {
        /// Directory of the papers' texts (`hpcc.txt`, `sfc.txt`, …) [default:
        /// ../shared/seeds next to the source tree].
        #[arg(long)]
        papers: Option<PathBuf>,
        /// Directory of experiment files [default: the experiments built into sfc].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// The experiment files to check: `(label, text, experiment)` of every file in `dir`, or of
/// the built-in experiments.
fn experiment_texts(
    dir: Option<&std::path::Path>,
) -> Result<Vec<(String, String, sfc::experiment::Experiment)>, String> {
    let mut v = Vec::new();
    match dir {
        Some(d) => {
            for (p, e) in sfc::experiment::list(d)? {
                let t = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                v.push((p.display().to_string(), t, e));
            }
        }
        None => {
            let all = sfc::experiment::list_builtin()?;
            for (file, text) in sfc::experiment::builtin::BUILTIN {
                let label = format!("experiments/{file}");
                if let Some((_, e)) = all
                    .iter()
                    .find(|(p, _)| p.file_name() == std::path::Path::new(file).file_name())
                {
                    v.push((label, text.to_string(), e.clone()));
                }
            }
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(v)
}

/// `sfc experiment score`.
fn cmd_score(
    names: Vec<String>,
    out: PathBuf,
    dir: Option<PathBuf>,
    json: bool,
) -> Result<(), String> {
    use sfc::experiment::score;
    let explicit = !names.is_empty();
    let names = if explicit {
        names
    } else {
        match &dir {
            Some(d) => sfc::experiment::list(d)?,
            None => sfc::experiment::list_builtin()?,
        }
        .into_iter()
        .map(|(_, e)| e.meta.name)
        .collect()
    };
    let mut records = Vec::new();
    let mut missing = Vec::new();
    let mut read = Vec::new();
    for n in &names {
        match score::read_results(&out, n) {
            Ok((d, r)) => {
                read.push(d.display().to_string());
                records.extend(r);
            }
            Err(e) => missing.push(e),
        }
    }
    if explicit {
        for m in &missing {
            eprintln!("{m}");
        }
    }
    if read.is_empty() {
        return Err(format!(
            "no experiment results with a claims.csv in {} (run `sfc experiment run NAME [--quick] --out {}/NAME`)",
            out.display(),
            out.display()
        ));
    }
    if json {
        let mut j = score::json(&records);
        j["results"] = serde_json::json!(read);
        println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    } else {
        println!(
            "Claims of {} experiment result{} in {}:\n",
            read.len(),
            if read.len() == 1 { "" } else { "s" },
            out.display()
        );
        print!("{}", score::table(&records));
        if !explicit && !missing.is_empty() {
            println!(
                "\n{} experiment{} without results in {} (not counted).",
                missing.len(),
                if missing.len() == 1 { "" } else { "s" },
                out.display()
            );
        }
    }
    if explicit && !missing.is_empty() {
        return Err(format!(
            "{} of the named experiments {} no results",
            missing.len(),
            if missing.len() == 1 { "has" } else { "have" }
        ));
    }
    Ok(())
}

/// `sfc experiment quotes`.
fn cmd_quotes(papers: Option<PathBuf>, dir: Option<PathBuf>) -> Result<(), String> {
    let papers = papers.unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds")
    });
    if !papers.is_dir() {
        return Err(format!(
            "paper texts: {} is not a directory (give --papers DIR)",
            papers.display()
        ));
    }
    let (mut found, mut sourced, mut missing, mut unquoted) = (0, 0, Vec::new(), Vec::new());
    for (label, text, e) in experiment_texts(dir.as_deref())? {
        let r = sfc::experiment::quotes::check(&label, &text, &e, &papers);
        found += r.found;
        sourced += r.sourced;
        missing.extend(r.missing);
        unquoted.extend(r.unquoted);
    }
    for u in &unquoted {
        println!("{u}");
    }
    for m in &missing {
        println!("{m}");
    }
    println!(
        "{found} quote{} found, {} not found, {sourced} claim{} citing a source, {} audited claim{} with neither (papers: {})",
        if found == 1 { "" } else { "s" },
        missing.len(),
        if sourced == 1 { "" } else { "s" },
        unquoted.len(),
        if unquoted.len() == 1 { "" } else { "s" },
        papers.display()
    );
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} quote{} not found in the paper texts",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" }
        ))
    }
}

fn cmd_experiment(cmd: ExpCmd) -> Result<(), String> {
    match cmd {
        ExpCmd::List { dir } => {
            let (all, broken) = match &dir {
                Some(d) => {
                    let l = sfc::experiment::scan(d)?;
                    (l.loaded, l.broken)
                }
                None => (sfc::experiment::list_builtin()?, Vec::new()),
            };
            // Columns sized to their widest entry, so long figure names stay aligned.
            let w = |f: &dyn Fn(&sfc::experiment::Experiment) -> usize| {
                all.iter().map(|(_, e)| f(e)).max().unwrap_or(0)
            };
            let (wn, wp, wf) = (
                w(&|e| e.meta.name.chars().count()),
                w(&|e| e.meta.paper.chars().count()),
                w(&|e| e.meta.figure.chars().count()),
            );
            for (path, e) in &all {
                let n = sfc::experiment::runner::points(e, false).len();
                let nq = sfc::experiment::runner::points(e, true).len();
                println!(
                    "{:<wn$}  {:<wp$}  {:<wf$}  {:>4} points ({:>3} quick)  {}  [{}]",
                    e.meta.name,
                    e.meta.paper,
                    e.meta.figure,
                    n,
                    nq,
                    e.meta.title,
                    path.display()
                );
            }
            if broken.is_empty() {
                Ok(())
            } else {
                // The ones that load are listed; the command still fails, naming the others.
                Err(sfc::experiment::broken_files(&broken))
            }
        }
        ExpCmd::Validate { name, quick, dir } => {
            let e = sfc::experiment::find_in(&name, dir.as_deref())?;
            let variants: &[bool] = if quick { &[true] } else { &[false, true] };
            let grids: Vec<(bool, Vec<sfc::experiment::runner::Point>)> = variants
                .iter()
                .map(|&q| (q, sfc::experiment::runner::points(&e, q)))
                .collect();
            let all: Vec<_> = grids
                .iter()
                .flat_map(|(q, pts)| pts.iter().map(move |p| (p, *q)))
                .collect();
            let v = sfc::experiment::runner::validate(&e, &all);
            for w in &v.warnings {
                eprintln!("warning: {w}");
            }
            if !v.errors.is_empty() {
                return Err(v.errors.join("\n"));
            }
            let counts: Vec<String> = grids
                .iter()
                .map(|(q, pts)| {
                    format!(
                        "{} point{}{}",
                        pts.len(),
                        if pts.len() == 1 { "" } else { "s" },
                        if *q { " with --quick" } else { "" }
                    )
                })
                .collect();
            println!("{}: ok — {} checked", e.source, counts.join(", "));
            Ok(())
        }
        ExpCmd::Score {
            names,
            out,
            dir,
            json,
        } => cmd_score(names, out, dir, json),
        ExpCmd::Quotes { papers, dir } => cmd_quotes(papers, dir),
        ExpCmd::Merge {
            out,
            shard_dirs,
            no_timings,
        } => cmd_merge(out, shard_dirs, no_timings),
        ExpCmd::Status { out, complete } => cmd_status(out, complete),
        cmd @ ExpCmd::Slurm { .. } => cmd_slurm(cmd),
        cmd @ ExpCmd::K8s { .. } => cmd_k8s(cmd),
        cmd @ ExpCmd::Run { .. } => cmd_exp_run(cmd),
    }
}

/// `sfc experiment run NAME …`.
fn cmd_exp_run(cmd: ExpCmd) -> Result<(), String> {
    let ExpCmd::Run {
        name,
        quick,
        jobs,
        out,
        dir,
        seed,
        seeds,
        point,
        shard,
        no_timings,
        threads,
    } = cmd
    else {
        unreachable!("called with a run command")
    };
    let threads = threads as usize;
    let shard = shard
        .as_deref()
        .map(sfc::experiment::shard::Shard::parse)
        .transpose()?;
    let e = load_experiment(&name, dir.as_deref(), seed, seeds.as_deref())?;
    if let (Some(id), Some(base)) = (&point, &out) {
        die_with_parent();
        return sfc::experiment::runner::run_single(&e, base, id, quick, threads);
    }
    let mut args: Vec<std::ffi::OsString> =
        vec!["experiment".into(), "run".into(), name.clone().into()];
    if let Some(d) = &dir {
        args.push("--dir".into());
        args.push(d.clone().into_os_string());
    }
    // The validated (sorted) seeds: the children build the same points.
    args.extend(e.seed_args().into_iter().map(Into::into));
    if threads > 1 {
        args.push("--threads".into());
        args.push(threads.to_string().into());
    }
    let child = std::env::current_exe()
        .ok()
        .map(|exe| sfc::experiment::runner::ChildCmd { exe, args });
    // Each point's run takes `threads` cores: a split run's barriers spin, so more threads
    // than cores slow every run down.
    let jobs = jobs.map_or_else(
        || (std::thread::available_parallelism().map_or(1, |n| n.get()) / threads).max(1),
        |j| j as usize,
    );
    let record =
        sfc::experiment::shard::SweepRecord::new(&name, dir.as_deref(), quick, e.seed_args());
    let o = sfc::experiment::runner::RunOpts {
        quick,
        jobs,
        out,
        progress: true,
        child,
        shard,
        no_timings,
        record: Some(record),
        threads,
    };
    let base = sfc::experiment::runner::run(&e, &o)?;
    if shard.is_some() {
        return Ok(());
    }
    println!(
        "{}",
        std::fs::read_to_string(base.join("REPORT.md")).unwrap_or_default()
    );
    eprintln!("report, CSVs and plots in {}", base.display());
    Ok(())
}

/// Experiment `name` (in `dir`, else built in, or a file) with `--seed` / `--seeds` applied.
fn load_experiment(
    name: &str,
    dir: Option<&std::path::Path>,
    seed: Option<u64>,
    seeds: Option<&[u64]>,
) -> Result<sfc::experiment::Experiment, String> {
    let mut e = sfc::experiment::find_in(name, dir)?;
    if let Some(sd) = seed {
        e = e.with_seed(sd)?;
    }
    if let Some(list) = seeds {
        e = e.with_seeds(list)?;
    }
    Ok(e)
}

/// `path` made absolute against the current directory.
fn absolute(path: &std::path::Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The sweep recorded in `out` (else in the first of `more` that has a record), and its
/// experiment, loaded from the directory the sweep ran in (the process moves there, so that
/// relative names resolve, and REPORT.md names the experiment, as in the run).
fn recorded_sweep(
    out: &std::path::Path,
    more: &[PathBuf],
) -> Result<
    (
        sfc::experiment::shard::SweepRecord,
        sfc::experiment::Experiment,
    ),
    String,
> {
    use sfc::experiment::shard::SweepRecord;
    let rec = SweepRecord::read(out)
        .or_else(|e| more.iter().find_map(|d| SweepRecord::read(d).ok()).ok_or(e))?;
    if rec.cwd.is_dir() {
        std::env::set_current_dir(&rec.cwd).map_err(|e| format!("{}: {e}", rec.cwd.display()))?;
    }
    let e = rec.load()?;
    Ok((rec, e))
}

/// `sfc experiment merge OUT [SHARD_DIR…]`.
fn cmd_merge(out: PathBuf, shard_dirs: Vec<PathBuf>, no_timings: bool) -> Result<(), String> {
    let out = absolute(&out)?;
    let dirs = shard_dirs
        .iter()
        .map(|d| absolute(d))
        .collect::<Result<Vec<_>, _>>()?;
    for d in &dirs {
        if !d.is_dir() {
            return Err(format!("{}: no such directory", d.display()));
        }
    }
    let (rec, e) = recorded_sweep(&out, &dirs)?;
    sfc::experiment::shard::merge(&e, &rec, &out, &dirs, !no_timings)?;
    println!(
        "{}",
        std::fs::read_to_string(out.join("REPORT.md")).unwrap_or_default()
    );
    eprintln!("report, CSVs and plots in {}", out.display());
    Ok(())
}

/// `sfc experiment status OUT`.
fn cmd_status(out: PathBuf, complete: bool) -> Result<(), String> {
    let out = absolute(&out)?;
    let (rec, e) = recorded_sweep(&out, &[])?;
    let st = sfc::experiment::shard::status(&e, rec.quick, &out);
    print!(
        "{}",
        sfc::experiment::shard::status_text(&e, rec.quick, &out, &st)
    );
    if complete && !st.complete() {
        return Err(format!(
            "{} point(s) running, {} missing",
            st.running.len(),
            st.missing.len()
        ));
    }
    Ok(())
}

/// `sfc experiment slurm NAME …`.
fn cmd_slurm(cmd: ExpCmd) -> Result<(), String> {
    let ExpCmd::Slurm {
        name,
        out,
        shards,
        partition,
        time,
        cpus_per_task,
        mem,
        quick,
        dir,
        seed,
        seeds,
        no_timings,
        submit,
    } = cmd
    else {
        unreachable!("called with a slurm command")
    };
    let e = load_experiment(&name, dir.as_deref(), seed, seeds.as_deref())?;
    let out = absolute(&out.unwrap_or_else(|| sfc::experiment::runner::default_out(&e, quick)))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find sfc's executable: {e}"))?;
    let o = sfc::experiment::cluster::SlurmOpts {
        exe,
        record: sfc::experiment::shard::SweepRecord::new(
            &name,
            dir.as_deref(),
            quick,
            e.seed_args(),
        ),
        out: out.clone(),
        shards: shards as usize,
        partition,
        time,
        cpus_per_task,
        mem,
        no_timings,
    };
    let (array, merge) = sfc::experiment::cluster::write_slurm(&o)?;
    eprintln!(
        "wrote {} ({} array tasks) and {}",
        array.display(),
        shards,
        merge.display()
    );
    if !submit {
        println!(
            "{}",
            sfc::experiment::cluster::slurm_submit_commands(&out).trim_end()
        );
        return Ok(());
    }
    let (a, m) = sfc::experiment::cluster::slurm_submit(&array, &merge)?;
    println!("submitted array job {a} and merge job {m} (runs after {a} succeeds)");
    eprintln!(
        "progress: sfc experiment status {}",
        sfc::experiment::shard::shell_word(&out.display().to_string())
    );
    Ok(())
}

/// `sfc experiment k8s NAME …`.
fn cmd_k8s(cmd: ExpCmd) -> Result<(), String> {
    let ExpCmd::K8s {
        name,
        out,
        shards,
        parallelism,
        image,
        pvc,
        mount,
        cpus,
        memory,
        quick,
        dir,
        seed,
        seeds,
        no_timings,
        file,
    } = cmd
    else {
        unreachable!("called with a k8s command")
    };
    // The experiment is checked here when it can be (a built-in one, or a file present on
    // this machine too); a path that exists only in the pods is taken as is.
    let e = match load_experiment(&name, dir.as_deref(), seed, seeds.as_deref()) {
        Ok(e) => Some(e),
        Err(err) if dir.is_some() || name.ends_with(".toml") => {
            eprintln!("note: {err} (taken as a path inside the pods)");
            None
        }
        Err(err) => return Err(err),
    };
    let seed_args = e.as_ref().map(|e| e.seed_args()).unwrap_or_default();
    let mut rec = sfc::experiment::shard::SweepRecord::new(&name, dir.as_deref(), quick, seed_args);
    rec.cwd = PathBuf::from(&mount);
    let out = out.unwrap_or_else(|| {
        let stem = sfc::experiment::cluster::job_name(&rec);
        format!(
            "{}/{}",
            mount.trim_end_matches('/'),
            stem.trim_start_matches("sfc-")
        )
    });
    let o = sfc::experiment::cluster::K8sOpts {
        record: rec,
        image,
        pvc,
        mount,
        out,
        shards: shards as usize,
        parallelism: parallelism.map(|p| p as usize),
        cpus,
        memory,
        no_timings,
    };
    let text = sfc::experiment::cluster::k8s_manifest(&o);
    match file {
        Some(f) => {
            sfc::metrics::output::write_atomic(&f, text.as_bytes())
                .map_err(|e| format!("{}: {e}", f.display()))?;
            eprintln!("wrote {}: kubectl apply -f {}", f.display(), f.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// A point's child process ends with the sweep that started it (a killed sweep leaves no
/// orphan finishing its point behind the resumed one's back).
fn die_with_parent() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_PDEATHSIG) and getppid only affect this process's signal setup.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // The parent died before the line above took effect: this process was adopted (by
        // init, or by a subreaper, so the sweep's pid is compared, not 1).
        let sweep = std::env::var(sfc::experiment::runner::SWEEP_PID_ENV)
            .ok()
            .and_then(|v| v.parse::<libc::pid_t>().ok());
        let ppid = libc::getppid();
        if ppid == 1 || sweep.is_some_and(|s| s != ppid) {
            eprintln!(
                "error: the sweep that started this point ({}) has exited",
                sweep.map_or_else(|| "its parent".to_string(), |s| format!("pid {s}"))
            );
            std::process::exit(1);
        }
    }
}

fn main() -> ExitCode {
    // `sfc run … | head`: a closed pipe ends the process quietly (default SIGPIPE action)
    // instead of a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    sfc::process::install_signal_handlers();
    if std::env::var_os("SFC_HUGEPAGES").is_some_and(|v| v == "0") {
        sfc::engine::hugepage::set_enabled(false);
    }
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run {
            scenario,
            out,
            sets,
            no_output,
            json,
            capture,
            on_deadlock,
            format,
            threads,
        } => match capture.as_deref().map(sfc::scenario::capture::capture_sets) {
            Some(Err(e)) => Err(e),
            c => {
                let mut sets = sets;
                sets.extend(c.and_then(Result::ok).unwrap_or_default());
                sets.extend(format.map(|f| {
                    let name = match f {
                        FormatArg::Csv => "csv",
                        FormatArg::Parquet => "parquet",
                    };
                    format!("output.format=\"{name}\"")
                }));
                cmd_run(
                    scenario,
                    out,
                    sets,
                    (no_output, json),
                    on_deadlock.into(),
                    threads as usize,
                )
            }
        },
        Cmd::Validate { scenario, sets } => {
            sfc::process::set_interrupt_note("");
            cmd_validate(scenario, sets)
        }
        Cmd::Hpcc {
            config,
            capture,
            on_deadlock,
            threads,
        } => {
            // `sfc hpcc config.txt | head -1`: HPCC-sim's stdout lines come before and after
            // the simulation; a closed pipe must not kill the run before it writes its output
            // files. With SIGPIPE ignored, writes to the closed stdout fail (and are ignored
            // by `hpcc`), the outputs are written and the exit status is the run's.
            #[cfg(unix)]
            // SAFETY: changing a signal's disposition; no handler code runs.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            }
            sfc::hpcc::run_config_threads(
                &config,
                on_deadlock.into(),
                capture.as_deref(),
                threads as usize,
            )
        }
        Cmd::Bench {
            quick,
            filter,
            repeat,
            print_scenario: Some(name),
            ..
        } => {
            let _ = (filter, repeat);
            match sfc::bench::scenario_of(&name, quick) {
                Ok(Some((text, sets))) => {
                    print!("{text}");
                    for s in sets {
                        println!("# --set {s}");
                    }
                    Ok(())
                }
                Ok(None) if sfc::bench::BENCHES.iter().any(|b| b.name == name) => Err(format!(
                    "benchmark `{name}` is built in code, not from a scenario file"
                )),
                Ok(None) => Err(format!(
                    "unknown benchmark `{name}` (one of: {})",
                    sfc::bench::BENCHES
                        .iter()
                        .map(|b| b.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                Err(e) => Err(e),
            }
        }
        Cmd::Bench {
            quick,
            filter,
            repeat,
            print_scenario: None,
            against,
            partitions,
            threads,
        } => match against {
            _ if !threads.is_empty() => {
                sfc::bench::threads(quick, filter.as_deref(), repeat, &threads)
            }
            _ if !partitions.is_empty() => {
                sfc::bench::partitions(quick, filter.as_deref(), repeat, &partitions)
            }
            Some(other) => sfc::bench::compare(quick, filter.as_deref(), repeat, &other),
            None => sfc::bench::run(quick, filter.as_deref(), repeat),
        },
        Cmd::Experiment { cmd } => cmd_experiment(cmd),
        Cmd::Trace(args) => {
            sfc::process::set_interrupt_note("the trace file is written only when complete");
            sfc::workload::trace_cmd::run(&args)
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Never a panic on a closed stderr.
            let mut err = std::io::stderr();
            for l in sfc::units::shorten_long_numbers(&e).lines() {
                let _ = writeln!(err, "error: {l}");
            }
            if sfc::runguard::deadlock_stopped() {
                ExitCode::from(sfc::runguard::DEADLOCK_EXIT_STATUS)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// The error when another process holds an `sfc run` output directory's lock.
const RUN_BUSY: &str = "another `sfc run` is writing into this directory (it would delete \
                        this run's files, or this run its): wait for it to finish, or give \
                        another --out";

/// What `sfc run` was given: the scenario's text and where it came from, the command line's
/// overrides and which outputs are wanted.
struct RunRequest {
    /// The scenario file (`None`: the built-in default).
    scenario: Option<PathBuf>,
    /// The scenario's text.
    text: String,
    /// How messages name the scenario (its path, or `<built-in default>`).
    label: String,
    /// Directory relative input paths are taken from.
    dir: PathBuf,
    /// `--set` overrides, applied after a variant's own.
    sets: Vec<String>,
    /// `--out` (default: `out/<name>`).
    out: Option<PathBuf>,
    /// `--no-output`: write no files.
    no_output: bool,
    /// `--json`: print the summary as JSON instead of the table.
    json: bool,
    /// `--on-deadlock`.
    on_deadlock: sfc::sim::OnDeadlock,
    /// `--threads`.
    threads: usize,
}

impl RunRequest {
    /// The output directory of a run named `name`, unless no outputs are wanted.
    fn out_dir(&self, name: &str) -> Option<PathBuf> {
        (!self.no_output).then(|| {
            self.out
                .clone()
                .unwrap_or_else(|| PathBuf::from("out").join(name))
        })
    }

    /// The input files of scenario `sc` (and the scenario file itself), which its outputs
    /// must not overwrite.
    fn inputs(&self, sc: &sfc::scenario::Scenario) -> Vec<PathBuf> {
        let mut inputs = sc.inputs.clone();
        inputs.extend(self.scenario.clone());
        inputs
    }
}

/// A resolved `[[compare]]` variant: its name, its scenario and the stream of its flows.
type Variant = (
    String,
    sfc::scenario::Scenario,
    sfc::workload::stream::FlowStream,
);

fn cmd_run(
    scenario: Option<PathBuf>,
    out: Option<PathBuf>,
    sets: Vec<String>,
    (no_output, json): (bool, bool),
    on_deadlock: sfc::sim::OnDeadlock,
    threads: usize,
) -> Result<(), String> {
    let (text, label, dir) = match &scenario {
        Some(p) => (
            sfc::fsutil::read_text(p)?,
            p.display().to_string(),
            p.parent().map(PathBuf::from).unwrap_or_default(),
        ),
        None => (
            sfc::scenario::default::DEFAULT_SCENARIO.to_string(),
            "<built-in default>".to_string(),
            PathBuf::from("."),
        ),
    };
    let variants = sfc::scenario::variants(&text, &label)?;
    let req = RunRequest {
        scenario,
        text,
        label,
        dir,
        sets,
        out,
        no_output,
        json,
        on_deadlock,
        threads,
    };
    if variants.is_empty() {
        run_single(&req)
    } else {
        run_variants(&req, &variants)
    }
}

/// `sfc run` of a scenario without `[[compare]]` variants: one run, its flows from a lazy
/// stream as the run reaches them (no workload list), its summary printed.
fn run_single(req: &RunRequest) -> Result<(), String> {
    let label = &req.label;
    let (sc, stream) = sfc::scenario::from_str_streaming(&req.text, label, &req.dir, &req.sets)?;
    print_warnings(&sc.warnings);
    let out_dir = req.out_dir(&sc.name);
    let name = sc.name.clone();
    if let Some(d) = &out_dir {
        sfc::runguard::check_outputs_spare_inputs(d, &req.inputs(&sc))
            .map_err(|e| format!("{label}: {e}"))?;
    }
    // Held until the run's outputs are written: a second run into the directory stops.
    let _lock = match &out_dir {
        Some(d) => {
            let l =
                sfc::runguard::lock_output_dir(d, RUN_BUSY).map_err(|e| format!("{label}: {e}"))?;
            sfc::runguard::prepare_output_dir(d).map_err(|e| format!("{label}: {e}"))?;
            Some(l)
        }
        None => None,
    };
    eprintln!(
        "running `{name}`: {} hosts, {} switches, about {} flows",
        sc.topo.hosts().len(),
        sc.topo.switches().len(),
        stream.capacity_hint()
    );
    let r = sfc::report::run_stream(
        sc,
        stream,
        &RunOptions {
            out_dir: out_dir.clone(),
            progress: true,
            stream_results: true,
            on_deadlock: req.on_deadlock,
            threads: req.threads,
        },
    )
    .map_err(|e| format!("{label}: {e}"))?;
    if req.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&r.summary).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", summary_table(&name, &r.stats, &extra_lines(&r)));
    }
    if let Some(d) = out_dir {
        eprintln!("outputs written to {}", d.display());
    }
    if let Some(n) = &r.note {
        eprintln!("{label}: {n}");
    }
    if let Some(st) = &r.outcome.stuck {
        eprintln!("{label}: {st}");
    }
    match r.failure {
        Some(f) => Err(format!("{label}: {f}")),
        None => Ok(()),
    }
}

/// `sfc run` of a scenario with `[[compare]]` variants: every variant resolved, its outputs
/// prepared, then all run side by side (as many at once as cores and memory allow) and
/// compared in one table.
fn run_variants(req: &RunRequest, variants: &[(String, Vec<String>)]) -> Result<(), String> {
    let label = &req.label;
    let (scenarios, estimates) = resolve_variants(req, variants)?;
    let mut seen = std::collections::HashSet::new();
    for (vname, sc, _) in &scenarios {
        print_warnings_once(
            &mut seen,
            &sc.warnings,
            &format!("{label} [{vname}]"),
            label,
        );
    }
    let name = scenarios[0].1.name.clone();
    let base = req.out_dir(&name);
    // As many at once as there are cores, and no more than fit in memory together.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Each run takes `--threads` of them.
    let jobs = sfc::runguard::concurrent_runs(
        &estimates,
        sfc::process::available_memory_bytes(),
        (threads / req.threads.max(1)).max(1),
    );
    announce_variants(&name, &scenarios, jobs);
    // Every variant's directory is checked (and its previous set invalidated) before any runs,
    // under a lock on the parent directory held until all have run.
    let _lock = match &base {
        Some(b) => {
            Some(sfc::runguard::lock_output_dir(b, RUN_BUSY).map_err(|e| format!("{label}: {e}"))?)
        }
        None => None,
    };
    if let Some(b) = &base {
        prepare_variant_outputs(req, b, &scenarios)?;
    }
    let results = run_variant_jobs(
        scenarios,
        base.as_deref(),
        jobs,
        label,
        (req.on_deadlock, req.threads),
    );
    let mut cols = Vec::new();
    let mut summaries = serde_json::Map::new();
    for ((vname, _), r) in variants.iter().zip(results) {
        let r = r.expect("every variant ran")?;
        summaries.insert(vname.clone(), r.summary.clone());
        cols.push((vname.clone(), r));
    }
    for (n, r) in &cols {
        for note in sfc::report::thread_notes(&r.summary, req.threads) {
            eprintln!("{label} [{n}]: note: {note}");
        }
        if let Some(note) = &r.note {
            eprintln!("{label} [{n}]: {note}");
        }
        if let Some(st) = &r.stuck {
            eprintln!("{label} [{n}]: {st}");
        }
    }
    let failures: Vec<String> = cols
        .iter()
        .filter_map(|(n, r)| r.failure.as_ref().map(|f| format!("{label} [{n}]: {f}")))
        .collect();
    let failures = || -> Result<(), String> {
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n"))
        }
    };
    if req.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summaries).map_err(|e| e.to_string())?
        );
        return failures();
    }
    print_side_by_side(&name, &cols);
    if let Some(b) = base {
        eprintln!("outputs written to {}/<variant>/", b.display());
    }
    failures()
}

/// Every variant with its overrides, then the command line's, resolved and its memory
/// estimated before any runs (an error in the last one does not wait for the first to
/// finish). Returns the variants and their memory estimates, bytes.
fn resolve_variants(
    req: &RunRequest,
    variants: &[(String, Vec<String>)],
) -> Result<(Vec<Variant>, Vec<u64>), String> {
    let mut scenarios = Vec::new();
    let mut estimates = Vec::new();
    for (vname, vsets) in variants {
        let mut all = vsets.clone();
        all.extend(req.sets.iter().cloned());
        let vlabel = format!("{} [{vname}]", req.label);
        // Each variant's flows come from its own lazy stream as its run reaches them.
        let (sc, stream) = sfc::scenario::from_str_streaming(&req.text, &vlabel, &req.dir, &all)?;
        let est = sfc::runguard::check_memory_stream(&sc.topo, &sc.net, &stream, true)
            .map_err(|e| format!("{vlabel}: {e}"))?;
        estimates.push(est.total());
        scenarios.push((vname.clone(), sc, stream));
    }
    Ok((scenarios, estimates))
}

/// The line announcing a side-by-side run: the variants, the size of their networks and
/// workloads (a range where they differ) and how many run at a time.
fn announce_variants(name: &str, scenarios: &[Variant], jobs: usize) {
    let span = |f: &dyn Fn(&Variant) -> usize| {
        let lo = scenarios.iter().map(f).min().unwrap_or(0);
        let hi = scenarios.iter().map(f).max().unwrap_or(0);
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        }
    };
    eprintln!(
        "running `{name}` × {} variants ({}): {} hosts, {} switches, about {} flows each; {jobs} at a time",
        scenarios.len(),
        scenarios
            .iter()
            .map(|v| v.0.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        span(&|v| v.1.topo.hosts().len()),
        span(&|v| v.1.topo.switches().len()),
        span(&|v| v.2.capacity_hint()),
    );
}

/// Check that no variant's outputs (`base/<variant>/`) would overwrite its inputs, then
/// invalidate each directory's previous set of outputs.
fn prepare_variant_outputs(
    req: &RunRequest,
    base: &std::path::Path,
    scenarios: &[Variant],
) -> Result<(), String> {
    let label = &req.label;
    for (vname, sc, _) in scenarios {
        sfc::runguard::check_outputs_spare_inputs(&base.join(vname), &req.inputs(sc))
            .map_err(|e| format!("{label} [{vname}]: {e}"))?;
    }
    for (vname, _, _) in scenarios {
        sfc::runguard::prepare_output_dir(&base.join(vname))
            .map_err(|e| format!("{label} [{vname}]: {e}"))?;
    }
    Ok(())
}

/// Run the variants on `jobs` threads, each writing into `base/<variant>/`. Returns what the
/// side-by-side table shows of each run, in variant order, kept instead of its simulator (a
/// variant's network and monitors are freed as soon as it ends).
fn run_variant_jobs(
    scenarios: Vec<Variant>,
    base: Option<&std::path::Path>,
    jobs: usize,
    label: &str,
    (on_deadlock, threads): (sfc::sim::OnDeadlock, usize),
) -> Vec<Option<Result<VariantRow, String>>> {
    let mut results: Vec<Option<Result<VariantRow, String>>> =
        (0..scenarios.len()).map(|_| None).collect();
    let mut queue: Vec<(usize, Variant)> = scenarios.into_iter().enumerate().collect();
    queue.reverse();
    let queue = std::sync::Mutex::new(queue);
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|| {
                loop {
                    let Some((i, (vname, s, flows))) = queue.lock().expect("queue").pop() else {
                        break;
                    };
                    let opts = RunOptions {
                        out_dir: base.map(|b| b.join(&vname)),
                        progress: false,
                        stream_results: true,
                        on_deadlock,
                        threads,
                    };
                    let r = sfc::report::run_stream(s, flows, &opts)
                        .map(|r| VariantRow::of(&r))
                        .map_err(|e| format!("{label} [{vname}]: {e}"));
                    slots.lock().expect("slots")[i] = Some(r);
                }
            });
        }
    });
    results
}

/// The side-by-side table of the variants' results: slowdowns, then [`VariantRow::ROWS`].
fn print_side_by_side(name: &str, cols: &[(String, VariantRow)]) {
    println!("== {name}: side by side ==");
    let stats: Vec<(String, sfc::metrics::stats::RunStats)> = cols
        .iter()
        .map(|(n, r)| (n.clone(), r.stats.clone()))
        .collect();
    print!("{}", sfc::metrics::output::side_by_side(&stats));
    let w = cols
        .iter()
        .map(|c| c.0.chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    for (k, row) in VariantRow::ROWS.iter().enumerate() {
        let mut line = format!("  {row:<21}");
        for (_, r) in cols {
            line.push_str(&format!(" {:>w$}", r.cells[k]));
        }
        println!("{line}");
        if *row == "PFC pauses" && cols.iter().any(|(_, r)| r.deadlocks > 0) {
            let mut line = format!("  {:<21}", "PFC deadlocks");
            for (_, r) in cols {
                line.push_str(&format!(" {:>w$}", r.deadlocks));
            }
            println!("{line}");
        }
    }
}

/// One `[[compare]]` variant's results, as the side-by-side table and `--json` show them.
struct VariantRow {
    stats: sfc::metrics::stats::RunStats,
    summary: serde_json::Value,
    /// One cell per [`Self::ROWS`] entry.
    cells: Vec<String>,
    failure: Option<String>,
    note: Option<String>,
    /// Where the unfinished flows' packets are ([`sfc::runguard::Outcome::stuck`]).
    stuck: Option<String>,
    /// PFC deadlocks found.
    deadlocks: u64,
}

impl VariantRow {
    /// The rows below the slowdown table.
    const ROWS: [&str; 8] = [
        "peak buffer",
        "drops",
        "BTS generated",
        "BTS suppressed",
        "QP pauses",
        "PFC pauses",
        "events",
        "wall time",
    ];

    fn of(r: &sfc::report::RunResult) -> VariantRow {
        let cells = vec![
            sfc::units::fmt_bytes(r.sim.peak_buffer_bytes()),
            (r.sim.counters.drops + r.sim.counters.drops_link_error).to_string(),
            r.sim.scheme_stat("sfc", "bts_generated").to_string(),
            r.sim.scheme_stat("sfc", "bts_suppressed").to_string(),
            r.sim.counters.qp_pauses.to_string(),
            r.sim.scheme_stat("pfc", "pauses").to_string(),
            r.sim.q.events().to_string(),
            format!("{:.2} s", r.wall_seconds),
        ];
        debug_assert_eq!(cells.len(), Self::ROWS.len());
        VariantRow {
            stats: r.stats.clone(),
            summary: r.summary.clone(),
            cells,
            failure: r.failure.clone(),
            note: r.note.clone(),
            stuck: r.outcome.stuck.clone(),
            deadlocks: r.sim.deadlocks().count,
        }
    }
}

/// Print resolution warnings on stderr.
fn print_warnings(w: &[String]) {
    for w in w {
        eprintln!("warning: {w}");
    }
}

/// Print the warnings of one `[[compare]]` variant (labelled `vlabel`) that no earlier variant
/// printed: a warning about the file itself comes in every variant, differing only in the label.
fn print_warnings_once(
    seen: &mut std::collections::HashSet<String>,
    warnings: &[String],
    vlabel: &str,
    label: &str,
) {
    for w in warnings {
        if seen.insert(w.replacen(vlabel, label, 1)) {
            eprintln!("warning: {w}");
        }
    }
}

fn cmd_validate(scenario: PathBuf, sets: Vec<String>) -> Result<(), String> {
    // As `run` would: every `[[compare]]` variant with its overrides, then the command line's;
    // each is built (topology, routes, flows) and its memory estimated, so a scenario that
    // `validate` calls ok does not fail as soon as `run` starts.
    let text = sfc::fsutil::read_text(&scenario)?;
    let label = scenario.display().to_string();
    let dir = scenario.parent().map(PathBuf::from).unwrap_or_default();
    let variants = sfc::scenario::variants(&text, &label)?;
    let runs: Vec<(String, Vec<String>)> = if variants.is_empty() {
        vec![(String::new(), sets.clone())]
    } else {
        variants
            .iter()
            .map(|(v, vs)| (v.clone(), vs.iter().chain(&sets).cloned().collect()))
            .collect()
    };
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut first = None;
    for (vname, all) in &runs {
        let vlabel = if vname.is_empty() {
            label.clone()
        } else {
            format!("{label} [{vname}]")
        };
        // Streamed as `run` does: no list of flows and no flow table are built, so a scenario
        // of any length validates in the memory `run` needs.
        let (sc, stream) = match sfc::scenario::from_str_streaming(&text, &vlabel, &dir, all) {
            Ok(x) => x,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        print_warnings_once(&mut seen, &sc.warnings, &vlabel, &label);
        if let Err(e) = sfc::runguard::check_memory_stream(&sc.topo, &sc.net, &stream, true) {
            errors.push(format!("{vlabel}: {e}"));
            continue;
        }
        let checked = sfc::sim::Simulator::with_stream(
            sc.topo.clone(),
            sc.net.clone(),
            sc.cc.clone(),
            stream.clone(),
        )
        .and_then(|sim| sim.check_flows(stream));
        let n = match checked {
            Ok(n) => n,
            Err(e) => {
                errors.push(format!("{vlabel}: {e}"));
                continue;
            }
        };
        let sc = (sc, n);
        first.get_or_insert(sc);
    }
    if !errors.is_empty() {
        // A problem of the file itself shows in every variant: report it once.
        let mut shown = std::collections::HashSet::new();
        errors.retain(|e| {
            let mut key = e.clone();
            for (v, _) in &runs {
                key = key.replace(&format!("{label} [{v}]"), &label);
            }
            shown.insert(key)
        });
        return Err(errors.join("\n"));
    }
    let (sc, nflows) = first.expect("at least one variant");
    let vs = if variants.is_empty() {
        String::new()
    } else {
        format!(", {} variants", variants.len())
    };
    println!(
        "{}: ok — {} hosts, {} switches, {} links, {} flows, cc {}{vs}",
        scenario.display(),
        sc.topo.hosts().len(),
        sc.topo.switches().len(),
        sc.topo.links.len(),
        nflows,
        sc.cc.name()
    );
    Ok(())
}
