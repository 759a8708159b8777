//! End-to-end tests of `fencehound instrument`: CUDA and PTX inputs, the output assembles
//! with ptxas, and the models without a device-side implementation are clear errors.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");

const KERNEL: &str = r#"
extern "C" __global__ void publish(int *data, volatile int *flag, int value) {
    data[threadIdx.x] = value;
    __threadfence();
    if (threadIdx.x == 0) {
        *flag = 1;
    }
}
"#;

fn fencehound(cache: &Path, args: &[&str]) -> Output {
    let out = Command::new(BIN)
        .env("FENCEHOUND_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("run fencehound");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    out
}

#[test]
fn instruments_cuda_and_the_output_assembles() {
    let dir = tempfile::tempdir().unwrap();
    let cu = dir.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    let out_ptx = dir.path().join("k.instrumented.ptx");
    let o = fencehound(
        dir.path(),
        &[
            "instrument",
            cu.to_str().unwrap(),
            "--model",
            "scoped",
            "-o",
            out_ptx.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out_ptx).unwrap();
    assert!(text.contains("__fencehound_store, (fh_arg0"), "{text}");
    assert!(text.contains(".loc"), "line info is kept");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("2 stores") && stderr.contains("drain points"),
        "{stderr}"
    );
    fencehound_toolchain::assemble(&text, "sm_80").unwrap();
    // The output is instrumented already: a second pass is refused.
    let again = fencehound(
        dir.path(),
        &[
            "instrument",
            out_ptx.to_str().unwrap(),
            "--model",
            "bugaroo",
        ],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already instrumented"));
}

#[test]
fn models_without_a_device_implementation_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cu = dir.path().join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap();
    for (model, says) in [
        ("weak", "no device-side implementation"),
        ("sc", "buffers nothing"),
        ("tso", "unknown model"),
    ] {
        let o = fencehound(
            dir.path(),
            &["instrument", cu.to_str().unwrap(), "--model", model],
        );
        assert_eq!(o.status.code(), Some(2), "{model}");
        assert!(o.stdout.is_empty(), "{model}: nothing on stdout");
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{model}");
    }
}
