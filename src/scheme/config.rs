//! How a scheme owns its configuration: its type, its scenario table, its validation, the keys
//! that have no effect when it is off, the tables it allocates, and its `sfc hpcc` keys.
//!
//! Each scheme with a `[table]` of its own implements [`SchemeConfig`] on its config type, in
//! its folder (`<scheme>/config.rs`), and names that type in the registry line of
//! [`crate::scheme`]. The registry builds [`crate::scheme::SchemeConfigs`] (one field per
//! scheme, held by [`crate::config::NetConfig::schemes`]) and the loops the front ends call:
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

    /// Invalid values (and combinations with the core or other schemes), as (scenario key,
    /// message), in key order.
    fn issues(&self, _core: &CoreView, _all: &crate::scheme::SchemeConfigs) -> Issues {
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

    /// Scenario keys that have no effect in this run ([`Inert`]).
    fn inert(&self, _all: &crate::scheme::SchemeConfigs) -> Vec<Inert> {
        Vec::new()
    }

    /// `Some(error)` when this scheme is the lossless buffer's flow control instead of PFC:
    /// PFC keys are then errors, and PFC's carve-out is not checked.
    fn replaces_pfc(&self) -> Option<&'static str> {
        None
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

    /// `sfc hpcc` keys with no effect in this run: (keys, why) — warned as `has no effect: why`.
    fn hpcc_inert(&self) -> Vec<(&'static [&'static str], &'static str)> {
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
