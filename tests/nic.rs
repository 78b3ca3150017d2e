//! The NIC arbiter (`sfc::host::arbiter`) inside the simulator: which QP sends when, derived
//! by hand. One sender on a star, CC `none` at line rate without a window, so the sender's
//! link is the only constraint and packet k leaves at exactly k × T (T = serialization time of
//! a full data packet): the sender of each packet is then fully determined by the round robin.

use sfc::cc::CcConfig;
use sfc::config::LossRecovery;
use sfc::registry::NetConfig;
use sfc::sim::Simulator;
use sfc::topology::shapes;
use sfc::units::{GBPS, US};
use sfc::workload::FlowSpec;

const MTU: u64 = 1000;

fn sim(hosts: u32, flows: &[FlowSpec]) -> Simulator {
    let topo = shapes::star(hosts, 100 * GBPS, US).unwrap();
    Simulator::new(
        topo,
        NetConfig::default(),
        CcConfig::none_unlimited(),
        flows,
    )
    .unwrap()
}

/// Serialization time of a full data packet at 100 G with the default framing, picoseconds.
fn t_pkt() -> u64 {
    let f = NetConfig::default().framing;
    f.ser_ps(MTU as u32 + f.data_header_bytes(), 100 * GBPS)
}

/// Run until (and including) events at `t_ps`.
fn run_to(s: &mut Simulator, t_ps: u64) {
    s.cfg.stop_ps = t_ps;
    s.run_quiet();
}

/// Payload bytes flow `f` has sent (first transmissions).
fn sent(s: &Simulator, f: usize) -> u64 {
    match s.flow_state(f) {
        Some(st) => st.tx.snd_nxt,
        None if s.flows[f].finished() => s.flows[f].size_bytes,
        None => 0,
    }
}

/// Run to the end and check that everything was delivered.
fn finish(s: &mut Simulator) {
    run_to(s, u64::MAX);
    s.check_invariants().unwrap();
    assert!(s.flows.iter().all(|f| f.finished()));
}

#[test]
fn round_robin_among_ready_qps_in_start_order() {
    // A, B, C start at 0 in that order (to three receivers); D starts at 2.5 T and joins the end
    // of the list. HPCC-sim's `GetNextQindex` scans from the last-served index + 1, modulo the
    // list's length at scan time: A sends at 0 while it is alone (index 0: (0 + 1) mod 1), so
    // the next scan starts at index 1, B (T), which B and C joined meanwhile; then C (2 T), then
    // index 3 — D, which joined at 2.5 T, after the last-served QP (3 T) — and strict rotation
    // from A (4 T) on.
    let t = t_pkt();
    let mut s = sim(
        5,
        &[
            FlowSpec::background(0, 1, 100 * MTU, 0),
            FlowSpec::background(0, 2, 100 * MTU, 0),
            FlowSpec::background(0, 3, 100 * MTU, 0),
            FlowSpec::background(0, 4, 100 * MTU, 5 * t / 2),
        ],
    );
    let want = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0];
    let mut count = [0u64; 4];
    for (k, &f) in want.iter().enumerate() {
        run_to(&mut s, k as u64 * t);
        count[f] += 1;
        for (g, &c) in count.iter().enumerate() {
            assert_eq!(
                sent(&s, g),
                c * MTU,
                "after packet {k} (at {k} T), flow {g}"
            );
        }
    }
    finish(&mut s);
}

#[test]
fn paused_qp_never_sends_and_resumes_when_its_pause_ends() {
    // A and B alternate from 0 (A at even k, B at odd k). At 10 T A is paused until 30.5 T: B
    // alone sends every packet from 11 T to 30 T; at 31 T (the first packet boundary after the
    // pause end) the cursor, past B, wraps to A, which sends again.
    let t = t_pkt();
    let mut s = sim(
        2,
        &[
            FlowSpec::background(0, 1, 200 * MTU, 0),
            FlowSpec::background(0, 1, 200 * MTU, 0),
        ],
    );
    run_to(&mut s, 10 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (6 * MTU, 5 * MTU));
    s.pause_qp(0, 30 * t + t / 2);
    for k in 11..=30 {
        run_to(&mut s, k * t);
        assert_eq!(sent(&s, 0), 6 * MTU, "paused A sent at {k} T");
        assert_eq!(sent(&s, 1), (5 + k - 10) * MTU, "B at {k} T");
    }
    run_to(&mut s, 31 * t - 1);
    assert_eq!(
        sent(&s, 0),
        6 * MTU,
        "A sent before the first boundary after its pause"
    );
    run_to(&mut s, 31 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (7 * MTU, 25 * MTU));
    run_to(&mut s, 32 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (7 * MTU, 26 * MTU));
    assert_eq!(s.flows[0].paused_ps, 30 * t + t / 2 - 10 * t);
    finish(&mut s);
}

#[test]
fn lone_paused_qp_wakes_exactly_at_its_pause_end() {
    // Nothing else to send: the NIC is idle during the pause and must wake up by itself at the
    // pause end (not at the next unrelated event).
    let t = t_pkt();
    let mut s = sim(2, &[FlowSpec::background(0, 1, 50 * MTU, 0)]);
    run_to(&mut s, 4 * t);
    assert_eq!(sent(&s, 0), 5 * MTU);
    let end = 20 * t + 123;
    s.pause_qp(0, end);
    run_to(&mut s, end - 1);
    assert_eq!(sent(&s, 0), 5 * MTU, "sent during its pause");
    run_to(&mut s, end);
    assert_eq!(sent(&s, 0), 6 * MTU, "did not send at its pause end");
    // Line rate again from there.
    run_to(&mut s, end + 3 * t);
    assert_eq!(sent(&s, 0), 9 * MTU);
    finish(&mut s);
}

#[test]
fn a_shortened_pause_takes_effect() {
    // A pause replaced by an earlier end (SFC's resume) wakes the QP at the new end.
    let t = t_pkt();
    let mut s = sim(2, &[FlowSpec::background(0, 1, 50 * MTU, 0)]);
    run_to(&mut s, 2 * t);
    s.pause_qp(0, 100 * t);
    run_to(&mut s, 5 * t);
    s.pause_qp(0, 8 * t);
    run_to(&mut s, 8 * t - 1);
    assert_eq!(sent(&s, 0), 3 * MTU);
    run_to(&mut s, 8 * t);
    assert_eq!(sent(&s, 0), 4 * MTU);
    finish(&mut s);
}

#[test]
fn flow_starts_are_streamed_in_start_then_workload_order() {
    // Workload order is not start order: flow 2 starts first; flows 0 and 1 start together
    // (ties go in workload order). Only one flow start is pending at a time, however many flows.
    let t = t_pkt();
    let mut flows = vec![
        FlowSpec::background(0, 1, 10 * MTU, 100 * t),
        FlowSpec::background(0, 1, 10 * MTU, 100 * t),
        FlowSpec::background(0, 1, 10 * MTU, 50 * t),
    ];
    // Then 10,000 one-packet flows, one every 200 T (each done before the next starts).
    flows.extend((0..10_000u64).map(|i| FlowSpec::background(0, 1, MTU, (1000 + 200 * i) * t)));
    let mut s = sim(2, &flows);
    assert_eq!(s.q.len(), 1, "one pending flow start, not one per flow");
    run_to(&mut s, 50 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1), sent(&s, 2)), (0, 0, MTU));
    // At 100 T flow 0 (listed first) starts and sends at once; flow 1 joins after it, the
    // last-served QP, so it is next (101 T), then flow 0 again (102 T).
    run_to(&mut s, 100 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (MTU, 0));
    run_to(&mut s, 101 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (MTU, MTU));
    run_to(&mut s, 102 * t);
    assert_eq!((sent(&s, 0), sent(&s, 1)), (2 * MTU, MTU));
    finish(&mut s);
    // Controller state follows the active flows (at most the three that overlap at 100 T).
    assert!(s.cc_slots_peak() <= 3, "{} controllers", s.cc_slots_peak());
    // What stays pending: per flow started within the last RTO (4 ms ≈ 240 flows here), its
    // lazy retransmission check; not 10,003 flow starts.
    assert!(
        s.q.peak_len() < 1000,
        "peak pending events {} with 10,003 flows",
        s.q.peak_len()
    );
}

#[test]
fn controller_state_is_recycled_and_late_acks_are_harmless() {
    // Flow A (0 → 1, 10 packets) with a 2 µs Go-Back-N timeout, shorter than the ~4.3 µs RTT:
    // it times out and resends, so duplicates and their ACKs are still in flight when A
    // completes. Flow B (2 → 3, a disjoint path) starts just after A completes and takes the
    // controller slot A released; A's late ACKs must neither touch B's controller nor trip
    // anything: B's FCT equals that of B alone, to the picosecond.
    let cfg = NetConfig::from(sfc::config::CoreConfig {
        loss_recovery: LossRecovery::Gbn {
            rto_ps: 2 * US,
            nack_interval_ps: 500 * US,
        },
        ..Default::default()
    });
    let mk = |flows: &[FlowSpec]| {
        let topo = shapes::star(4, 100 * GBPS, US).unwrap();
        Simulator::new(topo, cfg.clone(), CcConfig::none_unlimited(), flows).unwrap()
    };
    let a = FlowSpec::background(0, 1, 10 * MTU, 0);
    let mut alone = mk(std::slice::from_ref(&a));
    run_to(&mut alone, u64::MAX);
    let t_a = alone.flows[0].finish_ps;
    assert!(alone.counters.timeouts > 0, "A never timed out");
    assert!(
        alone.q.now() > t_a,
        "nothing was in flight after A completed"
    );
    // Late data too: A's receiver answers duplicates that arrive after A completed (its QP
    // state released), as it would have with the state kept.
    let mut upto = mk(std::slice::from_ref(&a));
    run_to(&mut upto, t_a);
    assert!(upto.flows[0].finished() && upto.flow_state(0).is_none());
    assert!(
        alone.counters.acks > upto.counters.acks,
        "no data packet reached A's receiver after A completed"
    );
    let b = FlowSpec::background(2, 3, 200 * MTU, t_a + 1);
    let mut b_alone = mk(std::slice::from_ref(&b));
    run_to(&mut b_alone, u64::MAX);
    let mut both = mk(&[a, b]);
    run_to(&mut both, t_a + 2);
    assert!(both.flows[0].finished() && both.flow_cc(0).is_none());
    assert!(both.flow_cc(1).is_some());
    // B holds A's released QP slot; A (finished) no longer has one.
    assert!(both.flow_state(0).is_none());
    assert_eq!(both.flow_state(1).map(|s| s.flow), Some(1));
    finish(&mut both);
    assert_eq!(
        both.cc_slots_peak(),
        1,
        "B did not reuse A's controller slot"
    );
    assert_eq!(both.flow_slots_peak(), 1, "B did not reuse A's QP slot");
    assert_eq!(
        both.flows[1].finish_ps - both.flows[1].start_ps,
        b_alone.flows[0].finish_ps - b_alone.flows[0].start_ps
    );
    // A's late packets were handled as in A's run alone (same ACKs, timeouts and
    // retransmissions) and none reached B's state.
    let sum = |f: fn(&Simulator) -> u64| f(&alone) + f(&b_alone);
    assert_eq!(both.counters.acks, sum(|s| s.counters.acks));
    assert_eq!(both.counters.nacks, sum(|s| s.counters.nacks));
    assert_eq!(both.counters.timeouts, sum(|s| s.counters.timeouts));
    assert_eq!(both.counters.retx_packets, sum(|s| s.counters.retx_packets));
    assert_eq!(both.flows[1].retx_packets, b_alone.flows[0].retx_packets);
    assert_eq!(both.delivered_bytes(1), 200 * MTU);
}
