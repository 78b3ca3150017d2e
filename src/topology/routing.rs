//! Shortest-path ECMP routing, computed as HPCC-sim does (`third.cc` `CalculateRoute`): a
//! breadth-first search (hop count) from every destination host; a switch's next hops toward
//! that host are all its ports whose far end is one hop closer. Hosts other than the
//! destination are never transit nodes.
//!
//! Port numbers are indices into [`TopologySpec::ports`]`()[node]` (link-declaration order).
//! Within an ECMP set, ports are sorted ascending. (HPCC-sim orders a set by the BFS discovery
//! order of the next-hop nodes, which on the standard files — e.g. `fat.txt` — is the same as
//! ascending port order.)
//!
//! The table also answers path questions HPCC-sim needs for its flow bookkeeping: one shortest
//! path per host pair ([`RouteTable::path`]), its base RTT ([`PathInfo::base_rtt_ps`]) and the
//! largest base RTT / bandwidth-delay product over all host pairs
//! ([`RouteTable::max_base_rtt`]).

use super::shapes::check_limits;
use super::{NodeKind, TopologySpec};
use crate::units::ser_time_ps_hpcc;
use std::collections::HashMap;

/// Marker for "not a host" / "not a switch" in the node → index maps.
const NONE: u32 = u32::MAX;

/// Per-switch, per-destination-host ECMP next hops for a [`TopologySpec`].
///
/// Storage: for every `(destination host index, switch index)` pair, a `u32` id of a distinct
/// port set; the distinct sets are stored back to back in one `Vec<u16>` with an offsets
/// table. Lookups ([`RouteTable::next_hops`]) are O(1) and allocation-free; deduplicating the
/// sets keeps the port storage tiny and cache-resident even for thousands of hosts.
#[derive(Clone, Debug)]
pub struct RouteTable {
    /// Node id → host index (position among hosts in ascending node id), or `NONE`.
    host_idx: Vec<u32>,
    /// Node id → switch index (position among switches in ascending node id), or `NONE`.
    switch_idx: Vec<u32>,
    /// Host index → node id.
    hosts: Vec<u32>,
    /// Switch index → node id.
    switches: Vec<u32>,
    /// Adjacency in CSR form: ports of node `n` are `port_off[n]..port_off[n + 1]`.
    port_off: Vec<u32>,
    /// Far-end node of each port (CSR order).
    port_peer: Vec<u32>,
    /// Link index of each port (CSR order).
    port_link: Vec<u32>,
    /// Forwarding entry of `(host index · switches + switch index)`: a single egress port is
    /// stored directly as `DIRECT | port`; otherwise the id of an ECMP port set. Two bytes so
    /// that the table (hosts × switches) stays cache-resident on large topologies.
    entry: Vec<u16>,
    /// `0, 1, 2, …` up to the largest port number: backing store for single-port answers.
    port_ids: Vec<u16>,
    /// Port set `k` is `set_ports[set_off[k]..set_off[k + 1]]`; set 0 is empty.
    set_off: Vec<u32>,
    /// All distinct port sets, concatenated.
    set_ports: Vec<u16>,
    /// Per link index: the link is down and carries no route ([`RouteTable::reroute`]).
    /// Empty: every link is up.
    link_down: Vec<bool>,
}

/// Flag of a forwarding entry holding its single egress port directly.
const DIRECT: u16 = 0x8000;

/// Node id → host index and switch index (`NONE` where the node is not one), and the node
/// ids of the hosts and of the switches, each in ascending node id.
fn classify_nodes(kinds: &[NodeKind]) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = kinds.len();
    let mut host_idx = vec![NONE; n];
    let mut switch_idx = vec![NONE; n];
    let mut hosts = Vec::new();
    let mut switches = Vec::new();
    for (i, &k) in kinds.iter().enumerate() {
        match k {
            NodeKind::Host => {
                host_idx[i] = hosts.len() as u32;
                hosts.push(i as u32);
            }
            NodeKind::Switch => {
                switch_idx[i] = switches.len() as u32;
                switches.push(i as u32);
            }
        }
    }
    (host_idx, switch_idx, hosts, switches)
}

/// The adjacency in CSR form, in port order (the numbering of [`TopologySpec::ports`]):
/// offsets per node, far-end node per port, link index per port.
fn port_adjacency(spec: &TopologySpec) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = spec.kinds.len();
    let mut port_off = vec![0u32; n + 1];
    for l in &spec.links {
        port_off[l.a as usize + 1] += 1;
        port_off[l.b as usize + 1] += 1;
    }
    for i in 0..n {
        port_off[i + 1] += port_off[i];
    }
    let total = port_off[n] as usize;
    let mut fill: Vec<u32> = port_off[..n].to_vec();
    let mut port_peer = vec![0u32; total];
    let mut port_link = vec![0u32; total];
    for (i, l) in spec.links.iter().enumerate() {
        for (from, to) in [(l.a, l.b), (l.b, l.a)] {
            let slot = fill[from as usize] as usize;
            port_peer[slot] = to;
            port_link[slot] = i as u32;
            fill[from as usize] += 1;
        }
    }
    (port_off, port_peer, port_link)
}

/// The distinct ECMP port sets of a table being built, numbered in order of first use (set
/// 0 is the empty set).
struct EcmpSets {
    /// Set `k` is `ports[off[k]..off[k + 1]]`.
    off: Vec<u32>,
    /// The sets, concatenated.
    ports: Vec<u16>,
    /// Set → its id.
    ids: HashMap<Vec<u16>, u16>,
    /// Per switch index: the set id it was given last (0: none yet).
    last: Vec<u16>,
}

impl EcmpSets {
    /// No set but the empty one, for `switches` switches.
    fn new(switches: usize) -> Self {
        let mut ids = HashMap::new();
        ids.insert(Vec::new(), 0);
        EcmpSets {
            off: vec![0, 0],
            ports: Vec::new(),
            ids,
            last: vec![0; switches],
        }
    }

    /// The id of set `ports` (numbered if new), given to switch index `si`. A switch usually
    /// has the same set toward many hosts: compare with the set it got last before hashing
    /// (the same id either way). Errors when the ids run out.
    fn id(&mut self, si: usize, ports: &[u16]) -> Result<u16, String> {
        let last = self.last[si] as usize;
        if last != 0 && self.ports[self.off[last] as usize..self.off[last + 1] as usize] == *ports {
            return Ok(last as u16);
        }
        let id = match self.ids.get(ports) {
            Some(&id) => id,
            None => {
                let id = self.off.len() - 1;
                if id >= DIRECT as usize {
                    return Err(format!(
                        "topology has more than {} distinct ECMP port sets; the \
                         forwarding tables support at most that many",
                        DIRECT - 1
                    ));
                }
                self.ports.extend_from_slice(ports);
                self.off.push(self.ports.len() as u32);
                self.ids.insert(ports.to_vec(), id as u16);
                id as u16
            }
        };
        self.last[si] = id;
        Ok(id)
    }
}

/// One shortest path between two hosts (see [`RouteTable::path`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathInfo {
    /// Link indices (into [`TopologySpec::links`]) from source to destination.
    pub links: Vec<u32>,
    /// Number of links traversed (`links.len()`); each is one store-and-forward hop.
    pub hops: usize,
    /// Sum of the links' one-way propagation delays, picoseconds.
    pub prop_delay_ps: u64,
    /// Smallest link rate on the path, bits per second (0 for an empty path).
    pub bottleneck_bps: u64,
}

impl PathInfo {
    /// Sum over the path's links of the time to serialize `bytes` bytes, picoseconds, each
    /// hop truncated to whole nanoseconds like HPCC-sim ([`ser_time_ps_hpcc`]).
    pub fn ser_delay_ps(&self, spec: &TopologySpec, bytes: u64) -> u64 {
        self.links
            .iter()
            .filter_map(|&l| spec.links.get(l as usize))
            .map(|l| ser_time_ps_hpcc(bytes, l.rate_bps.max(1)))
            .fold(0u64, u64::saturating_add)
    }

    /// HPCC-sim's base RTT of this path, picoseconds: `2·prop_delay + Σ_hops ser(payload)`,
    /// i.e. round-trip propagation plus one store-and-forward of a `payload_bytes` payload
    /// (HPCC uses the 1000 B MTU payload, no headers) per link, one direction only.
    pub fn base_rtt_ps(&self, spec: &TopologySpec, payload_bytes: u64) -> u64 {
        self.prop_delay_ps
            .saturating_mul(2)
            .saturating_add(self.ser_delay_ps(spec, payload_bytes))
    }
}

/// Largest base RTT and bandwidth-delay product over all host pairs (HPCC-sim's `maxRtt` and
/// `maxBdp`); see [`RouteTable::max_base_rtt`]. All zero if there is no connected host pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttBounds {
    /// Largest `2·prop + Σ_hops ser(payload)` over all ordered host pairs, picoseconds.
    pub max_base_rtt_ps: u64,
    /// Source host (node id) of a pair attaining `max_base_rtt_ps` (smallest such pair).
    pub max_rtt_src: u32,
    /// Destination host (node id) of that pair.
    pub max_rtt_dst: u32,
    /// Largest `base_rtt · bottleneck_rate / 8` over all pairs, bytes (truncated).
    pub max_bdp_bytes: u64,
    /// Most switches on a shortest path between two hosts (every route is a shortest path,
    /// so no packet between hosts crosses more).
    pub max_switch_hops: u32,
}

impl RouteTable {
    /// Build the table for `spec` (which should have passed [`TopologySpec::validate`]).
    ///
    /// Cost: one BFS and a scan of every switch's ports per host, O(H·(V + E)), except that
    /// hosts attached by one link to the same switch share the first one's row (a copy);
    /// with [`RouteTable::max_base_rtt`], which shares BFS roots the same way, about 0.3 s
    /// for a k = 32 fat tree (8,192 hosts) and 6 s for k = 60 (54,000 hosts; 3.4 s and 167 s
    /// with one BFS per host).
    ///
    /// # Panics
    /// If `spec` violates [`super::shapes::check_limits`] or has a link to a nonexistent node.
    /// Topologies from [`super::hpcc_file`] and [`super::shapes`] never do; use
    /// [`RouteTable::try_build`] for hand-made specs.
    pub fn build(spec: &TopologySpec) -> RouteTable {
        Self::try_build(spec).unwrap_or_else(|e| panic!("RouteTable::build: {e}"))
    }

    /// Like [`RouteTable::build`], but returns an error instead of panicking if `spec` exceeds
    /// the size limits of [`super::shapes::check_limits`] or links a nonexistent node.
    pub fn try_build(spec: &TopologySpec) -> Result<RouteTable, String> {
        Self::try_build_with(spec, true)
    }

    /// [`RouteTable::try_build`]; with `share`, a host attached by one link to switch `T`
    /// reuses the row of the first such host on `T` (a copy) with only `T`'s entry, its port
    /// to the host, changed: every other switch's next hops toward the two hosts are the same
    /// ports (their distances differ from `T`'s by the same amount, and no other switch is
    /// next to either host), and no new ECMP set can appear, so even the set numbering is
    /// that of one BFS per host (a test compares both).
    fn try_build_with(spec: &TopologySpec, share: bool) -> Result<RouteTable, String> {
        let n = spec.kinds.len();
        for (i, l) in spec.links.iter().enumerate() {
            if l.a as usize >= n || l.b as usize >= n {
                return Err(format!(
                    "link {i}: node id out of range ({} - {}, {n} nodes)",
                    l.a, l.b
                ));
            }
        }
        check_limits(spec)?;
        let (host_idx, switch_idx, hosts, switches) = classify_nodes(&spec.kinds);
        let (port_off, port_peer, port_link) = port_adjacency(spec);
        let max_ports = (0..n)
            .map(|u| (port_off[u + 1] - port_off[u]) as usize)
            .max()
            .unwrap_or(0);
        let mut table = RouteTable {
            host_idx,
            switch_idx,
            hosts,
            switches,
            port_off,
            port_peer,
            port_link,
            entry: Vec::new(),
            port_ids: (0..=max_ports.min(DIRECT as usize) as u16).collect(),
            set_off: Vec::new(),
            set_ports: Vec::new(),
            link_down: Vec::new(),
        };
        table.fill_entries(share)?;
        Ok(table)
    }

    /// Recompute every forwarding entry as shortest paths over the links up, `down[l]` telling
    /// whether link `l` (index into the topology's links) is down: the ECMP sets of a network
    /// that has converged after link failures. A destination cut off from a switch gets no
    /// next hop there. Port numbers do not change. Errors as [`RouteTable::try_build`] when
    /// the distinct ECMP sets run out.
    pub fn reroute(&mut self, down: &[bool]) -> Result<(), String> {
        self.link_down = if down.iter().any(|&d| d) {
            down.to_vec()
        } else {
            Vec::new()
        };
        // Sharing rows between hosts on one switch assumes every host link is up.
        let share = self.link_down.is_empty();
        self.fill_entries(share)
    }

    /// The forwarding entries of the switches `nodes` (node ids; others are ignored) become
    /// those of `other`, a table of the same topology (e.g. one [`RouteTable::reroute`]d
    /// over fewer links); every other switch keeps its own. Errors as
    /// [`RouteTable::try_build`] when the distinct ECMP sets run out.
    pub fn adopt_switches(&mut self, other: &RouteTable, nodes: &[u32]) -> Result<(), String> {
        let s_count = self.switches.len();
        let mut sets = EcmpSets::new(s_count);
        // The sets in use keep their ids.
        for k in 1..self.set_off.len() - 1 {
            let ports = &self.set_ports[self.set_off[k] as usize..self.set_off[k + 1] as usize];
            sets.ids.insert(ports.to_vec(), k as u16);
        }
        sets.off = std::mem::take(&mut self.set_off);
        sets.ports = std::mem::take(&mut self.set_ports);
        let mut result = Ok(());
        'nodes: for &n in nodes {
            let Some(si) = self.switch_index(n) else {
                continue;
            };
            let si = si as usize;
            for (hi, &h) in self.hosts.iter().enumerate() {
                let e = match *other.next_hops(n, h) {
                    [p] if p < DIRECT => DIRECT | p,
                    ref ports => match sets.id(si, ports) {
                        Ok(id) => id,
                        Err(e) => {
                            result = Err(e);
                            break 'nodes;
                        }
                    },
                };
                self.entry[hi * s_count + si] = e;
            }
        }
        self.set_off = sets.off;
        self.set_ports = sets.ports;
        result
    }

    /// Is the port in CSR slot `k` on a link that is down?
    #[inline]
    fn slot_down(&self, k: usize) -> bool {
        !self.link_down.is_empty() && self.link_down[self.port_link[k] as usize]
    }

    /// Compute the forwarding entries (`entry`) and the ECMP sets (`set_off`, `set_ports`):
    /// one BFS per destination host, or with `share` a copy of an earlier host's row where
    /// that gives the same answer (see [`RouteTable::try_build_with`]).
    fn fill_entries(&mut self, share: bool) -> Result<(), String> {
        let n = self.switch_idx.len();
        let s_count = self.switches.len();
        let mut entry = vec![0u16; self.hosts.len() * s_count];
        let mut sets = EcmpSets::new(s_count);
        let mut dist = vec![u32::MAX; n];
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        let mut scratch: Vec<u16> = Vec::new();
        // Per switch index: the first host attached only to it whose row was computed.
        let mut first_row: Vec<u32> = vec![NONE; s_count];
        for (hi, &h) in self.hosts.iter().enumerate() {
            let single = self.single_switch_port(h);
            if share
                && let Some((ti, tp)) = single
                && tp < DIRECT as usize
                && first_row[ti] != NONE
            {
                let h0 = first_row[ti] as usize;
                entry.copy_within(h0 * s_count..(h0 + 1) * s_count, hi * s_count);
                entry[hi * s_count + ti] = DIRECT | tp as u16;
                continue;
            }
            if let Some((ti, _)) = single
                && first_row[ti] == NONE
            {
                first_row[ti] = hi as u32;
            }
            self.bfs_to_host(h, &mut dist, &mut queue);
            let row = &mut entry[hi * s_count..(hi + 1) * s_count];
            self.fill_row(h, &dist, row, &mut sets, &mut scratch)?;
        }
        self.entry = entry;
        self.set_off = sets.off;
        self.set_ports = sets.ports;
        Ok(())
    }

    /// For a host whose only port leads to a switch `t`: `t`'s switch index and `t`'s port
    /// back to the host (`usize::MAX` if not found).
    fn single_switch_port(&self, h: u32) -> Option<(usize, usize)> {
        let (a, b) = (
            self.port_off[h as usize] as usize,
            self.port_off[h as usize + 1] as usize,
        );
        (b - a == 1 && self.switch_idx[self.port_peer[a] as usize] != NONE).then(|| {
            let t = self.port_peer[a] as usize;
            let link = self.port_link[a];
            let tp = (self.port_off[t] as usize..self.port_off[t + 1] as usize)
                .position(|k| self.port_link[k] == link)
                .unwrap_or(usize::MAX);
            (self.switch_idx[t] as usize, tp)
        })
    }

    /// Hop counts to host `h` in `dist` (`u32::MAX`: unreachable), by a BFS from `h` that
    /// expands only `h` and switches. `queue` is scratch space.
    fn bfs_to_host(&self, h: u32, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        queue.clear();
        dist[h as usize] = 0;
        queue.push(h);
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head] as usize;
            head += 1;
            if u != h as usize && self.switch_idx[u] == NONE {
                continue;
            }
            let du = dist[u] + 1;
            for k in self.port_off[u] as usize..self.port_off[u + 1] as usize {
                let v = self.port_peer[k];
                if dist[v as usize] == u32::MAX && !self.slot_down(k) {
                    dist[v as usize] = du;
                    queue.push(v);
                }
            }
        }
    }

    /// Next hops of every switch toward host `h` (hop counts `dist`) into `row` (one entry
    /// per switch index): every port whose far end (`h` or a switch) is one hop closer.
    /// `scratch` is scratch space.
    fn fill_row(
        &self,
        h: u32,
        dist: &[u32],
        row: &mut [u16],
        sets: &mut EcmpSets,
        scratch: &mut Vec<u16>,
    ) -> Result<(), String> {
        for (si, &s) in self.switches.iter().enumerate() {
            let ds = dist[s as usize];
            if ds == u32::MAX {
                continue; // unreachable: empty set (id 0)
            }
            scratch.clear();
            let base = self.port_off[s as usize] as usize;
            let end = self.port_off[s as usize + 1] as usize;
            for (p, &v) in self.port_peer[base..end].iter().enumerate() {
                let dv = dist[v as usize];
                if dv != u32::MAX
                    && dv + 1 == ds
                    && (v == h || self.switch_idx[v as usize] != NONE)
                    && !self.slot_down(base + p)
                {
                    scratch.push(p as u16);
                }
            }
            row[si] = match scratch[..] {
                [p] if p < DIRECT => DIRECT | p,
                _ => sets.id(si, scratch)?,
            };
        }
        Ok(())
    }

    /// ECMP egress ports (indices into `spec.ports()[switch_node]`, ascending) of switch
    /// `switch_node` toward host `dst_host`: every port on a shortest (fewest-hop) path. Empty
    /// if `switch_node` is not a switch, `dst_host` is not a host, or the host is unreachable.
    /// O(1), no allocation.
    #[inline(always)]
    pub fn next_hops(&self, switch_node: u32, dst_host: u32) -> &[u16] {
        let si = self
            .switch_idx
            .get(switch_node as usize)
            .copied()
            .unwrap_or(NONE);
        let hi = self
            .host_idx
            .get(dst_host as usize)
            .copied()
            .unwrap_or(NONE);
        if si == NONE || hi == NONE {
            return &[];
        }
        let e = self.entry[hi as usize * self.switches.len() + si as usize];
        if e & DIRECT != 0 {
            return std::slice::from_ref(&self.port_ids[(e & !DIRECT) as usize]);
        }
        let set = e as usize;
        &self.set_ports[self.set_off[set] as usize..self.set_off[set + 1] as usize]
    }

    /// Position of host `node` among the hosts (ascending node id), or `None` if it is not a host.
    #[inline]
    pub fn host_index(&self, node: u32) -> Option<u32> {
        self.host_idx
            .get(node as usize)
            .copied()
            .filter(|&i| i != NONE)
    }

    /// Position of switch `node` among the switches (ascending node id), or `None` if it is not
    /// a switch.
    #[inline]
    pub fn switch_index(&self, node: u32) -> Option<u32> {
        self.switch_idx
            .get(node as usize)
            .copied()
            .filter(|&i| i != NONE)
    }

    /// Node ids of the hosts, indexed by host index.
    pub fn hosts(&self) -> &[u32] {
        &self.hosts
    }

    /// Node ids of the switches, indexed by switch index.
    pub fn switches(&self) -> &[u32] {
        &self.switches
    }

    /// Number of ports of `node` (0 for an unknown node).
    #[inline]
    pub fn num_ports(&self, node: u32) -> usize {
        match (
            self.port_off.get(node as usize),
            self.port_off.get(node as usize + 1),
        ) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        }
    }

    /// Far end of port `port` of `node`: `(peer node id, link index)`, or `None` if there is no
    /// such port. O(1).
    #[inline]
    pub fn port_target(&self, node: u32, port: u16) -> Option<(u32, u32)> {
        if (port as usize) >= self.num_ports(node) {
            return None;
        }
        let slot = self.port_off[node as usize] as usize + port as usize;
        Some((self.port_peer[slot], self.port_link[slot]))
    }

    /// One shortest path from host `src_host` to host `dst_host`: the source's only port, then
    /// at each switch the first (lowest-numbered) ECMP port. `None` if either node is not a
    /// host, they are the same host, the destination is unreachable, or `spec` is not the
    /// topology the table was built from. Allocates the link list.
    pub fn try_path(&self, spec: &TopologySpec, src_host: u32, dst_host: u32) -> Option<PathInfo> {
        self.host_index(src_host)?;
        self.host_index(dst_host)?;
        if src_host == dst_host {
            return None;
        }
        let (mut cur, first) = self.port_target(src_host, 0)?;
        let mut links = vec![first];
        while cur != dst_host {
            let &p = self.next_hops(cur, dst_host).first()?;
            let (next, link) = self.port_target(cur, p)?;
            links.push(link);
            if links.len() > self.host_idx.len() {
                return None; // cannot happen on a consistent table; guards against loops
            }
            cur = next;
        }
        let mut prop_delay_ps = 0u64;
        let mut bottleneck_bps = u64::MAX;
        for &l in &links {
            let l = spec.links.get(l as usize)?;
            prop_delay_ps = prop_delay_ps.saturating_add(l.delay_ps);
            bottleneck_bps = bottleneck_bps.min(l.rate_bps);
        }
        Some(PathInfo {
            hops: links.len(),
            links,
            prop_delay_ps,
            bottleneck_bps,
        })
    }

    /// Like [`RouteTable::try_path`], but returns an empty [`PathInfo`] (no links, zero delay
    /// and zero bottleneck rate) when there is no path.
    pub fn path(&self, spec: &TopologySpec, src_host: u32, dst_host: u32) -> PathInfo {
        self.try_path(spec, src_host, dst_host).unwrap_or_default()
    }

    /// HPCC-sim's `maxRtt` / `maxBdp`: over all ordered host pairs, the largest base RTT
    /// (`2·prop + Σ_hops ser(payload_bytes)`, picoseconds, see [`PathInfo::base_rtt_ps`]) and
    /// the largest `base RTT · bottleneck rate / 8` (bytes). As in HPCC-sim, each pair's values
    /// follow the BFS tree grown from the destination host (first-discovered parent), which on
    /// symmetric topologies is any shortest path. One BFS per switch with single-link hosts
    /// and per multi-homed host, and a pass over the sources per group of alike hosts
    /// (see `max_base_rtt_with`).
    pub fn max_base_rtt(&self, spec: &TopologySpec, payload_bytes: u64) -> RttBounds {
        self.max_base_rtt_with(spec, payload_bytes, true)
    }

    /// [`RouteTable::max_base_rtt`]; with `share`, the destinations attached by one link to
    /// the same switch share one BFS from that switch. From such a host `h` on switch `T`
    /// the BFS reaches `T` first and then discovers every other node in `T`'s own BFS order,
    /// so each source's values are `T`'s plus the link `h – T` (delay and serialization
    /// added, rate taken as a minimum, one more link). Hosts whose links to `T` have the
    /// same delay and rate then give every source the same values, and the smallest pair
    /// attaining the maximum has the group's smallest member other than the source as its
    /// destination. O(T·(V + E) + T·H) instead of O(H·(V + E) + H²); the same result (a test
    /// compares both on irregular topologies).
    fn max_base_rtt_with(&self, spec: &TopologySpec, payload_bytes: u64, share: bool) -> RttBounds {
        let n = self.host_idx.len();
        let mut best = RttBounds::default();
        let mut found = false;
        let mut bfs = RttBfs {
            seen: vec![false; n],
            delay: vec![0u64; n],
            ser: vec![0u64; n],
            bw: vec![0u64; n],
            links: vec![0u32; n],
            queue: Vec::with_capacity(n),
        };
        let mut consider = |best: &mut RttBounds,
                            src: u32,
                            dst: u32,
                            delay: u64,
                            ser: u64,
                            bw: u64,
                            links: u32| {
            best.max_switch_hops = best.max_switch_hops.max(links.saturating_sub(1));
            let rtt = delay.saturating_mul(2).saturating_add(ser);
            let bdp = crate::units::bytes_in_ps(rtt, bw);
            best.max_bdp_bytes = best.max_bdp_bytes.max(bdp);
            if !found
                || rtt > best.max_base_rtt_ps
                || (rtt == best.max_base_rtt_ps
                    && (src, dst) < (best.max_rtt_src, best.max_rtt_dst))
            {
                found = true;
                best.max_base_rtt_ps = rtt;
                best.max_rtt_src = src;
                best.max_rtt_dst = dst;
            }
        };
        // Destinations grouped by their only switch: (switch index) → (host, link) list.
        let mut groups: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.switches.len()];
        for &dst in &self.hosts {
            if share && let Some((t, link)) = self.single_attachment(dst) {
                groups[self.switch_idx[t as usize] as usize].push((dst, link));
                continue;
            }
            bfs.run(self, spec, payload_bytes, dst);
            for &src in &self.hosts {
                let s = src as usize;
                if src == dst || !bfs.seen[s] {
                    continue;
                }
                consider(
                    &mut best,
                    src,
                    dst,
                    bfs.delay[s],
                    bfs.ser[s],
                    bfs.bw[s],
                    bfs.links[s],
                );
            }
        }
        let mut members: Vec<u32> = Vec::new();
        for (ti, group) in groups.iter().enumerate() {
            if group.is_empty() {
                continue;
            }
            bfs.run(self, spec, payload_bytes, self.switches[ti]);
            // Sub-groups of equal link delay and rate, members in ascending node id.
            let mut kinds: Vec<(u64, u64)> = group
                .iter()
                .filter_map(|&(_, l)| spec.links.get(l as usize))
                .map(|l| (l.delay_ps, l.rate_bps))
                .collect();
            kinds.sort_unstable();
            kinds.dedup();
            for &(d, r) in &kinds {
                members.clear();
                members.extend(
                    group
                        .iter()
                        .filter(|&&(_, l)| {
                            spec.links
                                .get(l as usize)
                                .is_some_and(|k| (k.delay_ps, k.rate_bps) == (d, r))
                        })
                        .map(|&(h, _)| h),
                );
                let link_ser = ser_time_ps_hpcc(payload_bytes, r.max(1));
                for &src in &self.hosts {
                    let s = src as usize;
                    if !bfs.seen[s] {
                        continue;
                    }
                    let dst = match members.as_slice() {
                        [m, ..] if *m != src => *m,
                        [_, m, ..] => *m,
                        _ => continue,
                    };
                    consider(
                        &mut best,
                        src,
                        dst,
                        d.saturating_add(bfs.delay[s]),
                        link_ser.saturating_add(bfs.ser[s]),
                        r.min(bfs.bw[s]),
                        bfs.links[s] + 1,
                    );
                }
            }
        }
        best
    }

    /// The switch and link of a host with exactly one link, when its far end is a switch.
    fn single_attachment(&self, host: u32) -> Option<(u32, u32)> {
        let h = host as usize;
        let (a, b) = (self.port_off[h] as usize, self.port_off[h + 1] as usize);
        if b - a != 1 || self.switch_idx[self.port_peer[a] as usize] == NONE {
            return None;
        }
        Some((self.port_peer[a], self.port_link[a]))
    }
}

/// Scratch state of [`RouteTable::max_base_rtt`]'s BFS: per node, reached?, propagation ps,
/// serialization ps, bottleneck bps and links from the root.
struct RttBfs {
    seen: Vec<bool>,
    delay: Vec<u64>,
    ser: Vec<u64>,
    bw: Vec<u64>,
    links: Vec<u32>,
    queue: Vec<u32>,
}

impl RttBfs {
    /// BFS from `root` (a host or a switch) over switches, values along the tree of
    /// first-discovered parents; hosts other than the root are reached but not expanded.
    fn run(&mut self, rt: &RouteTable, spec: &TopologySpec, payload_bytes: u64, root: u32) {
        let r = root as usize;
        self.seen.fill(false);
        self.seen[r] = true;
        self.queue.clear();
        self.delay[r] = 0;
        self.links[r] = 0;
        self.ser[r] = 0;
        self.bw[r] = u64::MAX;
        self.queue.push(root);
        let mut head = 0;
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            if u != r && rt.switch_idx[u] == NONE {
                continue;
            }
            let ports = rt.port_off[u] as usize..rt.port_off[u + 1] as usize;
            for (&v, &l) in rt.port_peer[ports.clone()].iter().zip(&rt.port_link[ports]) {
                let v = v as usize;
                if self.seen[v] {
                    continue;
                }
                let Some(link) = spec.links.get(l as usize) else {
                    continue;
                };
                self.seen[v] = true;
                self.delay[v] = self.delay[u].saturating_add(link.delay_ps);
                self.ser[v] = self.ser[u]
                    .saturating_add(ser_time_ps_hpcc(payload_bytes, link.rate_bps.max(1)));
                self.bw[v] = self.bw[u].min(link.rate_bps);
                self.links[v] = self.links[u] + 1;
                self.queue.push(v as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::hpcc_file;
    use crate::topology::shapes::{self, LeafSpine};
    use crate::units::{GBPS, NS, US};

    fn fat() -> TopologySpec {
        hpcc_file::parse(include_str!("../../data/hpcc/fat.txt"), "fat.txt").unwrap()
    }

    /// Check every (switch, host) entry against the definition, using `spec.ports()`.
    fn check_against_definition(spec: &TopologySpec, rt: &RouteTable) {
        let ports = spec.ports();
        let n = spec.num_nodes();
        for &h in rt.hosts() {
            // Plain BFS distances (no transit through other hosts).
            let mut dist = vec![usize::MAX; n];
            dist[h as usize] = 0;
            let mut q = std::collections::VecDeque::from([h as usize]);
            while let Some(u) = q.pop_front() {
                if u != h as usize && spec.kinds[u] == NodeKind::Host {
                    continue;
                }
                for p in &ports[u] {
                    if dist[p.peer as usize] == usize::MAX {
                        dist[p.peer as usize] = dist[u] + 1;
                        q.push_back(p.peer as usize);
                    }
                }
            }
            for &s in rt.switches() {
                let want: Vec<u16> = (0..ports[s as usize].len() as u16)
                    .filter(|&i| {
                        let v = ports[s as usize][i as usize].peer as usize;
                        dist[v] + 1 == dist[s as usize]
                            && (v == h as usize || spec.kinds[v] == NodeKind::Switch)
                    })
                    .collect();
                assert_eq!(
                    rt.next_hops(s, h),
                    want.as_slice(),
                    "switch {s} -> host {h}"
                );
            }
        }
    }

    #[test]
    fn fat_txt_paths_and_ecmp() {
        let spec = fat();
        let rt = RouteTable::build(&spec);
        assert_eq!(rt.hosts().len(), 320);
        assert_eq!(rt.switches().len(), 56);
        // Cross-pod: host -> ToR -> agg -> core -> agg -> ToR -> host.
        let p = rt.path(&spec, 0, 319);
        assert_eq!(p.hops, 6);
        assert_eq!(p.links.len(), 6);
        assert_eq!(p.prop_delay_ps, 6 * US);
        assert_eq!(p.bottleneck_bps, 100 * GBPS);
        assert_eq!(p.base_rtt_ps(&spec, 1000), 12_240 * NS);
        // Same ToR / same pod.
        let p = rt.path(&spec, 0, 1);
        assert_eq!((p.hops, p.prop_delay_ps), (2, 2 * US));
        assert_eq!(p.links, vec![0, 1]);
        assert_eq!(rt.path(&spec, 0, 16).hops, 4);
        // ECMP: ToR 320 -> remote host: its 4 agg uplinks (ports 16..20); -> own host: 1 port.
        assert_eq!(rt.next_hops(320, 319), &[16, 17, 18, 19]);
        assert_eq!(rt.next_hops(320, 5), &[5]);
        // Agg 340 -> other pod: its 4 cores (ports 4..8); core -> any host: 1 port.
        assert_eq!(rt.next_hops(340, 319), &[4, 5, 6, 7]);
        assert_eq!(rt.next_hops(340, 20), &[1]);
        assert_eq!(rt.next_hops(360, 319), &[4]);
        // HPCC-sim's maxRtt = 12240 ns and maxBdp = 153000 B for fat.txt.
        let b = rt.max_base_rtt(&spec, 1000);
        assert_eq!(b.max_base_rtt_ps, 12_240 * NS);
        assert_eq!(b.max_bdp_bytes, 153_000);
        assert_eq!((b.max_rtt_src, b.max_rtt_dst), (0, 64));
        check_against_definition(&spec, &rt);
    }

    #[test]
    fn invalid_queries_are_empty() {
        let spec = fat();
        let rt = RouteTable::build(&spec);
        assert!(rt.next_hops(0, 5).is_empty()); // host as switch
        assert!(rt.next_hops(320, 330).is_empty()); // switch as destination
        assert!(rt.next_hops(9999, 5).is_empty());
        assert!(rt.next_hops(320, 9999).is_empty());
        assert_eq!(rt.try_path(&spec, 3, 3), None);
        assert_eq!(rt.try_path(&spec, 3, 330), None);
        assert_eq!(rt.path(&spec, 330, 3), PathInfo::default());
        assert_eq!(rt.host_index(319), Some(319));
        assert_eq!(rt.host_index(320), None);
        assert_eq!(rt.switch_index(320), Some(0));
        assert_eq!(rt.switch_index(5), None);
        assert_eq!(rt.port_target(320, 16), Some((340, 320)));
        assert_eq!(rt.port_target(320, 20), None);
        assert_eq!(rt.num_ports(9999), 0);
        let mut bad = spec.clone();
        bad.links[0].b = 5000;
        assert!(RouteTable::try_build(&bad).is_err());
    }

    #[test]
    fn leaf_spine_ecmp() {
        let p = LeafSpine {
            spines: 4,
            tors: 3,
            hosts_per_tor: 5,
            ..Default::default()
        };
        let spec = shapes::leaf_spine(p).unwrap();
        let rt = RouteTable::build(&spec);
        let tor0 = 15;
        // Toward a host in another rack: one port per spine (after the 5 host ports).
        assert_eq!(rt.next_hops(tor0, 7), &[5, 6, 7, 8]);
        // Toward its own host: exactly that host's port.
        assert_eq!(rt.next_hops(tor0, 3), &[3]);
        // A spine toward host 7 (rack 1): its port to ToR 1.
        assert_eq!(rt.next_hops(18, 7), &[1]);
        check_against_definition(&spec, &rt);
        // Parallel links: each is its own ECMP port.
        let spec2 = shapes::leaf_spine(LeafSpine {
            links_per_spine: 2,
            ..p
        })
        .unwrap();
        let rt2 = RouteTable::build(&spec2);
        assert_eq!(rt2.next_hops(tor0, 7), &[5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(rt2.next_hops(18, 7), &[2, 3]);
        let path = rt2.path(&spec2, 0, 14);
        assert_eq!(path.hops, 4);
        assert_eq!(path.bottleneck_bps, 100 * GBPS);
        check_against_definition(&spec2, &rt2);
    }

    #[test]
    fn fat_tree_4_all_pairs() {
        let spec = shapes::fat_tree(4, 100 * GBPS, US, 400 * GBPS, 2 * US).unwrap();
        let rt = RouteTable::build(&spec);
        assert_eq!(rt.hosts().len(), 16);
        assert_eq!(rt.switches().len(), 20);
        for &s in rt.hosts() {
            for &d in rt.hosts() {
                if s == d {
                    continue;
                }
                let p = rt.try_path(&spec, s, d).expect("reachable");
                let want = if s / 2 == d / 2 {
                    2
                } else if s / 4 == d / 4 {
                    4
                } else {
                    6
                };
                assert_eq!(p.hops, want, "{s} -> {d}");
                assert_eq!(p.prop_delay_ps, 2 * US + (want as u64 - 2) * 2 * US);
                assert_eq!(p.bottleneck_bps, 100 * GBPS);
            }
        }
        check_against_definition(&spec, &rt);
        let b = rt.max_base_rtt(&spec, 1000);
        // 2·(2·1 + 4·2) µs + 2·80 ns + 4·20 ns.
        assert_eq!(b.max_base_rtt_ps, 20 * US + 240 * NS);
    }

    #[test]
    fn star_routing() {
        let spec = shapes::star(5, 25 * GBPS, US).unwrap();
        let rt = RouteTable::build(&spec);
        for h in 0..5u32 {
            assert_eq!(rt.next_hops(5, h), &[h as u16]);
        }
        let p = rt.path(&spec, 1, 4);
        assert_eq!(p.links, vec![1, 4]);
        assert_eq!(p.base_rtt_ps(&spec, 1000), 4 * US + 2 * 320 * NS);
        // HPCC's topology.txt: switch 0, hosts 1..=65, host i on switch port i-1.
        let spec =
            hpcc_file::parse(include_str!("../../data/hpcc/topology.txt"), "topology.txt").unwrap();
        let rt = RouteTable::build(&spec);
        assert_eq!(rt.next_hops(0, 1), &[0]);
        assert_eq!(rt.next_hops(0, 65), &[64]);
        assert_eq!(
            rt.max_base_rtt(&spec, 1000).max_base_rtt_ps,
            4 * US + 160 * NS
        );
    }

    /// A random network: `switches` switches joined by a random spanning tree plus extra
    /// links (rates and delays from small sets, so ties and ECMP occur), hosts attached to
    /// one random switch (a few values of delay and rate, so one switch has hosts with equal
    /// and unequal links) or, one in five, to two (multi-homed, or twice to the same switch),
    /// and an isolated pair of a switch and a host (unreachable from the rest); node ids are
    /// then shuffled, so hosts and switches interleave.
    fn random_spec(seed: u64, switches: u32, hosts: u32) -> TopologySpec {
        use crate::topology::LinkSpec;
        let mut rng = crate::rng::Rng::new(seed);
        let rates = [25 * GBPS, 100 * GBPS, 400 * GBPS];
        let delays = [US, 2 * US, 500 * NS];
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.extend(std::iter::repeat_n(NodeKind::Switch, switches as usize + 1));
        kinds.push(NodeKind::Host);
        let sw = |i: u64| hosts + i as u32;
        let mut links = Vec::new();
        let link = |a: u32, b: u32, rng: &mut crate::rng::Rng| LinkSpec {
            a,
            b,
            rate_bps: rates[rng.below(3) as usize],
            delay_ps: delays[rng.below(3) as usize],
            error_rate: 0.0,
        };
        for i in 1..switches as u64 {
            let parent = rng.below(i);
            links.push(link(sw(i), sw(parent), &mut rng));
        }
        for _ in 0..switches {
            let (a, b) = (rng.below(switches as u64), rng.below(switches as u64));
            if a != b {
                links.push(link(sw(a), sw(b), &mut rng));
            }
        }
        for h in 0..hosts {
            let t = rng.below(switches as u64);
            links.push(link(h, sw(t), &mut rng));
            if rng.below(5) == 0 {
                // Multi-homed, or two links to the same switch.
                let u = rng.below(switches as u64);
                links.push(link(h, sw(u), &mut rng));
            }
        }
        // Shuffle the declaration order (port numbers follow it).
        for i in (1..links.len()).rev() {
            links.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let lone = hosts + switches + 1;
        links.push(link(lone, sw(switches as u64), &mut rng));
        // Renumber the nodes at random, so hosts and switches interleave in id order.
        let n = kinds.len();
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut renumbered = vec![NodeKind::Host; n];
        for (old, &new) in perm.iter().enumerate() {
            renumbered[new as usize] = kinds[old];
        }
        for l in &mut links {
            (l.a, l.b) = (perm[l.a as usize], perm[l.b as usize]);
        }
        TopologySpec {
            kinds: renumbered,
            links,
        }
    }

    /// Sharing rows and BFS roots between hosts on one switch gives exactly the tables and
    /// bounds of one BFS per host, on regular and on random, irregular networks.
    #[test]
    fn shared_rows_and_rtt_bfs_match_one_bfs_per_host() {
        let mut specs = vec![
            fat(),
            shapes::fat_tree(4, 100 * GBPS, US, 400 * GBPS, 2 * US).unwrap(),
            shapes::leaf_spine(LeafSpine {
                spines: 3,
                tors: 4,
                hosts_per_tor: 5,
                links_per_spine: 2,
                ..Default::default()
            })
            .unwrap(),
        ];
        specs.extend(
            (0..40).map(|seed| random_spec(seed, 2 + seed as u32 % 9, 3 + seed as u32 % 23)),
        );
        for (i, spec) in specs.iter().enumerate() {
            let a = RouteTable::try_build_with(spec, true).unwrap();
            let b = RouteTable::try_build_with(spec, false).unwrap();
            assert_eq!(a.entry, b.entry, "spec {i}: forwarding entries");
            assert_eq!(
                (&a.set_off, &a.set_ports),
                (&b.set_off, &b.set_ports),
                "spec {i}: sets"
            );
            check_against_definition(spec, &a);
            for payload in [1000, 9000] {
                assert_eq!(
                    a.max_base_rtt_with(spec, payload, true),
                    a.max_base_rtt_with(spec, payload, false),
                    "spec {i}: RTT bounds"
                );
            }
        }
    }

    #[test]
    fn large_topologies_build_fast() {
        let t0 = std::time::Instant::now();
        let spec = shapes::fat_tree(16, 100 * GBPS, US, 100 * GBPS, US).unwrap();
        let rt = RouteTable::build(&spec);
        let p = rt.path(&spec, 0, 1023);
        assert_eq!(p.hops, 6);
        let fat_time = t0.elapsed();
        let t1 = std::time::Instant::now();
        let p = LeafSpine {
            spines: 32,
            tors: 64,
            hosts_per_tor: 16,
            ..Default::default()
        };
        let spec = shapes::leaf_spine(p).unwrap();
        let rt = RouteTable::build(&spec);
        assert_eq!(rt.next_hops(1024, 1023).len(), 32);
        let b = rt.max_base_rtt(&spec, 1000);
        assert_eq!(b.max_base_rtt_ps, 8 * US + 2 * 80 * NS + 2 * 20 * NS);
        let ls_time = t1.elapsed();
        eprintln!(
            "fat_tree(16) build: {fat_time:?}; leaf-spine 1024 hosts build + max RTT: {ls_time:?}"
        );
        assert!(fat_time.as_secs_f64() < 2.0 && ls_time.as_secs_f64() < 2.0);
    }
}
