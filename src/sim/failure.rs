//! Link failures during a run ([`crate::config::Failures`]): links going down and coming
//! back up at scheduled times, the packets they lose, the PFC state they release and the
//! forwarding tables that follow them after the reconvergence delay.
//!
//! Nothing here runs per packet. A run without link events schedules none of these events
//! and allocates no failure state; the only per-packet cost is the link-up test where a
//! packet is handed to a link (`Simulator::start_tx`).

use super::{NodeRef, Simulator};
use crate::engine::{Event, NO_EGRESS};
use crate::scheme::HostHooks;
use crate::topology::routing::RouteTable;

/// `delay` returned by `Simulator::start_tx` for a link that is down: the packet is lost
/// instead of arriving.
pub(crate) const DEAD_LINK: u64 = u64::MAX;

/// Link-failure state of a run with link events.
#[derive(Clone, Debug)]
pub struct FailureState {
    /// Per link index: the link is down.
    pub down: Vec<bool>,
    /// Per link index: its port at end `a` and at end `b` of [`crate::topology::LinkSpec`].
    ends: Vec<(u16, u16)>,
    /// Packets lost to links that were down: on the wire when the link went down, or sent on
    /// it while it was down.
    pub link_drops: u64,
    /// Link state changes that took effect (a `link_down` of a link already down changes
    /// nothing and is not counted).
    pub changes: u64,
    /// Times the forwarding tables were computed again.
    pub reroutes: u64,
    /// The forwarding tables with every link up (the ideal paths of flows' FCT slowdowns),
    /// kept once the live tables first change.
    pub static_routes: Option<Box<RouteTable>>,
}

impl FailureState {
    /// Every link of `topo` up.
    pub(crate) fn new(topo: &crate::topology::TopologySpec) -> Self {
        let ports = topo.ports();
        let mut ends = vec![(0u16, 0u16); topo.links.len()];
        for (n, ps) in ports.iter().enumerate() {
            for (i, p) in ps.iter().enumerate() {
                let l = &topo.links[p.link as usize];
                let e = &mut ends[p.link as usize];
                // A link's two ends are distinct nodes (the topology checks refuse loops).
                if l.a as usize == n {
                    e.0 = i as u16;
                } else {
                    e.1 = i as u16;
                }
            }
        }
        FailureState {
            down: vec![false; topo.links.len()],
            ends,
            link_drops: 0,
            changes: 0,
            reroutes: 0,
            static_routes: None,
        }
    }
}

impl Simulator {
    /// Schedule the run's link events (none: nothing is scheduled or allocated).
    pub(crate) fn schedule_link_events(&mut self) {
        if self.cfg.failures.is_empty() {
            return;
        }
        self.failures = Some(Box::new(FailureState::new(&self.topo)));
        for (i, e) in self.cfg.failures.events.iter().enumerate() {
            self.q
                .schedule(e.at_ps, Event::LinkChange { event: i as u32 });
        }
    }

    /// Link event `i` takes effect: every link between its two nodes goes down (or comes up);
    /// the forwarding tables follow after the reconvergence delay.
    pub(crate) fn link_change(&mut self, i: u32) {
        let e = self.cfg.failures.events[i as usize];
        let Some(st) = self.failures.as_mut() else {
            return;
        };
        let links: Vec<usize> = self
            .topo
            .links
            .iter()
            .enumerate()
            .filter(|(l, k)| {
                ((k.a, k.b) == (e.a, e.b) || (k.a, k.b) == (e.b, e.a)) && st.down[*l] == e.up
            })
            .map(|(l, _)| l)
            .collect();
        if links.is_empty() {
            return;
        }
        for &l in &links {
            st.down[l] = !e.up;
            st.changes += 1;
        }
        for &l in &links {
            self.set_link_state(l, e.up);
        }
        let delay = self.cfg.failures.reconverge_delay_ps;
        if self.cfg.failures.local_repair && delay > 0 {
            self.local_repair(&links);
        }
        self.q.schedule_in(delay, Event::Reroute);
    }

    /// The switches at the ends of `links` take the shortest paths over the links up now at
    /// once ([`crate::config::Failures::local_repair`]); the others keep their tables until
    /// the reconvergence delay has elapsed.
    fn local_repair(&mut self, links: &[usize]) {
        let Some(st) = self.failures.as_mut() else {
            return;
        };
        if st.static_routes.is_none() {
            st.static_routes = Some(Box::new(self.routes.clone()));
        }
        let mut repaired = self.routes.clone();
        if repaired.reroute(&st.down).is_err() {
            return;
        }
        let mut ends: Vec<u32> = Vec::with_capacity(2 * links.len());
        for &l in links {
            let k = &self.topo.links[l];
            for n in [k.a, k.b] {
                if matches!(self.nodes[n as usize], NodeRef::Switch(_)) && !ends.contains(&n) {
                    ends.push(n);
                }
            }
        }
        if self.routes.adopt_switches(&repaired, &ends).is_ok() {
            self.refresh_pending_egress();
        }
    }

    /// Link `l` goes down (`up` false) or comes back up, at both ends.
    fn set_link_state(&mut self, l: usize, up: bool) {
        let (a, b) = (self.topo.links[l].a, self.topo.links[l].b);
        let Some((pa, pb)) = self.failures.as_ref().map(|st| st.ends[l]) else {
            return;
        };
        let ends = [(a, pa), (b, pb)];
        for &(node, port) in &ends {
            self.tx_port_mut(node, port).link.state = if up {
                crate::link::LinkState::Up
            } else {
                crate::link::LinkState::Down
            };
        }
        if up {
            return;
        }
        self.lose_in_flight(&ends);
        for &(node, port) in &ends {
            self.lift_pauses(node, port);
        }
    }

    /// The transmit state of port `port` of `node`, to change it.
    fn tx_port_mut(&mut self, node: u32, port: u16) -> &mut crate::link::TxPort {
        match self.nodes[node as usize] {
            NodeRef::Host(h) => &mut self.hosts[h as usize].tx,
            NodeRef::Switch(s) => &mut self.switches[s as usize].ports[port as usize].tx,
        }
    }

    /// The packets on the wire of the link whose ends are `ends` (their last bit has not
    /// reached the far end yet: the arrival, less the receiver's pipeline delay, is after
    /// now) are lost.
    fn lose_in_flight(&mut self, ends: &[(u32, u16); 2]) {
        let now = self.q.now();
        let (nodes, cfg) = (&self.nodes, &self.cfg);
        self.q.for_each_pending_mut(|t, ev| {
            if let Event::Arrive {
                node,
                port,
                pkt,
                seq,
                ..
            } = *ev
                && ends.contains(&(node, port))
            {
                let proc = match nodes[node as usize] {
                    NodeRef::Host(_) => cfg.nic_delay_ps,
                    NodeRef::Switch(_) => cfg.switch_delay_ps,
                };
                if t - proc > now {
                    *ev = Event::Lost {
                        node,
                        port,
                        at_sender: false,
                        seq,
                        pkt,
                    };
                }
            }
        });
    }

    /// The pause state of port `port` of `node` is cleared, as HPCC-sim's
    /// `QbbNetDevice::TakeDown` clears a port's `m_paused`: the RESUME that would end a pause
    /// in force can no longer arrive over the dead link. The schemes end what waits for a
    /// frame over it first (`on_link_down`: PFC's bookkeeping of a pause — pause time, pauses
    /// held — ends as if a RESUME had arrived); the port is then served again (into the dead
    /// link, where its packets are lost).
    fn lift_pauses(&mut self, node: u32, port: u16) {
        match self.nodes[node as usize] {
            NodeRef::Switch(s) => {
                self.switch_scheme_call(s as usize, |sc, ctx| sc.on_link_down(ctx, port));
                self.switches[s as usize].ports[port as usize]
                    .tx
                    .paused_mask = 0;
                self.switch_try_send(s as usize, port);
            }
            NodeRef::Host(h) => {
                for i in 0..self.host_schemes.len() {
                    self.host_hook(h as usize, i, |sc, ctx| sc.on_link_down(ctx));
                }
                self.hosts[h as usize].tx.paused_mask = 0;
                self.host_try_send(h as usize);
            }
        }
    }

    /// The reconvergence delay after a link change has elapsed: the forwarding tables are
    /// computed again over the links up now, and the packets on their way to a switch take
    /// the new tables' decision (it is made when a packet is sent, see `Event::Arrive`).
    pub(crate) fn reroute(&mut self) {
        let Some(st) = self.failures.as_mut() else {
            return;
        };
        if st.static_routes.is_none() {
            st.static_routes = Some(Box::new(self.routes.clone()));
        }
        // The only error is running out of distinct ECMP sets, which the full table did not:
        // the tables then stay as they were.
        if self.routes.reroute(&st.down).is_err() {
            return;
        }
        st.reroutes += 1;
        self.refresh_pending_egress();
    }

    /// The packets on their way to a switch take the current tables' decision (it is made
    /// when a packet is sent, see `Event::Arrive`).
    fn refresh_pending_egress(&mut self) {
        let (nodes, arena, routes, switches) =
            (&self.nodes, &self.arena, &self.routes, &self.switches);
        self.q.for_each_pending_mut(|_, ev| {
            if let Event::Arrive {
                node, pkt, egress, ..
            } = ev
                && let NodeRef::Switch(s) = nodes[*node as usize]
            {
                let pk = arena.get(*pkt);
                *egress = if pk.is_hop_by_hop() {
                    NO_EGRESS
                } else {
                    let h = crate::engine::packet::Hdr::of(pk);
                    Simulator::route_at(routes, &switches[s as usize], &h)
                };
            }
        });
    }

    /// Packet `pkt` is lost on a link that is down.
    pub(crate) fn lost(&mut self, pkt: u32) {
        if let Some(st) = self.failures.as_mut() {
            st.link_drops += 1;
        }
        self.arena.free(pkt);
    }

    /// The `failures` section of `summary.json` (runs with link events only): link changes
    /// that took effect, forwarding-table recomputations, packets lost to dead links.
    pub fn failure_summary(&self) -> Option<serde_json::Value> {
        let st = self.failures.as_ref()?;
        Some(serde_json::json!({
            "link_events": self.cfg.failures.events.len(),
            "link_changes": st.changes,
            "reroutes": st.reroutes,
            "link_drops": st.link_drops,
            "links_down_at_end": st.down.iter().filter(|&&d| d).count(),
        }))
    }
}
