//! The PFC data path: sending PAUSE/RESUME frames upstream from a switch's ingress port,
//! receiving them at the upstream switch port or NIC, expiry of real pause quanta and the
//! XOFF refresh. The accounting itself is in [`super::pfc`].

use crate::engine::Event;
use crate::engine::arena::{Packet, PktKind};
use crate::sim::{NodeRef, PfcRecord, Simulator};
use crate::switch::pfc::quanta_ps;

/// Size of a PFC frame: HPCC-sim's 43 B (PPP 14 + IPv4 20 + pause header 9), or the 64 B
/// minimum Ethernet MAC control frame with realistic framing.
fn pfc_frame_bytes(sim: &Simulator) -> u32 {
    match sim.cfg.framing {
        crate::config::Framing::Hpcc => 43,
        crate::config::Framing::Ethernet => 64,
    }
}

impl Simulator {
    /// Switch `s` sends a PAUSE (`pause`) or RESUME for priority `q` out of its port `port`
    /// (towards the upstream device that feeds that ingress).
    pub(crate) fn pfc_send(&mut self, s: usize, port: u16, q: usize, pause: bool) {
        let now = self.q.now();
        let rate = self.switches[s].ports[port as usize].link.rate_bps;
        let dur = if !pause {
            0
        } else if self.cfg.pfc.expiry {
            quanta_ps(self.cfg.pfc.quanta, rate).max(1)
        } else {
            u64::MAX
        };
        let node = self.switches[s].node;
        let size = pfc_frame_bytes(self);
        let p = self.arena.alloc(Packet {
            kind: PktKind::Pfc,
            prio: 0,
            src: node,
            dst: self.switches[s].ports[port as usize].link.peer,
            payload: q as u32,
            size,
            ts_ps: dur,
            ..Packet::default()
        });
        let sw = &mut self.switches[s];
        let pfc = sw.pfc.as_mut().expect("PFC frames only in lossless mode");
        pfc.set_paused(port, q, pause);
        let i = pfc.index(port, q);
        if pause {
            self.counters.pfc_pauses += 1;
            if dur != u64::MAX {
                // Refresh at half the pause time while the condition persists.
                let at = now + (dur / 2).max(1);
                pfc.refresh_at[i] = at;
                self.q.schedule(
                    at,
                    Event::PfcRefresh {
                        node,
                        port,
                        prio: q as u8,
                    },
                );
            }
        } else {
            self.counters.pfc_resumes += 1;
            pfc.refresh_at[i] = 0;
        }
        sw.ports[port as usize].enqueue(0, p, size as u64);
        self.switch_try_send(s, port);
    }

    /// Send a PFC PAUSE of `dur_ps` for priority `q` out of `port` without PFC accounting
    /// (SFC-P: a BTS converted into a pause of the sender NIC's priority).
    pub(crate) fn pfc_send_raw(&mut self, s: usize, port: u16, q: usize, dur_ps: u64) {
        let node = self.switches[s].node;
        let size = pfc_frame_bytes(self);
        let p = self.arena.alloc(Packet {
            kind: PktKind::Pfc,
            prio: 0,
            src: node,
            dst: self.switches[s].ports[port as usize].link.peer,
            payload: q as u32,
            size,
            ts_ps: dur_ps,
            ..Packet::default()
        });
        self.switches[s].ports[port as usize].enqueue(0, p, size as u64);
        self.switch_try_send(s, port);
    }

    /// A PFC frame arrived at `node` on `port`: pause or resume that port's priority.
    pub(crate) fn pfc_receive(&mut self, node: u32, port: u16, pkt: &Packet) {
        let now = self.q.now();
        let q = pkt.payload as usize;
        if q >= 8 || q == 0 {
            return; // queue 0 is never paused; PFC has 8 priorities
        }
        let pause = pkt.ts_ps > 0;
        let is_switch = matches!(self.nodes[node as usize], NodeRef::Switch(_));
        self.pfc_log.push(PfcRecord {
            time_ps: now,
            node,
            is_switch,
            port,
            pause,
        });
        let until = if pkt.ts_ps == u64::MAX {
            u64::MAX
        } else {
            now + pkt.ts_ps
        };
        let (mask_paused, since, until_slot) = match self.nodes[node as usize] {
            NodeRef::Host(h) => {
                let nic = &mut self.hosts[h as usize];
                (
                    nic.pfc_paused & (1 << q) != 0,
                    &mut nic.pfc_since[q],
                    &mut nic.pfc_until[q],
                )
            }
            NodeRef::Switch(s) => {
                let ep = &mut self.switches[s as usize].ports[port as usize];
                (
                    ep.paused_mask & (1 << q) != 0,
                    &mut ep.pfc_since[q],
                    &mut ep.pfc_until[q],
                )
            }
        };
        if pause {
            if !mask_paused {
                *since = now;
            }
            *until_slot = until;
            match self.nodes[node as usize] {
                NodeRef::Host(h) => self.hosts[h as usize].pfc_paused |= 1 << q,
                NodeRef::Switch(s) => {
                    self.switches[s as usize].ports[port as usize].paused_mask |= 1 << q
                }
            }
            if until != u64::MAX {
                self.q.schedule(
                    until,
                    Event::PfcExpire {
                        node,
                        port,
                        prio: q as u8,
                    },
                );
            }
        } else if mask_paused {
            self.pfc_unpause(node, port, q);
        }
    }

    /// Lift the pause of priority `q` on `node`'s `port` and restart transmission.
    fn pfc_unpause(&mut self, node: u32, port: u16, q: usize) {
        let now = self.q.now();
        match self.nodes[node as usize] {
            NodeRef::Host(h) => {
                let nic = &mut self.hosts[h as usize];
                nic.pfc_paused &= !(1 << q);
                nic.pfc_until[q] = 0;
                self.counters.pfc_paused_ps += now - nic.pfc_since[q];
                self.host_try_send(h as usize);
            }
            NodeRef::Switch(s) => {
                let ep = &mut self.switches[s as usize].ports[port as usize];
                ep.paused_mask &= !(1 << q);
                ep.pfc_until[q] = 0;
                self.counters.pfc_paused_ps += now - ep.pfc_since[q];
                self.switch_try_send(s as usize, port);
            }
        }
    }

    /// Expiry check of a received pause.
    pub(crate) fn pfc_expire(&mut self, node: u32, port: u16, prio: u8) {
        let now = self.q.now();
        let q = prio as usize;
        let until = match self.nodes[node as usize] {
            NodeRef::Host(h) => self.hosts[h as usize].pfc_until[q],
            NodeRef::Switch(s) => self.switches[s as usize].ports[port as usize].pfc_until[q],
        };
        if until == now {
            self.pfc_unpause(node, port, q);
        }
    }

    /// Refresh of an XOFF this switch sent.
    pub(crate) fn pfc_refresh(&mut self, node: u32, port: u16, prio: u8) {
        let now = self.q.now();
        let NodeRef::Switch(s) = self.nodes[node as usize] else {
            return;
        };
        let s = s as usize;
        let Some(pfc) = self.switches[s].pfc.as_ref() else {
            return;
        };
        let i = pfc.index(port, prio as usize);
        if pfc.refresh_at[i] == now && pfc.paused[i] {
            self.pfc_send(s, port, prio as usize, true);
        }
    }

    /// Close the paused-time accounting of pauses still in force at the end of a run.
    pub(crate) fn pfc_finish(&mut self) {
        let now = self.q.now();
        for nic in self.hosts.iter_mut() {
            for q in 0..8 {
                if nic.pfc_paused & (1 << q) != 0 {
                    self.counters.pfc_paused_ps += now - nic.pfc_since[q];
                    nic.pfc_since[q] = now;
                }
            }
        }
        for sw in self.switches.iter_mut() {
            for ep in sw.ports.iter_mut() {
                for q in 0..8 {
                    if ep.paused_mask & (1 << q) != 0 {
                        self.counters.pfc_paused_ps += now - ep.pfc_since[q];
                        ep.pfc_since[q] = now;
                    }
                }
            }
        }
    }
}
