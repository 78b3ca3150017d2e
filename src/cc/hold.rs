//! The hold mode of a rate controller (DCQCN, TIMELY; the scenario key `cc.tcd`): the
//! reaction point of TCD (`specs/tcd.md` §7), whose switches are the schemes that declare
//! hold marks ([`crate::scheme::Declares::hold_marks`]). The path reports a ternary state: congested (CE), undetermined — a
//! port that is paused, not congested (an echoed scheme mark, [`crate::registry::ECHOED_MARKS`]:
//! TCD's UE) — or neither. A controller in hold mode keeps one [`HoldEchoes`] per QP and
//! decides only *when* it asks: DCQCN before each rate-increase event
//! ([`HoldEchoes::hold_increase`]), TIMELY at its once-per-RTT update
//! ([`HoldEchoes::hold_update`]). A CNP echoing a mark reaches a controller as
//! [`crate::cc::SchemeSignal::Marked`].

/// The CE and hold-mark echoes a QP's controller saw since its last increase event or update,
/// and the events it held because of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldEchoes {
    /// A CE echo arrived (congestion on the path).
    pub ce: bool,
    /// A hold-mark echo or a marked CNP arrived (TCD's UE: an undetermined port, PFC residue,
    /// on the path).
    pub marked: bool,
    /// Increase events or updates held because of UE.
    pub held: u64,
}

impl HoldEchoes {
    /// An ACK echoed `ce` / a hold mark (`marked`).
    #[inline]
    pub fn note_ack(&mut self, ce: bool, marked: bool) {
        self.ce |= ce;
        self.marked |= marked;
    }

    /// A hold signal (a marked CNP, or a mark echoed on an ACK).
    #[inline]
    pub fn note_mark(&mut self) {
        self.marked = true;
    }

    /// Forget the echoes: a new interval starts (a cut, a rate update, a rate set).
    #[inline]
    pub fn clear(&mut self) {
        self.ce = false;
        self.marked = false;
    }

    /// DCQCN+TCD: an increase event is due. If UE arrived since the last one it is held
    /// (skipped, and counted) and the UE is consumed: only CE cuts, UE stops the climb.
    #[inline]
    pub fn hold_increase(&mut self) -> bool {
        if self.marked {
            self.marked = false;
            self.held += 1;
            true
        } else {
            false
        }
    }

    /// TIMELY+TCD: the once-per-RTT update is due. If UE and no CE were echoed since the
    /// last update (only PFC-affected ports on the path) the rate holds (counted); the caller
    /// clears the echoes after the update either way.
    #[inline]
    pub fn hold_update(&mut self) -> bool {
        if self.marked && !self.ce {
            self.held += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcqcn_rule_consumes_ue_per_increase() {
        let mut e = HoldEchoes::default();
        assert!(!e.hold_increase());
        e.note_mark();
        assert!(e.hold_increase());
        assert!(!e.hold_increase(), "one UE holds one increase");
        assert_eq!(e.held, 1);
    }

    #[test]
    fn timely_rule_holds_on_ue_without_ce() {
        let mut e = HoldEchoes::default();
        e.note_ack(false, true);
        assert!(e.hold_update());
        e.clear();
        e.note_ack(true, false);
        e.note_ack(false, true);
        assert!(!e.hold_update(), "CE on the path: the controller reacts");
        assert_eq!(e.held, 1);
    }
}
