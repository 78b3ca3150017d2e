//! NDP through the real forwarding path and NICs: trimming and Return-To-Sender at a switch,
//! pull pacing, and an N→1 incast. Expected values are derived by hand in the comments.

use crate::cc::CcConfig;
use crate::cc::none::{NoneParams, NoneWindow};
use crate::engine::packet::{DataHdr, Header, Marks, Packet, WireHeader};
use crate::registry::NetConfig;
use crate::scheme::ndp::wire::{NdpHdr, NdpKind};
use crate::scheme::ndp::{HIGH_QUEUE, LOW_QUEUE};
use crate::sim::Simulator;
use crate::topology::shapes;
use crate::units::{GBPS, US};
use crate::workload::FlowSpec;

fn ndp_cfg(seed: u64) -> NetConfig {
    let mut cfg = NetConfig::from(crate::config::CoreConfig {
        seed,
        ..Default::default()
    });
    cfg.schemes.ndp.enabled = true;
    cfg
}

/// The NDP host half of a run.
fn ndp_host(s: &mut Simulator) -> &mut crate::scheme::ndp::host::NdpHost {
    s.host_schemes
        .iter_mut()
        .find_map(|h| match h {
            crate::registry::HostScheme::Ndp(n) => Some(n),
            _ => None,
        })
        .expect("NDP runs")
}

fn line_rate() -> CcConfig {
    CcConfig::None(NoneParams {
        window: NoneWindow::Unlimited,
    })
}

fn sim(hosts: u32, cfg: NetConfig, flows: &[FlowSpec]) -> Simulator {
    let topo = shapes::star(hosts, 100 * GBPS, US).unwrap();
    Simulator::new(topo, cfg, line_rate(), flows).unwrap()
}

/// A full data packet of 1000 B payload from host `src` to host `dst` (1048 B on the wire
/// with HPCC framing: 1000 + 48).
fn data(src: u32, dst: u32, seq: u64) -> Packet {
    Packet {
        src,
        dst,
        flow: 0,
        size: 1048,
        sport: 10000,
        dport: 100,
        in_port: 0,
        prio: 3,
        marks: Marks::NONE,
        hdr: Header::Data(DataHdr {
            seq,
            payload: 1000,
            ..DataHdr::default()
        }),
    }
}

/// Star of 2 hosts (switch node 2, port i faces host i). Host 0 sends to host 1; the
/// switch's port 1 is kept busy so nothing leaves. Capacity of each queue: 8 × 1048 = 8384 B.
/// Packets 1–8 fill the low queue exactly (8 × 1048 = 8384 ≤ 8384). The 9th (8384 + 1048 >
/// 8384) trims one of the two candidates — itself or the 8th (the tail) — to a 64 B header in
/// the high queue; the low queue keeps 8 packets (the other candidate last). With the high
/// queue full (131 × 64 = 8384 B of headers), the next trimmed header is returned: source and
/// destination swapped, queued in the high queue of port 0 toward host 0.
#[test]
fn trimming_queue_of_eight_and_return_to_sender() {
    let mut outcomes = [false; 2];
    for seed in 1..=16 {
        let mut s = sim(2, ndp_cfg(seed), &[]);
        let (sw, egress) = (0usize, 1u16);
        s.switches[sw].ports[1].tx.busy_until_ps = u64::MAX / 2;
        for k in 0..8u64 {
            let p = s.arena.alloc(data(0, 1, k * 1000));
            s.switch_receive(sw, 0, p, egress);
        }
        let port = &s.switches[sw].ports[1];
        assert_eq!(port.queues[LOW_QUEUE].pkts.len(), 8);
        assert_eq!(port.queues[LOW_QUEUE].bytes, 8 * 1048);
        assert_eq!(port.queues[HIGH_QUEUE].bytes, 0);
        // The 9th arrival.
        let p = s.arena.alloc(data(0, 1, 8000));
        s.switch_receive(sw, 0, p, egress);
        let port = &s.switches[sw].ports[1];
        assert_eq!(port.queues[LOW_QUEUE].pkts.len(), 8, "seed {seed}");
        assert_eq!(port.queues[HIGH_QUEUE].pkts.len(), 1);
        assert_eq!(port.queues[HIGH_QUEUE].bytes, 64);
        let h = *s.arena.get(port.queues[HIGH_QUEUE].pkts[0]);
        let Some(n) = NdpHdr::of(&h) else {
            panic!("not a header")
        };
        assert_eq!(
            (n.kind, n.bounced, n.payload, h.size),
            (NdpKind::Header, false, 1000, 64)
        );
        let last = s.arena.get(*port.queues[LOW_QUEUE].pkts.back().unwrap());
        let last_seq = last.data().unwrap().seq;
        match n.seq {
            8000 => assert_eq!(last_seq, 7000, "arrival trimmed: the 8th stays the tail"),
            7000 => assert_eq!(last_seq, 8000, "tail trimmed: the 9th took its place"),
            x => panic!("trimmed seq {x} is neither candidate"),
        }
        outcomes[(n.seq == 7000) as usize] = true;
        assert_eq!(s.scheme_stat("ndp", "trims"), 1);
        // Fill the high queue: 130 more headers → 131 × 64 = 8384 B, exactly full.
        for k in 0..130u64 {
            let mut hp = data(0, 1, 100_000 + k * 1000);
            crate::scheme::ndp::switch::trim(&mut hp, 64);
            let p = s.arena.alloc(hp);
            s.switch_receive(sw, 0, p, egress);
        }
        assert_eq!(s.switches[sw].ports[1].queues[HIGH_QUEUE].bytes, 131 * 64);
        assert_eq!(s.scheme_stat("ndp", "rts"), 0);
        // The next arrival trims again; its header finds the high queue full → RTS.
        let p = s.arena.alloc(data(0, 1, 9000));
        s.switch_receive(sw, 0, p, egress);
        assert_eq!(s.scheme_stat("ndp", "trims"), 2);
        assert_eq!(s.scheme_stat("ndp", "rts"), 1);
        assert_eq!(s.switches[sw].ports[1].queues[HIGH_QUEUE].bytes, 131 * 64);
        // Port 0 is idle: the returned header is already on the wire toward host 0.
        assert_eq!(s.switches[sw].ports[0].tx.link.tx_bytes, 64);
        // A returned header never bounces twice, and control packets are dropped: a PULL to
        // host 1 (through the full port 1) is dropped.
        let pull = Packet {
            src: 0,
            dst: 1,
            size: 64,
            prio: 3,
            hdr: NdpHdr {
                kind: NdpKind::Pull,
                ..NdpHdr::default()
            }
            .header(),
            ..Packet::default()
        };
        let p = s.arena.alloc(pull);
        s.switch_receive(sw, 0, p, egress);
        assert_eq!(s.scheme_stat("ndp", "control_drops"), 1);
        assert_eq!(s.scheme_stat("ndp", "drops_pull"), 1);
        s.check_invariants().unwrap();
    }
    assert_eq!(
        outcomes,
        [true, true],
        "both coin outcomes happen over 16 seeds"
    );
}

/// K = 4 senders × 400 KB into host 0 (star, 100 Gb/s, 1 µs links). Once the initial windows
/// are absorbed, the receiver's pacer is always backlogged and sends one pull per wire time
/// of a full data packet: 1048 B × 8 / 100 Gb/s = 83.84 ns, truncated to whole ns by HPCC
/// framing: 83 ns. Each pull brings one 1048 B packet, so the downlink carries 1000 payload
/// bytes per 83 ns: goodput = 8000 / 83 ns = 96.39 Gb/s — the line rate minus the 48 B of
/// headers per packet (HPCC framing's truncation makes the wire 101 Gb/s).
#[test]
fn pulls_are_paced_at_the_receiver_link_rate() {
    let k = 4u32;
    let flows: Vec<FlowSpec> = (1..=k)
        .map(|i| FlowSpec {
            src: i,
            dst: 0,
            size_bytes: 400_000,
            start_ps: 0,
            prio: 3,
            dport: 100,
        })
        .collect();
    let mut s = sim(k + 1, ndp_cfg(1), &flows);
    ndp_host(&mut s).pull_log = Some(Vec::new());
    let gap = s.cfg.framing.ser_ps(1048, 100 * GBPS);
    assert_eq!(gap, 83_000);
    // Steady state: from 20 µs (well after the first RTT, ~4.4 µs) to 60 µs (the flows need
    // 1.6 MB × 83 ns / 1000 B ≈ 133 µs).
    s.cfg.stop_ps = 20 * US;
    s.run_quiet();
    let b1 = s.counters.delivered_bytes;
    s.cfg.stop_ps = 60 * US;
    s.run_quiet();
    let b2 = s.counters.delivered_bytes;
    let goodput_bps = (b2 - b1) as f64 * 8.0 / 40e-6;
    let expect = 8000.0 / 83e-9;
    assert!(
        (goodput_bps - expect).abs() < 0.01 * expect,
        "goodput {goodput_bps:.4e} vs {expect:.4e}"
    );
    let log = ndp_host(&mut s).pull_log.clone().unwrap();
    let steady: Vec<u64> = log
        .iter()
        .filter(|&&(h, t)| h == 0 && (20 * US..60 * US).contains(&t))
        .map(|&(_, t)| t)
        .collect();
    assert!(steady.len() > 400, "{} pulls", steady.len());
    for w in steady.windows(2) {
        assert_eq!(w[1] - w[0], gap, "pull spacing");
    }
    s.cfg.stop_ps = u64::MAX;
    s.run_quiet();
    s.finish();
    assert_eq!(s.counters.flows_completed, k as u64);
    // Fairness: the per-flow round-robin pull queue makes the four finish together (within
    // 5 µs of ≈ 137 µs: the initial windows reach the receiver in a different order).
    let fcts: Vec<u64> = s.flow_records().iter().map(|r| r.fct_ps.unwrap()).collect();
    let (lo, hi) = (*fcts.iter().min().unwrap(), *fcts.iter().max().unwrap());
    assert!(hi - lo < 5 * US, "fcts {fcts:?}");
}

/// N = 64 senders × 64 KB into host 0 (star, 100 Gb/s, 1 µs links). Base RTT ≈ 4 × 1 µs +
/// serializations ≈ 4.2 µs, so the initial window (1 BDP) is ≈ 52 KB: 64 × 52 ≈ 3300
/// packets hit the receiver's port in the first RTT, the low queue keeps 8 and the rest are
/// trimmed; headers beyond the 131 the high queue holds are returned to their senders.
///
/// Bound: the receiver's downlink carries each data packet once in full (64 × 64 packets ×
/// 83 ns = 340 µs; a trimmed copy's retransmission is the one that gets through) plus the
/// trimmed headers that reach the receiver (one NACK each, 64 B = 6 ns; returned headers never
/// reach it). It is busy from the first arrival (≈ RTT/2) on — the initial windows keep it
/// busy during the first RTT, pulls at line rate afterwards — and the last pulled packet
/// arrives about one RTT after its pull. So T ≤ 64·64·83 ns + NACKs·6 ns + 3 RTT (3 × 4.16 µs:
/// half an RTT at the start, one for the last pull's round trip, the rest margin for pacer
/// idle gaps while returned packets wait for pulls).
/// Zero data lost: every flow completes with every byte delivered, no timeout, no control
/// drop, and each trim causes exactly one retransmission (retx = trims).
#[test]
fn incast_64_to_1_finishes_near_line_rate_with_no_loss() {
    let n = 64u32;
    let size = 64_000u64;
    let flows: Vec<FlowSpec> = (1..=n)
        .map(|i| FlowSpec {
            src: i,
            dst: 0,
            size_bytes: size,
            start_ps: 0,
            prio: 3,
            dport: 200,
        })
        .collect();
    let mut s = sim(n + 1, ndp_cfg(7), &flows);
    let rtt = s.base_rtt_ps;
    s.run_quiet();
    s.finish();
    s.check_invariants().unwrap();
    assert_eq!(s.counters.flows_completed, n as u64);
    assert_eq!(s.counters.delivered_bytes, n as u64 * size);
    let trims = s.scheme_stat("ndp", "trims");
    let rts = s.scheme_stat("ndp", "rts");
    assert!(trims > 1000, "trims {trims}");
    assert!(rts > 0, "rts {rts}");
    assert_eq!(s.scheme_stat("ndp", "control_drops"), 0);
    assert_eq!(s.counters.timeouts, 0);
    assert_eq!(
        s.counters.retx_packets, trims,
        "each trim → one retransmission"
    );
    let t_end = s
        .flow_records()
        .iter()
        .map(|r| r.start_ps + r.fct_ps.unwrap())
        .max()
        .unwrap();
    let pkt = s.cfg.framing.ser_ps(1048, 100 * GBPS);
    let hdr = s.cfg.framing.ser_ps(64, 100 * GBPS);
    let nacks = s.scheme_stat("ndp", "nacks");
    let bound = n as u64 * size.div_ceil(1000) * pkt + nacks * hdr + 3 * rtt;
    eprintln!(
        "incast 64: last FCT {} ns, bound {} ns, ideal {} ns, trims {trims}, rts {rts}, rtt {} ns",
        t_end / 1000,
        bound / 1000,
        n as u64 * size.div_ceil(1000) * pkt / 1000,
        rtt / 1000
    );
    assert!(
        t_end <= bound,
        "last flow ends at {t_end} ps > bound {bound} ps"
    );
}

/// `ndp.control_queue` sizes the header queue alone: with 640 B (10 headers of 64 B) and the
/// data queue unchanged (8 × 1048 B), ten trimmed headers fit and the eleventh is returned to
/// its sender, while the data queue still holds 8 packets.
#[test]
fn control_queue_size_is_its_own() {
    let mut cfg = ndp_cfg(1);
    cfg.schemes.ndp.control_queue_bytes = 640;
    let mut s = sim(2, cfg, &[]);
    let (sw, egress) = (0usize, 1u16);
    s.switches[sw].ports[1].tx.busy_until_ps = u64::MAX / 2;
    for k in 0..8u64 {
        let p = s.arena.alloc(data(0, 1, k * 1000));
        s.switch_receive(sw, 0, p, egress);
    }
    for k in 0..10u64 {
        let mut hp = data(0, 1, 100_000 + k * 1000);
        crate::scheme::ndp::switch::trim(&mut hp, 64);
        let p = s.arena.alloc(hp);
        s.switch_receive(sw, 0, p, egress);
    }
    let port = &s.switches[sw].ports[1];
    assert_eq!(port.queues[LOW_QUEUE].bytes, 8 * 1048);
    assert_eq!(port.queues[HIGH_QUEUE].bytes, 640);
    assert_eq!(s.scheme_stat("ndp", "rts"), 0);
    let mut hp = data(0, 1, 200_000);
    crate::scheme::ndp::switch::trim(&mut hp, 64);
    let p = s.arena.alloc(hp);
    s.switch_receive(sw, 0, p, egress);
    assert_eq!(s.scheme_stat("ndp", "rts"), 1);
    assert_eq!(s.switches[sw].ports[1].queues[HIGH_QUEUE].bytes, 640);
    // Smaller than one header: refused by the range check.
    let mut c = ndp_cfg(1).schemes.ndp;
    c.control_queue_bytes = 63;
    assert!(
        c.issues(3)
            .iter()
            .any(|(k, m)| *k == "ndp.control_queue" && m.contains("holds no header"))
    );
}

/// The sender's service order (`ndp.sender_rr`): host 0 sends two 20 KB flows, to hosts 1
/// and 2, both inside the initial window (1 BDP ≈ 52 KB), so its NIC sends all 40 packets
/// back to back, one per 83 ns (1048 B at 100 Gb/s, HPCC framing), and the two paths are
/// alike. Round robin (the SFC paper's NDP) alternates the flows: the first flow's first
/// packet leaves at 0 before the second flow's start is handled, which then joins the ready
/// list after the last-served QP and is served next (HPCC-sim's `m_rrlast` rule), so the
/// first flow's packets take slots 0, 2, …, 38 and the second's 1, 3, …, 39: the completions
/// are 83 ns apart.
/// FIFO (the original NDP) sends one flow's 20 packets first: 20 × 83 = 1,660 ns apart.
#[test]
fn sender_round_robin_or_fifo() {
    for (rr, gap_ns) in [(false, 1_660u64), (true, 83)] {
        let mut cfg = ndp_cfg(1);
        cfg.schemes.ndp.sender_rr = rr;
        let flows: Vec<FlowSpec> = [1u32, 2]
            .iter()
            .map(|&d| FlowSpec {
                src: 0,
                dst: d,
                size_bytes: 20_000,
                start_ps: 0,
                prio: 3,
                dport: 100,
            })
            .collect();
        let mut s = sim(3, cfg, &flows);
        s.run_quiet();
        s.finish();
        assert_eq!(s.counters.flows_completed, 2);
        assert_eq!(s.counters.retx_packets, 0, "nothing trimmed");
        let f: Vec<u64> = s.flow_records().iter().map(|r| r.fct_ps.unwrap()).collect();
        assert_eq!(
            f[0].abs_diff(f[1]),
            gap_ns * 1_000,
            "sender_rr = {rr}: fcts {f:?}"
        );
    }
}

/// One flow of 400 packets (400 KB) across a leaf-spine with 4 spines under NDP. With
/// `ndp.spray` off the flow keeps one ECMP path: exactly one of the source ToR's 4 uplinks
/// carries its data (400 packets × 1048 B). With spraying each data packet hashes to its own
/// path: every uplink carries some, and the four split the 400 packets evenly (chi-square
/// with 3 degrees of freedom below 16.27, p ≈ 0.001, as the ECMP spreading test of
/// `tests/core.rs`). Every byte arrives either way.
#[test]
fn spraying_sends_each_packet_on_its_own_path() {
    let run = |spray: bool| {
        let topo = shapes::leaf_spine(shapes::LeafSpine {
            spines: 4,
            tors: 2,
            hosts_per_tor: 2,
            links_per_spine: 1,
            host_rate_bps: 100 * GBPS,
            host_delay_ps: US,
            fabric_rate_bps: 100 * GBPS,
            fabric_delay_ps: US,
        })
        .unwrap();
        let mut cfg = ndp_cfg(1);
        cfg.schemes.ndp.spray = spray;
        let flows = [FlowSpec {
            src: 0,
            dst: 2,
            size_bytes: 400_000,
            start_ps: 0,
            prio: 3,
            dport: 100,
        }];
        let mut s = Simulator::new(topo, cfg, line_rate(), &flows).unwrap();
        s.run_quiet();
        s.finish();
        assert_eq!(s.counters.flows_completed, 1);
        assert_eq!(s.counters.delivered_bytes, 400_000);
        // The source ToR is the first switch; its uplinks follow its 2 host ports.
        let tor = &s.switches[0];
        (2..6)
            .map(|p| tor.ports[p].tx.link.tx_bytes / 1048)
            .collect::<Vec<u64>>()
    };
    let one = run(false);
    assert_eq!(one.iter().filter(|&&n| n > 0).count(), 1, "{one:?}");
    assert_eq!(one.iter().sum::<u64>(), 400);
    let all = run(true);
    assert!(all.iter().all(|&n| n > 0), "{all:?}");
    assert_eq!(all.iter().sum::<u64>(), 400);
    let exp = 100.0;
    let chi2: f64 = all.iter().map(|&c| (c as f64 - exp).powi(2) / exp).sum();
    assert!(chi2 < 16.27, "uplink packets {all:?}, chi2 {chi2}");
}

/// Pull spacing is the pulled packet's wire time on the receiver's link over `pull_rate`,
/// in picoseconds. 1000 B on the wire at 100 Gb/s: 80 ns. At `pull_rate` 0.99 that is
/// 80,000 / 0.99 = 80,808.08 ps, rounded up to 80,809 ps (not 80 ns, which would make 0.99
/// and 1.0 the same run); at 0.5, 160 ns; at 1, the link's own 80 ns.
#[test]
fn pull_spacing_is_exact_in_picoseconds() {
    use crate::scheme::ndp::host::pull_interval_ps;
    let ser = crate::engine::packet::Framing::Hpcc.ser_ps(1000, 100 * GBPS);
    assert_eq!(ser, 80_000);
    assert_eq!(pull_interval_ps(ser, 1.0), 80_000);
    assert_eq!(pull_interval_ps(ser, 0.99), 80_809);
    assert_eq!(pull_interval_ps(ser, 0.5), 160_000);
}

/// The pacer uses that spacing: the four-sender incast of
/// `pulls_are_paced_at_the_receiver_link_rate` with `ndp.pull_rate` 0.99 spaces its
/// steady-state pulls by 83,000 / 0.99 = 83,838.4 → 83,839 ps (the link's 83 ns for a 1048 B
/// packet, scaled exactly), not the link's 83 ns.
#[test]
fn the_pacer_spaces_pulls_by_the_scaled_wire_time() {
    let flows: Vec<FlowSpec> = (1..=4)
        .map(|i| FlowSpec {
            src: i,
            dst: 0,
            size_bytes: 400_000,
            start_ps: 0,
            prio: 3,
            dport: 100,
        })
        .collect();
    let mut cfg = ndp_cfg(1);
    cfg.schemes.ndp.pull_rate = 0.99;
    let mut s = sim(5, cfg, &flows);
    ndp_host(&mut s).pull_log = Some(Vec::new());
    s.cfg.stop_ps = 60 * US;
    s.run_quiet();
    let log = ndp_host(&mut s).pull_log.clone().unwrap();
    let steady: Vec<u64> = log
        .iter()
        .filter(|&&(h, t)| h == 0 && (20 * US..60 * US).contains(&t))
        .map(|&(_, t)| t)
        .collect();
    assert!(steady.len() > 400, "{} pulls", steady.len());
    for w in steady.windows(2) {
        assert_eq!(w[1] - w[0], 83_839, "pull spacing");
    }
}
