//! exploration

mod util {
    use sfc::cc::CcConfig;
    use sfc::cc::none::{NoneParams, NoneWindow};
    use sfc::config::{BufferConfig, BufferMode, NetConfig, PfcConfig};
    use sfc::workload::FlowSpec;

    pub fn flow(src: u32, dst: u32, size: u64, start_ps: u64) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            size_bytes: size,
            start_ps,
            prio: 3,
            dport: 100,
        }
    }
    pub fn none_cc() -> CcConfig {
        CcConfig::None(NoneParams {
            window: NoneWindow::Unlimited,
        })
    }
    pub fn lossless(buffer: u64, pfc: PfcConfig) -> NetConfig {
        NetConfig {
            buffer: BufferConfig {
                mode: BufferMode::Lossless,
                size_bytes: buffer,
                dt_alpha: 1.0,
            },
            pfc,
            ..NetConfig::default()
        }
    }
}

use sfc::config::{BufferMode, PfcConfig};
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, MS, US};
use util::*;

#[test]
fn explore_incast() {
    for expiry in [false, true] {
        for quanta in [65535u32, 1000] {
            let topo = shapes::star(9, 100 * GBPS, US).unwrap();
            let cfg = lossless(
                1_000_000,
                PfcConfig {
                    expiry,
                    quanta,
                    ..PfcConfig::default()
                },
            );
            let flows: Vec<_> = (1..=8).map(|s| flow(s, 0, 500_000, 0)).collect();
            let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
            sim.run_quiet();
            sim.check_invariants().unwrap();
            let c = &sim.counters;
            let fin = sim.flows.iter().map(|f| f.finish_ps).max().unwrap();
            println!(
                "expiry {expiry} q {quanta}: pauses {} resumes {} log {} paused {} us drops {} {} fin {} us done {}",
                c.pfc_pauses,
                c.pfc_resumes,
                sim.pfc_log.len(),
                c.pfc_paused_ps / US,
                c.drops,
                c.drops_lossless,
                fin / US,
                c.flows_completed
            );
            for r in sim.pfc_log.iter().take(12) {
                println!("   {r:?}");
            }
        }
    }
}

#[test]
fn explore_hol() {
    for mode in [BufferMode::Lossless, BufferMode::Unlimited] {
        for with_incast in [true, false] {
            let topo = shapes::dumbbell(5, 2, 100 * GBPS, US, 400 * GBPS, US).unwrap();
            let mut cfg = lossless(1_000_000, PfcConfig::default());
            cfg.buffer.mode = mode;
            let mut flows = vec![flow(4, 6, 500_000, 20 * US)];
            if with_incast {
                flows.extend((0..4).map(|s| flow(s, 5, 2_000_000, 0)));
            }
            let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
            sim.run_quiet();
            sim.check_invariants().unwrap();
            let r = sim.flow_records();
            let c = &sim.counters;
            println!(
                "{mode:?} incast {with_incast}: victim fct {} us ideal {} us; pauses {} drops {} log {}",
                r[0].fct_ps.unwrap() / US,
                r[0].ideal_fct_ps / US,
                c.pfc_pauses,
                c.drops,
                sim.pfc_log.len()
            );
            let mut nodes: Vec<_> = sim.pfc_log.iter().map(|r| (r.node, r.port)).collect();
            nodes.sort();
            nodes.dedup();
            println!("   paused {nodes:?}");
        }
    }
}

#[test]
fn explore_headroom() {
    for hf in [3.0, 1.0, 0.5, 0.0] {
        let topo = shapes::star(17, 100 * GBPS, US).unwrap();
        let cfg = lossless(
            1_000_000,
            PfcConfig {
                headroom_factor: hf,
                ..PfcConfig::default()
            },
        );
        let flows: Vec<_> = (1..=16).map(|s| flow(s, 0, 300_000, 0)).collect();
        let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
        sim.run_quiet();
        let c = &sim.counters;
        println!(
            "hf {hf}: drops {} lossless {} pauses {} done {} inv {:?}",
            c.drops,
            c.drops_lossless,
            c.pfc_pauses,
            c.flows_completed,
            sim.check_invariants()
        );
    }
}

#[test]
fn explore_threshold() {
    for n in [2u32, 4, 8] {
        let topo = shapes::star(n + 1, 100 * GBPS, US).unwrap();
        let b = 4_000_000u64;
        let cfg = lossless(b, PfcConfig::default());
        let flows: Vec<_> = (1..=n).map(|s| flow(s, 0, 1 << 40, 0)).collect();
        let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
        let pfc0 = sim.switches[0].pfc.clone().unwrap();
        let bsh = b - pfc0.carved_bytes;
        let want = bsh as f64 / (8.0 + n as f64);
        let mut t = 0;
        let mut vals = vec![];
        let mut hd = 0;
        while t < MS {
            t += 50_000;
            sim.cfg.stop_ps = t;
            sim.run_quiet();
            let p = sim.switches[0].pfc.as_ref().unwrap();
            for port in 1..=n as u16 {
                if p.paused[p.index(port, 3)] && t > 200 * US {
                    vals.push(p.shared_of(port, 3));
                    hd = hd.max(p.hdrm[p.index(port, 3)]);
                }
            }
        }
        let mn = vals.iter().min().unwrap();
        let mx = vals.iter().max().unwrap();
        println!(
            "n {n}: want {want:.0} min {mn} max {mx} samples {} hdrm max {hd} headroom {}",
            vals.len(),
            pfc0.headroom[1]
        );
    }
}

#[test]
fn explore_stepped() {
    let mk = || {
        let topo = shapes::star(9, 100 * GBPS, US).unwrap();
        let cfg = lossless(
            1_000_000,
            PfcConfig {
                expiry: false,
                ..PfcConfig::default()
            },
        );
        let flows: Vec<_> = (1..=8).map(|s| flow(s, 0, 500_000, 0)).collect();
        Simulator::new(topo, cfg, none_cc(), &flows).unwrap()
    };
    let mut a = mk();
    a.run_quiet();
    let mut b = mk();
    let mut t = 0;
    while b.counters.flows_completed < 8 {
        t += 10 * US;
        b.cfg.stop_ps = t;
        b.run_quiet();
    }
    b.cfg.stop_ps = u64::MAX;
    b.run_quiet();
    println!(
        "one-shot paused {} stepped {}; fct equal {}",
        a.counters.pfc_paused_ps,
        b.counters.pfc_paused_ps,
        a.flow_records() == b.flow_records()
    );
}
