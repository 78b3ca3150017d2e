//! Congestion-control presets: a controller together with the network features it relies on
//! (ECN marking thresholds, INT and its header bytes, the NIC's ACK priority), as HPCC-sim's
//! `run.py` configures them. Shared by TOML scenarios and the HPCC drop-in mode.

use crate::cc::CcConfig;
use crate::cc::dcqcn::DcqcnParams;
use crate::cc::dctcp::DctcpParams;
use crate::cc::hpcc::HpccParams;
use crate::cc::none::{NoneParams, NoneWindow};
use crate::cc::timely::TimelyParams;
use crate::config::{CnpMode, EcnConfig};
use crate::scheme::marking::EcnThresholds;

/// A controller and the features it needs.
#[derive(Clone, Debug)]
pub struct CcSetup {
    /// Controller and parameters.
    pub cc: CcConfig,
    /// ECN marking (disabled when the controller ignores it).
    pub ecn: EcnConfig,
    /// Switches stamp INT.
    pub int_enabled: bool,
    /// INT bytes carried by every data packet and ACK (HPCC 42, TIMELY 8 — a timestamp).
    pub int_bytes: u32,
    /// NIC ACK queue at strict priority (HPCC-sim `ACK_HIGH_PRIO`).
    pub ack_high_prio: bool,
    /// Receiver notification mode.
    pub cnp: CnpMode,
}

/// Names accepted by [`preset`].
pub const PRESETS: &[&str] = &[
    "none",
    "dcqcn",
    "dcqcn+w",
    "dcqcn_paper_timers",
    "dcqcn_paper",
    "dctcp",
    "hpcc",
    "hpcc_sim",
    "timely",
    "timely+w",
];

/// DCTCP marking: Kmin = Kmax = 30·bw/10 KB (300 KB at 100 G), Pmax 1 (`run.py`).
pub fn dctcp_ecn() -> EcnConfig {
    let t = |g: u64| EcnThresholds {
        rate_bps: g * 1_000_000_000,
        kmin_bytes: g * 3_000,
        kmax_bytes: g * 3_000,
        pmax: 1.0,
    };
    EcnConfig {
        enabled: true,
        thresholds: vec![t(25), t(50), t(100), t(200), t(400)],
    }
}

fn off() -> EcnConfig {
    EcnConfig {
        enabled: false,
        thresholds: Vec::new(),
    }
}

/// The preset `name` for hosts of `host_rate_bps` (window sizes resolve to the topology's max
/// BDP at build time when given as 0).
pub fn preset(name: &str, host_rate_bps: u64) -> Result<CcSetup, String> {
    let base = |cc: CcConfig| CcSetup {
        cc,
        ecn: off(),
        int_enabled: false,
        int_bytes: 0,
        ack_high_prio: false,
        cnp: CnpMode::AckEcho,
    };
    Ok(match name {
        "none" => base(CcConfig::None(NoneParams {
            window: NoneWindow::Unlimited,
        })),
        // run.py `dcqcn`: Mellanox variant, ACK_HIGH_PRIO 1, ECN 400/1600 KB at 100 G.
        "dcqcn" => CcSetup {
            ecn: EcnConfig::hpcc_default(),
            ack_high_prio: true,
            ..base(CcConfig::Dcqcn(DcqcnParams::hpcc_preset(host_rate_bps)))
        },
        // run.py `dcqcn_vwin`: window = max BDP, VAR_WIN, ACK_HIGH_PRIO 0.
        "dcqcn+w" => CcSetup {
            ecn: EcnConfig::hpcc_default(),
            ..base(CcConfig::Dcqcn(
                DcqcnParams::hpcc_preset(host_rate_bps).with_window(0, true),
            ))
        },
        // run.py `dcqcn_paper`: the Mellanox variant with the paper's 50/50/55 µs timers.
        "dcqcn_paper_timers" => CcSetup {
            ecn: EcnConfig::hpcc_default(),
            ack_high_prio: true,
            ..base(CcConfig::Dcqcn(DcqcnParams::hpcc_paper_preset(
                host_rate_bps,
            )))
        },
        // The DCQCN paper: per-CNP reaction, byte counter, CNPs from the receiver at most
        // every 50 µs, paper marking thresholds (5 KB / 200 KB / 1 % at 40 G, scaled).
        "dcqcn_paper" => {
            let mut p = DcqcnParams::paper(host_rate_bps);
            p.ce_echo_is_cnp = false;
            let t = |g: u64| EcnThresholds {
                rate_bps: g * 1_000_000_000,
                kmin_bytes: g * 125,
                kmax_bytes: g * 5_000,
                pmax: 0.01,
            };
            CcSetup {
                ecn: EcnConfig {
                    enabled: true,
                    thresholds: vec![t(40), t(100), t(400)],
                },
                ack_high_prio: true,
                cnp: CnpMode::Cnp {
                    interval_ps: 50_000_000,
                },
                ..base(CcConfig::Dcqcn(p))
            }
        }
        "dctcp" => CcSetup {
            ecn: dctcp_ecn(),
            ..base(CcConfig::Dctcp(DctcpParams::hpcc_preset(host_rate_bps, 0)))
        },
        // HPCC paper Algorithm 1 (maxStage 5, W_AI 80 B); 42 B of INT.
        "hpcc" => CcSetup {
            int_enabled: true,
            int_bytes: 42,
            ..base(CcConfig::Hpcc(HpccParams::paper()))
        },
        // HPCC-sim `run.py --cc hp`: rate-based, maxStage 0, INT_MULTI units.
        "hpcc_sim" => CcSetup {
            int_enabled: true,
            int_bytes: 42,
            ..base(CcConfig::Hpcc(HpccParams::hpcc_sim_preset(host_rate_bps)))
        },
        "timely" => CcSetup {
            int_bytes: 8,
            ack_high_prio: true,
            ..base(CcConfig::Timely(TimelyParams::hpcc_preset(host_rate_bps)))
        },
        "timely+w" => CcSetup {
            int_bytes: 8,
            ack_high_prio: true,
            ..base(CcConfig::Timely(
                TimelyParams::hpcc_preset(host_rate_bps).with_window(0, true),
            ))
        },
        _ => {
            return Err(format!(
                "unknown congestion control `{name}` (one of: {})",
                PRESETS.join(", ")
            ));
        }
    })
}
