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

/// Read a text file. A file that is not UTF-8 is reported with the line and column of the
/// first bad byte; other failures name the path and the reason.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| describe("cannot read", path, &e))?;
    text_from_bytes(bytes, &path.display().to_string())
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
