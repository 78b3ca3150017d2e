//! Flow-control and switch-feedback schemes as plug-ins.
//!
//! A *scheme* is a mechanism with a switch half and (optionally) a host half: SFC, OnRamp,
//! PFC, ECN marking, PB-FS, TCD, NDP, BFC, CBFC. Each lives in its own folder here
//! (`sfc/`, `onramp/`, `pfc/`, `ecn/`, `pbfs/`, `tcd/`, `ndp/`, `bfc/`, `cbfc/`), with its configuration, its pure data structures
//! (tested in isolation), its switch half (a [`SwitchHooks`] implementation) and its host half
//! (a [`HostHooks`] implementation). Congestion controllers are a separate, per-QP concern
//! ([`crate::cc`]): a scheme acts on packets and ports, a controller on one QP's rate/window.
//! A scheme never imports another: what two schemes share is part of this interface
//! ([`marking`]: the RED curve of ECN marking and TCD).
//!
//! ## How a scheme plugs in
//! The core (the forwarding path in [`crate::sim::forward`] and the NIC in
//! [`crate::sim::nic`]) calls the hooks at fixed points of a packet's life, on a *narrow
//! context* ([`SwitchCtx`] / [`HostCtx`]): the clock, the node's ports and queues, the packet
//! arena, the switch's random stream, the static environment ([`Env`]) and an outbox. Schemes
//! never see the simulator: anything they want done — send a packet, re-inject one into the
//! switch's own ingress, pause a QP, restart a port, set a timer — they push into the outbox
//! ([`Emit`], [`HostAction`]) and the core carries it out right after the hook returns, in
//! order. That keeps each scheme a pure state machine that unit tests can drive by hand.
//!
//! Switch hooks, in a packet's life at a switch (see `docs/src/adding-a-scheme.md`):
//! 1. [`SwitchHooks::on_control`] — a packet of a kind the scheme owns arrives (PFC frame,
//!    BTS): consume it or let it be forwarded;
//! 2. the forwarding lookup; [`SwitchHooks::select_queue`] may pick the egress queue;
//! 3. [`SwitchHooks::on_ingress`] — after the lookup, before admission: admit / drop / consume;
//! 4. [`SwitchHooks::admit`] — a scheme that owns buffer admission (lossless PFC) decides,
//!    otherwise the shared-buffer MMU does; [`SwitchHooks::on_admission_failure`] on refusal;
//! 5. enqueue, then [`SwitchHooks::on_enqueue`] (with the queue depth seen before the packet);
//! 6. when the port is free: scheduler, dequeue, [`SwitchHooks::on_dequeue`] (act before the
//!    packet is on the wire, e.g. emit a packet ahead of it);
//! 7. the packet starts transmission; [`SwitchHooks::on_departure`] (buffer released; may
//!    still mark the packet: ECN marks here);
//! 8. [`SwitchHooks::on_timer`] for the scheme's own timers; [`SwitchHooks::finish`] at the end.
//!
//! Host hooks: [`HostHooks::on_control`] (a packet of the scheme's kind reaches a NIC),
//! [`HostHooks::on_ack`] (after the CC processed an ACK), [`HostHooks::on_data_send`] (a data
//! packet is built; PB-FS marks it), [`HostHooks::on_transmit`] (any packet goes on the
//! NIC's link; CBFC spends credits), [`HostHooks::on_timer`],
//! [`HostHooks::finish`].
//!
//! ## Registration
//! A scheme is its folder: its [`Scheme`] implementation names its id ([`Scheme::ID`]), its
//! packet mark ([`Scheme::MARK`]), its host half and its configuration ([`Scheme::Config`]:
//! a [`SchemeConfig`] with a scenario table, in the scheme's `config.rs`, or `()`), and one
//! line in the registry ([`crate::registry`]) adds it to the run: the registry builds the
//! per-switch aggregate of switch halves (statically dispatched, no `Box<dyn>`, no loop on the
//! hot path), the host-half enum, the network configuration's scheme section, the scenario
//! tables, validation, no-effect keys, memory tables and `sfc hpcc` keys. A scheme reads the
//! core settings and its own configuration through [`Setup`]; what it needs to know about the
//! other schemes of the run it reads from [`Peers`], which the registry folds from what each
//! scheme declares ([`SchemeConfig::declares`]), so no scheme names another.

pub mod bfc;
pub mod cbfc;
pub mod config;
pub mod ecn;
pub mod marking;
pub mod ndp;
pub mod onramp;
pub mod pause;
pub mod pbfs;
pub mod pfc;
pub mod red;
pub mod sfc;
pub mod tcd;

use crate::config::CoreConfig;
use crate::engine::arena::PacketArena;
use crate::engine::packet::{AckHdr, Header, Marks, Packet, WireSizes};
use crate::host::transport::{RecvState, Response, Segment, SendState, TransportParams};
use crate::link::TxPort;
use crate::rng::Rng;
use crate::switch::EgressPort;
use crate::topology::routing::RouteTable;
pub use config::{
    CoreDefaults, CoreView, CreditPeriod, Declares, Exclusive, Fields, HpccFields, Inert, Issues,
    KeyView, Peers, SchemeConfig,
};

/// Static environment every hook may read: rates, base RTT, sizes.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// NIC line rate (slowest host link), bits per second.
    pub host_rate_bps: u64,
    /// Max base RTT over host pairs (HPCC-sim definition), picoseconds.
    pub base_rtt_ps: u64,
    /// Queues per switch port (queue 0 = strict-priority control class).
    pub queues_per_port: usize,
    /// Number of hosts.
    pub num_hosts: usize,
    /// Wire sizes of every packet kind.
    pub sizes: WireSizes,
    /// MTU payload per data packet, bytes ([`crate::config::CoreConfig::mtu_bytes`]).
    pub mtu_bytes: u32,
}

/// What a scheme asks a switch to do (carried out in order right after the hook returns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// Inject packet slot `pkt` into this switch's own ingress (port 0), where it is routed by
    /// the forwarding table like any arriving packet (recirculation; SFC's BTS).
    Recirculate(u32),
    /// Queue packet slot `pkt` in the strict-priority control class of `port` (hop-by-hop
    /// frames such as PFC PAUSE/RESUME), bypassing the MMU.
    Control {
        /// Egress port.
        port: u16,
        /// Packet slot.
        pkt: u32,
    },
    /// Give back `bytes` of the switch's shared buffer: for a scheme that
    /// took a queued packet out of its queue (NDP trims the tail). Carried out in order, so a
    /// release before a [`Emit::Recirculate`] of the same packet happens first.
    Release {
        /// Bytes.
        bytes: u64,
    },
    /// Restart transmission on `port` (e.g. a pause was lifted).
    Kick {
        /// Egress port.
        port: u16,
    },
    /// Call this scheme's [`SwitchHooks::on_timer`] with `(port, which, arg)` right now, in
    /// order with the other requests of this stage (an action deferred until the requests
    /// before it were carried out).
    Call {
        /// Port the call is about.
        port: u16,
        /// Which action.
        which: u8,
        /// Argument (e.g. a priority).
        arg: u8,
    },
    /// Call this scheme's [`SwitchHooks::on_timer`] at `at_ps` with `(port, which, arg)`.
    Timer {
        /// Absolute time, picoseconds.
        at_ps: u64,
        /// Port the timer is about.
        port: u16,
        /// Which of the scheme's timers.
        which: u8,
        /// Timer argument (e.g. a priority).
        arg: u8,
    },
}

/// Requests of schemes to the core, each tagged with the scheme that made it (timers come back
/// to it). Reused for the whole run: no allocation once it has grown.
#[derive(Clone, Debug)]
pub struct Outbox<E> {
    /// The requests, oldest first, with their scheme.
    pub items: Vec<(SchemeId, E)>,
    /// The scheme whose hook is running (set by the core).
    pub current: SchemeId,
}

impl<E> Outbox<E> {
    /// Empty outbox.
    pub fn new() -> Self {
        Outbox {
            items: Vec::new(),
            current: SchemeId(0),
        }
    }

    /// Ask the core to do `e` after the hook returns.
    #[inline]
    pub fn push(&mut self, e: E) {
        self.items.push((self.current, e));
    }

    /// Number of pending requests.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No pending requests?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<E> Default for Outbox<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Verdict of a hook that sees a packet before it is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Carry on (forward / admit).
    Pass,
    /// Drop it (counted as a buffer drop).
    Drop,
    /// The scheme consumed it (counted as consumed; its slot is freed by the core).
    Consumed,
}

/// Where a packet is in the switch: the ingress it came from and the egress queue it goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Ingress port.
    pub in_port: u16,
    /// Egress port.
    pub egress: u16,
    /// Egress queue.
    pub q: usize,
    /// Packet wire size, bytes.
    pub size: u64,
}

/// The narrow view of one switch a hook works on. Built once per switch event (in memory)
/// and passed to every hook by reference: a per-hook copy (a "reborrow" struct) cost 2.4 %
/// of all instructions on the DCQCN fat-tree benchmark.
pub struct SwitchCtx<'a> {
    /// Current time, picoseconds.
    pub now_ps: u64,
    /// Switch node id.
    pub node: u32,
    /// Tier: 1 = ToR, 2 = aggregation/spine, 3 = core.
    pub tier: u8,
    /// The switch's egress ports (queues, depths, pause bits, links).
    pub ports: &'a mut [EgressPort],
    /// Packet arena (read packets, allocate emitted ones).
    pub arena: &'a mut PacketArena,
    /// The switch's random stream.
    pub rng: &'a mut Rng,
    /// Static environment.
    pub env: &'a Env,
    /// Routing tables (read-only).
    pub routes: &'a RouteTable,
    /// Requests for the core, carried out after the hook returns.
    pub out: &'a mut Outbox<Emit>,
    /// Number of events executed so far (a global order for logs).
    pub event_no: u64,
}

pub use crate::switch::hook;

/// The switch half of a scheme. Every hook has a do-nothing default; [`Self::hooks`] says
/// which of the per-packet ones are implemented.
pub trait SwitchHooks {
    /// Per-packet hooks this instance implements ([`hook`] flags).
    fn hooks(&self) -> u16;
    /// Does this scheme own packets of this kind (its control packets)? They go to
    /// [`Self::on_control`] before the forwarding lookup.
    fn owns(&self, _pkt: &Packet) -> bool {
        false
    }
    /// A packet of a kind the scheme owns arrived on `in_port`: `Consumed` stops it here,
    /// `Pass` lets it be forwarded.
    fn on_control(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _in_port: u16) -> Verdict {
        Verdict::Pass
    }
    /// Pick the egress queue of packet `pkt` going out of `egress` (any kind that reaches the
    /// lookup: data, ACK, NACK, CNP and schemes' own packets; None = the default, its
    /// priority for data/ACK/NACK, the control class otherwise). Called before admission:
    /// a choice that needs bookkeeping commits it in [`Self::on_enqueue`], when the packet
    /// is known to be queued.
    fn select_queue(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _egress: u16) -> Option<usize> {
        None
    }
    /// After the forwarding decision, before buffer admission.
    fn on_ingress(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop) -> Verdict {
        Verdict::Pass
    }
    /// Buffer admission of a data-class packet, for a scheme that owns it (lossless PFC):
    /// `Some(admitted)`. `None` leaves the decision to the shared-buffer MMU. Requests pushed
    /// here are carried out once the packet's fate is settled: after it was queued and after
    /// the requests of the enqueue hooks (or of the admission-failure hooks) — so a scheme
    /// can decide at admission and act after the enqueue without a stage of its own there.
    fn admit(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop) -> Option<bool> {
        None
    }
    /// The buffer refused packet `pkt` (it is dropped after this hook).
    fn on_admission_failure(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop) {}
    /// Packet `pkt` was queued; `depth_before` is its queue's depth before it, bytes.
    fn on_enqueue(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop, _depth_before: u64) {}
    /// Packet `pkt` left its queue and is about to be transmitted (may mark it, emit packets).
    fn on_dequeue(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop) {}
    /// Packet `pkt` started transmission and its buffer was released. Its header may still
    /// be changed (marks): the next hop reads it only when it arrives. Hooks that only mark
    /// or account belong here rather than in [`Self::on_dequeue`]: one stage per packet
    /// visits every scheme that acts when it leaves.
    fn on_departure(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: u32, _at: &Hop) {}
    /// A timer requested with [`Emit::Timer`] fired.
    fn on_timer(&mut self, _ctx: &mut SwitchCtx<'_>, _port: u16, _which: u8, _arg: u8) {}
    /// Hint the CPU to load the state [`Self::admit`] will touch for (`in_port`, `q`).
    fn prefetch(&self, _in_port: u16, _q: usize) {}
    /// Hint the CPU to load the state [`Self::on_dequeue`] / [`Self::on_departure`] will
    /// touch for egress `port`.
    fn prefetch_egress(&self, _port: u16) {}
    /// The link of egress `port` went down ([`crate::sim::failure`]): no frame can come back
    /// over it, so state waiting for one ends here (PFC: the pauses it received end as if
    /// resumed). The port's pause bits are cleared after this hook, and it is served again.
    fn on_link_down(&mut self, _ctx: &mut SwitchCtx<'_>, _port: u16) {}
    /// The run ends at `ctx.now_ps`: close open intervals.
    fn finish(&mut self, _ctx: &mut SwitchCtx<'_>) {}
    /// The scheme's own consistency checks on its state (the simulator's invariant check
    /// calls them): the first violation, described.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    /// Bytes of queue `q` of egress `port` whose packets the scheme keeps outside the queue's
    /// packet slots (BFC's Ideal-FQ queue set: [`crate::scheme::bfc::fq`]), checked against
    /// the packets' sizes in `arena`; the simulator's invariant check adds them to what the
    /// slots hold.
    fn bytes_held_aside(
        &self,
        _port: usize,
        _q: usize,
        _arena: &PacketArena,
    ) -> Result<u64, String> {
        Ok(0)
    }
}

/// What a host-side scheme asks the NIC to do (carried out in order after the hook returns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostAction {
    /// Pause flow `flow`'s QP until `until_ps` (a newer pause replaces the end time).
    PauseQp {
        /// Flow index.
        flow: u32,
        /// End of the pause, picoseconds.
        until_ps: u64,
    },
    /// Re-run the NIC arbiter (e.g. a port pause was lifted).
    Kick,
    /// Set flow `flow`'s current sending rate (PB-FS), handed to its congestion controller
    /// as [`crate::cc::SchemeSignal::SetRate`].
    SetRate {
        /// Flow index.
        flow: u32,
        /// New rate, bits per second.
        rate_bps: u64,
    },
    /// Call this scheme's [`HostHooks::on_timer`] at `at_ps` with `(which, arg)`.
    Timer {
        /// Absolute time, picoseconds.
        at_ps: u64,
        /// Which of the scheme's timers.
        which: u8,
        /// Timer argument (e.g. a priority).
        arg: u8,
    },
}

/// The narrow view of one host NIC a hook works on.
pub struct HostCtx<'a> {
    /// Current time, picoseconds.
    pub now_ps: u64,
    /// Host node id.
    pub node: u32,
    /// Host index (position among hosts).
    pub host: usize,
    /// The NIC's port (pause bits, link).
    pub port: &'a mut TxPort,
    /// Requests for the NIC, carried out after the hook returns.
    pub out: &'a mut Outbox<HostAction>,
    /// Number of events executed so far (a global order for logs).
    pub event_no: u64,
}

/// What a host-side scheme learns from an ACK (after the CC processed it).
#[derive(Clone, Copy, Debug)]
pub struct AckEvent<'a> {
    /// Flow index.
    pub flow: u32,
    /// The ACK/NACK header.
    pub ack: &'a AckHdr,
    /// The flow's QP is paused until this time, picoseconds.
    pub pause_until_ps: u64,
    /// Every byte of the flow is acknowledged (it completes after this ACK).
    pub done: bool,
    /// The congestion controller changed the flow's rate on this ACK.
    pub rate_changed: bool,
    /// The controller's rate after this ACK, bits per second (a change between ACKs, by a
    /// controller timer such as DCQCN's, shows as a difference from the previous ACK's).
    pub rate_bps: u64,
}

/// The 5-tuple of a flow as the NIC arbiter hands it to [`HostHooks::may_send`] (the protocol
/// is always UDP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowKey {
    /// Flow index.
    pub flow: u32,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// UDP source port.
    pub sport: u16,
    /// UDP destination port.
    pub dport: u16,
}

/// The host half of a scheme: one instance for all hosts (per-host or per-flow state inside).
pub trait HostHooks {
    /// Does this scheme take part in ACK processing ([`Self::on_ack`])?
    fn wants_acks(&self) -> bool {
        false
    }
    /// Does this scheme own packets of this kind?
    fn owns(&self, _pkt: &Packet) -> bool {
        false
    }
    /// A packet of a kind the scheme owns reached the NIC (it is consumed afterwards).
    fn on_control(&mut self, _ctx: &mut HostCtx<'_>, _pkt: &Packet) {}
    /// Like [`Self::on_control`], with the packet's payload words if it carries any (BFC's
    /// Bloom filter; see [`crate::engine::arena::PacketArena::payload`]). The NIC calls this
    /// one; the default ignores the payload.
    fn on_frame(
        &mut self,
        ctx: &mut HostCtx<'_>,
        pkt: &Packet,
        _payload: Option<&[u64; crate::engine::arena::PAYLOAD_WORDS]>,
    ) {
        self.on_control(ctx, pkt)
    }
    /// Does this scheme veto individual flows in the NIC arbiter ([`Self::may_send`])?
    fn gates_sends(&self) -> bool {
        false
    }
    /// May flow `flow` (5-tuple `src`, `dst`, `sport`, `dport`) of host `host` send now? A
    /// flow refused here is skipped by the arbiter until the scheme asks for a
    /// [`HostAction::Kick`] (BFC: its flow matches the ToR's latest pause filter).
    fn may_send(&self, _host: usize, _flow: &FlowKey) -> bool {
        true
    }
    /// The sender of flow `ev.flow` processed an ACK.
    fn on_ack(&mut self, _ctx: &mut HostCtx<'_>, _ev: &AckEvent<'_>) {}
    /// Does this scheme see every data packet a NIC sends ([`Self::on_data_send`])?
    fn wants_sends(&self) -> bool {
        false
    }
    /// Flow `flow` (of `flow_bytes` payload bytes) is about to send a data packet: return
    /// the marks to set on it (PB-FS: PBT-triggering).
    fn on_data_send(&mut self, _ctx: &mut HostCtx<'_>, _flow: u32, _flow_bytes: u64) -> Marks {
        Marks::NONE
    }
    /// Does this scheme see every packet a NIC puts on its link ([`Self::on_transmit`])?
    fn wants_transmits(&self) -> bool {
        false
    }
    /// The NIC started transmitting `pkt` (any kind: data, ACK, NACK, CNP, …) on its link
    /// (CBFC: the packet consumes credits of its virtual lane).
    fn on_transmit(&mut self, _ctx: &mut HostCtx<'_>, _pkt: &Packet) {}
    /// A timer requested with [`HostAction::Timer`] fired.
    fn on_timer(&mut self, _ctx: &mut HostCtx<'_>, _which: u8, _arg: u8) {}
    /// The link of host `ctx.host` went down ([`crate::sim::failure`]): state waiting for a
    /// frame over it ends (PFC: the pauses its NIC received end as if resumed). The NIC's
    /// pause bits are cleared after this hook.
    fn on_link_down(&mut self, _ctx: &mut HostCtx<'_>) {}
    /// The run ends at `ctx.now_ps` (called once per host): close open intervals.
    fn finish(&mut self, _ctx: &mut HostCtx<'_>) {}

    // The host half of a receiver-pulled transport (the scheme whose `Scheme::transport` the
    // run uses, with `TransportParams::receiver_driven`: NDP). The NIC drives it where the
    // receiver answers and pulls itself; every other host half keeps the defaults.

    /// A full data packet (segment `seq`, `payload` bytes) of `flow` reached its receiver
    /// (host `ctx.host`), whose progress after it is `rx`: the reply the NIC sends back in the
    /// data packet's place (header, wire bytes).
    fn pulled_data(
        &mut self,
        _ctx: &mut HostCtx<'_>,
        _flow: u32,
        _rx: RxProgress,
        _seq: u64,
        _payload: u32,
    ) -> Option<(Header, u32)> {
        None
    }
    /// Which end of the transport control packet `pkt` is for; `None` = not the transport's.
    fn pulled_role(&self, _pkt: &Packet) -> Option<PulledRole> {
        None
    }
    /// A control packet `pkt` for the receiver ([`PulledRole::Receiver`]: NDP's trimmed
    /// header) reached it, whose flow's progress is `rx`: the reply the NIC sends back in its
    /// place (header, wire bytes).
    fn pulled_at_receiver(
        &mut self,
        _ctx: &mut HostCtx<'_>,
        _pkt: &Packet,
        _rx: RxProgress,
    ) -> Option<(Header, u32)> {
        None
    }
    /// A control packet `pkt` for the sender ([`PulledRole::Sender`]) reached it; `qp` is its
    /// QP (slot, sequence state) if still active.
    fn pulled_at_sender(&mut self, _pkt: &Packet, _qp: Option<(u32, &mut SendState)>) {}
    /// Host `ctx.host`'s pull pacer fires: the next pull, if one is due, as (flow, header,
    /// wire bytes); `progress` gives a flow's receiver progress. [`Self::pulled_rearm`]
    /// follows once the pull is sent.
    fn pulled_pacer(
        &mut self,
        _ctx: &mut HostCtx<'_>,
        _progress: &dyn Fn(u32) -> RxProgress,
    ) -> Option<(u32, Header, u32)> {
        None
    }
    /// After the pacer of host `ctx.host` fired: arm it again while pulls are pending.
    fn pulled_rearm(&mut self, _ctx: &mut HostCtx<'_>) {}
    /// A sender of the transport timed out.
    fn pulled_timeout(&mut self) {}

    // The per-QP state of a scheme's own transport (the scheme whose `Scheme::transport` the
    // run uses: NDP). The host half keeps one state per QP, keyed by the QP's slot `qp` (an
    // index the NIC reuses once the QP closed), and the NIC calls these where it calls a
    // built-in transport's `Transport` methods; the retransmission timeout is the run's
    // `TransportParams::rto_ps`. Every other host half keeps the defaults.

    /// QP slot `qp` opens for a `size_bytes` message in `mtu_bytes` segments.
    fn qp_open(&mut self, _qp: u32, _size_bytes: u64, _mtu_bytes: u64) {}
    /// QP slot `qp` closed (its message is acknowledged): free what only an open QP needs.
    fn qp_close(&mut self, _qp: u32) {}
    /// [`Transport::peek`](crate::host::transport::Transport::peek) of QP slot `qp`.
    fn qp_peek(&self, _qp: u32, _tx: &SendState, _new_allowed: bool) -> Option<Segment> {
        None
    }
    /// [`Transport::commit`](crate::host::transport::Transport::commit) of QP slot `qp`.
    fn qp_commit(&mut self, _qp: u32, _tx: &mut SendState, _seg: Segment) {}
    /// [`Transport::on_ack`](crate::host::transport::Transport::on_ack) of QP slot `qp`.
    fn qp_on_ack(
        &mut self,
        _qp: u32,
        _tx: &mut SendState,
        _ack: u64,
        _nack: bool,
        _sack: Option<(u64, u32)>,
    ) -> u64 {
        0
    }
    /// [`Transport::on_timeout`](crate::host::transport::Transport::on_timeout) of QP slot `qp`.
    fn qp_on_timeout(&mut self, _qp: u32, _tx: &mut SendState) {}
    /// Whether this half's state splits by host and by flow, so that a run split over
    /// threads ([`crate::sim::parallel`]) can keep one copy per partition and merge them
    /// ([`Self::absorb`]). A half that keeps per-QP state (by slot) or state shared by
    /// hosts says no, and such runs use one thread.
    fn splits_by_host(&self) -> bool {
        false
    }
    /// Take over, from `other` (this half in another partition of the same run), the state
    /// of the hosts (host indices) for which `theirs_host` holds and of the flows for which
    /// `theirs_flow` holds (those these hosts send), and add `other`'s counters.
    fn absorb(
        &mut self,
        _other: &Self,
        _theirs_host: &dyn Fn(usize) -> bool,
        _theirs_flow: &dyn Fn(u32) -> bool,
    ) where
        Self: Sized,
    {
    }
    /// [`Transport::on_data`](crate::host::transport::Transport::on_data) of the transport's receiver.
    fn qp_on_data(
        &self,
        _rx: &mut RecvState,
        _seq: u64,
        _len: u32,
        _now_ps: u64,
        _p: &TransportParams,
    ) -> Response {
        Response::None
    }
}

/// Which end of a receiver-pulled transport a control packet is for ([`HostHooks::pulled_role`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PulledRole {
    /// The flow's receiver (NDP: a trimmed header, NACKed and pulled again).
    Receiver,
    /// The flow's sender (NDP: an ACK, NACK, PULL or returned header).
    Sender,
}

/// What a receiver-pulled transport's host half needs to know of a flow's receiver (a
/// finished flow's receiver holds every byte: `expected` = `delivered_bytes` = `size_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxProgress {
    /// Message size, payload bytes.
    pub size_bytes: u64,
    /// Next in-order byte expected (the cumulative ACK).
    pub expected: u64,
    /// Payload bytes delivered so far.
    pub delivered_bytes: u64,
}

impl RxProgress {
    /// The progress of a `size_bytes` message whose receive state is `rx`, or of a finished
    /// flow (`None`: its receiver holds every byte).
    #[inline]
    pub fn of(size_bytes: u64, rx: Option<&crate::host::transport::RecvState>) -> RxProgress {
        let (expected, delivered_bytes) = rx.map_or((size_bytes, size_bytes), |r| {
            (r.expected, r.delivered_bytes)
        });
        RxProgress {
            size_bytes,
            expected,
            delivered_bytes,
        }
    }
}

/// A scheme's registry id: its position in the registry list ([`crate::registry`]), declared
/// in the scheme's folder ([`Scheme::ID`]; the registry checks, at compile time, that the ids
/// are 0, 1, 2, … in list order). Timer events and scheme packet tags carry it; sets of
/// schemes are bit sets over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SchemeId(pub u8);

impl SchemeId {
    /// Index in the registry list.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// This id's bit in a scheme set.
    #[inline(always)]
    pub const fn bit(self) -> u16 {
        1 << self.0
    }
}

/// What a scheme's halves are built from: the core settings (also reachable directly:
/// `setup.buffer` is `setup.core.buffer`), the scheme's own configuration, and what the
/// other schemes of the run declare ([`Peers`]).
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a, C> {
    /// The core network settings.
    pub core: &'a CoreConfig,
    /// The scheme's own configuration (its `[table]`; `()` for a scheme without one).
    pub own: &'a C,
    /// What the schemes of the run declare to each other.
    pub peers: Peers,
}

impl<C> std::ops::Deref for Setup<'_, C> {
    type Target = CoreConfig;
    fn deref(&self) -> &CoreConfig {
        self.core
    }
}

/// A per-switch aggregate of scheme halves that may hold scheme `T`'s (the registry's
/// `SwitchSchemes` holds every registered scheme's): lets a scheme's run-wide code (PFC's
/// deadlock detector) walk the switches without naming the aggregate.
pub trait Holds<T> {
    /// `T`'s switch half here, if it runs here.
    fn get(&self) -> Option<&T>;
}

/// A scheme, implemented by its switch-half type: its id, mark and configuration, how to
/// build both halves for a network and how to report its counters.
pub trait Scheme: SwitchHooks + Sized {
    /// The host half.
    type Host: HostHooks;
    /// The configuration: a [`SchemeConfig`] (the scheme's scenario table), or `()`.
    type Config: 'static;
    /// The registry id (the scheme's position in the registry list).
    const ID: SchemeId;
    /// The mark the scheme puts on data packets (one bit of [`Marks`], distinct from every
    /// other scheme's: the registry checks it at compile time); [`Marks::NONE`] = none.
    const MARK: Marks = Marks::NONE;
    /// Receivers echo the scheme's mark back to the sender (the registry's `ECHOED_MARKS`). An echoed mark
    /// means "a port on the path is paused, not congested": controllers in hold mode
    /// (`cc.tcd`, [`crate::cc::hold`]) hold their rate on it.
    const ECHO_MARK: bool = false;
    /// The switch half for a switch of `tier` with `ports`, or `None` where the scheme does not
    /// run (not configured, or not on this kind of switch).
    fn build_switch(
        cfg: &Setup<'_, Self::Config>,
        env: &Env,
        tier: u8,
        ports: &[EgressPort],
    ) -> Option<Self>;
    /// The host half for `hosts` hosts and `flows` flows, or `None` if it has none here
    /// (the default: a switch-only scheme).
    fn build_host(
        _cfg: &Setup<'_, Self::Config>,
        _env: &Env,
        _hosts: usize,
        _flows: usize,
    ) -> Option<Self::Host> {
        None
    }
    /// The scheme's `summary.json` section (name, object) from all its switch instances and
    /// its host half; `None` = no section.
    fn summary(
        switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, Self::Config>,
    ) -> Option<(&'static str, serde_json::Value)>;
    /// Warnings about the finished run for its user (stderr and the stdout summary's note),
    /// from all the scheme's switch instances and its host half, on topology `topo`.
    fn warnings(
        _switches: &[&Self],
        _host: Option<&Self::Host>,
        _cfg: &Setup<'_, Self::Config>,
        _topo: &crate::topology::TopologySpec,
    ) -> Vec<String> {
        Vec::new()
    }
    /// Why the scheme, as configured, cannot run with controller `cc` on topology `topo`
    /// (checked when the simulator is built), if it cannot.
    fn check_run(
        _cfg: &Setup<'_, Self::Config>,
        _cc: &crate::cc::CcConfig,
        _topo: &crate::topology::TopologySpec,
    ) -> Result<(), String> {
        Ok(())
    }
    /// The transport every QP runs when the scheme brings its own (NDP's receiver-pulled
    /// one) instead of the configured loss recovery; `None` = the configured one.
    fn transport(
        _cfg: &Setup<'_, Self::Config>,
        _env: &Env,
    ) -> Option<crate::host::transport::TransportParams> {
        None
    }
    /// Set up a switch's `ports` before the run (NDP: the weights of weighted round robin
    /// between its queues); returns the data scheduler every switch must use instead of the
    /// configured one, if the scheme needs one.
    fn prepare_ports(
        _cfg: &Setup<'_, Self::Config>,
        _ports: &mut [EgressPort],
    ) -> Option<crate::config::SchedulerKind> {
        None
    }
}

/// The host half of a scheme that has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHost;

impl HostHooks for NoHost {
    fn splits_by_host(&self) -> bool {
        true
    }
}
