//! Discovery order and overrides. Environment variables are process-wide, so everything
//! that changes them lives in this one test (its own test binary, its own process).

use std::path::Path;

use fencehound_toolchain::{find_nvrtc, find_ptxas, Origin, ToolchainError};

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
}

#[test]
fn discovery_order_and_overrides() {
    for var in [
        "FENCEHOUND_NVRTC",
        "FENCEHOUND_PTXAS",
        "CUDA_HOME",
        "CUDA_PATH",
        "LD_LIBRARY_PATH",
    ] {
        std::env::remove_var(var);
    }
    // With nothing set, the project-local install (scripts/setup-cuda.sh) is found, unless
    // this machine has a toolkit on PATH, which comes first.
    let nvrtc = find_nvrtc().unwrap_or_else(|e| panic!("{e}"));
    if nvrtc.origin == Origin::ProjectTools {
        assert!(
            nvrtc.path.ends_with("nvidia/cu13/lib/libnvrtc.so.13"),
            "{nvrtc:?}"
        );
    }
    let ptxas = find_ptxas().unwrap_or_else(|e| panic!("{e}"));
    assert!(ptxas.path.ends_with("ptxas"), "{ptxas:?}");

    // A toolkit named by CUDA_PATH beats the project-local install; CUDA_HOME beats both.
    let fake = tempfile::tempdir().unwrap();
    let path_kit = fake.path().join("path-kit");
    let home_kit = fake.path().join("home-kit");
    touch(&path_kit.join("lib64/libnvrtc.so.13"));
    touch(&home_kit.join("lib/libnvrtc.so"));
    touch(&home_kit.join("bin/ptxas"));
    std::env::set_var("CUDA_PATH", &path_kit);
    let found = find_nvrtc().unwrap();
    assert_eq!(found.path, path_kit.join("lib64/libnvrtc.so.13"));
    assert_eq!(found.origin, Origin::Toolkit("CUDA_PATH"));
    std::env::set_var("CUDA_HOME", &home_kit);
    let found = find_nvrtc().unwrap();
    assert_eq!(found.path, home_kit.join("lib/libnvrtc.so"));
    assert_eq!(found.origin, Origin::Toolkit("CUDA_HOME"));
    let found = find_ptxas().unwrap();
    assert_eq!(found.path, home_kit.join("bin/ptxas"));

    // An explicit override wins, and one naming a missing file is an error.
    let explicit = fake.path().join("elsewhere/libnvrtc.so.13");
    touch(&explicit);
    std::env::set_var("FENCEHOUND_NVRTC", &explicit);
    let found = find_nvrtc().unwrap();
    assert_eq!(found.path, explicit);
    assert_eq!(found.origin, Origin::Override("FENCEHOUND_NVRTC"));
    std::env::set_var("FENCEHOUND_NVRTC", fake.path().join("missing.so"));
    let err = find_nvrtc().unwrap_err();
    assert!(matches!(err, ToolchainError::BadOverride { .. }), "{err:?}");
    assert!(err.to_string().contains("FENCEHOUND_NVRTC"), "{err}");
    std::env::set_var("FENCEHOUND_PTXAS", fake.path().join("missing-ptxas"));
    assert!(matches!(
        find_ptxas().unwrap_err(),
        ToolchainError::BadOverride { .. }
    ));
}

#[test]
fn not_found_says_how_to_install() {
    let err = ToolchainError::NotFound {
        tool: "NVRTC (libnvrtc.so)",
        looked: vec!["$FENCEHOUND_NVRTC: not set".into()],
        hint: fencehound_toolchain::NVRTC_INSTALL_HINT,
    };
    let msg = err.to_string();
    for needle in [
        "scripts/setup-cuda.sh",
        "pip install nvidia-cuda-nvrtc==13.5.37",
        "FENCEHOUND_NVRTC",
        "  - $FENCEHOUND_NVRTC: not set",
    ] {
        assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
    }
}
