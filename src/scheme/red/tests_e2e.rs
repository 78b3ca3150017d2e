//! RED through the real forwarding path: a 2-to-1 incast on a star. Expected values are
//! derived by hand in the comments.

use crate::cc::CcConfig;
use crate::cc::none::{NoneParams, NoneWindow};
use crate::config::BufferMode;
use crate::registry::NetConfig;
use crate::sim::Simulator;
use crate::topology::shapes;
use crate::units::{GBPS, US};
use crate::workload::FlowSpec;

/// min_th and max_th of the test, bytes.
const MIN_TH: u64 = 10_000;
const MAX_TH: u64 = 20_000;

/// Hosts 1 and 2 each send 200 KB to host 0 at line rate (no congestion control, no window)
/// on a 3-host star (100 Gb/s, 1 µs links); the switch is node 3 and its port 0 faces host
/// 0 (monitored). The shared buffer (lossy, 1 GiB) never refuses a packet here.
fn run(red: bool) -> Simulator {
    let mut cfg = NetConfig::from(crate::config::CoreConfig {
        seed: 3,
        ..Default::default()
    });
    cfg.buffer.mode = BufferMode::Lossy;
    cfg.buffer.size_bytes = 1 << 30;
    cfg.queue_monitor = vec![(3, 0)];
    if red {
        let c = &mut cfg.schemes.red;
        c.enabled = true;
        c.min_th_bytes = Some(MIN_TH);
        c.max_th_bytes = Some(MAX_TH);
        c.max_p = 0.1;
        c.weight = 1.0;
    }
    let flows: Vec<FlowSpec> = [1u32, 2]
        .iter()
        .map(|&src| FlowSpec {
            src,
            dst: 0,
            size_bytes: 200_000,
            start_ps: 0,
            prio: 3,
            dport: 200,
        })
        .collect();
    let topo = shapes::star(3, 100 * GBPS, US).unwrap();
    let cc = CcConfig::None(NoneParams {
        window: NoneWindow::Unlimited,
    });
    let mut s = Simulator::new(topo, cfg, cc, &flows).unwrap();
    s.run_quiet();
    s.finish();
    s.check_invariants().unwrap();
    s
}

/// Without RED: two line-rate senders into one line-rate port build a standing queue of about
/// half of the 400 KB (one sender's worth), and nothing is dropped.
///
/// With RED and weight w = 1 the average *is* the queue an arrival finds (a non-empty queue:
/// avg = q; an empty one: avg decays to 0 — or stays, for zero idle time, at a value some
/// earlier arrival saw). A data packet is queued only if avg < max_th, so it joins either a
/// queue of q < max_th bytes or an empty one: the queue never holds max_th + one full packet
/// (1048 B) or more. Below min_th nothing is dropped, so the queue must reach min_th before
/// the first drop: its peak is in [min_th, max_th + 1048). The drops are RED's (the buffer
/// never refuses), forced ones among them (two senders at line rate push the queue up by a
/// packet per packet time, faster than early drops at p_b ≤ 0.1 thin it), and the flows
/// still complete through loss recovery.
#[test]
fn incast_queue_is_held_below_max_th() {
    let base = run(false);
    let pkt = base.cfg.max_packet_bytes();
    assert_eq!(pkt, 1048);
    assert_eq!(base.counters.drops, 0);
    assert_eq!(base.counters.flows_completed, 2);
    let base_peak = base.queue_mon.peak(0);
    assert!(
        base_peak > 150_000,
        "standing queue without RED: {base_peak} B"
    );
    assert_eq!(base.scheme_stat("red", "forced_drops"), 0);

    let s = run(true);
    let peak = s.queue_mon.peak(0);
    let forced = s.scheme_stat("red", "forced_drops");
    let early = s.scheme_stat("red", "early_drops");
    eprintln!(
        "red: peak {peak} B (without: {base_peak} B), forced {forced}, early {early}, drops {}",
        s.counters.drops
    );
    assert!(
        (MIN_TH..MAX_TH + pkt).contains(&peak),
        "peak queue {peak} B outside [{MIN_TH}, {})",
        MAX_TH + pkt
    );
    assert!(forced > 0, "no forced drop");
    assert_eq!(s.counters.drops, forced + early, "every drop is RED's");
    assert_eq!(s.counters.flows_completed, 2);
}
