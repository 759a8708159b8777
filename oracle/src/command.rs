//! The `command` oracle: an external program judges the outputs.
//!
//! For each judgement a fresh temporary directory holds
//!
//! ```text
//! manifest.json
//! outputs/<buffer>.npy    the execution's outputs
//! inputs/<buffer>.npy     the initial contents
//! golden/<buffer>.npy     the golden (sc) run's outputs, when the caller has them
//! ```
//!
//! and the manifest describes them (file paths are relative to the directory):
//!
//! ```json
//! { "version": 1, "dir": "/tmp/fencehound-oracle-XXXX",
//!   "outputs": [ { "name": "c", "type": "u32", "len": 4, "file": "outputs/c.npy" } ],
//!   "inputs":  [ ... ],
//!   "golden":  null }
//! ```
//!
//! The program is started directly (no shell) from `argv`, with `{dir}` and `{manifest}`
//! replaced in every argument by the directory and the manifest's path (also given as the
//! environment variables `FENCEHOUND_ORACLE_DIR` and `FENCEHOUND_ORACLE_MANIFEST`), in
//! the campaign's directory, with stdin closed. Exit status 0 passes; any other status,
//! or death by a signal, fails, and the tail of its stdout and stderr goes into the
//! report. Not finishing within the timeout is an [`OracleError::CommandTimeout`]: a judge
//! that hangs says nothing about the kernel. On Unix the program gets its own process
//! group, and the whole group is killed on timeout so no helper it started lingers.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::npy::NpyFile;
use crate::{Context, Failure, OracleError, Outputs};

/// How much of the end of stdout and of stderr a failure keeps.
pub const OUTPUT_TAIL_BYTES: u64 = 2000;

#[derive(Serialize)]
struct Manifest<'a> {
    version: u32,
    dir: &'a Path,
    outputs: Vec<NpyFile>,
    inputs: Vec<NpyFile>,
    golden: Option<Vec<NpyFile>>,
}

pub(crate) fn run(
    oracle: &str,
    argv: &[String],
    timeout_ms: u64,
    cx: &Context<'_>,
) -> Result<Option<Failure>, OracleError> {
    let temp_err = |source| OracleError::WriteFile {
        path: std::env::temp_dir(),
        source,
    };
    let tmp = tempfile::Builder::new()
        .prefix("fencehound-oracle-")
        .tempdir()
        .map_err(temp_err)?;
    let dir = tmp.path();
    let manifest = Manifest {
        version: 1,
        dir,
        outputs: write_set(dir, "outputs", cx.outputs)?,
        inputs: write_set(dir, "inputs", cx.inputs)?,
        golden: cx.golden.map(|g| write_set(dir, "golden", g)).transpose()?,
    };
    let manifest_path = dir.join("manifest.json");
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| OracleError::WriteFile {
        path: manifest_path.clone(),
        source: e.into(),
    })?;
    std::fs::write(&manifest_path, json).map_err(|source| OracleError::WriteFile {
        path: manifest_path.clone(),
        source,
    })?;

    let dir_text = dir.to_string_lossy();
    let manifest_text = manifest_path.to_string_lossy();
    let args: Vec<String> = argv
        .iter()
        .map(|a| {
            a.replace("{dir}", &dir_text)
                .replace("{manifest}", &manifest_text)
        })
        .collect();
    let (program, rest) = match args.split_first() {
        Some(split) => split,
        None => {
            return Err(OracleError::InvalidSpec {
                oracle: oracle.to_string(),
                reason: "`argv` must name a program".to_string(),
            })
        }
    };

    let spawn_err = |source| OracleError::Spawn {
        oracle: oracle.to_string(),
        program: program.clone(),
        source,
    };
    // Files rather than pipes: nothing to drain while waiting, and a grandchild that keeps
    // the descriptors open cannot make us block.
    let mut stdout = tempfile::tempfile().map_err(temp_err)?;
    let mut stderr = tempfile::tempfile().map_err(temp_err)?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env("FENCEHOUND_ORACLE_DIR", dir)
        .env("FENCEHOUND_ORACLE_MANIFEST", &manifest_path)
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().map_err(temp_err)?)
        .stderr(stderr.try_clone().map_err(temp_err)?);
    if !cx.base_dir.as_os_str().is_empty() {
        cmd.current_dir(cx.base_dir);
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(spawn_err)?;

    // A timeout too large for the clock (u64::MAX ms) means no timeout.
    let deadline = Instant::now().checked_add(Duration::from_millis(timeout_ms));
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(spawn_err)? {
            break status;
        }
        let now = Instant::now();
        let left = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(now));
        if left.is_zero() {
            kill_tree(&mut child);
            return Err(OracleError::CommandTimeout {
                oracle: oracle.to_string(),
                program: program.clone(),
                timeout_ms,
            });
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    if status.success() {
        return Ok(None);
    }
    let mut diff = String::new();
    for (label, file) in [("stdout", &mut stdout), ("stderr", &mut stderr)] {
        let tail = read_tail(file);
        if !tail.trim().is_empty() {
            diff.push_str(&format!("{label}:\n{tail}"));
            if !tail.ends_with('\n') {
                diff.push('\n');
            }
        }
    }
    Ok(Some(Failure {
        oracle: oracle.to_string(),
        message: format!("`{program}` {}", describe_status(status)),
        diff,
    }))
}

fn write_set(dir: &Path, sub: &str, set: &Outputs) -> Result<Vec<NpyFile>, OracleError> {
    let path = dir.join(sub);
    std::fs::create_dir(&path).map_err(|source| OracleError::WriteFile {
        path: path.clone(),
        source,
    })?;
    let mut files = set.write_npy_dir(&path)?;
    for f in &mut files {
        f.file = format!("{sub}/{}", f.file);
    }
    Ok(files)
}

fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("was killed by signal {signal}");
    }
    format!("failed ({status})")
}

fn kill_tree(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group we created with
        // process_group(0); it touches no memory of ours. The child is not yet reaped
        // (we have not seen it exit), so the group id cannot have been reused.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    // Also covers non-Unix, and a failed group kill; an error means it already exited.
    let _ = child.kill();
    let _ = child.wait();
}

fn read_tail(file: &mut File) -> String {
    let len = file.seek(SeekFrom::End(0)).unwrap_or(0);
    let start = len.saturating_sub(OUTPUT_TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        format!("[... {start} bytes before]\n{text}")
    } else {
        text
    }
}
