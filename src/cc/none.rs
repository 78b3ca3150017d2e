//! The `none` controller: send at line rate, optionally limited by a fixed window. Used for
//! flow-control-only experiments (SFC Fig. 1, 2, 13) and as the simplest test subject.

use super::{AckInfo, CongestionControl, SchemeSignal};

/// Parameters of [`NoneCc`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoneWindow {
    /// No window: only the line rate limits the sender.
    Unlimited,
    /// Fixed window, bytes of payload in flight.
    Bytes(u64),
    /// Fixed window of this many base BDPs (e.g. 1.0 = one BDP).
    Bdp(f64),
}

/// Parameters of the `none` controller.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NoneParams {
    /// Window policy.
    pub window: NoneWindow,
}

impl Default for NoneParams {
    fn default() -> Self {
        NoneParams {
            window: NoneWindow::Unlimited,
        }
    }
}

/// Line-rate sender with an optional fixed window; ignores all feedback.
#[derive(Clone, Debug)]
pub struct NoneCc {
    rate_bps: u64,
    window_bytes: u64,
}

impl NoneCc {
    /// New controller for a NIC of `line_rate_bps`; `bdp_bytes` resolves a BDP-relative window.
    pub fn new(p: &NoneParams, line_rate_bps: u64, bdp_bytes: u64) -> Self {
        let window_bytes = match p.window {
            NoneWindow::Unlimited => u64::MAX,
            NoneWindow::Bytes(b) => b.max(1),
            NoneWindow::Bdp(k) => ((bdp_bytes as f64 * k) as u64).max(1),
        };
        NoneCc {
            rate_bps: line_rate_bps,
            window_bytes,
        }
    }
}

impl CongestionControl for NoneCc {
    fn on_ack(&mut self, _info: &AckInfo<'_>) {}
    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    /// PB-FS on a line-rate sender: the new rate replaces the line rate.
    fn on_scheme_signal(&mut self, _now_ps: u64, signal: SchemeSignal) {
        if let SchemeSignal::SetRate(rate_bps) = signal {
            self.rate_bps = rate_bps.max(1);
        }
    }
    fn window_bytes(&self) -> u64 {
        self.window_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignores_feedback() {
        let mut c = NoneCc::new(
            &NoneParams {
                window: NoneWindow::Bdp(1.0),
            },
            100_000_000_000,
            125_000,
        );
        let info = AckInfo {
            now_ps: 1,
            ack_seq: 1000,
            newly_acked_bytes: 1000,
            snd_nxt: 5000,
            ce_echo: true,
            marks: crate::engine::packet::Marks::NONE,
            rtt_ps: 10_000_000,
            nack: true,
            int: &[],
        };
        c.on_ack(&info);
        c.on_timeout(2);
        assert_eq!(c.rate_bps(), 100_000_000_000);
        assert_eq!(c.window_bytes(), 125_000);
        let u = NoneCc::new(&NoneParams::default(), 25_000_000_000, 0);
        assert_eq!(u.window_bytes(), u64::MAX);
    }
}
