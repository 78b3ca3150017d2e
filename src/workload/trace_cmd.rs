//! `sfc trace`: write an HPCC-sim flow file the way HPCC's `traffic_gen.py` does (Poisson
//! arrivals per host at a load relative to the host link rate, sizes from a CDF, uniform
//! destinations, start times from a 2 s base), but seeded and reproducible, with optional
//! incast events (dport 200) as in the HPCC paper's Fig. 11.

use std::path::PathBuf;

use crate::topology::shapes::MAX_NODES;
use crate::units::{MAX_TIME_PS, parse_bytes, parse_rate_bps, parse_time_ps};
use crate::workload::cdf::{CdfFormat, SizeCdf, builtin};
use crate::workload::traffic;

/// Arguments of `sfc trace` (also its command-line interface).
#[derive(Clone, Debug, clap::Args)]
pub struct TraceArgs {
    /// HPCC topology file whose hosts send (or use --hosts).
    #[arg(long)]
    pub topology: Option<PathBuf>,
    /// Number of hosts 0..N-1 (instead of --topology).
    #[arg(long, conflicts_with = "topology")]
    pub hosts: Option<u32>,
    /// Size CDF: built-in name (websearch, fb_hadoop, google_rpc, …) or an HPCC CDF file.
    #[arg(long, default_value = "websearch")]
    pub cdf: String,
    /// Offered load per host, fraction of the host link rate.
    #[arg(long, default_value_t = 0.3)]
    pub load: f64,
    /// Host link rate [default: the topology's host link rate, else 100Gbps].
    #[arg(long)]
    pub bw: Option<String>,
    /// Duration of arrivals, e.g. 5ms.
    #[arg(long, default_value = "5ms")]
    pub time: String,
    /// Time of the first possible arrival (traffic_gen.py uses 2 s).
    #[arg(long, default_value = "2s")]
    pub start: String,
    /// Incast degree (senders per event); 0 = no incast.
    #[arg(long, default_value_t = 0)]
    pub incast_degree: usize,
    /// Incast message size (with --incast-degree) [default: 500KB].
    #[arg(long)]
    pub incast_size: Option<String>,
    /// Incast load, fraction of the aggregate host capacity (with --incast-degree)
    /// [default: 0.02].
    #[arg(long)]
    pub incast_load: Option<f64>,
    /// Incast synchronization window (with --incast-degree) [default: 0us].
    #[arg(long)]
    pub sync_window: Option<String>,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output flow file.
    #[arg(long, short)]
    pub out: PathBuf,
}

/// Generate and write the flow file.
pub fn run(a: &TraceArgs) -> Result<(), String> {
    // Incast options without incasts would be ignored silently.
    if a.incast_degree == 0 {
        let given = [
            ("--incast-size", a.incast_size.is_some()),
            ("--incast-load", a.incast_load.is_some()),
            ("--sync-window", a.sync_window.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|g| g.1) {
            return Err(format!(
                "{flag} applies to incasts: give --incast-degree N (senders per incast) too"
            ));
        }
    }
    let (hosts, topo_rate) = match (&a.topology, a.hosts) {
        (Some(p), _) => {
            let (t, _) = crate::topology::hpcc_file::load(p)?;
            let hosts = t.hosts();
            let rate = t.host_rate_bps();
            (hosts, rate)
        }
        (None, Some(n)) if n as u64 > MAX_NODES => {
            return Err(format!(
                "--hosts {n}: more than the supported maximum of {MAX_NODES} nodes (the limit of \
                 a topology, which the flow file is meant for)"
            ));
        }
        (None, Some(n)) => ((0..n).collect(), None),
        (None, None) => return Err("give --topology FILE or --hosts N".into()),
    };
    let bw = match &a.bw {
        Some(b) => parse_rate_bps(b).map_err(|e| format!("--bw: {e}"))?,
        None => topo_rate.unwrap_or(100_000_000_000),
    };
    crate::link::check_link_rate(bw).map_err(|e| format!("--bw: {e}"))?;
    if !(a.load > 0.0 && a.load <= 1.0) {
        return Err(format!(
            "--load {}: must be in (0, 1], a fraction of the host link rate",
            a.load
        ));
    }
    // The flow file must not replace an input (the topology or the CDF file).
    let same = |p: &std::path::Path| {
        std::fs::canonicalize(p)
            .ok()
            .is_some_and(|c| std::fs::canonicalize(&a.out).is_ok_and(|o| o == c))
    };
    let inputs = a
        .topology
        .iter()
        .cloned()
        .chain(builtin(&a.cdf).is_none().then(|| PathBuf::from(&a.cdf)));
    for i in inputs {
        if same(&i) {
            return Err(format!(
                "--out {}: is the input file {}; choose another output",
                a.out.display(),
                i.display()
            ));
        }
    }
    let cdf = match builtin(&a.cdf) {
        Some(c) => c,
        None => SizeCdf::load(std::path::Path::new(&a.cdf), CdfFormat::Hpcc)?,
    };
    let dur = parse_time_ps(&a.time).map_err(|e| format!("--time: {e}"))?;
    let start = parse_time_ps(&a.start).map_err(|e| format!("--start: {e}"))?;
    // The last arrival (start + time, plus an incast's sync window) must stay within the
    // simulator's time range: a flow file's start times are checked against it when read.
    let win = parse_time_ps(a.sync_window.as_deref().unwrap_or("0us"))
        .map_err(|e| format!("--sync-window: {e}"))?;
    let end = start as u128 + dur as u128 + win as u128;
    if end > MAX_TIME_PS as u128 {
        let with_win = if win > 0 { " + --sync-window" } else { "" };
        return Err(format!(
            "--start + --time{with_win} = {} is beyond the simulator's time range, 1e7s \
             (about 116 days): every flow must start within it",
            format_args!("{:.3}s", end as f64 / crate::units::SEC as f64)
        ));
    }
    let mut flows = traffic::poisson(&hosts, &cdf, a.load, bw, start, dur, a.seed)?;
    if a.incast_degree > 0 {
        let size = parse_bytes(a.incast_size.as_deref().unwrap_or("500KB"))
            .map_err(|e| format!("--incast-size: {e}"))?;
        let inc = traffic::incast(
            &hosts,
            &[],
            a.incast_degree,
            size,
            a.incast_load.unwrap_or(0.02),
            bw,
            win,
            start,
            dur,
            a.seed.wrapping_add(0x1ca57),
        )?;
        flows = traffic::merge(flows, inc);
    }
    if flows.is_empty() {
        return Err(format!(
            "no flows generated: {} hosts at load {} for {} give none; lengthen --time or raise --load",
            hosts.len(),
            a.load,
            crate::units::fmt_time(dur)
        ));
    }
    crate::workload::flow_file::save(&a.out, &flows)?;
    let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
    eprintln!(
        "{}: {} flows, {:.2} GB, offered load {:.3}",
        a.out.display(),
        flows.len(),
        bytes as f64 / 1e9,
        traffic::offered_load(&flows, &hosts, bw, dur)
    );
    Ok(())
}
