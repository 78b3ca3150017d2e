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
//! [`SwitchSchemes`] holds a switch's scheme instances, one `Option` field per registered
//! scheme, and its per-stage methods call them in a fixed, statically dispatched order (no
//! `Box<dyn>`, no loop on the hot path); [`HostScheme`] is an enum over the host halves.
//! Adding a scheme = its folder and one line in the `registry!` list below: the switch half,
//! and, for a scheme with a scenario table, its config type ([`SchemeConfig`], in the
//! scheme's `config.rs`), from which the registry builds [`SchemeConfigs`] (held by
//! [`NetConfig::schemes`]), the scenario tables, validation, no-effect keys, memory tables and
//! `sfc hpcc` keys (see [`config`]). The order of that list is the order in which hooks run
//! when several schemes act at the same point.

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

use crate::config::NetConfig;
use crate::engine::arena::PacketArena;
use crate::engine::packet::{AckHdr, Marks, Packet, WireSizes};
use crate::link::TxPort;
use crate::rng::Rng;
use crate::switch::EgressPort;
use crate::topology::routing::RouteTable;
pub use config::{CoreDefaults, CoreView, Fields, HpccFields, Inert, Issues, SchemeConfig};

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
    /// MTU payload per data packet, bytes ([`crate::config::NetConfig::mtu_bytes`]).
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
            current: SchemeId::Ecn,
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

/// Bit flags naming the hooks a switch-scheme instance implements, so the core skips the
/// others without a call (see [`SwitchHooks::hooks`]).
pub mod hook {
    /// [`super::SwitchHooks::select_queue`].
    pub const SELECT_QUEUE: u16 = 1 << 0;
    /// [`super::SwitchHooks::on_ingress`].
    pub const INGRESS: u16 = 1 << 1;
    /// [`super::SwitchHooks::admit`].
    pub const ADMIT: u16 = 1 << 2;
    /// [`super::SwitchHooks::on_admission_failure`].
    pub const ADMISSION_FAILURE: u16 = 1 << 3;
    /// [`super::SwitchHooks::on_enqueue`].
    pub const ENQUEUE: u16 = 1 << 4;
    /// [`super::SwitchHooks::on_dequeue`].
    pub const DEQUEUE: u16 = 1 << 5;
    /// [`super::SwitchHooks::on_departure`].
    pub const DEPARTURE: u16 = 1 << 6;

    /// Number of per-packet hook flags (size of a per-hook table).
    pub const COUNT: usize = 8;
    const _: () = assert!(DEPARTURE.trailing_zeros() < COUNT as u32);

    /// Index of hook `flag` (a single bit) in a per-hook table; 0 for no hook.
    #[inline(always)]
    pub const fn slot(flag: u16) -> usize {
        if flag == 0 {
            0
        } else {
            flag.trailing_zeros() as usize
        }
    }
}

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
    /// The run ends at `ctx.now_ps`: close open intervals.
    fn finish(&mut self, _ctx: &mut SwitchCtx<'_>) {}
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
    /// The run ends at `ctx.now_ps` (called once per host): close open intervals.
    fn finish(&mut self, _ctx: &mut HostCtx<'_>) {}
}

/// A scheme, implemented by its switch-half type: how to build both halves for a network and
/// how to report its counters.
pub trait Scheme: SwitchHooks + Sized {
    /// The host half.
    type Host: HostHooks;
    /// The scheme puts a mark on data packets (its bit is [`SchemeId::mark`]).
    const MARKS_PACKETS: bool = false;
    /// Receivers echo the scheme's mark back to the sender ([`ECHOED_MARKS`]). An echoed mark
    /// means "a port on the path is paused, not congested": controllers in hold mode
    /// (`cc.tcd`, [`crate::cc::hold`]) hold their rate on it.
    const ECHO_MARK: bool = false;
    /// The switch half for a switch of `tier` with `ports`, or `None` where the scheme does not
    /// run (not configured, or not on this kind of switch).
    fn build_switch(cfg: &NetConfig, env: &Env, tier: u8, ports: &[EgressPort]) -> Option<Self>;
    /// The host half for `hosts` hosts and `flows` flows, or `None` if it has none here
    /// (the default: a switch-only scheme).
    fn build_host(
        _cfg: &NetConfig,
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
        cfg: &NetConfig,
    ) -> Option<(&'static str, serde_json::Value)>;
}

/// Run `f` in a function of its own (never inlined): the hooks of the schemes that few runs
/// use are called through it, so their code does not sit inside the switch's and the NIC's
/// per-packet functions, whose hot path must fit the instruction cache (the
/// pre-plug-in build's did: 0.15 M vs 16.6 M L1i misses on `hpcc-fat-ws30-hpcc --quick`,
/// `cachegrind`).
#[inline(never)]
fn outlined<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// A hook call, inlined (`inline`: ECN and PFC, which most runs use) or through
/// [`outlined`] (`outline`: every other scheme).
macro_rules! hook_call {
    (inline, $e:expr) => {
        $e
    };
    (outline, $e:expr) => {
        outlined(|| $e)
    };
}

/// Registry: generates [`SwitchSchemes`] (the switch halves of one switch, a field per
/// scheme), the [`HostScheme`] enum, [`SchemeId`], the per-stage dispatch, construction and
/// summaries. One line per scheme: `Variant = id, field => type, inline|outline;`.
///
/// Dispatch is static: each stage is a fixed sequence, in registry order, of "is this scheme
/// here and does it act at this stage? then call it" — no loop, no indirection; an `inline`
/// scheme's hook body inlines into the forwarding path, an `outline` one's is one call away
/// ([`outlined`]), so a switch pays only for the schemes it runs and the per-packet code stays
/// small.
macro_rules! schemes {
    ($($v:ident = $id:literal, $f:ident => $sw:ty, $mode:ident $(, $cfg:ty)?;)*) => {
        /// Which scheme (index of the registry; carried by timer events).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum SchemeId {
            $(
                #[doc = concat!("The `", stringify!($v), "` scheme.")]
                $v = $id,
            )*
        }

        /// The switch halves of the schemes running on one switch (`None` = not here).
        #[derive(Clone, Debug, Default)]
        pub struct SwitchSchemes {
            $(
                #[doc = concat!("See [`", stringify!($sw), "`].")]
                pub $f: Option<$sw>,
            )*
        }

        /// Host half of any registered scheme.
        #[derive(Clone, Debug)]
        pub enum HostScheme {
            $(
                #[doc = concat!("Host half of [`", stringify!($sw), "`].")]
                $v(<$sw as Scheme>::Host),
            )*
        }

        // Scheme sets are bit sets indexed by id.
        const _: () = assert!(
            [$($id),*].len() <= crate::switch::MAX_SCHEMES_PER_SWITCH,
            "more registered schemes than MAX_SCHEMES_PER_SWITCH"
        );
        const _: () = {
            let ids = [$($id),*];
            let mut i = 0;
            while i < ids.len() {
                assert!(ids[i] == i, "registry ids must be 0, 1, 2, … in order");
                i += 1;
            }
        };

        impl SchemeId {
            /// The id with registry index `v`, if there is one.
            pub fn from_u8(v: u8) -> Option<SchemeId> {
                match v {
                    $($id => Some(SchemeId::$v),)*
                    _ => None,
                }
            }

            /// This scheme's packet mark ([`Scheme::MARKS_PACKETS`]): the schemes that mark
            /// get bits 0, 1, … in registry order. A compile-time error for a scheme that
            /// declares no mark, or when more than 8 do.
            pub const fn mark(self) -> Marks {
                const USES: [bool; [$($id),*].len()] = [$(<$sw as Scheme>::MARKS_PACKETS),*];
                let id = self as usize;
                assert!(USES[id], "this scheme declares no packet mark");
                let mut bit = 0;
                let mut i = 0;
                while i < id {
                    if USES[i] {
                        bit += 1;
                    }
                    i += 1;
                }
                Marks::bit(bit)
            }
        }

        /// The marks receivers echo to senders ([`Scheme::ECHO_MARK`]): on the ACK (CNP mode
        /// `AckEcho`) or as the marked variant of a CNP.
        pub const ECHOED_MARKS: Marks = {
            let mut m = Marks::NONE;
            $(
                if <$sw as Scheme>::ECHO_MARK {
                    m = m.union(SchemeId::$v.mark());
                }
            )*
            m
        };

        impl HostScheme {
            /// Registry id.
            #[inline]
            pub fn id(&self) -> SchemeId {
                match self { $(HostScheme::$v(_) => SchemeId::$v,)* }
            }
        }

        macro_rules! dispatch_host {
            ($self_:ident, $s:ident => $e:expr) => {
                match $self_ { $(HostScheme::$v($s) => hook_call!($mode, $e),)* }
            };
        }

        impl SwitchSchemes {
            /// Build the switch halves for a switch of tier `tier` with `ports`.
            pub fn build(cfg: &NetConfig, env: &Env, tier: u8, ports: &[EgressPort]) -> Self {
                SwitchSchemes {
                    $($f: <$sw as Scheme>::build_switch(cfg, env, tier, ports),)*
                }
            }

            /// The per-packet hook flags ([`hook`]) of each scheme present, by id, in registry
            /// order.
            pub fn hooks(&self) -> Vec<(SchemeId, u16)> {
                let mut v = Vec::new();
                $(
                    if let Some(s) = &self.$f {
                        v.push((SchemeId::$v, s.hooks()));
                    }
                )*
                v
            }

            /// A packet of a kind some scheme owns arrived on `in_port`: the first owner (in
            /// registry order) handles it. `None` = nobody owns it.
            #[inline]
            pub fn on_control(
                &mut self,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                in_port: u16,
            ) -> Option<Verdict> {
                $(
                    if let Some(s) = &mut self.$f
                        && s.owns(ctx.arena.get(pkt))
                    {
                        ctx.out.current = SchemeId::$v;
                        return Some(hook_call!($mode, s.on_control(ctx, pkt, in_port)));
                    }
                )*
                None
            }

            /// [`SwitchHooks::select_queue`] of the schemes in `set`: the first choice.
            #[inline(always)]
            pub fn select_queue(
                &mut self,
                set: u16,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                egress: u16,
            ) -> Option<usize> {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            if let Some(q) = hook_call!($mode, s.select_queue(ctx, pkt, egress)) {
                                return Some(q);
                            }
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return None;
                        }
                    }
                )*
                None
            }

            /// [`SwitchHooks::on_ingress`] of the schemes in `set`: the first verdict that is
            /// not `Pass`.
            #[inline(always)]
            pub fn on_ingress(
                &mut self,
                set: u16,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                at: &Hop,
            ) -> Verdict {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            let v = hook_call!($mode, s.on_ingress(ctx, pkt, at));
                            if v != Verdict::Pass {
                                return v;
                            }
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return Verdict::Pass;
                        }
                    }
                )*
                Verdict::Pass
            }

            /// [`SwitchHooks::admit`] of the schemes in `set`: the first that owns admission.
            #[inline(always)]
            pub fn admit(
                &mut self,
                set: u16,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                at: &Hop,
            ) -> Option<bool> {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            if let Some(ok) = hook_call!($mode, s.admit(ctx, pkt, at)) {
                                return Some(ok);
                            }
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return None;
                        }
                    }
                )*
                None
            }

            /// [`SwitchHooks::on_admission_failure`] of the schemes in `set`.
            #[inline(always)]
            pub fn on_admission_failure(
                &mut self,
                set: u16,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                at: &Hop,
            ) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            hook_call!($mode, s.on_admission_failure(ctx, pkt, at));
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::on_enqueue`] of the schemes in `set`.
            #[inline(always)]
            pub fn on_enqueue(
                &mut self,
                set: u16,
                ctx: &mut SwitchCtx<'_>,
                pkt: u32,
                at: &Hop,
                depth_before: u64,
            ) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            hook_call!($mode, s.on_enqueue(ctx, pkt, at, depth_before));
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::on_dequeue`] of the schemes in `set`.
            #[inline(always)]
            pub fn on_dequeue(&mut self, set: u16, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            hook_call!($mode, s.on_dequeue(ctx, pkt, at));
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::on_departure`] of the schemes in `set`.
            #[inline(always)]
            pub fn on_departure(&mut self, set: u16, ctx: &mut SwitchCtx<'_>, pkt: u32, at: &Hop) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = SchemeId::$v;
                            hook_call!($mode, s.on_departure(ctx, pkt, at));
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::on_timer`] of scheme `id` (if it runs here).
            pub fn on_timer(
                &mut self,
                id: SchemeId,
                ctx: &mut SwitchCtx<'_>,
                port: u16,
                which: u8,
                arg: u8,
            ) {
                match id {
                    $(
                        SchemeId::$v => {
                            if let Some(s) = &mut self.$f {
                                ctx.out.current = SchemeId::$v;
                                s.on_timer(ctx, port, which, arg);
                            }
                        }
                    )*
                }
            }

            /// [`SwitchHooks::prefetch`] of the schemes in `set`.
            #[inline(always)]
            pub fn prefetch(&self, set: u16, in_port: u16, q: usize) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &self.$f {
                            s.prefetch(in_port, q);
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::prefetch_egress`] of the schemes in `set`.
            #[inline(always)]
            pub fn prefetch_egress(&self, set: u16, port: u16) {
                $(
                    if set & (1 << $id) != 0 {
                        if let Some(s) = &self.$f {
                            s.prefetch_egress(port);
                        }
                        if set >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// Hint the CPU to load the first two cache lines (the hot fields) of the schemes
            /// in `present` (a set of ids), ahead of the hooks that will run. Reads nothing:
            /// the set comes from the switch's hook table, the addresses from the layout.
            #[inline(always)]
            pub fn prefetch_state(&self, present: u16) {
                $(
                    if present & (1 << $id) != 0 {
                        let line = std::ptr::addr_of!(self.$f) as *const u8;
                        crate::engine::prefetch(line);
                        crate::engine::prefetch(line.wrapping_add(64));
                        if present >> $id >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::finish`] of every scheme present, in registry order.
            pub fn finish(&mut self, ctx: &mut SwitchCtx<'_>) {
                $(
                    if let Some(s) = &mut self.$f {
                        ctx.out.current = SchemeId::$v;
                        s.finish(ctx);
                    }
                )*
            }
        }

        /// Every scheme's configuration (a field per scheme with a table of its own, named
        /// as its table), held by [`NetConfig::schemes`].
        #[derive(Clone, Debug, Default, serde::Serialize)]
        pub struct SchemeConfigs {
            $($(
                #[doc = concat!("`[", stringify!($f), "]`: see [`", stringify!($cfg), "`].")]
                pub $f: $cfg,
            )?)*
            /// The tables whose reading failed ([`SchemeConfigs::resolve_tables`]): read part
            /// way, so their own checks ([`SchemeConfig::issues`], `rtt_issues`,
            /// `topology_issues`) are skipped — they would judge values the user did not give
            /// (BFC on with the default queue count beside a bad `bfc.mode`), and the table's
            /// error already stops the run.
            #[serde(skip)]
            pub failed: Vec<&'static str>,
        }

        /// The scenario's scheme tables as written, one per field of [`SchemeConfigs`].
        #[derive(Clone, Copy, Debug)]
        pub struct SchemeRaws<'a> {
            $($(
                #[doc = concat!("`[", stringify!($f), "]`.")]
                pub $f: &'a <$cfg as SchemeConfig>::Raw,
            )?)*
        }

        impl SchemeConfigs {
            /// The scenario tables of every scheme ([`SchemeConfig::TABLE`]), in registry order.
            pub const TABLES: &'static [&'static str] =
                &[$($(<$cfg as SchemeConfig>::TABLE,)?)*];

            /// Read every scheme's scenario table: the configurations (a table that failed is
            /// read up to its error and named in [`SchemeConfigs::failed`]) and each failed
            /// table's error, in registry order.
            pub fn resolve_tables(raws: &SchemeRaws<'_>, f: &impl Fields) -> (Self, Vec<String>) {
                let mut c = SchemeConfigs::default();
                let mut errs = Vec::new();
                $($(
                    if let Err(e) = <$cfg as SchemeConfig>::resolve(&mut c.$f, raws.$f, f) {
                        c.failed.push(<$cfg as SchemeConfig>::TABLE);
                        errs.push(e);
                    }
                )?)*
                (c, errs)
            }

            /// The core settings the schemes set where the scenario leaves them unset (a later
            /// scheme's value wins).
            pub fn core_defaults(&self, max_packet_bytes: u64) -> CoreDefaults {
                let mut d = CoreDefaults::default();
                $($(
                    let s = <$cfg as SchemeConfig>::core_defaults(&self.$f, max_packet_bytes);
                    d.queues_per_port = s.queues_per_port.or(d.queues_per_port);
                    d.drr_quantum_bytes = s.drr_quantum_bytes.or(d.drr_quantum_bytes);
                )?)*
                d
            }

            /// Every scheme's [`SchemeConfig::issues`], in registry order (not of a table that
            /// failed: [`SchemeConfigs::failed`]).
            pub fn issues(&self, core: &CoreView) -> Issues {
                let mut v = Vec::new();
                $($(
                    if !self.failed.contains(&<$cfg as SchemeConfig>::TABLE) {
                        v.extend(<$cfg as SchemeConfig>::issues(&self.$f, core, self));
                    }
                )?)*
                v
            }

            /// Every scheme's [`SchemeConfig::rtt_issues`], in registry order (not of a failed table).
            pub fn rtt_issues(&self, base_rtt_ps: u64, short: &dyn Fn(u64) -> String) -> Issues {
                let mut v = Vec::new();
                $($(
                    if !self.failed.contains(&<$cfg as SchemeConfig>::TABLE) {
                        v.extend(<$cfg as SchemeConfig>::rtt_issues(&self.$f, base_rtt_ps, short));
                    }
                )?)*
                v
            }

            /// Every scheme's [`SchemeConfig::topology_issues`], in registry order (not of a failed table).
            pub fn topology_issues(&self, topo: &crate::topology::TopologySpec) -> Issues {
                let mut v = Vec::new();
                $($(
                    if !self.failed.contains(&<$cfg as SchemeConfig>::TABLE) {
                        v.extend(<$cfg as SchemeConfig>::topology_issues(&self.$f, topo));
                    }
                )?)*
                v
            }

            /// Every scheme's [`SchemeConfig::inert`] keys, in registry order.
            pub fn inert(&self) -> Vec<Inert> {
                let mut v = Vec::new();
                $($( v.extend(<$cfg as SchemeConfig>::inert(&self.$f, self)); )?)*
                v
            }

            /// The error for PFC settings when a scheme runs the lossless buffer instead of
            /// PFC ([`SchemeConfig::replaces_pfc`]).
            pub fn replaces_pfc(&self) -> Option<&'static str> {
                $($(
                    if let Some(e) = <$cfg as SchemeConfig>::replaces_pfc(&self.$f) {
                        return Some(e);
                    }
                )?)*
                None
            }

            /// Every scheme's per-switch tables ([`SchemeConfig::tables`]), in registry order.
            pub fn tables(&self) -> Vec<(&'static str, u64)> {
                let mut v = Vec::new();
                $($( v.extend(<$cfg as SchemeConfig>::tables(&self.$f)); )?)*
                v
            }

            /// Does any scheme need the flows as a list ([`SchemeConfig::needs_flow_list`])?
            pub fn needs_flow_list(&self) -> bool {
                false $($( || <$cfg as SchemeConfig>::needs_flow_list(&self.$f) )?)*
            }

            /// Is `key` an `sfc hpcc` key of some scheme ([`SchemeConfig::HPCC_KEYS`])?
            pub fn is_hpcc_key(key: &str) -> bool {
                false $($( || <$cfg as SchemeConfig>::HPCC_KEYS.contains(&key) )?)*
            }

            /// Read every scheme's `sfc hpcc` keys, in registry order.
            pub fn resolve_hpcc(&mut self, c: &impl HpccFields) -> Result<(), String> {
                $($( <$cfg as SchemeConfig>::resolve_hpcc(&mut self.$f, c)?; )?)*
                Ok(())
            }

            /// Every scheme's `sfc hpcc` keys with no effect ([`SchemeConfig::hpcc_inert`]).
            pub fn hpcc_inert(&self) -> Vec<(&'static [&'static str], &'static str)> {
                let mut v = Vec::new();
                $($( v.extend(<$cfg as SchemeConfig>::hpcc_inert(&self.$f)); )?)*
                v
            }

            /// The `sfc hpcc` key for scenario key `key` ([`SchemeConfig::hpcc_key`] of the
            /// scheme whose table it is in; `key` itself otherwise).
            pub fn hpcc_key(key: &'static str) -> &'static str {
                let table = key.split('.').next().unwrap_or("");
                $($(
                    if table == <$cfg as SchemeConfig>::TABLE {
                        return <$cfg as SchemeConfig>::hpcc_key(key);
                    }
                )?)*
                key
            }
        }

        /// Build the host halves, in registry order.
        pub fn build_host_schemes(
            cfg: &NetConfig,
            env: &Env,
            hosts: usize,
            flows: usize,
        ) -> Vec<HostScheme> {
            let mut v = Vec::new();
            $(
                if let Some(s) = <$sw as Scheme>::build_host(cfg, env, hosts, flows) {
                    v.push(HostScheme::$v(s));
                }
            )*
            v
        }

        /// Every scheme's `summary.json` section, in registry order, from the switch halves
        /// of every switch and the host halves.
        pub fn summaries(
            switches: &[&SwitchSchemes],
            hosts: &[HostScheme],
            cfg: &NetConfig,
        ) -> Vec<(&'static str, serde_json::Value)> {
            let mut out = Vec::new();
            $(
                let parts: Vec<&$sw> = switches.iter().filter_map(|s| s.$f.as_ref()).collect();
                let host = hosts.iter().find_map(|h| match h {
                    HostScheme::$v(x) => Some(x),
                    #[allow(unreachable_patterns)]
                    _ => None,
                });
                if let Some(kv) = <$sw as Scheme>::summary(&parts, host, cfg) {
                    out.push(kv);
                }
            )*
            out
        }
    };
}

/// The registry: one line per scheme, `Variant = id, field => switch-half type,
/// inline|outline[, config type];` (the config type implements [`SchemeConfig`] and gives
/// the scheme its `[field]` table). Hooks of several schemes at the same point run in this
/// order. `registry!(m)` calls the macro `m` with the list: `schemes!` here, and the
/// scenario reader, which builds its tables from it.
macro_rules! registry {
    ($m:ident) => {
        $m! {
            Ecn = 0, ecn => crate::scheme::ecn::EcnSwitch, inline;
            Sfc = 1, sfc => crate::scheme::sfc::switch::SfcSwitch, outline,
                crate::scheme::sfc::SfcConfig;
            OnRamp = 2, onramp => crate::scheme::onramp::OnRampSwitch, outline,
                crate::scheme::onramp::OnRampConfig;
            Pfc = 3, pfc => crate::scheme::pfc::switch::PfcSwitch, inline;
            Pbfs = 4, pbfs => crate::scheme::pbfs::switch::PbfsSwitch, outline,
                crate::scheme::pbfs::PbfsConfig;
            Tcd = 5, tcd => crate::scheme::tcd::switch::TcdSwitch, outline,
                crate::scheme::tcd::TcdConfig;
            Ndp = 6, ndp => crate::scheme::ndp::switch::NdpSwitch, outline,
                crate::scheme::ndp::NdpConfig;
            Bfc = 7, bfc => crate::scheme::bfc::switch::BfcSwitch, outline,
                crate::scheme::bfc::BfcConfig;
            Cbfc = 8, cbfc => crate::scheme::cbfc::switch::CbfcSwitch, outline,
                crate::scheme::cbfc::CbfcConfig;
            Red = 9, red => crate::scheme::red::RedSwitch, outline, crate::scheme::red::RedConfig;
        }
    };
}
pub(crate) use registry;

registry!(schemes);

impl HostHooks for HostScheme {
    #[inline]
    fn wants_acks(&self) -> bool {
        dispatch_host!(self, s => s.wants_acks())
    }
    #[inline]
    fn owns(&self, pkt: &Packet) -> bool {
        dispatch_host!(self, s => s.owns(pkt))
    }
    #[inline]
    fn on_control(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        dispatch_host!(self, s => s.on_control(ctx, pkt))
    }
    #[inline]
    fn on_frame(
        &mut self,
        ctx: &mut HostCtx<'_>,
        pkt: &Packet,
        payload: Option<&[u64; crate::engine::arena::PAYLOAD_WORDS]>,
    ) {
        dispatch_host!(self, s => s.on_frame(ctx, pkt, payload))
    }
    #[inline]
    fn gates_sends(&self) -> bool {
        dispatch_host!(self, s => s.gates_sends())
    }
    #[inline]
    fn may_send(&self, host: usize, flow: &FlowKey) -> bool {
        dispatch_host!(self, s => s.may_send(host, flow))
    }
    #[inline]
    fn on_ack(&mut self, ctx: &mut HostCtx<'_>, ev: &AckEvent<'_>) {
        dispatch_host!(self, s => s.on_ack(ctx, ev))
    }
    #[inline]
    fn wants_sends(&self) -> bool {
        dispatch_host!(self, s => s.wants_sends())
    }
    #[inline]
    fn on_data_send(&mut self, ctx: &mut HostCtx<'_>, flow: u32, flow_bytes: u64) -> Marks {
        dispatch_host!(self, s => s.on_data_send(ctx, flow, flow_bytes))
    }
    #[inline]
    fn wants_transmits(&self) -> bool {
        dispatch_host!(self, s => s.wants_transmits())
    }
    #[inline]
    fn on_transmit(&mut self, ctx: &mut HostCtx<'_>, pkt: &Packet) {
        dispatch_host!(self, s => s.on_transmit(ctx, pkt))
    }
    #[inline]
    fn on_timer(&mut self, ctx: &mut HostCtx<'_>, which: u8, arg: u8) {
        dispatch_host!(self, s => s.on_timer(ctx, which, arg))
    }
    fn finish(&mut self, ctx: &mut HostCtx<'_>) {
        dispatch_host!(self, s => s.finish(ctx))
    }
}

/// The host half of a scheme that has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHost;

impl HostHooks for NoHost {}
