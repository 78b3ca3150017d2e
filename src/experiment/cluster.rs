//! Batch-scheduler recipes for a sharded sweep ([`super::shard`]): a Slurm job array with a
//! dependent merge job (`sfc experiment slurm`), and a Kubernetes Indexed Job with a merge Job
//! (`sfc experiment k8s`). Every shard writes its points into one shared output directory;
//! the merge writes the report once every point is there.

use std::path::{Path, PathBuf};

use super::shard::{SweepRecord, shell_word};

/// What a Slurm sweep runs: the `sfc` binary, the sweep (as `sfc experiment run` is given
/// it), its shared output directory and the resources of each array task.
#[derive(Clone, Debug)]
pub struct SlurmOpts {
    /// The `sfc` executable, on a file system every node mounts.
    pub exe: PathBuf,
    /// The sweep: experiment, `--dir`, `--quick`, seeds, and the directory they are relative
    /// to (the jobs start there).
    pub record: SweepRecord,
    /// Shared output directory (absolute).
    pub out: PathBuf,
    /// Array tasks, one per shard.
    pub shards: usize,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` of each task (and of the merge job).
    pub time: Option<String>,
    /// `--cpus-per-task`: the points a task runs at once (`--jobs`).
    pub cpus_per_task: Option<u32>,
    /// `--mem` of each task.
    pub mem: Option<String>,
    /// The merge leaves the wall times out of its outputs (`--no-timings`).
    pub no_timings: bool,
}

/// The `#SBATCH` lines shared by the array and the merge job.
fn sbatch_common(o: &SlurmOpts) -> String {
    let mut s = String::new();
    if let Some(p) = &o.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &o.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    s
}

/// The job-array script: task `SLURM_ARRAY_TASK_ID` (0 to shards − 1) runs `--shard
/// ID/shards` into the shared directory.
pub fn slurm_array_script(o: &SlurmOpts) -> String {
    let name = job_name(&o.record);
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!("#SBATCH --job-name={name}\n"));
    s.push_str(&format!("#SBATCH --array=0-{}\n", o.shards.max(1) - 1));
    s.push_str("#SBATCH --ntasks=1\n");
    if let Some(c) = o.cpus_per_task {
        s.push_str(&format!("#SBATCH --cpus-per-task={c}\n"));
    }
    if let Some(m) = &o.mem {
        s.push_str(&format!("#SBATCH --mem={m}\n"));
    }
    s.push_str(&sbatch_common(o));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        shell_word(
            &o.out
                .join("slurm")
                .join("shard-%a.log")
                .display()
                .to_string()
        )
    ));
    s.push_str(&format!(
        "# One array task per shard of `sfc experiment run {}`: task ID runs --shard ID/{}.\n",
        o.record.run_args().join(" "),
        o.shards
    ));
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "cd {}\n",
        shell_word(&o.record.cwd.display().to_string())
    ));
    let mut cmd = vec![
        o.exe.display().to_string(),
        "experiment".into(),
        "run".into(),
    ];
    cmd.extend(o.record.run_args());
    cmd.extend(["--out".into(), o.out.display().to_string()]);
    let words: Vec<String> = cmd.iter().map(|w| shell_word(w)).collect();
    s.push_str(&format!(
        "exec {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
        words.join(" "),
        o.shards
    ));
    s
}

/// The merge job's script: `sfc experiment merge OUT` once the array succeeded (it is
/// submitted with `--dependency=afterok:ARRAY_JOB`).
pub fn slurm_merge_script(o: &SlurmOpts) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "#SBATCH --job-name={}-merge\n",
        job_name(&o.record)
    ));
    s.push_str("#SBATCH --ntasks=1\n");
    s.push_str(&sbatch_common(o));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        shell_word(&o.out.join("slurm").join("merge.log").display().to_string())
    ));
    s.push_str("# The report, CSVs and plots of every shard's points.\n");
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "cd {}\n",
        shell_word(&o.record.cwd.display().to_string())
    ));
    s.push_str(&format!(
        "exec {} experiment merge {}{}\n",
        shell_word(&o.exe.display().to_string()),
        shell_word(&o.out.display().to_string()),
        if o.no_timings { " --no-timings" } else { "" }
    ));
    s
}

/// Paths of the two scripts in the output directory: `OUT/slurm/shards.sbatch` and
/// `OUT/slurm/merge.sbatch`.
pub fn slurm_script_paths(out: &Path) -> (PathBuf, PathBuf) {
    let d = out.join("slurm");
    (d.join("shards.sbatch"), d.join("merge.sbatch"))
}

/// The shell commands that submit the array and then the merge job after it.
pub fn slurm_submit_commands(out: &Path) -> String {
    let (a, m) = slurm_script_paths(out);
    format!(
        "jobid=$(sbatch --parsable {})\nsbatch --dependency=afterok:\"${{jobid%%;*}}\" {}\n",
        shell_word(&a.display().to_string()),
        shell_word(&m.display().to_string())
    )
}

/// Write the two Slurm scripts into `OUT/slurm/` and return their paths (array, merge).
pub fn write_slurm(o: &SlurmOpts) -> Result<(PathBuf, PathBuf), String> {
    let (a, m) = slurm_script_paths(&o.out);
    let d = o.out.join("slurm");
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    for (p, text) in [(&a, slurm_array_script(o)), (&m, slurm_merge_script(o))] {
        crate::metrics::output::write_atomic(p, text.as_bytes())
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok((a, m))
}

/// Submit the array (`sbatch --parsable`), then the merge job with
/// `--dependency=afterok:ARRAY`; returns the two job ids.
pub fn slurm_submit(array: &Path, merge: &Path) -> Result<(String, String), String> {
    let sbatch = |args: &[&std::ffi::OsStr]| -> Result<String, String> {
        let out = std::process::Command::new("sbatch")
            .arg("--parsable")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run sbatch: {e} (is Slurm installed on this machine?)"))?;
        if !out.status.success() {
            return Err(format!(
                "sbatch {}: {}",
                args.last()
                    .map_or(String::new(), |a| a.to_string_lossy().into_owned()),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
        let id = String::from_utf8_lossy(&out.stdout);
        Ok(id.trim().split(';').next().unwrap_or("").to_string())
    };
    let a = sbatch(&[array.as_os_str()])?;
    let dep = format!("--dependency=afterok:{a}");
    let m = sbatch(&[std::ffi::OsStr::new(&dep), merge.as_os_str()])?;
    Ok((a, m))
}

/// A Slurm or Kubernetes job name for the sweep: `sfc-NAME[-quick]`, lower case, with
/// characters other than letters, digits and `-` replaced by `-` (a DNS label, as Kubernetes
/// requires), at most 52 characters (room for the `-shards` / `-merge` suffix in 63).
pub fn job_name(rec: &SweepRecord) -> String {
    let stem = Path::new(&rec.experiment).file_stem().map_or_else(
        || rec.experiment.clone(),
        |s| s.to_string_lossy().into_owned(),
    );
    let mut n: String = format!("sfc-{stem}{}", if rec.quick { "-quick" } else { "" })
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    n.truncate(52);
    n.trim_end_matches('-').to_string()
}

/// What a Kubernetes sweep runs: an image with `sfc` on its PATH, the sweep, the shared
/// volume (a PersistentVolumeClaim every pod mounts, ReadWriteMany when the pods may land on
/// several nodes) and each pod's resources.
#[derive(Clone, Debug)]
pub struct K8sOpts {
    /// The sweep (its `cwd` is not used: the pods start in `mount`).
    pub record: SweepRecord,
    /// Container image holding `sfc` on its PATH.
    pub image: String,
    /// The PersistentVolumeClaim holding the output directory.
    pub pvc: String,
    /// Where the claim is mounted in the pods.
    pub mount: String,
    /// Output directory in the pods (under `mount`).
    pub out: String,
    /// Completions, one per shard.
    pub shards: usize,
    /// Pods running at once (default: all shards).
    pub parallelism: Option<usize>,
    /// CPUs of each shard pod (its `--jobs`).
    pub cpus: u32,
    /// Memory request and limit of each shard pod (`4Gi`).
    pub memory: Option<String>,
    /// The merge leaves the wall times out of its outputs (`--no-timings`).
    pub no_timings: bool,
}

/// A YAML flow sequence of strings (each double-quoted, JSON escaping, valid YAML).
fn yaml_list(words: &[String]) -> String {
    let q: Vec<String> = words
        .iter()
        .map(|w| serde_json::Value::String(w.clone()).to_string())
        .collect();
    format!("[{}]", q.join(", "))
}

/// A quoted YAML scalar (JSON string syntax).
fn yq(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The pod spec of one Job: a container `name` running `sh -c script` in `o.mount`, with the
/// claim mounted.
fn k8s_pod(o: &K8sOpts, name: &str, script: &str, resources: &str) -> String {
    format!(
        "  template:
    metadata:
      labels:
        app: sfc
    spec:
      restartPolicy: Never
      containers:
        - name: {name}
          image: {image}
          workingDir: {mount}
          command: {cmd}
{resources}          volumeMounts:
            - name: results
              mountPath: {mount}
      volumes:
        - name: results
          persistentVolumeClaim:
            claimName: {pvc}
",
        image = yq(&o.image),
        mount = yq(&o.mount),
        cmd = yaml_list(&["/bin/sh".into(), "-c".into(), script.into()]),
        pvc = yq(&o.pvc),
    )
}

/// The manifest: an Indexed Job (`completionMode: Indexed`, one completion per shard; pod
/// `JOB_COMPLETION_INDEX` runs `--shard INDEX/N`), then the merge Job, which waits until
/// `sfc experiment status OUT --complete` says every point has finished and runs `sfc
/// experiment merge OUT`. Two YAML documents, for `kubectl apply -f`.
pub fn k8s_manifest(o: &K8sOpts) -> String {
    let name = job_name(&o.record);
    let mut run = vec!["sfc".to_string(), "experiment".into(), "run".into()];
    run.extend(o.record.run_args());
    run.extend(["--out".into(), o.out.clone()]);
    let run: Vec<String> = run.iter().map(|w| shell_word(w)).collect();
    let shard_script = format!(
        "exec {} --shard \"$JOB_COMPLETION_INDEX/{}\" --jobs {}",
        run.join(" "),
        o.shards,
        o.cpus.max(1)
    );
    let mut res = format!(
        "          resources:\n            requests:\n              cpu: {}\n",
        yq(&o.cpus.max(1).to_string())
    );
    if let Some(m) = &o.memory {
        res.push_str(&format!("              memory: {}\n", yq(m)));
        res.push_str(&format!(
            "            limits:\n              memory: {}\n",
            yq(m)
        ));
    }
    let out = shell_word(&o.out);
    let merge_script = format!(
        "until sfc experiment status {out} --complete; do sleep 30; done; exec sfc experiment merge {out}{}",
        if o.no_timings { " --no-timings" } else { "" }
    );
    let labels = format!("  labels:\n    app: sfc\n    sfc-sweep: {}\n", yq(&name));
    format!(
        "# The shards of `sfc experiment run {args}`: completion INDEX runs --shard INDEX/{n}.
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-shards
{labels}spec:
  completionMode: Indexed
  completions: {n}
  parallelism: {par}
  backoffLimit: {backoff}
{pod}---
# The report once every point has finished: CSVs, plots, REPORT.md in {out_raw}.
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-merge
{labels}spec:
  completions: 1
  backoffLimit: 2
{merge_pod}",
        args = o.record.run_args().join(" "),
        n = o.shards,
        par = o.parallelism.unwrap_or(o.shards).clamp(1, o.shards.max(1)),
        backoff = o.shards.max(1) * 2,
        pod = k8s_pod(o, "shard", &shard_script, &res),
        out_raw = o.out,
        merge_pod = k8s_pod(o, "merge", &merge_script, ""),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_dns_labels() {
        let r = SweepRecord {
            experiment: "dir/My_Exp.toml".into(),
            quick: true,
            ..SweepRecord::default()
        };
        assert_eq!(job_name(&r), "sfc-my-exp-quick");
    }
}
