//! # sfc — a packet-level datacenter network simulator
//!
//! Reference implementation of SFC (Source Flow Control) and the switch-feedback schemes it is
//! compared with. See `README.md` for a tour and `docs/` for the model details.
//!
//! Module map (one concept each):
//! - [`units`], [`rng`]: time/rate/size units and the deterministic RNG.
//! - [`engine`]: the discrete-event core (event queue, packet arena).
//! - [`topology`]: topology descriptions, generators, HPCC file format, ECMP routing.
//! - [`workload`]: flow-size CDFs, arrival processes, traffic patterns, flow files.
//! - [`metrics`]: flow records, slowdown statistics, buffer monitor, output files.
//! - [`capture`]: packet capture of chosen links as pcapng (RoCEv2 / 802.1Qbb frames).

#![warn(missing_docs)]

pub mod bench;
pub mod capture;
pub mod cc;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod fsutil;
pub mod host;
pub mod hpcc;
pub mod link;
pub mod metrics;
pub mod plot;
pub mod process;
pub mod registry;
pub mod report;
pub mod rng;
pub mod runguard;
pub mod scenario;
pub mod scheme;

pub mod sim;
pub mod switch;
pub mod topology;
pub mod units;
pub mod workload;
