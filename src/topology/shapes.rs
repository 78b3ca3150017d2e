//! Generators for the standard datacenter shapes, plus [`tiers`] to recover switch tiers.
//!
//! # Numbering conventions (they define port numbers, see the [module docs](super))
//!
//! Every generator numbers nodes **hosts first** (`0..H`), then the switches tier by tier,
//! bottom-up: ToRs (or leaves), then aggregation switches (or spines), then cores — the layout
//! of HPCC-sim's `fat.txt`. Within a tier, switches are numbered pod by pod.
//!
//! Links are declared in this order:
//! 1. host links, host `0` first (`host — ToR`, host as end `a`);
//! 2. ToR–aggregation (or leaf–spine) links, grouped by ToR (ToR as end `a`), and within a ToR by
//!    ascending upper switch;
//! 3. aggregation–core links, grouped by aggregation switch (agg as end `a`), ascending core.
//!
//! Hence a ToR's ports are its hosts (port `i` = its `i`-th host) followed by its uplinks, an
//! aggregation switch's ports are its ToRs followed by its cores, and a core's ports are its
//! aggregation switches in ascending node order.
//!
//! All rates are in bits per second and all delays (one-way propagation) in picoseconds.

use super::{LinkSpec, NodeKind, TopologySpec};
use crate::units::{GBPS, US};
use std::collections::VecDeque;

/// Largest number of nodes a generator or the topology-file parser accepts.
pub const MAX_NODES: u64 = 1 << 22;

/// Largest `hosts × switches` product accepted (the size of a full routing table; see
/// [`super::routing::RouteTable`]).
pub const MAX_ROUTE_ENTRIES: u64 = 1 << 28;

/// Check the size limits every topology must respect so that routing tables and `u16` port
/// numbers cannot overflow: at most [`MAX_NODES`] nodes, at most [`MAX_ROUTE_ENTRIES`]
/// host×switch pairs, and at most 65 535 links on any node. Returns a readable error.
pub fn check_limits(spec: &TopologySpec) -> Result<(), String> {
    let n = spec.kinds.len() as u64;
    if n > MAX_NODES {
        return Err(format!(
            "{n} nodes exceed the supported maximum of {MAX_NODES}"
        ));
    }
    let hosts = spec.kinds.iter().filter(|&&k| k == NodeKind::Host).count() as u64;
    let switches = n - hosts;
    if hosts * switches > MAX_ROUTE_ENTRIES {
        return Err(format!(
            "{hosts} hosts × {switches} switches exceed the supported routing-table size of \
             {MAX_ROUTE_ENTRIES} entries"
        ));
    }
    let mut degree = vec![0u32; spec.kinds.len()];
    for l in &spec.links {
        for end in [l.a, l.b] {
            if let Some(d) = degree.get_mut(end as usize) {
                *d += 1;
                if *d > u16::MAX as u32 {
                    return Err(format!(
                        "node {end} has more than {} links (port numbers are 16-bit)",
                        u16::MAX
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Incremental builder shared by the generators.
struct Builder {
    spec: TopologySpec,
}

impl Builder {
    /// Start with `hosts` hosts followed by `switches` switches (counts already checked).
    fn new(hosts: u64, switches: u64) -> Result<Self, String> {
        let total = hosts
            .checked_add(switches)
            .filter(|&t| t <= MAX_NODES)
            .ok_or_else(|| {
                format!(
                    "{hosts} hosts + {switches} switches exceed the supported maximum of \
                     {MAX_NODES} nodes"
                )
            })?;
        let mut kinds = Vec::with_capacity(total as usize);
        kinds.resize(hosts as usize, NodeKind::Host);
        kinds.resize(total as usize, NodeKind::Switch);
        Ok(Builder {
            spec: TopologySpec {
                kinds,
                links: Vec::new(),
            },
        })
    }

    fn link(&mut self, a: u64, b: u64, rate_bps: u64, delay_ps: u64) {
        self.spec.links.push(LinkSpec {
            a: a as u32,
            b: b as u32,
            rate_bps,
            delay_ps,
            error_rate: 0.0,
        });
    }

    fn finish(self, what: &str) -> Result<TopologySpec, String> {
        check_limits(&self.spec).map_err(|e| format!("{what}: {e}"))?;
        self.spec.validate().map_err(|e| format!("{what}: {e}"))?;
        Ok(self.spec)
    }
}

fn positive(what: &str, field: &str, v: u64) -> Result<(), String> {
    if v == 0 {
        Err(format!("{what}: {field} must be positive"))
    } else {
        Ok(())
    }
}

/// Product of `factors`, or an error if it exceeds [`MAX_NODES`] (used to bound both node and
/// link counts before allocating).
fn product(what: &str, noun: &str, factors: &[u64]) -> Result<u64, String> {
    factors
        .iter()
        .try_fold(1u64, |acc, &f| acc.checked_mul(f))
        .filter(|&p| p <= MAX_NODES)
        .ok_or_else(|| format!("{what}: too many {noun} (maximum {MAX_NODES})"))
}

/// A single switch (node `hosts`) with `hosts` hosts (nodes `0..hosts`), each linked at
/// `rate_bps` bits/s with one-way delay `delay_ps` picoseconds. Link `i` is host `i`'s link,
/// so switch port `i` leads to host `i`. Needs at least 2 hosts.
pub fn star(hosts: u32, rate_bps: u64, delay_ps: u64) -> Result<TopologySpec, String> {
    const W: &str = "star";
    if hosts < 2 {
        return Err(format!("{W}: needs at least 2 hosts, got {hosts}"));
    }
    positive(W, "link rate", rate_bps)?;
    let h = hosts as u64;
    let mut b = Builder::new(h, 1)?;
    for i in 0..h {
        b.link(i, h, rate_bps, delay_ps);
    }
    b.finish(W)
}

/// Two switches joined by one link: hosts `0..left_hosts` hang off the left switch (node
/// `left_hosts + right_hosts`), hosts `left_hosts..left_hosts + right_hosts` off the right switch
/// (the next node). Host links run at `host_rate_bps` bits/s with one-way delay `host_delay_ps`
/// picoseconds; the switch–switch link (declared last) at `core_rate_bps` / `core_delay_ps`.
/// Each side needs at least one host.
pub fn dumbbell(
    left_hosts: u32,
    right_hosts: u32,
    host_rate_bps: u64,
    host_delay_ps: u64,
    core_rate_bps: u64,
    core_delay_ps: u64,
) -> Result<TopologySpec, String> {
    const W: &str = "dumbbell";
    positive(W, "left host count", left_hosts as u64)?;
    positive(W, "right host count", right_hosts as u64)?;
    positive(W, "host link rate", host_rate_bps)?;
    positive(W, "core link rate", core_rate_bps)?;
    let (l, r) = (left_hosts as u64, right_hosts as u64);
    let h = l + r;
    let mut b = Builder::new(h, 2)?;
    for i in 0..h {
        let sw = if i < l { h } else { h + 1 };
        b.link(i, sw, host_rate_bps, host_delay_ps);
    }
    b.link(h, h + 1, core_rate_bps, core_delay_ps);
    b.finish(W)
}

/// Parameters of a two-tier leaf–spine (folded Clos) fabric; see [`leaf_spine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSpine {
    /// Number of spine switches.
    pub spines: u32,
    /// Number of ToR (leaf) switches.
    pub tors: u32,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Host–ToR link rate, bits per second.
    pub host_rate_bps: u64,
    /// Host–ToR one-way propagation delay, picoseconds.
    pub host_delay_ps: u64,
    /// ToR–spine link rate, bits per second.
    pub fabric_rate_bps: u64,
    /// ToR–spine one-way propagation delay, picoseconds.
    pub fabric_delay_ps: u64,
    /// Parallel links between each ToR and each spine (usually 1).
    pub links_per_spine: u32,
}

impl Default for LeafSpine {
    /// 8 ToRs × 16 hosts at 100 Gb/s, 4 spines at 400 Gb/s (no oversubscription), 1 µs delays.
    fn default() -> Self {
        LeafSpine {
            spines: 4,
            tors: 8,
            hosts_per_tor: 16,
            host_rate_bps: 100 * GBPS,
            host_delay_ps: US,
            fabric_rate_bps: 400 * GBPS,
            fabric_delay_ps: US,
            links_per_spine: 1,
        }
    }
}

/// The counts and rates of a leaf–spine fabric (of [`leaf_spine`] or of each [`two_dc`] data
/// center) must be positive; `w` names the shape in the error.
fn check_leaf_spine(w: &str, p: &LeafSpine) -> Result<(), String> {
    positive(w, "spine count", p.spines as u64)?;
    positive(w, "ToR count", p.tors as u64)?;
    positive(w, "hosts per ToR", p.hosts_per_tor as u64)?;
    positive(w, "links per spine", p.links_per_spine as u64)?;
    positive(w, "host link rate", p.host_rate_bps)?;
    positive(w, "fabric link rate", p.fabric_rate_bps)
}

/// Two-tier Clos: every ToR is linked to every spine by `links_per_spine` parallel links.
///
/// Nodes: hosts `0..tors·hosts_per_tor` (host `t·hosts_per_tor + i` under ToR `t`), then the
/// ToRs, then the spines. Links: host links, then for each ToR, for each spine, its
/// `links_per_spine` parallel links. The oversubscription ratio is
/// `hosts_per_tor·host_rate / (spines·links_per_spine·fabric_rate)`.
pub fn leaf_spine(p: LeafSpine) -> Result<TopologySpec, String> {
    const W: &str = "leaf-spine";
    check_leaf_spine(W, &p)?;
    let (tors, spines) = (p.tors as u64, p.spines as u64);
    let hpt = p.hosts_per_tor as u64;
    let hosts = product(W, "nodes", &[tors, hpt])?;
    let mut b = Builder::new(hosts, tors + spines)?;
    product(W, "links", &[tors, spines, p.links_per_spine as u64])?;
    let tor0 = hosts;
    let spine0 = hosts + tors;
    for h in 0..hosts {
        b.link(h, tor0 + h / hpt, p.host_rate_bps, p.host_delay_ps);
    }
    for t in 0..tors {
        for s in 0..spines {
            for _ in 0..p.links_per_spine {
                b.link(tor0 + t, spine0 + s, p.fabric_rate_bps, p.fabric_delay_ps);
            }
        }
    }
    b.finish(W)
}

/// Parameters of two leaf–spine data centers joined by one long link between two gateway
/// switches; see [`two_dc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoDc {
    /// One data center's fabric (both are identical; `links_per_spine` is honoured too).
    pub dc: LeafSpine,
    /// Gateway–spine link rate, bits per second (every spine of a data center is linked to
    /// that data center's gateway).
    pub gateway_rate_bps: u64,
    /// Gateway–spine one-way propagation delay, picoseconds.
    pub gateway_delay_ps: u64,
    /// Rate of the gateway–gateway (inter-DC) link, bits per second.
    pub dci_rate_bps: u64,
    /// One-way propagation delay of the gateway–gateway link, picoseconds.
    pub dci_delay_ps: u64,
}

/// Node ids of the special switches of a [`two_dc`] topology and of its data centers' hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoDcLayout {
    /// Hosts per data center: DC 0 holds hosts `0..hosts_per_dc`, DC 1 the next as many.
    pub hosts_per_dc: u32,
    /// Gateway switch of DC 0 (node id).
    pub gateway0: u32,
    /// Gateway switch of DC 1 (node id; `gateway0 + 1`, the last node).
    pub gateway1: u32,
}

impl TwoDc {
    /// Where the hosts and gateways of this shape are (without building it). Counts are not
    /// checked here; [`two_dc`] checks them.
    pub fn layout(&self) -> TwoDcLayout {
        let d = &self.dc;
        let hpd = d.tors.saturating_mul(d.hosts_per_tor);
        let g0 = hpd
            .saturating_mul(2)
            .saturating_add(d.tors.saturating_mul(2))
            .saturating_add(d.spines.saturating_mul(2));
        TwoDcLayout {
            hosts_per_dc: hpd,
            gateway0: g0,
            gateway1: g0.saturating_add(1),
        }
    }
}

/// Two copies of [`leaf_spine`] (data centers 0 and 1) whose spines all link to their data
/// center's gateway switch; the two gateways are joined by one inter-DC link (the BFC paper's
/// Fig. 9: two T2 fabrics and a 100 Gb/s, 200 µs link). Shortest-path routing keeps intra-DC
/// traffic inside its fabric; an inter-DC path is host–ToR–spine–gateway–gateway–spine–ToR–host
/// (7 links, ECMP over the spines on both sides).
///
/// Nodes (hosts first, then switches tier by tier): DC 0 hosts `0..H`, DC 1 hosts `H..2H`
/// (H = `tors·hosts_per_tor`; host `i` of a DC under that DC's ToR `i / hosts_per_tor`), then
/// the ToRs of DC 0 and of DC 1, the spines of DC 0 and of DC 1, then gateway 0 and gateway 1
/// (the last two nodes, see [`TwoDc::layout`]). Links: host links in host order; ToR–spine
/// links of DC 0 then DC 1 (as in [`leaf_spine`]); gateway–spine links (gateway as end `a`,
/// DC 0 first, ascending spine); the inter-DC link (gateway 0 – gateway 1) last. Tiers:
/// ToRs 1, spines 2, gateways 3.
pub fn two_dc(p: TwoDc) -> Result<TopologySpec, String> {
    const W: &str = "two-DC";
    let d = p.dc;
    check_leaf_spine(W, &d)?;
    positive(W, "gateway link rate", p.gateway_rate_bps)?;
    positive(W, "inter-DC link rate", p.dci_rate_bps)?;
    let (tors, spines) = (d.tors as u64, d.spines as u64);
    let hpt = d.hosts_per_tor as u64;
    let hpd = product(W, "nodes", &[tors, hpt])?;
    let hosts = product(W, "nodes", &[2, hpd])?;
    let switches = product(W, "nodes", &[2, tors + spines + 1])?;
    product(W, "links", &[2, tors, spines, d.links_per_spine as u64])?;
    let mut b = Builder::new(hosts, switches)?;
    let tor0 = hosts;
    let spine0 = tor0 + 2 * tors;
    let gw0 = spine0 + 2 * spines;
    for h in 0..hosts {
        b.link(h, tor0 + h / hpt, d.host_rate_bps, d.host_delay_ps);
    }
    for dc in 0..2 {
        for t in 0..tors {
            for s in 0..spines {
                for _ in 0..d.links_per_spine {
                    b.link(
                        tor0 + dc * tors + t,
                        spine0 + dc * spines + s,
                        d.fabric_rate_bps,
                        d.fabric_delay_ps,
                    );
                }
            }
        }
    }
    for dc in 0..2 {
        for s in 0..spines {
            b.link(
                gw0 + dc,
                spine0 + dc * spines + s,
                p.gateway_rate_bps,
                p.gateway_delay_ps,
            );
        }
    }
    b.link(gw0, gw0 + 1, p.dci_rate_bps, p.dci_delay_ps);
    b.finish(W)
}

/// Parameters of a three-tier pod-based Clos; see [`three_tier`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreeTier {
    /// Number of pods.
    pub pods: u32,
    /// ToR switches per pod.
    pub tors_per_pod: u32,
    /// Aggregation switches per pod.
    pub aggs_per_pod: u32,
    /// Core switches each aggregation switch connects to; there are
    /// `aggs_per_pod · cores_per_agg` cores in total.
    pub cores_per_agg: u32,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Host–ToR link rate, bits per second.
    pub host_rate_bps: u64,
    /// Host–ToR one-way propagation delay, picoseconds.
    pub host_delay_ps: u64,
    /// ToR–agg and agg–core link rate, bits per second.
    pub fabric_rate_bps: u64,
    /// ToR–agg and agg–core one-way propagation delay, picoseconds.
    pub fabric_delay_ps: u64,
}

/// Three-tier pod-based Clos (the shape of HPCC's `fat.txt` and of the k-ary fat tree).
///
/// Every ToR connects to every aggregation switch of its pod; aggregation switch `j` of every
/// pod connects to cores `j·cores_per_agg .. (j+1)·cores_per_agg` (so cores form
/// `aggs_per_pod` planes). Nodes: hosts (host `t·hosts_per_tor + i` under global ToR `t`), then
/// ToRs (pod by pod), then aggregation switches (pod by pod), then cores. Links: host links,
/// then ToR–agg grouped by ToR, then agg–core grouped by agg.
pub fn three_tier(p: ThreeTier) -> Result<TopologySpec, String> {
    const W: &str = "three-tier";
    positive(W, "pod count", p.pods as u64)?;
    positive(W, "ToRs per pod", p.tors_per_pod as u64)?;
    positive(W, "aggs per pod", p.aggs_per_pod as u64)?;
    positive(W, "cores per agg", p.cores_per_agg as u64)?;
    positive(W, "hosts per ToR", p.hosts_per_tor as u64)?;
    positive(W, "host link rate", p.host_rate_bps)?;
    positive(W, "fabric link rate", p.fabric_rate_bps)?;
    let pods = p.pods as u64;
    let tpp = p.tors_per_pod as u64;
    let app = p.aggs_per_pod as u64;
    let cpa = p.cores_per_agg as u64;
    let hpt = p.hosts_per_tor as u64;
    let tors = product(W, "nodes", &[pods, tpp])?;
    let aggs = product(W, "nodes", &[pods, app])?;
    let cores = product(W, "nodes", &[app, cpa])?;
    let hosts = product(W, "nodes", &[tors, hpt])?;
    let switches = tors
        .checked_add(aggs)
        .and_then(|s| s.checked_add(cores))
        .ok_or_else(|| format!("{W}: too many nodes"))?;
    let mut b = Builder::new(hosts, switches)?;
    product(W, "links", &[tors, app])?;
    product(W, "links", &[aggs, cpa])?;
    let tor0 = hosts;
    let agg0 = tor0 + tors;
    let core0 = agg0 + aggs;
    for h in 0..hosts {
        b.link(h, tor0 + h / hpt, p.host_rate_bps, p.host_delay_ps);
    }
    for t in 0..tors {
        let pod = t / tpp;
        for j in 0..app {
            b.link(
                tor0 + t,
                agg0 + pod * app + j,
                p.fabric_rate_bps,
                p.fabric_delay_ps,
            );
        }
    }
    for a in 0..aggs {
        let j = a % app;
        for c in 0..cpa {
            b.link(
                agg0 + a,
                core0 + j * cpa + c,
                p.fabric_rate_bps,
                p.fabric_delay_ps,
            );
        }
    }
    b.finish(W)
}

/// Classic k-ary fat tree: `k` pods of `k/2` ToRs and `k/2` aggregation switches, `(k/2)²`
/// cores, `k/2` hosts per ToR — `k³/4` hosts in all. `k` must be even and at least 2.
/// Host links run at `host_rate_bps` bits/s with one-way delay `host_delay_ps` picoseconds,
/// switch–switch links at `fabric_rate_bps` / `fabric_delay_ps`. Numbering as [`three_tier`].
pub fn fat_tree(
    k: u32,
    host_rate_bps: u64,
    host_delay_ps: u64,
    fabric_rate_bps: u64,
    fabric_delay_ps: u64,
) -> Result<TopologySpec, String> {
    if k < 2 || !k.is_multiple_of(2) {
        return Err(format!("fat tree: k must be even and at least 2, got {k}"));
    }
    let half = k / 2;
    three_tier(ThreeTier {
        pods: k,
        tors_per_pod: half,
        aggs_per_pod: half,
        cores_per_agg: half,
        hosts_per_tor: half,
        host_rate_bps,
        host_delay_ps,
        fabric_rate_bps,
        fabric_delay_ps,
    })
    .map_err(|e| e.replacen("three-tier", "fat tree", 1))
}

/// The HPCC paper's 320-host topology, identical to HPCC-sim's `mix/fat.txt` (node ids, link
/// order, rates and delays): 5 pods × (4 ToRs + 4 aggs), 16 cores, 16 hosts per ToR; host
/// links 100 Gb/s, fabric links 400 Gb/s, all delays 1 µs. Nodes: hosts 0–319, ToRs 320–339,
/// aggs 340–359, cores 360–375; 480 links.
pub fn hpcc_fat_tree_320() -> Result<TopologySpec, String> {
    three_tier(ThreeTier {
        pods: 5,
        tors_per_pod: 4,
        aggs_per_pod: 4,
        cores_per_agg: 4,
        hosts_per_tor: 16,
        host_rate_bps: 100 * GBPS,
        host_delay_ps: US,
        fabric_rate_bps: 400 * GBPS,
        fabric_delay_ps: US,
    })
}

/// Tier of every node (indexed by node id): 0 for hosts, 1 for switches with a host neighbour
/// (ToRs), otherwise one more than the lowest tier among the switch's neighbours (aggregation
/// switches 2, cores 3) — i.e. the hop distance from the nearest host. Switches with no path to
/// any host get `u8::MAX`; tiers saturate at 254.
pub fn tiers(spec: &TopologySpec) -> Vec<u8> {
    let n = spec.kinds.len();
    let ports = spec.ports();
    let mut tier = vec![u8::MAX; n];
    let mut queue = VecDeque::new();
    for (i, &k) in spec.kinds.iter().enumerate() {
        if k == NodeKind::Host {
            tier[i] = 0;
            queue.push_back(i);
        }
    }
    while let Some(u) = queue.pop_front() {
        let next = tier[u].saturating_add(1).min(254);
        for p in &ports[u] {
            let v = p.peer as usize;
            if tier[v] == u8::MAX {
                tier[v] = next;
                queue.push_back(v);
            }
        }
    }
    tier
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::NS;

    fn degree(spec: &TopologySpec, node: u32) -> usize {
        spec.links
            .iter()
            .filter(|l| l.a == node || l.b == node)
            .count()
    }

    #[test]
    fn star_shape() {
        let s = star(4, 100 * GBPS, US).unwrap();
        assert_eq!(s.hosts(), vec![0, 1, 2, 3]);
        assert_eq!(s.switches(), vec![4]);
        assert_eq!(s.links.len(), 4);
        assert!(
            s.links
                .iter()
                .enumerate()
                .all(|(i, l)| l.a == i as u32 && l.b == 4)
        );
        assert!(star(1, GBPS, US).is_err());
        assert!(star(3, 0, US).is_err());
        assert!(star(100_000, GBPS, US).unwrap_err().contains("16-bit"));
        assert_eq!(tiers(&s), vec![0, 0, 0, 0, 1]);
    }

    #[test]
    fn dumbbell_shape() {
        let d = dumbbell(2, 3, 100 * GBPS, US, 10 * GBPS, 2 * US).unwrap();
        assert_eq!(d.num_nodes(), 7);
        assert_eq!(d.links.len(), 6);
        assert_eq!((d.links[1].a, d.links[1].b), (1, 5));
        assert_eq!((d.links[2].a, d.links[2].b), (2, 6));
        let core = &d.links[5];
        assert_eq!(
            (core.a, core.b, core.rate_bps, core.delay_ps),
            (5, 6, 10 * GBPS, 2 * US)
        );
        assert!(dumbbell(0, 3, GBPS, US, GBPS, US).is_err());
        assert!(dumbbell(1, 1, GBPS, US, 0, US).is_err());
    }

    #[test]
    fn leaf_spine_shape() {
        let p = LeafSpine {
            spines: 3,
            tors: 4,
            hosts_per_tor: 2,
            links_per_spine: 2,
            ..Default::default()
        };
        let s = leaf_spine(p).unwrap();
        assert_eq!(s.hosts().len(), 8);
        assert_eq!(s.switches(), (8..15).collect::<Vec<_>>());
        assert_eq!(s.links.len(), 8 + 4 * 3 * 2);
        // ToR 9 (second ToR): hosts 2, 3, then two links to each spine 12, 13, 14.
        let ports = s.ports();
        let peers: Vec<u32> = ports[9].iter().map(|p| p.peer).collect();
        assert_eq!(peers, vec![2, 3, 12, 12, 13, 13, 14, 14]);
        assert_eq!(degree(&s, 12), 8);
        let t = tiers(&s);
        assert_eq!(&t[8..], &[1, 1, 1, 1, 2, 2, 2]);
        assert!(leaf_spine(LeafSpine { spines: 0, ..p }).is_err());
        assert!(
            leaf_spine(LeafSpine {
                links_per_spine: 0,
                ..p
            })
            .is_err()
        );
        // One ToR with a single host: fewer than 2 hosts.
        assert!(
            leaf_spine(LeafSpine {
                tors: 1,
                hosts_per_tor: 1,
                ..p
            })
            .is_err()
        );
    }

    fn two_dc_small() -> TwoDc {
        TwoDc {
            dc: LeafSpine {
                spines: 2,
                tors: 2,
                hosts_per_tor: 3,
                host_rate_bps: 10 * GBPS,
                host_delay_ps: US,
                fabric_rate_bps: 10 * GBPS,
                fabric_delay_ps: US,
                links_per_spine: 1,
            },
            gateway_rate_bps: 100 * GBPS,
            gateway_delay_ps: US,
            dci_rate_bps: 100 * GBPS,
            dci_delay_ps: 200 * US,
        }
    }

    #[test]
    fn two_dc_shape() {
        let p = two_dc_small();
        let s = two_dc(p).unwrap();
        // 12 hosts, 2×(2 ToRs + 2 spines) + 2 gateways = 10 switches.
        assert_eq!(s.hosts(), (0..12).collect::<Vec<_>>());
        assert_eq!(s.switches(), (12..22).collect::<Vec<_>>());
        let l = p.layout();
        assert_eq!((l.hosts_per_dc, l.gateway0, l.gateway1), (6, 20, 21));
        // 12 host links + 2×2×2 ToR–spine + 2×2 gateway–spine + 1 inter-DC link.
        assert_eq!(s.links.len(), 12 + 8 + 4 + 1);
        let dci = s.links.last().unwrap();
        assert_eq!(
            (dci.a, dci.b, dci.rate_bps, dci.delay_ps),
            (20, 21, 100 * GBPS, 200 * US)
        );
        // Host 7 (DC 1, second host) hangs off DC 1's first ToR (node 14).
        assert_eq!(s.ports()[7][0].peer, 14);
        // DC 1's ToR 15: hosts 9, 10, 11, then DC 1's spines 18, 19.
        let peers: Vec<u32> = s.ports()[15].iter().map(|p| p.peer).collect();
        assert_eq!(peers, vec![9, 10, 11, 18, 19]);
        // Gateway 1: DC 1's spines, then gateway 0.
        let peers: Vec<u32> = s.ports()[21].iter().map(|p| p.peer).collect();
        assert_eq!(peers, vec![18, 19, 20]);
        let t = tiers(&s);
        assert_eq!(&t[12..], &[1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
        // Bad input: clear errors, no panic.
        let e = two_dc(TwoDc {
            dci_rate_bps: 0,
            ..p
        })
        .unwrap_err();
        assert!(
            e.contains("two-DC: inter-DC link rate must be positive"),
            "{e}"
        );
        let e = two_dc(TwoDc {
            dc: LeafSpine { spines: 0, ..p.dc },
            ..p
        })
        .unwrap_err();
        assert!(e.contains("spine count must be positive"), "{e}");
        let e = two_dc(TwoDc {
            dc: LeafSpine {
                tors: 1 << 20,
                hosts_per_tor: 1 << 20,
                ..p.dc
            },
            ..p
        })
        .unwrap_err();
        assert!(e.contains("too many nodes"), "{e}");
    }

    #[test]
    fn two_dc_paths_by_hand() {
        use crate::topology::routing::RouteTable;
        let s = two_dc(two_dc_small()).unwrap();
        let rt = RouteTable::try_build(&s).unwrap();
        // Intra-DC, different ToRs: host–ToR–spine–ToR–host, 4 links of 1 µs, all 10 Gb/s.
        let p = rt.path(&s, 0, 3);
        assert_eq!(
            (p.hops, p.prop_delay_ps, p.bottleneck_bps),
            (4, 4 * US, 10 * GBPS)
        );
        // Inter-DC: host–ToR–spine–gw–gw–spine–ToR–host: 6 links of 1 µs + 200 µs.
        let p = rt.path(&s, 0, 6);
        assert_eq!(p.hops, 7);
        assert_eq!(p.prop_delay_ps, 206 * US);
        assert_eq!(p.bottleneck_bps, 10 * GBPS);
        // Base RTT = 2 × 206 µs + serialization of a 1000 B payload on each link:
        // 4 links at 10 Gb/s (800 ns each) + 3 at 100 Gb/s (80 ns each) = 3.44 µs.
        assert_eq!(
            p.base_rtt_ps(&s, 1000),
            412 * US + 4 * 800 * NS + 3 * 80 * NS
        );
        // The topology's largest base RTT and BDP are an inter-DC pair's:
        // 415.44 µs × 10 Gb/s / 8 = 519,300 B.
        let b = rt.max_base_rtt(&s, 1000);
        assert_eq!(b.max_base_rtt_ps, 415_440 * NS);
        assert_eq!(b.max_bdp_bytes, 519_300);
        // Most switches on a path: the inter-DC one's 6 (7 links).
        assert_eq!(b.max_switch_hops, 6);
    }

    #[test]
    fn fat_tree_shape() {
        let f = fat_tree(4, 100 * GBPS, US, 100 * GBPS, US).unwrap();
        assert_eq!(f.hosts().len(), 16);
        assert_eq!(f.switches().len(), 20);
        assert_eq!(f.links.len(), 16 + 16 + 16);
        for sw in f.switches() {
            assert_eq!(degree(&f, sw), 4, "switch {sw}");
        }
        let t = tiers(&f);
        assert!(t[..16].iter().all(|&x| x == 0));
        assert!(t[16..24].iter().all(|&x| x == 1));
        assert!(t[24..32].iter().all(|&x| x == 2));
        assert!(t[32..36].iter().all(|&x| x == 3));
        // Across pods: edge, aggregation, core, aggregation, edge = 5 switches; a star: 1.
        let rt = crate::topology::routing::RouteTable::try_build(&f).unwrap();
        assert_eq!(rt.max_base_rtt(&f, 1000).max_switch_hops, 5);
        let st = star(3, GBPS, US).unwrap();
        let rt = crate::topology::routing::RouteTable::try_build(&st).unwrap();
        assert_eq!(rt.max_base_rtt(&st, 1000).max_switch_hops, 1);
        assert!(
            fat_tree(3, GBPS, US, GBPS, US)
                .unwrap_err()
                .contains("even")
        );
        assert!(fat_tree(0, GBPS, US, GBPS, US).is_err());
        assert!(fat_tree(2, GBPS, US, GBPS, US).is_ok());
        assert!(fat_tree(4000, GBPS, US, GBPS, US).is_err());
        let big = fat_tree(16, 100 * GBPS, US, 100 * GBPS, US).unwrap();
        assert_eq!(big.hosts().len(), 1024);
        assert_eq!(big.switches().len(), 320);
    }

    #[test]
    fn hpcc_320_matches_fat_txt() {
        let file =
            crate::topology::hpcc_file::parse(include_str!("../../data/hpcc/fat.txt"), "fat.txt")
                .unwrap();
        let built = hpcc_fat_tree_320().unwrap();
        assert_eq!(built.kinds.len(), 376);
        assert_eq!(built.kinds, file.kinds);
        assert_eq!(built.links.len(), 480);
        assert_eq!(built.links.len(), file.links.len());
        for (i, (g, f)) in built.links.iter().zip(&file.links).enumerate() {
            assert_eq!(g.a, f.a, "link {i} a");
            assert_eq!(g.b, f.b, "link {i} b");
            assert_eq!(g.rate_bps, f.rate_bps, "link {i} rate");
            assert_eq!(g.delay_ps, f.delay_ps, "link {i} delay");
            assert_eq!(g.error_rate, f.error_rate, "link {i} error rate");
        }
        assert_eq!(built, file);
        assert_eq!(built.links[0].delay_ps, 1000 * NS);
        let t = tiers(&built);
        assert!(t[320..340].iter().all(|&x| x == 1));
        assert!(t[340..360].iter().all(|&x| x == 2));
        assert!(t[360..376].iter().all(|&x| x == 3));
    }

    #[test]
    fn tiers_unreachable_switch() {
        let mut s = star(2, GBPS, US).unwrap();
        s.kinds.push(NodeKind::Switch);
        assert_eq!(tiers(&s), vec![0, 0, 1, u8::MAX]);
    }
}
