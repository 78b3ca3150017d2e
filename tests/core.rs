//! Core-simulator behaviour checked against numbers derived by hand from first principles
//! (serialization + propagation, queue = arrivals − departures, Dynamic Threshold steady state).

use sfc::cc::CcConfig;
use sfc::cc::none::{NoneParams, NoneWindow};
use sfc::config::{BufferConfig, BufferMode, LossRecovery};
use sfc::engine::packet::Framing;
use sfc::registry::NetConfig;
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, MS, NS, US, ser_time_ps, ser_time_ps_hpcc};
use sfc::workload::FlowSpec;

fn flow(src: u32, dst: u32, size: u64, start_ps: u64) -> FlowSpec {
    FlowSpec::background(src, dst, size, start_ps)
}

fn run(sim: &mut Simulator) {
    sim.run_quiet();
    sim.check_invariants().unwrap();
}

/// Everything drained: no packet alive, no buffer in use, all flows done.
fn assert_drained(sim: &Simulator) {
    assert_eq!(sim.arena.live(), 0, "packets left in the network");
    for s in &sim.switches {
        assert_eq!(s.mmu.used_bytes, 0);
    }
    for (i, f) in sim.flows.iter().enumerate() {
        assert!(f.finished(), "flow {i} unfinished");
    }
}

/// Store-and-forward tandem of FIFO links, derived from first principles: packet `i` enters
/// link `l` when it has fully arrived and the link is free, occupies it for its serialization
/// time, then propagates. Returns the arrival time of every packet at the far end.
fn tandem(
    packets: &[(u64, u64)],
    links: &[(u64, u64)],
    ser: &impl Fn(u64, u64) -> u64,
) -> Vec<u64> {
    let mut free = vec![0u64; links.len()];
    packets
        .iter()
        .map(|&(t_ready, size)| {
            let mut t = t_ready;
            for (l, &(rate, delay)) in links.iter().enumerate() {
                let start = t.max(free[l]);
                free[l] = start + ser(size, rate);
                t = free[l] + delay;
            }
            t
        })
        .collect()
}

/// FCT of one flow alone on a path of links `(rate, delay)`: the NIC hands packets to the
/// first link back to back (line-rate pacing); each data arrival produces an ACK that travels
/// the reverse path; the flow completes when the last ACK arrives.
fn expected_fct(
    size: u64,
    mtu: u64,
    hdr: u64,
    ack: u64,
    links: &[(u64, u64)],
    ser: impl Fn(u64, u64) -> u64,
) -> u64 {
    let n = size.div_ceil(mtu);
    let data: Vec<(u64, u64)> = (0..n)
        .map(|i| (0, (size - i * mtu).min(mtu) + hdr))
        .collect();
    let arrivals = tandem(&data, links, &ser);
    let acks: Vec<(u64, u64)> = arrivals.iter().map(|&t| (t, ack)).collect();
    let back: Vec<(u64, u64)> = links.iter().rev().copied().collect();
    *tandem(&acks, &back, &ser).last().unwrap()
}

#[test]
fn single_flow_on_star_is_exact() {
    for framing in [Framing::Hpcc, Framing::Ethernet] {
        for size in [1u64, 999, 1000, 1001, 64_000, 1_000_000] {
            let topo = shapes::star(2, 100 * GBPS, US).unwrap();
            let cfg = NetConfig::from(sfc::config::CoreConfig {
                framing,
                ..Default::default()
            });
            let mut sim = Simulator::new(
                topo,
                cfg,
                CcConfig::none_unlimited(),
                &[flow(0, 1, size, 5 * US)],
            )
            .unwrap();
            run(&mut sim);
            assert_drained(&sim);
            let fct = sim.flow_records()[0].fct_ps.unwrap();
            let (hdr, ack) = (
                framing.data_header_bytes() as u64,
                framing.ack_bytes() as u64,
            );
            let ser = |b: u64, r: u64| match framing {
                Framing::Hpcc => ser_time_ps_hpcc(b, r),
                Framing::Ethernet => ser_time_ps(b + 20, r),
            };
            let want = expected_fct(
                size,
                1000,
                hdr,
                ack,
                &[(100 * GBPS, US), (100 * GBPS, US)],
                ser,
            );
            assert_eq!(fct, want, "{framing:?} size {size}");
        }
    }
}

/// The round-trip latency histogram (`summary.json`'s `rtt`) of one flow alone on a star:
/// one sample per data packet, each the time from its first bit leaving the sender to its
/// ACK's last bit arriving back, derived with the store-and-forward tandem: exact count,
/// minimum, maximum and mean (the histogram keeps those exactly).
#[test]
fn packet_round_trips_of_a_lone_flow_are_exact() {
    let size = 64_000u64;
    let topo = shapes::star(2, 100 * GBPS, US).unwrap();
    let mut sim = Simulator::new(
        topo,
        NetConfig::default(),
        CcConfig::none_unlimited(),
        &[flow(0, 1, size, 5 * US)],
    )
    .unwrap();
    run(&mut sim);
    assert_drained(&sim);
    let framing = Framing::Hpcc;
    let (hdr, ack) = (
        framing.data_header_bytes() as u64,
        framing.ack_bytes() as u64,
    );
    let ser = |b: u64, r: u64| ser_time_ps_hpcc(b, r);
    let links = [(100 * GBPS, US), (100 * GBPS, US)];
    let n = size.div_ceil(1000);
    let sizes: Vec<u64> = (0..n).map(|i| (size - i * 1000).min(1000) + hdr).collect();
    // The NIC sends back to back: packet i leaves at the sum of the earlier serializations.
    let sent: Vec<u64> = sizes
        .iter()
        .scan(0u64, |t, &b| {
            let at = *t;
            *t += ser(b, 100 * GBPS);
            Some(at)
        })
        .collect();
    let data: Vec<(u64, u64)> = sizes.iter().map(|&b| (0, b)).collect();
    let arrivals = tandem(&data, &links, &ser);
    let acks: Vec<(u64, u64)> = arrivals.iter().map(|&t| (t, ack)).collect();
    let back: Vec<(u64, u64)> = links.iter().rev().copied().collect();
    let rtts: Vec<u64> = tandem(&acks, &back, &ser)
        .iter()
        .zip(&sent)
        .map(|(a, s)| a - s)
        .collect();
    let h = &sim.rtt;
    assert_eq!(h.samples(), n);
    assert_eq!(h.min_ps(), rtts.iter().copied().min());
    assert_eq!(h.max_ps(), rtts.iter().copied().max());
    let mean = rtts.iter().sum::<u64>() as f64 / n as f64;
    assert!(
        (h.mean_ps().unwrap() - mean).abs() < 1e-6,
        "{:?} vs {mean}",
        h.mean_ps()
    );
    // The first packet meets empty links: 2 × (data + ACK serialization) + 4 µs.
    let first = 2 * (ser(1000 + hdr, 100 * GBPS) + ser(ack, 100 * GBPS)) + 4 * US;
    assert_eq!(rtts[0], first);
    assert_eq!(h.min_ps(), Some(first));
}

#[test]
fn single_flow_across_three_switches_is_exact() {
    // Leaf–spine with 2 ToRs and 1 spine: host–ToR–spine–ToR–host, 100 G / 1 µs at the edge,
    // 400 G / 1.5 µs in the fabric, 200 ns switch pipeline delay at each of the 3 switches.
    let topo = shapes::leaf_spine(shapes::LeafSpine {
        spines: 1,
        tors: 2,
        hosts_per_tor: 1,
        links_per_spine: 1,
        host_rate_bps: 100 * GBPS,
        host_delay_ps: US,
        fabric_rate_bps: 400 * GBPS,
        fabric_delay_ps: 1_500 * NS,
    })
    .unwrap();
    let cfg = NetConfig::from(sfc::config::CoreConfig {
        framing: Framing::Ethernet,
        switch_delay_ps: 200 * NS,
        ..Default::default()
    });
    for size in [1000u64, 5500, 300_000] {
        let mut sim = Simulator::new(
            topo.clone(),
            cfg.clone(),
            CcConfig::none_unlimited(),
            &[flow(0, 1, size, 0)],
        )
        .unwrap();
        run(&mut sim);
        assert_drained(&sim);
        let fct = sim.flow_records()[0].fct_ps.unwrap();
        let links = [
            (100 * GBPS, US + 200 * NS),
            (400 * GBPS, 1_500 * NS + 200 * NS),
            (400 * GBPS, 1_500 * NS + 200 * NS),
            (100 * GBPS, US),
        ];
        // The ACK path has the switch delays on the other side of each link: same total.
        let want = expected_fct(size, 1000, 62, 66, &links, |b, r| ser_time_ps(b + 20, r));
        assert_eq!(fct, want, "size {size}");
    }
}

#[test]
fn incast_last_flow_and_peak_queue_match_arrivals_minus_departures() {
    // N senders → 1 receiver on a star, `none` CC, unlimited buffer, all start at 0.
    for n_senders in [2u32, 8, 16] {
        let pkts = 50u64; // packets per flow (size = pkts × MTU)
        let topo = shapes::star(n_senders + 1, 100 * GBPS, US).unwrap();
        let cfg = NetConfig::from(sfc::config::CoreConfig {
            buffer: BufferConfig {
                mode: BufferMode::Unlimited,
                size_bytes: 1,
                dt_alpha: 1.0,
            },
            ..Default::default()
        });
        let flows: Vec<_> = (1..=n_senders)
            .map(|s| flow(s, 0, pkts * 1000, 0))
            .collect();
        let mut sim = Simulator::new(topo, cfg, CcConfig::none_unlimited(), &flows).unwrap();
        run(&mut sim);
        assert_drained(&sim);
        let s = ser_time_ps_hpcc(1048, 100 * GBPS); // 83 ns per data packet at every link
        let a = ser_time_ps_hpcc(60, 100 * GBPS);
        let t0 = s + US; // first packets reach the switch
        let total = pkts * n_senders as u64;
        // The bottleneck port is busy from t0 until it has sent every packet.
        let last = t0 + total * s + US + 2 * a + 2 * US;
        let finish = sim.flows.iter().map(|f| f.finish_ps).max().unwrap();
        assert_eq!(finish, last, "N = {n_senders}");
        // Peak queue: after the last batch of N simultaneous arrivals, (pkts)·N packets have
        // arrived and pkts − 1 have left the queue.
        let peak = sim.peak_buffer_bytes();
        let want = (pkts * n_senders as u64 - (pkts - 1)) * 1048;
        assert!(
            peak >= want && peak <= want + 60,
            "N = {n_senders}: peak {peak} want {want}"
        );
    }
}

#[test]
fn dynamic_threshold_steady_state() {
    // S egress queues, each fed by two line-rate long flows (200 G into 100 G): every queue
    // settles at the DT fixed point αB/(1 + αS) (within a couple of packets).
    for (alpha, s_queues) in [(1.0, 1u32), (1.0, 2), (1.0, 4), (0.5, 3)] {
        let b = 1_000_000u64;
        let hosts = 3 * s_queues;
        let topo = shapes::star(hosts, 100 * GBPS, US).unwrap();
        let cfg = NetConfig::from(sfc::config::CoreConfig {
            buffer: BufferConfig {
                mode: BufferMode::Lossy,
                size_bytes: b,
                dt_alpha: alpha,
            },
            // IRN without its BDP cap, so the senders stay saturated.
            loss_recovery: LossRecovery::Irn {
                rto_low_ps: 100 * US,
                rto_high_ps: 3 * MS,
                bdp_cap_bytes: 1 << 40,
            },
            stop_ps: MS,
            ..Default::default()
        });
        let mut flows = Vec::new();
        for q in 0..s_queues {
            let dst = q;
            flows.push(flow(s_queues + 2 * q, dst, 1 << 40, 0));
            flows.push(flow(s_queues + 2 * q + 1, dst, 1 << 40, 0));
        }
        let mut sim = Simulator::new(topo, cfg, CcConfig::none_unlimited(), &flows).unwrap();
        run(&mut sim);
        let want = alpha * b as f64 / (1.0 + alpha * s_queues as f64);
        let sw = &sim.switches[0];
        for q in 0..s_queues {
            // Port number of the link to host q at the star switch is q.
            let got = sw.ports[q as usize].queues[3].bytes as f64;
            assert!(
                (got - want).abs() <= 2.0 * 1048.0,
                "α={alpha} S={s_queues}: queue {q} = {got}, want {want}"
            );
        }
        assert!(sim.counters.drops > 0);
    }
}

fn lossy_incast(recovery: LossRecovery) -> Simulator {
    let topo = shapes::star(9, 100 * GBPS, US).unwrap();
    let cfg = NetConfig::from(sfc::config::CoreConfig {
        buffer: BufferConfig {
            mode: BufferMode::Lossy,
            size_bytes: 100_000,
            dt_alpha: 1.0,
        },
        loss_recovery: recovery,
        ..Default::default()
    });
    let cc = CcConfig::None(NoneParams {
        window: NoneWindow::Bytes(20_000),
    });
    let flows: Vec<_> = (1..=8)
        .map(|s| flow(s, 0, 200_000 + s as u64 * 777, s as u64 * 100 * NS))
        .collect();
    let mut sim = Simulator::new(topo, cfg, cc, &flows).unwrap();
    run(&mut sim);
    sim
}

#[test]
fn lossy_gbn_recovers_everything() {
    let sim = lossy_incast(LossRecovery::gbn());
    assert!(sim.counters.drops > 0, "scenario must drop");
    assert_drained(&sim);
    assert!(sim.counters.retx_packets >= sim.counters.drops);
}

#[test]
fn lossy_irn_retransmits_only_what_was_lost() {
    let sim = lossy_incast(LossRecovery::irn());
    assert!(sim.counters.drops > 0, "scenario must drop");
    assert_drained(&sim);
    // Every dropped packet (original or retransmission) is retransmitted exactly once.
    // Tail losses need the (low) timeout; no timeout may be spurious, which the equality
    // above already guarantees.
    assert_eq!(sim.counters.retx_packets, sim.counters.drops);
}

#[test]
fn link_errors_are_recovered() {
    let mut topo = shapes::star(2, 100 * GBPS, US).unwrap();
    for l in topo.links.iter_mut() {
        l.error_rate = 0.01;
    }
    for lr in [LossRecovery::gbn(), LossRecovery::irn()] {
        let mut sim = Simulator::new(
            topo.clone(),
            NetConfig::from(sfc::config::CoreConfig {
                loss_recovery: lr,
                ..Default::default()
            }),
            CcConfig::none_unlimited(),
            &[flow(0, 1, 2_000_000, 0)],
        )
        .unwrap();
        run(&mut sim);
        assert!(sim.counters.drops_link_error > 0);
        assert_drained(&sim);
    }
}

#[test]
fn ecmp_spreads_flows_and_never_moves_them() {
    // 2 racks × 16 hosts, 4 spines: many cross-rack flows should split evenly over the 4
    // uplinks of a ToR (chi-square test at p ≈ 0.001 with 3 degrees of freedom: 16.27).
    let topo = shapes::leaf_spine(shapes::LeafSpine {
        spines: 4,
        tors: 2,
        hosts_per_tor: 16,
        links_per_spine: 1,
        host_rate_bps: 100 * GBPS,
        host_delay_ps: US,
        fabric_rate_bps: 100 * GBPS,
        fabric_delay_ps: US,
    })
    .unwrap();
    let mut flows = Vec::new();
    for i in 0..2000u32 {
        flows.push(flow(i % 16, 16 + (i / 16) % 16, 1000, i as u64 * 10 * NS));
    }
    let mut sim = Simulator::new(
        topo,
        NetConfig::default(),
        CcConfig::none_unlimited(),
        &flows,
    )
    .unwrap();
    run(&mut sim);
    assert_drained(&sim);
    // ToR 0 is node 32; its uplinks are ports 16..20. One packet per flow: count packets by tx bytes.
    let tor = &sim.switches[0];
    let counts: Vec<f64> = (16..20)
        .map(|p| (tor.ports[p].tx.link.tx_bytes / 1048) as f64)
        .collect();
    let total: f64 = counts.iter().sum();
    assert_eq!(total, 2000.0);
    let exp = total / 4.0;
    let chi2: f64 = counts.iter().map(|c| (c - exp).powi(2) / exp).sum();
    assert!(chi2 < 16.27, "uplink counts {counts:?}, chi2 {chi2}");
    // Path stability: the choice is a pure function of the 5-tuple and the switch salt.
    let seed = tor.ecmp_seed;
    for sport in 10000..10100u16 {
        let a = Simulator::ecmp_pick(seed, 1, 20, sport, 100, 4);
        for _ in 0..3 {
            assert_eq!(a, Simulator::ecmp_pick(seed, 1, 20, sport, 100, 4));
        }
    }
}

#[test]
fn same_seed_same_result_different_seed_different_ecmp() {
    let go = |seed: u64| {
        let mut sc = sfc::scenario::default::load(&[
            "traffic.0.duration=\"200us\"".into(),
            "traffic.1.duration=\"200us\"".into(),
        ])
        .unwrap();
        sc.net.seed = seed;
        let mut sim = Simulator::new(sc.topo, sc.net, sc.cc, &sc.flows).unwrap();
        run(&mut sim);
        (
            sim.flow_records(),
            sim.counters.packet_hops,
            sim.q.events(),
            sim.switches[0].ecmp_seed,
        )
    };
    let a = go(1);
    let b = go(1);
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2, b.2);
    let c = go(2);
    assert_ne!(a.3, c.3);
}

#[test]
fn bad_flows_are_errors_not_panics() {
    let topo = shapes::star(3, 100 * GBPS, US).unwrap();
    for (f, needle) in [
        (flow(0, 0, 10, 0), "same host"),
        (flow(0, 3, 10, 0), "not a host"),
        (flow(0, 9, 10, 0), "not a host"),
        (flow(0, 1, 0, 0), "at least 1 byte"),
        (
            FlowSpec {
                prio: 0,
                ..flow(0, 1, 10, 0)
            },
            "priority",
        ),
        (
            FlowSpec {
                prio: 8,
                ..flow(0, 1, 10, 0)
            },
            "priority",
        ),
    ] {
        let e = Simulator::new(
            topo.clone(),
            NetConfig::default(),
            CcConfig::none_unlimited(),
            &[f],
        )
        .err()
        .expect("must fail");
        assert!(e.contains(needle), "{e}");
    }
}
