//! How a scheme owns its configuration: its type, its scenario table, its validation, the keys
//! that have no effect when it is off, the tables it allocates, and its `sfc hpcc` keys.
//!
//! Each scheme with a `[table]` of its own implements [`SchemeConfig`] on its config type, in
//! its folder (`<scheme>/config.rs`), and names it as its [`crate::scheme::Scheme::Config`].
//! The registry ([`crate::registry`]) builds the network configuration's scheme section (one
//! field per scheme) and the loops the front ends call:
//! the scenario reader ([`crate::scenario`]) reads each table through the scheme's raw form
//! and a [`Fields`] reader that spells errors `file:line: key`; `sfc hpcc`
//! ([`crate::hpcc`]) reads the scheme's HPCC-config keys through a [`HpccFields`] reader.
//! The core names no scheme.

use std::fmt::Display;

use serde::Deserialize;

use crate::units::{parse_bytes, parse_time_ps};

/// A scenario value written as a string (`"10us"`, `"hpcc"`), or as a bare number where a
/// quantity has a unit-free reading (`qth = 20000` = bytes, `load = 0.5`): the number is kept as
/// its TOML text and parsed like the string would be, so `20000` and `"20000"` mean the same and
/// a unit-needing key still says which unit it wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text(String);

impl std::ops::Deref for Text {
    type Target = String;
    fn deref(&self) -> &String {
        &self.0
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string (e.g. \"10us\", \"100Gbps\", \"1MB\") or a number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scenario value with its position in the file (for `file:line` errors).
pub type Value = toml::Spanned<Text>;

/// The scenario reader as a scheme sees it: errors spelled `file:line: key = value: problem`
/// (or `--set` where the value came from an override), and values with units.
pub trait Fields {
    /// An error about `key`, whose value is `v`.
    fn err(&self, v: &Value, key: &str, msg: impl Display) -> String;
    /// An error about `key` without its value (a key left at its default says so).
    fn err_key(&self, key: &str, msg: impl Display) -> String;

    /// A time (`"600ns"`), or `default` when the key is absent, picoseconds.
    fn time(&self, v: &Option<Value>, key: &str, default: u64) -> Result<u64, String> {
        match v {
            None => Ok(default),
            Some(x) => parse_time_ps(x.get_ref()).map_err(|e| self.err(x, key, e)),
        }
    }
    /// A size (`"20KB"`), or `default` when the key is absent, bytes.
    fn bytes(&self, v: &Option<Value>, key: &str, default: u64) -> Result<u64, String> {
        match v {
            None => Ok(default),
            Some(x) => parse_bytes(x.get_ref()).map_err(|e| self.err(x, key, e)),
        }
    }
    /// A time that may be absent: `None` when the key is not given.
    fn opt_time(&self, v: &Option<Value>, key: &str) -> Result<Option<u64>, String> {
        v.as_ref()
            .map(|x| parse_time_ps(x.get_ref()).map_err(|e| self.err(x, key, e)))
            .transpose()
    }
    /// A size that may be absent: `None` when the key is not given.
    fn opt_bytes(&self, v: &Option<Value>, key: &str) -> Result<Option<u64>, String> {
        v.as_ref()
            .map(|x| parse_bytes(x.get_ref()).map_err(|e| self.err(x, key, e)))
            .transpose()
    }
}

/// The `sfc hpcc` config reader as a scheme sees it (errors spelled `file:line: \`KEY value\``).
pub trait HpccFields {
    /// The key's (first) value, if the key is given.
    fn str(&self, key: &str) -> Option<&str>;
    /// The key as an unsigned integer, if given.
    fn u64(&self, key: &str) -> Result<Option<u64>, String>;
    /// The key as a number, if given.
    fn f64(&self, key: &str) -> Result<Option<f64>, String>;
    /// The key as a 0/1 flag, `default` when absent.
    fn flag(&self, key: &str, default: bool) -> Result<bool, String>;
    /// An error about `key`.
    fn err(&self, key: &str, msg: impl Display) -> String;
    /// A nanosecond key in picoseconds, refused past the simulator's time range (instead of
    /// wrapping around).
    fn ns_as_ps(&self, key: &str) -> Result<Option<u64>, String> {
        match self.u64(key)? {
            Some(v) if v > crate::units::MAX_TIME_PS / 1000 => {
                Err(self.err(key, "longer than the simulator's time range"))
            }
            v => Ok(v.map(|v| v * 1000)),
        }
    }
}

/// The core network settings a scheme's validation may depend on.
#[derive(Clone, Copy, Debug)]
pub struct CoreView {
    /// `buffer.mode = "lossless"`.
    pub lossless: bool,
    /// ECN marking is on with thresholds (a default Kmin exists).
    pub has_ecn: bool,
    /// Queues per switch egress port.
    pub queues_per_port: usize,
    /// Largest data packet on the wire that occupies buffer, bytes.
    pub max_packet_bytes: u64,
    /// The smallest switch buffer (default and per-switch sizes), bytes.
    pub smallest_buffer_bytes: u64,
}

/// A resource of the fabric only one scheme of a run can own ([`Declares::exclusive`]): two
/// schemes that are on and claim the same one are an error naming both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclusive {
    /// The switch queues and their scheduler (queue per flow, pull queues, …).
    SwitchQueues,
    /// Holding switch queues back hop by hop (per-flow pauses, credits).
    HopByHopHold,
    /// The NICs' per-QP pause bits.
    NicPauses,
}

impl Exclusive {
    /// What two schemes that both claim it "both …" (for the error message).
    pub fn what(self) -> &'static str {
        match self {
            Exclusive::SwitchQueues => "own the switch queues and scheduler",
            Exclusive::HopByHopHold => "hold switch queues back hop by hop",
            Exclusive::NicPauses => "pause the NICs' queue pairs through the same pause bits",
        }
    }
}

/// A credit-update period per port (hop-by-hop credit flow control): the configured period,
/// else a default that depends on the port's rate.
#[derive(Clone, Copy, Debug)]
pub struct CreditPeriod {
    /// The configured period, picoseconds (`None` = the default).
    pub fixed_ps: Option<u64>,
    /// The default period of a port of the given rate (bits per second), picoseconds.
    pub default_ps: fn(u64) -> u64,
}

impl CreditPeriod {
    /// The period of a port of `rate_bps`, picoseconds (≥ 1).
    pub fn at(&self, rate_bps: u64) -> u64 {
        self.fixed_ps
            .unwrap_or_else(|| (self.default_ps)(rate_bps))
            .max(1)
    }
}

/// What one scheme's configuration tells the core and the other schemes about the run
/// ([`SchemeConfig::declares`]); the registry folds every scheme's into [`Peers`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Declares {
    /// The scheme is on: its name in messages (`"CBFC"`) and the key that turned it on
    /// (`"cbfc.enabled"`). `None` = off (nothing else is read).
    pub on: Option<(&'static str, &'static str)>,
    /// The scheme runs the lossless buffer's flow control instead of PFC: the error for PFC
    /// keys (PFC then does not run, and its carve-out is not checked).
    pub replaces_pfc: Option<&'static str>,
    /// The scheme marks CE itself on a lossless fabric, with this precedence: only the marker
    /// with the highest precedence marks; the others, and plain ECN marking, stand down.
    pub ce_precedence: Option<u8>,
    /// The scheme assigns data queues to flows, not to priorities: PFC then pauses and
    /// accounts every data queue as one class.
    pub queues_by_flow: bool,
    /// The scheme paces hop-by-hop credit updates with this period.
    pub credit_period: Option<CreditPeriod>,
    /// ACKs and NACKs need the scheme's credits in their data class: the NIC cannot send them
    /// past a pause from its control queue (`ack_high_prio` does not apply).
    pub acks_need_credits: bool,
    /// The scheme's pause/resume hysteresis (PFC: resume when the queue has fallen this far
    /// below the pause threshold), bytes.
    pub xon_hysteresis_bytes: Option<u64>,
    /// The scheme's echoed mark asks rate controllers in hold mode (the scenario key
    /// `cc.tcd`, [`crate::cc::hold`]) to hold their rate: a marked port is paused, not
    /// congested. Hold mode without such a scheme is an error.
    pub hold_marks: bool,
    /// Fabric resources the scheme owns alone.
    pub exclusive: &'static [Exclusive],
}

/// What the schemes of a run declare, folded ([`Declares`], in registry order: the first
/// declaration of each property wins, precedences take the highest).
#[derive(Clone, Copy, Debug, Default)]
pub struct Peers {
    /// A scheme runs the lossless buffer's flow control instead of PFC: the error for PFC keys.
    pub replaces_pfc: Option<&'static str>,
    /// The highest CE-marking precedence declared ([`Declares::ce_precedence`]).
    pub ce_precedence: Option<u8>,
    /// A scheme assigns data queues to flows ([`Declares::queues_by_flow`]).
    pub queues_by_flow: bool,
    /// A scheme's credit-update period ([`Declares::credit_period`]).
    pub credit_period: Option<CreditPeriod>,
    /// ACKs need a scheme's credits ([`Declares::acks_need_credits`]).
    pub acks_need_credits: bool,
    /// A scheme's pause/resume hysteresis ([`Declares::xon_hysteresis_bytes`]).
    pub xon_hysteresis_bytes: Option<u64>,
    /// A scheme makes hold marks ([`Declares::hold_marks`]).
    pub hold_marks: bool,
}

impl Peers {
    /// Fold `d` (a scheme that is on) into these.
    pub fn add(&mut self, d: &Declares) {
        if d.on.is_none() {
            return;
        }
        self.replaces_pfc = self.replaces_pfc.or(d.replaces_pfc);
        self.ce_precedence = self.ce_precedence.max(d.ce_precedence);
        self.queues_by_flow |= d.queues_by_flow;
        self.credit_period = self.credit_period.or(d.credit_period);
        self.acks_need_credits |= d.acks_need_credits;
        self.xon_hysteresis_bytes = self.xon_hysteresis_bytes.or(d.xon_hysteresis_bytes);
        self.hold_marks |= d.hold_marks;
    }
}

/// Core settings a scheme sets when the scenario leaves them unset.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoreDefaults {
    /// Queues per switch egress port.
    pub queues_per_port: Option<usize>,
    /// Deficit round robin with this quantum, bytes, as the switches' data scheduler.
    pub drr_quantum_bytes: Option<u32>,
}

/// Scenario keys that cannot act in this run (warned about when given): full keys
/// (`"sfc.qth"`) and the message, e.g. `"has no effect: SFC is off (set `sfc.mode`)"`.
#[derive(Clone, Copy, Debug)]
pub struct Inert {
    /// Full scenario keys.
    pub keys: &'static [&'static str],
    /// The warning, after the key.
    pub why: &'static str,
}

/// What the no-effect checks ([`SchemeConfig::inert`]) know of the core settings, as the
/// scenario writes them.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyView {
    /// `buffer.mode = "lossless"`.
    pub lossless: bool,
}

/// Which problems a scheme's validation reports, as (scenario key, message).
pub type Issues = Vec<(&'static str, String)>;

/// A scheme's configuration: its type, table, reading, validation and resource needs.
/// Implemented by the config type in the scheme's folder; every method but
/// [`Self::resolve`] has a do-nothing default.
pub trait SchemeConfig: Default + Clone + std::fmt::Debug + serde::Serialize {
    /// The scenario table (`sfc` for `[sfc]`).
    const TABLE: &'static str;
    /// The table as written (serde, unknown keys refused), values with units unparsed.
    type Raw: serde::de::DeserializeOwned + Default + std::fmt::Debug;
    /// The `sfc hpcc` keys this scheme reads (`SFC_MODE`, …).
    const HPCC_KEYS: &'static [&'static str] = &[];

    /// Read the scenario table `raw` into `self` (which holds the defaults); the first bad
    /// value is an error naming its key.
    fn resolve(&mut self, raw: &Self::Raw, f: &impl Fields) -> Result<(), String>;

    /// Core settings this configuration sets where the scenario leaves them unset.
    fn core_defaults(&self, _max_packet_bytes: u64) -> CoreDefaults {
        CoreDefaults::default()
    }

    /// What this configuration tells the core and the other schemes ([`Declares`]).
    fn declares(&self) -> Declares {
        Declares::default()
    }

    /// Invalid values (and combinations with the core or what other schemes declare), as
    /// (scenario key, message), in key order.
    fn issues(&self, _core: &CoreView, _peers: &Peers) -> Issues {
        Vec::new()
    }

    /// Timeouts shorter than the topology's base RTT: `short(t)` says so for time `t`.
    fn rtt_issues(&self, _base_rtt_ps: u64, _short: &dyn Fn(u64) -> String) -> Issues {
        Vec::new()
    }

    /// Problems of the configuration on this topology.
    fn topology_issues(&self, _topo: &crate::topology::TopologySpec) -> Issues {
        Vec::new()
    }

    /// Scenario keys that have no effect in this run ([`Inert`]): warned about when given.
    fn inert(&self, _core: &KeyView, _peers: &Peers) -> Vec<Inert> {
        Vec::new()
    }

    /// Scenario keys that are errors in this run when given ([`Inert`]: the keys and the
    /// error), e.g. PFC's keys when another scheme runs the lossless buffer.
    fn refused(&self, _peers: &Peers) -> Vec<Inert> {
        Vec::new()
    }

    /// Tables every switch allocates when the run is built: (key that sizes it, bytes).
    fn tables(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// The host half keeps per-flow records for the whole run: the flows are collected into
    /// a list (a streamed workload is read up front).
    fn needs_flow_list(&self) -> bool {
        false
    }

    /// Read this scheme's `sfc hpcc` keys ([`Self::HPCC_KEYS`]) into `self`.
    fn resolve_hpcc(&mut self, _c: &impl HpccFields) -> Result<(), String> {
        Ok(())
    }

    /// Settings `sfc hpcc` derives from the topology file, as HPCC-sim does (PFC: the NIC
    /// rate its thresholds scale from).
    fn resolve_hpcc_topology(&mut self, _topo: &crate::topology::TopologySpec) {}

    /// `sfc hpcc` keys with no effect in this run: (keys, why) — warned as `has no effect: why`.
    fn hpcc_inert(&self, _core: &KeyView) -> Vec<(&'static [&'static str], &'static str)> {
        Vec::new()
    }

    /// The `sfc hpcc` key to name for an issue about scenario key `key` of this scheme.
    fn hpcc_key(key: &'static str) -> &'static str {
        key
    }
}

/// A time whose 0 stands for a derived default inside the model: an explicit 0 is an error.
pub fn nonzero_time(
    f: &impl Fields,
    v: &Option<Value>,
    key: &str,
    default: &str,
) -> Result<u64, String> {
    match (v, f.time(v, key, 0)?) {
        (Some(x), 0) => Err(f.err(
            x,
            key,
            format!("must be positive; omit the key for the default ({default})"),
        )),
        (_, t) => Ok(t),
    }
}

/// 0 in these keys is the "derive it" marker inside the model: a config that writes 0 would
/// silently get the derived default, so it is refused (omit the key instead), as for the TOML
/// keys.
pub fn hpcc_positive(c: &impl HpccFields, key: &str, v: u64) -> Result<u64, String> {
    if v == 0 {
        Err(c.err(key, "must be positive; omit the key for the default"))
    } else {
        Ok(v)
    }
}
