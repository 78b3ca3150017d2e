//! `[[traffic]]`: every generator's keys checked against the topology and the network, then
//! the generators merged into one lazy flow stream.
//!
//! A generator's error either names one of its keys and that key's line (the value is wrong
//! on its own) or, when the flow generator itself refuses the values, is prefixed with
//! `traffic[i] (kind)` ([`Generator::generated`]).

use toml::Spanned;

use super::{Ctx, RawTraffic, S, relative_hint};
use crate::registry::NetConfig;
use crate::topology::TopologySpec;
use crate::units::{parse_bytes, parse_time_ps};
use crate::workload::cdf::{CdfFormat, SizeCdf};
use crate::workload::stream::{FlowStream, Source};
use crate::workload::{flow_file, traffic};

/// Traffic kinds of `[[traffic]]`, for messages.
const TRAFFIC_KINDS: &str =
    "poisson, lognormal, incast, all_to_all, permutation, long_lived, flow_file";

/// Resolve the `[[traffic]]` generators into one lazy flow stream sorted by
/// `(start_ps, src, dst)` (generator order breaks ties), as merging their lists would.
///
/// Every value the user gave is checked here — node ids against the topology, priorities
/// against `network.queues_per_port`, loads, degrees, sizes — before any generator runs, so an
/// error names the offending `traffic[i].key` and its line (flow-file errors name the flow
/// file's line). The simulator builder never sees an invalid flow.
pub(super) fn resolve_traffic(
    raw: &[RawTraffic],
    topo: &TopologySpec,
    sites: Option<&[u32]>,
    net: &NetConfig,
    host_rate: u64,
    ctx: &Ctx,
    errs: &mut Vec<String>,
) -> FlowStream {
    let all_hosts = topo.hosts();
    // Data priorities: queue 0 is the strict-priority control class (queues_per_port ≥ 2).
    let max_prio = net.queues_per_port.saturating_sub(1).max(1);
    let prio_rule = format!(
        "data priorities are 1..={max_prio} (queue 0 is the control class; `network.queues_per_port` = {})",
        net.queues_per_port
    );
    let mut sources = Vec::new();
    for (i, tr) in raw.iter().enumerate() {
        if tr.enabled == Some(false) {
            continue;
        }
        let g = Generator {
            i,
            tr,
            kind: tr.kind.get_ref().as_str(),
            topo,
            sites,
            net,
            host_rate,
            ctx,
            all_hosts: &all_hosts,
            max_prio,
            prio_rule: &prio_rule,
        };
        match g.source() {
            Ok(s) => sources.push(s),
            Err(e) => errs.push(e),
        }
    }
    FlowStream::new(sources)
}

/// One `[[traffic]]` generator and what it needs to resolve.
struct Generator<'a> {
    /// Position in `[[traffic]]`: its keys are `traffic[i].…`.
    i: usize,
    /// The generator's keys as written.
    tr: &'a RawTraffic,
    /// `traffic[i].kind`.
    kind: &'a str,
    /// The topology the flows run on (host ids are checked against it).
    topo: &'a TopologySpec,
    /// Site (data center) of every node id, when the topology has sites (`two_dc`).
    sites: Option<&'a [u32]>,
    /// The network (its seed seeds the generator).
    net: &'a NetConfig,
    /// Host link rate a `load` is a fraction of, bits per second.
    host_rate: u64,
    /// Resolution context, for `file:line` messages.
    ctx: &'a Ctx<'a>,
    /// Every host of the topology (the default of `hosts`).
    all_hosts: &'a [u32],
    /// Highest data priority (`network.queues_per_port` − 1, at least 1).
    max_prio: usize,
    /// The priority rule, for messages.
    prio_rule: &'a str,
}

/// The keys every kind of generator shares, checked: what the kind-specific parts build on.
struct Common {
    /// Start of arrivals, picoseconds.
    start: u64,
    /// Duration of arrivals, picoseconds.
    dur: u64,
    /// Hosts taking part: `hosts`, else every host of the topology.
    hosts: Vec<u32>,
    /// `receivers`, when given.
    receivers: Option<Vec<u32>>,
    /// `senders`, when given.
    senders: Option<Vec<u32>>,
    /// The size CDF of an open-loop kind, read once (a file may be large); `None` = this kind
    /// takes no CDF.
    cdf: Option<Result<SizeCdf, String>>,
    /// The generator's random seed (from the network's seed and the generator's position).
    seed: u64,
}

impl Generator<'_> {
    /// `traffic[i].k`.
    fn key(&self, k: &str) -> String {
        format!("traffic[{}].{k}", self.i)
    }

    /// The error of a key this kind of generator needs and that is missing.
    fn required(&self, k: &str) -> String {
        format!(
            "{}: `{}` is required for {} traffic",
            self.ctx.file,
            self.key(k),
            self.kind
        )
    }

    /// The error of two keys of this generator given together that exclude each other.
    fn exclusive(&self, a: &str, b: &str, why: &str) -> String {
        format!(
            "{}: `{}` and `{}` exclude each other: {why}",
            self.ctx.at(&self.key(a), None),
            self.key(a),
            self.key(b)
        )
    }

    /// The error of a kind that is not one of [`TRAFFIC_KINDS`].
    fn unknown_kind(&self) -> String {
        self.ctx.err(
            &self.tr.kind,
            &self.key("kind"),
            format!("unknown traffic kind `{}` ({TRAFFIC_KINDS})", self.kind),
        )
    }

    /// A flow generator's result, its error prefixed with the file and `traffic[i] (kind)`.
    fn generated(&self, r: Result<Source, String>) -> Result<Source, String> {
        r.map_err(|e| {
            format!(
                "{}: traffic[{}] ({}): {e}",
                self.ctx.file, self.i, self.kind
            )
        })
    }

    /// Check the generator's keys and make the source of its flows (lazy for open-loop and
    /// repeated incast traffic, a list for the rest).
    fn source(&self) -> Result<Source, String> {
        if !TRAFFIC_KINDS.split(", ").any(|k| k == self.kind) {
            return Err(self.unknown_kind());
        }
        let c = self.common_keys()?;
        let f = match self.kind {
            "poisson" | "lognormal" => self.open_loop(c),
            "incast" => self.incast(c),
            "all_to_all" => {
                let size = self.size()?;
                self.generated(traffic::all_to_all(&c.hosts, size, c.start).map(Source::list))
            }
            "permutation" => {
                let size = self.size()?;
                self.generated(
                    traffic::permutation(&c.hosts, size, c.start, c.seed).map(Source::list),
                )
            }
            "long_lived" if self.tr.fan_in.is_some() => self.long_lived_fan_in(&c),
            "long_lived" => self.long_lived_pairs(&c),
            "flow_file" => self.flow_file(),
            _ => return Err(self.unknown_kind()),
        }?;
        Ok(match &self.tr.prio {
            Some(p) => f.with_prio(*p.get_ref()),
            None => f,
        })
    }

    /// Check the keys every kind shares. The host count, the priority and a `load_basis`
    /// without `load` stop at the first problem; then every independent key problem of this
    /// generator is reported at once (not one per `validate`): times, node lists, and the
    /// load, size and CDF where given.
    fn common_keys(&self) -> Result<Common, String> {
        let tr = self.tr;
        let (start_r, dur_r) = self.start_and_duration();
        let (start, dur) = (
            start_r.clone().unwrap_or_default(),
            dur_r.clone().unwrap_or_default(),
        );
        let hosts_r = self.host_list(&tr.hosts, "hosts");
        let receivers_r = self.host_list(&tr.receivers, "receivers");
        let senders_r = self.host_list(&tr.senders, "senders");
        self.check_host_count(&hosts_r)?;
        self.check_prio()?;
        if let (Some(b), None) = (&tr.load_basis, &tr.load) {
            return Err(self.ctx.err(
                b,
                &self.key("load_basis"),
                "says what `load` is a fraction of, and this generator has no `load`",
            ));
        }
        let cdf = matches!(self.kind, "poisson" | "lognormal")
            .then(|| load_cdf(tr, self.ctx, &self.key("cdf")));
        let mut problems: Vec<String> = [
            start_r.err(),
            dur_r.err(),
            hosts_r.as_ref().err().cloned(),
            receivers_r.as_ref().err().cloned(),
            senders_r.as_ref().err().cloned(),
            tr.load.as_ref().and_then(|_| self.load().err()),
            tr.size.as_ref().and_then(|_| self.size().err()),
            tr.cdf
                .as_ref()
                .and(cdf.as_ref())
                .and_then(|r| r.as_ref().err().cloned()),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !problems.is_empty() {
            problems.dedup();
            return Err(problems.join("\n"));
        }
        let (hosts, receivers, senders) = (hosts_r?, receivers_r?, senders_r?);
        Ok(Common {
            start,
            dur,
            hosts: hosts.unwrap_or_else(|| self.all_hosts.to_vec()),
            receivers,
            senders,
            cdf,
            seed: crate::rng::mix64(self.net.seed ^ (self.i as u64 + 1).wrapping_mul(0x9E37_79B9)),
        })
    }

    /// `start` and `duration`, each parsed. The kinds that generate arrivals over a duration
    /// (open loop, repeated incast) need it > 0, and the last arrival (start + duration) must
    /// stay on the simulator's clock.
    fn start_and_duration(&self) -> (Result<u64, String>, Result<u64, String>) {
        let (tr, ctx, kind) = (self.tr, self.ctx, self.kind);
        let start_r = ctx.time(&tr.start, &self.key("start"), 0);
        let dur_r = ctx.time(&tr.duration, &self.key("duration"), 0);
        let needs_dur =
            matches!(kind, "poisson" | "lognormal") || (kind == "incast" && tr.at.is_none());
        let dur_r = dur_r.and_then(|d| {
            if needs_dur && d == 0 {
                Err(match &tr.duration {
                    Some(v) => ctx.err(
                        v,
                        &self.key("duration"),
                        format!("must be > 0 for {kind} traffic"),
                    ),
                    None => format!(
                        "{}: `{}` is required (and > 0) for {kind} traffic",
                        ctx.file,
                        self.key("duration")
                    ),
                })
            } else if needs_dur && let Ok(st) = &start_r {
                ctx.time_sum(&[(&self.key("start"), *st), (&self.key("duration"), d)])
                    .map(|_| d)
            } else {
                Ok(d)
            }
        });
        (start_r, dur_r)
    }

    /// A node list (`hosts`, `receivers`, `senders`): every id must be a host of the
    /// topology, none listed twice. `None` when the key is not given.
    fn host_list(
        &self,
        v: &Option<Spanned<Vec<u32>>>,
        k: &str,
    ) -> Result<Option<Vec<u32>>, String> {
        let Some(v) = v else { return Ok(None) };
        let mut seen = std::collections::HashSet::with_capacity(v.get_ref().len());
        for &n in v.get_ref() {
            self.topo
                .check_host(n)
                .map_err(|e| self.ctx.err_val(v, &self.key(k), e))?;
            if !seen.insert(n) {
                return Err(self
                    .ctx
                    .err_val(v, &self.key(k), format!("node {n} is listed twice")));
            }
        }
        Ok(Some(v.get_ref().clone()))
    }

    /// The kinds that draw their endpoints from `hosts` need at least two of them.
    fn check_host_count(&self, hosts: &Result<Option<Vec<u32>>, String>) -> Result<(), String> {
        let (tr, kind) = (self.tr, self.kind);
        let uses_hosts = matches!(kind, "poisson" | "lognormal" | "all_to_all" | "permutation")
            || (kind == "incast" && tr.at.is_none())
            || (kind == "long_lived" && tr.fan_in.is_some());
        if let (true, Ok(Some(h)), Some(v)) = (uses_hosts, hosts, &tr.hosts)
            && h.len() < 2
        {
            return Err(self.ctx.err_val(
                v,
                &self.key("hosts"),
                format!("{kind} traffic needs at least 2 hosts, got {}", h.len()),
            ));
        }
        Ok(())
    }

    /// `prio`, or the default priority of generated flows, must be a data priority.
    fn check_prio(&self) -> Result<(), String> {
        let (ctx, kind, prio_rule) = (self.ctx, self.kind, self.prio_rule);
        match &self.tr.prio {
            Some(p) if *p.get_ref() == 0 || *p.get_ref() as usize > self.max_prio => {
                Err(ctx.err_val(p, &self.key("prio"), format!("out of range: {prio_rule}")))
            }
            None if kind != "flow_file" && traffic::DEFAULT_PRIO as usize > self.max_prio => {
                Err(format!(
                    "{}: traffic[{}] ({kind}): generated flows use priority {} by default, but {prio_rule}; set `{}`",
                    ctx.file,
                    self.i,
                    traffic::DEFAULT_PRIO,
                    self.key("prio")
                ))
            }
            _ => Ok(()),
        }
    }

    /// `load`, required, a fraction in (0, 1].
    fn load(&self) -> Result<f64, String> {
        let l = self.tr.load.as_ref().ok_or_else(|| self.required("load"))?;
        let v = *l.get_ref();
        if !(v.is_finite() && v > 0.0 && v <= 1.0) {
            return Err(self.ctx.err_val(
                l,
                &self.key("load"),
                "must be in (0, 1]: the offered load is a fraction of the host link capacity",
            ));
        }
        Ok(v)
    }

    /// `size`, required, at least 1 byte.
    fn size(&self) -> Result<u64, String> {
        let s = self.tr.size.as_ref().ok_or_else(|| self.required("size"))?;
        match parse_bytes(s.get_ref()) {
            Err(e) => Err(self.ctx.err(s, &self.key("size"), e)),
            Ok(0) => Err(self
                .ctx
                .err(s, &self.key("size"), "must be at least 1 byte")),
            Ok(b) => Ok(b),
        }
    }

    /// The load as a fraction of each host link: `load` itself with `load_basis = "host"`
    /// (the default); with `"fabric"`, `load` divided by the uplink utilization one unit of
    /// host load offers the busiest edge switch
    /// ([`TopologySpec::uplink_load_per_host_load`]). Errors name `traffic[i].load_basis`
    /// (an unknown basis, a topology without a fabric) or `traffic[i].load` (more than each
    /// host link can offer).
    fn host_load(
        &self,
        load: f64,
        hosts: &[u32],
        locality: Option<(&[u32], f64)>,
    ) -> Result<f64, String> {
        let (i, tr, ctx) = (self.i, self.tr, self.ctx);
        let key = |k: &str| format!("traffic[{i}].{k}");
        let Some(b) = &tr.load_basis else {
            return Ok(load);
        };
        match b.get_ref().as_str() {
            "host" => Ok(load),
            "fabric" => {
                let k = self
                    .topo
                    .uplink_load_per_host_load(hosts, self.host_rate, locality)
                    .map_err(|e| ctx.err(b, &key("load_basis"), e))?;
                let per_host = load / k;
                if per_host > 1.0 {
                    let l = tr.load.as_ref().expect("a load was read");
                    return Err(ctx.err_val(
                        l,
                        &key("load"),
                        format!(
                            "{load} of the fabric is {per_host:.3} of each host link (one unit of host load offers the busiest edge switch's uplinks {k:.3}): more than the hosts can send"
                        ),
                    ));
                }
                Ok(per_host)
            }
            other => Err(ctx.err(
                b,
                &key("load_basis"),
                format!("unknown load basis `{other}` (host, fabric)"),
            )),
        }
    }

    /// `poisson` / `lognormal`: open-loop arrivals of CDF-sized flows at the offered load.
    fn open_loop(&self, c: Common) -> Result<Source, String> {
        let tr = self.tr;
        let cdf = c.cdf.expect("poisson and lognormal read a CDF")?;
        let load = self.load()?;
        let gaps = self.gaps()?;
        let locality = self.locality(&c.hosts)?;
        let load = self.host_load(
            load,
            &c.hosts,
            locality.as_ref().map(|_| {
                (
                    self.sites.expect("locality needs sites"),
                    *tr.remote_fraction.as_ref().expect("locality").get_ref(),
                )
            }),
        )?;
        let flows = traffic::open_loop_flows(
            &c.hosts,
            &cdf,
            load,
            self.host_rate,
            gaps,
            locality.as_ref(),
            c.start,
            c.dur,
            c.seed,
        )
        .map(Source::open_loop)
        .map_err(|e| match &tr.remote_fraction {
            Some(r) if locality.is_some() && e.contains("site") => {
                self.ctx.err_val(r, &self.key("remote_fraction"), e)
            }
            _ => e,
        });
        self.generated(flows)
    }

    /// The inter-arrival gaps of an open-loop kind: exponential (`poisson`) or lognormal of
    /// `sigma` (default 2).
    fn gaps(&self) -> Result<traffic::Gaps, String> {
        if self.kind == "poisson" {
            return Ok(traffic::Gaps::Exponential);
        }
        match &self.tr.sigma {
            None => Ok(traffic::Gaps::Lognormal { sigma: 2.0 }),
            Some(s) if (0.0..=traffic::MAX_LOGNORMAL_SIGMA).contains(s.get_ref()) => {
                Ok(traffic::Gaps::Lognormal { sigma: *s.get_ref() })
            }
            Some(s) => Err(self.ctx.err_val(s, &self.key("sigma"), format!(
                "must be a number in 0..={} (with the mean gap fixed by the load, a larger σ makes nearly every gap round to zero: a short run would generate orders of magnitude more flows than the load implies)",
                traffic::MAX_LOGNORMAL_SIGMA
            ))),
        }
    }

    /// `remote_fraction`: the destination locality of open-loop flows on a topology with
    /// sites (`None`: destinations uniform over all hosts).
    fn locality(&self, hosts: &[u32]) -> Result<Option<traffic::Locality>, String> {
        let key = self.key("remote_fraction");
        match (&self.tr.remote_fraction, self.sites) {
            (None, _) => Ok(None),
            (Some(r), None) => Err(self.ctx.err_val(
                r,
                &key,
                "needs a topology with data centers (`topology.kind = \"two_dc\"`)",
            )),
            (Some(r), Some(site)) => {
                let p = *r.get_ref();
                if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
                    return Err(self.ctx.err_val(r, &key, "must be in [0, 1]"));
                }
                Ok(Some(traffic::Locality {
                    site: hosts.iter().map(|&h| site[h as usize]).collect(),
                    remote_fraction: p,
                }))
            }
        }
    }

    /// `incast`: one event at `at` from explicit senders, or repeated events of `degree`
    /// senders.
    fn incast(&self, c: Common) -> Result<Source, String> {
        let size = self.incast_size()?;
        let window = self
            .ctx
            .time(&self.tr.sync_window, &self.key("sync_window"), 0)?;
        match &self.tr.at {
            Some(at) => self.single_incast(c, at, size, window),
            None => self.repeated_incast(c, size, window),
        }
    }

    /// Bytes per incast flow: `size`, or with `total_size` (repeated incast) the event's bytes
    /// split over its `degree` flows.
    fn incast_size(&self) -> Result<u64, String> {
        let tr = self.tr;
        let Some(ts) = tr.total_size.as_ref().filter(|_| tr.at.is_none()) else {
            return self.size();
        };
        if tr.size.is_some() {
            return Err(self.exclusive(
                "total_size",
                "size",
                "bytes per flow, or per event split over `degree` flows",
            ));
        }
        let total = match parse_bytes(ts.get_ref()) {
            Err(e) => return Err(self.ctx.err(ts, &self.key("total_size"), e)),
            Ok(0) => {
                return Err(self
                    .ctx
                    .err(ts, &self.key("total_size"), "must be at least 1 byte"));
            }
            Ok(b) => b,
        };
        let d = tr.degree.as_ref().map_or(1, |d| (*d.get_ref()).max(1)) as u64;
        Ok(total.div_ceil(d))
    }

    /// A single incast at `at`: every one of `senders` sends `size` bytes to the one receiver
    /// within `window` picoseconds (at random times, or evenly with `stagger`).
    fn single_incast(&self, c: Common, at: &S, size: u64, window: u64) -> Result<Source, String> {
        let (tr, ctx) = (self.tr, self.ctx);
        let key = |k: &str| self.key(k);
        let at = parse_time_ps(at.get_ref()).map_err(|e| ctx.err(at, &key("at"), e))?;
        ctx.time_sum(&[(&key("at"), at), (&key("sync_window"), window)])?;
        let (Some(sv), Some(senders)) = (&tr.senders, c.senders) else {
            return Err(format!(
                "{}: `{}` is required with `{}`",
                ctx.file,
                key("senders"),
                key("at")
            ));
        };
        let recv = match c.receivers.as_deref() {
            Some([r]) => *r,
            _ => {
                return Err(format!(
                    "{}: `{}` must list exactly one receiver with `{}`",
                    ctx.at(&key("receivers"), None),
                    key("receivers"),
                    key("at")
                ));
            }
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
        self.generated(if tr.stagger == Some(true) {
            traffic::incast_staggered(&senders, recv, size, at, window).map(Source::list)
        } else {
            traffic::incast_once(&senders, recv, size, at, window, c.seed).map(Source::list)
        })
    }

    /// Repeated incast: events of `degree` senders of `size` bytes each toward one receiver,
    /// periodic or Poisson (sized by `load`), over the duration.
    fn repeated_incast(&self, c: Common, size: u64, window: u64) -> Result<Source, String> {
        let tr = self.tr;
        let d = tr.degree.as_ref().ok_or_else(|| self.required("degree"))?;
        let receivers = c.receivers.unwrap_or_default();
        let repeat = tr.repeat_senders.unwrap_or(false);
        let degree = self.check_degree(d, &c.hosts, &receivers, repeat)?;
        let timing = self.incast_timing(&c.hosts, &receivers)?;
        self.ctx.time_sum(&[
            (&self.key("start"), c.start),
            (&self.key("duration"), c.dur),
            (&self.key("sync_window"), window),
        ])?;
        self.generated(
            traffic::incast_flows(
                &c.hosts, &receivers, degree, size, timing, repeat, window, c.start, c.dur, c.seed,
            )
            .map(Source::incast),
        )
    }

    /// `degree` of a repeated incast: at least 1, at most [`traffic::MAX_INCAST_DEGREE`], and
    /// (unless `repeat_senders`) no more than the distinct senders available.
    fn check_degree(
        &self,
        d: &Spanned<usize>,
        hosts: &[u32],
        receivers: &[u32],
        repeat: bool,
    ) -> Result<usize, String> {
        let ctx = self.ctx;
        let max = traffic::incast_max_degree(hosts, receivers);
        let degree = *d.get_ref();
        if degree == 0 {
            return Err(ctx.err_val(d, &self.key("degree"), "must be at least 1"));
        }
        if degree > traffic::MAX_INCAST_DEGREE {
            return Err(ctx.err_val(d, &self.key("degree"), format!(
                "must be at most {} (each event's flows are built at once; the papers' incasts are 16…256 senders)",
                traffic::MAX_INCAST_DEGREE
            )));
        }
        if degree > max && !repeat {
            let pool = if self.tr.hosts.is_some() {
                format!("the {} hosts of `{}`", hosts.len(), self.key("hosts"))
            } else {
                format!(
                    "all {} hosts (`{}` not given)",
                    hosts.len(),
                    self.key("hosts")
                )
            };
            return Err(ctx.err_val(d, &self.key("degree"), format!(
                "must be in 1..={max}: each event's senders are distinct hosts, other than the receiver, among {pool} (or set `{}` = true)",
                self.key("repeat_senders")
            )));
        }
        Ok(degree)
    }

    /// When repeated incast events happen: every `period`, or Poisson events whose bytes make
    /// the offered `load`.
    fn incast_timing(
        &self,
        hosts: &[u32],
        receivers: &[u32],
    ) -> Result<traffic::IncastTiming, String> {
        let tr = self.tr;
        if let Some(pv) = &tr.period {
            if tr.load.is_some() {
                return Err(self.exclusive(
                    "period",
                    "load",
                    "periodic events (`period`) or Poisson events sized by `load`",
                ));
            }
            let period_ps = parse_time_ps(pv.get_ref())
                .map_err(|e| self.ctx.err(pv, &self.key("period"), e))?;
            if period_ps == 0 {
                return Err(self.ctx.err(pv, &self.key("period"), "must be > 0"));
            }
            return Ok(traffic::IncastTiming::Periodic { period_ps });
        }
        if tr
            .load_basis
            .as_ref()
            .is_some_and(|b| b.get_ref().as_str() == "fabric")
            && !receivers.is_empty()
        {
            return Err(self.exclusive(
                "load_basis",
                "receivers",
                "a fabric load assumes receivers drawn from all of `hosts`",
            ));
        }
        Ok(traffic::IncastTiming::Poisson {
            load: self.host_load(self.load()?, hosts, None)?,
            host_rate_bps: self.host_rate,
        })
    }

    /// `long_lived` with `fan_in`: each host receives from `fan_in` distinct random senders.
    fn long_lived_fan_in(&self, c: &Common) -> Result<Source, String> {
        let fv = self.tr.fan_in.as_ref().expect("checked");
        if self.tr.pairs.is_some() {
            return Err(self.exclusive(
                "fan_in",
                "pairs",
                "explicit pairs, or `fan_in` random senders per host",
            ));
        }
        let m = c.hosts.len().saturating_sub(1);
        let k = *fv.get_ref();
        if k == 0 || k > m {
            return Err(self.ctx.err_val(
                fv,
                &self.key("fan_in"),
                format!("must be in 1..={m}: distinct senders among the other hosts"),
            ));
        }
        let size = self.size()?;
        self.generated(
            traffic::long_lived_fan_in(&c.hosts, k, size, c.start, c.seed).map(Source::list),
        )
    }

    /// `long_lived` with `pairs`: one flow per `[sender, receiver]` pair, two different hosts.
    fn long_lived_pairs(&self, c: &Common) -> Result<Source, String> {
        let ctx = self.ctx;
        let pv = self
            .tr
            .pairs
            .as_ref()
            .ok_or_else(|| self.required("pairs"))?;
        let mut pairs = Vec::with_capacity(pv.get_ref().len());
        for pair in pv.get_ref() {
            let &[s, d] = pair.as_slice() else {
                return Err(ctx.err_val(
                    pv,
                    &self.key("pairs"),
                    format!("{pair:?}: each pair is [sender, receiver], two host ids"),
                ));
            };
            let bad =
                |e: String| ctx.err_val(pv, &self.key("pairs"), format!("pair [{s}, {d}]: {e}"));
            self.topo.check_host(s).map_err(bad)?;
            self.topo.check_host(d).map_err(bad)?;
            if s == d {
                return Err(bad(format!(
                    "a flow needs two different hosts (host {s} to itself)"
                )));
            }
            pairs.push((s, d));
        }
        let size = self.size()?;
        self.generated(traffic::long_lived(&pairs, c.start, size).map(Source::list))
    }

    /// `flow_file`: the flows of an HPCC flow file, checked line by line (before sorting) so
    /// that errors name the flow file's line.
    fn flow_file(&self) -> Result<Source, String> {
        let (ctx, tr) = (self.ctx, self.tr);
        let fs = tr.file.as_ref().ok_or_else(|| self.required("file"))?;
        let p = ctx.path(fs.get_ref());
        let text = crate::fsutil::read_text_lines(&p).map_err(|e| {
            ctx.err(
                fs,
                &self.key("file"),
                format!(
                    "cannot read {}: {e}{}",
                    p.display(),
                    relative_hint(fs.get_ref())
                ),
            )
        })?;
        let check_prio = tr.prio.is_none();
        let flows = flow_file::parse_with(&text, &p.display().to_string(), |f| {
            flow_file::check_endpoints(f, self.topo)?;
            if check_prio && f.prio as usize > self.max_prio {
                return Err(format!(
                    "field 3 (pg) = {} is out of range: {} (or set `{}` to override every flow's priority)",
                    f.prio,
                    self.prio_rule,
                    self.key("prio")
                ));
            }
            Ok(())
        })
        .map(|(f, warns)| {
            for w in warns {
                eprintln!("warning: {w}");
            }
            Source::list(f)
        });
        self.generated(flows)
    }
}

/// The size CDF named by `key` (`traffic[i].cdf`): a built-in name (the file-format keys then
/// have no effect, a warning says so) or a CDF file in `cdf_format`.
fn load_cdf(tr: &RawTraffic, ctx: &Ctx, key: &str) -> Result<SizeCdf, String> {
    let name = tr
        .cdf
        .as_deref()
        .ok_or_else(|| format!("{}: `{key}` is required", ctx.file))?;
    if let Some(c) = crate::workload::cdf::builtin(name) {
        for (k, present) in [
            ("cdf_format", tr.cdf_format.is_some()),
            ("cdf_unit_bytes", tr.cdf_unit_bytes.is_some()),
        ] {
            if present {
                let k = format!("{}{k}", key.trim_end_matches("cdf"));
                ctx.warn(ctx.err_key(
                    &k,
                    format!("has no effect: `{name}` is a built-in CDF (these read CDF files)"),
                ));
            }
        }
        return Ok(c);
    }
    let p = ctx.path(name);
    if !p.exists() || p.is_dir() {
        let what = if p.is_dir() {
            "a directory, not a CDF file"
        } else {
            "neither a built-in CDF nor an existing file"
        };
        return Err(format!(
            "{}: `{key}` = \"{name}\": {what} (built-in CDFs: {})",
            ctx.at(key, None),
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
