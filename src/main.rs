//! `sfc` command-line interface.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use sfc::metrics::output::summary_table;
use sfc::report::{RunOptions, extra_lines};

/// sfc — a fast, faithful packet-level datacenter network simulator (SFC, HPCC, DCQCN, PFC, IRN…).
///
/// `sfc run` writes DIR/flows.csv, DIR/summary.json, DIR/fct.txt (HPCC-sim format) and
/// DIR/buffer.csv; `sfc hpcc` writes the files its config names.
#[derive(Parser)]
#[command(version, about)]
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
    /// buffer, max over each 10 µs interval).
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
    },
    /// Check a scenario file without running it (reports every problem with file:line).
    Validate {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Overrides as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Run an HPCC ns-3 simulator config.txt unchanged (drop-in mode); see docs/hpcc-compat.md.
    Hpcc {
        /// The HPCC-sim config file. Paths inside are relative to the current directory.
        config: PathBuf,
    },
    /// Generate an HPCC-sim flow file (like HPCC's traffic_gen.py, but seeded): Poisson
    /// arrivals per host at a load, sizes from a CDF, uniform destinations; optionally incasts.
    Trace {
        /// HPCC topology file whose hosts send (or use --hosts).
        #[arg(long)]
        topology: Option<PathBuf>,
        /// Number of hosts 0..N-1 (when no topology is given).
        #[arg(long)]
        hosts: Option<u32>,
        /// Size CDF: built-in name (websearch, fb_hadoop, google_rpc, …) or an HPCC CDF file.
        #[arg(long, default_value = "websearch")]
        cdf: String,
        /// Offered load per host, fraction of the host link rate.
        #[arg(long, default_value_t = 0.3)]
        load: f64,
        /// Host link rate [default: the topology's host link rate, else 100Gbps].
        #[arg(long)]
        bw: Option<String>,
        /// Duration of arrivals, e.g. 5ms.
        #[arg(long, default_value = "5ms")]
        time: String,
        /// Time of the first possible arrival (traffic_gen.py uses 2 s).
        #[arg(long, default_value = "2s")]
        start: String,
        /// Incast degree (senders per event); 0 = no incast.
        #[arg(long, default_value_t = 0)]
        incast_degree: usize,
        /// Incast message size.
        #[arg(long, default_value = "500KB")]
        incast_size: String,
        /// Incast load, fraction of the aggregate host capacity.
        #[arg(long, default_value_t = 0.02)]
        incast_load: f64,
        /// Incast synchronization window.
        #[arg(long, default_value = "0us")]
        sync_window: String,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output flow file.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Run the fixed benchmark scenarios and report wall time, events, packet-hops/s, peak RSS.
    Bench {
        /// Smaller scenarios (seconds instead of minutes).
        #[arg(long)]
        quick: bool,
        /// Run only benchmarks whose name contains this string.
        #[arg(long)]
        filter: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run {
            scenario,
            out,
            sets,
            no_output,
            json,
        } => cmd_run(scenario, out, sets, no_output, json),
        Cmd::Validate { scenario, sets } => cmd_validate(scenario, sets),
        Cmd::Hpcc { config } => sfc::hpcc::run_config(&config),
        Cmd::Bench { quick, filter } => sfc::bench::run(quick, filter.as_deref()),
        Cmd::Trace {
            topology,
            hosts,
            cdf,
            load,
            bw,
            time,
            start,
            incast_degree,
            incast_size,
            incast_load,
            sync_window,
            seed,
            out,
        } => sfc::workload::trace_cmd::run(&sfc::workload::trace_cmd::TraceArgs {
            topology,
            hosts,
            cdf,
            load,
            bw,
            time,
            start,
            incast_degree,
            incast_size,
            incast_load,
            sync_window,
            seed,
            out,
        }),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cmd_run(
    scenario: Option<PathBuf>,
    out: Option<PathBuf>,
    sets: Vec<String>,
    no_output: bool,
    json: bool,
) -> Result<(), String> {
    let sc = match &scenario {
        Some(p) => sfc::scenario::load(p, &sets)?,
        None => sfc::scenario::default::load(&sets)?,
    };
    let out_dir = if no_output {
        None
    } else {
        Some(out.unwrap_or_else(|| PathBuf::from("out").join(&sc.name)))
    };
    let name = sc.name.clone();
    eprintln!(
        "running `{name}`: {} hosts, {} switches, {} flows",
        sc.topo.hosts().len(),
        sc.topo.switches().len(),
        sc.flows.len()
    );
    let label = scenario
        .as_ref()
        .map_or("<built-in default>".to_string(), |p| {
            p.display().to_string()
        });
    let r = sfc::report::run(
        sc,
        &RunOptions {
            out_dir: out_dir.clone(),
            progress: true,
        },
    )
    .map_err(|e| format!("{label}: {e}"))?;
    if json {
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
    Ok(())
}

fn cmd_validate(scenario: PathBuf, sets: Vec<String>) -> Result<(), String> {
    let sc = sfc::scenario::load(&scenario, &sets)?;
    sfc::sim::Simulator::new(sc.topo.clone(), sc.net.clone(), sc.cc.clone(), &sc.flows)
        .map_err(|e| format!("{}: {e}", scenario.display()))?;
    println!(
        "{}: ok — {} hosts, {} switches, {} links, {} flows, cc {}",
        scenario.display(),
        sc.topo.hosts().len(),
        sc.topo.switches().len(),
        sc.topo.links.len(),
        sc.flows.len(),
        sc.cc.name()
    );
    Ok(())
}
