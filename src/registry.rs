//! The scheme registry: the list of the schemes a run can use, and what is built from it.
//!
//! A scheme joins the run with one line in the `registry!` list (and `pub mod` in
//! [`crate::scheme`]). From the list the registry generates, statically (no `Box<dyn>`, no loop
//! on the hot path):
//! - [`SwitchSchemes`], one switch's scheme instances (a field per scheme, `None` = not here),
//!   and its per-stage dispatch in registry order; [`Switch`] is a switch with them;
//! - [`HostScheme`], an enum over the host halves, and their construction;
//! - [`SchemeConfigs`], the schemes' configurations (a field per scheme with a table), held by
//!   the run's full network configuration [`NetConfig`] (the core settings plus these), with
//!   the loops the front ends call: scenario tables, validation, no-effect keys, memory tables,
//!   `sfc hpcc` keys, and [`Peers`], what the schemes declare to each other;
//! - the packet marks receivers echo ([`ECHOED_MARKS`]) and the compile-time checks that ids
//!   follow the list and marks are distinct.
//!
//! This module sits above the schemes and below the simulator: the schemes import only the
//! scheme interface ([`crate::scheme`]) and the core configuration ([`crate::config`]).

use crate::config::{ConfigIssue, CoreConfig, NetField};
use crate::engine::packet::{Header, Marks, Packet};
use crate::host::transport::{RecvState, Response, Segment, SendState, TransportParams};
use crate::scheme::{
    AckEvent, CoreDefaults, CoreView, Declares, Env, Fields, FlowKey, Hop, HostCtx, HostHooks,
    HpccFields, Inert, Issues, Peers, PulledRole, RxProgress, Scheme, SchemeConfig, SchemeId,
    Setup, SwitchCtx, SwitchHooks, Verdict,
};
use crate::switch::EgressPort;

/// A switch with the registered schemes' switch halves.
pub type Switch = crate::switch::Switch<SwitchSchemes>;

/// A scheme's own configuration in [`SchemeConfigs`]: its field, or `()` for a scheme without
/// a table.
macro_rules! own {
    ($c:expr, $f:ident) => {
        &()
    };
    ($c:expr, $f:ident, $cfg:ty) => {
        &$c.$f
    };
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
    ($($v:ident, $f:ident => $sw:ty, $mode:ident $(, $cfg:ty)?;)*) => {
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
            [$(<$sw as Scheme>::ID),*].len() <= crate::switch::MAX_SCHEMES_PER_SWITCH,
            "more registered schemes than MAX_SCHEMES_PER_SWITCH"
        );
        const _: () = {
            let ids = [$(<$sw as Scheme>::ID),*];
            let mut i = 0;
            while i < ids.len() {
                assert!(ids[i].index() == i, "scheme ids must be 0, 1, 2, … in registry order");
                i += 1;
            }
        };
        // Packet marks are distinct bits.
        const _: () = {
            let marks = [$(<$sw as Scheme>::MARK),*];
            let mut seen = Marks::NONE;
            let mut i = 0;
            while i < marks.len() {
                assert!(
                    seen.0 & marks[i].0 == 0,
                    "two schemes declare the same packet mark"
                );
                seen = seen.union(marks[i]);
                i += 1;
            }
        };

        /// The marks receivers echo back to the sender: the union of the marks of the schemes
        /// with [`Scheme::ECHO_MARK`].
        pub const ECHOED_MARKS: Marks = {
            let mut m = Marks::NONE;
            $(
                if <$sw as Scheme>::ECHO_MARK {
                    m = m.union(<$sw as Scheme>::MARK);
                }
            )*
            m
        };

        /// The id with registry index `v`, if there is one.
        pub fn scheme_id(v: u8) -> Option<SchemeId> {
            [$(<$sw as Scheme>::ID),*].get(v as usize).copied()
        }

        /// The name of scheme `id` as its scenario table and `summary.json` section spell it
        /// (`sfc`, `pfc`, …).
        pub fn scheme_table_name(id: SchemeId) -> &'static str {
            [$(stringify!($f)),*][id.index()]
        }

        impl HostScheme {
            /// Registry id.
            #[inline]
            pub fn id(&self) -> SchemeId {
                match self { $(HostScheme::$v(_) => <$sw as Scheme>::ID,)* }
            }

            /// [`HostHooks::splits_by_host`] of this half.
            pub fn splits_by_host(&self) -> bool {
                match self { $(HostScheme::$v(s) => s.splits_by_host(),)* }
            }

            /// [`HostHooks::absorb`] from `other` (the same scheme's half; another scheme's
            /// is ignored).
            pub fn absorb(
                &mut self,
                other: &HostScheme,
                theirs_host: &dyn Fn(usize) -> bool,
                theirs_flow: &dyn Fn(u32) -> bool,
            ) {
                #[allow(unreachable_patterns)]
                match (self, other) {
                    $((HostScheme::$v(a), HostScheme::$v(b)) => a.absorb(b, theirs_host, theirs_flow),)*
                    _ => {}
                }
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
                let peers = cfg.peers();
                SwitchSchemes {
                    $($f: <$sw as Scheme>::build_switch(
                        &Setup { core: &cfg.core, own: own!(cfg.schemes, $f $(, $cfg)?), peers },
                        env,
                        tier,
                        ports,
                    ),)*
                }
            }

            /// The per-packet hook flags ([`crate::scheme::hook`]) of each scheme present, by id, in registry
            /// order.
            pub fn hooks(&self) -> Vec<(SchemeId, u16)> {
                let mut v = Vec::new();
                $(
                    if let Some(s) = &self.$f {
                        v.push((<$sw as Scheme>::ID, s.hooks()));
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
                        ctx.out.current = <$sw as Scheme>::ID;
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            if let Some(q) = hook_call!($mode, s.select_queue(ctx, pkt, egress)) {
                                return Some(q);
                            }
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            let v = hook_call!($mode, s.on_ingress(ctx, pkt, at));
                            if v != Verdict::Pass {
                                return v;
                            }
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            if let Some(ok) = hook_call!($mode, s.admit(ctx, pkt, at)) {
                                return Some(ok);
                            }
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            hook_call!($mode, s.on_admission_failure(ctx, pkt, at));
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            hook_call!($mode, s.on_enqueue(ctx, pkt, at, depth_before));
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            hook_call!($mode, s.on_dequeue(ctx, pkt, at));
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = <$sw as Scheme>::ID;
                            hook_call!($mode, s.on_departure(ctx, pkt, at));
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                $(
                    if id == <$sw as Scheme>::ID {
                        if let Some(s) = &mut self.$f {
                            ctx.out.current = id;
                            s.on_timer(ctx, port, which, arg);
                        }
                        return;
                    }
                )*
            }

            /// [`SwitchHooks::prefetch`] of the schemes in `set`.
            #[inline(always)]
            pub fn prefetch(&self, set: u16, in_port: u16, q: usize) {
                $(
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &self.$f {
                            s.prefetch(in_port, q);
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if set & <$sw as Scheme>::ID.bit() != 0 {
                        if let Some(s) = &self.$f {
                            s.prefetch_egress(port);
                        }
                        if set >> <$sw as Scheme>::ID.0 >> 1 == 0 {
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
                    if present & <$sw as Scheme>::ID.bit() != 0 {
                        let line = std::ptr::addr_of!(self.$f) as *const u8;
                        crate::engine::prefetch(line);
                        crate::engine::prefetch(line.wrapping_add(64));
                        if present >> <$sw as Scheme>::ID.0 >> 1 == 0 {
                            // No later scheme in the set.
                            return;
                        }
                    }
                )*
            }

            /// [`SwitchHooks::check`] of every scheme present, in registry order: the first
            /// violation.
            pub fn check(&self) -> Result<(), String> {
                $(
                    if let Some(s) = &self.$f {
                        s.check()?;
                    }
                )*
                Ok(())
            }

            /// [`SwitchHooks::bytes_held_aside`] summed over the schemes present.
            pub fn bytes_held_aside(
                &self,
                port: usize,
                q: usize,
                arena: &crate::engine::arena::PacketArena,
            ) -> Result<u64, String> {
                let mut b = 0;
                $(
                    if let Some(s) = &self.$f {
                        b += s.bytes_held_aside(port, q, arena)?;
                    }
                )*
                Ok(b)
            }

            /// [`SwitchHooks::on_link_down`] of every scheme present, in registry order.
            pub fn on_link_down(&mut self, ctx: &mut SwitchCtx<'_>, port: u16) {
                $(
                    if let Some(s) = &mut self.$f {
                        ctx.out.current = <$sw as Scheme>::ID;
                        s.on_link_down(ctx, port);
                    }
                )*
            }

            /// [`SwitchHooks::finish`] of every scheme present, in registry order.
            pub fn finish(&mut self, ctx: &mut SwitchCtx<'_>) {
                $(
                    if let Some(s) = &mut self.$f {
                        ctx.out.current = <$sw as Scheme>::ID;
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

            /// Set one key of a scheme's table, `table.key=value` with the value written as in a
            /// scenario (`pbfs.enabled=true`, `sfc.qth="20KB"`), over the configuration as it
            /// is: what benchmarks and front ends without a scenario (`sfc hpcc`'s runs) use to
            /// turn a scheme on. Errors name the assignment.
            pub fn set(&mut self, assignment: &str) -> Result<(), String> {
                let bad = |m: &dyn std::fmt::Display| format!("`{assignment}`: {m}");
                let (key, value) = assignment
                    .split_once('=')
                    .ok_or_else(|| bad(&"expected table.key=value"))?;
                let (table, field) = key
                    .trim()
                    .split_once('.')
                    .ok_or_else(|| bad(&"expected table.key=value"))?;
                let body = format!("{} = {}", field.trim(), value.trim());
                let f = Assignment(assignment);
                $($(
                    if table == <$cfg as SchemeConfig>::TABLE {
                        let raw: <$cfg as SchemeConfig>::Raw =
                            toml::from_str(&body).map_err(|e| bad(&e.message()))?;
                        return <$cfg as SchemeConfig>::resolve(&mut self.$f, &raw, &f);
                    }
                )?)*
                Err(bad(&format_args!("no scheme has a table `[{table}]`")))
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
                let peers = self.peers();
                $($(
                    if !self.failed.contains(&<$cfg as SchemeConfig>::TABLE) {
                        v.extend(<$cfg as SchemeConfig>::issues(&self.$f, core, &peers));
                    }
                )?)*
                v.extend(self.conflicts());
                v
            }

            /// What every scheme declares ([`SchemeConfig::declares`]), in registry order.
            pub fn declared(&self) -> Vec<Declares> {
                vec![$($( <$cfg as SchemeConfig>::declares(&self.$f), )?)*]
            }

            /// The schemes' declarations folded ([`Peers`]).
            pub fn peers(&self) -> Peers {
                let mut p = Peers::default();
                $($( p.add(&<$cfg as SchemeConfig>::declares(&self.$f)); )?)*
                p
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
            pub fn inert(&self, core: &crate::scheme::KeyView) -> Vec<Inert> {
                let mut v = Vec::new();
                let peers = self.peers();
                $($( v.extend(<$cfg as SchemeConfig>::inert(&self.$f, core, &peers)); )?)*
                v
            }

            /// Every scheme's [`SchemeConfig::refused`] keys, in registry order.
            pub fn refused(&self) -> Vec<Inert> {
                let mut v = Vec::new();
                let peers = self.peers();
                $($( v.extend(<$cfg as SchemeConfig>::refused(&self.$f, &peers)); )?)*
                v
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

            /// Every scheme's [`SchemeConfig::resolve_hpcc_topology`], in registry order.
            pub fn resolve_hpcc_topology(&mut self, topo: &crate::topology::TopologySpec) {
                $($( <$cfg as SchemeConfig>::resolve_hpcc_topology(&mut self.$f, topo); )?)*
            }

            /// Every scheme's `sfc hpcc` keys with no effect ([`SchemeConfig::hpcc_inert`]).
            pub fn hpcc_inert(
                &self,
                core: &crate::scheme::KeyView,
            ) -> Vec<(&'static [&'static str], &'static str)> {
                let mut v = Vec::new();
                $($( v.extend(<$cfg as SchemeConfig>::hpcc_inert(&self.$f, core)); )?)*
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

        impl NetConfig {
            /// Every scheme's [`Scheme::check_run`], in registry order: the first refusal.
            pub fn check_run(
                &self,
                cc: &crate::cc::CcConfig,
                topo: &crate::topology::TopologySpec,
            ) -> Result<(), String> {
                let peers = self.peers();
                $(
                    <$sw as Scheme>::check_run(
                        &Setup { core: &self.core, own: own!(self.schemes, $f $(, $cfg)?), peers },
                        cc,
                        topo,
                    )?;
                )*
                Ok(())
            }

            /// The transport a scheme brings ([`Scheme::transport`]; the first in registry
            /// order), with that scheme's id, if any.
            pub fn scheme_transport(
                &self,
                env: &Env,
            ) -> Option<(SchemeId, crate::host::transport::TransportParams)> {
                let peers = self.peers();
                $(
                    let setup = Setup { core: &self.core, own: own!(self.schemes, $f $(, $cfg)?), peers };
                    if let Some(t) = <$sw as Scheme>::transport(&setup, env) {
                        return Some((<$sw as Scheme>::ID, t));
                    }
                )*
                None
            }

            /// Every scheme's [`Scheme::prepare_ports`] on every switch, in registry order;
            /// the data scheduler the first scheme that needs one asks for, if any.
            pub fn prepare_ports(
                &self,
                switches: &mut [Switch],
            ) -> Option<crate::config::SchedulerKind> {
                let peers = self.peers();
                let mut sched = None;
                $(
                    let setup = Setup { core: &self.core, own: own!(self.schemes, $f $(, $cfg)?), peers };
                    for sw in switches.iter_mut() {
                        let s = <$sw as Scheme>::prepare_ports(&setup, &mut sw.ports);
                        sched = sched.or(s);
                    }
                )*
                sched
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
            let peers = cfg.peers();
            $(
                let setup = Setup { core: &cfg.core, own: own!(cfg.schemes, $f $(, $cfg)?), peers };
                if let Some(s) = <$sw as Scheme>::build_host(&setup, env, hosts, flows) {
                    v.push(HostScheme::$v(s));
                }
            )*
            v
        }

        /// Every scheme's warnings about the finished run ([`Scheme::warnings`]), in registry
        /// order.
        pub fn warnings(
            switches: &[&SwitchSchemes],
            hosts: &[HostScheme],
            cfg: &NetConfig,
            topo: &crate::topology::TopologySpec,
        ) -> Vec<String> {
            let mut out = Vec::new();
            let peers = cfg.peers();
            $(
                let setup = Setup { core: &cfg.core, own: own!(cfg.schemes, $f $(, $cfg)?), peers };
                let parts: Vec<&$sw> = switches.iter().filter_map(|s| s.$f.as_ref()).collect();
                let host = hosts.iter().find_map(|h| match h {
                    HostScheme::$v(x) => Some(x),
                    #[allow(unreachable_patterns)]
                    _ => None,
                });
                out.extend(<$sw as Scheme>::warnings(&parts, host, &setup, topo));
            )*
            out
        }

        /// Every scheme's `summary.json` section, in registry order, from the switch halves
        /// of every switch and the host halves.
        pub fn summaries(
            switches: &[&SwitchSchemes],
            hosts: &[HostScheme],
            cfg: &NetConfig,
        ) -> Vec<(&'static str, serde_json::Value)> {
            let mut out = Vec::new();
            let peers = cfg.peers();
            $(
                let setup = Setup { core: &cfg.core, own: own!(cfg.schemes, $f $(, $cfg)?), peers };
                let parts: Vec<&$sw> = switches.iter().filter_map(|s| s.$f.as_ref()).collect();
                let host = hosts.iter().find_map(|h| match h {
                    HostScheme::$v(x) => Some(x),
                    #[allow(unreachable_patterns)]
                    _ => None,
                });
                if let Some(kv) = <$sw as Scheme>::summary(&parts, host, &setup) {
                    out.push(kv);
                }
            )*
            out
        }
    };
}

/// The reader of one `table.key=value` assignment ([`SchemeConfigs::set`]): errors name it.
struct Assignment<'a>(&'a str);

impl Fields for Assignment<'_> {
    fn err(
        &self,
        _v: &crate::scheme::config::Value,
        key: &str,
        msg: impl std::fmt::Display,
    ) -> String {
        format!("`{}`: {key}: {msg}", self.0)
    }
    fn err_key(&self, key: &str, msg: impl std::fmt::Display) -> String {
        format!("`{}`: {key}: {msg}", self.0)
    }
}

/// The registry: one line per scheme, `Variant, field => switch-half type,
/// inline|outline[, config type];` (the config type is the scheme's [`Scheme::Config`], a
/// [`SchemeConfig`] that gives the scheme its `[field]` table; none for `Config = ()`). Hooks of several schemes at the same point run in this
/// order. `registry!(m)` calls the macro `m` with the list: `schemes!` here, and the
/// scenario reader, which builds its tables from it.
macro_rules! registry {
    ($m:ident) => {
        $m! {
            Ecn, ecn => crate::scheme::ecn::EcnSwitch, inline;
            Sfc, sfc => crate::scheme::sfc::switch::SfcSwitch, outline,
                crate::scheme::sfc::SfcConfig;
            OnRamp, onramp => crate::scheme::onramp::OnRampSwitch, outline,
                crate::scheme::onramp::OnRampConfig;
            Pfc, pfc => crate::scheme::pfc::switch::PfcSwitch, inline, crate::scheme::pfc::PfcConfig;
            Pbfs, pbfs => crate::scheme::pbfs::switch::PbfsSwitch, outline,
                crate::scheme::pbfs::PbfsConfig;
            Tcd, tcd => crate::scheme::tcd::switch::TcdSwitch, outline,
                crate::scheme::tcd::TcdConfig;
            Ndp, ndp => crate::scheme::ndp::switch::NdpSwitch, outline,
                crate::scheme::ndp::NdpConfig;
            Bfc, bfc => crate::scheme::bfc::switch::BfcSwitch, outline,
                crate::scheme::bfc::BfcConfig;
            Cbfc, cbfc => crate::scheme::cbfc::switch::CbfcSwitch, outline,
                crate::scheme::cbfc::CbfcConfig;
            Red, red => crate::scheme::red::RedSwitch, outline, crate::scheme::red::RedConfig;
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
    fn on_link_down(&mut self, ctx: &mut HostCtx<'_>) {
        dispatch_host!(self, s => s.on_link_down(ctx))
    }
    fn finish(&mut self, ctx: &mut HostCtx<'_>) {
        dispatch_host!(self, s => s.finish(ctx))
    }
    fn pulled_data(
        &mut self,
        ctx: &mut HostCtx<'_>,
        flow: u32,
        rx: RxProgress,
        seq: u64,
        payload: u32,
    ) -> Option<(Header, u32)> {
        dispatch_host!(self, s => s.pulled_data(ctx, flow, rx, seq, payload))
    }
    fn pulled_role(&self, pkt: &Packet) -> Option<PulledRole> {
        dispatch_host!(self, s => s.pulled_role(pkt))
    }
    fn pulled_at_receiver(
        &mut self,
        ctx: &mut HostCtx<'_>,
        pkt: &Packet,
        rx: RxProgress,
    ) -> Option<(Header, u32)> {
        dispatch_host!(self, s => s.pulled_at_receiver(ctx, pkt, rx))
    }
    fn pulled_at_sender(&mut self, pkt: &Packet, qp: Option<(u32, &mut SendState)>) {
        dispatch_host!(self, s => s.pulled_at_sender(pkt, qp))
    }
    fn pulled_pacer(
        &mut self,
        ctx: &mut HostCtx<'_>,
        progress: &dyn Fn(u32) -> RxProgress,
    ) -> Option<(u32, Header, u32)> {
        dispatch_host!(self, s => s.pulled_pacer(ctx, progress))
    }
    fn pulled_rearm(&mut self, ctx: &mut HostCtx<'_>) {
        dispatch_host!(self, s => s.pulled_rearm(ctx))
    }
    fn pulled_timeout(&mut self) {
        dispatch_host!(self, s => s.pulled_timeout())
    }
    fn qp_open(&mut self, qp: u32, size_bytes: u64, mtu_bytes: u64) {
        dispatch_host!(self, s => s.qp_open(qp, size_bytes, mtu_bytes))
    }
    fn qp_close(&mut self, qp: u32) {
        dispatch_host!(self, s => s.qp_close(qp))
    }
    fn qp_peek(&self, qp: u32, tx: &SendState, new_allowed: bool) -> Option<Segment> {
        dispatch_host!(self, s => s.qp_peek(qp, tx, new_allowed))
    }
    fn qp_commit(&mut self, qp: u32, tx: &mut SendState, seg: Segment) {
        dispatch_host!(self, s => s.qp_commit(qp, tx, seg))
    }
    fn qp_on_ack(
        &mut self,
        qp: u32,
        tx: &mut SendState,
        ack: u64,
        nack: bool,
        sack: Option<(u64, u32)>,
    ) -> u64 {
        dispatch_host!(self, s => s.qp_on_ack(qp, tx, ack, nack, sack))
    }
    fn qp_on_timeout(&mut self, qp: u32, tx: &mut SendState) {
        dispatch_host!(self, s => s.qp_on_timeout(qp, tx))
    }
    fn qp_on_data(
        &self,
        rx: &mut RecvState,
        seq: u64,
        len: u32,
        now_ps: u64,
        p: &TransportParams,
    ) -> Response {
        dispatch_host!(self, s => s.qp_on_data(rx, seq, len, now_ps, p))
    }
}

impl SchemeConfigs {
    /// Two schemes that are on and claim the same fabric resource ([`Declares::exclusive`]):
    /// one issue per pair, on the key that turned the later one on.
    fn conflicts(&self) -> Issues {
        let mut v = Vec::new();
        let on: Vec<Declares> = self
            .declared()
            .into_iter()
            .filter(|d| d.on.is_some())
            .collect();
        for (i, b) in on.iter().enumerate() {
            let Some((b_name, b_key)) = b.on else {
                continue;
            };
            for a in &on[..i] {
                let Some((a_name, _)) = a.on else { continue };
                if let Some(r) = b.exclusive.iter().find(|r| a.exclusive.contains(r)) {
                    v.push((
                        b_key,
                        format!(
                            "{a_name} and {b_name} both {}: enable one of them",
                            r.what()
                        ),
                    ));
                }
            }
        }
        v
    }
}

/// The run's full network configuration: the core settings ([`CoreConfig`], which this
/// dereferences to: `net.buffer` is `net.core.buffer`) and every scheme's own table.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct NetConfig {
    /// The core network model.
    #[serde(flatten)]
    pub core: CoreConfig,
    /// The schemes' own configurations (a field per scheme with a scenario table).
    pub schemes: SchemeConfigs,
}

impl std::ops::Deref for NetConfig {
    type Target = CoreConfig;
    fn deref(&self) -> &CoreConfig {
        &self.core
    }
}

impl std::ops::DerefMut for NetConfig {
    fn deref_mut(&mut self) -> &mut CoreConfig {
        &mut self.core
    }
}

impl From<CoreConfig> for NetConfig {
    fn from(core: CoreConfig) -> Self {
        NetConfig {
            core,
            schemes: SchemeConfigs::default(),
        }
    }
}

impl NetConfig {
    /// What the schemes of this run declare to each other ([`Peers`]).
    pub fn peers(&self) -> Peers {
        self.schemes.peers()
    }

    /// The [`Setup`] scheme `S` is built from (tests and the simulator's direct calls into a
    /// scheme).
    pub fn setup<S: Scheme>(&self) -> Setup<'_, S::Config>
    where
        SchemeConfigs: OwnConfig<S>,
    {
        Setup {
            core: &self.core,
            own: self.schemes.own(),
            peers: self.peers(),
        }
    }

    /// The core settings a scheme's validation reads ([`crate::scheme::SchemeConfig::issues`]).
    pub fn core_view(&self) -> CoreView {
        CoreView {
            lossless: self.buffer.mode == crate::config::BufferMode::Lossless,
            has_ecn: self.ecn.enabled && !self.ecn.thresholds.is_empty(),
            queues_per_port: self.queues_per_port,
            max_packet_bytes: self.max_packet_bytes(),
            smallest_buffer_bytes: self
                .switch_buffer_bytes
                .iter()
                .map(|&(_, b)| b)
                .chain([self.buffer.size_bytes])
                .min()
                .unwrap_or(self.buffer.size_bytes),
        }
    }

    /// Check every value on its own (no topology needed): the first problem found, in field
    /// order, the core's before the schemes'. See [`NetConfig::issues`] for all of them.
    pub fn validate(&self) -> Result<(), ConfigIssue> {
        match self.issues().into_iter().next() {
            Some(i) => Err(i),
            None => Ok(()),
        }
    }

    /// Every invalid value: the core's ([`CoreConfig::issues`]), then every scheme's
    /// ([`SchemeConfig::issues`]) and the conflicts between schemes, as [`NetField::Scheme`].
    pub fn issues(&self) -> Vec<ConfigIssue> {
        let mut v = self.core.issues();
        for (key, message) in self.schemes.issues(&self.core_view()) {
            v.push(ConfigIssue {
                field: NetField::Scheme(key),
                message,
            });
        }
        v
    }

    /// [`CoreConfig::rtt_issues`] and the schemes' ([`SchemeConfig::rtt_issues`]): (errors,
    /// warnings).
    pub fn rtt_issues(&self, base_rtt_ps: u64) -> (Vec<ConfigIssue>, Vec<ConfigIssue>) {
        let (mut errs, warns) = self.core.rtt_issues(base_rtt_ps);
        let short = |t: u64| crate::config::shorter_than_rtt(t, base_rtt_ps);
        for (key, message) in self.schemes.rtt_issues(base_rtt_ps, &short) {
            errs.push(ConfigIssue {
                field: NetField::Scheme(key),
                message,
            });
        }
        (errs, warns)
    }

    /// Check that every switch's lossless carve-out fits its buffer (`buffer.mode =
    /// "lossless"` with PFC, not CBFC): the per-port PFC headroom (`headroom_factor` × rate ×
    /// one-way delay + `headroom_extra_bytes`, as [`crate::scheme::pfc::PfcState::new`]
    /// computes it) summed over the switch's ports, plus `reserve_bytes` per ingress port.
    /// Beyond the buffer the shared pool is negative and occupancy exceeds the buffer (a
    /// 2096 B lossless buffer peaked at 116 KB). The error names the field and the bytes.
    pub fn check_lossless_carve_out(
        &self,
        topo: &crate::topology::TopologySpec,
    ) -> Result<(), ConfigIssue> {
        use crate::topology::NodeKind;
        if self.buffer.mode != crate::config::BufferMode::Lossless
            || self.peers().replaces_pfc.is_some()
        {
            return Ok(());
        }
        let p = &self.schemes.pfc;
        // (headroom, ports) per node.
        let mut carve = vec![(0u64, 0u64); topo.kinds.len()];
        for l in &topo.links {
            let headroom = p.port_headroom_bytes(l.rate_bps, l.delay_ps);
            for n in [l.a, l.b] {
                if let Some(c) = carve.get_mut(n as usize) {
                    c.0 = c.0.saturating_add(headroom);
                    c.1 += 1;
                }
            }
        }
        for (node, &(headroom, ports)) in carve.iter().enumerate() {
            if topo.kinds[node] != NodeKind::Switch || ports == 0 {
                continue;
            }
            let node = node as u32;
            let reserve = p.reserve_bytes.saturating_mul(ports);
            let need = headroom.saturating_add(reserve);
            let size = self.buffer_of(node).size_bytes;
            if need > size {
                let field = if self.switch_buffer_bytes.iter().any(|&(n, _)| n == node) {
                    NetField::SwitchBufferSize(node)
                } else {
                    NetField::BufferSize
                };
                return Err(ConfigIssue {
                    field,
                    message: format!(
                        "{size} B at switch {node} is smaller than its lossless carve-out, {need} B \
                         (PFC headroom {headroom} B over its {ports} ports, {} × rate × one-way \
                         delay each, plus the reserve {} B per ingress port, {reserve} B): the \
                         shared pool would be negative and occupancy would exceed the buffer; \
                         enlarge the buffer or lower the PFC headroom factor / reserve",
                        p.headroom_factor, p.reserve_bytes
                    ),
                });
            }
        }
        Ok(())
    }
}

/// `SchemeConfigs` holds scheme `S`'s configuration (every registered scheme; `()` for one
/// without a table).
pub trait OwnConfig<S: Scheme> {
    /// `S`'s configuration.
    fn own(&self) -> &S::Config;
}

macro_rules! own_config {
    ($($v:ident, $f:ident => $sw:ty, $mode:ident $(, $cfg:ty)?;)*) => {
        $(
            impl crate::scheme::Holds<$sw> for SwitchSchemes {
                fn get(&self) -> Option<&$sw> {
                    self.$f.as_ref()
                }
            }

            impl OwnConfig<$sw> for SchemeConfigs {
                fn own(&self) -> &<$sw as Scheme>::Config {
                    own!(self, $f $(, $cfg)?)
                }
            }
        )*
    };
}
registry!(own_config);

/// The lossless fabric's deadlock watch, which the simulator runs periodically: PFC's
/// detector of persistent cycles of paused queues, and a queue it names.
pub use crate::scheme::pfc::deadlock::{Detector as DeadlockDetector, QueueRef};

/// Add the deadlocks `det` found (`deadlocks`) to PFC's `summary.json` section among
/// `sections` when PFC is on (its section says `"enabled": true`).
pub fn add_deadlocks(sections: &mut [(&'static str, serde_json::Value)], det: &DeadlockDetector) {
    let table = <crate::scheme::pfc::PfcConfig as SchemeConfig>::TABLE;
    for (name, v) in sections.iter_mut() {
        if *name == table
            && let Some(o) = v.as_object_mut()
            && o.get("enabled") == Some(&serde_json::Value::Bool(true))
        {
            o.insert("deadlocks".into(), det.summary());
        }
    }
}

/// One pause frame received by a switch or NIC (a line of HPCC-sim's `PFC_OUTPUT_FILE`).
pub use crate::scheme::pfc::PfcRecord as PauseRecord;

/// Every PFC frame received by a switch or NIC, in the order received (HPCC-sim
/// `PFC_OUTPUT_FILE`), from the PFC halves of `switches` and `hosts`.
pub fn pause_log(switches: &[Switch], hosts: &[HostScheme]) -> Vec<PauseRecord> {
    let mut all: Vec<(u64, PauseRecord)> = Vec::new();
    for sw in switches {
        if let Some(p) = &sw.schemes.pfc {
            all.extend_from_slice(&p.rx.log);
        }
    }
    for h in hosts {
        if let HostScheme::Pfc(p) = h {
            all.extend_from_slice(&p.rx.log);
        }
    }
    // Received frames are arrivals: the canonical order of events ([`crate::engine::OrderKey`])
    // sorts them by time, then node, then port; a node's own frames of one instant keep the
    // order it received them in (its event numbers). The same order however the run was
    // split over threads.
    all.sort_by_key(|&(n, r)| (r.time_ps, r.node, r.port, n));
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LossRecovery;
    use crate::units::{MS, US};

    #[test]
    fn a_scheme_timeout_shorter_than_the_rtt_is_an_error() {
        let mut c = NetConfig::from(CoreConfig {
            loss_recovery: LossRecovery::Irn {
                rto_low_ps: 100 * US,
                rto_high_ps: 3 * MS,
                bdp_cap_bytes: 0,
            },
            ..CoreConfig::default()
        });
        c.schemes.ndp.enabled = true;
        c.schemes.ndp.rto_ps = 1;
        let (e, _) = c.rtt_issues(10 * US);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].field, NetField::Scheme("ndp.rto"));
    }

    #[test]
    fn ids_follow_the_list_and_echoed_marks_are_the_echoing_schemes() {
        for i in 0..16u8 {
            match scheme_id(i) {
                Some(id) => assert_eq!(id.0, i),
                None => assert!(scheme_id(i + 1).is_none()),
            }
        }
        assert_eq!(ECHOED_MARKS, crate::scheme::tcd::UE);
    }

    #[test]
    fn schemes_that_claim_one_resource_conflict_and_name_each_other() {
        let mut c = NetConfig::default();
        c.schemes.ndp.enabled = true;
        c.schemes.bfc.enabled = true;
        let msgs: Vec<String> = c.schemes.conflicts().into_iter().map(|(_, m)| m).collect();
        assert_eq!(
            msgs,
            ["NDP and BFC both own the switch queues and scheduler: enable one of them"]
        );
    }

    /// `table.key=value` sets one key as a scenario would, over the configuration as it is;
    /// a bad assignment, table, key or value is an error naming the assignment.
    #[test]
    fn one_assignment_sets_a_scheme_key() {
        let mut c = SchemeConfigs::default();
        assert!(!c.pbfs.enabled);
        c.set("pbfs.enabled=true").unwrap();
        assert!(c.pbfs.enabled);
        c.set("sfc.qth = \"20KB\"").unwrap();
        assert_eq!(c.sfc.qth_bytes, 20_000);
        assert!(c.pbfs.enabled, "other keys keep their values");
        for (bad, want) in [
            ("pbfs", "expected table.key=value"),
            ("nosuch.enabled=true", "no scheme has a table `[nosuch]`"),
            ("pbfs.nosuch=true", "unknown field `nosuch`"),
            ("sfc.qth=\"lots\"", "sfc.qth"),
        ] {
            let e = c.set(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("`{bad}`: ")) && e.contains(want),
                "{bad}: {e}"
            );
        }
    }
}
