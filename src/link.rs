//! The transmit side of one link end, shared by switch egress ports and host NICs: the link it
//! drives, the serialization state, and the per-priority pause bits a downstream device sets
//! (PFC). One type, so that transmission, TxDone handling and pausing are written once.

/// The link one port transmits on.
#[derive(Clone, Debug)]
pub struct PortLink {
    /// Node at the other end.
    pub peer: u32,
    /// Port number at the other end.
    pub peer_port: u16,
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
    /// The link this port transmits on.
    pub link: PortLink,
}

impl TxPort {
    /// Idle, unpaused port on `link`.
    pub fn new(link: PortLink) -> Self {
        TxPort {
            busy_until_ps: 0,
            paused_mask: 0,
            txdone_pending: false,
            link,
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
