//! TOML scenario files: what to simulate (topology, network model, congestion control,
//! traffic, outputs), every key validated.
//!
//! Unknown keys and type errors are reported by the TOML reader with the line and the key;
//! values with units (`"100Gbps"`, `"1us"`, `"32MiB"`) are checked here and reported as
//! `file:line: key = value: problem`. See `docs/scenario.md` for every key and its default.

pub mod cc;
pub mod default;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::cc::CcConfig;
use crate::cc::none::NoneWindow;
use crate::config::{BufferConfig, BufferMode, Framing, LossRecovery, NetConfig, SchedulerKind};
use crate::metrics::stats::SizeBins;
use crate::topology::TopologySpec;
use crate::topology::shapes;
use crate::units::{parse_bytes, parse_rate_bps, parse_time_ps};
use crate::workload::cdf::{CdfFormat, SizeCdf};
use crate::workload::{FlowSpec, traffic};

type S = Spanned<String>;

/// Raw scenario file, as written by the user.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    /// Scenario name (used for the default output directory).
    pub name: Option<String>,
    /// Master seed.
    pub seed: Option<u64>,
    /// Stop time (e.g. `"10ms"`); default: when all traffic has drained.
    pub stop: Option<S>,
    /// Topology section.
    pub topology: RawTopology,
    /// Network model section.
    #[serde(default)]
    pub network: RawNetwork,
    /// Buffer section.
    #[serde(default)]
    pub buffer: RawBuffer,
    /// Loss recovery section.
    #[serde(default)]
    pub loss_recovery: RawLossRecovery,
    /// Congestion control section.
    #[serde(default)]
    pub cc: RawCc,
    /// ECN section.
    #[serde(default)]
    pub ecn: RawEcn,
    /// PFC section.
    #[serde(default)]
    pub pfc: RawPfc,
    /// SFC section.
    #[serde(default)]
    pub sfc: RawSfc,
    /// OnRamp section.
    #[serde(default)]
    pub onramp: RawOnRamp,
    /// Traffic generators (array of tables).
    #[serde(default)]
    pub traffic: Vec<RawTraffic>,
    /// Output options.
    #[serde(default)]
    pub output: RawOutput,
    /// Variants to run side by side (each applies its `set` overrides to this scenario).
    #[serde(default)]
    pub compare: Vec<RawCompare>,
}

/// One `[[compare]]` variant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCompare {
    /// Column name.
    pub name: String,
    /// `key=value` overrides, as for `--set`.
    #[serde(default)]
    pub set: Vec<String>,
}

/// The `[[compare]]` variants of a scenario text: (name, overrides). Empty = a single run.
pub fn variants(text: &str, file: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{file}: {e}"))?;
    let Some(list) = doc.get("compare") else {
        return Ok(Vec::new());
    };
    let arr = list
        .as_array()
        .ok_or_else(|| format!("{file}: `compare` must be an array of tables ([[compare]])"))?;
    let mut out = Vec::new();
    for (i, v) in arr.iter().enumerate() {
        let c: RawCompare = v
            .clone()
            .try_into()
            .map_err(|e| format!("{file}: compare[{i}]: {e}"))?;
        if c.name.is_empty() || c.name.contains(['/', '\\']) {
            return Err(format!(
                "{file}: compare[{i}].name must be a non-empty plain name"
            ));
        }
        if out.iter().any(|(n, _)| *n == c.name) {
            return Err(format!("{file}: compare name `{}` is used twice", c.name));
        }
        out.push((c.name, c.set));
    }
    Ok(out)
}

/// `[topology]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    /// `star`, `dumbbell`, `leaf_spine`, `fat_tree`, `hpcc_fat_tree`, `file`.
    pub kind: S,
    /// Hosts (star).
    pub hosts: Option<u32>,
    /// Hosts on the left switch (dumbbell).
    pub left_hosts: Option<u32>,
    /// Hosts on the right switch (dumbbell).
    pub right_hosts: Option<u32>,
    /// Spine switches (leaf_spine).
    pub spines: Option<u32>,
    /// ToR switches (leaf_spine).
    pub tors: Option<u32>,
    /// Hosts per ToR (leaf_spine).
    pub hosts_per_tor: Option<u32>,
    /// Parallel links between each ToR and spine (leaf_spine, default 1).
    pub links_per_spine: Option<u32>,
    /// Fat-tree arity (fat_tree).
    pub k: Option<u32>,
    /// Host link rate.
    pub host_rate: Option<S>,
    /// Host link one-way delay.
    pub host_delay: Option<S>,
    /// Switch-to-switch link rate.
    pub fabric_rate: Option<S>,
    /// Switch-to-switch link delay.
    pub fabric_delay: Option<S>,
    /// HPCC topology file (file).
    pub file: Option<S>,
}

/// `[network]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    /// MTU payload bytes.
    pub mtu: Option<u32>,
    /// `hpcc` or `ethernet`.
    pub framing: Option<S>,
    /// INT bytes per data packet and ACK.
    pub int_bytes: Option<u32>,
    /// Per-switch pipeline delay.
    pub switch_delay: Option<S>,
    /// Per-NIC receive delay.
    pub nic_delay: Option<S>,
    /// Queues per egress port.
    pub queues_per_port: Option<usize>,
    /// `rr` or `drr`.
    pub scheduler: Option<S>,
    /// DRR quantum, bytes.
    pub drr_quantum: Option<u32>,
    /// NIC ACK queue in the strict-priority class.
    pub ack_high_prio: Option<bool>,
    /// Receiver notification: `ack_echo` (HPCC-sim) or `cnp` (separate CNP packets).
    pub cnp: Option<S>,
    /// Minimum CNP spacing per flow (`cnp` mode).
    pub cnp_interval: Option<S>,
}

/// `[buffer]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawBuffer {
    /// `lossy`, `unlimited`, `lossless`.
    pub mode: Option<S>,
    /// Shared buffer per switch.
    pub size: Option<S>,
    /// Egress Dynamic Threshold α.
    pub dt_alpha: Option<f64>,
}

/// `[loss_recovery]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawLossRecovery {
    /// `gbn` or `irn`.
    pub kind: Option<S>,
    /// GBN timeout.
    pub rto: Option<S>,
    /// GBN NACK repeat interval.
    pub nack_interval: Option<S>,
    /// IRN low timeout.
    pub rto_low: Option<S>,
    /// IRN high timeout.
    pub rto_high: Option<S>,
    /// IRN BDP cap (bytes; default: max BDP of the topology).
    pub bdp_cap: Option<S>,
}

/// `[cc]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCc {
    /// Controller preset: see [`cc::PRESETS`].
    pub kind: Option<S>,
    /// Window: `"none"`, `"bdp"`/`"1bdp"`/`"0.5bdp"`, or a size like `"100KB"` (none, dcqcn,
    /// timely, dctcp).
    pub window: Option<S>,
    /// With a window, scale it by rate/line rate (HPCC-sim VAR_WIN; default true).
    pub var_win: Option<bool>,
    /// Minimum rate (DCQCN, DCTCP, TIMELY, HPCC).
    pub min_rate: Option<S>,
    /// Additive increase rate (DCQCN AI, DCTCP AI, TIMELY AI, HPCC W_AI as a rate).
    pub ai: Option<S>,
    /// Hyper increase rate (DCQCN, TIMELY).
    pub hai: Option<S>,
    /// EWMA gain g (DCQCN, DCTCP).
    pub g: Option<f64>,
    /// DCQCN α update interval.
    pub alpha_timer: Option<S>,
    /// DCQCN rate decrease check interval.
    pub dec_interval: Option<S>,
    /// DCQCN rate increase timer.
    pub rp_timer: Option<S>,
    /// DCQCN fast recovery steps F.
    pub fast_recovery: Option<u32>,
    /// HPCC η.
    pub eta: Option<f64>,
    /// HPCC maxStage.
    pub max_stage: Option<u32>,
    /// HPCC W_AI, bytes.
    pub w_ai: Option<S>,
    /// HPCC reaction: `per_ack` (HPCC), `per_rtt`, `per_ack_only` (Fig. 13 variants).
    pub reaction: Option<S>,
    /// TIMELY T_low.
    pub t_low: Option<S>,
    /// TIMELY T_high.
    pub t_high: Option<S>,
    /// TIMELY β.
    pub beta: Option<f64>,
}

/// `[ecn]`: RED thresholds given for the host link rate and scaled linearly with port rate.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawEcn {
    /// Marking on/off (default: as the CC preset).
    pub enabled: Option<bool>,
    /// Kmin at host rate.
    pub kmin: Option<S>,
    /// Kmax at host rate.
    pub kmax: Option<S>,
    /// Pmax.
    pub pmax: Option<f64>,
}

/// `[sfc]`: Source Flow Control.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSfc {
    /// `off`, `sfc` (ingress BTS + cache), `ingress`, `egress`, `sfcp`.
    pub mode: Option<S>,
    /// `tor` (default) or `all`.
    pub deploy: Option<S>,
    /// Trigger threshold Q_th (bytes, or e.g. `"2bdp"`); default 2 BDP.
    pub qth: Option<S>,
    /// Target depth Q_tg (bytes, or e.g. `"1bdp"`); default 1 BDP.
    pub qtg: Option<S>,
    /// Bloom filter reset period (default RTT/2).
    pub bloom_reset: Option<S>,
    /// Bloom filter bits.
    pub bloom_bits: Option<u32>,
    /// Pause cache entries.
    pub cache_entries: Option<u32>,
    /// Incast estimator window τ (off when absent).
    pub estimator_tau: Option<S>,
    /// Pause granularity (default 1us).
    pub pause_quantum: Option<S>,
}

/// `[onramp]`: OnRamp end-to-end flow control.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawOnRamp {
    /// On/off.
    pub enabled: Option<bool>,
    /// OWD threshold T (default: longest base one-way delay + 1 µs).
    pub threshold: Option<S>,
    /// Pause gain K.
    pub gain: Option<f64>,
    /// OWD EWMA weight (1 = none).
    pub ewma_w: Option<f64>,
    /// Stale-feedback guard.
    pub guard: Option<bool>,
}

/// `[pfc]`: lossless-mode parameters.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPfc {
    /// Pauses expire unless refreshed (real quanta); false = HPCC-sim (hold until RESUME).
    pub expiry: Option<bool>,
    /// Pause quanta per PAUSE frame.
    pub quanta: Option<u32>,
    /// Headroom = factor × rate × link delay.
    pub headroom_factor: Option<f64>,
    /// Ingress dynamic-threshold α at host-rate ports.
    pub alpha: Option<f64>,
    /// Per-(port, priority) reserve.
    pub reserve: Option<S>,
}

/// One `[[traffic]]` generator.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTraffic {
    /// `poisson`, `lognormal`, `incast`, `all_to_all`, `permutation`, `long_lived`, `flow_file`.
    pub kind: S,
    /// Size CDF: built-in name or a file path.
    pub cdf: Option<String>,
    /// CDF file format: `hpcc` or `homa`.
    pub cdf_format: Option<String>,
    /// Homa CDF unit in bytes (files in packets).
    pub cdf_unit_bytes: Option<f64>,
    /// Offered load, fraction of host link capacity.
    pub load: Option<Spanned<f64>>,
    /// Lognormal σ.
    pub sigma: Option<Spanned<f64>>,
    /// Start of arrivals.
    pub start: Option<S>,
    /// Duration of arrivals.
    pub duration: Option<S>,
    /// Hosts taking part: list of node ids (default: all hosts).
    pub hosts: Option<Spanned<Vec<u32>>>,
    /// Incast receivers (default: any of `hosts`).
    pub receivers: Option<Spanned<Vec<u32>>>,
    /// Incast degree (senders per event).
    pub degree: Option<Spanned<usize>>,
    /// Message size for incast/all_to_all/permutation/long_lived.
    pub size: Option<S>,
    /// Incast synchronization window.
    pub sync_window: Option<S>,
    /// Long-lived pairs `[[src, dst], …]`.
    pub pairs: Option<Spanned<Vec<[u32; 2]>>>,
    /// Explicit senders of a single incast (`incast` with `at`).
    pub senders: Option<Spanned<Vec<u32>>>,
    /// Time of a single incast event (with `senders` and `receivers = [r]`).
    pub at: Option<S>,
    /// HPCC flow file (flow_file).
    pub file: Option<S>,
    /// Priority group for generated flows (default 3).
    pub prio: Option<Spanned<u8>>,
}

/// `[output]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    /// Buffer watermark interval.
    pub buffer_interval: Option<S>,
    /// Equal-count size bins (number) — or use `size_edges`.
    pub size_bins: Option<usize>,
    /// Explicit upper bin edges, bytes.
    pub size_edges: Option<Vec<u64>>,
    /// Write `flows.csv` (default true).
    pub flows_csv: Option<bool>,
    /// Ports whose queue is recorded in `queues.csv`: `[[switch_node, port], …]`, or the
    /// string `"tor_downlinks"` for every server-facing port of every ToR.
    pub queues: Option<toml::Value>,
    /// Queue time-series interval (default 1us).
    pub queue_interval: Option<S>,
}

/// A fully resolved scenario.
pub struct Scenario {
    /// Name.
    pub name: String,
    /// Topology.
    pub topo: TopologySpec,
    /// Network model.
    pub net: NetConfig,
    /// Congestion control.
    pub cc: CcConfig,
    /// Flows.
    pub flows: Vec<FlowSpec>,
    /// Size bins for reports.
    pub bins: SizeBins,
    /// Write flows.csv.
    pub flows_csv: bool,
    /// Host link rate of the first host (for reports).
    pub host_rate_bps: u64,
}

/// Resolution context: file name and text, for `file:line` messages.
struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    dir: PathBuf,
}

impl Ctx<'_> {
    fn line(&self, off: usize) -> usize {
        self.text[..off.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }
    fn err(&self, s: &S, key: &str, msg: impl std::fmt::Display) -> String {
        format!(
            "{}:{}: `{key}` = \"{}\": {msg}",
            self.file,
            self.line(s.span().start),
            s.get_ref()
        )
    }
    /// Like [`Ctx::err`] for a non-string value, shown as TOML would (`[0, 9]`, `1.5`).
    fn err_val<T: std::fmt::Debug>(
        &self,
        v: &Spanned<T>,
        key: &str,
        msg: impl std::fmt::Display,
    ) -> String {
        format!(
            "{}:{}: `{key}` = {:?}: {msg}",
            self.file,
            self.line(v.span().start),
            v.get_ref()
        )
    }
    fn time(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_time_ps(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    fn rate(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_rate_bps(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    fn bytes(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_bytes(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    fn path(&self, p: &str) -> PathBuf {
        let pb = PathBuf::from(p);
        if pb.is_absolute() {
            pb
        } else {
            self.dir.join(pb)
        }
    }
}

fn need<T: Copy>(v: Option<T>, key: &str, kind: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("`{key}` is required for kind = \"{kind}\""))
}

/// Apply `key=value` overrides (dotted paths; array elements by index, e.g. `traffic.0.load=0.3`)
/// to a TOML document. Values are parsed as TOML, falling back to a plain string.
pub fn apply_overrides(doc: &mut toml::Table, sets: &[String]) -> Result<(), String> {
    for s in sets {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--set `{s}`: expected key=value"))?;
        let val: toml::Value = format!("x = {v}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("x"))
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        let parts: Vec<&str> = k.trim().split('.').collect();
        set_in_table(doc, &parts, val).map_err(|e| format!("--set `{k}`: {e}"))?;
    }
    Ok(())
}

fn set_in_table(t: &mut toml::Table, parts: &[&str], val: toml::Value) -> Result<(), String> {
    let (first, rest) = parts.split_first().ok_or("empty key")?;
    if rest.is_empty() {
        t.insert((*first).to_string(), val);
        return Ok(());
    }
    let child = t
        .entry((*first).to_string())
        .or_insert_with(|| toml::Value::Table(Default::default()));
    set_in_value(child, rest, val)
}

fn set_in_value(v: &mut toml::Value, parts: &[&str], val: toml::Value) -> Result<(), String> {
    match v {
        toml::Value::Table(t) => set_in_table(t, parts, val),
        toml::Value::Array(a) => {
            let (first, rest) = parts.split_first().ok_or("empty key")?;
            let idx: usize = first
                .parse()
                .map_err(|_| format!("`{first}` is not an array index"))?;
            let len = a.len();
            let el = a
                .get_mut(idx)
                .ok_or_else(|| format!("index {idx} out of range ({len} elements)"))?;
            if rest.is_empty() {
                *el = val;
                Ok(())
            } else {
                set_in_value(el, rest, val)
            }
        }
        _ => Err("a parent of this key is a plain value, not a table".into()),
    }
}

/// Load a scenario from TOML text. `file` names it in errors; relative paths inside resolve
/// against `dir`.
pub fn from_str(text: &str, file: &str, dir: &Path, sets: &[String]) -> Result<Scenario, String> {
    let owned;
    let (text, file_label) = if sets.is_empty() {
        (text, file.to_string())
    } else {
        let mut doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("{file}: {e}"))?;
        apply_overrides(&mut doc, sets)?;
        owned = toml::to_string(&doc).map_err(|e| format!("{file}: {e}"))?;
        (owned.as_str(), format!("{file} (with --set overrides)"))
    };
    let raw: RawScenario = toml::from_str(text).map_err(|e| format!("{file_label}: {e}"))?;
    let ctx = Ctx {
        file: &file_label,
        text,
        dir: dir.to_path_buf(),
    };
    resolve(raw, &ctx)
}

/// Load a scenario file.
pub fn load(path: &Path, sets: &[String]) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_str(&text, &path.display().to_string(), &dir, sets)
}

/// For "cannot read" messages: how a relative input path was resolved.
fn relative_hint(p: &str) -> &'static str {
    if Path::new(p).is_absolute() {
        ""
    } else {
        " (a relative path is taken relative to the scenario file's directory)"
    }
}

/// `[topology] kind = "file"`: read and parse the HPCC topology file named by `topology.file`
/// (relative to the scenario's directory). Errors name the key, its line and the path.
fn load_topology_file(t: &RawTopology, ctx: &Ctx) -> Result<TopologySpec, String> {
    let f = t.file.as_ref().ok_or_else(|| {
        format!(
            "{}: `topology.file` is required for kind = \"file\"",
            ctx.file
        )
    })?;
    let p = ctx.path(f.get_ref());
    let text = std::fs::read_to_string(&p).map_err(|e| {
        ctx.err(
            f,
            "topology.file",
            format!(
                "cannot read {}: {e}{}",
                p.display(),
                relative_hint(f.get_ref())
            ),
        )
    })?;
    crate::topology::hpcc_file::parse(&text, &p.display().to_string())
        .map_err(|e| ctx.err(f, "topology.file", e))
}

fn resolve(raw: RawScenario, ctx: &Ctx) -> Result<Scenario, String> {
    let t = &raw.topology;
    let host_rate = ctx.rate(&t.host_rate, "topology.host_rate", 100 * crate::units::GBPS)?;
    let host_delay = ctx.time(&t.host_delay, "topology.host_delay", crate::units::US)?;
    let fabric_rate = ctx.rate(&t.fabric_rate, "topology.fabric_rate", host_rate)?;
    let fabric_delay = ctx.time(&t.fabric_delay, "topology.fabric_delay", host_delay)?;
    let kind = t.kind.get_ref().as_str();
    let build = || -> Result<TopologySpec, String> {
        match kind {
            "star" => shapes::star(
                need(t.hosts, "topology.hosts", "star")?,
                host_rate,
                host_delay,
            ),
            "dumbbell" => shapes::dumbbell(
                need(t.left_hosts, "topology.left_hosts", "dumbbell")?,
                need(t.right_hosts, "topology.right_hosts", "dumbbell")?,
                host_rate,
                host_delay,
                fabric_rate,
                fabric_delay,
            ),
            "leaf_spine" => shapes::leaf_spine(shapes::LeafSpine {
                spines: need(t.spines, "topology.spines", "leaf_spine")?,
                tors: need(t.tors, "topology.tors", "leaf_spine")?,
                hosts_per_tor: need(t.hosts_per_tor, "topology.hosts_per_tor", "leaf_spine")?,
                host_rate_bps: host_rate,
                host_delay_ps: host_delay,
                fabric_rate_bps: fabric_rate,
                fabric_delay_ps: fabric_delay,
                links_per_spine: t.links_per_spine.unwrap_or(1),
            }),
            "fat_tree" => shapes::fat_tree(
                need(t.k, "topology.k", "fat_tree")?,
                host_rate,
                host_delay,
                fabric_rate,
                fabric_delay,
            ),
            "hpcc_fat_tree" => shapes::hpcc_fat_tree_320(),
            other => Err(ctx.err(
                &t.kind,
                "topology.kind",
                format!("unknown topology kind `{other}` (star, dumbbell, leaf_spine, fat_tree, hpcc_fat_tree, file)"),
            )),
        }
    };
    let topo = if kind == "file" {
        load_topology_file(t, ctx)?
    } else {
        build().map_err(|e| format!("{}: topology: {e}", ctx.file))?
    };
    topo.validate()
        .map_err(|e| format!("{}: topology: {e}", ctx.file))?;

    // Network model.
    let mut net = NetConfig {
        seed: raw.seed.unwrap_or(1),
        ..NetConfig::default()
    };
    let n = &raw.network;
    net.mtu_bytes = n.mtu.unwrap_or(1000);
    if net.mtu_bytes == 0 || net.mtu_bytes > 9000 {
        return Err(format!(
            "{}: `network.mtu` = {} must be in 1..=9000",
            ctx.file, net.mtu_bytes
        ));
    }
    if let Some(f) = &n.framing {
        net.framing = match f.get_ref().as_str() {
            "hpcc" => Framing::Hpcc,
            "ethernet" => Framing::Ethernet,
            _ => return Err(ctx.err(f, "network.framing", "expected `hpcc` or `ethernet`")),
        };
    }
    net.switch_delay_ps = ctx.time(&n.switch_delay, "network.switch_delay", 0)?;
    net.nic_delay_ps = ctx.time(&n.nic_delay, "network.nic_delay", 0)?;
    net.queues_per_port = n.queues_per_port.unwrap_or(8);
    if !(2..=64).contains(&net.queues_per_port) {
        return Err(format!(
            "{}: `network.queues_per_port` = {} must be in 2..=64",
            ctx.file, net.queues_per_port
        ));
    }
    if let Some(s) = &n.scheduler {
        net.scheduler = match s.get_ref().as_str() {
            "rr" => SchedulerKind::RoundRobin,
            "drr" => SchedulerKind::Drr {
                quantum_bytes: n.drr_quantum.unwrap_or(1500).max(1),
            },
            _ => return Err(ctx.err(s, "network.scheduler", "expected `rr` or `drr`")),
        };
    }
    let b = &raw.buffer;
    net.buffer = BufferConfig {
        mode: match &b.mode {
            None => BufferMode::Lossy,
            Some(m) => match m.get_ref().as_str() {
                "lossy" => BufferMode::Lossy,
                "unlimited" => BufferMode::Unlimited,
                "lossless" => BufferMode::Lossless,
                _ => {
                    return Err(ctx.err(
                        m,
                        "buffer.mode",
                        "expected `lossy`, `unlimited` or `lossless`",
                    ));
                }
            },
        },
        size_bytes: ctx.bytes(&b.size, "buffer.size", 32 << 20)?,
        dt_alpha: b.dt_alpha.unwrap_or(1.0),
    };
    if !(net.buffer.dt_alpha > 0.0 && net.buffer.dt_alpha.is_finite()) {
        return Err(format!(
            "{}: `buffer.dt_alpha` = {} must be a positive number",
            ctx.file, net.buffer.dt_alpha
        ));
    }
    if net.buffer.size_bytes == 0 {
        return Err(format!("{}: `buffer.size` must be positive", ctx.file));
    }
    let lr = &raw.loss_recovery;
    net.loss_recovery = match lr.kind.as_ref().map(|k| k.get_ref().as_str()) {
        None | Some("gbn") => {
            let LossRecovery::Gbn {
                rto_ps,
                nack_interval_ps,
            } = LossRecovery::gbn()
            else {
                unreachable!()
            };
            LossRecovery::Gbn {
                rto_ps: ctx.time(&lr.rto, "loss_recovery.rto", rto_ps)?,
                nack_interval_ps: ctx.time(
                    &lr.nack_interval,
                    "loss_recovery.nack_interval",
                    nack_interval_ps,
                )?,
            }
        }
        Some("irn") => {
            let LossRecovery::Irn {
                rto_low_ps,
                rto_high_ps,
                ..
            } = LossRecovery::irn()
            else {
                unreachable!()
            };
            LossRecovery::Irn {
                rto_low_ps: ctx.time(&lr.rto_low, "loss_recovery.rto_low", rto_low_ps)?,
                rto_high_ps: ctx.time(&lr.rto_high, "loss_recovery.rto_high", rto_high_ps)?,
                bdp_cap_bytes: ctx.bytes(&lr.bdp_cap, "loss_recovery.bdp_cap", 0)?,
            }
        }
        Some(_) => {
            let k = lr.kind.as_ref().expect("matched Some");
            return Err(ctx.err(k, "loss_recovery.kind", "expected `gbn` or `irn`"));
        }
    };
    match net.loss_recovery {
        LossRecovery::Gbn { rto_ps: 0, .. } => {
            return Err(format!(
                "{}: `loss_recovery.rto` must be positive",
                ctx.file
            ));
        }
        LossRecovery::Irn {
            rto_low_ps,
            rto_high_ps,
            ..
        } if rto_low_ps == 0 || rto_high_ps == 0 => {
            return Err(format!("{}: IRN timeouts must be positive", ctx.file));
        }
        _ => {}
    }
    net.stop_ps = ctx.time(&raw.stop, "stop", u64::MAX)?;
    net.buffer_sample_ps = ctx.time(
        &raw.output.buffer_interval,
        "output.buffer_interval",
        10 * crate::units::US,
    )?;
    if net.buffer_sample_ps == 0 {
        return Err(format!(
            "{}: `output.buffer_interval` must be positive",
            ctx.file
        ));
    }

    // Congestion control and the features it relies on.
    let ckind = raw
        .cc
        .kind
        .as_ref()
        .map(|k| k.get_ref().as_str())
        .unwrap_or("none");
    let mut setup = cc::preset(ckind, host_rate).map_err(|e| match &raw.cc.kind {
        Some(k) => ctx.err(k, "cc.kind", e),
        None => e,
    })?;
    apply_cc_overrides(&mut setup, &raw.cc, ctx)?;
    net.int_enabled = setup.int_enabled;
    net.int_bytes = n.int_bytes.unwrap_or(setup.int_bytes);
    net.ack_high_prio = n.ack_high_prio.unwrap_or(setup.ack_high_prio);
    net.cnp = setup.cnp;
    if let Some(c) = &n.cnp {
        net.cnp = match c.get_ref().as_str() {
            "ack_echo" => crate::config::CnpMode::AckEcho,
            "cnp" => crate::config::CnpMode::Cnp {
                interval_ps: ctx.time(
                    &n.cnp_interval,
                    "network.cnp_interval",
                    50 * crate::units::US,
                )?,
            },
            _ => return Err(ctx.err(c, "network.cnp", "expected `ack_echo` or `cnp`")),
        };
    }
    net.ecn = setup.ecn.clone();
    let e = &raw.ecn;
    if e.kmin.is_some() || e.kmax.is_some() || e.pmax.is_some() {
        let kmin = ctx.bytes(&e.kmin, "ecn.kmin", 0)?;
        let kmax = ctx.bytes(&e.kmax, "ecn.kmax", kmin)?;
        let pmax = e.pmax.unwrap_or(1.0);
        if kmax < kmin || !(0.0..=1.0).contains(&pmax) {
            return Err(format!(
                "{}: [ecn] needs kmin ≤ kmax and 0 ≤ pmax ≤ 1",
                ctx.file
            ));
        }
        net.ecn = crate::config::EcnConfig {
            enabled: true,
            thresholds: vec![crate::config::EcnThresholds {
                rate_bps: host_rate,
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax,
            }],
        };
    }
    if let Some(en) = e.enabled {
        net.ecn.enabled = en;
        if en && net.ecn.thresholds.is_empty() {
            net.ecn.thresholds = crate::config::EcnConfig::hpcc_default().thresholds;
        }
    }
    let pf = &raw.pfc;
    net.pfc.expiry = pf.expiry.unwrap_or(net.pfc.expiry);
    net.pfc.quanta = pf.quanta.unwrap_or(net.pfc.quanta).clamp(1, 65535);
    net.pfc.headroom_factor = pf.headroom_factor.unwrap_or(net.pfc.headroom_factor);
    net.pfc.alpha_host = pf.alpha.unwrap_or(net.pfc.alpha_host);
    net.pfc.reserve_bytes = ctx.bytes(&pf.reserve, "pfc.reserve", net.pfc.reserve_bytes)?;
    if !(net.pfc.alpha_host > 0.0 && net.pfc.headroom_factor >= 0.0) {
        return Err(format!(
            "{}: [pfc] alpha must be > 0 and headroom_factor ≥ 0",
            ctx.file
        ));
    }
    let cc = setup.cc;
    resolve_sfc(&mut net, &raw.sfc, &raw.onramp, ctx)?;
    net.queue_monitor_ps = ctx
        .time(
            &raw.output.queue_interval,
            "output.queue_interval",
            crate::units::US,
        )?
        .max(1);
    match &raw.output.queues {
        None => {}
        Some(toml::Value::String(s)) if s == "tor_downlinks" => {
            let ports = topo.ports();
            for sw in topo.switches() {
                for (i, p) in ports[sw as usize].iter().enumerate() {
                    if topo.kinds[p.peer as usize] == crate::topology::NodeKind::Host {
                        net.queue_monitor.push((sw, i as u32));
                    }
                }
            }
        }
        Some(toml::Value::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                let pair = v.as_array().and_then(|p| match p.as_slice() {
                    [toml::Value::Integer(n), toml::Value::Integer(port)]
                        if *n >= 0 && *port >= 0 =>
                    {
                        Some((*n as u32, *port as u32))
                    }
                    _ => None,
                });
                net.queue_monitor.push(pair.ok_or_else(|| {
                    format!(
                        "{}: `output.queues[{i}]` must be [switch_node, port]",
                        ctx.file
                    )
                })?);
            }
        }
        Some(_) => {
            return Err(format!(
                "{}: `output.queues` must be a list of [switch_node, port] or \"tor_downlinks\"",
                ctx.file
            ));
        }
    }

    // Traffic.
    let flows = resolve_traffic(&raw.traffic, &topo, &net, host_rate, ctx)?;
    let bins = match (&raw.output.size_edges, raw.output.size_bins) {
        (Some(e), _) => SizeBins::Edges(e.clone()),
        (None, Some(n)) if n > 0 => SizeBins::EqualCount(n),
        (None, Some(_)) => {
            return Err(format!("{}: `output.size_bins` must be positive", ctx.file));
        }
        (None, None) => SizeBins::EqualCount(10),
    };
    Ok(Scenario {
        name: raw.name.unwrap_or_else(|| "scenario".into()),
        topo,
        net,
        cc,
        flows,
        bins,
        flows_csv: raw.output.flows_csv.unwrap_or(true),
        host_rate_bps: host_rate,
    })
}

/// Traffic kinds of `[[traffic]]`, for messages.
const TRAFFIC_KINDS: &str =
    "poisson, lognormal, incast, all_to_all, permutation, long_lived, flow_file";

/// Resolve the `[[traffic]]` generators into one flow list sorted by start time.
///
/// Every value the user gave is checked here — node ids against the topology, priorities
/// against `network.queues_per_port`, loads, degrees, sizes — before any generator runs, so an
/// error names the offending `traffic[i].key` and its line (flow-file errors name the flow
/// file's line). The simulator builder never sees an invalid flow.
fn resolve_traffic(
    raw: &[RawTraffic],
    topo: &TopologySpec,
    net: &NetConfig,
    host_rate: u64,
    ctx: &Ctx,
) -> Result<Vec<FlowSpec>, String> {
    use crate::workload::flow_file;
    let all_hosts = topo.hosts();
    // Data priorities: queue 0 is the strict-priority control class (queues_per_port ≥ 2).
    let max_prio = net.queues_per_port.saturating_sub(1).max(1);
    let prio_rule = format!(
        "data priorities are 1..={max_prio} (queue 0 is the control class; `network.queues_per_port` = {})",
        net.queues_per_port
    );
    let mut flows = Vec::new();
    for (i, tr) in raw.iter().enumerate() {
        let key = |k: &str| format!("traffic[{i}].{k}");
        let kind = tr.kind.get_ref().as_str();
        let unknown_kind = || {
            ctx.err(
                &tr.kind,
                &key("kind"),
                format!("unknown traffic kind `{kind}` ({TRAFFIC_KINDS})"),
            )
        };
        if !TRAFFIC_KINDS.split(", ").any(|k| k == kind) {
            return Err(unknown_kind());
        }
        let required =
            |k: &str| format!("{}: `{}` is required for {kind} traffic", ctx.file, key(k));
        let seed = crate::rng::mix64(net.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9));
        let start = ctx.time(&tr.start, &key("start"), 0)?;
        let dur = ctx.time(&tr.duration, &key("duration"), 0)?;
        let needs_dur =
            matches!(kind, "poisson" | "lognormal") || (kind == "incast" && tr.at.is_none());
        if needs_dur && dur == 0 {
            return Err(format!(
                "{}: `{}` is required (and > 0) for {kind} traffic",
                ctx.file,
                key("duration")
            ));
        }
        // Node lists: every id must be a host of the topology, none listed twice.
        let host_list =
            |v: &Option<Spanned<Vec<u32>>>, k: &str| -> Result<Option<Vec<u32>>, String> {
                let Some(v) = v else { return Ok(None) };
                let mut seen = std::collections::HashSet::with_capacity(v.get_ref().len());
                for &n in v.get_ref() {
                    topo.check_host(n).map_err(|e| ctx.err_val(v, &key(k), e))?;
                    if !seen.insert(n) {
                        return Err(ctx.err_val(v, &key(k), format!("node {n} is listed twice")));
                    }
                }
                Ok(Some(v.get_ref().clone()))
            };
        let hosts = host_list(&tr.hosts, "hosts")?;
        let receivers = host_list(&tr.receivers, "receivers")?;
        let senders = host_list(&tr.senders, "senders")?;
        let uses_hosts = matches!(kind, "poisson" | "lognormal" | "all_to_all" | "permutation")
            || (kind == "incast" && tr.at.is_none());
        if let (true, Some(h), Some(v)) = (uses_hosts, &hosts, &tr.hosts)
            && h.len() < 2
        {
            return Err(ctx.err_val(
                v,
                &key("hosts"),
                format!("{kind} traffic needs at least 2 hosts, got {}", h.len()),
            ));
        }
        let hosts = hosts.unwrap_or_else(|| all_hosts.clone());
        match &tr.prio {
            Some(p) if *p.get_ref() == 0 || *p.get_ref() as usize > max_prio => {
                return Err(ctx.err_val(p, &key("prio"), format!("out of range: {prio_rule}")));
            }
            None if kind != "flow_file" && traffic::DEFAULT_PRIO as usize > max_prio => {
                return Err(format!(
                    "{}: traffic[{i}] ({kind}): generated flows use priority {} by default, but {prio_rule}; set `{}`",
                    ctx.file,
                    traffic::DEFAULT_PRIO,
                    key("prio")
                ));
            }
            _ => {}
        }
        let load_of = || -> Result<f64, String> {
            let l = tr.load.as_ref().ok_or_else(|| required("load"))?;
            let v = *l.get_ref();
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(ctx.err_val(
                    l,
                    &key("load"),
                    "must be in (0, 1]: the offered load is a fraction of the host link capacity",
                ));
            }
            Ok(v)
        };
        let size_of = || -> Result<u64, String> {
            let s = tr.size.as_ref().ok_or_else(|| required("size"))?;
            match parse_bytes(s.get_ref()) {
                Err(e) => Err(ctx.err(s, &key("size"), e)),
                Ok(0) => Err(ctx.err(s, &key("size"), "must be at least 1 byte")),
                Ok(b) => Ok(b),
            }
        };
        let mut f = match kind {
            "poisson" | "lognormal" => {
                let cdf = load_cdf(tr, ctx, &key("cdf"))?;
                let load = load_of()?;
                if kind == "poisson" {
                    traffic::poisson(&hosts, &cdf, load, host_rate, start, dur, seed)
                } else {
                    let sigma = match &tr.sigma {
                        None => 2.0,
                        Some(s) if s.get_ref().is_finite() && *s.get_ref() >= 0.0 => *s.get_ref(),
                        Some(s) => {
                            return Err(ctx.err_val(s, &key("sigma"), "must be a finite number ≥ 0"));
                        }
                    };
                    traffic::lognormal(&hosts, &cdf, load, host_rate, sigma, start, dur, seed)
                }
            }
            "incast" => {
                let size = size_of()?;
                let window = ctx.time(&tr.sync_window, &key("sync_window"), 0)?;
                if let Some(at) = &tr.at {
                    let at = parse_time_ps(at.get_ref()).map_err(|e| ctx.err(at, &key("at"), e))?;
                    let (Some(sv), Some(senders)) = (&tr.senders, senders) else {
                        return Err(format!("{}: `{}` is required with `{}`", ctx.file, key("senders"), key("at")));
                    };
                    let recv = match receivers.as_deref() {
                        Some([r]) => *r,
                        _ => return Err(format!("{}: `{}` must list exactly one receiver with `{}`", ctx.file, key("receivers"), key("at"))),
                    };
                    if senders.is_empty() {
                        return Err(ctx.err_val(sv, &key("senders"), "needs at least one sender"));
                    }
                    if senders.contains(&recv) {
                        return Err(ctx.err_val(sv, &key("senders"), format!(
                            "sender {recv} is also the receiver (`{}` = [{recv}]); a host does not send incast traffic to itself",
                            key("receivers")
                        )));
                    }
                    traffic::incast_once(&senders, recv, size, at, window, seed)
                } else {
                    let d = tr.degree.as_ref().ok_or_else(|| required("degree"))?;
                    let receivers = receivers.unwrap_or_default();
                    let max = traffic::incast_max_degree(&hosts, &receivers);
                    let degree = *d.get_ref();
                    if degree == 0 || degree > max {
                        let pool = if tr.hosts.is_some() {
                            format!("the {} hosts of `{}`", hosts.len(), key("hosts"))
                        } else {
                            format!("all {} hosts (`{}` not given)", hosts.len(), key("hosts"))
                        };
                        return Err(ctx.err_val(d, &key("degree"), format!(
                            "must be in 1..={max}: each event's senders are distinct hosts, other than the receiver, among {pool}"
                        )));
                    }
                    let load = load_of()?;
                    traffic::incast(&hosts, &receivers, degree, size, load, host_rate, window, start, dur, seed)
                }
            }
            "all_to_all" => traffic::all_to_all(&hosts, size_of()?, start),
            "permutation" => traffic::permutation(&hosts, size_of()?, start, seed),
            "long_lived" => {
                let pv = tr.pairs.as_ref().ok_or_else(|| required("pairs"))?;
                let mut pairs = Vec::with_capacity(pv.get_ref().len());
                for &[s, d] in pv.get_ref() {
                    let bad = |e: String| ctx.err_val(pv, &key("pairs"), format!("pair [{s}, {d}]: {e}"));
                    topo.check_host(s).map_err(bad)?;
                    topo.check_host(d).map_err(bad)?;
                    if s == d {
                        return Err(bad(format!("a flow needs two different hosts (host {s} to itself)")));
                    }
                    pairs.push((s, d));
                }
                traffic::long_lived(&pairs, start, size_of()?)
            }
            "flow_file" => {
                let fs = tr.file.as_ref().ok_or_else(|| required("file"))?;
                let p = ctx.path(fs.get_ref());
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    ctx.err(fs, &key("file"), format!("cannot read {}: {e}{}", p.display(), relative_hint(fs.get_ref())))
                })?;
                // Checked line by line (before sorting), so errors name the flow file's line.
                let check_prio = tr.prio.is_none();
                flow_file::parse_with(&text, &p.display().to_string(), |f| {
                    flow_file::check_endpoints(f, topo)?;
                    if check_prio && f.prio as usize > max_prio {
                        return Err(format!(
                            "field 3 (pg) = {} is out of range: {prio_rule} (or set `{}` to override every flow's priority)",
                            f.prio,
                            key("prio")
                        ));
                    }
                    Ok(())
                })
                .map(|(f, warns)| {
                    for w in warns {
                        eprintln!("warning: {w}");
                    }
                    f
                })
            }
            _ => return Err(unknown_kind()),
        }
        .map_err(|e| format!("{}: traffic[{i}] ({kind}): {e}", ctx.file))?;
        if let Some(p) = &tr.prio {
            for x in f.iter_mut() {
                x.prio = *p.get_ref();
            }
        }
        flows = traffic::merge(flows, f);
    }
    Ok(flows)
}

/// Resolve `[sfc]` and `[onramp]`. Q_th/Q_tg default to 2 and 1 BDP of each port (base RTT ×
/// port rate); explicit values are bytes.
fn resolve_sfc(net: &mut NetConfig, s: &RawSfc, o: &RawOnRamp, ctx: &Ctx) -> Result<(), String> {
    use crate::scheme::sfc::{SfcDeploy, SfcMode};
    let sc = &mut net.sfc;
    if let Some(m) = &s.mode {
        sc.mode = match m.get_ref().as_str() {
            "off" => SfcMode::Off,
            "sfc" => SfcMode::Sfc,
            "ingress" => SfcMode::Ingress,
            "egress" => SfcMode::Egress,
            "sfcp" => SfcMode::SfcP,
            _ => return Err(ctx.err(m, "sfc.mode", "expected off, sfc, ingress, egress or sfcp")),
        };
    }
    if let Some(d) = &s.deploy {
        sc.deploy = match d.get_ref().as_str() {
            "tor" => SfcDeploy::Tor,
            "all" => SfcDeploy::All,
            _ => return Err(ctx.err(d, "sfc.deploy", "expected tor or all")),
        };
    }
    let thresh = |v: &Option<S>, key: &str| -> Result<u64, String> {
        match v {
            None => Ok(0),
            Some(x) if x.get_ref().ends_with("bdp") => Err(ctx.err(
                x,
                key,
                "give bytes (e.g. \"250KB\"); omit the key for the paper's default (Q_th = 2 BDP, Q_tg = 1 BDP per port)",
            )),
            Some(x) => parse_bytes(x.get_ref()).map_err(|e| ctx.err(x, key, e)),
        }
    };
    sc.qth_bytes = thresh(&s.qth, "sfc.qth")?;
    sc.qtg_bytes = thresh(&s.qtg, "sfc.qtg")?;
    if sc.qth_bytes > 0 && sc.qtg_bytes > sc.qth_bytes {
        return Err(format!("{}: `sfc.qtg` must not exceed `sfc.qth`", ctx.file));
    }
    sc.bloom_reset_ps = ctx.time(&s.bloom_reset, "sfc.bloom_reset", 0)?;
    sc.bloom_bits = s.bloom_bits.unwrap_or(sc.bloom_bits).max(64);
    sc.cache_entries = s.cache_entries.unwrap_or(sc.cache_entries).max(1);
    sc.estimator_tau_ps = ctx.time(&s.estimator_tau, "sfc.estimator_tau", 0)?;
    sc.pause_quantum_ps = ctx.time(&s.pause_quantum, "sfc.pause_quantum", sc.pause_quantum_ps)?;
    let on = &mut net.onramp;
    on.enabled = o.enabled.unwrap_or(false);
    on.threshold_ps = ctx.time(&o.threshold, "onramp.threshold", 0)?;
    on.gain = o.gain.unwrap_or(1.0);
    on.ewma_w = o.ewma_w.unwrap_or(1.0);
    on.guard = o.guard.unwrap_or(true);
    if !(on.gain > 0.0 && on.gain.is_finite() && on.ewma_w > 0.0 && on.ewma_w <= 1.0) {
        return Err(format!(
            "{}: [onramp] needs gain > 0 and 0 < ewma_w ≤ 1",
            ctx.file
        ));
    }
    Ok(())
}

/// Apply the `[cc]` parameter overrides to a preset.
fn apply_cc_overrides(setup: &mut cc::CcSetup, c: &RawCc, ctx: &Ctx) -> Result<(), String> {
    use crate::cc::hpcc::{HpccAi, Reaction};
    let rate = |v: &Option<S>, key: &str| -> Result<Option<u64>, String> {
        v.as_ref()
            .map(|s| parse_rate_bps(s.get_ref()).map_err(|e| ctx.err(s, key, e)))
            .transpose()
    };
    let time = |v: &Option<S>, key: &str| -> Result<Option<u64>, String> {
        v.as_ref()
            .map(|s| parse_time_ps(s.get_ref()).map_err(|e| ctx.err(s, key, e)))
            .transpose()
    };
    let window = match &c.window {
        None => None,
        Some(w) => Some(parse_window(w.get_ref()).map_err(|e| ctx.err(w, "cc.window", e))?),
    };
    let var_win = c.var_win.unwrap_or(true);
    let cc_name = setup.cc.name();
    let unsupported = |key: &str, present: bool| -> Result<(), String> {
        if present {
            Err(format!(
                "{}: `cc.{key}` does not apply to cc.kind = \"{cc_name}\"",
                ctx.file
            ))
        } else {
            Ok(())
        }
    };
    if let Some(g) = c.g
        && !(g > 0.0 && g <= 1.0)
    {
        return Err(format!("{}: `cc.g` = {g} must be in (0, 1]", ctx.file));
    }
    match &mut setup.cc {
        CcConfig::None(p) => {
            if let Some(w) = window {
                p.window = w;
            }
            for (k, present) in [
                ("ai", c.ai.is_some()),
                ("min_rate", c.min_rate.is_some()),
                ("eta", c.eta.is_some()),
            ] {
                unsupported(k, present)?;
            }
        }
        CcConfig::Dcqcn(p) => {
            if let Some(v) = rate(&c.ai, "cc.ai")? {
                p.rate_ai_bps = v;
            }
            if let Some(v) = rate(&c.hai, "cc.hai")? {
                p.rate_hai_bps = v;
            }
            if let Some(v) = rate(&c.min_rate, "cc.min_rate")? {
                p.min_rate_bps = v;
            }
            if let Some(g) = c.g {
                p.g = g;
            }
            if let Some(v) = time(&c.alpha_timer, "cc.alpha_timer")? {
                p.alpha_timer_ps = v.max(1);
            }
            if let Some(v) = time(&c.dec_interval, "cc.dec_interval")? {
                p.rate_decrease_interval_ps = v.max(1);
            }
            if let Some(v) = time(&c.rp_timer, "cc.rp_timer")? {
                p.rate_increase_timer_ps = v.max(1);
            }
            if let Some(f) = c.fast_recovery {
                p.fast_recovery_times = f;
            }
            match window {
                None => {}
                Some(NoneWindow::Unlimited) => p.has_win = false,
                Some(NoneWindow::Bytes(b)) => *p = p.clone().with_window(b, var_win),
                Some(NoneWindow::Bdp(_)) => *p = p.clone().with_window(0, var_win),
            }
        }
        CcConfig::Dctcp(p) => {
            if let Some(v) = rate(&c.ai, "cc.ai")? {
                p.rate_ai_bps = v;
            }
            if let Some(v) = rate(&c.min_rate, "cc.min_rate")? {
                p.min_rate_bps = v;
            }
            if let Some(g) = c.g {
                p.g = g;
            }
            match window {
                None => {}
                Some(NoneWindow::Unlimited) => p.has_win = false,
                Some(NoneWindow::Bytes(b)) => {
                    p.has_win = true;
                    p.window_bytes = b;
                }
                Some(NoneWindow::Bdp(_)) => {
                    p.has_win = true;
                    p.window_bytes = 0;
                }
            }
            p.var_win = var_win;
        }
        CcConfig::Hpcc(p) => {
            if let Some(e) = c.eta {
                if !(e > 0.0 && e <= 1.0) {
                    return Err(format!("{}: `cc.eta` = {e} must be in (0, 1]", ctx.file));
                }
                p.eta = e;
            }
            if let Some(m) = c.max_stage {
                p.max_stage = m;
            }
            if let Some(v) = rate(&c.ai, "cc.ai")? {
                p.ai = HpccAi::RateBps(v);
            }
            if let Some(w) = &c.w_ai {
                p.ai = HpccAi::Bytes(
                    parse_bytes(w.get_ref()).map_err(|e| ctx.err(w, "cc.w_ai", e))? as f64,
                );
            }
            if let Some(v) = rate(&c.min_rate, "cc.min_rate")? {
                p.min_rate_bps = v;
            }
            if let Some(r) = &c.reaction {
                p.reaction = match r.get_ref().as_str() {
                    "per_ack" => Reaction::PerAck,
                    "per_rtt" => Reaction::PerRtt,
                    "per_ack_only" => Reaction::PerAckOnly,
                    _ => {
                        return Err(ctx.err(
                            r,
                            "cc.reaction",
                            "expected per_ack, per_rtt or per_ack_only",
                        ));
                    }
                };
            }
            unsupported("window", window.is_some())?;
        }
        CcConfig::Timely(p) => {
            if let Some(v) = rate(&c.ai, "cc.ai")? {
                p.rate_ai_bps = v;
            }
            if let Some(v) = rate(&c.hai, "cc.hai")? {
                p.rate_hai_bps = v;
            }
            if let Some(v) = rate(&c.min_rate, "cc.min_rate")? {
                p.min_rate_bps = v;
            }
            if let Some(v) = time(&c.t_low, "cc.t_low")? {
                p.t_low_ps = v;
            }
            if let Some(v) = time(&c.t_high, "cc.t_high")? {
                p.t_high_ps = v;
            }
            if let Some(b) = c.beta {
                p.beta = b;
            }
            match window {
                None => {}
                Some(NoneWindow::Unlimited) => p.has_win = false,
                Some(NoneWindow::Bytes(b)) => *p = p.clone().with_window(b, var_win),
                Some(NoneWindow::Bdp(_)) => *p = p.clone().with_window(0, var_win),
            }
        }
    }
    Ok(())
}

fn parse_window(s: &str) -> Result<NoneWindow, String> {
    let s = s.trim();
    if s == "none" || s == "unlimited" {
        return Ok(NoneWindow::Unlimited);
    }
    if s == "bdp" || s == "BDP" {
        return Ok(NoneWindow::Bdp(1.0));
    }
    if let Some(k) = s.strip_suffix("bdp").or_else(|| s.strip_suffix("BDP")) {
        let v: f64 = k
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: expected e.g. `1bdp`"))?;
        if !(v > 0.0 && v.is_finite()) {
            return Err(format!("`{s}`: BDP multiple must be positive"));
        }
        return Ok(NoneWindow::Bdp(v));
    }
    parse_bytes(s)
        .map(NoneWindow::Bytes)
        .map_err(|e| e.to_string())
}

fn load_cdf(tr: &RawTraffic, ctx: &Ctx, key: &str) -> Result<SizeCdf, String> {
    let name = tr
        .cdf
        .as_deref()
        .ok_or_else(|| format!("{}: `{key}` is required", ctx.file))?;
    if let Some(c) = crate::workload::cdf::builtin(name) {
        return Ok(c);
    }
    let p = ctx.path(name);
    if !p.exists() {
        return Err(format!(
            "{}: `{key}` = \"{name}\": neither a built-in CDF ({}) nor an existing file",
            ctx.file,
            crate::workload::cdf::builtin_names().join(", ")
        ));
    }
    let fmt = match tr.cdf_format.as_deref() {
        None | Some("hpcc") => CdfFormat::Hpcc,
        Some("homa") => CdfFormat::Homa {
            unit_bytes: tr.cdf_unit_bytes.unwrap_or(1.0),
        },
        Some(o) => {
            return Err(format!(
                "{}: `cdf_format` = \"{o}\": expected `hpcc` or `homa`",
                ctx.file
            ));
        }
    };
    SizeCdf::load(&p, fmt)
}
