//! RED/ECN marking as HPCC-sim does it: at dequeue, on the backlog of the (port, queue) left
//! behind the departing packet (`specs/dcqcn.md` §1). Implemented in the departure hook (the
//! same instant, once the packet started transmission: the mark travels with the header and
//! nothing between dequeue and departure changes that queue), so that ECN shares one stage
//! with the other schemes that act when a packet leaves. Switch-only: receivers echo the mark in
//! their ACKs or send CNPs, which is the NIC's congestion-notification mode
//! ([`crate::config::CnpMode`]), not part of this scheme.

use crate::engine::packet::Header;
use crate::scheme::marking::{EcnThresholds, should_mark};
use crate::scheme::{Env, Hop, NoHost, Scheme, SwitchCtx, SwitchHooks, hook};
use crate::scheme::{SchemeId, Setup};
use crate::switch::EgressPort;

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(0);

/// ECN marking on one switch: the thresholds of each egress port (by its rate). Stored as a
/// byte per port indexing a few distinct threshold sets. The bytes of the first
/// [`INLINE_PORTS`] ports and the first [`INLINE_CLASSES`] sets are also kept inside the
/// struct (which lives in the switch's own memory), so the lookup on every dequeue follows no
/// pointer on common switches: the two heap lookups it replaced were two first-level cache
/// misses per dequeue on the fat-tree benchmark (`cachegrind`).
#[derive(Clone, Debug)]
pub struct EcnSwitch {
    /// Class of ports `0..INLINE_PORTS` (copy of `port_class`; `NO_MARKING` past the end).
    inline_class: [u8; INLINE_PORTS],
    /// Sets `0..INLINE_CLASSES` (copy of `classes`; unused past its end).
    inline_sets: [EcnThresholds; INLINE_CLASSES],
    /// Index into `classes` per egress port (`NO_MARKING` = the port does not mark).
    port_class: Vec<u8>,
    /// The distinct thresholds in use.
    classes: Vec<EcnThresholds>,
    /// Data packets marked CE.
    pub marks: u64,
}

/// `EcnSwitch::port_class` of a port that does not mark.
pub const NO_MARKING: u8 = u8::MAX;

/// Ports whose class [`EcnSwitch`] keeps inline.
pub const INLINE_PORTS: usize = 64;

/// Threshold sets [`EcnSwitch`] keeps inline.
pub const INLINE_CLASSES: usize = 2;

impl EcnSwitch {
    /// Marking on ports of the given classes (`NO_MARKING` = that port does not mark), with
    /// the distinct threshold sets `classes` (at most `NO_MARKING` of them).
    pub fn new(port_class: Vec<u8>, classes: Vec<EcnThresholds>) -> Self {
        assert!(classes.len() <= NO_MARKING as usize, "too many ECN classes");
        let mut inline_class = [NO_MARKING; INLINE_PORTS];
        for (d, &c) in inline_class.iter_mut().zip(&port_class) {
            *d = c;
        }
        let unused = EcnThresholds {
            rate_bps: 0,
            kmin_bytes: u64::MAX,
            kmax_bytes: u64::MAX,
            pmax: 0.0,
        };
        let mut inline_sets = [unused; INLINE_CLASSES];
        for (d, &t) in inline_sets.iter_mut().zip(&classes) {
            *d = t;
        }
        EcnSwitch {
            inline_class,
            inline_sets,
            port_class,
            classes,
            marks: 0,
        }
    }

    /// Thresholds of `port`, if it marks.
    #[inline]
    pub fn thresholds(&self, port: u16) -> Option<&EcnThresholds> {
        let p = port as usize;
        let c = match self.inline_class.get(p) {
            Some(&c) => c,
            None => *self.port_class.get(p)?,
        } as usize;
        // Classes on ports are below `classes.len()` by construction (an unused inline set
        // would never mark anyway).
        if c < INLINE_CLASSES {
            Some(&self.inline_sets[c])
        } else {
            self.classes.get(c)
        }
    }
}

impl SwitchHooks for EcnSwitch {
    fn hooks(&self) -> u16 {
        hook::DEPARTURE
    }

    #[inline]
    fn prefetch_egress(&self, port: u16) {
        match self.inline_class.get(port as usize) {
            Some(c) => crate::engine::prefetch(c as *const u8),
            None => {
                if let Some(c) = self.port_class.get(port as usize) {
                    crate::engine::prefetch(c as *const u8);
                }
                crate::engine::prefetch(self.classes.as_ptr());
            }
        }
        crate::engine::prefetch(self.inline_sets.as_ptr());
    }

    /// RED on the backlog the departing data packet leaves behind in its queue.
    #[inline]
    fn on_departure(&mut self, ctx: &mut SwitchCtx<'_>, p: u32, at: &Hop) {
        if at.q == 0 {
            return;
        }
        let Some(t) = self.thresholds(at.egress) else {
            return;
        };
        let backlog = ctx.ports[at.egress as usize].queues[at.q].bytes;
        // The backlog first: below K_min (nearly always) the packet is not read at all. The
        // RNG is drawn only for data packets in the probabilistic band.
        if backlog > t.kmin_bytes
            && let Header::Data(d) = &mut ctx.arena.get_mut(p).hdr
            && should_mark(backlog, t, ctx.rng)
        {
            d.ce = true;
            self.marks += 1;
        }
    }
}

impl Scheme for EcnSwitch {
    type Host = NoHost;
    type Config = ();
    const ID: SchemeId = ID;

    /// Not on a lossless fabric where a scheme marks CE itself
    /// ([`crate::scheme::Declares::ce_precedence`]: TCD, CBFC's FECN marking): it owns the CE
    /// code point there.
    fn build_switch(
        cfg: &Setup<'_, ()>,
        _env: &Env,
        _tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self> {
        let lossless = cfg.buffer.mode == crate::config::BufferMode::Lossless;
        if lossless && cfg.peers.ce_precedence.is_some() {
            return None;
        }
        let mut classes: Vec<EcnThresholds> = Vec::new();
        let mut port_class = Vec::with_capacity(ports.len());
        for ep in ports {
            let c = match cfg.ecn.for_rate(ep.tx.link.rate_bps) {
                None => NO_MARKING,
                Some(t) => match classes.iter().position(|c| *c == t) {
                    Some(i) => i as u8,
                    None if classes.len() < NO_MARKING as usize => {
                        classes.push(t);
                        (classes.len() - 1) as u8
                    }
                    None => NO_MARKING,
                },
            };
            port_class.push(c);
        }
        (!classes.is_empty()).then(|| EcnSwitch::new(port_class, classes))
    }

    fn summary(
        switches: &[&Self],
        _host: Option<&NoHost>,
        cfg: &Setup<'_, ()>,
    ) -> Option<(&'static str, serde_json::Value)> {
        Some((
            "ecn",
            serde_json::json!({
                "enabled": cfg.ecn.enabled,
                "marks": switches.iter().map(|s| s.marks).sum::<u64>(),
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline copies answer exactly as the full tables, on both sides of the inline
    /// limits (ports past `INLINE_PORTS`, classes past `INLINE_CLASSES`, unmarked ports).
    #[test]
    fn inline_lookup_matches_the_tables() {
        let set = |k: u64| EcnThresholds {
            rate_bps: k,
            kmin_bytes: k * 1000,
            kmax_bytes: k * 4000,
            pmax: 0.1,
        };
        let classes: Vec<EcnThresholds> = (1..=5).map(set).collect();
        let n = INLINE_PORTS + 40;
        let port_class: Vec<u8> = (0..n)
            .map(|p| {
                if p % 7 == 3 {
                    NO_MARKING
                } else {
                    (p % 5) as u8
                }
            })
            .collect();
        let e = EcnSwitch::new(port_class.clone(), classes.clone());
        for p in 0..n + 3 {
            let want = port_class.get(p).and_then(|&c| classes.get(c as usize));
            assert_eq!(e.thresholds(p as u16), want, "port {p}");
        }
        // A single set, few ports: every marking port answers with it.
        let e = EcnSwitch::new(vec![0, NO_MARKING, 0], vec![set(9)]);
        assert_eq!(e.thresholds(0), Some(&set(9)));
        assert_eq!(e.thresholds(1), None);
        assert_eq!(e.thresholds(2), Some(&set(9)));
        assert_eq!(e.thresholds(3), None);
    }
}
