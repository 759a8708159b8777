//! GPU executions run in a worker process, watched by the campaign process.
//!
//! A kernel that spins forever cannot be stopped from inside the process that launched it
//! (the CUDA context is stuck in the launch), and a kernel that faults leaves its context
//! unusable. So the campaign process (the [`Supervisor`]) starts a worker — by default
//! `fencehound gpu-worker` — and talks to it over its standard input and output, one JSON
//! object per line:
//!
//! ```text
//! worker → {"hello":{"device":"NVIDIA A100-SXM4-40GB (sm_80)"}}      (or {"error":...} and exit)
//! super  → {"load":{"variant":1,"ptx":"...","buffers":["00ff..",..],"launches":[..],"sizes":{..}}}
//! worker → {"loaded":{"variant":1}}                                   (or {"error":...})
//! super  → {"run":{"exec":7,"variant":1,"config":{..}}}
//! worker → {"done":{"exec":7,"outputs":["..",..],"stats":{..},"end":{"completed":null},"wall_ms":3}}
//! ```
//!
//! The supervisor gives every execution a deadline. When no answer comes in time, it kills
//! the worker (a spinning kernel ends with its process), reports the execution as a
//! wall-clock timeout, and starts a fresh worker for the next one; the campaign goes on.
//! A worker that dies, answers nonsense, or reports a fault whose context cannot be
//! reused is replaced the same way. Variants are loaded into a worker once and reused.

use fencehound_handlers::rewrite::layout::Sizes;
use fencehound_handlers::BufferStats;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// One launch, as the worker needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchSpec {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    pub args: Vec<ArgSpec>,
}

/// A kernel argument: a campaign buffer (by index) or the bytes of a scalar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgSpec {
    Buffer(usize),
    Bytes(String),
}

/// A variant: the instrumented PTX and the campaign's buffers and launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub variant: u64,
    pub ptx: String,
    /// Initial contents of every buffer, hex.
    pub buffers: Vec<String>,
    pub launches: Vec<LaunchSpec>,
    pub sizes: Sizes,
}

/// How one execution buffers (the device policy's parameters included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// `bugaroo`, `scoped` or `sc`.
    pub model: String,
    pub p: f64,
    pub seed: u64,
    pub capacity: u32,
    pub liveness_period: u32,
    pub overlay_capacity: u32,
    pub buffer_global: bool,
    pub buffer_shared: bool,
    pub kernels: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Request {
    Load(Load),
    Run {
        exec: u64,
        variant: u64,
        config: RunConfig,
    },
}

/// How an execution on the device ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceEnd {
    Completed,
    /// The launch failed (illegal address, trap, ...): the driver's message. The worker's
    /// context is lost; it exits after answering.
    Failed {
        launch: usize,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    pub exec: u64,
    /// Every buffer after the last launch, hex.
    pub outputs: Vec<String>,
    pub stats: BufferStats,
    pub end: DeviceEnd,
    pub wall_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Response {
    Hello { device: String },
    Loaded { variant: u64 },
    Done(Box<Done>),
    Error { message: String },
}

pub fn hex(bytes: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(D[(b >> 4) as usize] as char);
        s.push(D[(b & 15) as usize] as char);
    }
    s
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let v = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(v(p[0])? << 4 | v(p[1])?))
        .collect()
}

/// Why the supervisor has no answer for an execution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkerError {
    /// The deadline passed: the worker was killed (a kernel that does not finish).
    #[error("no answer within {0:?}: the worker was killed (a kernel that does not finish)")]
    Timeout(Duration),
    #[error("the worker could not start: {0}")]
    Spawn(String),
    /// The worker said it cannot run anything (no driver, no device, ...).
    #[error("{0}")]
    Refused(String),
    #[error("the worker failed: {0}")]
    Failed(String),
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    device: String,
    loaded: HashSet<u64>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs executions in a worker process and keeps one alive (see the module docs).
pub struct Supervisor {
    command: Vec<OsString>,
    /// How long a worker may take to start and say hello.
    pub start_timeout: Duration,
    running: Option<Running>,
    /// Workers started so far (restarts after a timeout or failure included).
    pub started: u32,
}

impl Supervisor {
    /// `command`: the worker program and its arguments.
    pub fn new(command: Vec<OsString>) -> Supervisor {
        Supervisor {
            command,
            start_timeout: Duration::from_secs(60),
            running: None,
            started: 0,
        }
    }

    /// The device the current (or a new) worker drives.
    pub fn device(&mut self) -> Result<String, WorkerError> {
        Ok(self.ensure()?.device.clone())
    }

    fn ensure(&mut self) -> Result<&mut Running, WorkerError> {
        if self.running.is_none() {
            self.running = Some(self.spawn()?);
        }
        self.running
            .as_mut()
            .ok_or_else(|| WorkerError::Failed("no worker".into()))
    }

    fn spawn(&mut self) -> Result<Running, WorkerError> {
        let (prog, args) = self
            .command
            .split_first()
            .ok_or_else(|| WorkerError::Spawn("empty worker command".into()))?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| WorkerError::Spawn(format!("{}: {e}", prog.to_string_lossy())))?;
        self.started += 1;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(WorkerError::Spawn("no pipes to the worker".into()));
        };
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut r = Running {
            child,
            stdin,
            lines,
            device: String::new(),
            loaded: HashSet::new(),
        };
        match Self::receive(&mut r, self.start_timeout)? {
            Response::Hello { device } => {
                r.device = device;
                Ok(r)
            }
            Response::Error { message } => Err(WorkerError::Refused(message)),
            other => Err(WorkerError::Failed(format!(
                "expected hello, got {other:?}"
            ))),
        }
    }

    fn receive(r: &mut Running, timeout: Duration) -> Result<Response, WorkerError> {
        match r.lines.recv_timeout(timeout) {
            Ok(line) => serde_json::from_str(&line).map_err(|e| {
                WorkerError::Failed(format!("unreadable answer `{}`: {e}", truncate(&line)))
            }),
            Err(RecvTimeoutError::Timeout) => Err(WorkerError::Timeout(timeout)),
            Err(RecvTimeoutError::Disconnected) => {
                let status = r.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(WorkerError::Failed(format!("the worker exited ({status})")))
            }
        }
    }

    fn send(r: &mut Running, req: &Request) -> Result<(), WorkerError> {
        let mut line =
            serde_json::to_string(req).map_err(|e| WorkerError::Failed(e.to_string()))?;
        line.push('\n');
        r.stdin
            .write_all(line.as_bytes())
            .and_then(|()| r.stdin.flush())
            .map_err(|e| WorkerError::Failed(format!("writing to the worker: {e}")))
    }

    /// Runs one execution of `load`'s variant within `timeout` (loading the variant first
    /// if this worker has not seen it). On any error the worker is gone; the next call
    /// starts a new one.
    pub fn run(
        &mut self,
        load: &Load,
        exec: u64,
        config: &RunConfig,
        timeout: Duration,
    ) -> Result<Done, WorkerError> {
        let r = self.run_inner(load, exec, config, timeout);
        let keep = matches!(&r, Ok(d) if d.end == DeviceEnd::Completed);
        if !keep {
            // A timeout, a failure, or a failed launch (the context is lost): replace it.
            self.running = None;
        }
        r
    }

    fn run_inner(
        &mut self,
        load: &Load,
        exec: u64,
        config: &RunConfig,
        timeout: Duration,
    ) -> Result<Done, WorkerError> {
        let start_timeout = self.start_timeout;
        let r = self.ensure()?;
        if !r.loaded.contains(&load.variant) {
            Self::send(r, &Request::Load(load.clone()))?;
            match Self::receive(r, start_timeout)? {
                Response::Loaded { variant } if variant == load.variant => {
                    r.loaded.insert(variant);
                }
                Response::Error { message } => return Err(WorkerError::Refused(message)),
                other => {
                    return Err(WorkerError::Failed(format!(
                        "expected loaded, got {other:?}"
                    )))
                }
            }
        }
        Self::send(
            r,
            &Request::Run {
                exec,
                variant: load.variant,
                config: config.clone(),
            },
        )?;
        match Self::receive(r, timeout)? {
            Response::Done(d) if d.exec == exec => Ok(*d),
            Response::Error { message } => Err(WorkerError::Failed(message)),
            other => Err(WorkerError::Failed(format!("expected done, got {other:?}"))),
        }
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The worker's side: reads requests from `input`, answers on `output` (one JSON line
/// each) through `device`. Returns when the input ends or a launch failed.
pub fn serve<D: WorkerDevice>(
    mut device: D,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let say = |r: &Response, out: &mut dyn Write| -> std::io::Result<()> {
        let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        line.push('\n');
        out.write_all(line.as_bytes())?;
        out.flush()
    };
    say(
        &Response::Hello {
            device: device.describe(),
        },
        &mut output,
    )?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let req: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                say(
                    &Response::Error {
                        message: format!("unreadable request: {e}"),
                    },
                    &mut output,
                )?;
                continue;
            }
        };
        match req {
            Request::Load(l) => {
                let variant = l.variant;
                let r = match device.load(l) {
                    Ok(()) => Response::Loaded { variant },
                    Err(message) => Response::Error { message },
                };
                say(&r, &mut output)?;
            }
            Request::Run {
                exec,
                variant,
                config,
            } => match device.run(exec, variant, &config) {
                Ok(done) => {
                    let lost = done.end != DeviceEnd::Completed;
                    say(&Response::Done(Box::new(done)), &mut output)?;
                    if lost {
                        return Ok(());
                    }
                }
                Err(message) => say(&Response::Error { message }, &mut output)?,
            },
        }
    }
    Ok(())
}

/// What a worker drives: a GPU ([`super::gpu::Session`]) or, in tests, a stand-in.
pub trait WorkerDevice {
    fn describe(&self) -> String;
    fn load(&mut self, load: Load) -> Result<(), String>;
    fn run(&mut self, exec: u64, variant: u64, config: &RunConfig) -> Result<Done, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn requests_are_one_json_line() {
        let r = Request::Run {
            exec: 3,
            variant: 1,
            config: RunConfig {
                model: "scoped".into(),
                p: 0.5,
                seed: 9,
                capacity: 256,
                liveness_period: 1024,
                overlay_capacity: 4096,
                buffer_global: true,
                buffer_shared: true,
                kernels: None,
            },
        };
        let s = serde_json::to_string(&r).unwrap();
        assert!(!s.contains('\n'));
        assert_eq!(serde_json::from_str::<Request>(&s).unwrap(), r);
    }
}
