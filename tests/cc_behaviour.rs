//! exploration

mod util {
    use sfc::cc::CcConfig;
    use sfc::config::{BufferConfig, BufferMode, NetConfig};
    use sfc::scenario::cc::preset;
    use sfc::sim::Simulator;
    use sfc::topology::TopologySpec;
    use sfc::units::GBPS;
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

    /// NetConfig with the features preset `name` needs, unlimited buffer.
    pub fn net(name: &str) -> (NetConfig, CcConfig) {
        let s = preset(name, 100 * GBPS).unwrap();
        let cfg = NetConfig {
            ecn: s.ecn,
            int_enabled: s.int_enabled,
            int_bytes: s.int_bytes,
            ack_high_prio: s.ack_high_prio,
            cnp: s.cnp,
            buffer: BufferConfig {
                mode: BufferMode::Unlimited,
                size_bytes: 1,
                dt_alpha: 1.0,
            },
            ..NetConfig::default()
        };
        (cfg, s.cc)
    }

    pub fn sim(topo: TopologySpec, cfg: NetConfig, cc: CcConfig, flows: &[FlowSpec]) -> Simulator {
        Simulator::new(topo, cfg, cc, flows).unwrap()
    }

    /// Advance the simulation to `t_ps` (events at times ≤ t_ps are executed).
    pub fn run_to(sim: &mut Simulator, t_ps: u64) {
        sim.cfg.stop_ps = t_ps;
        sim.run_quiet();
    }

    /// Run until `end_ps`, sampling `f(sim)` every `step_ps` from `from_ps`.
    pub fn sample<T>(
        sim: &mut Simulator,
        from_ps: u64,
        end_ps: u64,
        step_ps: u64,
        mut f: impl FnMut(&Simulator) -> T,
    ) -> Vec<T> {
        let mut out = Vec::new();
        let mut t = from_ps;
        while t <= end_ps {
            run_to(sim, t);
            out.push(f(sim));
            t += step_ps;
        }
        out
    }

    pub fn delivered(sim: &Simulator) -> Vec<u64> {
        sim.flows.iter().map(|f| f.rx.delivered_bytes).collect()
    }

    pub fn percentile(v: &[u64], p: f64) -> u64 {
        let mut s = v.to_vec();
        s.sort_unstable();
        let i = ((s.len() as f64 - 1.0) * p).round() as usize;
        s[i]
    }
}

use sfc::cc::CcConfig;
use sfc::cc::hpcc::{HpccAi, HpccParams, Reaction};
use sfc::topology::shapes;
use sfc::units::{GBPS, MS, US};
use util::*;

fn hpcc_incast(reaction: Reaction, ai: f64) {
    let (cfg, _) = net("hpcc");
    let cc = CcConfig::Hpcc(HpccParams {
        reaction,
        ai: HpccAi::Bytes(ai),
        ..HpccParams::paper()
    });
    let topo = shapes::star(17, 100 * GBPS, US).unwrap();
    let flows: Vec<_> = (1..=16).map(|s| flow(s, 0, 1_000_000, 0)).collect();
    let mut s = sim(topo, cfg, cc, &flows);
    let q = sample(&mut s, 0, 3 * MS, 1 * US, |s| {
        (s.switches[0].ports[0].queues[3].bytes, s.counters.delivered_bytes)
    });
    s.cfg.stop_ps = u64::MAX;
    s.run_quiet();
    let fin = s.flows.iter().map(|f| f.finish_ps).max().unwrap();
    let qs: Vec<u64> = q.iter().map(|x| x.0).collect();
    let peak = qs.iter().max().unwrap();
    let after: Vec<u64> = qs[100..1400].to_vec();
    let above = qs.iter().filter(|&&b| b > 10_000).count();
    let thr: Vec<u64> = (0..15).map(|k| (q[(k + 1) * 100].1 - q[k * 100].1) * 8 / 100_000).collect();
    let fine: Vec<u64> = (0..30).map(|k| (q[(k + 1) * 10].1 - q[k * 10].1) * 8 / 10_000).collect();
    let qf: Vec<u64> = (0..30).map(|k| qs[k * 10] / 1000).collect();
    println!("  tput/10us {fine:?}\n  q KB/10us {qf:?}");
    println!(
        "{reaction:?} ai {ai}: fin {} us peak {peak} p95(100..1400) {} max {} above10K {above} us tput/100us {thr:?}",
        fin / US,
        percentile(&after, 0.95),
        after.iter().max().unwrap()
    );
}

#[test]
fn explore() {
    for r in [Reaction::PerAck, Reaction::PerAckOnly, Reaction::PerRtt] {
        hpcc_incast(r, 80.0);
    }
    for ai in [25.0, 150.0, 300.0, 1000.0, 2000.0] {
        hpcc_incast(Reaction::PerAck, ai);
    }
}

fn tput_window(name: &str, cc: Option<CcConfig>, delay: u64, starts: &[u64], sizes: &[u64], marks: &[u64]) {
    let (cfg, pc) = net(name);
    let cc = cc.unwrap_or(pc);
    let n = starts.len() as u32;
    let topo = shapes::star(n + 1, 100 * GBPS, delay).unwrap();
    let flows: Vec<_> = (0..n).map(|i| flow(i + 1, 0, sizes[i as usize], starts[i as usize])).collect();
    let mut s = sim(topo, cfg, cc, &flows);
    let mut prev = delivered(&s);
    let mut pt = 0;
    let mut qsum = 0u128;
    let mut qn = 0u64;
    for &m in marks {
        // sample queue each us
        let mut t = pt;
        let mut qmax = 0;
        let mut qmin = u64::MAX;
        while t < m {
            t += US;
            run_to(&mut s, t);
            let qb = s.switches[0].ports[0].queues[3].bytes;
            qsum += qb as u128;
            qn += 1;
            qmax = qmax.max(qb);
            qmin = qmin.min(qb);
        }
        let d = delivered(&s);
        let g: Vec<f64> = d.iter().zip(&prev).map(|(a, b)| (a - b) as f64 * 8.0 / (m - pt) as f64 * 1e3).collect();
        println!("{name} [{}..{}] us: gbps {:.1?} sum {:.1} q avg {} min {} max {}", pt / US, m / US, g, g.iter().sum::<f64>(), (qsum / qn as u128), qmin, qmax);
        qsum = 0;
        qn = 0;
        prev = d;
        pt = m;
    }
}

#[test]
fn explore2() {
    let big = 1u64 << 40;
    for d in [5 * US, 10 * US] {
        for n in [4usize, 8] {
            println!("dctcp delay {d} n {n}");
            tput_window("dctcp", None, d, &vec![0; n], &vec![big; n], &[500 * US, 1000 * US, 1500 * US, 2000 * US, 3000 * US]);
        }
    }
    println!("dcqcn 2 flows");
    tput_window("dcqcn", None, US, &[0, 0], &[big, big], &[500 * US, 1000 * US, 2000 * US, 3000 * US, 4000 * US, 5000 * US]);
    println!("dcqcn long + short");
    tput_window("dcqcn", None, US, &[0, 200 * US], &[big, 2_000_000], &[200 * US, 400 * US, 600 * US, 800 * US, 1000 * US, 1500 * US, 2000 * US, 2500 * US, 3000 * US]);
    for name in ["hpcc", "dcqcn+w", "dcqcn", "timely"] {
        println!("{name} join");
        tput_window(name, None, US, &[0, 500 * US, 1000 * US, 1500 * US], &[big; 4], &[500 * US, 1000 * US, 1500 * US, 2000 * US, 2500 * US, 3000 * US, 4000 * US]);
    }
    println!("timely 1");
    tput_window("timely", None, US, &[0], &[big], &[200 * US, 1000 * US]);
    println!("timely 2");
    tput_window("timely", None, US, &[0, 0], &[big, big], &[200 * US, 1000 * US, 2000 * US, 3000 * US]);
}

#[test]
fn explore3() {
    let big = 1u64 << 40;
    println!("hpcc join long");
    tput_window("hpcc", None, US, &[0, 500 * US, 1000 * US, 1500 * US], &[big; 4], &[2000 * US, 3000 * US, 4000 * US, 5000 * US, 6000 * US]);
    println!("dcqcn+w join long");
    tput_window("dcqcn+w", None, US, &[0, 500 * US, 1000 * US, 1500 * US], &[big; 4], &[2000 * US, 2500 * US, 3000 * US]);
    for ai in [25.0, 80.0, 150.0, 300.0, 600.0, 1200.0] {
        let (cfg, _) = net("hpcc");
        let cc = CcConfig::Hpcc(HpccParams { ai: HpccAi::Bytes(ai), ..HpccParams::paper() });
        let topo = shapes::star(17, 100 * GBPS, US).unwrap();
        let flows: Vec<_> = (1..=16).map(|s| flow(s, 0, big, s as u64 * 3 * US)).collect();
        let mut s = sim(topo, cfg, cc, &flows);
        run_to(&mut s, 300 * US);
        let d0 = delivered(&s);
        let q = sample(&mut s, 300 * US, 1300 * US, US, |s| s.switches[0].ports[0].queues[3].bytes);
        let d1 = delivered(&s);
        let g: Vec<f64> = d1.iter().zip(&d0).map(|(a, b)| (a - b) as f64 * 8.0 / 1e6).collect();
        let sum: f64 = g.iter().sum();
        let jain = sum * sum / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>());
        println!("ai {ai}: p95 {} p50 {} max {} sum {sum:.1} jain {jain:.4} min {:.1} max {:.1}", percentile(&q, 0.95), percentile(&q, 0.5), q.iter().max().unwrap(), g.iter().cloned().fold(f64::MAX, f64::min), g.iter().cloned().fold(0.0, f64::max));
    }
}

#[test]
fn explore4() {
    let big = 1u64 << 40;
    let (cfg, cc) = net("hpcc");
    let topo = shapes::star(5, 100 * GBPS, US).unwrap();
    let flows: Vec<_> = (0..4u32).map(|i| flow(i + 1, 0, big, i as u64 * 500 * US)).collect();
    let mut s = sim(topo, cfg, cc, &flows);
    let mut t = 1500 * US;
    while t <= 6000 * US {
        run_to(&mut s, t);
        let v: Vec<String> = s.flows.iter().map(|f| match &f.cc {
            sfc::cc::Cc::Hpcc(h) => format!("W {:.0} Wc {:.0} U {:.3} st {}", h.window_f64(), h.reference_window(), h.utilization(), h.inc_stage()),
            _ => String::new(),
        }).collect();
        println!("{} us: {v:?}", t / US);
        t += 250 * US;
    }
    // fine-grained trace for flows over 40 us
    let mut t = 6000 * US;
    for _ in 0..40 {
        t += US;
        run_to(&mut s, t);
        let v: Vec<String> = s.flows.iter().map(|f| match &f.cc {
            sfc::cc::Cc::Hpcc(h) => format!("{:.0}/{:.0}/{:.3}/{}", h.window_f64(), h.reference_window(), h.utilization(), h.inc_stage()),
            _ => String::new(),
        }).collect();
        println!("{} us: {v:?} q {}", t / US, s.switches[0].ports[0].queues[3].bytes);
    }
}

#[test]
fn explore5() {
    let big = 1u64 << 40;
    for ai in [80.0, 150.0, 300.0, 650.0] {
        for sp in [250 * US, 500 * US] {
            let cc = CcConfig::Hpcc(HpccParams { ai: HpccAi::Bytes(ai), ..HpccParams::paper() });
            println!("hpcc ai {ai} spacing {}", sp / US);
            tput_window("hpcc", Some(cc), US, &[0, sp, 2 * sp, 3 * sp], &[big; 4], &[3 * sp, 3 * sp + 1000 * US, 3 * sp + 2000 * US, 3 * sp + 3000 * US]);
        }
    }
}
