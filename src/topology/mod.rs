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
            crate::config::check_link_rate(l.rate_bps)
                .and_then(|()| crate::config::check_link_delay(l.delay_ps))
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
