//! OnRamp (Liu et al., NSDI'21) as reconstructed in `specs/onramp.md`: per-flow pauses at the
//! sender driven by the one-way delay (OWD) the receiver measured, underneath an unmodified
//! congestion controller. A host-only scheme: its switch half never runs.
//!
//! On an ACK for a packet sent at `tx` whose OWD exceeds the threshold `T`, and which was sent
//! after the previous pause ended (the stale-feedback guard), the flow pauses for
//! `K · (OWD − T)`. Knobs: `K` (gain, the SFC paper's "smoothing that tunes the gain") and an
//! EWMA of the OWD (weight `w`, 1 = none).
//!
//! With `K = 1` this is the straw-man rule the OnRamp paper describes as oscillating; the
//! OnRamp authors' smoothing, which lowers the gain when more flows share the system, is not
//! public. `sfc-fig1` runs both the straw-man and `K = 0.1` for its 63 flows, which settles at
//! the senders' window bound as the SFC paper's Fig. 1 does (docs/src/papers/sfc.md, "Fig. 1").

pub mod config;

use crate::scheme::{SchemeId, Setup};

/// The scheme's registry id ([`crate::scheme::Scheme::ID`]; its position in the registry).
pub const ID: crate::scheme::SchemeId = crate::scheme::SchemeId(2);

/// OnRamp parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OnRampConfig {
    /// OnRamp on/off.
    pub enabled: bool,
    /// OWD threshold T, picoseconds (0 = the longest base one-way delay + 1 µs).
    pub threshold_ps: u64,
    /// Pause gain K: pause = K · (OWD − T).
    pub gain: f64,
    /// EWMA weight of the newest OWD sample (1 = no smoothing).
    pub ewma_w: f64,
    /// Ignore feedback from packets sent before the previous pause ended.
    pub guard: bool,
}

impl Default for OnRampConfig {
    fn default() -> Self {
        OnRampConfig {
            enabled: false,
            threshold_ps: 0,
            gain: 1.0,
            ewma_w: 1.0,
            guard: true,
        }
    }
}

/// Per-flow OnRamp state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OnRampState {
    /// Smoothed OWD, picoseconds (0 = no sample yet).
    pub owd_ewma_ps: f64,
    /// End of the last pause OnRamp imposed.
    pub last_pause_end_ps: u64,
}

impl OnRampState {
    /// Process the OWD of a packet sent at `tx_ps` (ACK arrived at `now_ps`); `threshold_ps` is
    /// the resolved T. Returns the new pause end if the flow must pause.
    pub fn on_ack(
        &mut self,
        cfg: &OnRampConfig,
        threshold_ps: u64,
        now_ps: u64,
        tx_ps: u64,
        owd_ps: u64,
    ) -> Option<u64> {
        let w = cfg.ewma_w.clamp(0.0, 1.0);
        self.owd_ewma_ps = if self.owd_ewma_ps == 0.0 {
            owd_ps as f64
        } else {
            (1.0 - w) * self.owd_ewma_ps + w * owd_ps as f64
        };
        let owd = self.owd_ewma_ps;
        if owd <= threshold_ps as f64 || (cfg.guard && tx_ps < self.last_pause_end_ps) {
            return None;
        }
        // `gain` is bounded at input (config::MAX_ONRAMP_GAIN); the pause is still kept within
        // the simulator's time range so that no input can wrap its end time.
        let d = ((cfg.gain * (owd - threshold_ps as f64)).max(0.0) as u64)
            .min(crate::units::MAX_TIME_PS);
        if d == 0 {
            return None;
        }
        let end = now_ps.saturating_add(d);
        self.last_pause_end_ps = end;
        Some(end)
    }
}

/// OnRamp has no switch half (it never runs on a switch).
#[derive(Clone, Debug)]
pub struct OnRampSwitch;

impl crate::scheme::SwitchHooks for OnRampSwitch {
    fn hooks(&self) -> u16 {
        0
    }
}

/// The host half of OnRamp: per-flow OWD state at the senders.
#[derive(Clone, Debug)]
pub struct OnRampHost {
    /// Parameters.
    pub cfg: OnRampConfig,
    /// Resolved OWD threshold T, picoseconds.
    pub threshold_ps: u64,
    /// Per-flow state, by flow index.
    pub flows: Vec<OnRampState>,
    /// Pauses OnRamp imposed.
    pub pauses: u64,
}

impl crate::scheme::HostHooks for OnRampHost {
    fn splits_by_host(&self) -> bool {
        true
    }

    fn absorb(
        &mut self,
        other: &Self,
        _theirs_host: &dyn Fn(usize) -> bool,
        theirs_flow: &dyn Fn(u32) -> bool,
    ) {
        for (f, (a, b)) in self.flows.iter_mut().zip(&other.flows).enumerate() {
            if theirs_flow(f as u32) {
                *a = *b;
            }
        }
        self.pauses += other.pauses;
    }

    fn wants_acks(&self) -> bool {
        true
    }

    /// On an ACK whose echoed OWD calls for it, pause the flow (unless it is complete or
    /// already paused for longer).
    fn on_ack(&mut self, ctx: &mut crate::scheme::HostCtx<'_>, ev: &crate::scheme::AckEvent<'_>) {
        let owd = ev.ack.data_rx_ps.saturating_sub(ev.ack.echo_sent_ps);
        let st = &mut self.flows[ev.flow as usize];
        if let Some(end) = st.on_ack(
            &self.cfg,
            self.threshold_ps,
            ctx.now_ps,
            ev.ack.echo_sent_ps,
            owd,
        ) && !ev.done
            && end > ev.pause_until_ps
        {
            self.pauses += 1;
            ctx.out.push(crate::scheme::HostAction::PauseQp {
                flow: ev.flow,
                until_ps: end,
            });
        }
    }
}

impl crate::scheme::Scheme for OnRampSwitch {
    type Host = OnRampHost;
    type Config = OnRampConfig;
    const ID: SchemeId = ID;

    fn build_switch(
        _cfg: &Setup<'_, OnRampConfig>,
        _env: &crate::scheme::Env,
        _tier: u8,
        _ports: &[crate::switch::EgressPort],
    ) -> Option<Self> {
        None
    }

    /// The OWD threshold defaults to half the base RTT + 1 µs (the longest base one-way delay
    /// plus margin).
    fn build_host(
        cfg: &Setup<'_, OnRampConfig>,
        env: &crate::scheme::Env,
        _hosts: usize,
        flows: usize,
    ) -> Option<Self::Host> {
        let c = cfg.own;
        c.enabled.then(|| OnRampHost {
            cfg: c.clone(),
            threshold_ps: if c.threshold_ps > 0 {
                c.threshold_ps
            } else {
                env.base_rtt_ps / 2 + crate::units::US
            },
            flows: vec![OnRampState::default(); flows],
            pauses: 0,
        })
    }

    fn summary(
        _switches: &[&Self],
        host: Option<&Self::Host>,
        cfg: &Setup<'_, OnRampConfig>,
    ) -> Option<(&'static str, serde_json::Value)> {
        Some((
            "onramp",
            serde_json::json!({
                "enabled": cfg.own.enabled,
                "threshold_ps": host.map_or(0, |h| h.threshold_ps),
                "pauses": host.map_or(0, |h| h.pauses),
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_for_the_excess_once() {
        let cfg = OnRampConfig {
            enabled: true,
            ..Default::default()
        };
        let mut s = OnRampState::default();
        // T = 5 µs, OWD = 8 µs → pause 3 µs.
        assert_eq!(
            s.on_ack(&cfg, 5_000_000, 100_000_000, 92_000_000, 8_000_000),
            Some(103_000_000)
        );
        // Packets sent before the pause ended are stale: no extension.
        assert_eq!(
            s.on_ack(&cfg, 5_000_000, 100_100_000, 92_100_000, 8_000_000),
            None
        );
        // A packet sent after the pause ended triggers again.
        assert_eq!(
            s.on_ack(&cfg, 5_000_000, 110_000_000, 104_000_000, 6_000_000),
            Some(111_000_000)
        );
        // Below threshold: nothing.
        assert_eq!(
            s.on_ack(&cfg, 5_000_000, 120_000_000, 115_000_000, 4_000_000),
            None
        );
    }

    #[test]
    fn gain_and_smoothing() {
        let cfg = OnRampConfig {
            enabled: true,
            gain: 0.5,
            ewma_w: 0.5,
            guard: false,
            threshold_ps: 0,
        };
        let mut s = OnRampState::default();
        assert_eq!(s.on_ack(&cfg, 1_000, 10_000, 0, 3_000), Some(11_000)); // first sample: 3000
        // EWMA: 0.5·3000 + 0.5·5000 = 4000 → pause 0.5·3000 = 1500.
        assert_eq!(s.on_ack(&cfg, 1_000, 20_000, 0, 5_000), Some(21_500));
    }
}
