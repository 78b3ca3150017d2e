//! TOML scenario files: what to simulate (topology, network model, congestion control,
//! traffic, outputs), every key validated.
//!
//! Unknown keys and type errors are reported by the TOML reader with the line and the key;
//! values with units (`"100Gbps"`, `"1us"`, `"32MiB"`) are checked here and reported as
//! `file:line: key = value: problem`. See `docs/src/scenarios.md` for every key and its default.

pub mod capture;
pub mod cc;
pub mod default;
mod events;
mod keys;
mod topology;
mod traffic;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::cc::CcConfig;
use crate::cc::none::NoneWindow;
use crate::config::{BufferConfig, BufferMode, CoreConfig, LossRecovery, NetField, SchedulerKind};
use crate::engine::packet::Framing;
use crate::metrics::stats::SizeBins;
use crate::registry::NetConfig;
use crate::registry::SchemeConfigs;
use crate::topology::TopologySpec;
use crate::units::{parse_bytes, parse_rate_bps, parse_time_ps};
use crate::workload::FlowSpec;
use crate::workload::stream::FlowStream;
use topology::resolve_topology;
use traffic::resolve_traffic;

pub use crate::scheme::config::Text;

type S = crate::scheme::config::Value;

/// `seed`: a non-negative TOML integer or a decimal string of a `u64` (`"18446744073709551615"`;
/// `--set seed=N` above 2^63 − 1 arrives as such a string).
fn seed_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let msg = "expected an integer 0 ..= 18446744073709551615 (above 9223372036854775807 as a string: \"18446744073709551615\")";
    let bad = |got: String| serde::de::Error::custom(format!("seed {got}: {msg}"));
    match toml::Value::deserialize(d)? {
        toml::Value::Integer(i) => u64::try_from(i).map(Some).map_err(|_| bad(i.to_string())),
        toml::Value::String(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => t
            .parse::<u64>()
            .map(Some)
            .map_err(|_| bad(format!("\"{t}\""))),
        toml::Value::String(t) => Err(bad(format!("\"{t}\""))),
        v => {
            let t = v.type_str();
            let a = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            Err(bad(format!("= {v} ({a} {t})")))
        }
    }
}

/// Builds [`RawScenario`] from the scheme registry (`crate::registry::registry!`): the core
/// sections, then one table per scheme with a configuration of its own (its
/// [`crate::scheme::SchemeConfig::Raw`]), in registry order.
macro_rules! raw_scenario {
    ($($v:ident, $f:ident => $sw:ty, $mode:ident $(, $cfg:ty)?;)*) => {
        /// Raw scenario file, as written by the user.
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawScenario {
            /// Scenario name (used for the default output directory).
            pub name: Option<String>,
            /// Master seed: an integer, or a decimal string for seeds above TOML's integer
            /// range (2^63 − 1), so every `u64` can be given.
            #[serde(default, deserialize_with = "seed_value")]
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
            $($(
                #[doc = concat!("`[", stringify!($f), "]` (see [`", stringify!($cfg), "`]).")]
                #[serde(default)]
                pub $f: <$cfg as crate::scheme::SchemeConfig>::Raw,
            )?)*
            /// Traffic generators (array of tables).
            #[serde(default)]
            pub traffic: Vec<RawTraffic>,
            /// Routing section (reconvergence after link failures).
            #[serde(default)]
            pub routing: events::RawRouting,
            /// Link failures and repairs (array of tables).
            #[serde(default)]
            pub event: Vec<events::RawEvent>,
            /// Output options.
            #[serde(default)]
            pub output: RawOutput,
            /// Packet capture.
            #[serde(default)]
            pub capture: capture::RawCapture,
            /// Variants to run side by side (each applies its `set` overrides to this
            /// scenario).
            #[serde(default)]
            pub compare: Vec<RawCompare>,
        }

        impl RawScenario {
            /// The scheme tables, for [`crate::registry::SchemeConfigs::resolve_tables`].
            pub fn scheme_raws(&self) -> crate::registry::SchemeRaws<'_> {
                crate::registry::SchemeRaws {
                    $($( $f: {
                        let r: &<$cfg as crate::scheme::SchemeConfig>::Raw = &self.$f;
                        r
                    }, )?)*
                }
            }
        }
    };
}

crate::registry::registry!(raw_scenario);

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

/// A name usable as one directory component: not empty, no path separator, not `.`/`..`.
fn is_plain_name(n: &str) -> bool {
    !n.trim().is_empty() && !n.contains(['/', '\\']) && n != "." && n != ".."
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
        if !is_plain_name(&c.name) {
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
    /// `star`, `dumbbell`, `leaf_spine`, `two_dc`, `fat_tree`, `three_tier`, `hpcc_fat_tree`,
    /// `file`.
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
    /// Pods (three_tier).
    pub pods: Option<u32>,
    /// ToRs per pod (three_tier).
    pub tors_per_pod: Option<u32>,
    /// Aggregation switches per pod (three_tier).
    pub aggs_per_pod: Option<u32>,
    /// Cores per aggregation switch plane (three_tier).
    pub cores_per_agg: Option<u32>,
    /// Host link rate.
    pub host_rate: Option<S>,
    /// Host link one-way delay.
    pub host_delay: Option<S>,
    /// Switch-to-switch link rate.
    pub fabric_rate: Option<S>,
    /// Switch-to-switch link delay.
    pub fabric_delay: Option<S>,
    /// Gateway–spine link rate (two_dc; default `fabric_rate`).
    pub gateway_rate: Option<S>,
    /// Gateway–spine link one-way delay (two_dc; default `fabric_delay`).
    pub gateway_delay: Option<S>,
    /// Inter-DC (gateway–gateway) link rate (two_dc; default `gateway_rate`).
    pub dci_rate: Option<S>,
    /// Inter-DC (gateway–gateway) link one-way delay (two_dc; required).
    pub dci_delay: Option<S>,
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
    /// Switches queue ACKs in queue 0 too (HPCC-sim `SwitchNode` `AckHighPrio`).
    pub switch_ack_high_prio: Option<bool>,
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
    /// Per-switch buffer sizes replacing `size` at those switches: keys are switch node ids
    /// (`152 = "60MB"`) or `gateways` (both gateways of a `two_dc` topology).
    pub switch_sizes: Option<std::collections::BTreeMap<String, S>>,
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
    /// DCTCP: start at `min_rate` and grow exponentially (TCP slow start; PB-FS's SS baseline).
    pub slow_start: Option<bool>,
    /// Window: `"none"`, `"bdp"`/`"1bdp"`/`"0.5bdp"`, or a size like `"100KB"` (none, dcqcn,
    /// timely, dctcp).
    pub window: Option<S>,
    /// With a window, scale it by rate/line rate (HPCC-sim VAR_WIN; default true).
    pub var_win: Option<bool>,
    /// Which BDP a window is: `global` (the topology's maximum, HPCC-sim `GLOBAL_T 1`, the
    /// default) or `pair` (the flow's own path, `GLOBAL_T 0`).
    pub window_scope: Option<S>,
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
    /// `cc.tcd`: the controller's hold mode (DCQCN+TCD / TIMELY+TCD, [`crate::cc::hold`]);
    /// needs a scheme that makes hold marks (TCD: `[tcd] enabled`).
    #[serde(rename = "tcd")]
    pub hold: Option<bool>,
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
    /// Offered load, fraction of host link capacity (or, with `load_basis = "fabric"`, of
    /// the edge switches' uplink capacity).
    pub load: Option<Spanned<f64>>,
    /// What `load` is a fraction of: `host` (each host link; default) or `fabric` (the
    /// busiest edge switch's uplinks, [`crate::topology::TopologySpec::uplink_load_per_host_load`]).
    pub load_basis: Option<S>,
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
    /// Single incast: the senders start one by one, evenly over `sync_window` in list order,
    /// instead of at random times in it.
    pub stagger: Option<bool>,
    /// Repeated incast: one event every this long instead of Poisson events (`load` unused).
    pub period: Option<S>,
    /// Repeated incast: `degree` may exceed the hosts other than the receiver; senders then
    /// run several flows each.
    pub repeat_senders: Option<bool>,
    /// Repeated incast: bytes per event, split over its `degree` flows (instead of `size`).
    pub total_size: Option<S>,
    /// Long-lived: each host receives from this many distinct random senders (instead of
    /// `pairs`).
    pub fan_in: Option<Spanned<usize>>,
    /// Long-lived pairs `[[src, dst], …]`.
    pub pairs: Option<Spanned<Vec<Vec<u32>>>>,
    /// Explicit senders of a single incast (`incast` with `at`).
    pub senders: Option<Spanned<Vec<u32>>>,
    /// Time of a single incast event (with `senders` and `receivers = [r]`).
    pub at: Option<S>,
    /// HPCC flow file (flow_file).
    pub file: Option<S>,
    /// Poisson / lognormal on a `two_dc` topology: fraction of flows whose destination is in
    /// the other data center (the rest stay in the sender's); default: uniform over all hosts.
    pub remote_fraction: Option<Spanned<f64>>,
    /// Priority group for generated flows (default 3).
    pub prio: Option<Spanned<u8>>,
    /// `false` switches the generator off (its keys are still checked): a sweep series
    /// without it, e.g. a baseline without the incast.
    pub enabled: Option<bool>,
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
    /// Size bins per destination port too (`by_dport[…].bins` in `summary.json`; default
    /// false).
    pub dport_bins: Option<bool>,
    /// Ports whose queue is recorded in `queues.csv`: `[[switch_node, port], …]`, or the
    /// string `"tor_downlinks"` for every server-facing port of every ToR.
    pub queues: Option<toml::Value>,
    /// Queue time-series interval (default 1us).
    pub queue_interval: Option<S>,
    /// Meter goodput per sender too (`sender_throughput.csv`, `fairness` in the summary).
    pub sender_throughput: Option<bool>,
    /// File format of the tables: `csv` (default) or `parquet`.
    pub format: Option<S>,
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
    /// Write flows.csv (`flows.parquet` in the Parquet format).
    pub flows_csv: bool,
    /// File format of the tables (`output.format`).
    pub format: crate::metrics::parquet::OutputFormat,
    /// Size-bin statistics per destination port in the summary (`output.dport_bins`).
    pub dport_bins: bool,
    /// Host link rate of the first host (for reports).
    pub host_rate_bps: u64,
    /// `stop` was given: flows still running at that time are expected, not a failure.
    pub stop_set: bool,
    /// Warnings found while resolving (harmless but probably unintended settings).
    pub warnings: Vec<String>,
    /// The scenario document with every override applied (recorded in `summary.json`); a
    /// `[[compare]]` variant's has no `[[compare]]`, so it re-runs that variant alone.
    pub document: toml::Table,
    /// Files the scenario reads (flow, CDF, topology files), resolved paths; outputs must never
    /// overwrite them.
    pub inputs: Vec<PathBuf>,
}

/// Resolution context: file name and text, for `file:line` messages, and the overrides that
/// were applied (errors in an overridden key cite the `--set`, not a line of a document the
/// user never saw).
struct Ctx<'a> {
    file: &'a str,
    /// The text that was deserialized (the user's text, or the re-serialized document with the
    /// overrides applied).
    text: &'a str,
    /// The user's own text, for finding a key's line when `text` is re-serialized.
    orig: &'a str,
    /// `key=value` overrides, in order.
    sets: &'a [String],
    /// The document with the overrides applied: which keys the user gave (an error about a
    /// key left at its default says so).
    doc: &'a toml::Table,
    dir: PathBuf,
    /// Warnings found while resolving (printed by the caller, kept in the scenario).
    warnings: std::cell::RefCell<Vec<String>>,
    /// Input files named by the scenario (see [`Scenario::inputs`]).
    inputs: std::cell::RefCell<Vec<PathBuf>>,
    /// The `buffer.switch_sizes` entry that sized each switch: (node, `buffer.switch_sizes.K`),
    /// so an error about one switch's buffer cites where that entry was given.
    switch_size_keys: std::cell::RefCell<Vec<(u32, String)>>,
}

impl crate::scheme::Fields for Ctx<'_> {
    fn err(&self, v: &S, key: &str, msg: impl std::fmt::Display) -> String {
        Ctx::err(self, v, key, msg)
    }
    fn err_key(&self, key: &str, msg: impl std::fmt::Display) -> String {
        Ctx::err_key(self, key, msg)
    }
}

impl Ctx<'_> {
    fn line(&self, off: usize) -> usize {
        self.text[..off.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }
    /// The `--set` that gave `key` its value, if any (the last one wins).
    /// The last `--set` that set `key` itself or a table/array holding it (`--set
    /// output.queues=[[0, 0]]` for `output.queues[0]`).
    fn set_for(&self, key: &str) -> Option<&str> {
        let norm = normalize_key(key);
        self.sets.iter().rev().map(String::as_str).find(|s| {
            s.split_once('=').is_some_and(|(k, _)| {
                let k = normalize_key(k.trim());
                norm == k || norm.strip_prefix(&k).is_some_and(|r| r.starts_with('.'))
            })
        })
    }
    /// Where `key` was given: `--set \`k=v\``, `file:line`, or just `file`. `span` is the
    /// value's position in `text`, when known.
    fn at(&self, key: &str, span: Option<std::ops::Range<usize>>) -> String {
        if let Some(s) = self.set_for(key) {
            return format!("{}: --set `{s}`", self.file);
        }
        // An element of an array value changed by a `--set` (`--set traffic.0.senders.1=9`):
        // the value the error is about is that override's result.
        if let Some(toml::Value::Array(a)) = self.value(key)
            && !a.iter().all(toml::Value::is_table)
            && let Some(s) = self.set_inside(key)
        {
            return format!("{}: --set `{s}`", self.file);
        }
        let line = match span {
            Some(r) if self.sets.is_empty() => Some(self.line(r.start)),
            _ => find_key_line(self.orig, key),
        };
        match line {
            Some(l) => format!("{}:{l}", self.file),
            // Not in the file: a `--set` of an element inside the key's value (`--set
            // buffer.switch_sizes.3=1MB` for `buffer.switch_sizes`) is where it came from.
            None => match self.set_inside(key) {
                Some(s) => format!("{}: --set `{s}`", self.file),
                None => self.file.to_string(),
            },
        }
    }
    /// The last `--set` that set an element inside `key`'s value.
    fn set_inside(&self, key: &str) -> Option<&str> {
        let norm = normalize_key(key);
        self.sets.iter().rev().map(String::as_str).find(|s| {
            s.split_once('=').is_some_and(|(k, _)| {
                normalize_key(k.trim())
                    .strip_prefix(&norm)
                    .is_some_and(|r| r.starts_with('.'))
            })
        })
    }
    fn err(&self, s: &S, key: &str, msg: impl std::fmt::Display) -> String {
        format!(
            "{}: `{key}` = \"{}\": {msg}",
            self.at(key, Some(s.span())),
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
            "{}: `{key}` = {:?}: {msg}",
            self.at(key, Some(v.span())),
            v.get_ref()
        )
    }
    /// An error about `key` whose value has no recorded position (found by scanning the file).
    /// A key the user did not give is marked as its default, so nobody hunts for a line that
    /// is not there.
    fn err_key(&self, key: &str, msg: impl std::fmt::Display) -> String {
        let note = if self.given(key) {
            ""
        } else {
            " (not set: its default)"
        };
        format!("{}: `{key}`{note}: {msg}", self.at(key, None))
    }
    /// An error about `key` caused by the entry `entry` inside its value (a
    /// `buffer.switch_sizes` entry): cites the `--set` that gave the entry, if one did, else
    /// where `key` was given, as [`Ctx::err_key`].
    fn err_entry(&self, key: &str, entry: &str, msg: impl std::fmt::Display) -> String {
        match self.set_for(entry) {
            Some(s) => format!("{}: --set `{s}`: `{key}`: {msg}", self.file),
            None => self.err_key(key, msg),
        }
    }
    /// An error about the `buffer.switch_sizes` entry of switch `node` (see
    /// [`Ctx::err_entry`]).
    fn err_switch_size(&self, node: u32, msg: impl std::fmt::Display) -> String {
        let entry = self
            .switch_size_keys
            .borrow()
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, k)| k.clone());
        match entry {
            Some(e) => self.err_entry("buffer.switch_sizes", &e, msg),
            None => self.err_key("buffer.switch_sizes", msg),
        }
    }
    /// The value of `key` (`section.key`, `array[i].key`, `array.i.key`) in the document,
    /// after the overrides.
    fn value(&self, key: &str) -> Option<&toml::Value> {
        let norm = normalize_key(key);
        let mut cur: Option<&toml::Value> = None;
        for (n, part) in norm.split('.').enumerate() {
            let next = match (n, cur) {
                (0, _) => self.doc.get(part),
                (_, Some(toml::Value::Table(t))) => t.get(part),
                (_, Some(toml::Value::Array(a))) => {
                    part.parse::<usize>().ok().and_then(|i| a.get(i))
                }
                _ => None,
            };
            cur = Some(next?);
        }
        cur
    }
    /// Whether `key` (`section.key`, `array[i].key`, `array.i.key`) is in the document, after
    /// the overrides.
    fn given(&self, key: &str) -> bool {
        self.value(key).is_some()
    }
    fn warn(&self, msg: String) {
        self.warnings.borrow_mut().push(msg);
    }
    fn time(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_time_ps(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    /// The times `parts` (`(key, picoseconds)`) added up, or an error naming every key when
    /// the sum is beyond [`crate::units::MAX_TIME_PS`]: each value is capped on its own, but a
    /// start plus a window or a duration could still pass the end of the simulator's clock.
    fn time_sum(&self, parts: &[(&str, u64)]) -> Result<u64, String> {
        let sum: u128 = parts.iter().map(|&(_, v)| v as u128).sum();
        if sum <= crate::units::MAX_TIME_PS as u128 {
            return Ok(sum as u64);
        }
        let last = parts.last().map_or("", |&(k, _)| k);
        let names: Vec<String> = parts.iter().map(|(k, _)| format!("`{k}`")).collect();
        Err(format!(
            "{}: {} = {} is beyond the simulator's time range, 1e7s (about 116 days): \
             every flow must start within it",
            self.at(last, None),
            names.join(" + "),
            format_args!("{:.3}s", sum as f64 / crate::units::SEC as f64)
        ))
    }
    fn rate(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_rate_bps(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    /// A time that may be absent: `None` when the key is not given.
    fn opt_time(&self, s: &Option<S>, key: &str) -> Result<Option<u64>, String> {
        s.as_ref()
            .map(|v| parse_time_ps(v.get_ref()).map_err(|e| self.err(v, key, e)))
            .transpose()
    }
    /// A rate that may be absent: `None` when the key is not given.
    fn opt_rate(&self, s: &Option<S>, key: &str) -> Result<Option<u64>, String> {
        s.as_ref()
            .map(|v| parse_rate_bps(v.get_ref()).map_err(|e| self.err(v, key, e)))
            .transpose()
    }
    fn bytes(&self, s: &Option<S>, key: &str, default: u64) -> Result<u64, String> {
        match s {
            None => Ok(default),
            Some(v) => parse_bytes(v.get_ref()).map_err(|e| self.err(v, key, e)),
        }
    }
    fn path(&self, p: &str) -> PathBuf {
        let pb = PathBuf::from(p);
        let pb = if pb.is_absolute() {
            pb
        } else {
            self.dir.join(pb)
        };
        self.inputs.borrow_mut().push(pb.clone());
        pb
    }
}

/// `traffic[1].load` → `traffic.1.load` (the `--set` spelling).
fn normalize_key(k: &str) -> String {
    k.replace('[', ".").replace(']', "")
}

/// The 1-based line of `key` (`section.key`, `array[i].key` or a top-level key) in TOML
/// `text`, found by scanning table headers and `key =` lines; `None` when the key is not
/// written there (a default, an inline table, a dotted key).
pub fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let norm = normalize_key(key);
    let mut parts: Vec<&str> = norm.split('.').collect();
    // A trailing array index (`output.queues.2`) names an element of the key's value.
    while parts.len() > 1 && parts.last().is_some_and(|p| p.parse::<usize>().is_ok()) {
        parts.pop();
    }
    let leaf = parts.pop()?;
    // Wanted table: name and, for an array of tables, the element index.
    let (want_table, want_idx) = match parts.as_slice() {
        [] => (String::new(), None),
        [t] => (t.to_string(), None),
        [t, i] if i.parse::<usize>().is_ok() => (t.to_string(), i.parse::<usize>().ok()),
        more => (more.join("."), None),
    };
    let mut table = String::new();
    let mut idx: Option<usize> = None;
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    for (n, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if let Some(h) = l.strip_prefix("[[") {
            let name = h.split("]]").next().unwrap_or("").trim().to_string();
            let c = counts.entry(name.clone()).or_insert(0);
            idx = Some(*c);
            *c += 1;
            table = name;
            continue;
        }
        if let Some(h) = l.strip_prefix('[') {
            table = h.split(']').next().unwrap_or("").trim().to_string();
            idx = None;
            continue;
        }
        let Some((k, _)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        if k == leaf && table == want_table && (want_idx.is_none() || idx == want_idx) {
            return Some(n + 1);
        }
    }
    None
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
        if parts[0] == "compare" {
            return Err(format!(
                "--set `{s}`: `[[compare]]` variants cannot be overridden; edit the file, or run \
                 one variant by giving its overrides as --set on a file without [[compare]]"
            ));
        }
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
/// against `dir`; `sets` are `key=value` overrides (`--set`, `[[compare]]`), applied in order.
/// Every problem found is reported, one per line; warnings are in [`Scenario::warnings`].
pub fn from_str(text: &str, file: &str, dir: &Path, sets: &[String]) -> Result<Scenario, String> {
    from_str_as(text, file, dir, sets, false).map(|(sc, _)| sc)
}

/// Like [`from_str`], but the flows of the `[[traffic]]` generators come as a lazy
/// [`FlowStream`] (the same flows in the same order as [`Scenario::flows`] would hold, in
/// O(hosts) memory for open-loop and repeated incast traffic) and [`Scenario::flows`] is left
/// empty. The same checks, errors and warnings (the warning counting the flows that start at
/// or after `stop` takes one pass over a clone of the stream, which also gathers
/// the stream's [`crate::workload::shape::FlowShape`], kept in the stream: [`FlowStream::shape`]); an empty workload, or one that starts entirely after `stop`,
/// is an error (the stream's first flow tells).
pub fn from_str_streaming(
    text: &str,
    file: &str,
    dir: &Path,
    sets: &[String],
) -> Result<(Scenario, FlowStream), String> {
    from_str_as(text, file, dir, sets, true)
        .map(|(sc, st)| (sc, st.expect("a streaming resolve returns the stream")))
}

/// [`from_str`] (`streaming` false: the flows in [`Scenario::flows`]) or
/// [`from_str_streaming`] (true: the flows as a stream).
fn from_str_as(
    text: &str,
    file: &str,
    dir: &Path,
    sets: &[String],
    streaming: bool,
) -> Result<(Scenario, Option<FlowStream>), String> {
    let mut doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{file}: {e}"))?;
    let owned;
    let eff = if sets.is_empty() {
        text
    } else {
        apply_overrides(&mut doc, sets).map_err(|e| format!("{file}: {e}"))?;
        owned = toml::to_string(&doc).map_err(|e| format!("{file}: {e}"))?;
        owned.as_str()
    };
    let raw: RawScenario = match toml::from_str(eff) {
        Ok(r) => r,
        Err(e) => {
            // The file's own unknown keys first, each with its line (never blamed on a
            // `--set`); then, on the file with those lines blanked, every `--set` that names
            // an unknown key on its own. Other errors: attributed by `deserialize_error`.
            let mut msgs = Vec::new();
            let cleaned = match toml::from_str::<RawScenario>(text) {
                Err(e0) if e0.message().starts_with("unknown field") => {
                    let (more, cleaned) = more_unknown_keys(text, file, &e0);
                    msgs.push(format!("{file}: {e0}"));
                    msgs.extend(more);
                    cleaned
                }
                _ => {
                    msgs.push(deserialize_error(text, file, sets, &e));
                    text.to_string()
                }
            };
            for s in sets {
                if let Some(m) = set_unknown_key(&cleaned, file, s) {
                    msgs.push(m);
                }
            }
            let mut seen = std::collections::HashSet::new();
            msgs.retain(|m| seen.insert(m.clone()));
            return Err(msgs.join("\n"));
        }
    };
    let ctx = Ctx {
        file,
        text: eff,
        orig: text,
        sets,
        doc: &doc,
        dir: dir.to_path_buf(),
        warnings: Default::default(),
        inputs: Default::default(),
        switch_size_keys: Default::default(),
    };
    let (mut sc, stream) = resolve(raw, &ctx, streaming)?;
    sc.warnings = ctx.warnings.into_inner();
    let mut seen = std::collections::HashSet::new();
    sc.warnings.retain(|w| seen.insert(w.clone()));
    sc.inputs = ctx.inputs.into_inner();
    doc.remove("compare");
    sc.document = doc;
    Ok((sc, stream))
}

/// After an unknown-key error, the file's other unknown keys (serde stops at the first): blank
/// the offending line (offsets and line numbers stay) and read again, up to 20 times. Stops at
/// the first error of another kind, or when blanking breaks the TOML (a multi-line value).
/// Returns the messages and the text with every reported line blanked.
fn more_unknown_keys(text: &str, file: &str, first: &toml::de::Error) -> (Vec<String>, String) {
    let mut out = Vec::new();
    let mut work = text.to_string();
    let mut e = first.clone();
    for _ in 0..20 {
        if !e.message().starts_with("unknown field") {
            break;
        }
        let Some(span) = e.span() else { break };
        // Blank whole lines from the span's line start to its line end.
        let start = work[..span.start].rfind('\n').map_or(0, |i| i + 1);
        let end = work[span.end..]
            .find('\n')
            .map_or(work.len(), |i| span.end + i);
        let blanked = |end: usize| {
            let mut w = work.clone();
            let blank: String = w[start..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' })
                .collect();
            w.replace_range(start..end, &blank);
            w.parse::<toml::Table>().is_ok().then_some(w)
        };
        // An unknown table (`[foo]`, `[[foo]]`): blank its keys too, up to the next header,
        // or they would be read as keys of the table before it and reported against that.
        // A line starting with `[` inside the table (a nested array, a multi-line string) is
        // not a header: the first candidate after which the TOML still parses is.
        let next = if work[start..end].trim_start().starts_with('[') {
            let mut ends: Vec<usize> = work[end..]
                .match_indices('\n')
                .map(|(i, _)| end + i)
                .filter(|&i| {
                    work[i + 1..]
                        .trim_start_matches([' ', '\t'])
                        .starts_with('[')
                })
                .collect();
            ends.push(work.len());
            ends.into_iter().find_map(blanked)
        } else {
            blanked(end)
        };
        let Some(next) = next else { break };
        work = next;
        match toml::from_str::<RawScenario>(&work) {
            Ok(_) => break,
            Err(next) => {
                if next.message().starts_with("unknown field") {
                    out.push(format!("{file}: {next}"));
                }
                e = next;
            }
        }
    }
    (out, work)
}

/// The unknown-key error that the single override `set` causes on `text` (the file with its
/// own unknown keys blanked), cited as that `--set`; `None` if it names a known key.
fn set_unknown_key(text: &str, file: &str, set: &str) -> Option<String> {
    let mut d = text.parse::<toml::Table>().ok()?;
    apply_overrides(&mut d, std::slice::from_ref(&set.to_string())).ok()?;
    let t = toml::to_string(&d).ok()?;
    match toml::from_str::<RawScenario>(&t) {
        Err(e) if e.message().starts_with("unknown field") => {
            Some(format!("{file}: --set `{set}`: {}", e.message().trim_end()))
        }
        _ => None,
    }
}

/// A TOML reader error in the document with overrides applied, attributed to the user's
/// file (with its own line) when the file alone has it, else to the first `--set` that
/// causes it on its own.
fn deserialize_error(orig: &str, file: &str, sets: &[String], e: &toml::de::Error) -> String {
    if sets.is_empty() {
        return format!("{file}: {e}");
    }
    if let Err(e0) = toml::from_str::<RawScenario>(orig)
        && e0.message() == e.message()
    {
        return format!("{file}: {e0}");
    }
    for s in sets {
        let Ok(mut d) = orig.parse::<toml::Table>() else {
            break;
        };
        if apply_overrides(&mut d, std::slice::from_ref(s)).is_err() {
            continue;
        }
        let Ok(t) = toml::to_string(&d) else { continue };
        if let Err(e1) = toml::from_str::<RawScenario>(&t)
            && e1.message() == e.message()
        {
            return format!("{file}: --set `{s}`: {}", e1.message().trim_end());
        }
    }
    format!("{file} (with --set overrides): {}", e.message().trim_end())
}

/// Load a scenario file.
pub fn load(path: &Path, sets: &[String]) -> Result<Scenario, String> {
    let text = crate::fsutil::read_text(path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_str(&text, &path.display().to_string(), &dir, sets)
}

/// Load a scenario file with its flows as a lazy stream ([`from_str_streaming`]).
pub fn load_streaming(path: &Path, sets: &[String]) -> Result<(Scenario, FlowStream), String> {
    let text = crate::fsutil::read_text(path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_str_streaming(&text, &path.display().to_string(), &dir, sets)
}

/// For "cannot read" messages: how a relative input path was resolved.
fn relative_hint(p: &str) -> &'static str {
    if Path::new(p).is_absolute() {
        ""
    } else {
        " (a relative path is taken relative to the scenario file's directory)"
    }
}

/// Collects every error of a resolution instead of stopping at the first.
#[derive(Default)]
struct Errors(Vec<String>);

impl Errors {
    /// The value of `r`, or `None` after recording its error.
    fn take<T>(&mut self, r: Result<T, String>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.0.push(e);
                None
            }
        }
    }
}

/// Resolve a scenario in named steps; every step runs (with defaults standing in for a failed
/// one) so that all problems are reported together, one per line. With `streaming`, the flows
/// are returned as a stream and [`Scenario::flows`] is empty; else they are collected there
/// and the stream is `None`.
fn resolve(
    raw: RawScenario,
    ctx: &Ctx,
    streaming: bool,
) -> Result<(Scenario, Option<FlowStream>), String> {
    let mut errs = Errors::default();
    // The scheme tables first: which keys apply depends on the schemes' settings (their
    // errors are reported in the order of the sections, below).
    let (schemes, scheme_errs) = SchemeConfigs::resolve_tables(&raw.scheme_raws(), ctx);
    keys::check_applicable(&raw, &schemes, ctx, &mut errs.0);
    let topo = errs.take(resolve_topology(&raw.topology, ctx));
    if let Some(t) = &topo {
        warn_topology(t, &raw, ctx);
    }
    // The host link rate as built (a topology file or the fixed HPCC fat tree decide it).
    let host_rate = topo
        .as_ref()
        .and_then(TopologySpec::host_rate_bps)
        .unwrap_or(100 * crate::units::GBPS);
    let mut net = NetConfig::from(CoreConfig {
        seed: raw.seed.unwrap_or(1),
        ..Default::default()
    });
    errs.take(resolve_network(&raw.network, ctx, &mut net));
    let format = errs
        .take(resolve_format(&raw.output, ctx))
        .unwrap_or_default();
    errs.take(resolve_buffer(&raw.buffer, ctx, &mut net));
    if let Some(t) = &topo {
        errs.take(resolve_switch_sizes(
            &raw.buffer,
            &raw.topology,
            t,
            ctx,
            &mut net,
        ));
    }
    errs.take(resolve_loss_recovery(&raw.loss_recovery, ctx, &mut net));
    errs.take(resolve_timing(&raw, ctx, &mut net));
    let fastest = topo
        .as_ref()
        .and_then(|t| t.max_host_rate_bps())
        .unwrap_or(host_rate);
    let cc = errs.take(resolve_cc(&raw, (host_rate, fastest), ctx, &mut net));
    errs.0.extend(scheme_errs);
    net.schemes = schemes;
    apply_scheme_defaults(&raw.network, &mut net);
    let cc = match cc {
        Some(c) => errs.take(apply_cc_hold(c, &raw.cc, &net, ctx)),
        None => None,
    };
    for i in net.issues() {
        errs.0.push(issue_error(&i, ctx));
    }
    let mut flows = Vec::new();
    let mut stream = None;
    if let Some(topo) = &topo {
        errs.take(check_rtt(topo, &net, cc.as_ref(), ctx));
        for (key, msg) in net.schemes.topology_issues(topo) {
            errs.0.push(ctx.err_key(key, msg));
        }
        errs.take(resolve_queue_monitor(&raw.output, topo, ctx, &mut net));
        net.capture = errs
            .take(capture::resolve_capture(&raw.capture, topo, ctx))
            .flatten();
        errs.take(events::resolve_events(
            &raw.event,
            &raw.routing,
            topo,
            ctx,
            &mut net,
        ));
        (flows, stream) = resolve_flows(&raw, topo, &net, host_rate, streaming, ctx, &mut errs);
    }
    let bins = errs.take(resolve_bins(&raw.output, ctx));
    if let Some(n) = &raw.name
        && !is_plain_name(n)
    {
        errs.0.push(format!(
            "{}: `name` = {n:?}: must be a plain name (the default output directory is out/NAME): \
             not empty, no `/` or `\\`, not `.` or `..`",
            ctx.file
        ));
    }
    if !errs.0.is_empty() {
        return Err(errs.0.join("\n"));
    }
    let (Some(topo), Some(cc), Some(bins)) = (topo, cc, bins) else {
        return Err(format!(
            "{}: internal error: a step failed without an error",
            ctx.file
        ));
    };
    let sc = Scenario {
        name: raw.name.unwrap_or_else(|| "scenario".into()),
        topo,
        net,
        cc,
        flows,
        bins,
        flows_csv: raw.output.flows_csv.unwrap_or(true),
        format,
        dport_bins: raw.output.dport_bins.unwrap_or(false),
        host_rate_bps: host_rate,
        stop_set: raw.stop.is_some(),
        warnings: Vec::new(),
        document: toml::Table::new(),
        inputs: Vec::new(),
    };
    Ok((sc, stream))
}

/// Warnings about the topology as built: a link that loses every packet, host links of
/// different rates (every `load` is a fraction of the slowest).
fn warn_topology(t: &TopologySpec, raw: &RawScenario, ctx: &Ctx) {
    if let Some(l) = t.links.iter().find(|l| l.error_rate >= 1.0) {
        ctx.warn(format!(
            "{}: topology: the link {}–{} has error rate 1: it loses every packet, so flows across it can never finish (the run will stop with a no-progress diagnosis)",
            ctx.file, l.a, l.b
        ));
    }
    let rates = t.links.iter().filter(|l| {
        t.kinds[l.a as usize] == crate::topology::NodeKind::Host
            || t.kinds[l.b as usize] == crate::topology::NodeKind::Host
    });
    let (lo, hi) = rates.fold((u64::MAX, 0), |(lo, hi), l| {
        (lo.min(l.rate_bps), hi.max(l.rate_bps))
    });
    if lo < hi && !raw.traffic.is_empty() {
        ctx.warn(format!(
            "{}: host links have different rates ({} to {}): every traffic `load` is a fraction of the slowest, {}",
            ctx.file,
            crate::units::fmt_rate(lo),
            crate::units::fmt_rate(hi),
            crate::units::fmt_rate(lo)
        ));
    }
}

/// The flows of the `[[traffic]]` generators on `topo`: a list, or with `streaming` a lazy
/// stream (see [`resolve`]); errors go to `errs`.
fn resolve_flows(
    raw: &RawScenario,
    topo: &TopologySpec,
    net: &NetConfig,
    host_rate: u64,
    streaming: bool,
    ctx: &Ctx,
    errs: &mut Errors,
) -> (Vec<FlowSpec>, Option<FlowStream>) {
    let mut flows = Vec::new();
    let mut stream = None;
    // Sites for `remote_fraction`: the data center of every host of a two-DC topology
    // (hosts 0..H/2 in DC 0, the rest in DC 1).
    let sites = (raw.topology.kind.get_ref() == "two_dc").then(|| {
        let half = (topo.hosts().len() / 2).max(1) as u32;
        (0..topo.num_nodes() as u32)
            .map(|n| n / half)
            .collect::<Vec<u32>>()
    });
    let st = resolve_traffic(
        &raw.traffic,
        topo,
        sites.as_deref(),
        net,
        host_rate,
        ctx,
        &mut errs.0,
    );
    if errs.0.is_empty() {
        errs.take(check_first_flow(st.peek(), raw, net, ctx));
    }
    if streaming {
        if errs.0.is_empty() && net.stop_ps != u64::MAX {
            // One pass over a clone (nothing kept), only when a `stop` is set; the memory
            // check reuses its shape instead of a pass of its own.
            let shape = flow_shape(st.clone(), net.stop_ps);
            warn_after_stop(&shape, net, ctx);
            let mut st = st;
            st.set_shape(Some(shape));
            stream = Some(st);
        } else {
            stream = Some(st);
        }
    } else if errs.0.is_empty()
        && errs
            .take(crate::workload::traffic::check_list_memory(
                st.capacity_hint() as f64,
                crate::runguard::bytes_per_flow(),
            ))
            .is_some()
    {
        flows = st.into_vec();
        warn_after_stop(&flow_shape(flows.iter().cloned(), net.stop_ps), net, ctx);
    }
    (flows, stream)
}

/// The scenario key of a [`NetField`].
fn field_key(f: NetField) -> &'static str {
    match f {
        NetField::Mtu => "network.mtu",
        NetField::IntBytes => "network.int_bytes",
        NetField::QueuesPerPort => "network.queues_per_port",
        NetField::DrrQuantum => "network.drr_quantum",
        NetField::BufferSize => "buffer.size",
        NetField::DtAlpha => "buffer.dt_alpha",
        NetField::SwitchBufferSize(_) => "buffer.switch_sizes",
        NetField::GbnRto => "loss_recovery.rto",
        NetField::GbnNackInterval => "loss_recovery.nack_interval",
        NetField::IrnRtoLow => "loss_recovery.rto_low",
        NetField::IrnRtoHigh => "loss_recovery.rto_high",
        NetField::BufferSample => "output.buffer_interval",
        NetField::Stop => "stop",
        NetField::Ecn => "ecn.kmax",
        NetField::EcnPmax => "ecn.pmax",
        NetField::CnpInterval => "network.cnp_interval",
        NetField::QueueMonitorInterval => "output.queue_interval",
        NetField::SwitchAckHighPrio => "network.switch_ack_high_prio",
        NetField::Scheme(key) => key,
    }
}

fn issue_error(i: &crate::config::ConfigIssue, ctx: &Ctx) -> String {
    match i.field {
        NetField::SwitchBufferSize(node) => ctx.err_switch_size(node, &i.message),
        f => ctx.err_key(field_key(f), &i.message),
    }
}

/// `output.format`: the file format of the tables.
fn resolve_format(
    o: &RawOutput,
    ctx: &Ctx,
) -> Result<crate::metrics::parquet::OutputFormat, String> {
    match &o.format {
        None => Ok(Default::default()),
        Some(f) => crate::metrics::parquet::OutputFormat::parse(f.get_ref())
            .ok_or_else(|| ctx.err(f, "output.format", "expected `csv` or `parquet`")),
    }
}

/// `[topology]`: rates and delays (each within the accepted link range), then the shape.
/// `[network]`: packet format, delays, queues, scheduler (range checks: [`NetConfig::issues`]).
fn resolve_network(n: &RawNetwork, ctx: &Ctx, net: &mut NetConfig) -> Result<(), String> {
    net.mtu_bytes = n.mtu.unwrap_or(1000);
    if let Some(f) = &n.framing {
        net.framing = match f.get_ref().as_str() {
            "hpcc" => Framing::Hpcc,
            "ethernet" => Framing::Ethernet,
            _ => return Err(ctx.err(f, "network.framing", "expected `hpcc` or `ethernet`")),
        };
    }
    net.switch_delay_ps = ctx.time(&n.switch_delay, "network.switch_delay", 0)?;
    net.nic_delay_ps = ctx.time(&n.nic_delay, "network.nic_delay", 0)?;
    for (v, key) in [
        (&n.switch_delay, "network.switch_delay"),
        (&n.nic_delay, "network.nic_delay"),
    ] {
        if let Some(s) = v {
            crate::link::check_link_delay(ctx.time(v, key, 0)?)
                .map_err(|e| ctx.err(s, key, e.replace("one-way ", "")))?;
        }
    }
    net.queues_per_port = n.queues_per_port.unwrap_or(8);
    if let Some(s) = &n.scheduler {
        net.scheduler = match s.get_ref().as_str() {
            "rr" => SchedulerKind::RoundRobin,
            "drr" => SchedulerKind::Drr {
                quantum_bytes: n.drr_quantum.unwrap_or(1500),
            },
            _ => return Err(ctx.err(s, "network.scheduler", "expected `rr` or `drr`")),
        };
    }
    Ok(())
}

/// `[buffer]`.
fn resolve_buffer(b: &RawBuffer, ctx: &Ctx, net: &mut NetConfig) -> Result<(), String> {
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
    Ok(())
}

/// `buffer.switch_sizes`: each key a switch node id or `gateways` (the two gateways of a
/// `two_dc` topology, its last two nodes), each value a size. Every bad entry is reported,
/// each citing where it was given (its `--set`, or the file).
fn resolve_switch_sizes(
    b: &RawBuffer,
    t: &RawTopology,
    topo: &TopologySpec,
    ctx: &Ctx,
    net: &mut NetConfig,
) -> Result<(), String> {
    let Some(map) = &b.switch_sizes else {
        return Ok(());
    };
    let mut errs = Vec::new();
    let mut out: Vec<(u32, u64)> = Vec::new();
    for (k, v) in map {
        let key = format!("buffer.switch_sizes.{k}");
        let size = match parse_bytes(v.get_ref()) {
            Ok(x) => x,
            Err(e) => {
                errs.push(ctx.err(v, &key, e));
                continue;
            }
        };
        let nodes: Vec<u32> = if k == "gateways" {
            if t.kind.get_ref() != "two_dc" {
                errs.push(ctx.err(
                    v,
                    &key,
                    format!(
                        "`gateways` names the gateway switches of topology kind \"two_dc\", not of \"{}\"; give switch node ids instead",
                        t.kind.get_ref()
                    ),
                ));
                continue;
            }
            let n = topo.kinds.len() as u32;
            vec![n - 2, n - 1]
        } else {
            match k.parse::<u32>() {
                Ok(n) => vec![n],
                Err(_) => {
                    errs.push(ctx.err(
                        v,
                        &key,
                        format!("`{k}` is neither a switch node id nor `gateways`"),
                    ));
                    continue;
                }
            }
        };
        // The entries so far plus this one, checked against the topology: an error is this
        // entry's (a node that is no switch, or one an earlier entry already sized).
        let mut probe = NetConfig::from(CoreConfig {
            switch_buffer_bytes: out.clone(),
            ..Default::default()
        });
        probe
            .switch_buffer_bytes
            .extend(nodes.iter().map(|&n| (n, size)));
        if let Err(e) = probe.check_switch_buffers(topo) {
            errs.push(ctx.err_entry("buffer.switch_sizes", &key, e));
            continue;
        }
        for n in nodes {
            ctx.switch_size_keys.borrow_mut().push((n, key.clone()));
            out.push((n, size));
        }
    }
    // The good entries stay, so the later checks of their sizes report their problems too.
    net.switch_buffer_bytes = out;
    if !errs.is_empty() {
        return Err(errs.join("\n"));
    }
    Ok(())
}

/// `[loss_recovery]`.
fn resolve_loss_recovery(
    lr: &RawLossRecovery,
    ctx: &Ctx,
    net: &mut NetConfig,
) -> Result<(), String> {
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
    Ok(())
}

/// `stop` and the monitor intervals of `[output]`.
fn resolve_timing(raw: &RawScenario, ctx: &Ctx, net: &mut NetConfig) -> Result<(), String> {
    net.stop_ps = ctx.time(&raw.stop, "stop", u64::MAX)?;
    net.buffer_sample_ps = ctx.time(
        &raw.output.buffer_interval,
        "output.buffer_interval",
        10 * crate::units::US,
    )?;
    net.queue_monitor_ps = ctx.time(
        &raw.output.queue_interval,
        "output.queue_interval",
        crate::units::US,
    )?;
    net.sender_throughput = raw.output.sender_throughput.unwrap_or(false);
    Ok(())
}

/// `[cc]` (preset and overrides), and the features it relies on: INT, ACK priority, CNPs and
/// `[ecn]` marking.
fn resolve_cc(
    raw: &RawScenario,
    (host_rate, fastest): (u64, u64),
    ctx: &Ctx,
    net: &mut NetConfig,
) -> Result<CcConfig, String> {
    let n = &raw.network;
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
    check_cc_consistency(&setup.cc, host_rate, fastest, ctx)?;
    if let Some(w) = &raw.cc.window_scope {
        net.window_per_pair = match w.get_ref().as_str() {
            "global" => false,
            "pair" => true,
            _ => {
                return Err(ctx.err(
                    w,
                    "cc.window_scope",
                    "expected `global` (the topology's max BDP) or `pair` (each flow's own path)",
                ));
            }
        };
    }
    net.int_enabled = setup.int_enabled;
    net.int_bytes = n.int_bytes.unwrap_or(setup.int_bytes);
    net.ack_high_prio = n.ack_high_prio.unwrap_or(setup.ack_high_prio);
    net.switch_ack_high_prio = n.switch_ack_high_prio.unwrap_or(false);
    net.cnp = setup.cnp;
    if let Some(c) = &n.cnp {
        net.cnp = match c.get_ref().as_str() {
            "ack_echo" => crate::config::CnpMode::AckEcho,
            "cnp" => crate::config::CnpMode::Cnp {
                interval_ps: 50 * crate::units::US,
            },
            _ => return Err(ctx.err(c, "network.cnp", "expected `ack_echo` or `cnp`")),
        };
        // DCTCP reads the ECN echo of every ACK and never a CNP: with separate CNPs it would
        // see no mark and never cut.
        if matches!(setup.cc, CcConfig::Dctcp(_)) && net.cnp != crate::config::CnpMode::AckEcho {
            return Err(ctx.err(
                c,
                "network.cnp",
                "`cnp` sends separate CNPs, which DCTCP never reads (it cuts on the ECN echo of \
                 every ACK, so it would never slow down): use `ack_echo`",
            ));
        }
    }
    if let Some(iv) = &n.cnp_interval {
        match &mut net.cnp {
            crate::config::CnpMode::Cnp { interval_ps } => {
                *interval_ps = ctx.time(&n.cnp_interval, "network.cnp_interval", 0)?;
            }
            crate::config::CnpMode::AckEcho => {
                return Err(ctx.err(
                    iv,
                    "network.cnp_interval",
                    "applies only with `network.cnp = \"cnp\"` (this run echoes CE marks in ACKs)",
                ));
            }
        }
    }
    net.ecn = setup.ecn.clone();
    let e = &raw.ecn;
    if e.kmin.is_none() && (e.kmax.is_some() || e.pmax.is_some()) {
        let k = if e.kmax.is_some() {
            "ecn.kmax"
        } else {
            "ecn.pmax"
        };
        return Err(ctx.err_key(
            k,
            "needs `ecn.kmin` as well: custom thresholds start from Kmin (without it Kmin = 0 \
             and every packet would be marked)",
        ));
    }
    if e.enabled == Some(false) && (e.kmin.is_some() || e.kmax.is_some() || e.pmax.is_some()) {
        ctx.warn(ctx.err_key(
            "ecn.kmin",
            "has no effect: `ecn.enabled = false` turns marking off",
        ));
    }
    if e.kmin.is_some() {
        let kmin = ctx.bytes(&e.kmin, "ecn.kmin", 0)?;
        let kmax = ctx.bytes(&e.kmax, "ecn.kmax", kmin)?;
        net.ecn = crate::config::EcnConfig {
            enabled: true,
            thresholds: vec![crate::scheme::marking::EcnThresholds {
                rate_bps: host_rate,
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax: e.pmax.unwrap_or(1.0),
            }],
        };
    }
    if let Some(en) = e.enabled {
        net.ecn.enabled = en;
        if en && net.ecn.thresholds.is_empty() {
            net.ecn.thresholds = crate::config::EcnConfig::hpcc_default().thresholds;
        }
    }
    Ok(setup.cc)
}

/// The core settings the schemes set where `[network]` leaves them unset
/// ([`crate::scheme::SchemeConfig::core_defaults`]: BFC's queues and DRR scheduler).
fn apply_scheme_defaults(n: &RawNetwork, net: &mut NetConfig) {
    let d = net.schemes.core_defaults(net.max_packet_bytes());
    if let (Some(q), None) = (d.queues_per_port, n.queues_per_port) {
        net.queues_per_port = q;
    }
    if let (Some(quantum_bytes), None) = (d.drr_quantum_bytes, &n.scheduler) {
        net.scheduler = SchedulerKind::Drr { quantum_bytes };
    }
}

/// `cc.tcd`: the controller's hold mode (DCQCN+TCD, TIMELY+TCD: [`crate::cc::hold`]), which
/// needs a scheme that makes hold marks ([`crate::scheme::Declares::hold_marks`]).
fn apply_cc_hold(
    mut cc: CcConfig,
    c: &RawCc,
    net: &NetConfig,
    ctx: &Ctx,
) -> Result<CcConfig, String> {
    let Some(on) = c.hold else {
        return Ok(cc);
    };
    if on && !net.peers().hold_marks {
        return Err(ctx.err_key(
            "cc.tcd",
            "reacts to TCD's CE/UE marks, but no switch makes them: set `tcd.enabled = true`",
        ));
    }
    match &mut cc {
        CcConfig::Dcqcn(p) => p.hold = on,
        CcConfig::Timely(p) => p.hold = on,
        _ => {} // reported by the key check (applies to DCQCN and TIMELY only)
    }
    Ok(cc)
}

/// Timeouts against the topology's base RTT (see [`NetConfig::rtt_issues`]) and the lossless
/// carve-out against the buffers; with HPCC, a longest path of more than five switches is a
/// warning ([`crate::cc::hpcc::int_hop_limit_warning`]), as under `sfc hpcc`.
fn check_rtt(
    topo: &TopologySpec,
    net: &NetConfig,
    cc: Option<&CcConfig>,
    ctx: &Ctx,
) -> Result<(), String> {
    if let Err(i) = net.check_lossless_carve_out(topo) {
        return Err(issue_error(&i, ctx));
    }
    crate::runguard::check_network_memory(topo, net).map_err(|e| {
        match crate::runguard::largest_scheme_table(topo, net) {
            Some((key, _)) => format!("{}: {e}", ctx.at(key, None)),
            None => format!("{}: [topology]: {e}", ctx.file),
        }
    })?;
    let routes = crate::topology::routing::RouteTable::try_build(topo)
        .map_err(|e| format!("{}: topology: {e}", ctx.file))?;
    let bounds = routes.max_base_rtt(topo, net.mtu_bytes as u64);
    if let Some(CcConfig::Hpcc(_)) = cc
        && let Some(w) = crate::cc::hpcc::int_hop_limit_warning(bounds.max_switch_hops)
    {
        ctx.warn(format!("{}: [topology]: {w}", ctx.file));
    }
    let rtt = bounds.max_base_rtt_ps;
    let (errs, warns) = net.rtt_issues(rtt);
    for w in warns {
        ctx.warn(issue_error(&w, ctx));
    }
    match errs.first() {
        Some(i) => Err(issue_error(i, ctx)),
        None => Ok(()),
    }
}

/// `output.queues`: the monitored (switch, port) pairs, each checked against the topology.
fn resolve_queue_monitor(
    o: &RawOutput,
    topo: &TopologySpec,
    ctx: &Ctx,
    net: &mut NetConfig,
) -> Result<(), String> {
    let ports = topo.ports();
    match &o.queues {
        None => {}
        Some(toml::Value::String(s)) if s == "tor_downlinks" => {
            for sw in topo.switches() {
                for (i, p) in ports[sw as usize].iter().enumerate() {
                    if topo.kinds[p.peer as usize] == crate::topology::NodeKind::Host {
                        net.queue_monitor.push((sw, i as u32));
                    }
                }
            }
        }
        Some(toml::Value::Array(a)) => {
            // Every bad entry is reported, not only the first.
            let mut errs = Vec::new();
            for (i, v) in a.iter().enumerate() {
                let key = format!("output.queues[{i}]");
                let pair = v.as_array().and_then(|p| match p.as_slice() {
                    [toml::Value::Integer(n), toml::Value::Integer(port)]
                        if (0..=u32::MAX as i64).contains(n)
                            && (0..=u32::MAX as i64).contains(port) =>
                    {
                        Some((*n as u32, *port as u32))
                    }
                    _ => None,
                });
                let Some((node, port)) = pair else {
                    errs.push(ctx.err_key(&key, "must be [switch_node, port]"));
                    continue;
                };
                let is_switch =
                    topo.kinds.get(node as usize) == Some(&crate::topology::NodeKind::Switch);
                if !is_switch {
                    errs.push(
                        ctx.err_key(&key, format!("node {node} is not a switch of the topology")),
                    );
                    continue;
                }
                let np = ports[node as usize].len();
                if port as usize >= np {
                    errs.push(
                        ctx.err_key(&key, format!("switch {node} has ports 0..{np}, not {port}")),
                    );
                    continue;
                }
                net.queue_monitor.push((node, port));
            }
            if !errs.is_empty() {
                return Err(errs.join("\n"));
            }
        }
        Some(_) => {
            return Err(ctx.err_key(
                "output.queues",
                "must be a list of [switch_node, port] or \"tor_downlinks\"",
            ));
        }
    }
    Ok(())
}

/// `output.size_bins` / `output.size_edges`.
fn resolve_bins(o: &RawOutput, ctx: &Ctx) -> Result<SizeBins, String> {
    match (&o.size_edges, o.size_bins) {
        (Some(_), Some(_)) => Err(ctx.err_key(
            "output.size_bins",
            "give either `output.size_bins` or `output.size_edges`, not both",
        )),
        (Some(e), None) => {
            if e.is_empty() || e.windows(2).any(|w| w[0] >= w[1]) {
                return Err(ctx.err_key(
                    "output.size_edges",
                    "must be a non-empty list of increasing byte sizes",
                ));
            }
            Ok(SizeBins::Edges(e.clone()))
        }
        (None, Some(n)) if n > 0 => Ok(SizeBins::EqualCount(n)),
        (None, Some(_)) => Err(ctx.err_key("output.size_bins", "must be positive")),
        (None, None) => Ok(SizeBins::EqualCount(10)),
    }
}

/// The workload as a whole: not empty and not entirely after `stop`, told by its first flow
/// (`first`: the earliest, as the traffic is sorted by start time; `None` when there is none).
fn check_first_flow(
    first: Option<&FlowSpec>,
    raw: &RawScenario,
    net: &NetConfig,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(first) = first else {
        // Cite the --set that emptied or changed the traffic, if one did.
        let at = ctx.at("traffic", None);
        return Err(if raw.traffic.is_empty() {
            format!(
                "{at}: no traffic: add a [[traffic]] generator (a run without flows simulates nothing)"
            )
        } else {
            format!(
                "{at}: the [[traffic]] generators produced no flows (a run without flows simulates nothing)"
            )
        });
    };
    if first.start_ps >= net.stop_ps {
        return Err(ctx.err_key(
            "stop",
            format!(
                "every flow starts at or after the stop time {} (the first at {}): the run would simulate nothing",
                crate::units::fmt_time(net.stop_ps),
                crate::units::fmt_time(first.start_ps)
            ),
        ));
    }
    Ok(())
}

/// The [`crate::workload::shape::FlowShape`] of `flows`, counting those that start at or after
/// `stop_ps` (a streamed scenario passes a clone of its stream: one generation pass, nothing
/// kept).
fn flow_shape(
    flows: impl Iterator<Item = FlowSpec>,
    stop_ps: u64,
) -> crate::workload::shape::FlowShape {
    let mut shape = crate::workload::shape::FlowShape::with_stop(stop_ps);
    for f in flows {
        shape.add(f.start_ps, f.size_bytes);
    }
    shape
}

/// Warn when some (not all: [`check_first_flow`]) of the flows of `shape` (gathered with the
/// stop time of `net`, [`flow_shape`]) start at or after `stop`.
fn warn_after_stop(shape: &crate::workload::shape::FlowShape, net: &NetConfig, ctx: &Ctx) {
    let (after, total) = (shape.flows_after_stop(), shape.flows());
    if after > 0 {
        ctx.warn(ctx.err_key(
            "stop",
            format!(
                "{after} of {total} flows start at or after the stop time {}; they will not run",
                crate::units::fmt_time(net.stop_ps)
            ),
        ));
    }
}

/// A DCQCN timer of `v_ps` given as `key` (its value `s`), refused below
/// [`crate::cc::dcqcn::MIN_TIMER_PS`].
fn dcqcn_timer(ctx: &Ctx, s: &Option<S>, key: &str, v_ps: u64) -> Result<u64, String> {
    if v_ps >= crate::cc::dcqcn::MIN_TIMER_PS {
        return Ok(v_ps);
    }
    let msg = format!(
        "shorter than the shortest accepted DCQCN timer, {} (the papers use 1–1500us; a timer \
         firing every few picoseconds for every flow makes the run take hours)",
        crate::units::fmt_time(crate::cc::dcqcn::MIN_TIMER_PS)
    );
    Err(match s {
        Some(v) => ctx.err(v, key, &msg),
        None => ctx.err_key(key, &msg),
    })
}

/// `cc.var_win` on a controller that has no window: the setting would be ignored.
fn var_win_without_window(ctx: &Ctx) -> String {
    ctx.err_key(
        "cc.var_win",
        "has no effect without a window: this cc.kind has none; set `cc.window` (a size or \"bdp\") \
         or use a windowed kind (dcqcn+w, timely+w)",
    )
}

/// Apply the `[cc]` parameter overrides to a preset.
fn apply_cc_overrides(setup: &mut cc::CcSetup, c: &RawCc, ctx: &Ctx) -> Result<(), String> {
    let window = match &c.window {
        None => None,
        Some(w) => Some(parse_window(w.get_ref()).map_err(|e| ctx.err(w, "cc.window", e))?),
    };
    let var_win = c.var_win.unwrap_or(true);
    if let Some(g) = c.g
        && !(g > 0.0 && g <= 1.0)
    {
        return Err(ctx.err_key("cc.g", format!("= {g} must be in (0, 1]")));
    }
    match &mut setup.cc {
        CcConfig::None(p) => {
            if let Some(w) = window {
                p.window = w;
            }
        }
        CcConfig::Dcqcn(p) => dcqcn_overrides(p, c, window, var_win, ctx)?,
        CcConfig::Dctcp(p) => dctcp_overrides(p, c, window, var_win, ctx)?,
        CcConfig::Hpcc(p) => hpcc_overrides(p, c, ctx)?,
        CcConfig::Timely(p) => timely_overrides(p, c, window, var_win, ctx)?,
    }
    Ok(())
}

/// [`apply_cc_overrides`] for DCQCN.
fn dcqcn_overrides(
    p: &mut crate::cc::dcqcn::DcqcnParams,
    c: &RawCc,
    window: Option<NoneWindow>,
    var_win: bool,
    ctx: &Ctx,
) -> Result<(), String> {
    if let Some(v) = ctx.opt_rate(&c.ai, "cc.ai")? {
        p.rate_ai_bps = v;
    }
    if let Some(v) = ctx.opt_rate(&c.hai, "cc.hai")? {
        p.rate_hai_bps = v;
    }
    if let Some(v) = ctx.opt_rate(&c.min_rate, "cc.min_rate")? {
        p.min_rate_bps = v;
    }
    if let Some(g) = c.g {
        p.g = g;
    }
    if let Some(v) = ctx.opt_time(&c.alpha_timer, "cc.alpha_timer")? {
        p.alpha_timer_ps = dcqcn_timer(ctx, &c.alpha_timer, "cc.alpha_timer", v)?;
    }
    if let Some(v) = ctx.opt_time(&c.dec_interval, "cc.dec_interval")? {
        p.rate_decrease_interval_ps = dcqcn_timer(ctx, &c.dec_interval, "cc.dec_interval", v)?;
    }
    if let Some(v) = ctx.opt_time(&c.rp_timer, "cc.rp_timer")? {
        p.rate_increase_timer_ps = dcqcn_timer(ctx, &c.rp_timer, "cc.rp_timer", v)?;
    }
    if let Some(f) = c.fast_recovery {
        p.fast_recovery_times = f;
    }
    match window {
        None => {
            if let Some(v) = c.var_win {
                if !p.has_win {
                    return Err(var_win_without_window(ctx));
                }
                p.var_win = v;
            }
        }
        Some(NoneWindow::Unlimited) if c.var_win.is_some() => {
            return Err(var_win_without_window(ctx));
        }
        Some(NoneWindow::Unlimited) => p.has_win = false,
        Some(NoneWindow::Bytes(b)) => *p = p.clone().with_window(b, var_win),
        Some(NoneWindow::Bdp(_)) => *p = p.clone().with_window(0, var_win),
    }
    Ok(())
}

/// [`apply_cc_overrides`] for DCTCP.
fn dctcp_overrides(
    p: &mut crate::cc::dctcp::DctcpParams,
    c: &RawCc,
    window: Option<NoneWindow>,
    var_win: bool,
    ctx: &Ctx,
) -> Result<(), String> {
    if let Some(ss) = c.slow_start {
        p.slow_start = ss;
    }
    if let Some(v) = ctx.opt_rate(&c.ai, "cc.ai")? {
        p.rate_ai_bps = v;
    }
    if let Some(v) = ctx.opt_rate(&c.min_rate, "cc.min_rate")? {
        p.min_rate_bps = v;
    }
    if let Some(g) = c.g {
        p.g = g;
    }
    match window {
        None if c.var_win.is_some() && !p.has_win => {
            return Err(var_win_without_window(ctx));
        }
        None => {}
        Some(NoneWindow::Unlimited) if c.var_win.is_some() => {
            return Err(var_win_without_window(ctx));
        }
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
    Ok(())
}

/// [`apply_cc_overrides`] for HPCC.
fn hpcc_overrides(p: &mut crate::cc::hpcc::HpccParams, c: &RawCc, ctx: &Ctx) -> Result<(), String> {
    use crate::cc::hpcc::{HpccAi, Reaction};
    if let Some(e) = c.eta {
        if !(e > 0.0 && e <= 1.0) {
            return Err(ctx.err_key("cc.eta", format!("= {e} must be in (0, 1]")));
        }
        p.eta = e;
    }
    if let Some(m) = c.max_stage {
        p.max_stage = m;
    }
    if let Some(v) = ctx.opt_rate(&c.ai, "cc.ai")? {
        p.ai = HpccAi::RateBps(v);
    }
    if let Some(w) = &c.w_ai {
        p.ai =
            HpccAi::Bytes(parse_bytes(w.get_ref()).map_err(|e| ctx.err(w, "cc.w_ai", e))? as f64);
    }
    if let Some(v) = ctx.opt_rate(&c.min_rate, "cc.min_rate")? {
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
    Ok(())
}

/// [`apply_cc_overrides`] for TIMELY.
fn timely_overrides(
    p: &mut crate::cc::timely::TimelyParams,
    c: &RawCc,
    window: Option<NoneWindow>,
    var_win: bool,
    ctx: &Ctx,
) -> Result<(), String> {
    if let Some(v) = ctx.opt_rate(&c.ai, "cc.ai")? {
        p.rate_ai_bps = v;
    }
    if let Some(v) = ctx.opt_rate(&c.hai, "cc.hai")? {
        p.rate_hai_bps = v;
    }
    if let Some(v) = ctx.opt_rate(&c.min_rate, "cc.min_rate")? {
        p.min_rate_bps = v;
    }
    if let Some(v) = ctx.opt_time(&c.t_low, "cc.t_low")? {
        p.t_low_ps = v;
    }
    if let Some(v) = ctx.opt_time(&c.t_high, "cc.t_high")? {
        p.t_high_ps = v;
    }
    if let Some(b) = c.beta {
        if !(b.is_finite() && (0.0..=1.0).contains(&b)) {
            return Err(ctx.err_key("cc.beta", format!("= {b} must be in [0, 1]")));
        }
        p.beta = b;
    }
    match window {
        None => {
            if let Some(v) = c.var_win {
                if !p.has_win {
                    return Err(var_win_without_window(ctx));
                }
                p.var_win = v;
            }
        }
        Some(NoneWindow::Unlimited) if c.var_win.is_some() => {
            return Err(var_win_without_window(ctx));
        }
        Some(NoneWindow::Unlimited) => p.has_win = false,
        Some(NoneWindow::Bytes(b)) => *p = p.clone().with_window(b, var_win),
        Some(NoneWindow::Bdp(_)) => *p = p.clone().with_window(0, var_win),
    }
    Ok(())
}

/// Settings a controller accepts one by one but not together: a minimum rate above the host
/// link (the controller could never go below line rate), TIMELY's `t_low ≥ t_high` (no
/// gradient band).
/// `fastest` is the fastest host link: an increase step is checked against it (a step sized
/// for the fast NICs of a mixed network is legitimate).
fn check_cc_consistency(
    cc: &CcConfig,
    host_rate: u64,
    fastest: u64,
    ctx: &Ctx,
) -> Result<(), String> {
    let min_rate = match cc {
        CcConfig::Dcqcn(p) => Some(p.min_rate_bps),
        CcConfig::Timely(p) => Some(p.min_rate_bps),
        CcConfig::Dctcp(p) => Some(p.min_rate_bps),
        CcConfig::Hpcc(p) => Some(p.min_rate_bps),
        _ => None,
    };
    if let Some(m) = min_rate
        && m > host_rate
    {
        return Err(ctx.err_key(
            "cc.min_rate",
            format!(
                "{} is above the host link rate {}: the controller could never slow down",
                crate::units::fmt_rate(m),
                crate::units::fmt_rate(host_rate)
            ),
        ));
    }
    // An increase step above the line rate is a unit slip (`1000Tbps`, `40Gbps` for `40Mbps`):
    // one step would already pass line rate.
    let steps: Vec<(&str, u64)> = match cc {
        CcConfig::Dcqcn(p) => vec![("cc.ai", p.rate_ai_bps), ("cc.hai", p.rate_hai_bps)],
        CcConfig::Timely(p) => vec![("cc.ai", p.rate_ai_bps), ("cc.hai", p.rate_hai_bps)],
        CcConfig::Dctcp(p) => vec![("cc.ai", p.rate_ai_bps)],
        CcConfig::Hpcc(p) => match p.ai {
            crate::cc::hpcc::HpccAi::RateBps(v) => vec![("cc.ai", v)],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if let Some(&(key, v)) = steps.iter().find(|s| s.1 > fastest) {
        return Err(ctx.err_key(
            key,
            format!(
                "{} is above the fastest host link rate {}: a single increase step would pass line rate",
                crate::units::fmt_rate(v),
                crate::units::fmt_rate(fastest)
            ),
        ));
    }
    if let CcConfig::Timely(p) = cc
        && p.t_low_ps >= p.t_high_ps
    {
        return Err(ctx.err_key(
            "cc.t_low",
            format!(
                "t_low {} must be below t_high {} (TIMELY's gradient band)",
                crate::units::fmt_time(p.t_low_ps),
                crate::units::fmt_time(p.t_high_ps)
            ),
        ));
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
        if !(v > 0.0 && v <= 1e6) {
            return Err(format!(
                "`{s}`: BDP multiple must be in (0, 1e6] (1e6 BDP is already an unlimited window)"
            ));
        }
        return Ok(NoneWindow::Bdp(v));
    }
    match parse_bytes(s) {
        Ok(0) => Err(format!(
            "`{s}`: a window of 0 bytes would never send; give a positive size, a BDP multiple, or `none`"
        )),
        Ok(b) => Ok(NoneWindow::Bytes(b)),
        Err(e) => Err(e.to_string()),
    }
}
