//! The GPU backend's worker protocol and watchdog, with a stand-in worker (a shell script
//! speaking the JSON-lines protocol, no GPU needed): a worker that spins is killed at the
//! execution's deadline and reported as a wall-clock timeout, a fresh worker takes the
//! next execution, a worker that refuses or dies is an error of that execution only, and
//! answers are judged by the campaign's oracle like every backend's. The test with a real
//! GPU is in tests/it/cli_gpu.rs (skipped, visibly, where there is none).

use fencehound_fuzzer::backend::gpu::{load_for, Gpu};
use fencehound_fuzzer::backend::worker::{RunConfig, Supervisor, WorkerError};
use fencehound_fuzzer::backend::Backend;
use fencehound_fuzzer::{prepare, Campaign, ExecSpec, Prepared, Verdict};
use fencehound_handlers::{BufferStats, Model};
use fencehound_vgpu::SchedulerKind;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KERNEL: &str = r#"
extern "C" __global__ void zero(unsigned *out) {
    out[threadIdx.x] = 0;
}
"#;

const CAMPAIGN: &str = r#"
name = "stand_in"
source = "zero.cu"
buffers = ["out:u32[2] values(7, 7)"]

[[launch]]
kernel = "zero"
grid = [1]
block = [2]
args = ["out"]

[[oracle]]
type = "golden"

[budget]
fuel = 100_000
wall_ms = 400
"#;

/// A worker that answers like a GPU whose kernels zero `out` (8 bytes), except that it
/// spins forever on an execution with seed 666 and exits on seed 13.
fn stand_in(dir: &Path) -> Vec<OsString> {
    // Inside a double-quoted shell string.
    let stats = serde_json::to_string(&BufferStats::default())
        .unwrap()
        .replace('"', "\\\"");
    let script = format!(
        r#"#!/bin/sh
echo '{{"hello":{{"device":"stand-in worker"}}}}'
while IFS= read -r line; do
  case "$line" in
    '{{"load":'*)
      v=$(printf '%s' "$line" | sed -n 's/^{{"load":{{"variant":\([0-9]*\).*/\1/p')
      echo "{{\"loaded\":{{\"variant\":$v}}}}" ;;
    *'"seed":666,'*) while :; do :; done ;;
    *'"seed":13,'*) exit 3 ;;
    '{{"run":'*)
      e=$(printf '%s' "$line" | sed -n 's/^{{"run":{{"exec":\([0-9]*\).*/\1/p')
      echo "{{\"done\":{{\"exec\":$e,\"outputs\":[\"0000000000000000\"],\"stats\":{stats},\"end\":\"completed\",\"wall_ms\":1}}}}" ;;
  esac
done
"#
    );
    let path = dir.join("worker.sh");
    std::fs::write(&path, script).unwrap();
    vec!["sh".into(), path.into_os_string()]
}

fn campaign(dir: &Path) -> Arc<Prepared> {
    std::fs::write(dir.join("zero.cu"), KERNEL).unwrap();
    std::fs::write(dir.join("stand_in.toml"), CAMPAIGN).unwrap();
    let c = Arc::new(Campaign::load(&dir.join("stand_in.toml")).unwrap());
    Arc::new(prepare(c, "default").unwrap_or_else(|e| panic!("{e}")))
}

fn spec(id: u64, seed: u64) -> ExecSpec {
    ExecSpec {
        id,
        model: Model::Scoped,
        p: 0.5,
        seed,
        scheduler: SchedulerKind::Random,
        trace: false,
        filters: Default::default(),
        race: false,
    }
}

#[test]
fn a_spinning_worker_is_killed_and_the_campaign_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let prep = campaign(dir.path());
    let gpu = Gpu::new(stand_in(dir.path()), "stand-in worker".into());
    assert_eq!(gpu.name(), "gpu");
    let mut verdicts = Vec::new();
    let t = Instant::now();
    for (id, seed) in [(0, 1), (1, 666), (2, 2), (3, 13), (4, 3)] {
        verdicts.push(gpu.execute(&prep, &spec(id, seed), None).verdict);
    }
    assert_eq!(verdicts[0], Verdict::Pass, "{verdicts:?}");
    match &verdicts[1] {
        Verdict::Timeout { wall: true, dump } => {
            assert!(dump.contains("400 ms") && dump.contains("killed"), "{dump}")
        }
        v => panic!("the spinning execution: {v:?}"),
    }
    assert_eq!(
        verdicts[2],
        Verdict::Pass,
        "a fresh worker runs the next execution"
    );
    match &verdicts[3] {
        Verdict::Fault { message } => assert!(message.contains("worker exited"), "{message}"),
        v => panic!("the worker that died: {v:?}"),
    }
    assert_eq!(verdicts[4], Verdict::Pass);
    // One timeout (400 ms) dominates; nothing waited for a dead worker.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn the_supervisor_restarts_workers_and_reloads_variants() {
    let dir = tempfile::tempdir().unwrap();
    let prep = campaign(dir.path());
    let load = load_for(&prep, 7, None, Model::Bugaroo).unwrap();
    assert!(
        load.ptx.contains("__fencehound_store"),
        "the worker gets the instrumented PTX"
    );
    assert!(!load.ptx.contains(".maxnreg"));
    // `fuzz --backend gpu --max-extra-registers 16`: the worker gets capped kernels.
    let capped = load_for(&prep, 8, Some(16), Model::Bugaroo).unwrap();
    assert!(
        capped.ptx.contains(".maxnreg") && capped.ptx.contains(".callprototype"),
        "the worker gets the register-capped PTX"
    );
    fencehound_toolchain::assemble(&capped.ptx, "sm_80").unwrap();
    let mut sup = Supervisor::new(stand_in(dir.path()));
    let cfg = |seed| RunConfig {
        model: "bugaroo".into(),
        p: 1.0,
        seed,
        capacity: 256,
        liveness_period: 1024,
        overlay_capacity: 64,
        buffer_global: true,
        buffer_shared: true,
        kernels: None,
    };
    let ms = Duration::from_millis(300);
    let d = sup.run(&load, 1, &cfg(1), ms).unwrap();
    assert_eq!(d.exec, 1);
    assert_eq!(d.outputs, vec!["0000000000000000".to_string()]);
    assert_eq!(sup.run(&load, 2, &cfg(5), ms).unwrap().exec, 2);
    assert_eq!(sup.started, 1, "one worker for both executions");
    assert_eq!(
        sup.run(&load, 3, &cfg(666), ms),
        Err(WorkerError::Timeout(ms))
    );
    assert_eq!(sup.run(&load, 4, &cfg(5), ms).unwrap().exec, 4);
    assert_eq!(sup.started, 2, "a new worker after the timeout");
    assert_eq!(sup.device().unwrap(), "stand-in worker");
}

#[test]
fn a_worker_that_cannot_run_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let prep = campaign(dir.path());
    let path = dir.path().join("refuse.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\necho '{\"error\":{\"message\":\"no CUDA driver\"}}'\nexit 2\n",
    )
    .unwrap();
    let gpu = Gpu::new(vec!["sh".into(), path.into()], "none".into());
    match gpu.execute(&prep, &spec(0, 1), None).verdict {
        Verdict::Fault { message } => assert!(message.contains("no CUDA driver"), "{message}"),
        v => panic!("{v:?}"),
    }
    let gpu = Gpu::new(vec!["/nonexistent/worker".into()], "none".into());
    match gpu.execute(&prep, &spec(0, 1), None).verdict {
        Verdict::Fault { message } => assert!(message.contains("could not start"), "{message}"),
        v => panic!("{v:?}"),
    }
}
