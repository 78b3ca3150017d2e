//! The transmit side of one link end, shared by switch egress ports and host NICs: the link it
//! drives, the serialization state, and the per-priority pause bits a downstream device sets
//! (PFC). One type, so that transmission, TxDone handling and pausing are written once.

/// What happens to a packet sent on a link: one byte, tested once per transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// It arrives at the peer.
    Up,
    /// It is lost (the link is down).
    Down,
    /// It arrives at the peer, which another partition of a run split over threads
    /// simulates: it is handed over to that partition.
    Remote,
}

/// The link one port transmits on.
#[derive(Clone, Debug)]
pub struct PortLink {
    /// Node at the other end.
    pub peer: u32,
    /// Port number at the other end.
    pub peer_port: u16,
    /// Up, down (a packet sent is lost, [`crate::config::Failures`]) or leading to another
    /// partition of a run split over threads ([`crate::sim::parallel`]).
    pub state: LinkState,
    /// Rate, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay, picoseconds.
    pub delay_ps: u64,
    /// Per-packet drop probability at the receiving end.
    pub error_rate: f64,
    /// Bytes transmitted on this direction (counts every frame).
    pub tx_bytes: u64,
}

/// Transmit state of a port (switch egress port or host NIC). `repr(C)`, hot fields first.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct TxPort {
    /// The port is serializing a packet until this time, picoseconds (0 = idle, freed by its
    /// TxDone).
    pub busy_until_ps: u64,
    /// Bit p set = priority p paused by the downstream device (PFC, SFC-P); bit 0, the
    /// control class, is never set. Up to 64 priorities (`queues_per_port` ≤ 64).
    pub paused_mask: u64,
    /// A `TxDone` event is pending. It is scheduled lazily — only when the port has (or gets)
    /// something to send while busy — so an idle-after-transmission port costs no event.
    pub txdone_pending: bool,
    /// Transmissions started on this port, wrapping: the sequence number of the next one
    /// (`Event::Arrive::seq`).
    pub launches: u16,
    /// The link this port transmits on.
    pub link: PortLink,
    /// The event queue's order summaries of this port's `TxDone` and of its transmissions'
    /// arrivals at the peer (set by the simulator when it builds its queue).
    pub hints: crate::engine::PortHints,
}

impl TxPort {
    /// Idle, unpaused port on `link`.
    pub fn new(link: PortLink) -> Self {
        TxPort {
            busy_until_ps: 0,
            paused_mask: 0,
            txdone_pending: false,
            launches: 0,
            link,
            hints: Default::default(),
        }
    }

    /// Is the port still serializing at `now_ps`? Busy until `busy_until_ps` inclusive: a port
    /// that finishes exactly now takes its next packet in its TxDone event, after every packet
    /// arriving at this instant (arrivals are ordered before departures at equal times).
    #[inline]
    pub fn busy(&self, now_ps: u64) -> bool {
        self.busy_until_ps >= now_ps && self.busy_until_ps != 0
    }

    /// Is priority `prio` paused?
    #[inline]
    pub fn paused(&self, prio: usize) -> bool {
        self.paused_mask & (1u64 << prio) != 0
    }
}

/// Slowest accepted link, bits per second (1 Mb/s: a 9 KB packet then takes 72 ms).
pub const MIN_LINK_RATE_BPS: u64 = 1_000_000;
/// Longest accepted one-way link delay, picoseconds (1 s), so that base RTTs, BDPs and
/// timeouts derived from it stay far inside the picosecond range.
pub const MAX_LINK_DELAY_PS: u64 = crate::units::SEC;

/// Check a link rate against [`MIN_LINK_RATE_BPS`] and [`crate::units::MAX_RATE_BPS`].
pub fn check_link_rate(rate_bps: u64) -> Result<(), String> {
    if rate_bps < MIN_LINK_RATE_BPS {
        return Err(format!(
            "rate {rate_bps} bps is below the slowest accepted link, 1Mbps (one packet would take seconds to serialize)"
        ));
    }
    if rate_bps > crate::units::MAX_RATE_BPS {
        return Err(format!(
            "rate {rate_bps} bps is above the fastest accepted link, 1000Tbps"
        ));
    }
    Ok(())
}

/// Check a one-way link delay against [`MAX_LINK_DELAY_PS`].
pub fn check_link_delay(delay_ps: u64) -> Result<(), String> {
    if delay_ps > MAX_LINK_DELAY_PS {
        return Err(format!(
            "one-way delay {} is above the longest accepted, 1s (base RTTs and timeouts must stay in range)",
            crate::units::fmt_time(delay_ps)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_limits() {
        assert!(check_link_rate(1).is_err());
        assert!(check_link_rate(MIN_LINK_RATE_BPS).is_ok());
        assert!(check_link_delay(MAX_LINK_DELAY_PS).is_ok());
        assert!(check_link_delay(MAX_LINK_DELAY_PS + 1).is_err());
    }
}
