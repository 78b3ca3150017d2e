//! Sweeps in shards (`sfc experiment run --shard I/N`, `merge`, `status`, `slurm`, `k8s`):
//! the merged outputs of any number of shards (more shards than points too, shards sharing
//! one directory or each in its own) equal the unsharded run's byte for byte with
//! `--no-timings`; `status` on partial directories; bad `--shard` values; the Slurm scripts and
//! the Kubernetes manifest (parsed as YAML).

mod common;

use common::{TINY_SWEEP as TINY, TempDir};
use std::path::Path;
use std::process::{Command, Output};

const SFC: &str = env!("CARGO_BIN_EXE_sfc");

/// The files of a report (besides the points' directories).
const REPORT_FILES: [&str; 6] = [
    "REPORT.md",
    "results.csv",
    "bins.csv",
    "claims.csv",
    "events.png",
    "events.svg",
];

/// Run `sfc ARGS` in `dir`.
fn sfc(dir: &Path, args: &[&str]) -> Output {
    Command::new(SFC)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("spawn sfc")
}

/// Run `sfc ARGS` in `dir`; panic with its output unless it succeeds. Returns stdout.
fn sfc_ok(dir: &Path, args: &[&str]) -> String {
    let out = sfc(dir, args);
    assert!(
        out.status.success(),
        "sfc {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run `sfc ARGS` in `dir`, expecting it to fail; returns stderr.
fn sfc_err(dir: &Path, args: &[&str]) -> String {
    let out = sfc(dir, args);
    assert!(!out.status.success(), "sfc {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every report file and every point file (but `summary.json`, which holds the point's own
/// wall time and memory) of `a` equals `b`'s, byte for byte.
fn assert_same_outputs(a: &Path, b: &Path) {
    for f in REPORT_FILES {
        let (x, y) = (a.join(f), b.join(f));
        let (x, y) = (
            std::fs::read(&x).unwrap_or_else(|e| panic!("{}: {e}", x.display())),
            std::fs::read(&y).unwrap_or_else(|e| panic!("{}: {e}", y.display())),
        );
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
    let mut n = 0;
    for d in std::fs::read_dir(a.join("points"))
        .expect("points")
        .flatten()
    {
        for f in std::fs::read_dir(d.path()).expect("point dir").flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name == "summary.json" || name.starts_with('.') {
                continue;
            }
            let other = b.join("points").join(d.file_name()).join(&name);
            assert!(
                std::fs::read(f.path()).ok() == std::fs::read(&other).ok(),
                "{} differs from {}",
                f.path().display(),
                other.display()
            );
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} point files compared");
}

#[test]
fn merged_shards_equal_the_unsharded_run() {
    let tmp = TempDir::new("shard-merge");
    tmp.write("tiny.toml", TINY);
    let d = tmp.path();
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "full",
            "--no-timings",
        ],
    );
    let results = tmp.read("full/results.csv");
    assert!(!results.contains("wall_seconds"), "{results}");
    assert!(tmp.read("full/REPORT.md").contains("— 6 points.\n"));
    // Shards sharing one directory: 1, 2, 3 shards and more shards (8) than points (6).
    for n in [1usize, 2, 3, 8] {
        let out = format!("shared{n}");
        for i in 0..n {
            let shard = format!("{i}/{n}");
            sfc_ok(
                d,
                &[
                    "experiment",
                    "run",
                    "tiny.toml",
                    "--out",
                    &out,
                    "--shard",
                    &shard,
                ],
            );
        }
        assert!(
            !d.join(&out).join("REPORT.md").exists(),
            "a shard writes no report"
        );
        sfc_ok(d, &["experiment", "merge", &out, "--no-timings"]);
        assert_same_outputs(&d.join("full"), &d.join(&out));
    }
    // Shards in directories of their own, merged into a new one (run from elsewhere).
    for i in 0..3 {
        let (out, shard) = (format!("own{i}"), format!("{i}/3"));
        sfc_ok(
            d,
            &[
                "experiment",
                "run",
                "tiny.toml",
                "--out",
                &out,
                "--shard",
                &shard,
            ],
        );
    }
    let elsewhere = tmp.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let m = d.join("merged");
    let (m, o0, o1, o2) = (
        m.to_str().expect("utf-8"),
        d.join("own0"),
        d.join("own1"),
        d.join("own2"),
    );
    sfc_ok(
        &elsewhere,
        &[
            "experiment",
            "merge",
            m,
            o0.to_str().expect("utf-8"),
            o1.to_str().expect("utf-8"),
            o2.to_str().expect("utf-8"),
            "--no-timings",
        ],
    );
    assert_same_outputs(&d.join("full"), Path::new(m));
    // A run over a directory that holds every point only writes the report.
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "shared3",
            "--no-timings",
        ],
    );
    assert_same_outputs(&d.join("full"), &d.join("shared3"));
    // With timings: the same files but for the wall times.
    sfc_ok(d, &["experiment", "merge", "shared2"]);
    let timed = tmp.read("shared2/results.csv");
    assert!(
        timed
            .lines()
            .next()
            .unwrap_or("")
            .ends_with(",wall_seconds")
    );
    assert!(
        tmp.read("shared2/REPORT.md")
            .contains("s of simulation wall time")
    );
}

#[test]
fn shards_are_balanced_by_cost_and_rerun_idempotently() {
    let tmp = TempDir::new("shard-share");
    tmp.write("tiny.toml", TINY);
    let d = tmp.path();
    let count = |out: &str| std::fs::read_dir(d.join(out).join("points")).map_or(0, |r| r.count());
    // The two 400 KB points cost most: each shard of two gets one of them and two small ones.
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "s",
            "--shard",
            "0/2",
        ],
    );
    assert_eq!(count("s"), 3);
    let big: Vec<String> = std::fs::read_dir(d.join("s/points"))
        .expect("points")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("400KB"))
        .collect();
    assert_eq!(big.len(), 1, "{big:?}");
    // Run again (a re-queued task): nothing changes.
    let p = d.join("s/points").join(&big[0]).join("summary.json");
    let before = std::fs::read(&p).expect("summary");
    let err = String::from_utf8_lossy(
        &sfc(
            d,
            &[
                "experiment",
                "run",
                "tiny.toml",
                "--out",
                "s",
                "--shard",
                "0/2",
            ],
        )
        .stderr,
    )
    .into_owned();
    assert!(err.contains("(3 already complete)"), "{err}");
    assert_eq!(std::fs::read(&p).expect("summary"), before);
    // A point run again after its results were lost gives the same files.
    let flows = std::fs::read(d.join("s/points").join(&big[0]).join("fct.txt")).expect("fct");
    std::fs::remove_file(&p).expect("rm");
    let s = d.join("s");
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            s.to_str().expect("utf-8"),
            "--point",
            &big[0],
        ],
    );
    assert_eq!(
        std::fs::read(d.join("s/points").join(&big[0]).join("fct.txt")).expect("fct"),
        flows
    );
}

#[test]
fn bad_shard_values_are_refused() {
    let tmp = TempDir::new("shard-bad");
    tmp.write("tiny.toml", TINY);
    let d = tmp.path();
    for (v, want) in [
        (
            "2/2",
            "shard index 2 is out of range: the 2 shards are numbered from 0 to 1 (0-based)",
        ),
        ("0/0", "the number of shards must be at least 1"),
        ("1", "expected I/N"),
        ("a/3", "`a` is not a whole number"),
        ("1/-3", "`-3` is not a whole number"),
    ] {
        let err = sfc_err(
            d,
            &["experiment", "run", "tiny.toml", "--out", "x", "--shard", v],
        );
        assert!(
            err.contains(&format!("--shard {v}: ")) && err.contains(want),
            "{v}: {err}"
        );
    }
    assert!(!d.join("x").exists(), "nothing is written on a bad --shard");
    let err = sfc_err(d, &["experiment", "status", "x"]);
    assert!(err.contains("no sweep here"), "{err}");
}

/// Hold the lock of a point's directory (as the process running it does).
fn hold_lock(dir: &Path) -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".sfc-lock"))
        .expect("lock file");
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor this test owns.
    assert_eq!(
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    f
}

#[test]
fn status_and_merge_of_a_partial_sweep() {
    let tmp = TempDir::new("shard-status");
    tmp.write("tiny.toml", TINY);
    let d = tmp.path();
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "p",
            "--shard",
            "1/3",
        ],
    );
    // Shard 1 of 3 runs one of the two costliest points (400 KB) alone.
    let st = sfc_ok(d, &["experiment", "status", "p"]);
    assert!(st.contains("6 points") && st.contains("done     1"), "{st}");
    assert!(
        st.contains("missing  5") && st.contains("running  0"),
        "{st}"
    );
    assert!(st.contains("ETA "), "{st}");
    let err = sfc_err(d, &["experiment", "status", "p", "--complete"]);
    assert!(err.contains("5 missing"), "{err}");
    // A point whose run failed, one running (its lock held), one interrupted.
    let mut done: Vec<String> = std::fs::read_dir(d.join("p/points"))
        .expect("points")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    done.sort();
    let sum = d.join("p/points").join(&done[0]).join("summary.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sum).expect("summary")).expect("json");
    v["failure"] = "stalled (made up by the test)".into();
    std::fs::write(&sum, v.to_string()).expect("write");
    let all = [
        "A__size=20KB",
        "A__size=50KB",
        "A__size=400KB",
        "B__size=20KB",
        "B__size=50KB",
        "B__size=400KB",
    ];
    let todo: Vec<&str> = all
        .into_iter()
        .filter(|id| !done.iter().any(|x| x == id))
        .collect();
    assert_eq!(todo.len(), 5, "{done:?}");
    let running = d.join("p/points").join(todo[0]);
    let interrupted = d.join("p/points").join(todo[1]);
    for (dir, from) in [(&running, &done[0]), (&interrupted, &done[0])] {
        std::fs::create_dir_all(dir).expect("mkdir");
        let rec = std::fs::read_to_string(d.join("p/points").join(from).join("point.json"))
            .expect("point.json");
        let mut r: serde_json::Value = serde_json::from_str(&rec).expect("json");
        let id = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        r["id"] = id.into();
        std::fs::write(dir.join("point.json"), r.to_string()).expect("write");
    }
    let lock = hold_lock(&running);
    let st = sfc_ok(d, &["experiment", "status", "p"]);
    assert!(
        st.contains("done     0") && st.contains("failed   1"),
        "{st}"
    );
    assert!(
        st.contains(&format!("running  1\n    {}\n", todo[0])),
        "{st}"
    );
    assert!(
        st.contains(&format!("{} (interrupted: runs again)", todo[1])),
        "{st}"
    );
    assert!(st.contains("stalled (made up by the test)"), "{st}");
    // The merge refuses, naming each missing point and the command that runs it.
    drop(lock);
    let err = sfc_err(d, &["experiment", "merge", "p"]);
    assert!(err.contains("of the 6 points are not complete"), "{err}");
    let cmd_line = err
        .lines()
        .find(|l| l.contains(&format!("--point {}", todo[2])))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        cmd_line.contains("sfc experiment run tiny.toml --out "),
        "{cmd_line}"
    );
    assert!(
        err.contains("or run them all and write the report: sfc experiment run tiny.toml --out")
    );
    assert!(!d.join("p/REPORT.md").exists());
    // Running the missing points completes the sweep: the merge then reports the failed one.
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "p",
            "--shard",
            "0/3",
        ],
    );
    sfc_ok(
        d,
        &[
            "experiment",
            "run",
            "tiny.toml",
            "--out",
            "p",
            "--shard",
            "2/3",
        ],
    );
    let st = sfc_ok(d, &["experiment", "status", "p", "--complete"]);
    assert!(st.contains("every point has finished"), "{st}");
    let err = sfc_err(d, &["experiment", "merge", "p"]);
    assert!(
        err.contains("1 point(s) did not finish") && err.contains("stalled (made up"),
        "{err}"
    );
    assert!(d.join("p/REPORT.md").exists());
}

#[test]
fn slurm_scripts_and_commands() {
    let tmp = TempDir::new("shard-slurm");
    tmp.write("tiny.toml", TINY);
    let d = tmp.path();
    let out = sfc_ok(
        d,
        &[
            "experiment",
            "slurm",
            "tiny.toml",
            "--out",
            "sweep",
            "--shards",
            "5",
            "--partition",
            "short",
            "--time",
            "0:30:00",
            "--cpus-per-task",
            "2",
            "--mem",
            "4G",
            "--quick",
        ],
    );
    let array = tmp.read("sweep/slurm/shards.sbatch");
    let merge = tmp.read("sweep/slurm/merge.sbatch");
    for want in [
        "#SBATCH --array=0-4\n",
        "#SBATCH --partition=short\n",
        "#SBATCH --time=0:30:00\n",
        "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --mem=4G\n",
        "--shard \"${SLURM_ARRAY_TASK_ID}/5\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\"",
        " experiment run tiny.toml --quick --out ",
        "#SBATCH --job-name=sfc-tiny-quick\n",
    ] {
        assert!(array.contains(want), "{want:?} not in\n{array}");
    }
    assert!(merge.contains(" experiment merge ") && merge.contains("#SBATCH --partition=short"));
    assert!(out.contains("jobid=$(sbatch --parsable "), "{out}");
    assert!(
        out.contains("sbatch --dependency=afterok:\"${jobid%%;*}\" "),
        "{out}"
    );
}

#[test]
fn kubernetes_manifest_parses() {
    let tmp = TempDir::new("shard-k8s");
    let d = tmp.path();
    let text = sfc_ok(
        d,
        &[
            "experiment",
            "k8s",
            "tcd-victim",
            "--quick",
            "--shards",
            "6",
            "--parallelism",
            "3",
            "--image",
            "registry.example/sfc:1",
            "--pvc",
            "shared",
            "--memory",
            "2Gi",
            "--cpus",
            "2",
            "--no-timings",
        ],
    );
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("valid YAML"))
        .collect();
    assert_eq!(docs.len(), 2, "{text}");
    let (shards, merge) = (&docs[0], &docs[1]);
    let s = |v: &serde_yaml::Value| v.as_str().map(str::to_string).unwrap_or_default();
    assert_eq!(s(&shards["kind"]), "Job");
    assert_eq!(s(&shards["apiVersion"]), "batch/v1");
    assert_eq!(
        s(&shards["metadata"]["name"]),
        "sfc-tcd-victim-quick-shards"
    );
    let spec = &shards["spec"];
    assert_eq!(s(&spec["completionMode"]), "Indexed");
    assert_eq!(spec["completions"].as_u64(), Some(6));
    assert_eq!(spec["parallelism"].as_u64(), Some(3));
    let pod = &spec["template"]["spec"];
    assert_eq!(s(&pod["restartPolicy"]), "Never");
    let c = &pod["containers"][0];
    assert_eq!(s(&c["image"]), "registry.example/sfc:1");
    let cmd: Vec<String> = c["command"]
        .as_sequence()
        .expect("command")
        .iter()
        .map(s)
        .collect();
    assert_eq!(cmd[..2], ["/bin/sh", "-c"]);
    assert!(
        cmd[2].contains("sfc experiment run tcd-victim --quick --out /results/tcd-victim-quick")
            && cmd[2].contains("--shard \"$JOB_COMPLETION_INDEX/6\" --jobs 2"),
        "{}",
        cmd[2]
    );
    assert_eq!(s(&c["resources"]["limits"]["memory"]), "2Gi");
    assert_eq!(s(&c["volumeMounts"][0]["mountPath"]), "/results");
    assert_eq!(s(&c["volumeMounts"][0]["name"]), "results");
    assert_eq!(s(&pod["volumes"][0]["name"]), "results");
    assert_eq!(
        s(&pod["volumes"][0]["persistentVolumeClaim"]["claimName"]),
        "shared"
    );
    assert_eq!(s(&merge["kind"]), "Job");
    assert_eq!(s(&merge["metadata"]["name"]), "sfc-tcd-victim-quick-merge");
    let mc = &merge["spec"]["template"]["spec"]["containers"][0];
    let mcmd = s(&mc["command"][2]);
    assert!(
        mcmd.contains("until sfc experiment status /results/tcd-victim-quick --complete")
            && mcmd.ends_with("exec sfc experiment merge /results/tcd-victim-quick --no-timings"),
        "{mcmd}"
    );
    assert_eq!(
        s(&merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]),
        "shared"
    );
}
