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

use sfc::config::{BufferConfig, BufferMode, NetConfig};
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
    eprintln!(
        "first pauses {:?} (rel t0 {})",
        first_pause,
        first_pause[1] - t0
    );
    eprintln!(
        "peak window {peak_window}, overall {}",
        sim.switches[1].mmu.peak_bytes
    );
    eprintln!("{:?}", series);
    eprintln!("{:?}", sim.sfc_counters);
}

fn c2(n: u32, qth: u64, qtg: u64, reset: u64, horizon: u64) {
    let topo = shapes::star(n + 2, LINE, 4 * US).unwrap();
    let mut cfg = unlimited();
    cfg.sfc = sfc(SfcMode::Ingress, qth, qtg);
    cfg.sfc.bloom_reset_ps = reset;
    let t0 = 40 * US;
    let mut flows = vec![flow(1, 0, BIG, 0)];
    for i in 2..=n + 1 {
        flows.push(flow(i, 0, BIG, t0));
    }
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    eprintln!(
        "base rtt {} reset {}",
        sim.base_rtt_ps,
        sim.switches[0].sfc.as_ref().unwrap().bloom.max_occupancy
    );
    let mut t = 0;
    let mut first_pause = vec![0u64; n as usize + 1];
    let mut sent_at_pause = vec![0u64; n as usize + 1];
    let mut peak_window = 0u64;
    let mut series = vec![];
    let mut maxq = 0;
    while t < horizon {
        t += 10_000;
        run_to(&mut sim, t);
        let q = sim.switches[0].ports[0].queues[3].bytes;
        maxq = maxq.max(q);
        for i in 0..=n as usize {
            if first_pause[i] == 0 && sim.flows[i].pauses > 0 {
                first_pause[i] = t;
                sent_at_pause[i] = sim.flows[i].tx.snd_nxt / 1000;
            }
        }
        let last = *first_pause.iter().max().unwrap();
        if first_pause.iter().any(|&x| x == 0) || t < last + 4 * US + 300_000 {
            peak_window = peak_window.max(q);
        }
        if t % (4 * US) == 0 {
            series.push((t / US, q / 1000));
        }
    }
    let fp: Vec<u64> = first_pause
        .iter()
        .map(|&x| x.saturating_sub(t0) / 10_000)
        .collect();
    eprintln!("N={n} first pauses (10ns units rel t0) {fp:?}");
    eprintln!("sent at pause {sent_at_pause:?}");
    let pred = n as f64 * bytes_at_line(8 * US + TS);
    eprintln!("peak window {peak_window} pred {pred}, overall {maxq}");
    eprintln!("{:?}", series);
    eprintln!("{:?}", sim.sfc_counters);
}

#[test]
fn explore_c2() {
    c2(16, 8 * PKT, 1, 0, 600 * US);
    c2(16, 8 * PKT, 1, 2 * US, 600 * US);
}

fn ls2(hpt: u32) -> sfc::topology::TopologySpec {
    shapes::leaf_spine(shapes::LeafSpine {
        spines: 1,
        tors: 2,
        hosts_per_tor: hpt,
        links_per_spine: 1,
        host_rate_bps: LINE,
        host_delay_ps: US,
        fabric_rate_bps: 400 * GBPS,
        fabric_delay_ps: 1_500_000,
    })
    .unwrap()
}

fn c3(qth: u64, qtg: u64, t2: u64) {
    let topo = ls2(3);
    let mut cfg = unlimited();
    cfg.sfc = sfc(SfcMode::Sfc, qth, qtg);
    let t1 = 20 * US;
    let flows = [flow(4, 3, BIG, 0), flow(0, 3, BIG, t1), flow(1, 3, BIG, t2)];
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    let mut t = 0;
    let mut live = vec![];
    let mut was = false;
    let mut first_pause = [0u64; 3];
    let mut fc_at = [0u64; 3];
    while t < 80 * US {
        t += 10_000;
        run_to(&mut sim, t);
        let st = sim.switches[0].sfc.as_ref().unwrap();
        let l = st.cache.remaining(3, 3, t) > 0;
        if l != was {
            live.push((t - t1) / 10_000);
            was = l;
        }
        for i in 0..3 {
            if first_pause[i] == 0 && sim.flows[i].pauses > 0 {
                first_pause[i] = t;
                fc_at[i] = sim.sfc_counters.bts_from_cache;
            }
        }
    }
    eprintln!("cache live toggles (10ns rel t1): {live:?}");
    eprintln!(
        "first pauses rel start: {:?} fc {:?}",
        [
            first_pause[0],
            first_pause[1] - t1,
            first_pause[2].saturating_sub(t2)
        ],
        fc_at
    );
    eprintln!("{:?}", sfc::report::sfc_json(&sim));
}

#[test]
fn explore_c3() {
    c3(PKT, 1, 200 * US);
    c3(PKT, 1, 30 * US);
    c3(10 * PKT, 1, 30 * US);
}

fn util4(n: u32, d: u64, qth: u64, qtg: u64, reset: u64) {
    let topo = shapes::star(n + 1, LINE, d).unwrap();
    let mut cfg = unlimited();
    cfg.sfc = sfc(SfcMode::Ingress, qth, qtg);
    cfg.sfc.bloom_reset_ps = reset;
    let flows: Vec<_> = (1..=n).map(|i| flow(i, 0, BIG, 0)).collect();
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    run_to(&mut sim, 100 * US);
    let b0 = sim.switches[0].ports[0].link.tx_bytes;
    let mut idle = 0u64;
    let mut minq = u64::MAX;
    let mut maxq = 0;
    let mut t = 100 * US;
    while t < 1000 * US {
        t += 10_000;
        run_to(&mut sim, t);
        let q = sim.switches[0].ports[0].queues[3].bytes;
        minq = minq.min(q);
        maxq = maxq.max(q);
        if q == 0 && !sim.switches[0].ports[0].busy {
            idle += 1;
        }
    }
    let b1 = sim.switches[0].ports[0].link.tx_bytes;
    let util = (b1 - b0) as f64 / (900 * US / TS * PKT) as f64;
    eprintln!(
        "qth {qth} qtg {qtg}: util {util:.4} idle samples {idle} q range {minq}..{maxq} base {}",
        sim.base_rtt_ps
    );
}

#[test]
fn explore_util() {
    for n in [2, 4, 8] {
        for d in [2 * US, 4 * US] {
            eprintln!("n {n} d {d}");
            util4(
                n,
                d,
                2 * bytes_at_line(4 * d) as u64,
                bytes_at_line(4 * d) as u64,
                0,
            );
            util4(
                n,
                d,
                2 * bytes_at_line(2 * d + TS) as u64,
                bytes_at_line(2 * d + TS) as u64,
                0,
            );
            util4(n, d, 4_000, 1, 0);
            util4(n, d, 20_000, 1, 0);
        }
    }
}

fn sfcp(cc: &str, horizon: u64) {
    let topo = shapes::leaf_spine(shapes::LeafSpine {
        spines: 1,
        tors: 2,
        hosts_per_tor: 40,
        links_per_spine: 1,
        host_rate_bps: LINE,
        host_delay_ps: US,
        fabric_rate_bps: 4000 * GBPS,
        fabric_delay_ps: US,
    })
    .unwrap();
    let mut cfg = NetConfig {
        buffer: BufferConfig {
            mode: BufferMode::Lossy,
            size_bytes: 16 << 20,
            dt_alpha: 1.0,
        },
        ..NetConfig::default()
    };
    let s = sfc::scenario::cc::preset(cc, LINE).unwrap();
    cfg.ecn = s.ecn;
    cfg.ack_high_prio = s.ack_high_prio;
    cfg.cnp = s.cnp;
    cfg.sfc = sfc(SfcMode::SfcP, 0, 0);
    let flows: Vec<_> = (0..40)
        .map(|i| flow(i, 40, BIG, (i as u64) * 100_000))
        .collect();
    let mut sim = Simulator::new(topo, cfg, s.cc, &flows).unwrap();
    let mut t = 0;
    let mut series = vec![];
    let mut sum = 0u128;
    let mut cnt = 0u64;
    let mut maxq = 0;
    let mut minq = u64::MAX;
    while t < horizon {
        t += 100_000;
        run_to(&mut sim, t);
        let q = sim.switches[1].ports[0].queues[3].bytes;
        if t > 200 * US {
            sum += q as u128;
            cnt += 1;
            maxq = maxq.max(q);
            minq = minq.min(q);
        }
        if t % (20 * US) == 0 {
            series.push((t / US, q / 1000));
        }
    }
    eprintln!(
        "{cc}: base rtt {} mean {} min {minq} max {maxq} drops {} peak {}",
        sim.base_rtt_ps,
        sum / cnt as u128,
        sim.counters.drops,
        sim.switches[1].mmu.peak_bytes
    );
    eprintln!("{series:?}");
    eprintln!("{:?}", sfc::report::sfc_json(&sim));
}

#[test]
fn explore_sfcp() {
    sfcp("none", 2000 * US);
    sfcp("dcqcn+w", 2000 * US);
}

fn fig1(mode: SfcMode, onramp: bool, horizon: u64) {
    let topo = shapes::dumbbell(63, 1, LINE, US, 6400 * GBPS, US).unwrap();
    let mut cfg = unlimited();
    cfg.sfc = sfc(mode, 250_000, 125_000);
    cfg.onramp.enabled = onramp;
    let flows: Vec<_> = (0..63)
        .map(|i| flow(i, 63, BIG, i as u64 * 50 * US / 62))
        .collect();
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    let mut t = 0;
    let mut series = vec![];
    let mut ms = [0u64; 4];
    while t < horizon {
        t += 10 * US;
        run_to(&mut sim, t);
        let q = sim.switches[1].ports[0].queues[3].bytes;
        let m = ((t - 1) / (1000 * US)) as usize;
        ms[m.min(3)] = ms[m.min(3)].max(q);
        if t % (50 * US) == 0 {
            series.push((t / US, q / 1000));
        }
    }
    eprintln!(
        "{mode:?} onramp {onramp}: peak {} per-ms max {ms:?} events {}",
        sim.switches[1].mmu.peak_bytes,
        sim.q.events()
    );
    eprintln!("{series:?}");
    eprintln!("{:?}", sfc::report::sfc_json(&sim));
}

#[test]
fn explore_fig1() {
    let t = std::time::Instant::now();
    fig1(SfcMode::Egress, false, 4000 * US);
    eprintln!("{:?}", t.elapsed());
    fig1(SfcMode::Ingress, false, 4000 * US);
    eprintln!("{:?}", t.elapsed());
    fig1(SfcMode::Sfc, false, 4000 * US);
    eprintln!("{:?}", t.elapsed());
    fig1(SfcMode::Off, true, 4000 * US);
    eprintln!("{:?}", t.elapsed());
}

fn c1_onramp(thr: u64) {
    let topo = shapes::dumbbell(2, 1, LINE, US, 400 * GBPS, 3 * US).unwrap();
    let mut cfg = unlimited();
    cfg.onramp.enabled = true;
    cfg.onramp.threshold_ps = thr;
    let t0 = 20 * US;
    let flows = [flow(0, 2, BIG, 0), flow(1, 2, BIG, t0)];
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    let mut t = 0;
    let mut first_pause = [0u64; 2];
    let mut series = vec![];
    while t < 100 * US {
        t += 10_000;
        run_to(&mut sim, t);
        for i in 0..2 {
            if first_pause[i] == 0 && sim.flows[i].pauses > 0 {
                first_pause[i] = t;
            }
        }
        if t % US == 0 {
            series.push((t / US, sim.switches[1].ports[0].queues[3].bytes / 1000));
        }
    }
    eprintln!(
        "onramp thr {} (resolved {}): first pauses {:?} peak {}",
        thr, sim.onramp_threshold_ps, first_pause, sim.switches[1].mmu.peak_bytes
    );
    eprintln!("{series:?}");
}

#[test]
fn explore_c1_onramp() {
    c1_onramp(0);
}

fn deploy(d: sfc::sfc::SfcDeploy, mode: SfcMode) {
    let topo = shapes::leaf_spine(shapes::LeafSpine {
        spines: 1,
        tors: 3,
        hosts_per_tor: 2,
        links_per_spine: 1,
        host_rate_bps: LINE,
        host_delay_ps: US,
        fabric_rate_bps: LINE,
        fabric_delay_ps: US,
    })
    .unwrap();
    let mut cfg = unlimited();
    cfg.sfc = sfc(mode, 0, 0);
    cfg.sfc.deploy = d;
    let flows = [flow(0, 4, BIG, 0), flow(2, 5, BIG, 0)];
    let mut sim = Simulator::new(topo, cfg, none_cc(), &flows).unwrap();
    run_to(&mut sim, 500 * US);
    let occ: Vec<u32> = sim
        .switches
        .iter()
        .map(|s| s.sfc.as_ref().unwrap().bloom.max_occupancy)
        .collect();
    let peaks: Vec<u64> = sim.switches.iter().map(|s| s.mmu.peak_bytes).collect();
    eprintln!(
        "{d:?} {mode:?}: bloom occ {occ:?} peaks {peaks:?} {:?}",
        sfc::report::sfc_json(&sim)
    );
}

#[test]
fn explore_deploy() {
    deploy(sfc::sfc::SfcDeploy::All, SfcMode::Sfc);
    deploy(sfc::sfc::SfcDeploy::Tor, SfcMode::Sfc);
}
