//! SFC exploration (temporary).

mod util {
    use sfc::cc::CcConfig;
    use sfc::cc::none::{NoneParams, NoneWindow};
    use sfc::config::{BufferConfig, BufferMode, NetConfig};
    use sfc::sfc::{SfcConfig, SfcMode};
    use sfc::sim::Simulator;
    use sfc::units::GBPS;
    use sfc::workload::FlowSpec;

    pub const LINE: u64 = 100 * GBPS;
    pub const PKT: u64 = 1048;
    pub const TS: u64 = 83_000;
    pub const BIG: u64 = 1 << 40;

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

    pub fn unlimited() -> NetConfig {
        NetConfig {
            buffer: BufferConfig {
                mode: BufferMode::Unlimited,
                size_bytes: 1,
                dt_alpha: 1.0,
            },
            ..NetConfig::default()
        }
    }

    pub fn sfc(mode: SfcMode, qth: u64, qtg: u64) -> SfcConfig {
        SfcConfig {
            mode,
            qth_bytes: qth,
            qtg_bytes: qtg,
            ..SfcConfig::default()
        }
    }

    pub fn run_to(sim: &mut Simulator, t: u64) {
        sim.cfg.stop_ps = t;
        sim.run_quiet();
    }

    /// Bytes sent at `LINE` in `t_ps`.
    pub fn bytes_at_line(t_ps: u64) -> f64 {
        t_ps as f64 * LINE as f64 / 8e12
    }
}

use sfc::sfc::SfcMode;
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use util::*;

#[test]
fn explore_c1() {
    let topo = shapes::dumbbell(2, 1, LINE, US, 400 * GBPS, 3 * US).unwrap();
    let k = 20u64;
    let mut cfg = unlimited();
    cfg.sfc = sfc(SfcMode::Ingress, k * PKT, 1);
    let t0 = 20 * US;
    let flows = [flow(0, 2, BIG, 0), flow(1, 2, BIG, t0)];
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    let mut t = 0;
    let mut first_pause = [0u64; 2];
    let mut peak_window = 0u64;
    let mut series = vec![];
    while t < 200 * US {
        t += 10_000;
        run_to(&mut sim, t);
        let q = sim.switches[1].ports[0].queues[3].bytes;
        for i in 0..2 {
            if first_pause[i] == 0 && sim.flows[i].pauses > 0 {
                first_pause[i] = t;
            }
        }
        if first_pause[1] == 0 || t < first_pause[1] + 4 * US + 500_000 {
            peak_window = peak_window.max(q);
        }
        if t % US == 0 {
            series.push((t / US, q));
        }
    }
    eprintln!("first pauses {:?} (rel t0 {})", first_pause, first_pause[1] - t0);
    eprintln!("peak window {peak_window}, overall {}", sim.switches[1].mmu.peak_bytes);
    eprintln!("{:?}", series);
    eprintln!("{:?}", sim.sfc_counters);
}

fn c2(n: u32, qth: u64, qtg: u64, reset: u64) {
    let topo = shapes::dumbbell(n + 1, 1, LINE, US, LINE * (n as u64 + 2), 3 * US).unwrap();
    let mut cfg = unlimited();
    cfg.sfc = sfc(SfcMode::Ingress, qth, qtg);
    cfg.sfc.bloom_reset_ps = reset;
    let t0 = 20 * US;
    let mut flows = vec![flow(0, n + 1, BIG, 0)];
    for i in 1..=n {
        flows.push(flow(i, n + 1, BIG, t0));
    }
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    let mut t = 0;
    let mut first_pause = vec![0u64; n as usize + 1];
    let mut peak_window = 0u64;
    let mut series = vec![];
    let mut maxq = 0;
    while t < 300 * US {
        t += 10_000;
        run_to(&mut sim, t);
        let q = sim.switches[1].ports[0].queues[3].bytes;
        maxq = maxq.max(q);
        for i in 0..=n as usize {
            if first_pause[i] == 0 && sim.flows[i].pauses > 0 {
                first_pause[i] = t;
            }
        }
        let last = *first_pause.iter().max().unwrap();
        if first_pause.iter().any(|&x| x == 0) || t < last + 4 * US + 300_000 {
            peak_window = peak_window.max(q);
        }
        if t % (2 * US) == 0 {
            series.push((t / US, q / 1000));
        }
    }
    let fp: Vec<u64> = first_pause.iter().map(|&x| x.saturating_sub(t0) / 10_000).collect();
    eprintln!("N={n} first pauses (10ns units rel t0) {fp:?}");
    let pred = n as f64 * bytes_at_line(8 * US + TS);
    eprintln!("peak window {peak_window} pred {pred}, overall {maxq}");
    eprintln!("{:?}", series);
    eprintln!("{:?}", sim.sfc_counters);
}

#[test]
fn explore_c2() {
    c2(16, 8 * PKT, 1, 0);
    c2(32, 8 * PKT, 1, 0);
}
