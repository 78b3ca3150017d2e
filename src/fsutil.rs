//! File-system helpers with clear errors: reading text files (a non-UTF-8 byte is reported
//! with its line and column), describing OS errors with the operation and path, and checking
//! output locations *before* a run so that a finished simulation is never thrown away.

use std::io;
use std::path::{Path, PathBuf};

/// Describe an I/O error on `path` during `what` (e.g. "cannot create directory"), in words a
/// user can act on rather than the bare OS message (`File exists`, `Permission denied`).
pub fn describe(what: &str, path: &Path, e: &io::Error) -> String {
    let hint = match e.kind() {
        io::ErrorKind::NotFound => " (no such file or directory)",
        io::ErrorKind::PermissionDenied => " (permission denied)",
        io::ErrorKind::AlreadyExists => " (a file or directory of that name already exists)",
        io::ErrorKind::NotADirectory => " (a component of the path is a file, not a directory)",
        io::ErrorKind::IsADirectory => " (it is a directory)",
        io::ErrorKind::ReadOnlyFilesystem => " (read-only file system)",
        io::ErrorKind::StorageFull => " (no space left on the device)",
        io::ErrorKind::ResourceBusy => " (the device or resource is busy, e.g. a mount point)",
        _ => "",
    };
    format!("{what} {}: {e}{hint}", path.display())
}

/// Largest input file read whole (scenario, experiment, HPCC config, topology and CDF files),
/// bytes: 1 GiB. Larger is an error naming the file instead of growing without bound (a path
/// such as `/dev/zero` grew to 16 GB before aborting).
pub const MAX_INPUT_FILE_BYTES: u64 = 1 << 30;

/// Longest line accepted in a flow file, bytes (1 MiB; a flow line is about 40 bytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Read a text file. A file that is not UTF-8 is reported with the line and column of the
/// first bad byte; other failures name the path and the reason. At most
/// [`MAX_INPUT_FILE_BYTES`].
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = read_limited(path, MAX_INPUT_FILE_BYTES, None)?;
    text_from_bytes(bytes, &path.display().to_string())
}

/// Like [`read_text`], for line-oriented files of any size (flow files): no limit on the
/// file, but none of its lines may be longer than [`MAX_LINE_BYTES`] (so an endless file
/// without line breaks stops at once).
pub fn read_text_lines(path: &Path) -> Result<String, String> {
    let bytes = read_limited(path, u64::MAX, Some(MAX_LINE_BYTES))?;
    text_from_bytes(bytes, &path.display().to_string())
}

/// The bytes of `path`: an error naming it beyond `max_bytes`, or (with `max_line`) at the
/// first line longer than that.
fn read_limited(path: &Path, max_bytes: u64, max_line: Option<usize>) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| describe("cannot read", path, &e))?;
    let cap = f
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len().min(max_bytes) as usize);
    let mut r = f.take(max_bytes.saturating_add(1));
    let mut bytes = Vec::with_capacity(cap);
    let mut chunk = vec![0u8; 1 << 16];
    // Bytes since the last line break, and the number of that line.
    let (mut run, mut line) = (0usize, 1usize);
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(describe("cannot read", path, &e)),
        };
        let c = &chunk[..n];
        if let Some(max) = max_line {
            for part in c.split_inclusive(|&b| b == b'\n') {
                run += part.len();
                if run > max + 1 {
                    return Err(format!(
                        "{}:{line}: line longer than {max} bytes, the longest accepted (is it \
                         the right file?)",
                        path.display()
                    ));
                }
                if part.ends_with(b"\n") {
                    run = 0;
                    line += 1;
                }
            }
        }
        // Checked before the bytes are added: the buffer never grows past the limit.
        if (bytes.len() + n) as u64 > max_bytes {
            return Err(format!(
                "{}: larger than {}, the largest input file accepted (is it the right file?)",
                path.display(),
                if max_bytes.is_multiple_of(1 << 30) {
                    format!("{} GiB", max_bytes >> 30)
                } else {
                    format!("{max_bytes} bytes")
                }
            ));
        }
        bytes.extend_from_slice(c);
    }
    Ok(bytes)
}

/// UTF-8 text from `bytes` read from `name` (without a leading byte-order mark), or an error
/// with the position of the first byte that is not UTF-8.
pub fn text_from_bytes(mut bytes: Vec<u8>, name: &str) -> Result<String, String> {
    // A UTF-8 byte-order mark (Windows editors) is not part of the text.
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = b[..bad].iter().filter(|&&c| c == b'\n').count() + 1;
        let col = bad
            - b[..bad]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        format!(
            "{name}:{line}:{col}: not UTF-8 text (byte 0x{:02x}); save the file as UTF-8",
            b[bad]
        )
    })
}

/// Make sure `dir` can receive output files: create it (and its parents) if missing, refuse
/// an existing non-directory, and prove that a file can be created in it. Called before a run.
pub fn check_output_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "output directory {} is an existing file, not a directory",
            dir.display()
        ));
    }
    if !dir.exists()
        && let Ok(target) = std::fs::read_link(dir)
    {
        // A dangling symbolic link: `create_dir_all` would only say "File exists".
        return Err(format!(
            "output directory {} is a symbolic link to {}, which does not exist: create that directory or remove the link",
            dir.display(),
            target.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| describe("cannot create output directory", dir, &e))?;
    probe_write(dir)
}

/// Make sure an output *file* can be written at `path`: its directory exists and is writable,
/// and `path` is not a directory. `inputs` are the run's input files: writing over one of them
/// is refused.
///
/// A symbolic link is checked as its target (the writers write the target, see
/// [`crate::metrics::output::AtomicWriter`]). An existing target that is neither a regular
/// file nor a directory (a FIFO, a character device) is written in place: it must be
/// writable, and it is never opened here (opening a FIFO would wait for a reader).
pub fn check_output_file(path: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    if path.is_dir() || path.file_name().is_none() {
        return Err(format!(
            "{} is a directory, not a file path",
            path.display()
        ));
    }
    if is_special(path) {
        return check_writable(path);
    }
    let target = resolve_symlinks(path).map_err(|e| describe("cannot resolve", path, &e))?;
    if target.file_name().is_none() {
        return Err(format!(
            "{} is a directory, not a file path",
            path.display()
        ));
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            parent.display()
        ));
    }
    let me = canonical_target(&target);
    for i in inputs {
        if let Ok(ci) = i.canonicalize()
            && Some(&ci) == me.as_ref()
        {
            return Err(format!(
                "{} is also an input file of this run: writing it would overwrite the input",
                path.display()
            ));
        }
    }
    probe_write(&parent)
}

/// `path` exists and is neither a regular file nor a directory (after following symbolic
/// links): a FIFO, a character or block device, a socket.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The existing special file `path` may be opened for writing by this process.
fn check_writable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return Err(format!("{}: the path contains a NUL byte", path.display()));
        };
        // SAFETY: `c` is a valid NUL-terminated string; access() only reads it.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            let e = io::Error::last_os_error();
            return Err(describe("cannot write", path, &e));
        }
    }
    Ok(())
}

/// Follow `path` while it is a symbolic link (a relative link is relative to the link's
/// directory) and return the final path, which need not exist (a dangling link yields its
/// target). Only the last component is followed: directories on the way stay as given. A
/// chain of more than 40 links is an error (a loop).
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(&p)?;
                p = if t.is_absolute() {
                    t
                } else {
                    p.parent().unwrap_or(Path::new("")).join(t)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// The file an output path designates, for telling whether two paths name the same file:
/// symbolic links followed, `.`/`..` and relative paths resolved against the current
/// directory. `None` when its directory does not exist.
pub fn output_identity(path: &Path) -> Option<PathBuf> {
    canonical_target(&resolve_symlinks(path).ok()?)
}

/// Canonical form of a (possibly not yet existing) file path: its canonical parent joined
/// with its name.
fn canonical_target(path: &Path) -> Option<PathBuf> {
    if let Ok(c) = path.canonicalize() {
        return Some(c);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// Create and remove a hidden probe file in `dir`.
fn probe_write(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".sfc-write-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| describe("cannot write into", dir, &e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole-file reads stop at their size limit, line readers at the first overlong line,
    /// naming the file (and the line): `/dev/zero` as an input grew to 16 GB before.
    #[test]
    fn reads_are_bounded() {
        let dir = std::env::temp_dir().join(format!("sfc-fsutil-reads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f.txt");
        std::fs::write(&f, "ab\ncdef\n").unwrap();
        assert_eq!(read_limited(&f, 8, None).unwrap(), b"ab\ncdef\n");
        let e = read_limited(&f, 7, None).unwrap_err();
        assert!(e.contains("f.txt: larger than 7 bytes"), "{e}");
        // A line of `max` bytes plus its line break is accepted; one more byte is not.
        assert!(read_limited(&f, u64::MAX, Some(4)).is_ok());
        let e = read_limited(&f, u64::MAX, Some(3)).unwrap_err();
        assert!(e.contains("f.txt:2: line longer than 3 bytes"), "{e}");
        let e = read_limited(Path::new("/dev/zero"), u64::MAX, Some(1000)).unwrap_err();
        assert!(e.contains("/dev/zero:1: line longer"), "{e}");
        let e = read_limited(Path::new("/dev/zero"), 1 << 20, None).unwrap_err();
        assert!(e.contains("/dev/zero: larger than 1048576 bytes"), "{e}");
        assert!(read_text(&f).is_ok() && read_text_lines(&f).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn non_utf8_names_line_and_column() {
        // Line 2, third byte: "ab" then 0xff.
        let e = text_from_bytes(b"x = 1\nab\xff\n".to_vec(), "f.toml").unwrap_err();
        assert!(e.starts_with("f.toml:2:3: not UTF-8"), "{e}");
        assert!(e.contains("0xff"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_to_a_dangling_target() {
        let d = std::env::temp_dir().join(format!("sfc-fsutil-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/b.txt", d.join("a.txt")).unwrap();
        std::os::unix::fs::symlink("c.txt", d.join("sub/b.txt")).unwrap();
        assert_eq!(
            resolve_symlinks(&d.join("a.txt")).unwrap(),
            d.join("sub/c.txt")
        );
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert!(resolve_symlinks(&d.join("loop")).is_err());
        assert_eq!(
            output_identity(&d.join("a.txt")),
            output_identity(&d.join("sub/./c.txt"))
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
