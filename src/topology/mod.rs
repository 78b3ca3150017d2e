//! Network topologies: the plain description ([`TopologySpec`]), generators for the standard
//! datacenter shapes ([`shapes`]), the HPCC-sim topology file format ([`hpcc_file`]) and
//! shortest-path ECMP routing tables ([`routing`]).
//!
//! Port numbering follows HPCC-sim: a node's ports are numbered in the order its links appear
//! in [`TopologySpec::links`] (HPCC-sim's interface `i+1`; we drop the loopback).

pub mod hpcc_file;
pub mod routing;
pub mod shapes;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum NodeKind {
    /// An end host with one NIC.
    Host,
    /// A switch.
    Switch,
}

/// One full-duplex link between nodes `a` and `b`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// One end (node id).
    pub a: u32,
    /// The other end (node id).
    pub b: u32,
    /// Rate of each direction, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay, picoseconds.
    pub delay_ps: u64,
    /// Per-packet drop probability at the receiving end (HPCC-sim's `error_rate`), 0 = none.
    pub error_rate: f64,
}

/// A network: node kinds (indexed by node id) and the links between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologySpec {
    /// Kind of each node; node ids are indices into this vector.
    pub kinds: Vec<NodeKind>,
    /// Links in declaration order (this order defines port numbers).
    pub links: Vec<LinkSpec>,
}

/// One port of a node: the link it belongs to and the node at the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSpec {
    /// Index into [`TopologySpec::links`].
    pub link: u32,
    /// Node at the far end.
    pub peer: u32,
    /// Port number of this link at the far end.
    pub peer_port: u16,
}

impl TopologySpec {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.kinds.len()
    }

    /// Node ids of all hosts, ascending.
    pub fn hosts(&self) -> Vec<u32> {
        (0..self.kinds.len() as u32)
            .filter(|&n| self.kinds[n as usize] == NodeKind::Host)
            .collect()
    }

    /// Node ids of all switches, ascending.
    pub fn switches(&self) -> Vec<u32> {
        (0..self.kinds.len() as u32)
            .filter(|&n| self.kinds[n as usize] == NodeKind::Switch)
            .collect()
    }

    /// Check that node `n` is a host. The error says what `n` is instead (a switch, or an id
    /// beyond the last node) and which node ids are hosts, e.g.
    /// `node 4 is a switch, not a host (hosts: 0..=3)`.
    pub fn check_host(&self, n: u32) -> Result<(), String> {
        match self.kinds.get(n as usize) {
            Some(NodeKind::Host) => Ok(()),
            Some(NodeKind::Switch) => Err(format!(
                "node {n} is a switch, not a host (hosts: {})",
                self.describe_hosts()
            )),
            None => Err(format!(
                "node {n} is not a host: the topology has only {} nodes (0..={}); hosts: {}",
                self.kinds.len(),
                self.kinds.len().saturating_sub(1),
                self.describe_hosts()
            )),
        }
    }

    /// The host ids as compact ranges for messages, e.g. `0..=3, 8..=11` (the first few runs
    /// only, with the total, when there are many).
    pub fn describe_hosts(&self) -> String {
        const MAX_RUNS: usize = 4;
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for h in self.hosts() {
            match runs.last_mut() {
                Some((_, hi)) if *hi + 1 == h => *hi = h,
                _ => runs.push((h, h)),
            }
        }
        if runs.is_empty() {
            return "none".to_string();
        }
        let show = |&(lo, hi): &(u32, u32)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..={hi}")
            }
        };
        let mut s: Vec<String> = runs.iter().take(MAX_RUNS).map(show).collect();
        if runs.len() > MAX_RUNS {
            let total: u32 = runs.iter().map(|(lo, hi)| hi - lo + 1).sum();
            s.push(format!("… ({total} hosts)"));
        }
        s.join(", ")
    }

    /// NIC line rate: the slowest link that touches a host, bits per second (`None` when no
    /// link touches a host).
    pub fn host_rate_bps(&self) -> Option<u64> {
        self.host_link_rates().min()
    }

    /// Rates of the links that touch a host, bits per second.
    fn host_link_rates(&self) -> impl Iterator<Item = u64> + '_ {
        self.links
            .iter()
            .filter(|l| {
                self.kinds[l.a as usize] == NodeKind::Host
                    || self.kinds[l.b as usize] == NodeKind::Host
            })
            .map(|l| l.rate_bps)
    }

    /// Rate of the link of the host with the lowest node id, bits per second (HPCC-sim's
    /// `get_nic_rate`, the rate PFC's α scaling starts from there); `None` without hosts or
    /// links.
    pub fn first_host_rate_bps(&self) -> Option<u64> {
        let h = self.kinds.iter().position(|k| *k == NodeKind::Host)? as u32;
        self.links
            .iter()
            .find(|l| l.a == h || l.b == h)
            .map(|l| l.rate_bps)
    }

    /// The fastest link that touches a host, bits per second (`None` when no link touches a
    /// host): the largest rate any NIC may send at.
    pub fn max_host_rate_bps(&self) -> Option<u64> {
        self.host_link_rates().max()
    }

    /// Ports of every node, in link-declaration order (see module docs).
    pub fn ports(&self) -> Vec<Vec<PortSpec>> {
        let mut ports: Vec<Vec<PortSpec>> = vec![Vec::new(); self.kinds.len()];
        for (i, l) in self.links.iter().enumerate() {
            let pa = ports[l.a as usize].len() as u16;
            let pb = ports[l.b as usize].len() as u16;
            ports[l.a as usize].push(PortSpec {
                link: i as u32,
                peer: l.b,
                peer_port: pb,
            });
            ports[l.b as usize].push(PortSpec {
                link: i as u32,
                peer: l.a,
                peer_port: pa,
            });
        }
        ports
    }

    /// Offered utilization of the busiest edge switch's uplinks per unit of host load: the
    /// factor between a load given as a fraction of the *fabric* capacity (the BFC paper's
    /// "65 % of the network capacity" on a 2:1-oversubscribed Clos) and the same load as a
    /// fraction of each host link (what the generators draw arrivals from).
    ///
    /// Every host of `hosts` offers one unit of load at `host_rate_bps`, to destinations
    /// drawn uniformly from the other hosts of `hosts` (with `locality = Some((site of every
    /// node id, remote fraction))`: from the other site's hosts with that probability, else
    /// from the own site's, as `traffic::open_loop_flows` draws them). An edge switch's
    /// uplinks are its links to other switches; what they are offered is the part of its
    /// hosts' load whose destination sits under another edge switch. The factor is the
    /// largest ratio of that to the uplinks' capacity over the edge switches (all equal on a
    /// symmetric leaf–spine). For T1 of the BFC paper (16 hosts and 8 × 100 G uplinks per
    /// ToR, 128 hosts): 2 × 112/127 = 1.764, so 65 % of the fabric is 36.9 % of each host link.
    ///
    /// Errors: a host of `hosts` not on exactly one link to a switch; an edge switch whose
    /// hosts send across the fabric but that has no uplink; no traffic crossing any uplink
    /// (every host under one switch).
    pub fn uplink_load_per_host_load(
        &self,
        hosts: &[u32],
        host_rate_bps: u64,
        locality: Option<(&[u32], f64)>,
    ) -> Result<f64, String> {
        let ports = self.ports();
        let mut edge_of = Vec::with_capacity(hosts.len());
        for &h in hosts {
            self.check_host(h)?;
            match ports[h as usize].as_slice() {
                [p] if self.kinds[p.peer as usize] == NodeKind::Switch => edge_of.push(p.peer),
                ps => {
                    return Err(format!(
                        "host {h} has {} links: a fabric load needs every host on one link to a switch",
                        ps.len()
                    ));
                }
            }
        }
        let site = |n: u32| locality.map_or(0, |(s, _)| s[n as usize]);
        // Hosts of `hosts` per (edge switch, site) and per site.
        let mut under: std::collections::BTreeMap<(u32, u32), f64> = Default::default();
        let mut per_site: std::collections::BTreeMap<u32, f64> = Default::default();
        let mut per_edge: std::collections::BTreeMap<u32, f64> = Default::default();
        for (&h, &e) in hosts.iter().zip(&edge_of) {
            *under.entry((e, site(h))).or_default() += 1.0;
            *per_site.entry(site(h)).or_default() += 1.0;
            *per_edge.entry(e).or_default() += 1.0;
        }
        let total = hosts.len() as f64;
        let mut offered: std::collections::BTreeMap<u32, f64> = Default::default();
        for (&h, &e) in hosts.iter().zip(&edge_of) {
            let s = site(h);
            let here = under[&(e, s)];
            let mine = per_site[&s];
            // Share of h's destinations under another edge switch.
            let cross = match locality {
                None => (total - here) / (total - 1.0).max(1.0),
                Some((_, r)) => {
                    let local = (mine - here) / (mine - 1.0).max(1.0);
                    let others = total - mine;
                    // Hosts of the other site under this edge switch.
                    let remote_here = per_edge[&e] - here;
                    let remote = if others > 0.0 {
                        (others - remote_here) / others
                    } else {
                        0.0
                    };
                    r * remote + (1.0 - r) * local
                }
            };
            *offered.entry(e).or_default() += host_rate_bps as f64 * cross;
        }
        let mut worst: f64 = 0.0;
        for (&e, &bps) in &offered {
            let uplinks: u64 = ports[e as usize]
                .iter()
                .filter(|p| self.kinds[p.peer as usize] == NodeKind::Switch)
                .map(|p| self.links[p.link as usize].rate_bps)
                .sum();
            if uplinks == 0 {
                if bps > 0.0 {
                    return Err(format!(
                        "switch {e} has hosts that send to hosts under other switches but no link to another switch"
                    ));
                }
                continue;
            }
            worst = worst.max(bps / uplinks as f64);
        }
        if worst <= 0.0 {
            return Err(
                "no traffic crosses an uplink (every host under one switch): a fabric load is undefined"
                    .into(),
            );
        }
        Ok(worst)
    }

    /// Check structural sanity: ids in range, no self-loops, every host has exactly one link,
    /// positive rates, and every host can reach every other host. Returns a readable error.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.kinds.len();
        if n == 0 {
            return Err("topology has no nodes".into());
        }
        for (i, l) in self.links.iter().enumerate() {
            if l.a as usize >= n || l.b as usize >= n {
                return Err(format!(
                    "link {i}: node id out of range ({} - {}, {n} nodes)",
                    l.a, l.b
                ));
            }
            if l.a == l.b {
                return Err(format!("link {i}: self-loop on node {}", l.a));
            }
            if l.rate_bps == 0 {
                return Err(format!(
                    "link {i} ({} - {}): rate must be positive",
                    l.a, l.b
                ));
            }
            crate::link::check_link_rate(l.rate_bps)
                .and_then(|()| crate::link::check_link_delay(l.delay_ps))
                .map_err(|e| format!("link {i} ({} - {}): {e}", l.a, l.b))?;
            if !(0.0..=1.0).contains(&l.error_rate) {
                return Err(format!(
                    "link {i} ({} - {}): error rate {} not in [0, 1]",
                    l.a, l.b, l.error_rate
                ));
            }
            if self.kinds[l.a as usize] == NodeKind::Host
                && self.kinds[l.b as usize] == NodeKind::Host
            {
                return Err(format!(
                    "link {i}: hosts {} and {} linked directly; put a switch between them",
                    l.a, l.b
                ));
            }
        }
        let ports = self.ports();
        let hosts = self.hosts();
        if hosts.len() < 2 {
            return Err(format!(
                "topology needs at least 2 hosts, has {}",
                hosts.len()
            ));
        }
        for &h in &hosts {
            match ports[h as usize].len() {
                1 => {}
                0 => return Err(format!("host {h} has no link")),
                k => {
                    return Err(format!(
                        "host {h} has {k} links; hosts must have exactly one NIC link"
                    ));
                }
            }
        }
        // Connectivity: BFS from the first host must reach every host.
        let mut seen = vec![false; n];
        let mut stack = vec![hosts[0]];
        seen[hosts[0] as usize] = true;
        while let Some(u) = stack.pop() {
            for p in &ports[u as usize] {
                if !seen[p.peer as usize] {
                    seen[p.peer as usize] = true;
                    stack.push(p.peer);
                }
            }
        }
        if let Some(h) = hosts.iter().find(|&&h| !seen[h as usize]) {
            return Err(format!("host {h} is not reachable from host {}", hosts[0]));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_host_says_what_the_node_is() {
        let s = shapes::star(4, 100_000_000_000, 1_000_000).unwrap();
        assert!(s.check_host(0).is_ok() && s.check_host(3).is_ok());
        let e = s.check_host(4).unwrap_err();
        assert!(
            e.contains("node 4 is a switch, not a host (hosts: 0..=3)"),
            "{e}"
        );
        let e = s.check_host(9).unwrap_err();
        assert!(
            e.contains("node 9 is not a host") && e.contains("5 nodes"),
            "{e}"
        );
    }

    fn t1() -> shapes::LeafSpine {
        // The BFC paper's T1: 8 ToRs × 16 hosts, 8 spines, every link 100 G.
        shapes::LeafSpine {
            spines: 8,
            tors: 8,
            hosts_per_tor: 16,
            host_rate_bps: 100_000_000_000,
            host_delay_ps: 1_000_000,
            fabric_rate_bps: 100_000_000_000,
            fabric_delay_ps: 1_000_000,
            links_per_spine: 1,
        }
    }

    #[test]
    fn fabric_load_factor_by_hand() {
        let g = 100_000_000_000;
        // T1: a ToR's 16 hosts send 112/127 of their load to other ToRs, over 8 uplinks of
        // their rate: 16 × 112/127 / 8 per unit of host load.
        let fat = shapes::leaf_spine(t1()).unwrap();
        let k = fat
            .uplink_load_per_host_load(&fat.hosts(), g, None)
            .unwrap();
        assert!((k - 2.0 * 112.0 / 127.0).abs() < 1e-12, "{k}");
        // T2 (4 ToRs × 16 hosts, 8 spines): 2 × 48/63.
        let t2 = shapes::leaf_spine(shapes::LeafSpine { tors: 4, ..t1() }).unwrap();
        let k = t2.uplink_load_per_host_load(&t2.hosts(), g, None).unwrap();
        assert!((k - 2.0 * 48.0 / 63.0).abs() < 1e-12, "{k}");
        // Only hosts 0..=15 (ToR 0) and 16 (ToR 1) take part: ToR 0's hosts send 1/16 of
        // their load across, ToR 1's one host all of it; the busiest is ToR 0 with
        // 16 × 1/16 = 1 host-rate over 8 uplinks.
        let some: Vec<u32> = (0..=16).collect();
        let k = fat.uplink_load_per_host_load(&some, g, None).unwrap();
        assert!((k - 1.0 / 8.0).abs() < 1e-12, "{k}");
        // A star has no fabric; a node that is not a host is refused.
        let star = shapes::star(4, g, 1_000_000).unwrap();
        let e = star
            .uplink_load_per_host_load(&star.hosts(), g, None)
            .unwrap_err();
        assert!(e.contains("no traffic crosses an uplink"), "{e}");
        assert!(fat.uplink_load_per_host_load(&[0, 128], g, None).is_err());
    }

    #[test]
    fn fabric_load_factor_with_two_sites() {
        // Two T2 fabrics (10 G): with 20 % of the flows to the other DC, a ToR's hosts send
        // 0.2 + 0.8 × 48/63 of their load over 8 uplinks of 10 G.
        let g = 10_000_000_000;
        let dc = shapes::LeafSpine {
            tors: 4,
            host_rate_bps: g,
            fabric_rate_bps: g,
            ..t1()
        };
        let t = shapes::two_dc(shapes::TwoDc {
            dc,
            gateway_rate_bps: 100_000_000_000,
            gateway_delay_ps: 1_000_000,
            dci_rate_bps: 100_000_000_000,
            dci_delay_ps: 200_000_000,
        })
        .unwrap();
        let hosts = t.hosts();
        let sites: Vec<u32> = (0..t.num_nodes() as u32)
            .map(|n| u32::from(n >= 64 && (n as usize) < 128))
            .collect();
        let k = t
            .uplink_load_per_host_load(&hosts, g, Some((&sites, 0.2)))
            .unwrap();
        let want = 16.0 * (0.2 + 0.8 * 48.0 / 63.0) / 8.0;
        assert!((k - want).abs() < 1e-12, "{k} vs {want}");
    }

    #[test]
    fn first_host_rate_is_the_lowest_host_ids_link() {
        use NodeKind::{Host as H, Switch as W};
        let link = |a, b, rate_bps| LinkSpec {
            a,
            b,
            rate_bps,
            delay_ps: 1_000_000,
            error_rate: 0.0,
        };
        // Switch 0, hosts 1 (25 G) and 2 (100 G): HPCC-sim's NIC rate is host 1's, while the
        // slowest and fastest host links are 25 G and 100 G.
        let t = TopologySpec {
            kinds: vec![W, H, H],
            links: vec![link(2, 0, 100_000_000_000), link(0, 1, 25_000_000_000)],
        };
        assert_eq!(t.first_host_rate_bps(), Some(25_000_000_000));
        let t = TopologySpec {
            kinds: vec![W, H, H],
            links: vec![link(1, 0, 100_000_000_000), link(0, 2, 25_000_000_000)],
        };
        assert_eq!(t.first_host_rate_bps(), Some(100_000_000_000));
        assert_eq!(t.host_rate_bps(), Some(25_000_000_000));
        assert_eq!(
            TopologySpec {
                kinds: vec![W],
                links: vec![]
            }
            .first_host_rate_bps(),
            None
        );
    }

    #[test]
    fn describe_hosts_compresses_runs() {
        use NodeKind::{Host as H, Switch as W};
        let t = |kinds: Vec<NodeKind>| TopologySpec {
            kinds,
            links: Vec::new(),
        };
        assert_eq!(t(vec![H, H, W, H]).describe_hosts(), "0..=1, 3");
        assert_eq!(t(vec![W]).describe_hosts(), "none");
        let many: Vec<NodeKind> = (0..20).map(|i| if i % 2 == 0 { H } else { W }).collect();
        assert_eq!(t(many).describe_hosts(), "0, 2, 4, 6, … (10 hosts)");
    }
}
