//! The `fencehound` command line. Logic lives in the library crates; this binary parses
//! arguments, calls them, prints results and maps outcomes to exit codes:
//! 0 nothing found, 1 failures found, 2 usage or input error.

/// mimalloc instead of the system allocator: the race check and the handlers allocate and
/// free many small objects per execution (messages, snapshots, buffer queues), and glibc's
/// `malloc`/`free` were about a tenth of `fuzz` (perf, sdk_red, 2026-12-05).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cmd;
mod exit;

use clap::{Parser, Subcommand};
use exit::Exit;

#[derive(Parser)]
#[command(
    name = "fencehound",
    version,
    about = "Exposes memory-model bugs (missing, too-narrow or redundant fences) in CUDA kernels",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a CUDA file to PTX with NVRTC (always with line info).
    Compile(cmd::compile::Args),
    /// Rewrite PTX (or CUDA) so that the write buffers run inside the kernel (what the GPU
    /// backend loads).
    ///
    /// The instrumented kernel buffers the same stores as `fuzz` with the native handlers
    /// (same model, p_w, seed and selection function) but cannot drain them in the same
    /// order when the program does not force one: the native stall rule may publish an
    /// entry of any thread once nothing progresses, a GPU thread only its own entries and
    /// its CTA queues (overlays, exited threads' entries). Every `liveness_period` loads a
    /// thread drains one entry of a holder picked among those it can reach, its own buffer
    /// weighing as many holders as there are live threads holding entries (it stands in
    /// for them all, as the native rule's uniform pick would); stores of other running
    /// threads wait for their owners. Failure rates can therefore differ from `fuzz` (scripts/parity.py
    /// compares them; BENCHMARKS.md lists the measured cells).
    Instrument(cmd::instrument::Args),
    /// Work with PTX files: format, check.
    #[command(subcommand)]
    Ptx(cmd::ptx::PtxCommand),
    /// Run PTX litmus tests (or generated programs) under the memory models; judge them with
    /// the axiomatic checker of the PTX memory model.
    Litmus(cmd::litmus::Args),
    /// Run the flagship demo.
    Demo(cmd::demo::Args),
    /// Run one kernel on the virtual GPU with described buffers; print outcome and outputs.
    RunKernel(cmd::run_kernel::Args),
    /// Fuzz campaigns: many seeded executions under write buffers against oracles.
    Fuzz(cmd::fuzz::FuzzArgs),
    /// Run one execution of a campaign (variant, seed, p_w, model), optionally traced.
    Run(cmd::fuzz::RunArgs),
    /// Re-run one execution of a report bit for bit.
    Replay(cmd::fuzz::ReplayArgs),
    /// Merge the reports of `fuzz --shard I/N` runs into the report of the whole run.
    Merge(cmd::merge::Args),
    /// Compare two reports: new and fixed failures, rate changes, new races (exit 1 if worse).
    Diff(cmd::diff::Args),
    /// Render a report as one self-contained HTML page with plots.
    Report(cmd::report::Args),
    /// Find the missing fences of a failing variant (store sites, fence lines, patch).
    Minimize(cmd::minimize::MinimizeArgs),
    /// Check each existing fence: necessary, likely redundant, or narrower scope suffices.
    Audit(cmd::minimize::AuditArgs),
    /// Shadow-memory race check over seeded executions, with race-directed exposure.
    Race(cmd::race::Args),
    /// Show where NVRTC, ptxas, nvcc and the CCCL headers were found.
    Toolchain(cmd::toolchain::Args),
    /// Run an unmodified CUDA program (built with `fencehound nvcc`) on the virtual GPU.
    Exec(cmd::exec::Args),
    /// Run nvcc (with `-cudart shared -lineinfo` unless given) to build a program for `exec`.
    Nvcc(cmd::nvcc::Args),
    /// The GPU backend's worker process (started by `fuzz --backend gpu`; speaks JSON
    /// lines on stdin/stdout).
    #[command(hide = true)]
    GpuWorker,
}

fn main() {
    // `fencehound fuzz --json | head` must end quietly like other Unix tools, not panic
    // inside println!: restore the default action for SIGPIPE (Rust ignores it).
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors to stderr with 2.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let result = match cli.command {
        Command::Compile(args) => cmd::compile::run(args),
        Command::Ptx(c) => cmd::ptx::run(c),
        Command::Instrument(args) => cmd::instrument::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Litmus(args) => cmd::litmus::run(args),
        Command::RunKernel(args) => cmd::run_kernel::run(args),
        Command::Toolchain(args) => cmd::toolchain::run(args),
        Command::Nvcc(args) => cmd::nvcc::run(args),
        Command::Exec(args) => cmd::exec::run(args),
        Command::Fuzz(args) => cmd::fuzz::fuzz(args),
        Command::Minimize(args) => cmd::minimize::minimize(args),
        Command::Audit(args) => cmd::minimize::audit(args),
        Command::Race(args) => cmd::race::run(args),
        Command::Run(args) => cmd::fuzz::run(args),
        Command::Replay(args) => cmd::fuzz::replay(args),
        Command::Merge(args) => cmd::merge::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::GpuWorker => Ok(fencehound_fuzzer::backend::gpu::worker_main()),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            e.downcast_ref::<Exit>().map(|x| x.code()).unwrap_or(2)
        }
    };
    std::process::exit(code as i32);
}
