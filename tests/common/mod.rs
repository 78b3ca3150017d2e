//! Helpers shared by the integration tests that drive the `sfc` binary: temporary
//! directories and a run-with-timeout that captures output and never hangs.
#![allow(dead_code)]

pub mod bfc;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `summary.json` fields that measure the run itself, not the simulated network: they differ
/// between two runs of the same simulation (and between one thread and several).
pub const RUN_MEASURES: &[&str] = &[
    "wall_seconds",
    "events_per_second",
    "packet_hops_per_second",
    "peak_rss_bytes",
    "events_peak_pending",
    "packets_peak_live",
    "parallel",
    "one_thread_because",
];

/// A small experiment file: six points (two series × three flow sizes) on a 4-host star,
/// a plot and a claim.
pub const TINY_SWEEP: &str = r#"[experiment]
name = "tiny-shard"
title = "tiny sharded sweep"
paper = "Mini"

[scenario]
name = "tiny-shard"
seed = 1
stop = "200us"
[scenario.topology]
kind = "star"
hosts = 4
[[scenario.traffic]]
kind = "incast"
senders = [1, 2, 3]
receivers = [0]
at = "1us"
size = "50KB"

[sweep]
series = [{ name = "A", set = [] }, { name = "B", set = ['cc.kind="dcqcn"'] }]
axes = [{ key = "traffic.0.size", values = ["20KB", "50KB", "400KB"] }]

[[plot]]
name = "events"
source = "summary"
x = "traffic.0.size"
y = "events"

[[claim]]
text = "A vs B"
metric = "events"
num = "A"
den = "B"
paper_low = 1.0
"#;

/// `v` (a `summary.json`) without [`RUN_MEASURES`].
pub fn without_run_measures(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(o) = v.as_object_mut() {
        for k in RUN_MEASURES {
            o.remove(*k);
        }
    }
    v
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "sfc-test-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        p
    }

    pub fn read(&self, name: &str) -> String {
        let p = self.join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    pub fn bytes(&self, name: &str) -> Vec<u8> {
        let p = self.join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Result of one `sfc` invocation.
pub struct Run {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    pub fn show(&self) -> String {
        format!(
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }

    /// Exit 0, no panic.
    pub fn assert_ok(&self) {
        assert!(self.ok(), "sfc failed:\n{}", self.show());
        self.assert_no_panic();
    }

    pub fn assert_no_panic(&self) {
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "sfc panicked:\n{}",
            self.show()
        );
    }

    /// Exit ≠ 0 (and not killed by a signal or the timeout), no panic, and an `error:` message
    /// on stderr containing every needle.
    pub fn assert_error(&self, needles: &[&str]) {
        let status = self
            .status
            .unwrap_or_else(|| panic!("sfc did not terminate:\n{}", self.show()));
        assert!(
            !status.success(),
            "expected failure, got success:\n{}",
            self.show()
        );
        assert!(
            status.code().is_some(),
            "killed by a signal:\n{}",
            self.show()
        );
        self.assert_no_panic();
        // The needles must be in the error message itself, not in earlier warnings.
        let at = self
            .stderr
            .find("error:")
            .unwrap_or_else(|| panic!("no `error:` message:\n{}", self.show()));
        let msg = &self.stderr[at..];
        for n in needles {
            assert!(
                msg.contains(n),
                "error message does not mention `{n}`:\n{}",
                self.show()
            );
        }
    }
}

/// Run `cmd` to completion, or kill it (by its own pid) after `timeout`.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sfc");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        status,
        stdout: String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned(),
    }
}
