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

/// UTF-8 text from `bytes` read from `name`, or an error with the position of the first byte
/// that is not UTF-8.
pub fn text_from_bytes(bytes: Vec<u8>, name: &str) -> Result<String, String> {
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
    std::fs::create_dir_all(dir)
        .map_err(|e| describe("cannot create output directory", dir, &e))?;
    probe_write(dir)
}

/// Make sure an output *file* can be written at `path`: its directory exists and is writable,
/// and `path` is not a directory. `inputs` are the run's input files: writing over one of them
/// is refused.
pub fn check_output_file(path: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    if path.is_dir() || path.file_name().is_none() {
        return Err(format!(
            "{} is a directory, not a file path",
            path.display()
        ));
    }
    let parent = match path.parent() {
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
    let me = canonical_target(path);
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
}
