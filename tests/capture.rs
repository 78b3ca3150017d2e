//! Packet capture (`[capture]`, `--capture`): the pcapng files `sfc run` and `sfc hpcc` write
//! are read back with tshark, and what tshark decodes — frame kinds, lengths, PSNs, ECN bits,
//! PFC quanta, timestamps — is compared with counts and times derived by hand from the
//! scenario, and with the simulator's own counters.
//!
//! tshark (Debian's package) must be installed: `.ci/run` installs it and sets
//! `SFC_REQUIRE_TSHARK=1`, which makes a missing tshark a failure; elsewhere the tshark checks
//! are skipped with a message.

mod common;
use common::{Run, TempDir, run_with_timeout};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SFC: &str = env!("CARGO_BIN_EXE_sfc");
const TIMEOUT: Duration = Duration::from_secs(60);

fn sfc(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(SFC);
    cmd.args(args).current_dir(cwd);
    run_with_timeout(cmd, TIMEOUT)
}

/// Whether tshark runs here (see the module docs).
fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("SFC_REQUIRE_TSHARK").is_none(),
            "tshark is required (SFC_REQUIRE_TSHARK is set) but does not run"
        );
        eprintln!("tshark not found: skipping the capture decoding checks");
    }
    ok
}

/// `tshark -r pcap [extra…] -T fields -e f…` rows (the display filter `filter`, if any).
fn fields(pcap: &Path, filter: &str, fs: &[&str], extra: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).args(extra);
    if !filter.is_empty() {
        cmd.args(["-Y", filter]);
    }
    cmd.args(["-T", "fields"]);
    for f in fs {
        cmd.args(["-e", f]);
    }
    let o = cmd.output().expect("run tshark");
    assert!(
        o.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// tshark decodes every frame without a malformed-packet report and without expert
/// information above "comment" (the frames' pcapng comments).
fn assert_clean(pcap: &Path, extra: &[&str]) {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).args(extra);
    let o = cmd.output().expect("run tshark");
    let listing = String::from_utf8_lossy(&o.stdout);
    assert!(
        !listing.contains("Malformed") && !listing.contains("Invalid"),
        "tshark reports malformed frames:\n{}",
        listing
            .lines()
            .filter(|l| l.contains("Malformed") || l.contains("Invalid"))
            .take(5)
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Expert severities: comment = 0x00100000, chat 0x00200000, note 0x00400000, warning
    // 0x00600000, error 0x00800000.
    for row in fields(pcap, "_ws.expert", &["_ws.expert.severity"], extra) {
        for s in row[0].split(',') {
            let v: u64 = s.parse().unwrap_or(0);
            assert!(
                v <= 0x0010_0000,
                "expert information of severity {v:#x}: {row:?}"
            );
        }
    }
}

/// A 16:1 incast of 64 KB messages on a 17-host star (hosts 0..16, switch 17, 100 Gb/s,
/// 1 µs links), no congestion control, at 10 µs; `extra` is appended.
fn incast(extra: &str) -> String {
    format!(
        r#"name = "capture"
seed = 1
[topology]
kind = "star"
hosts = 17
host_rate = "100Gbps"
host_delay = "1us"
[buffer]
mode = "unlimited"
[cc]
kind = "none"
window = "none"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
receivers = [0]
size = "64KB"
at = "10us"
sync_window = "0us"
{extra}"#
    )
}

fn summary(d: &TempDir, out: &str) -> serde_json::Value {
    serde_json::from_str(&d.read(&format!("{out}/summary.json"))).expect("summary.json")
}

/// Host 0's link during the incast: 16 × 64 data segments towards host 0 (RDMA WRITE First,
/// 62 Middle, Last per flow; 1,000-byte payloads: 14 + 20 + 8 + 12 + 1,000 + 4 = 1,058 B on
/// the wire, + 16 B of RETH on First) and as many ACKs back (62 B), every flow's PSNs 0..63 in
/// order, ECT(0) on every data frame. The first segment reaches the switch at 10 µs + 83 ns
/// (1,048 B at 100 Gb/s, truncated to whole ns as HPCC-sim does) + 1 µs and leaves on host
/// 0's link at once: 11.083 µs; the next one 83 ns later; the first ACK leaves host 0 when
/// that segment has arrived, 11.083 + 0.083 + 1 = 12.166 µs.
#[test]
fn an_incast_captured_at_the_receiver_decodes_as_rocev2_with_the_derived_counts() {
    let d = TempDir::new("capture-incast");
    d.write("s.toml", &incast(""));
    sfc(
        d.path(),
        &["run", "s.toml", "--out", "out", "--capture", "0"],
    )
    .assert_ok();
    let s = summary(&d, "out");
    assert_eq!(s["capture"]["packets"], 2048);
    assert_eq!(s["capture"]["links"], 1);
    assert_eq!(s["capture"]["capped"], false);
    let pcap = d.join("out/capture.pcapng");
    assert_eq!(
        std::fs::metadata(&pcap).unwrap().len(),
        s["capture"]["bytes"].as_u64().unwrap()
    );
    if !have_tshark() {
        return;
    }
    assert_clean(&pcap, &[]);
    let rows = fields(
        &pcap,
        "",
        &[
            "frame.time_epoch",
            "frame.len",
            "infiniband.bth.opcode",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "ip.dsfield.ecn",
            "eth.src",
            "eth.dst",
        ],
        &[],
    );
    assert_eq!(rows.len(), 2048);
    let count = |op: &str, len: &str| rows.iter().filter(|r| r[2] == op && r[1] == len).count();
    assert_eq!(count("6", "1074"), 16, "RDMA WRITE First");
    assert_eq!(count("7", "1058"), 16 * 62, "RDMA WRITE Middle");
    assert_eq!(count("8", "1058"), 16, "RDMA WRITE Last");
    assert_eq!(count("17", "62"), 1024, "ACKs");
    // Data: from the switch (node 17) to host 0, ECT(0), PSNs 0..63 in order per QP.
    let mut next_psn = std::collections::HashMap::new();
    for r in rows.iter().filter(|r| r[2] != "17") {
        assert_eq!(r[5], "2", "ECT(0)");
        assert_eq!(r[6], "02:53:46:00:00:11");
        assert_eq!(r[7], "02:53:46:00:00:00");
        let psn: u32 = r[4].parse().unwrap();
        let e = next_psn.entry(r[3].clone()).or_insert(0u32);
        assert_eq!(psn, *e, "PSN order of QP {}", r[3]);
        *e += 1;
    }
    assert_eq!(next_psn.len(), 16);
    assert!(next_psn.values().all(|&n| n == 64));
    let t = |i: usize| rows[i][0].parse::<f64>().unwrap();
    assert!((t(0) - 11.083e-6).abs() < 0.5e-9, "first frame at {}", t(0));
    assert!(
        (t(1) - 11.166e-6).abs() < 0.5e-9,
        "second frame at {}",
        t(1)
    );
    let first_ack = rows.iter().find(|r| r[2] == "17").unwrap();
    let ta: f64 = first_ack[0].parse().unwrap();
    assert!((ta - 12.166e-6).abs() < 0.5e-9, "first ACK at {ta}");
}

/// Lossless PFC with DCQCN and CNP packets on the same incast (1 MB switch buffer): every
/// link of the switch captured, so every PFC frame crosses one of them — as many 802.1Qbb
/// frames as the simulator received (`pfc.frames_received`), the PAUSEs (quanta 0xFFFF:
/// HPCC-sim pauses until RESUME) and RESUMEs (0) as counted, class 3 (the data priority);
/// the CE-marked data frames as ECN marked; each CNP on the receiver's and the sender's
/// links.
#[test]
fn pfc_frames_cnps_and_ce_marks_match_the_simulators_counts() {
    let d = TempDir::new("capture-pfc");
    d.write(
        "s.toml",
        &incast("[network]\ncnp = \"cnp\"\n[capture]\nnodes = [17]\n")
            .replace(
                "mode = \"unlimited\"",
                "mode = \"lossless\"\nsize = \"1MB\"",
            )
            .replace("kind = \"none\"\nwindow = \"none\"", "kind = \"dcqcn\""),
    );
    sfc(d.path(), &["run", "s.toml", "--out", "out"]).assert_ok();
    let s = summary(&d, "out");
    assert_eq!(s["capture"]["links"], 17);
    let pauses = s["pfc"]["pauses"].as_u64().unwrap();
    let resumes = s["pfc"]["resumes"].as_u64().unwrap();
    let marks = s["ecn"]["marks"].as_u64().unwrap();
    let cnps = s["counters"]["cnps"].as_u64().unwrap();
    assert!(
        pauses > 0 && marks > 0 && cnps > 0,
        "the scenario must exercise all three"
    );
    if !have_tshark() {
        return;
    }
    let pcap = d.join("out/capture.pcapng");
    assert_clean(&pcap, &[]);
    let pfc = fields(
        &pcap,
        "macc",
        &["macc.opcode", "macc.cbfc.enbv", "macc.cbfc.pause_time.c3"],
        &[],
    );
    assert_eq!(
        pfc.len() as u64,
        s["pfc"]["frames_received"].as_u64().unwrap()
    );
    assert!(
        pfc.iter().all(|r| r[0] == "0x0101" && r[1] == "0x0008"),
        "{pfc:?}"
    );
    let q = |v: &str| pfc.iter().filter(|r| r[2] == v).count() as u64;
    assert_eq!(q("65535"), pauses);
    assert_eq!(q("0"), resumes);
    let ce = fields(&pcap, "ip.dsfield.ecn == 3", &["frame.number"], &[]);
    assert_eq!(ce.len() as u64, marks);
    let cnp = fields(
        &pcap,
        "infiniband.bth.opcode == 0x81",
        &["frame.number"],
        &[],
    );
    assert_eq!(cnp.len() as u64, 2 * cnps);
}

/// SFC's BTS packets go out in sfc's own header and the shipped dissector decodes them: the
/// scheme, kind and flow it shows are those of the frame's comment (written from the
/// simulator's packet).
#[test]
fn scheme_packets_decode_with_the_shipped_dissector() {
    let d = TempDir::new("capture-sfc");
    d.write(
        "s.toml",
        &incast("[sfc]\nmode = \"sfc\"\n[capture]\nnodes = [17]\n")
            .replace("mode = \"unlimited\"", "mode = \"lossy\"\nsize = \"2MB\""),
    );
    sfc(d.path(), &["run", "s.toml", "--out", "out"]).assert_ok();
    if !have_tshark() {
        return;
    }
    let lua = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/wireshark/sfc.lua");
    let x = format!("lua_script:{}", lua.display());
    let pcap = d.join("out/capture.pcapng");
    assert_clean(&pcap, &["-X", &x]);
    let rows = fields(
        &pcap,
        "sfc",
        &["sfc.scheme", "sfc.kind", "sfc.flow", "frame.comment"],
        &["-X", &x],
    );
    assert!(!rows.is_empty(), "no scheme frame decoded");
    for r in &rows {
        let id: u8 = r[0].parse().unwrap();
        let name = sfc::registry::scheme_table_name(sfc::registry::scheme_id(id).unwrap());
        assert_eq!(name, "sfc");
        let want = format!("flow {} ", r[2]);
        assert!(r[3].starts_with(&want), "{r:?}");
        assert!(
            r[3].contains(&format!("scheme {name} kind {}", r[1])),
            "{r:?}"
        );
    }
}

/// The dissector's table of scheme ids is the registry's.
#[test]
fn the_dissectors_scheme_table_is_the_registrys() {
    let lua = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/wireshark/sfc.lua"),
    )
    .unwrap();
    let mut n = 0;
    for l in lua.lines() {
        let l = l.trim();
        let Some(rest) = l.strip_prefix('[') else {
            continue;
        };
        let (id, name) = rest.split_once("] = \"").unwrap();
        let name = name.trim_end_matches("\",");
        let id: u8 = id.parse().unwrap();
        let reg = sfc::registry::scheme_id(id).expect("an id of the registry");
        assert_eq!(sfc::registry::scheme_table_name(reg), name);
        n += 1;
    }
    assert!(
        sfc::registry::scheme_id(n).is_none(),
        "the table lists every scheme"
    );
    assert!(n >= 10);
}

/// The cap, the window and the flow filter: 100 frames and `capped`; the window
/// [11.5 µs, 12 µs) holds the data frames leaving at 11.083 + 0.083·k µs for k = 6..11 (six)
/// and no ACK (the first leaves at 12.166 µs); flow 3 alone is its 64 segments and 64 ACKs.
#[test]
fn the_cap_window_and_flow_filter_bound_the_capture() {
    let d = TempDir::new("capture-bounds");
    d.write("s.toml", &incast("[capture]\nnodes = [0]\n"));
    let run = |out: &str, sets: &[&str]| {
        let mut a = vec!["run", "s.toml", "--out", out];
        for s in sets {
            a.extend(["--set", s]);
        }
        sfc(d.path(), &a).assert_ok();
        summary(&d, out)
    };
    let s = run("cap", &["capture.max_packets=100"]);
    assert_eq!(s["capture"]["packets"], 100);
    assert_eq!(s["capture"]["capped"], true);
    let s = run(
        "win",
        &["capture.start=\"11.5us\"", "capture.stop=\"12us\""],
    );
    assert_eq!(s["capture"]["packets"], 6);
    let s = run("flow", &["capture.flows=[3]"]);
    assert_eq!(s["capture"]["packets"], 128);
    if !have_tshark() {
        return;
    }
    assert_eq!(
        fields(&d.join("cap/capture.pcapng"), "", &["frame.number"], &[]).len(),
        100
    );
    let times = fields(
        &d.join("win/capture.pcapng"),
        "",
        &["frame.time_epoch"],
        &[],
    );
    for t in &times {
        let t: f64 = t[0].parse().unwrap();
        assert!((11.5e-6..12e-6).contains(&t), "{t}");
    }
}

/// Bad capture input: errors naming the key (or the argument), never a panic.
#[test]
fn bad_capture_input_is_a_clear_error() {
    let d = TempDir::new("capture-errors");
    d.write("s.toml", &incast(""));
    let bad = |args: &[&str], needles: &[&str]| {
        let mut a = vec!["run", "s.toml", "--out", "out"];
        a.extend_from_slice(args);
        sfc(d.path(), &a).assert_error(needles);
    };
    bad(
        &["--set", "capture.links=[[1, 2]]"],
        &["capture.links[0]", "no link joins nodes 1 and 2"],
    );
    bad(
        &["--set", "capture.nodes=[99]"],
        &["capture.nodes[0]", "node 99 is not in the topology"],
    );
    bad(
        &[
            "--set",
            "capture.nodes=[0]",
            "--set",
            "capture.start=\"2us\"",
            "--set",
            "capture.stop=\"1us\"",
        ],
        &["capture.stop", "must be after `capture.start`"],
    );
    bad(
        &["--set", "capture.nodes=[0]", "--set", "capture.snaplen=4"],
        &["capture.snaplen", "at least 14"],
    );
    bad(&["--set", "capture.bogus=1"], &["bogus"]);
    bad(
        &["--capture", "0-x"],
        &["--capture `0-x`", "neither a node id"],
    );
    let r = sfc(
        d.path(),
        &["run", "s.toml", "--no-output", "--capture", "0"],
    );
    r.assert_error(&["capture.pcapng", "--no-output"]);
}

/// `sfc hpcc --capture 0` on HPCC-sim's 2-host star (tests/data/hpcc): the five flows of
/// 1, 2, 10, 100 and 1,000 segments from host 0 and their ACKs, 2 × 1,113 frames, in
/// `capture.pcapng` beside `fct.txt`.
#[test]
fn sfc_hpcc_captures_beside_its_output_files() {
    let d = TempDir::new("capture-hpcc");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hpcc");
    std::fs::copy(data.join("star2_100g.txt"), d.join("topology.txt")).unwrap();
    std::fs::copy(data.join("flows_sizes.txt"), d.join("flow.txt")).unwrap();
    d.write(
        "config.txt",
        "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE fct.txt\n\
         PFC_OUTPUT_FILE pfc.txt\nCC_MODE none\nHAS_WIN 0\n",
    );
    let r = sfc(d.path(), &["hpcc", "config.txt", "--capture", "0"]);
    r.assert_ok();
    assert!(
        r.stderr.contains("capture: 2226 frames on 1 links"),
        "{}",
        r.show()
    );
    if !have_tshark() {
        return;
    }
    let pcap = d.join("capture.pcapng");
    assert_clean(&pcap, &[]);
    let acks = fields(
        &pcap,
        "infiniband.bth.opcode == 0x11",
        &["frame.number"],
        &[],
    );
    assert_eq!(acks.len(), 1113);
}

/// HPCC's INT on the incast with HPCC congestion control, host 0's link captured: every data
/// frame (one INT hop, written by the switch) and every ACK (echoing it) goes to UDP port
/// 4792 with the HPCC INT header before its BTH. With the shipped dissector tshark decodes
/// the header and the RoCEv2 packet after it without a malformed frame; the hop count and
/// each hop's time, bytes sent, queue length and line rate are the simulator's records (the
/// frame's comment lists them exactly) at HPCC-sim's resolution: ns modulo 2^24, 128-byte
/// units modulo 2^20, 80-byte units.
#[test]
fn int_records_decode_as_the_hpcc_int_header() {
    let d = TempDir::new("capture-int");
    d.write(
        "s.toml",
        &incast("").replace("kind = \"none\"\nwindow = \"none\"", "kind = \"hpcc\""),
    );
    sfc(
        d.path(),
        &["run", "s.toml", "--out", "out", "--capture", "0"],
    )
    .assert_ok();
    let s = summary(&d, "out");
    let frames = s["capture"]["packets"].as_u64().unwrap() as usize;
    assert!(frames >= 2048, "{frames}");
    if !have_tshark() {
        return;
    }
    let pcap = d.join("out/capture.pcapng");
    // Without the dissector: UDP data, nothing malformed.
    assert_clean(&pcap, &[]);
    let lua = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/wireshark/sfc.lua");
    let x = format!("lua_script:{}", lua.display());
    assert_clean(&pcap, &["-X", &x]);
    let rows = fields(
        &pcap,
        "hpccint",
        &[
            "hpccint.nhop",
            "hpccint.time_ns",
            "hpccint.tx_bytes",
            "hpccint.qlen_bytes",
            "hpccint.rate_gbps",
            "infiniband.bth.opcode",
            "udp.dstport",
            "frame.comment",
        ],
        &["-X", &x],
    );
    assert_eq!(rows.len(), frames, "every frame carries INT");
    let mut data = 0;
    let mut queued = 0;
    for r in &rows {
        assert_eq!(r[6], "4792");
        let op: u32 = r[5].parse().expect("the BTH after the INT header decodes");
        if op != 17 {
            data += 1;
        }
        let recs = r[7]
            .split(" int [")
            .nth(1)
            .and_then(|x| x.strip_suffix(']'))
            .expect("INT records in the comment");
        let recs: Vec<Vec<u64>> = recs
            .split("; ")
            .map(|h| h.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(r[0], recs.len().to_string(), "{r:?}");
        assert_eq!(recs.len(), 1, "one switch on the path");
        let col = |i: usize| {
            r[i].split(',')
                .map(|v| v.parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        };
        for (k, h) in recs.iter().enumerate() {
            let (ts_ps, tx, q, mbps) = (h[0], h[1], h[2], h[3]);
            assert_eq!(col(1)[k], (ts_ps / 1000) % (1 << 24), "{r:?}");
            assert_eq!(col(2)[k], (tx / 128) % (1 << 20) * 128, "{r:?}");
            assert_eq!(col(3)[k], (q / 80) % (1 << 17) * 80, "{r:?}");
            assert_eq!(col(4)[k], mbps / 1000, "{r:?}");
            assert_eq!(mbps, 100_000);
            queued += usize::from(q >= 80);
        }
    }
    assert_eq!(data, 1024, "data frames");
    assert!(queued > 0, "some hop saw a queue");
}
