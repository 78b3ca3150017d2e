//! HPCC ns-3 simulator drop-in mode: `sfc hpcc config.txt`.
//!
//! Reads an HPCC-sim `config.txt` (`KEY value…` lines; keys and units as in
//! `docs/src/hpcc.md`), its topology and flow files (paths relative to the *current
//! directory*, as HPCC-sim), runs, and writes `FCT_OUTPUT_FILE` in HPCC-sim's format so existing
//! analysis scripts work unchanged.
//!
//! Keys of features not implemented yet are errors naming the key; unknown keys are warnings
//! (HPCC-sim silently skips them), and so are keys the chosen settings never read ("has no
//! effect"). Every problem of a config is reported at once, in file order ([`resolve`]).
//! Later occurrences of a key override earlier ones, as in HPCC-sim. Our extension keys: `BUFFER_MODE`, `DT_ALPHA`, `LOSS_RECOVERY`, `SUMMARY_FILE`,
//! `BUFFER_MON_FILE`, `FRAMING`, `SEED`, `IRN_RTO_LOW_US`, `IRN_RTO_HIGH_US`, `GBN_RTO_US`.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::cc::CcConfig;
use crate::cc::dcqcn::DcqcnParams;
use crate::cc::dctcp::DctcpParams;
use crate::cc::hpcc::{HpccAi, HpccParams, IntQuantum, Reaction};
use crate::cc::none::{NoneParams, NoneWindow};
use crate::cc::timely::TimelyParams;
use crate::config::{BufferConfig, BufferMode, CoreConfig, EcnConfig, LossRecovery};
use crate::engine::packet::Framing;
use crate::metrics::output::{write_atomic, write_fct_file};
use crate::metrics::spill::stats_from_spill;
use crate::metrics::stats::{RunStats, SizeBins};
use crate::registry::NetConfig;
use crate::scheme::marking::EcnThresholds;
use crate::topology::TopologySpec;
use crate::units::{MAX_BYTES, MAX_TIME_PS, SEC, US, parse_rate_bps};
use crate::workload::FlowSpec;
use crate::workload::flow_file::FileFlows;
use crate::workload::stream::{FlowStream, Source};

/// One `KEY values…` line of a config file.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Values after the key.
    pub values: Vec<String>,
    /// 1-based line number.
    pub line: usize,
}

/// A parsed HPCC-sim config: the last occurrence of each key wins.
#[derive(Clone, Debug, Default)]
pub struct HpccConfig {
    /// File name for messages.
    pub name: String,
    /// Key → entry.
    pub entries: HashMap<String, Entry>,
    /// Keys in first-appearance order.
    pub order: Vec<String>,
    /// Problems found while reading the lines (a key without a value, extra values): line and
    /// message. [`resolve`] reports them with every other problem, in file order.
    pub parse_errors: Vec<(usize, String)>,
}

/// Keys that take several values; every other key takes exactly one.
const MULTI_VALUE_KEYS: &[&str] = &["LINK_DOWN", "KMAX_MAP", "KMIN_MAP", "PMAX_MAP"];

/// Output files written by `sfc hpcc`, in the order they are written (`SUMMARY_FILE`, the
/// record of a complete run, last).
const OUTPUT_KEYS: &[&str] = &[
    "FCT_OUTPUT_FILE",
    "PFC_OUTPUT_FILE",
    "BUFFER_MON_FILE",
    "SUMMARY_FILE",
];

/// Keys without which nothing else can be checked: a problem with one of them ends the search
/// for further problems.
const REQUIRED_KEYS: &[&str] = &["TOPOLOGY_FILE", "FLOW_FILE", "CC_MODE"];

/// What we do with a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyUse {
    /// Used by this implementation.
    Used,
    /// Accepted; has no effect in HPCC-sim either (documented there as such).
    NoEffect,
    /// A congestion-control parameter: used by its controller, ignored for `CC_MODE none`.
    CcParam,
}

/// The core's keys; the schemes' own (`SFC_*`, `ONRAMP*`) are theirs
/// ([`crate::scheme::SchemeConfig::HPCC_KEYS`]).
const KEYS: &[(&str, KeyUse)] = &[
    ("PACKET_PAYLOAD_SIZE", KeyUse::Used),
    ("TOPOLOGY_FILE", KeyUse::Used),
    ("FLOW_FILE", KeyUse::Used),
    ("FCT_OUTPUT_FILE", KeyUse::Used),
    ("PFC_OUTPUT_FILE", KeyUse::Used),
    ("SIMULATOR_STOP_TIME", KeyUse::Used),
    ("BUFFER_SIZE", KeyUse::Used),
    ("CC_MODE", KeyUse::Used),
    ("HAS_WIN", KeyUse::Used),
    ("GLOBAL_T", KeyUse::Used),
    ("VAR_WIN", KeyUse::Used),
    ("ACK_HIGH_PRIO", KeyUse::Used),
    ("ERROR_RATE_PER_LINK", KeyUse::Used),
    ("L2_ACK_INTERVAL", KeyUse::Used),
    ("L2_BACK_TO_ZERO", KeyUse::Used),
    ("L2_CHUNK_SIZE", KeyUse::NoEffect),
    ("RATE_BOUND", KeyUse::Used),
    ("ENABLE_TRACE", KeyUse::Used),
    ("TRACE_FILE", KeyUse::NoEffect),
    ("TRACE_OUTPUT_FILE", KeyUse::NoEffect),
    ("QLEN_MON_FILE", KeyUse::Used),
    ("QLEN_MON_START", KeyUse::Used),
    ("QLEN_MON_END", KeyUse::Used),
    ("LINK_DOWN", KeyUse::Used),
    ("USE_DYNAMIC_PFC_THRESHOLD", KeyUse::NoEffect),
    ("PAUSE_TIME", KeyUse::NoEffect),
    ("DATA_RATE", KeyUse::NoEffect),
    ("LINK_DELAY", KeyUse::NoEffect),
    ("ENABLE_QCN", KeyUse::CcParam),
    ("ALPHA_RESUME_INTERVAL", KeyUse::CcParam),
    ("RATE_DECREASE_INTERVAL", KeyUse::CcParam),
    ("CLAMP_TARGET_RATE", KeyUse::CcParam),
    ("RP_TIMER", KeyUse::CcParam),
    ("EWMA_GAIN", KeyUse::CcParam),
    ("FAST_RECOVERY_TIMES", KeyUse::CcParam),
    ("RATE_AI", KeyUse::CcParam),
    ("RATE_HAI", KeyUse::CcParam),
    ("MIN_RATE", KeyUse::CcParam),
    ("DCTCP_RATE_AI", KeyUse::CcParam),
    ("FAST_REACT", KeyUse::CcParam),
    ("U_TARGET", KeyUse::CcParam),
    ("MI_THRESH", KeyUse::CcParam),
    ("INT_MULTI", KeyUse::CcParam),
    ("MULTI_RATE", KeyUse::CcParam),
    ("SAMPLE_FEEDBACK", KeyUse::CcParam),
    ("PINT_LOG_BASE", KeyUse::CcParam),
    ("PINT_PROB", KeyUse::CcParam),
    ("KMAX_MAP", KeyUse::CcParam),
    ("KMIN_MAP", KeyUse::CcParam),
    ("PMAX_MAP", KeyUse::CcParam),
    // Extensions (the schemes' keys: `SchemeConfig::HPCC_KEYS`).
    ("BUFFER_MODE", KeyUse::Used),
    ("DT_ALPHA", KeyUse::Used),
    ("LOSS_RECOVERY", KeyUse::Used),
    ("SUMMARY_FILE", KeyUse::Used),
    ("BUFFER_MON_FILE", KeyUse::Used),
    ("FRAMING", KeyUse::Used),
    ("SEED", KeyUse::Used),
    ("IRN_RTO_LOW_US", KeyUse::Used),
    ("IRN_RTO_HIGH_US", KeyUse::Used),
    ("GBN_RTO_US", KeyUse::Used),
];

impl HpccConfig {
    /// Parse config text. Returns the config and warnings (unknown keys). A key without a
    /// value, or with several where it takes one, is recorded in
    /// [`HpccConfig::parse_errors`] (reported by [`resolve`] with every other problem); the
    /// `Err` case is kept for API stability and not currently produced.
    pub fn parse(text: &str, name: &str) -> Result<(HpccConfig, Vec<String>), String> {
        let mut c = HpccConfig {
            name: name.to_string(),
            ..Default::default()
        };
        let mut warnings = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let mut toks = line.split_whitespace();
            let Some(key) = toks.next() else { continue };
            if key.starts_with('#') {
                continue;
            }
            let values: Vec<String> = toks.map(str::to_string).collect();
            if !KEYS.iter().any(|(k, _)| *k == key)
                && !crate::registry::SchemeConfigs::is_hpcc_key(key)
            {
                warnings.push(format!("{name}:{}: unknown key `{key}` ignored", i + 1));
                continue;
            }
            if values.is_empty() {
                c.parse_errors
                    .push((i + 1, format!("{name}:{}: `{key}` has no value", i + 1)));
                continue;
            }
            if values.len() > 1 && !MULTI_VALUE_KEYS.contains(&key) {
                // HPCC-sim would read the extra tokens as the next keys.
                c.parse_errors.push((
                    i + 1,
                    format!(
                        "{name}:{}: `{key} {}`: takes one value, got {}",
                        i + 1,
                        values.join(" "),
                        values.len()
                    ),
                ));
            }
            if !c.entries.contains_key(key) {
                c.order.push(key.to_string());
            }
            c.entries.insert(
                key.to_string(),
                Entry {
                    values,
                    line: i + 1,
                },
            );
        }
        Ok((c, warnings))
    }

    fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// The key (and its line) an error message of [`HpccConfig::err`] is about, when it names
    /// a line of this config.
    fn key_of_error(&self, e: &str) -> Option<(String, usize)> {
        let rest = e.strip_prefix(&self.name)?.strip_prefix(':')?;
        let (line, rest) = rest.split_once(':')?;
        let line: usize = line.parse().ok()?;
        self.entries
            .iter()
            .find(|(k, en)| en.line == line && rest.starts_with(&format!(" `{k}")))
            .map(|(k, _)| (k.clone(), line))
    }

    /// This config without `key` (as if its line were blank).
    fn without(&self, key: &str) -> HpccConfig {
        let mut c = self.clone();
        c.entries.remove(key);
        c.order.retain(|k| k != key);
        c
    }

    fn err(&self, key: &str, msg: impl std::fmt::Display) -> String {
        match self.get(key) {
            Some(e) => format!(
                "{}:{}: `{key} {}`: {msg}",
                self.name,
                e.line,
                e.values.join(" ")
            ),
            None => format!("{}: `{key}`: {msg}", self.name),
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        self.get(key).map(|e| e.values[0].as_str())
    }

    fn num<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, String> {
        match self.str(key) {
            None => Ok(None),
            Some(v) => v
                .parse::<T>()
                .map(Some)
                .map_err(|_| self.err(key, "not a valid number")),
        }
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.num::<i64>(key)? {
            None => Ok(default),
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            Some(_) => Err(self.err(key, "expected 0 or 1")),
        }
    }

    fn path(&self, key: &str) -> Result<Option<PathBuf>, String> {
        Ok(self.str(key).map(PathBuf::from))
    }
}

impl crate::scheme::HpccFields for HpccConfig {
    fn str(&self, key: &str) -> Option<&str> {
        HpccConfig::str(self, key)
    }
    fn u64(&self, key: &str) -> Result<Option<u64>, String> {
        self.num::<u64>(key)
    }
    fn f64(&self, key: &str) -> Result<Option<f64>, String> {
        self.num::<f64>(key)
    }
    fn flag(&self, key: &str, default: bool) -> Result<bool, String> {
        HpccConfig::flag(self, key, default)
    }
    fn err(&self, key: &str, msg: impl std::fmt::Display) -> String {
        HpccConfig::err(self, key, msg)
    }
}

/// Everything needed to run an HPCC-sim config.
pub struct HpccRun {
    /// Warnings (defaults substituted for HPCC-sim's silent traps, ignored file lines).
    pub warnings: Vec<String>,
    /// Topology.
    pub topo: TopologySpec,
    /// Network model.
    pub net: NetConfig,
    /// Congestion control.
    pub cc: CcConfig,
    /// Flows: a list, or a sorted flow file read as the run goes ([`HpccFlows`]).
    pub flows: HpccFlows,
    /// FCT output path.
    pub fct_file: Option<PathBuf>,
    /// PFC output path.
    pub pfc_file: Option<PathBuf>,
    /// Summary JSON path.
    pub summary_file: Option<PathBuf>,
    /// Buffer monitor path.
    pub buffer_mon_file: Option<PathBuf>,
    /// The input files read (topology, flows): outputs may not overwrite them.
    pub inputs: Vec<PathBuf>,
}

/// The flows of an HPCC run.
pub enum HpccFlows {
    /// In memory, sorted by start time (stably): a flow file that was not sorted (sorted with
    /// a warning), or any flow file when [`resolve_with`] is not asked to stream.
    List(Vec<FlowSpec>),
    /// A flow file checked by [`crate::workload::flow_file::scan`] and sorted by start time,
    /// read from disk in file order as the run reaches each flow: memory follows the flows in
    /// progress, not the flows in the file.
    File {
        /// The file's flows, from the first.
        flows: FileFlows,
        /// How many (the declared count, or fewer with stale digits appended to it).
        count: u64,
        /// Their starts, sizes and gaps, gathered by the scan (for the memory estimate,
        /// without reading the file again).
        shape: Box<crate::workload::shape::FlowShape>,
    },
}

impl HpccFlows {
    /// Number of flows.
    pub fn len(&self) -> usize {
        match self {
            HpccFlows::List(f) => f.len(),
            HpccFlows::File { count, .. } => *count as usize,
        }
    }

    /// No flows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The flows as a lazy stream (a flow file only; `None` for a list).
    pub fn stream(&self) -> Option<FlowStream> {
        match self {
            HpccFlows::List(_) => None,
            HpccFlows::File { flows, .. } => {
                Some(FlowStream::new(vec![Source::file(flows.clone())]))
            }
        }
    }

    /// Every flow in a list (a flow file is read whole): the list [`HpccFlows::List`] would
    /// hold. Errors if the file can no longer be read.
    pub fn into_vec(self) -> Result<Vec<FlowSpec>, String> {
        match self {
            HpccFlows::List(f) => Ok(f),
            HpccFlows::File {
                mut flows, count, ..
            } => {
                let mut v = Vec::with_capacity(count as usize);
                v.extend(flows.by_ref());
                match flows.error() {
                    Some(e) => Err(e.to_string()),
                    None => Ok(v),
                }
            }
        }
    }
}

/// Turn a parsed config into a runnable model, reading the topology and flow files relative to
/// `cwd`, and check it as a run would need it: outputs writable, distinct and not inputs
/// (see [`crate::fsutil::check_output_file`]), timeouts against the base RTT, the memory
/// estimate.
///
/// Every problem is reported, in file order, one per line of the error, each naming its
/// file, line and key: a key found wrong is set aside (as if its line were blank) and the
/// config checked again, until it passes or a problem that is not one key's (a file that
/// cannot be read, a required key missing or wrong) ends the search.
///
/// A flow file sorted by start time is checked line by line in constant memory and given as
/// [`HpccFlows::File`] (read again as the run goes); an unsorted one is read into a list and
/// sorted, with a warning.
pub fn resolve(c: &HpccConfig, cwd: &Path) -> Result<HpccRun, String> {
    resolve_with(c, cwd, true)
}

/// [`resolve`], giving the flows as a list ([`HpccFlows::List`]) also for a sorted flow file
/// when `stream` is false: the same run, the same outputs, with the memory of the list.
pub fn resolve_with(c: &HpccConfig, cwd: &Path, stream: bool) -> Result<HpccRun, String> {
    let mut errs: Vec<(usize, String)> = c.parse_errors.clone();
    let mut cur = c.clone();
    let run = loop {
        match resolve_once(&cur, cwd, stream) {
            Ok(r) => break Some(r),
            Err(e) => match cur.key_of_error(&e) {
                Some((key, line)) if !REQUIRED_KEYS.contains(&key.as_str()) => {
                    errs.push((line, e));
                    cur = cur.without(&key);
                }
                other => {
                    errs.push((other.map_or(usize::MAX, |k| k.1), e));
                    break None;
                }
            },
        }
    };
    if let (Some(r), true) = (&run, errs.is_empty()) {
        check_memory(c, r)?;
    }
    match run {
        Some(r) if errs.is_empty() => Ok(r),
        _ => {
            // File order; a problem of another file (line unknown) last.
            errs.sort_by_key(|e| e.0);
            Err(errs.into_iter().map(|e| e.1).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// [`crate::runguard::check_memory_hinted`] with advice in HPCC-sim config terms, naming
/// `SIMULATOR_STOP_TIME` (the monitors dominate) or `FLOW_FILE` (the flows do).
/// A flow file read as the run goes is estimated from the [`crate::workload::shape::FlowShape`] its
/// scan gathered (the file is not read again), at no memory per flow past its completion
/// (with OnRamp, PB-FS or NDP, [`crate::runguard::bytes_per_flow`]).
fn check_memory(c: &HpccConfig, r: &HpccRun) -> Result<(), String> {
    let est = match &r.flows {
        HpccFlows::List(flows) => crate::runguard::estimate_memory(&r.topo, &r.net, flows),
        HpccFlows::File { shape, .. } => crate::runguard::estimate_from_shape(
            &r.topo,
            &r.net,
            // The results stream too (`run_config`): flows cost nothing past completion,
            // except with a scheme that needs the list (the list path keeps them).
            if r.net.schemes.needs_flow_list() {
                crate::runguard::bytes_per_flow()
            } else {
                0
            },
            shape,
        ),
    };
    let monitors = est.monitors_bytes >= est.flows_bytes;
    crate::runguard::check_estimate(&r.net, &est, &|_| {
        if monitors {
            "The buffer monitor keeps one sample per switch per interval while traffic is active, up to SIMULATOR_STOP_TIME: an earlier SIMULATOR_STOP_TIME reduces it".to_string()
        } else {
            "Fewer flows in FLOW_FILE (or an earlier SIMULATOR_STOP_TIME, which the flows starting after it do not need) reduce it".to_string()
        }
    })
    .map_err(|e| {
        c.err(
            if monitors {
                "SIMULATOR_STOP_TIME"
            } else {
                "FLOW_FILE"
            },
            e,
        )
    })
}

/// One pass of [`resolve`]: the first problem found, or the run.
fn resolve_once(c: &HpccConfig, cwd: &Path, stream: bool) -> Result<HpccRun, String> {
    check_cc_param_types(c)?;
    check_ecn_map_syntax(c)?;
    let cc_mode = c
        .str("CC_MODE")
        .ok_or_else(|| c.err("CC_MODE", "missing (required)"))?;
    let mut warnings: Vec<String> = Vec::new();
    // Topology first (relative to the current directory): the NIC rate scales the presets.
    let topo_path = cwd.join(
        c.path("TOPOLOGY_FILE")?
            .ok_or_else(|| c.err("TOPOLOGY_FILE", "missing (required)"))?,
    );
    let text = crate::fsutil::read_text(&topo_path).map_err(|e| c.err("TOPOLOGY_FILE", e))?;
    let (mut topo, warns) =
        crate::topology::hpcc_file::parse_with_warnings(&text, &topo_path.display().to_string())?;
    warnings.extend(warns);
    let host_rate = topo.host_rate_bps().unwrap_or(100_000_000_000);
    let fastest = topo.max_host_rate_bps().unwrap_or(host_rate);
    let mut setup = resolve_cc_mode(c, cc_mode, (host_rate, fastest), &mut warnings)?;
    resolve_ecn_maps(c, cc_mode, &topo, &mut setup)?;
    check_unimplemented(c, &mut setup)?;
    let (mut net, err_rate) = resolve_net(c, &setup)?;
    net.schemes.resolve_hpcc_topology(&topo);
    resolve_link_down(c, &topo, &mut net)?;
    let cc = setup.cc;
    if err_rate > 0.0 {
        // HPCC-sim: a link with error_rate 0 uses the global model.
        for l in topo.links.iter_mut() {
            if l.error_rate == 0.0 {
                l.error_rate = err_rate;
            }
        }
    }
    let flow_path = cwd.join(
        c.path("FLOW_FILE")?
            .ok_or_else(|| c.err("FLOW_FILE", "missing (required)"))?,
    );
    // Endpoints are checked line by line, before the flows are sorted by start time, so an
    // error names the flow's line in the file.
    let check = |f: &FlowSpec| crate::workload::flow_file::check_endpoints(f, &topo);
    // A sorted file (as HPCC-sim requires) is checked in constant memory and read again as
    // the run goes; an unsorted one is read into a list and sorted.
    let mut file = None;
    if stream {
        use crate::workload::flow_file::{ScanError, scan_file};
        let scan = scan_file(&flow_path, check).map_err(|e| match e {
            ScanError::Read(e) => c.err("FLOW_FILE", e),
            ScanError::Invalid(e) => e,
        })?;
        if scan.sorted() {
            file = Some(scan);
        }
    }
    let (flows, earliest) = match file {
        Some(scan) => {
            warnings.extend(scan.warnings.iter().cloned());
            let flows = HpccFlows::File {
                flows: FileFlows::new(&flow_path, &scan),
                count: scan.flows,
                shape: Box::new(scan.shape),
            };
            (flows, scan.earliest_start_ps)
        }
        None => {
            let text = crate::fsutil::read_text(&flow_path).map_err(|e| c.err("FLOW_FILE", e))?;
            let (flows, warns) = crate::workload::flow_file::parse_with(
                &text,
                &flow_path.display().to_string(),
                check,
            )?;
            warnings.extend(warns);
            let earliest = flows.iter().map(|f| f.start_ps).min();
            (HpccFlows::List(flows), earliest)
        }
    };
    if flows.is_empty() {
        return Err(c.err(
            "FLOW_FILE",
            "the flow file lists no flows: the run would simulate nothing",
        ));
    }
    if earliest.is_none_or(|e| e >= net.stop_ps) {
        return Err(c.err(
            "SIMULATOR_STOP_TIME",
            "every flow starts at or after the stop time: the run would simulate nothing",
        ));
    }
    check_rtt(c, &topo, &net, &cc, &mut warnings)?;
    warnings.extend(no_effect_warnings(c, &net));
    let inputs = vec![topo_path.clone(), flow_path.clone(), cwd.join(&c.name)];
    check_outputs(c, cwd, &inputs)?;
    let out = |k: &str| -> Result<Option<PathBuf>, String> { Ok(c.path(k)?.map(|p| cwd.join(p))) };
    Ok(HpccRun {
        warnings,
        topo,
        net,
        cc,
        flows,
        fct_file: out("FCT_OUTPUT_FILE")?,
        pfc_file: out("PFC_OUTPUT_FILE")?,
        summary_file: out("SUMMARY_FILE")?,
        buffer_mon_file: out("BUFFER_MON_FILE")?,
        inputs: vec![topo_path, flow_path],
    })
}

/// Every output path is writable and not an input ([`crate::fsutil::check_output_file`]),
/// and no two output keys name the same file (after `./`, absolute paths and symbolic links):
/// one output would overwrite the other.
fn check_outputs(c: &HpccConfig, cwd: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    // In file order, so the later key is the one reported.
    let mut keys: Vec<&str> = OUTPUT_KEYS
        .iter()
        .copied()
        .filter(|k| c.get(k).is_some())
        .collect();
    keys.sort_by_key(|k| c.get(k).map_or(0, |e| e.line));
    for key in keys {
        let Some(p) = c.path(key)?.map(|p| cwd.join(p)) else {
            continue;
        };
        crate::fsutil::check_output_file(&p, inputs).map_err(|e| c.err(key, e))?;
        if let Some(id) = crate::fsutil::output_identity(&p) {
            if let Some((other, _)) = seen.iter().find(|(_, o)| *o == id) {
                let line = c.get(other).map_or(0, |e| e.line);
                return Err(c.err(
                    key,
                    format!(
                        "names the same file as {other} ({}:{line}): one output would overwrite the other; give each its own path",
                        c.name
                    ),
                ));
            }
            seen.push((key, id));
        }
    }
    Ok(())
}

/// Timeouts against the topology's base RTT, as for TOML scenarios
/// ([`NetConfig::rtt_issues`]): a retransmission timeout shorter than the base RTT is an
/// error (every packet would time out), IRN's low timeout a warning. With HPCC, a longest path
/// of more than five switches is a warning ([`crate::cc::hpcc::int_hop_limit_warning`]).
fn check_rtt(
    c: &HpccConfig,
    topo: &TopologySpec,
    net: &NetConfig,
    cc: &CcConfig,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    net.check_lossless_carve_out(topo)
        .map_err(|i| c.err(hpcc_key(i.field), i.message))?;
    crate::runguard::check_network_memory(topo, net).map_err(|e| c.err("TOPOLOGY_FILE", e))?;
    let routes = crate::topology::routing::RouteTable::try_build(topo)
        .map_err(|e| c.err("TOPOLOGY_FILE", e))?;
    let bounds = routes.max_base_rtt(topo, net.mtu_bytes as u64);
    if let CcConfig::Hpcc(_) = cc
        && let Some(w) = crate::cc::hpcc::int_hop_limit_warning(bounds.max_switch_hops)
    {
        warnings.push(c.err("TOPOLOGY_FILE", w));
    }
    let rtt = bounds.max_base_rtt_ps;
    let (errs, warns) = net.rtt_issues(rtt);
    for w in warns {
        warnings.push(c.err(hpcc_key(w.field), w.message));
    }
    match errs.first() {
        Some(i) => Err(c.err(hpcc_key(i.field), &i.message)),
        None => Ok(()),
    }
}

/// Keys present that the chosen settings never read (warnings, as a TOML scenario's scheme
/// keys while the scheme is off: "has no effect").
fn no_effect_warnings(c: &HpccConfig, net: &NetConfig) -> Vec<String> {
    let mut w = Vec::new();
    let mut unused = |keys: &[&str], why: &str| {
        for k in keys {
            if c.get(k).is_some() {
                w.push(c.err(k, format!("has no effect: {why}")));
            }
        }
    };
    if net.buffer.mode != BufferMode::Lossy {
        unused(
            &["DT_ALPHA"],
            "the dynamic threshold applies only with BUFFER_MODE lossy",
        );
    }
    match net.loss_recovery {
        LossRecovery::Gbn { .. } => unused(
            &["IRN_RTO_LOW_US", "IRN_RTO_HIGH_US"],
            "IRN's timeouts apply only with LOSS_RECOVERY irn",
        ),
        LossRecovery::Irn { .. } => unused(
            &["GBN_RTO_US"],
            "go-back-N's timeout applies only with LOSS_RECOVERY gbn (the default)",
        ),
    }
    let core = crate::scheme::KeyView {
        lossless: net.buffer.mode == BufferMode::Lossless,
    };
    for (keys, why) in net.schemes.hpcc_inert(&core) {
        unused(keys, why);
    }
    let maps = ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"];
    let given = maps.iter().filter(|k| c.get(k).is_some()).count();
    if given > 0 && given < 3 && c.str("CC_MODE") != Some("none") {
        unused(
            &maps,
            "the ECN maps apply only when KMIN_MAP, KMAX_MAP and PMAX_MAP are all given",
        );
    }
    w
}

/// One ECN map (`KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`): `n rate₁ value₁ … rateₙ valueₙ`, exactly
/// `2n` values after the count, integer rates (bps) and non-negative values (`PMAX_MAP` at
/// most 1).
fn parse_map(c: &HpccConfig, key: &str) -> Result<Option<Vec<(u64, f64)>>, String> {
    let Some(e) = c.get(key) else {
        return Ok(None);
    };
    let n: usize = e.values[0]
        .parse()
        .map_err(|_| c.err(key, "first value must be the entry count"))?;
    let got = e.values.len() - 1;
    if got != 2 * n {
        return Err(c.err(
            key,
            format!(
                "declares {n} rate/value pairs ({} values) but has {got} values after the count",
                2 * n
            ),
        ));
    }
    (0..n)
        .map(|i| {
            let r: u64 = e.values[1 + 2 * i]
                .parse()
                .ok()
                .filter(|&r| r > 0)
                .ok_or_else(|| c.err(key, "rate must be a positive integer bps"))?;
            let v: f64 = e.values[2 + 2 * i]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| c.err(key, "value must be a non-negative number"))?;
            if key == "PMAX_MAP" && v > 1.0 {
                return Err(c.err(key, "a marking probability must be at most 1"));
            }
            Ok((r, v))
        })
        .collect::<Result<Vec<_>, String>>()
        .and_then(|m| {
            // HPCC-sim keeps the last value of a repeated rate; two values for one rate are
            // almost certainly a typo, so refuse rather than pick one silently.
            match (1..m.len()).find(|&i| m[..i].iter().any(|e| e.0 == m[i].0)) {
                Some(i) => Err(c.err(key, format!("rate {} is given twice", m[i].0))),
                None => Ok(Some(m)),
            }
        })
}

/// Every ECN map given is well-formed ([`parse_map`]), whether or not it is used.
fn check_ecn_map_syntax(c: &HpccConfig) -> Result<(), String> {
    for key in ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"] {
        parse_map(c, key)?;
    }
    Ok(())
}

/// Validate every CC parameter's type even when unused, so typos surface early.
fn check_cc_param_types(c: &HpccConfig) -> Result<(), String> {
    // Validate every CC parameter's type even when unused, so typos surface early.
    for key in [
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "RP_TIMER",
        "EWMA_GAIN",
        "U_TARGET",
        "PINT_LOG_BASE",
        "PINT_PROB",
    ] {
        c.num::<f64>(key)?;
    }
    for key in ["RATE_AI", "RATE_HAI", "MIN_RATE", "DCTCP_RATE_AI"] {
        if let Some(v) = c.str(key) {
            parse_rate_bps(v).map_err(|e| c.err(key, e))?;
        }
    }
    for key in [
        "CLAMP_TARGET_RATE",
        "FAST_RECOVERY_TIMES",
        "FAST_REACT",
        "MI_THRESH",
        "INT_MULTI",
        "MULTI_RATE",
        "SAMPLE_FEEDBACK",
        "ENABLE_QCN",
    ] {
        c.num::<i64>(key)?;
    }
    Ok(())
}

/// `third.cc`'s `min_rate` when the config has no `MIN_RATE` (100 Mb/s).
const THIRD_CC_MIN_RATE_BPS: u64 = 100_000_000;
/// `third.cc`'s `dctcp_rate_ai` when the config has no `DCTCP_RATE_AI` (1000 Mb/s).
const THIRD_CC_DCTCP_RATE_AI_BPS: u64 = 1_000_000_000;
/// `third.cc`'s `mi_thresh` when the config has no `MI_THRESH` (`run.py` writes 0).
const THIRD_CC_MI_THRESH: u32 = 5;

/// The controller of `CC_MODE` with its parameters (HPCC-sim presets scaled to `host_rate`).
fn resolve_cc_mode(
    c: &HpccConfig,
    cc_mode: &str,
    (host_rate, fastest): (u64, u64),
    warnings: &mut Vec<String>,
) -> Result<crate::scenario::cc::CcSetup, String> {
    // Defaults of missing keys are `third.cc`'s: `has_win = 1`, `var_win = false`,
    // `min_rate = "100Mb/s"`, `dctcp_rate_ai = "1000Mb/s"`, `alpha_resume_interval = 55`,
    // `fast_recovery_times = 5`, and for HPCC `mi_thresh = 5`, `multi_rate = true`,
    // `int_multi = 1` (`run.py`'s configs always write them, with other values for HPCC:
    // `MI_THRESH 0`, `MULTI_RATE 0`, `INT_MULTI bw/25`).
    let k = CcKeys {
        c,
        host_rate,
        fastest,
        has_win: c.flag("HAS_WIN", true)?,
        var_win: c.flag("VAR_WIN", false)?,
    };
    let setup = match cc_mode {
        "none" => {
            let mut s = crate::scenario::cc::preset("none", host_rate)?;
            s.cc = CcConfig::None(NoneParams {
                window: if k.has_win {
                    NoneWindow::Bdp(1.0)
                } else {
                    NoneWindow::Unlimited
                },
            });
            s
        }
        "1" => dcqcn_mode(&k, warnings)?,
        "3" => hpcc_mode(&k)?,
        "7" => timely_mode(&k)?,
        "8" => dctcp_mode(&k, warnings)?,
        "10" => {
            return Err(c.err(
                "CC_MODE",
                "HPCC-PINT is not implemented; use CC_MODE 3 (HPCC)",
            ));
        }
        _ => {
            return Err(c.err(
                "CC_MODE",
                "unknown mode (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, none)",
            ));
        }
    };
    Ok(setup)
}

/// The CC keys of an HPCC-sim config as the modes read them: rates checked against the host
/// links, microsecond timers, and `HAS_WIN` / `VAR_WIN`.
struct CcKeys<'a> {
    c: &'a HpccConfig,
    /// The slowest host link, bits per second.
    host_rate: u64,
    /// The fastest host link, bits per second.
    fastest: u64,
    /// `HAS_WIN` (default 1).
    has_win: bool,
    /// `VAR_WIN` (default 0).
    var_win: bool,
}

impl CcKeys<'_> {
    /// A rate key: `MIN_RATE` must not exceed the host link rate (as `cc.min_rate` in a
    /// scenario: the controller could never slow down); an increase step (`RATE_AI`, …) must
    /// not exceed the fastest host link (a unit slip, `1000Tb/s`).
    fn rate(&self, key: &str) -> Result<Option<u64>, String> {
        let (c, host_rate, fastest) = (self.c, self.host_rate, self.fastest);
        let v = c
            .str(key)
            .map(|v| parse_rate_bps(v).map_err(|e| c.err(key, e)))
            .transpose()?;
        match v {
            Some(m) if key == "MIN_RATE" && m > host_rate => Err(c.err(
                key,
                format!(
                    "{} is above the host link rate {}: the controller could never slow down",
                    crate::units::fmt_rate(m),
                    crate::units::fmt_rate(host_rate)
                ),
            )),
            Some(a) if key != "MIN_RATE" && a > fastest => Err(c.err(
                key,
                format!(
                    "{} is above the fastest host link rate {}: a single increase step would pass line rate",
                    crate::units::fmt_rate(a),
                    crate::units::fmt_rate(fastest)
                ),
            )),
            v => Ok(v),
        }
    }

    /// A positive number of microseconds, in picoseconds.
    fn us(&self, key: &str) -> Result<Option<u64>, String> {
        match self.c.num::<f64>(key)? {
            None => Ok(None),
            Some(v) if v > 0.0 && v.is_finite() => Ok(Some((v * US as f64).round() as u64)),
            Some(_) => Err(self.c.err(key, "must be a positive number of microseconds")),
        }
    }

    /// A DCQCN timer: as [`Self::us`], but refused below the shortest accepted timer.
    fn timer(&self, key: &str) -> Result<Option<u64>, String> {
        match self.us(key)? {
            Some(v) if v < crate::cc::dcqcn::MIN_TIMER_PS => Err(self.c.err(
                key,
                format!(
                    "below the shortest accepted DCQCN timer, {} µs (HPCC-sim's configs use \
                     1–1500 µs; a timer firing every few picoseconds for every flow makes the run \
                     take hours)",
                    crate::cc::dcqcn::MIN_TIMER_PS as f64 / US as f64
                ),
            )),
            v => Ok(v),
        }
    }
}

/// [`resolve_cc_mode`]: DCQCN (`CC_MODE 1`).
fn dcqcn_mode(
    k: &CcKeys<'_>,
    warnings: &mut Vec<String>,
) -> Result<crate::scenario::cc::CcSetup, String> {
    let c = k.c;
    let mut p = DcqcnParams::hpcc_preset(k.host_rate);
    p.alpha_timer_ps = k.timer("ALPHA_RESUME_INTERVAL")?.unwrap_or(55 * US);
    if let Some(v) = k.timer("RATE_DECREASE_INTERVAL")? {
        p.rate_decrease_interval_ps = v;
    }
    match k.timer("RP_TIMER")? {
        Some(v) => p.rate_increase_timer_ps = v,
        None => {
            // HPCC-sim leaves rp_timer uninitialised (0 µs: an event storm).
            p.rate_increase_timer_ps = 1500 * US;
            warnings.push(c.err("RP_TIMER", "missing: HPCC-sim would use 0 µs (an event storm); using the attribute default 1500 µs"));
        }
    }
    match c.num::<f64>("EWMA_GAIN")? {
        Some(g) if g > 0.0 && g <= 1.0 => p.g = g,
        Some(_) => return Err(c.err("EWMA_GAIN", "must be in (0, 1]")),
        None => {
            p.g = 1.0 / 16.0;
            warnings.push(c.err(
                "EWMA_GAIN",
                "missing: HPCC-sim would use 0 (1/16 in integer division: α frozen); using 1/16",
            ));
        }
    }
    p.fast_recovery_times = c.num::<u32>("FAST_RECOVERY_TIMES")?.unwrap_or(5);
    if let Some(v) = k.rate("RATE_AI")? {
        p.rate_ai_bps = v;
    }
    if let Some(v) = k.rate("RATE_HAI")? {
        p.rate_hai_bps = v;
    }
    p.min_rate_bps = k.rate("MIN_RATE")?.unwrap_or(THIRD_CC_MIN_RATE_BPS);
    p.clamp_target_rate = c.flag("CLAMP_TARGET_RATE", false)?;
    if k.has_win {
        p = p.with_window(0, k.var_win);
    }
    let mut s = crate::scenario::cc::preset("dcqcn", k.host_rate)?;
    s.cc = CcConfig::Dcqcn(p);
    Ok(s)
}

/// [`resolve_cc_mode`]: HPCC (`CC_MODE 3`).
fn hpcc_mode(k: &CcKeys<'_>) -> Result<crate::scenario::cc::CcSetup, String> {
    let c = k.c;
    // HPCC-sim's `UpdateRateHp` divides the queue term by `m_win`, which is 0 without
    // a window.
    if !k.has_win {
        return Err(c.err(
            "HAS_WIN",
            "HPCC (CC_MODE 3) needs the window: HPCC-sim would divide by its window \
             m_win = 0 in UpdateRateHp (the queue term qLen/maxBdp); use HAS_WIN 1",
        ));
    }
    let mut p = HpccParams::hpcc_sim_preset(k.host_rate);
    // VAR_WIN 0: HPCC-sim's window is the fixed maxBdp, the rate still follows HPCC.
    p.var_win = k.var_win;
    if let Some(v) = c.num::<f64>("U_TARGET")? {
        if !(v > 0.0 && v <= 1.0) {
            return Err(c.err("U_TARGET", "must be in (0, 1]"));
        }
        p.eta = v;
    }
    p.max_stage = c.num::<u32>("MI_THRESH")?.unwrap_or(THIRD_CC_MI_THRESH);
    if let Some(v) = k.rate("RATE_AI")? {
        p.ai = HpccAi::RateBps(v);
    }
    p.min_rate_bps = k.rate("MIN_RATE")?.unwrap_or(THIRD_CC_MIN_RATE_BPS);
    p.reaction = if c.flag("FAST_REACT", true)? {
        Reaction::PerAck
    } else {
        Reaction::PerRtt
    };
    p.multi_rate = c.flag("MULTI_RATE", true)?;
    p.int_quantum = match c.num::<u32>("INT_MULTI")? {
        Some(0) => {
            return Err(c.err(
                "INT_MULTI",
                "must be at least 1: HPCC-sim would divide by zero (the INT fields are \
                 stored in units of 128·INT_MULTI and 80·INT_MULTI bytes)",
            ));
        }
        m => IntQuantum::hpcc_sim(m.unwrap_or(1)),
    };
    if c.flag("SAMPLE_FEEDBACK", false)? {
        return Err(c.err("SAMPLE_FEEDBACK", "not implemented; use 0"));
    }
    let mut s = crate::scenario::cc::preset("hpcc_sim", k.host_rate)?;
    s.cc = CcConfig::Hpcc(p);
    Ok(s)
}

/// [`resolve_cc_mode`]: TIMELY (`CC_MODE 7`).
fn timely_mode(k: &CcKeys<'_>) -> Result<crate::scenario::cc::CcSetup, String> {
    let mut p = TimelyParams::hpcc_preset(k.host_rate);
    if let Some(v) = k.rate("RATE_AI")? {
        p.rate_ai_bps = v;
    }
    if let Some(v) = k.rate("RATE_HAI")? {
        p.rate_hai_bps = v;
    }
    p.min_rate_bps = k.rate("MIN_RATE")?.unwrap_or(THIRD_CC_MIN_RATE_BPS);
    if k.has_win {
        p = p.with_window(0, k.var_win);
    }
    let mut s = crate::scenario::cc::preset("timely", k.host_rate)?;
    s.cc = CcConfig::Timely(p);
    Ok(s)
}

/// [`resolve_cc_mode`]: DCTCP (`CC_MODE 8`).
fn dctcp_mode(
    k: &CcKeys<'_>,
    warnings: &mut Vec<String>,
) -> Result<crate::scenario::cc::CcSetup, String> {
    let c = k.c;
    let mut p = DctcpParams::hpcc_preset(k.host_rate, 0);
    match c.num::<f64>("EWMA_GAIN")? {
        Some(g) if g > 0.0 && g <= 1.0 => p.g = g,
        Some(_) => return Err(c.err("EWMA_GAIN", "must be in (0, 1]")),
        None => warnings.push(c.err(
            "EWMA_GAIN",
            "missing: HPCC-sim would use 0 (α frozen); using 1/16",
        )),
    }
    p.rate_ai_bps = k
        .rate("DCTCP_RATE_AI")?
        .unwrap_or(THIRD_CC_DCTCP_RATE_AI_BPS);
    p.min_rate_bps = k.rate("MIN_RATE")?.unwrap_or(THIRD_CC_MIN_RATE_BPS);
    p.has_win = k.has_win;
    p.var_win = k.var_win;
    let mut s = crate::scenario::cc::preset("dctcp", k.host_rate)?;
    s.cc = CcConfig::Dctcp(p);
    Ok(s)
}

/// ECN maps (`KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`, K in units of 1000 B) and `ENABLE_QCN`.
fn resolve_ecn_maps(
    c: &HpccConfig,
    cc_mode: &str,
    topo: &TopologySpec,
    setup: &mut crate::scenario::cc::CcSetup,
) -> Result<(), String> {
    // ECN maps (K in units of 1000 B). As in HPCC-sim, every link rate needs an entry.
    if cc_mode != "none" {
        if let (Some(kmin), Some(kmax), Some(pmax)) = (
            parse_map(c, "KMIN_MAP")?,
            parse_map(c, "KMAX_MAP")?,
            parse_map(c, "PMAX_MAP")?,
        ) {
            let mut th = Vec::new();
            for &(r, kmn) in &kmin {
                let kmx = kmax
                    .iter()
                    .find(|x| x.0 == r)
                    .ok_or_else(|| c.err("KMAX_MAP", format!("no entry for rate {r}")))?
                    .1;
                let pm = pmax
                    .iter()
                    .find(|x| x.0 == r)
                    .ok_or_else(|| c.err("PMAX_MAP", format!("no entry for rate {r}")))?
                    .1;
                th.push(EcnThresholds {
                    rate_bps: r,
                    kmin_bytes: (kmn * 1000.0) as u64,
                    kmax_bytes: (kmx * 1000.0) as u64,
                    pmax: pm,
                });
            }
            for l in &topo.links {
                if !th.iter().any(|t| t.rate_bps == l.rate_bps) {
                    return Err(c.err(
                        "KMIN_MAP",
                        format!("no ECN thresholds for link rate {} bps (HPCC-sim requires one per rate)", l.rate_bps),
                    ));
                }
            }
            setup.ecn = EcnConfig {
                enabled: true,
                thresholds: th,
            };
        }
        if !c.flag("ENABLE_QCN", true)? {
            setup.ecn.enabled = false;
        }
    }
    Ok(())
}

/// `ACK_HIGH_PRIO`, and the keys of HPCC-sim features that are not implemented (an error
/// naming the key unless set to their neutral value).
fn check_unimplemented(
    c: &HpccConfig,
    setup: &mut crate::scenario::cc::CcSetup,
) -> Result<(), String> {
    setup.ack_high_prio = c.flag("ACK_HIGH_PRIO", false)?;
    if !c.flag("GLOBAL_T", true)? {
        return Err(c.err(
            "GLOBAL_T",
            "per-pair base RTT (GLOBAL_T 0) is not implemented; use GLOBAL_T 1",
        ));
    }
    if let Some(v) = c.num::<i64>("L2_ACK_INTERVAL")?
        && v != 1
    {
        return Err(c.err(
            "L2_ACK_INTERVAL",
            "only per-packet ACKs (1) are implemented",
        ));
    }
    if c.flag("L2_BACK_TO_ZERO", false)? {
        return Err(c.err("L2_BACK_TO_ZERO", "go-back-0 is not implemented; use 0"));
    }
    if !c.flag("RATE_BOUND", true)? {
        return Err(c.err(
            "RATE_BOUND",
            "unpaced NICs (RATE_BOUND 0) are not implemented; use 1",
        ));
    }
    if c.flag("ENABLE_TRACE", false)? {
        return Err(c.err(
            "ENABLE_TRACE",
            "the binary packet trace is not implemented; set ENABLE_TRACE 0",
        ));
    }
    if let Some(e) = c.get("LINK_DOWN")
        && e.values.len() != 3
    {
        // HPCC-sim reads three numbers whatever the line holds: with fewer it takes the next
        // key as one, with more it reads the extra ones as the next key.
        return Err(c.err(
            "LINK_DOWN",
            format!(
                "takes 3 values, `LINK_DOWN time_us src dst` (the link src–dst goes down at \
                 2 s + time_us µs; `LINK_DOWN 0 0 0` for none), got {}",
                e.values.len()
            ),
        ));
    }
    Ok(())
}

/// `LINK_DOWN time_us src dst` into `net.failures`, as HPCC-sim's `third.cc` does it: with
/// `time_us` > 0 the link src–dst goes down at 2 s + `time_us` µs (an absolute simulated
/// time: HPCC-sim's flows start at 2 s), and `TakeDownLink` recomputes every forwarding
/// table at that instant (reconvergence delay 0); `time_us` 0 means no failure, whatever
/// `src` and `dst` say. Unlike HPCC-sim, whose channel still delivers the packets on the wire,
/// those are lost with the link ([`crate::config::Failures`]).
fn resolve_link_down(
    c: &HpccConfig,
    topo: &crate::topology::TopologySpec,
    net: &mut NetConfig,
) -> Result<(), String> {
    let Some(e) = c.get("LINK_DOWN") else {
        return Ok(());
    };
    let num = |i: usize, what: &str| -> Result<u64, String> {
        e.values[i].parse::<u64>().map_err(|_| {
            c.err(
                "LINK_DOWN",
                format!(
                    "{what} `{}` is not a non-negative integer (`LINK_DOWN time_us src dst`)",
                    e.values[i]
                ),
            )
        })
    };
    let (time_us, a, b) = (num(0, "time_us")?, num(1, "src")?, num(2, "dst")?);
    if time_us == 0 {
        return Ok(());
    }
    let at_ps = (time_us as u128 * US as u128 + 2 * SEC as u128).min(u64::MAX as u128) as u64;
    if at_ps >= net.stop_ps {
        return Err(c.err(
            "LINK_DOWN",
            format!(
                "the link goes down at 2 s + {time_us} µs, not before SIMULATOR_STOP_TIME: \
                 the failure would never happen"
            ),
        ));
    }
    let exists = topo
        .links
        .iter()
        .any(|l| (l.a as u64, l.b as u64) == (a, b) || (l.a as u64, l.b as u64) == (b, a));
    if !exists {
        return Err(c.err(
            "LINK_DOWN",
            format!("there is no link between nodes {a} and {b} in the topology"),
        ));
    }
    net.failures = crate::config::Failures {
        events: vec![crate::config::LinkEvent {
            at_ps,
            a: a as u32,
            b: b as u32,
            up: false,
        }],
        reconverge_delay_ps: 0,
        local_repair: false,
    };
    Ok(())
}

/// The network model: stop time, packet size, buffer, loss recovery, framing, PFC and the
/// schemes' keys; then every value is range-checked by [`NetConfig::issues`], each problem named by
/// its config key. Returns the model and `ERROR_RATE_PER_LINK`.
fn resolve_net(
    c: &HpccConfig,
    setup: &crate::scenario::cc::CcSetup,
) -> Result<(NetConfig, f64), String> {
    let err_rate = c.num::<f64>("ERROR_RATE_PER_LINK")?.unwrap_or(0.0);
    if !(0.0..1.0).contains(&err_rate) {
        return Err(c.err(
            "ERROR_RATE_PER_LINK",
            "must be in [0, 1) (at 1 every link loses every packet: no flow could finish)",
        ));
    }
    let stop_s = c.num::<f64>("SIMULATOR_STOP_TIME")?.unwrap_or(3.01);
    if !(stop_s > 0.0 && stop_s.is_finite()) {
        return Err(c.err(
            "SIMULATOR_STOP_TIME",
            "must be a positive number of seconds",
        ));
    }
    // The scenario front end's limit (`units::MAX_TIME_PS`): beyond it a stop time would
    // saturate to "no stop".
    if stop_s * SEC as f64 > MAX_TIME_PS as f64 {
        return Err(c.err(
            "SIMULATOR_STOP_TIME",
            "out of range (the largest accepted is 1e7 s, about 116 days)",
        ));
    }
    let stop_ps = (stop_s * SEC as f64).round() as u64;
    // Read even without QLEN_MON_FILE, so a malformed value is reported either way.
    let start = c.num::<u64>("QLEN_MON_START")?.unwrap_or(0);
    let end = c.num::<u64>("QLEN_MON_END")?.unwrap_or(0);
    if c.get("QLEN_MON_FILE").is_some() && start < end && start.saturating_mul(1000) < stop_ps {
        return Err(c.err(
            "QLEN_MON_FILE",
            "the queue-length histogram is not implemented yet; disable it (QLEN_MON_START = QLEN_MON_END) and use BUFFER_MON_FILE",
        ));
    }
    let mtu = c.num::<u32>("PACKET_PAYLOAD_SIZE")?.unwrap_or(1000);
    let buf_mib = c.num::<f64>("BUFFER_SIZE")?.unwrap_or(16.0);
    if !(buf_mib > 0.0 && buf_mib.is_finite()) {
        return Err(c.err("BUFFER_SIZE", "must be a positive number of MiB"));
    }
    // The scenario front end's cap on sizes (`units::MAX_BYTES`, 1 PB).
    if buf_mib * 1048576.0 > MAX_BYTES as f64 {
        return Err(c.err(
            "BUFFER_SIZE",
            format!(
                "out of range (the largest accepted is 1 PB, {} MiB)",
                MAX_BYTES / 1048576
            ),
        ));
    }
    let mode = match c.str("BUFFER_MODE").unwrap_or("lossless") {
        "lossless" => BufferMode::Lossless,
        "lossy" => BufferMode::Lossy,
        "unlimited" => BufferMode::Unlimited,
        _ => return Err(c.err("BUFFER_MODE", "expected lossy, lossless or unlimited")),
    };
    let dt_alpha = c.num::<f64>("DT_ALPHA")?.unwrap_or(1.0);
    let loss_recovery = match c.str("LOSS_RECOVERY").unwrap_or("gbn") {
        "gbn" => {
            let mut lr = LossRecovery::gbn();
            if let (Some(v), LossRecovery::Gbn { rto_ps, .. }) =
                (c.num::<f64>("GBN_RTO_US")?, &mut lr)
            {
                if !(v >= 0.001 && v.is_finite()) {
                    return Err(c.err("GBN_RTO_US", "must be at least 0.001 µs"));
                }
                // Saturating conversion: a huge value means "no timeout" in practice.
                *rto_ps = (v * US as f64).min(u64::MAX as f64 / 4.0) as u64;
            }
            lr
        }
        "irn" => {
            let mut lr = LossRecovery::irn();
            if let LossRecovery::Irn {
                rto_low_ps,
                rto_high_ps,
                ..
            } = &mut lr
            {
                for (key, slot) in [
                    ("IRN_RTO_LOW_US", rto_low_ps),
                    ("IRN_RTO_HIGH_US", rto_high_ps),
                ] {
                    if let Some(v) = c.num::<f64>(key)? {
                        if !(0.001..=1e9).contains(&v) {
                            return Err(c.err(key, "must be between 0.001 and 1e9 µs"));
                        }
                        *slot = (v * US as f64) as u64;
                    }
                }
            }
            lr
        }
        _ => return Err(c.err("LOSS_RECOVERY", "expected gbn or irn")),
    };
    let framing = match c.str("FRAMING").unwrap_or("hpcc") {
        "hpcc" => Framing::Hpcc,
        "ethernet" => Framing::Ethernet,
        _ => return Err(c.err("FRAMING", "expected hpcc or ethernet")),
    };
    let net = NetConfig::from(CoreConfig {
        seed: c.num::<u64>("SEED")?.unwrap_or(1),
        mtu_bytes: mtu,
        framing,
        buffer: BufferConfig {
            mode,
            size_bytes: (buf_mib * 1048576.0) as u64,
            dt_alpha,
        },
        loss_recovery,
        ack_high_prio: setup.ack_high_prio,
        stop_ps,
        ecn: setup.ecn.clone(),
        cnp: setup.cnp,
        int_enabled: setup.int_enabled,
        int_bytes: setup.int_bytes,
        ..Default::default()
    });
    let mut net = net;
    net.schemes.resolve_hpcc(c)?;
    if let Some(i) = net.issues().into_iter().next() {
        return Err(c.err(hpcc_key(i.field), i.message));
    }
    Ok((net, err_rate))
}

/// The config key of a [`NetField`] (extension keys where HPCC-sim has none).
fn hpcc_key(f: crate::config::NetField) -> &'static str {
    use crate::config::NetField as F;
    match f {
        F::Mtu => "PACKET_PAYLOAD_SIZE",
        F::BufferSize | F::SwitchBufferSize(_) => "BUFFER_SIZE",
        F::DtAlpha => "DT_ALPHA",
        F::GbnRto => "GBN_RTO_US",
        F::IrnRtoLow => "IRN_RTO_LOW_US",
        F::IrnRtoHigh => "IRN_RTO_HIGH_US",
        F::Stop => "SIMULATOR_STOP_TIME",
        F::Ecn => "KMAX_MAP",
        F::EcnPmax => "PMAX_MAP",
        F::IntBytes
        | F::QueuesPerPort
        | F::DrrQuantum
        | F::GbnNackInterval
        | F::BufferSample
        | F::CnpInterval
        | F::QueueMonitorInterval
        | F::SwitchAckHighPrio => "CC_MODE",
        // A scheme's key ([`crate::scheme::SchemeConfig::hpcc_key`]); a scheme without HPCC-sim
        // keys is never enabled from an HPCC config: its own name.
        F::Scheme(key) => crate::registry::SchemeConfigs::hpcc_key(key),
    }
}

/// Keys present in the config that have no effect for the chosen CC mode (for the banner).
fn ignored_cc_keys(c: &HpccConfig) -> Vec<String> {
    c.order
        .iter()
        .filter(|k| KEYS.iter().any(|(n, u)| n == k && *u == KeyUse::CcParam))
        .cloned()
        .collect()
}

/// A line on stdout; a closed stdout (`sfc hpcc … | head -1`) is ignored, so the run goes on
/// and writes its output files (the caller ignores SIGPIPE, see `main`).
fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// A line on stderr, ignoring a closed stderr (never a panic).
fn tell(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// What an interrupted `sfc hpcc` says about its outputs.
const INTERRUPT_NOTE: &str = "this run's output files (the config's FCT_OUTPUT_FILE, PFC_OUTPUT_FILE, BUFFER_MON_FILE, SUMMARY_FILE) are absent or incomplete: those of a previous run were removed before it started";

/// The resolved config's warnings, and the CC keys `CC_MODE none` ignores, on stderr.
fn tell_notes(c: &HpccConfig, r: &HpccRun) {
    for w in &r.warnings {
        tell(&format!("warning: {w}"));
    }
    if matches!(r.cc, CcConfig::None(_)) {
        let ign = ignored_cc_keys(c);
        if !ign.is_empty() {
            tell(&format!("note: CC_MODE none ignores {}", ign.join(", ")));
        }
    }
}

/// Every output location was checked by [`resolve`]; the previous run's files go before the
/// run, the completion record (SUMMARY_FILE) first.
fn remove_previous_outputs(c: &HpccConfig, r: &HpccRun) -> Result<(), String> {
    let outputs: Vec<&Path> = [
        &r.summary_file,
        &r.fct_file,
        &r.pfc_file,
        &r.buffer_mon_file,
    ]
    .into_iter()
    .filter_map(|p| p.as_deref())
    .collect();
    crate::runguard::remove_stale_outputs(&outputs).map_err(|e| format!("{}: {e}", c.name))
}

/// `PFC_OUTPUT_FILE`: one line per PFC frame received: time_ns node_id node_type if_index
/// type (1 = pause).
fn write_pfc_file(p: &Path, sim: &crate::sim::Simulator) -> Result<(), String> {
    let mut out = String::new();
    for rec in &sim.pause_log() {
        out.push_str(&format!(
            "{} {} {} {} {}\n",
            rec.time_ps / 1000,
            rec.node,
            u8::from(rec.is_switch),
            rec.port + 1,
            u8::from(rec.pause)
        ));
    }
    write_atomic(p, out.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))
}

/// `sfc hpcc CONFIG`: run and write HPCC-format outputs.
///
/// Before simulating, every problem of the config is reported ([`resolve`]) and the output
/// files of a previous run at the config's output paths are removed
/// ([`crate::runguard::remove_stale_outputs`]), so an interrupted run never leaves new
/// outputs beside stale ones. Lines on stdout are written as HPCC-sim's; a closed stdout
/// does not stop the run.
///
/// A flow file sorted by start time is read as the run reaches each flow, and each flow's
/// record is written as it completes (`FCT_OUTPUT_FILE` line, and a spill file beside it from
/// which the summary statistics are computed): memory follows the flows in progress. The
/// outputs are those of a run on the list, byte for byte.
pub fn run_config(path: &Path) -> Result<(), String> {
    run_config_with(path, None, true)
}

/// [`run_config`] with `--on-deadlock`: what the run does when it finds a PFC deadlock
/// (stop, the default, or continue).
pub fn run_config_on_deadlock(
    path: &Path,
    on_deadlock: crate::sim::OnDeadlock,
) -> Result<(), String> {
    run_config_opts(path, None, true, on_deadlock, None, 1)
}

/// [`run_config_on_deadlock`] with a packet capture of the links `capture` names (the
/// `--capture` syntax, [`crate::scenario::capture::parse_capture_arg`]) into
/// `capture.pcapng` beside the FCT output file.
pub fn run_config_captured(
    path: &Path,
    on_deadlock: crate::sim::OnDeadlock,
    capture: Option<&str>,
) -> Result<(), String> {
    run_config_opts(path, None, true, on_deadlock, capture, 1)
}

/// [`run_config`] as `sfc hpcc` runs it: `--on-deadlock`, `--capture` and `--threads` (more
/// than one splits the run over threads, [`crate::sim::parallel`]: the same output files;
/// the flows are then read up front and the results kept in memory).
pub fn run_config_threads(
    path: &Path,
    on_deadlock: crate::sim::OnDeadlock,
    capture: Option<&str>,
    threads: usize,
) -> Result<(), String> {
    run_config_opts(path, None, threads <= 1, on_deadlock, capture, threads)
}

/// [`run_config`] with paths relative to `cwd` (`None`: the current directory), and with the
/// flows and results kept in memory when `stream` is false ([`resolve_with`]): the same
/// outputs, byte for byte (summary timings and memory aside).
pub fn run_config_with(path: &Path, cwd: Option<&Path>, stream: bool) -> Result<(), String> {
    run_config_opts(path, cwd, stream, crate::sim::OnDeadlock::Stop, None, 1)
}

/// [`run_config_with`] on `threads` threads (more than one splits the run,
/// [`crate::sim::parallel`], keeping the flows and results in memory; one streams them).
pub fn run_config_in(path: &Path, cwd: Option<&Path>, threads: usize) -> Result<(), String> {
    run_config_opts(
        path,
        cwd,
        threads <= 1,
        crate::sim::OnDeadlock::Stop,
        None,
        threads,
    )
}

/// [`run_config_with`] with the action on a PFC deadlock.
fn run_config_opts(
    path: &Path,
    cwd: Option<&Path>,
    stream: bool,
    on_deadlock: crate::sim::OnDeadlock,
    capture: Option<&str>,
    threads: usize,
) -> Result<(), String> {
    let text = crate::fsutil::read_text(path)?;
    let (c, warns) = HpccConfig::parse(&text, &path.display().to_string())?;
    for w in warns {
        tell(&format!("warning: {w}"));
    }
    let cwd = match cwd {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let mut r = resolve_with(&c, &cwd, stream)?;
    let capture_file = match capture {
        Some(what) => {
            r.net.capture = Some(crate::scenario::capture::capture_spec_from_arg(
                what, &r.topo,
            )?);
            let dir = r.fct_file.as_deref().and_then(Path::parent).unwrap_or(&cwd);
            Some(dir.join(crate::report::CAPTURE_FILE))
        }
        None => None,
    };
    tell_notes(&c, &r);
    let nflows = r.flows.len();
    remove_previous_outputs(&c, &r)?;
    crate::process::set_interrupt_note(INTERRUPT_NOTE);
    let seed = r.net.seed;
    let outs = OutputFiles {
        fct: r.fct_file.take(),
        pfc: r.pfc_file.take(),
        summary: r.summary_file.take(),
        buffer_mon: r.buffer_mon_file.take(),
    };
    let (mut sim, files) = build_simulator(r, outs.fct.as_deref())?;
    say(&format!(
        "maxRtt={} maxBdp={}",
        sim.base_rtt_ps / 1000,
        sim.bdp_bytes
    ));
    say("Running Simulation.");
    sim.on_deadlock = on_deadlock;
    if let Some(p) = &capture_file {
        sim.start_capture(p)?;
    }
    let t0 = std::time::Instant::now();
    let stop = sim.cfg.stop_ps;
    let mut cb = crate::report::progress_bar(true, stop);
    let (outcome, mut sim, used) = crate::report::run_on_threads(sim, threads, true, &mut cb);
    if crate::process::interrupt_requested() {
        return Err(crate::process::INTERRUPTED.into());
    }
    let wall = t0.elapsed().as_secs_f64();
    sim.finish();
    let captured = sim.finish_capture()?;
    if let (Some(c), Some(p)) = (&captured, &capture_file) {
        tell(&format!(
            "capture: {} frames on {} links written to {}{}",
            c.packets,
            c.links,
            p.display(),
            if c.capped {
                " (the cap cut it short)"
            } else {
                ""
            }
        ));
    }
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
    write_run_files(&outs, &sim, guard.as_deref_mut())?;
    let bins = SizeBins::EqualCount(10);
    let stats = match guard.as_deref_mut() {
        // From the spill file, with bounded memory: the same numbers, bit for bit.
        Some(f) => stats_from_spill(
            &mut f.spill,
            &bins,
            true,
            false,
            crate::report::SORT_BUDGET_ITEMS,
        )
        .map_err(|e| format!("the flow records' spill file: {e}"))?,
        None => RunStats::compute(&sim, &bins).with_dport_breakdown(&sim),
    };
    if let Some(p) = &outs.summary {
        let mut s = crate::report::summary_json(&sim, &stats, &path.display().to_string(), wall);
        used.annotate(&mut s);
        if let (Some(c), Some(o)) = (&captured, s.as_object_mut()) {
            o.insert(
                "capture".into(),
                serde_json::to_value(c).unwrap_or_default(),
            );
        }
        let meta = crate::runguard::RunMeta {
            seed,
            // HPCC-sim configs always stop (SIMULATOR_STOP_TIME, default 3.01 s).
            stop_set: true,
            scenario: serde_json::Value::Null,
            source: path.display().to_string(),
        };
        crate::runguard::annotate(&mut s, &outcome, stop, &meta);
        let txt = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
        write_atomic(p, txt.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    tell(&format!(
        "{} of {nflows} flows completed; {} events in {wall:.3} s",
        stats.flows_completed,
        sim.q.events()
    ));
    say(&format!("{wall:.3}"));
    end_of_run(path, &sim, &outcome)
}

/// The output files of an HPCC run (`FCT_OUTPUT_FILE`, `PFC_OUTPUT_FILE`, `SUMMARY_FILE`,
/// `BUFFER_MON_FILE`), where given.
struct OutputFiles {
    fct: Option<PathBuf>,
    pfc: Option<PathBuf>,
    summary: Option<PathBuf>,
    buffer_mon: Option<PathBuf>,
}

/// Result files shared with the simulator's completion callback.
type SharedResultFiles = std::sync::Arc<std::sync::Mutex<crate::report::ResultFiles>>;

/// The simulator of resolved run `r` (its flows from a list, or streamed from the flow
/// file), and, when streamed, the result files its records go to as flows complete: the FCT
/// file's lines at `fct` and a spill file beside it (in the temp directory without it) for
/// the statistics.
fn build_simulator(
    r: HpccRun,
    fct: Option<&Path>,
) -> Result<(crate::sim::Simulator, Option<SharedResultFiles>), String> {
    let (mut sim, streamed) = match r.flows {
        HpccFlows::List(flows) => (
            crate::sim::Simulator::with_flows(r.topo, r.net, r.cc, flows)?,
            false,
        ),
        HpccFlows::File { flows, count, .. } => {
            let stream = FlowStream::new(vec![Source::file(flows)]);
            let mut sim = crate::sim::Simulator::with_stream(r.topo, r.net, r.cc, stream)?;
            sim.expect_flows(count);
            (sim, true)
        }
    };
    let files = if streamed {
        // Beside a regular (or new) FCT file only: not in `/dev` for `/dev/stdout`.
        let spill_dir = fct
            .filter(|p| std::fs::metadata(p).map_or(true, |m| m.is_file()))
            .and_then(Path::parent);
        crate::report::ResultFiles::start(&mut sim, fct, spill_dir)?
    } else {
        None
    };
    Ok((sim, files))
}

/// Write the FCT file (finish the one written as flows completed, or write it in completion
/// order), the PFC file and the buffer-monitor file, where configured, and print the
/// schemes' warnings about the run.
fn write_run_files(
    outs: &OutputFiles,
    sim: &crate::sim::Simulator,
    streamed: Option<&mut crate::report::ResultFiles>,
) -> Result<(), String> {
    if let Some(p) = &outs.fct {
        match streamed {
            // Written as the flows completed.
            Some(f) => {
                if let Some(w) = f.fct.take() {
                    w.finish().map_err(|e| format!("{}: {e}", p.display()))?;
                }
            }
            // Completion order, each record built as it is written (no copy of the records).
            None => write_fct_file(p, sim.records_in_completion_order())
                .map_err(|e| format!("{}: {e}", p.display()))?,
        }
    }
    if let Some(p) = &outs.pfc {
        write_pfc_file(p, sim)?;
    }
    if let Some(w) = crate::report::scheme_warnings(sim) {
        tell(&w);
    }
    if let Some(p) = &outs.buffer_mon {
        write_atomic(p, sim.buffer_mon.hpcc_mon_lines().as_bytes())
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// The end of a run of config `path`: deadlocks and stuck flows reported, an error if the
/// run stopped on a deadlock or a stall, a note on flows that did not complete.
fn end_of_run(
    path: &Path,
    sim: &crate::sim::Simulator,
    outcome: &crate::runguard::Outcome,
) -> Result<(), String> {
    if let Some((k, v)) = crate::report::deadlock_line(sim) {
        tell(&format!("{k}: {v}"));
    }
    if let Some(st) = &outcome.stuck {
        tell(st);
    }
    if let Some(d) = &outcome.deadlock {
        return Err(format!("{}: {d}", path.display()));
    }
    if let Some(st) = &outcome.stalled {
        return Err(format!("{}: {st}", path.display()));
    }
    if outcome.incomplete() > 0 {
        tell(&format!(
            "note: {} flows did not complete by SIMULATOR_STOP_TIME (their FCTs are absent from the FCT file)",
            outcome.incomplete()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    /// `CC_MODE 3` with `extra` lines: the parsed config and the result of
    /// [`resolve_cc_mode`] for 100 Gb/s hosts, with its warnings.
    fn hpcc_setup(
        extra: &str,
    ) -> (
        HpccConfig,
        Result<crate::scenario::cc::CcSetup, String>,
        Vec<String>,
    ) {
        let text = format!("CC_MODE 3\nRATE_AI 40Mb/s\n{extra}");
        let (c, w) = HpccConfig::parse(&text, "config.txt").unwrap();
        assert!(w.is_empty(), "{w:?}");
        let mut warnings = Vec::new();
        let s = resolve_cc_mode(&c, "3", (G100, G100), &mut warnings);
        (c, s, warnings)
    }

    fn hpcc_params(extra: &str) -> HpccParams {
        let (_, s, w) = hpcc_setup(extra);
        assert!(w.is_empty(), "{w:?}");
        match s.unwrap().cc {
            CcConfig::Hpcc(p) => p,
            other => panic!("{other:?}"),
        }
    }

    /// Keys an HPCC config leaves out take `third.cc`'s globals (`mi_thresh = 5`,
    /// `multi_rate = true`, `int_multi = 1`, `var_win = false`, `u_target = 0.95`,
    /// `fast_react = true`), silently, as HPCC-sim; not `run.py`'s preset (`MI_THRESH 0`,
    /// `MULTI_RATE 0`, `INT_MULTI bw/25` = 4 at 100 G), which its configs always write.
    #[test]
    fn missing_hpcc_keys_take_third_cc_defaults() {
        let p = hpcc_params("");
        assert_eq!(p.max_stage, 5, "MI_THRESH");
        assert!(p.multi_rate, "MULTI_RATE");
        assert_eq!(p.int_quantum, IntQuantum::hpcc_sim(1), "INT_MULTI");
        assert!(!p.var_win, "VAR_WIN");
        assert_eq!(p.eta, 0.95);
        assert_eq!(p.reaction, Reaction::PerAck);
        assert_eq!(p.min_rate_bps, THIRD_CC_MIN_RATE_BPS);
        // Given, they are used (run.py's values).
        let p = hpcc_params("MI_THRESH 0\nMULTI_RATE 0\nINT_MULTI 4\nVAR_WIN 1\nHAS_WIN 1\n");
        assert_eq!(p.max_stage, 0);
        assert!(!p.multi_rate);
        assert_eq!(p.int_quantum, IntQuantum::hpcc_sim(4));
        assert!(p.var_win);
        assert_eq!(
            p,
            HpccParams {
                min_rate_bps: THIRD_CC_MIN_RATE_BPS,
                ..HpccParams::hpcc_sim_preset(G100)
            }
        );
    }

    /// `VAR_WIN 0` gives HPCC-sim's fixed window (the controller's `var_win` off); `VAR_WIN 1`
    /// the window that follows the rate. Nothing else changes.
    #[test]
    fn var_win_sets_the_hpcc_window_mode() {
        let on = hpcc_params("VAR_WIN 1\n");
        let off = hpcc_params("VAR_WIN 0\n");
        assert!(on.var_win && !off.var_win);
        assert_eq!(
            HpccParams {
                var_win: true,
                ..off
            },
            on
        );
    }

    /// `HAS_WIN 0` and `INT_MULTI 0` make HPCC-sim divide by zero (`m_win` in
    /// `UpdateRateHp`, `128·multi` in `IntHop::Set`): errors naming the key and its line.
    #[test]
    fn has_win_0_and_int_multi_0_are_errors_for_hpcc() {
        let (_, s, _) = hpcc_setup("HAS_WIN 0\n");
        let e = s.unwrap_err();
        assert!(
            e.starts_with("config.txt:3: `HAS_WIN 0`:") && e.contains("divide by"),
            "{e}"
        );
        let (_, s, _) = hpcc_setup("MI_THRESH 1\nINT_MULTI 0\n");
        let e = s.unwrap_err();
        assert!(
            e.starts_with("config.txt:4: `INT_MULTI 0`:") && e.contains("divide by zero"),
            "{e}"
        );
        // HAS_WIN 0 stays valid without HPCC.
        let (c, _) = HpccConfig::parse("CC_MODE none\nHAS_WIN 0\n", "config.txt").unwrap();
        assert!(resolve_cc_mode(&c, "none", (G100, G100), &mut Vec::new()).is_ok());
    }
}
