//! Running a whole CUDA program under fencehound's `libcudart.so.13` (the `cudart/`
//! crate): finding that library, putting it first on the dynamic loader's path, passing
//! the model and seed through the environment, and collecting the program's exit status,
//! output and side channel. `fencehound exec` runs a program once this way; program
//! campaigns ([`crate::program_campaign`]) run it many times, one process per execution.
//! This module knows nothing of campaigns.

use fencehound_cudart_protocol::{read_side_channel, RuntimeConfig, SideChannel, HANG_EXIT_STATUS};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("fencehound's CUDA runtime (libcudart.so) was not found; looked at:\n{}\nbuild it with `cargo build` (it is the `cudart` crate) or set FENCEHOUND_CUDART to the library", .0.iter().map(|p| format!("  - {}", p.display())).collect::<Vec<_>>().join("\n"))]
    RuntimeMissing(Vec<PathBuf>),
    #[error("{0}")]
    Io(String),
    #[error("{path}: {message}")]
    Binary { path: PathBuf, message: String },
}

/// Finds fencehound's runtime library: `$FENCEHOUND_CUDART`, else cargo's build of it
/// next to the running executable (`deps/libcudart.so`, which cargo refreshes whenever it
/// builds the CLI — the copy it uplifts to `target/*/` is only refreshed when the `cudart`
/// package itself is built —, then `libcudart.so` beside the executable or one directory
/// up, for test binaries in `deps/`), else `../lib/fencehound/libcudart.so.13` (an
/// installed layout).
pub fn find_runtime() -> Result<PathBuf, ProgramError> {
    if let Some(v) = std::env::var_os("FENCEHOUND_CUDART").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ProgramError::RuntimeMissing(vec![p]))
        };
    }
    let mut looked = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let mut cands = vec![dir.join("deps/libcudart.so"), dir.join("libcudart.so")];
        if let Some(up) = dir.parent() {
            cands.push(up.join("libcudart.so"));
            // Examples run from target/*/examples.
            cands.push(up.join("deps/libcudart.so"));
            cands.push(up.join("lib/fencehound/libcudart.so.13"));
        }
        for c in cands {
            if c.is_file() {
                return Ok(c);
            }
            looked.push(c);
        }
    }
    Err(ProgramError::RuntimeMissing(looked))
}

/// A directory holding `libcudart.so.13` (a link to fencehound's runtime), to put first on
/// `LD_LIBRARY_PATH`: programs ask the loader for that file name. Removed when dropped.
#[derive(Debug)]
pub struct RuntimeDir {
    dir: tempfile::TempDir,
    pub library: PathBuf,
}

impl RuntimeDir {
    pub fn new() -> Result<RuntimeDir, ProgramError> {
        let library = find_runtime()?;
        let library = std::fs::canonicalize(&library).unwrap_or(library);
        let dir = tempfile::Builder::new()
            .prefix("fencehound-cudart-")
            .tempdir()
            .map_err(|e| ProgramError::Io(format!("cannot create a temporary directory: {e}")))?;
        std::os::unix::fs::symlink(&library, dir.path().join("libcudart.so.13")).map_err(|e| {
            ProgramError::Io(format!(
                "cannot link {} into {}: {e}",
                library.display(),
                dir.path().display()
            ))
        })?;
        Ok(RuntimeDir { dir, library })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `LD_LIBRARY_PATH` with our directory first.
    pub fn ld_library_path(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.dir.path().to_path_buf()];
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            dirs.extend(std::env::split_paths(&old));
        }
        std::env::join_paths(dirs).unwrap_or_else(|_| self.dir.path().as_os_str().to_owned())
    }
}

/// What [`check_program`] learned of a program it lets through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgramInfo {
    /// The program names `libcuda.so.1` (linked against it, or loading it itself): it
    /// calls the CUDA driver API, which fencehound does not replace — its driver calls
    /// reach the machine's driver if there is one (not the virtual GPU), and without one
    /// the program cannot start ([`DRIVER_API_NOTE`]).
    pub driver_api: bool,
}

/// Refuses programs that cannot load our runtime: an ELF that has CUDA registration code
/// but no `libcudart.so.13` dependency was linked with the static runtime (nvcc's default).
/// Anything else (scripts, programs that start others) is let through, with what the
/// binary shows of it ([`ProgramInfo`]).
pub fn check_program(path: &Path) -> Result<ProgramInfo, ProgramError> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(ProgramInfo::default());
    };
    if !bytes.starts_with(b"\x7fELF") {
        return Ok(ProgramInfo::default());
    }
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if has(b"__cudaRegisterFatBinary") && !has(b"libcudart.so.13") {
        return Err(ProgramError::Binary {
            path: path.to_path_buf(),
            message: "linked with the static CUDA runtime (nvcc's default), which fencehound cannot replace; rebuild with `fencehound nvcc` (or nvcc -cudart shared)".into(),
        });
    }
    Ok(ProgramInfo {
        driver_api: has(b"libcuda.so.1"),
    })
}

/// What `fencehound exec` tells the user of a program with [`ProgramInfo::driver_api`].
pub const DRIVER_API_NOTE: &str = "the program uses the CUDA driver API (it names libcuda.so.1): \
     fencehound replaces the runtime API (libcudart.so.13) only, so its driver calls \
     (cuInit, cuModuleLoad, cuLaunchKernel, ...) do not reach the virtual GPU, and on a \
     machine without an NVIDIA driver the program cannot start";

/// How the program's standard streams are handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streams {
    /// The program writes to our terminal (`fencehound exec`).
    Inherit,
    /// Captured for oracles (program campaigns).
    Capture,
}

/// One run of a program.
#[derive(Debug, Clone)]
pub struct ProgramRun<'a> {
    pub argv: &'a [String],
    pub cwd: Option<&'a Path>,
    pub config: RuntimeConfig,
    pub streams: Streams,
    /// Kill the program after this long (host code can hang too).
    pub timeout: Option<Duration>,
    /// Extra environment (`NAME`, value).
    pub env: &'a [(String, String)],
    /// Write the side channel here (kept) instead of a temporary file.
    pub side_channel: Option<&'a Path>,
    /// Set from elsewhere (Ctrl-C) to kill the program.
    pub cancel: Option<&'a AtomicBool>,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct ProgramOutcome {
    /// Exit status, when the program exited.
    pub status: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Killed by us after [`ProgramRun::timeout`].
    pub killed_after_timeout: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub side: SideChannel,
    pub wall: Duration,
}

impl ProgramOutcome {
    /// The runtime ended the program because a launch hung (deadlock or timeout).
    pub fn hung(&self) -> bool {
        self.status == Some(HANG_EXIT_STATUS)
            && self.side.first_failure().is_some_and(|l| {
                matches!(
                    l.outcome,
                    fencehound_cudart_protocol::LaunchOutcome::Deadlock
                        | fencehound_cudart_protocol::LaunchOutcome::Timeout
                )
            })
    }
}

/// Runs the program once under fencehound's runtime from `rt`.
pub fn run_program(rt: &RuntimeDir, run: &ProgramRun<'_>) -> Result<ProgramOutcome, ProgramError> {
    let Some((prog, args)) = run.argv.split_first() else {
        return Err(ProgramError::Io("no program to run".into()));
    };
    let temp;
    let side_path: &Path = match run.side_channel {
        Some(p) => {
            std::fs::write(p, b"").map_err(|e| {
                ProgramError::Io(format!(
                    "cannot create the side channel {}: {e}",
                    p.display()
                ))
            })?;
            p
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("fencehound-side-")
                .suffix(".jsonl")
                .tempfile()
                .map_err(|e| {
                    ProgramError::Io(format!("cannot create the side-channel file: {e}"))
                })?;
            temp.path()
        }
    };
    let mut cfg = run.config.clone();
    cfg.side_channel = Some(side_path.to_path_buf());
    let mut cmd = Command::new(prog);
    cmd.args(args);
    if let Some(d) = run.cwd {
        cmd.current_dir(d);
    }
    cmd.env("LD_LIBRARY_PATH", rt.ld_library_path());
    for (k, v) in cfg.to_env() {
        cmd.env(k, v);
    }
    for (k, v) in run.env {
        cmd.env(k, v);
    }
    let capture = run.streams == Streams::Capture;
    cmd.stdin(if capture {
        Stdio::null()
    } else {
        Stdio::inherit()
    });
    cmd.stdout(if capture {
        Stdio::piped()
    } else {
        Stdio::inherit()
    });
    cmd.stderr(if capture {
        Stdio::piped()
    } else {
        Stdio::inherit()
    });
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| ProgramError::Io(format!("cannot run {prog}: {e}")))?;
    // Drain the pipes on threads so a chatty program cannot block on a full pipe.
    let reader = |s: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut s) = s {
                let _ = s.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out_t = reader(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err_t = reader(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {
                let cancelled = run.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
                if cancelled || run.timeout.is_some_and(|t| start.elapsed() > t) {
                    let _ = child.kill();
                    killed = !cancelled;
                    match child.wait() {
                        Ok(s) => break s,
                        Err(e) => return Err(ProgramError::Io(format!("waiting for {prog}: {e}"))),
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(ProgramError::Io(format!("waiting for {prog}: {e}"))),
        }
    };
    let wall = start.elapsed();
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    let side = read_side_channel(side_path)
        .map_err(|e| ProgramError::Io(format!("cannot read the side channel: {e}")))?;
    Ok(ProgramOutcome {
        status: status.code(),
        signal: status.signal(),
        killed_after_timeout: killed,
        stdout,
        stderr,
        side,
        wall,
    })
}
