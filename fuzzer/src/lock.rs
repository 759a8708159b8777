//! Report locks: the run that writes a report holds an exclusive `flock(2)` on
//! `REPORT.lock` for as long as it runs, so a second run (or a `--resume`) never writes
//! the same report at the same time.
//!
//! Why `flock` on a separate file rather than "the lock file exists": the kernel drops a
//! `flock` when its holder dies, however it dies (SIGKILL past a cluster time limit
//! included), so a lock file left behind by a dead process is *stale by construction*:
//! the next run locks it at once. The file holds the holder's pid, only for messages.
//!
//! The holder deletes the lock file before it lets go. A process that opened the file
//! just before that deletion may then lock a file that no longer has a name; to rule out
//! two holders, a lock counts only if the path still names the locked file afterwards
//! (same device and inode), otherwise the attempt is repeated.
//!
//! On Linux, NFS clients emulate `flock` with byte-range locks, so the lock also holds
//! between machines sharing an NFS (v4) output directory.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{report} is being written by another run that is still alive{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Held { report: PathBuf, pid: Option<u32> },
    #[error("cannot lock {}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// An exclusive lock on a report, released (and its lock file removed) on drop.
#[derive(Debug)]
pub struct ReportLock {
    file: File,
    path: PathBuf,
    /// The pid of a dead holder whose lock file was taken over.
    pub stale_pid: Option<u32>,
}

/// The lock file of a report: `REPORT.lock` beside it.
pub fn lock_path(report: &Path) -> PathBuf {
    let mut name = report
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "report.json".into());
    name.push(".lock");
    report.with_file_name(name)
}

impl ReportLock {
    /// Takes the lock of `report` without waiting: [`LockError::Held`] when a live run
    /// holds it.
    pub fn try_acquire(report: &Path) -> Result<ReportLock, LockError> {
        let path = lock_path(report);
        let io = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        // Bounded: each retry means another process deleted the file in between.
        for _ in 0..100 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            let mut old = String::new();
            let _ = file.read_to_string(&mut old);
            let old_pid = old.trim().parse::<u32>().ok();
            if !try_flock(&file).map_err(io)? {
                return Err(LockError::Held {
                    report: report.to_path_buf(),
                    pid: old_pid,
                });
            }
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            write!(file, "{}", std::process::id()).map_err(io)?;
            let _ = file.flush();
            return Ok(ReportLock {
                file,
                path,
                stale_pid: old_pid.filter(|p| *p != std::process::id()),
            });
        }
        Err(io(std::io::Error::other(
            "the lock file kept being replaced by other runs",
        )))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ReportLock {
    fn drop(&mut self) {
        // Delete while still holding the lock (see the module comment); closing the file
        // releases it.
        let _ = std::fs::remove_file(&self.path);
        let _ = &self.file;
    }
}

#[cfg(unix)]
fn try_flock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: a valid open descriptor; flock has no memory effects.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

/// Without `flock` the lock is advisory only within this process.
#[cfg(not(unix))]
fn try_flock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.report.json");
        let a = ReportLock::try_acquire(&report).unwrap();
        assert!(a.path().exists());
        // flock locks belong to the open file description: a second open in the same
        // process conflicts as another process would.
        match ReportLock::try_acquire(&report) {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(a);
        assert!(!lock_path(&report).exists());
        let b = ReportLock::try_acquire(&report).unwrap();
        assert_eq!(b.stale_pid, None);
    }

    #[test]
    fn a_stale_lock_file_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.report.json");
        // What a SIGKILLed holder leaves: the file with its pid, no flock.
        std::fs::write(lock_path(&report), "999999").unwrap();
        let l = ReportLock::try_acquire(&report).unwrap();
        assert_eq!(l.stale_pid, Some(999_999));
        let pid = std::fs::read_to_string(lock_path(&report)).unwrap();
        assert_eq!(pid, std::process::id().to_string());
    }
}
