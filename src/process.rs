//! Process-wide utilities: the temporary files being written (removed if the process is
//! interrupted), the SIGINT/SIGTERM handler that removes them and says what the outputs are
//! worth, and the memory the process may use.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Memory this process may use, bytes: the least of `MemAvailable` (`/proc/meminfo`; 16 GiB
/// when unknown), the address-space limit (`ulimit -v`, RLIMIT_AS) less the address space
/// already mapped, and the cgroup v2 limit (`memory.max`) less the cgroup's current use — so a
/// run refused here never aborts later on an allocation the limits forbid.
pub fn available_memory_bytes() -> u64 {
    let kb = |text: &str, key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    let mut avail = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| kb(&s, "MemAvailable:"))
        .unwrap_or(16 << 30);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
    {
        let mapped = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| kb(&s, "VmSize:"))
            .unwrap_or(0);
        #[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every target
        let cur = lim.rlim_cur as u64;
        avail = avail.min(cur.saturating_sub(mapped));
    }
    let cg = |f: &str| {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{f}"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    if let Some(max) = cg("memory.max") {
        avail = avail.min(max.saturating_sub(cg("memory.current").unwrap_or(0)));
    }
    avail
}

/// Temporary files being written (removed by the signal handler).
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Register a temporary file for removal on SIGINT/SIGTERM.
pub fn register_temp(p: &Path) {
    if let Ok(mut v) = TEMP_FILES.lock() {
        v.push(p.to_path_buf());
    }
}

/// Forget a temporary file (renamed into place or removed).
pub fn unregister_temp(p: &Path) {
    if let Ok(mut v) = TEMP_FILES.lock()
        && let Some(i) = v.iter().position(|x| x == p)
    {
        v.swap_remove(i);
    }
}

/// What the interrupt message says about the outputs (after "interrupted[: N temporary files
/// removed]; "), when a front end sets it ([`set_interrupt_note`]).
static INTERRUPT_NOTE: Mutex<Option<String>> = Mutex::new(None);

/// The default interrupt note: `sfc run`'s directory convention.
const DEFAULT_INTERRUPT_NOTE: &str = "outputs without summary.json are incomplete";

/// Replace what an interrupted run says about its outputs (by default "outputs without
/// summary.json are incomplete", which describes `sfc run`'s output directory; empty: nothing,
/// for commands that write no outputs).
pub fn set_interrupt_note(note: &str) {
    if let Ok(mut n) = INTERRUPT_NOTE.lock() {
        *n = Some(note.to_string());
    }
}

/// A request to stop the runs of this process ([`request_interrupt`]).
static INTERRUPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The error of a run stopped by [`request_interrupt`].
pub const INTERRUPTED: &str = "interrupted";

/// Ask every run of this process to stop: the event loop stops within 65,536 events, the run
/// returns the error [`INTERRUPTED`] without writing its outputs (output files already
/// complete stay; temporary files are removed), and an experiment starts no further point.
/// For front ends that handle Ctrl-C themselves and cannot exit the process (the Python
/// package); `sfc`'s own handler ([`install_signal_handlers`]) exits instead.
pub fn request_interrupt() {
    INTERRUPT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Withdraw [`request_interrupt`] (once the interrupted runs have returned), so later runs
/// run.
pub fn clear_interrupt() {
    INTERRUPT.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// [`request_interrupt`] was called (and not withdrawn).
#[inline]
pub fn interrupt_requested() -> bool {
    INTERRUPT.load(std::sync::atomic::Ordering::Relaxed)
}

/// On SIGINT/SIGTERM: remove the temporary files being written, say so, exit with status 130.
/// Completed output files stay; a directory without `summary.json` is an incomplete set (the
/// message is the front end's, see [`set_interrupt_note`]).
pub fn install_signal_handlers() {
    let _ = ctrlc::set_handler(|| {
        let mut removed = 0;
        if let Ok(v) = TEMP_FILES.lock() {
            for p in v.iter() {
                if std::fs::remove_file(p).is_ok() {
                    removed += 1;
                }
            }
        }
        let note = INTERRUPT_NOTE
            .lock()
            .ok()
            .and_then(|n| n.clone())
            .unwrap_or_else(|| DEFAULT_INTERRUPT_NOTE.to_string());
        // Say only what happened: a command that writes nothing (`validate`) has no temporary
        // files and sets an empty note.
        let mut msg = String::from("interrupted");
        if removed > 0 {
            msg.push_str(&format!(": {removed} temporary files removed"));
        }
        if !note.is_empty() {
            msg.push_str(&format!("; {note}"));
        }
        let _ = writeln!(std::io::stderr(), "{msg}");
        std::process::exit(130);
    });
}
