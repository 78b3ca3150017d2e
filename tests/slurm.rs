//! Sharded experiments on a real Slurm: runs `tests/slurm/cluster-test.sh` (a single-node
//! Slurm brought up for the test, a `--quick` experiment submitted as a job array plus the
//! merge job, the merged outputs compared byte for byte with an unsharded run). Runs only
//! where `sbatch` exists and the test is root (it starts `munged`, `slurmctld` and `slurmd`);
//! otherwise it prints that it was skipped. `.ci/run` installs Slurm and sets
//! `SFC_REQUIRE_SLURM=1`, which turns a skip into a failure.

use std::path::Path;
use std::process::Command;

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
}

#[test]
fn sharded_sweep_on_a_single_node_slurm() {
    let require = std::env::var_os("SFC_REQUIRE_SLURM").is_some_and(|v| v == "1");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let skip = if !on_path("sbatch") {
        Some("sbatch not found (apt-get install -y slurm-wlm munge)")
    } else if !root && std::env::var_os("SFC_SLURM_EXISTING").is_none() {
        Some(
            "starting a private Slurm needs root (.ci/run then runs tests/slurm/cluster-test.sh with sudo)",
        )
    } else {
        None
    };
    if let Some(why) = skip {
        assert!(
            !(require && root),
            "slurm test: {why} (SFC_REQUIRE_SLURM=1)"
        );
        eprintln!("slurm test: SKIPPED: {why}");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/cluster-test.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_sfc"))
        .output()
        .expect("run tests/slurm/cluster-test.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "{} failed ({}):\n{stdout}\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("PASSED") || (!require && stdout.contains("SKIPPED")),
        "{stdout}"
    );
}
