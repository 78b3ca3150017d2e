//! Link failures (`[[event]]`, `[routing]`, HPCC-sim `LINK_DOWN`): a flow whose path fails
//! mid-transfer completes over the other path after a retransmission timeout, with the FCT
//! and the packets lost derived by hand; bad events are errors naming file, line and key.
//!
//! The network: hosts A (0) and B (1); switches S0 (2), S1 (3), S2 (4), S4 (5), S3 (6). Two
//! paths from A to B: A–S0–S1–S3–B (4 links, the only shortest one) and A–S0–S2–S4–S3–B (5
//! links). Every link 8 Gb/s, 1 µs; no switch or NIC delay; HPCC framing. So a 1000 B data
//! packet (1048 B on the wire) takes T = 1048·8/8 = 1048 ns to serialize, an ACK (60 B)
//! A = 60 ns, and a link D = 1000 ns; a packet is stored and forwarded at every switch.
//!
//! One flow A → B of 10 packets (10,000 B) starts at 0 at line rate (no congestion control,
//! no window), Go-Back-N with a 100 µs timeout. The link S1–S3 goes down at t_f = 10 µs;
//! routing follows 5 µs later (15 µs).
//!
//! Data packet k (0..9) leaves A at k·T and reaches S1 at k·T + 2(T + D), S3 at
//! k·T + 3(T + D), B at k·T + 4(T + D) = k·1048 + 8192 ns.
//! * k = 0..3 cross S1–S3 before t_f (k = 3 reaches S3 at 3144 + 6144 = 9288 ns) and reach
//!   B: B's in-order data ends at seq 4000.
//! * k = 4, 5 are on the S1–S3 wire at t_f (they left S1 at 8288 and 9336 ns, would reach S3
//!   at 10336 and 11384 ns): lost with the link.
//! * k = 6..9 leave S1 (10384 … 13528 ns) onto the dead link before the tables change at
//!   15 µs: lost.
//!
//! B's ACK of packet k leaves B at k·T + 8192 ns and reaches S3 at k·T + 8192 + (A + D) =
//! k·T + 9252 ns, then crosses S3–S1 until k·T + 10312 ns. ACK 0 is on that wire at t_f
//! (9252 < 10000 < 10312): lost; ACKs 1..3 reach S3 at 10300 … 12396 ns, before the tables
//! change, and go onto the dead link: lost. So A hears nothing: 6 data packets + 4 ACKs =
//! 10 packets lost to the dead link, and A's timer, started with the first packet at 0 and
//! never restarted (no ACK), fires at R = 100 µs.
//!
//! Go-Back-N resends packets 0..9 from R, back to back, over the long path (the only one
//! after 15 µs): packet k reaches B at R + k·T + 5(T + D); B acknowledges each (0..3 as
//! duplicates, with its cumulative 4000), and the ACK of packet 9 (cumulative 10,000: the
//! flow is done) reaches A 5(A + D) later:
//! FCT = R + 9·T + 5(T + D) + 5(A + D) = 100,000 + 9432 + 10,240 + 5300 = 124,972 ns.

mod common;

use common::TempDir;
use sfc::sim::Simulator;
use sfc::workload::FlowSpec;

const TOPOLOGY: &str = "\
7 5 7
2 3 4 5 6
0 2 8Gbps 1000ns 0
2 3 8Gbps 1000ns 0
3 6 8Gbps 1000ns 0
6 1 8Gbps 1000ns 0
2 4 8Gbps 1000ns 0
4 5 8Gbps 1000ns 0
5 6 8Gbps 1000ns 0
";

const NS: u64 = 1000;

/// The scenario of the module docs, with `events` (TOML) in place of its one failure.
fn scenario_text(events: &str) -> String {
    format!(
        r#"name = "lf"
stop = "1ms"
[topology]
kind = "file"
file = "topo.txt"
[buffer]
mode = "lossy"
[loss_recovery]
kind = "gbn"
rto = "100us"
[cc]
kind = "none"
window = "none"
[routing]
reconverge_delay = "5us"
{events}
[[traffic]]
kind = "incast"
senders = [0]
receivers = [1]
size = "10000"
at = "0us"
"#
    )
}

const FAILURE: &str = r#"
[[event]]
kind = "link_down"
at = "10us"
link = [3, 6]
"#;

fn load(dir: &TempDir, text: &str) -> Result<sfc::scenario::Scenario, String> {
    dir.write("topo.txt", TOPOLOGY);
    sfc::scenario::from_str(text, "s.toml", dir.path(), &[])
}

/// Run the scenario's network on the one flow A → B of the module docs.
fn run(text: &str) -> Simulator {
    let dir = TempDir::new("link-failure");
    let sc = load(&dir, text).unwrap();
    let flows = [FlowSpec::background(0, 1, 10_000, 0)];
    let mut sim = Simulator::new(sc.topo, sc.net, sc.cc, &flows).unwrap();
    sim.run_quiet();
    sim.finish();
    sim.check_invariants().unwrap();
    sim
}

#[test]
fn a_flow_whose_path_fails_completes_over_the_other_path_after_a_timeout() {
    let sim = run(&scenario_text(FAILURE));
    let r = sim.flow_record(0);
    let (t, a, d, rto) = (1048 * NS, 60 * NS, 1000 * NS, 100_000 * NS);
    assert_eq!(r.fct_ps, Some(rto + 9 * t + 5 * (t + d) + 5 * (a + d)));
    assert_eq!(sim.counters.timeouts, 1);
    assert_eq!(sim.counters.retx_packets, 10);
    // The ideal FCT stays that of the paths with every link up.
    let intact = run(&scenario_text(""));
    assert_eq!(r.ideal_fct_ps, intact.flow_record(0).ideal_fct_ps);
    // Without the failure: 4 links out, 4 back, no loss.
    assert_eq!(
        intact.flow_record(0).fct_ps,
        Some(9 * t + 4 * (t + d) + 4 * (a + d))
    );
    assert!(intact.failures.is_none());
}

#[test]
fn the_packets_lost_are_those_on_and_sent_to_the_dead_link() {
    let sim = run(&scenario_text(FAILURE));
    let f = sim.failures.as_ref().unwrap();
    // Data 4, 5 on the wire, 6..9 sent onto it; ACK 0 on the wire, ACKs 1..3 sent onto it.
    assert_eq!(f.link_drops, 6 + 4);
    assert_eq!((f.changes, f.reroutes), (1, 1));
    assert_eq!(sim.counters.drops, 0);
    let s = sim.failure_summary().unwrap();
    assert_eq!(s["link_drops"], 10);
    assert_eq!(s["links_down_at_end"], 1);
}

/// The link comes back at 12 µs, before the tables change (15 µs): packets 7..9 (leaving S1
/// at 11432, 12480, 13528 ns) cross it again — 6 lost at 10384 ns, 7 at 11432 ns is sent
/// onto the dead link too, 8 and 9 get through; ACKs 1 (S3 at 10300 ns) and 2 (11348 ns)
/// are lost, ACK 3 (12396 ns) gets through. B, holding 0..3, receives 8 and 9 out of order
/// and NACKs 4000; A goes back to 4000 and the flow completes without a timeout. The
/// losses: data 4..7, ACKs 0..2 = 7.
#[test]
fn a_link_back_up_before_routing_changes_carries_traffic_again() {
    let events = r#"
[[event]]
kind = "link_down"
at = "10us"
link = [3, 6]
[[event]]
kind = "link_up"
at = "12us"
link = [6, 3]
"#;
    let sim = run(&scenario_text(events));
    let f = sim.failures.as_ref().unwrap();
    assert_eq!(f.link_drops, 4 + 3);
    assert_eq!((f.changes, f.reroutes), (2, 2));
    assert!(sim.flow_record(0).fct_ps.is_some());
    assert_eq!(sim.counters.timeouts, 0);
    assert_eq!(sim.failure_summary().unwrap()["links_down_at_end"], 0);
}

fn error_of(events: &str) -> String {
    let dir = TempDir::new("link-failure-err");
    match load(&dir, &scenario_text(events)) {
        Ok(_) => panic!("accepted: {events}"),
        Err(e) => e,
    }
}

fn assert_error(events: &str, needles: &[&str]) {
    let e = error_of(events);
    for n in needles {
        assert!(e.contains(n), "error {e:?} lacks {n:?}");
    }
}

#[test]
fn bad_events_are_errors_naming_file_line_and_key() {
    // Line numbers: the event table starts on line 16 of the scenario text.
    assert_error(
        "[[event]]\nkind = \"link_flap\"\nat = \"10us\"\nlink = [3, 6]\n",
        &[
            "s.toml:17",
            "event[0].kind",
            "expected link_down or link_up",
        ],
    );
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"10us\"\nlink = [0, 1]\n",
        &[
            "s.toml:19",
            "event[0].link",
            "no link between nodes 0 and 1",
        ],
    );
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"10us\"\nlink = [3, 60]\n",
        &["s.toml:19", "event[0].link", "node 60 does not exist"],
    );
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"10us\"\nlink = [3]\n",
        &["s.toml:19", "event[0].link", "two end nodes"],
    );
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"2ms\"\nlink = [3, 6]\n",
        &["s.toml:18", "event[0].at", "not before the stop time"],
    );
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"soon\"\nlink = [3, 6]\n",
        &["s.toml:18", "event[0].at"],
    );
    assert_error(
        "[[event]]\nkind = \"link_up\"\nat = \"10us\"\nlink = [3, 6]\n",
        &["s.toml:17", "event[0].kind", "already up"],
    );
    // The second `link_down` of the same link (either direction) before it came back up.
    let twice = format!("{FAILURE}[[event]]\nkind = \"link_down\"\nat = \"20us\"\nlink = [6, 3]\n");
    assert_error(&twice, &["event[1].kind", "already down"]);
    assert_error(
        "[[event]]\nkind = \"link_down\"\nat = \"10us\"\nlink = [3, 6]\nport = 1\n",
        &["s.toml", "unknown field `port`"],
    );
    let dir = TempDir::new("link-failure-routing");
    let text = scenario_text(FAILURE).replace("reconverge_delay", "reconverge");
    let e = load(&dir, &text).err().unwrap();
    assert!(
        e.contains("s.toml") && e.contains("line 15") && e.contains("unknown field `reconverge`"),
        "{e}"
    );
}

/// Events applied in time order, not file order: a `link_up` listed first but later is fine.
#[test]
fn events_are_checked_in_time_order() {
    let events = r#"
[[event]]
kind = "link_up"
at = "20us"
link = [3, 6]
[[event]]
kind = "link_down"
at = "10us"
link = [3, 6]
"#;
    let dir = TempDir::new("link-failure-order");
    let sc = load(&dir, &scenario_text(events)).unwrap();
    assert_eq!(sc.net.failures.events.len(), 2);
    assert_eq!(sc.net.failures.reconverge_delay_ps, 5_000 * NS);
}

const STAR2: &str = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n";
const STAR2_FLOWS: &str = "3\n\
0 1 3 100 1000 2.000000000\n\
0 1 3 100 2000 2.001000000\n\
0 1 3 100 10000 2.002000000\n";

/// `sfc hpcc` with `line` as the config's 8th line (after `SIMULATOR_STOP_TIME 2.01`):
/// (success, stderr, the FCT file).
fn hpcc(tag: &str, line: &str) -> (bool, String, String) {
    let d = TempDir::new(tag);
    d.write("topology.txt", STAR2);
    d.write("flow.txt", STAR2_FLOWS);
    d.write(
        "config.txt",
        &format!(
            "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
             CC_MODE none\nHAS_WIN 0\nBUFFER_MODE lossy\nSIMULATOR_STOP_TIME 2.01\n{line}\n"
        ),
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sfc"))
        .arg("hpcc")
        .arg("config.txt")
        .current_dir(d.path())
        .output()
        .unwrap();
    let fct = std::fs::read_to_string(d.join("fct.txt")).unwrap_or_default();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        fct,
    )
}

/// HPCC-sim's `LINK_DOWN 1500 0 2`: host 0's only link goes down at 2 s + 1500 µs, after the
/// flows of 2.000 s and 2.001 s finished (a few µs each) and before the one of 2.002 s
/// starts: two FCTs, the third flow never finishes. `time_us` 0 is no failure whatever the
/// nodes say (HPCC-sim: `if (link_down_time > 0)`).
#[test]
fn hpcc_link_down_takes_the_link_down_at_two_seconds_plus_time_us() {
    let (ok, err, fct) = hpcc("lf-hpcc", "LINK_DOWN 1500 0 2");
    assert!(ok, "{err}");
    let sizes: Vec<&str> = fct
        .lines()
        .map(|l| l.split_whitespace().nth(4).unwrap())
        .collect();
    assert_eq!(sizes, ["1000", "2000"], "{fct}");
    let (ok, err, fct) = hpcc("lf-hpcc-none", "LINK_DOWN 0 5 7");
    assert!(ok, "{err}");
    assert_eq!(fct.lines().count(), 3, "{fct}");
}

#[test]
fn hpcc_bad_link_down_is_an_error_naming_the_key() {
    for (line, needle) in [
        (
            "LINK_DOWN 1500 0 1",
            "there is no link between nodes 0 and 1",
        ),
        (
            "LINK_DOWN 1500 0 x",
            "dst `x` is not a non-negative integer",
        ),
        (
            "LINK_DOWN -1 0 2",
            "time_us `-1` is not a non-negative integer",
        ),
        ("LINK_DOWN 20000 0 2", "not before SIMULATOR_STOP_TIME"),
    ] {
        let (ok, err, _) = hpcc("lf-hpcc-err", line);
        assert!(!ok, "{line} accepted");
        assert!(
            err.contains(&format!("config.txt:8: `{line}`: ")) && err.contains(needle),
            "{line}: {err}"
        );
    }
}

/// A leaf–spine (3 ToRs of 4 hosts, 2 spines, 100 Gb/s, lossless PFC, 1 MiB buffers, no
/// congestion control) where the link ToR 12 – spine 15 fails at 20 µs while the hosts of
/// ToRs 13 and 14 send long flows to those of ToR 12. Hosts are nodes 0..11 (host `i` under
/// ToR `12 + i / 4`), the spines 15 and 16.
fn clos_bounce(local_repair: bool) -> String {
    format!(
        r#"name = "bounce"
stop = "5ms"
[topology]
kind = "leaf_spine"
spines = 2
tors = 3
hosts_per_tor = 4
host_rate = "100Gbps"
[buffer]
mode = "lossless"
size = "1MiB"
[loss_recovery]
kind = "gbn"
rto = "1000s"
[cc]
kind = "none"
window = "none"
[routing]
reconverge_delay = "100ms"
local_repair = {local_repair}
[[event]]
kind = "link_down"
at = "20us"
link = [12, 15]
[[traffic]]
kind = "long_lived"
pairs = [[4, 0], [5, 1], [6, 2], [7, 3], [8, 0], [9, 1], [10, 2], [11, 3]]
size = "100MB"
"#
    )
}

/// Bounce routing: with `local_repair`, spine 15 sends ToR 12's traffic down to ToR 13 or
/// 14 at once, and those, still on their old tables (the fabric reconverges only after
/// 100 ms), send part of it up to spine 15 again: flows whose ECMP hash at ToR 13 (or 14)
/// picks spine 15 loop between the two. The loop's queues fill, each end pauses the other,
/// and the existing PFC deadlock detector finds the cycle (the run stops with status 3).
/// Without local repair spine 15 keeps its dead port until the fabric reconverges: the
/// packets routed to it are lost, nothing loops, no deadlock.
#[test]
fn bounce_routing_after_a_failure_deadlocks_a_lossless_clos() {
    let d = TempDir::new("link-failure-bounce");
    let run = |name: &str, local: bool| {
        d.write(&format!("{name}.toml"), &clos_bounce(local));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_sfc"))
            .current_dir(d.path())
            .args(["run", &format!("{name}.toml"), "--out", name])
            .output()
            .unwrap();
        let s: serde_json::Value =
            serde_json::from_str(&d.read(&format!("{name}/summary.json"))).unwrap();
        (o.status.code(), s)
    };
    let (code, s) = run("bounce", true);
    assert_eq!(code, Some(3), "{s}");
    let dl = &s["pfc"]["deadlocks"];
    assert!(dl["count"].as_u64().unwrap() >= 1, "{dl}");
    // The cycle runs through spine 15 and a ToR (13 or 14) that bounces traffic back.
    let cycle = dl["cycles"][0]["cycle"].as_str().unwrap();
    assert!(cycle.contains("15:"), "{cycle}");
    assert!(cycle.contains("13:") || cycle.contains("14:"), "{cycle}");
    assert_eq!(s["failures"]["reroutes"], 0);

    let (code, s) = run("no-repair", false);
    assert_eq!(s["pfc"]["deadlocks"]["count"], 0, "{s}");
    assert_ne!(code, Some(3));
    assert!(s["failures"]["link_drops"].as_u64().unwrap() > 0, "{s}");
}
