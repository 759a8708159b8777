//! `fencehound toolchain`: where NVRTC, ptxas and the CCCL headers were found.
use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Result;
use fencehound_toolchain::{find_cccl_include, find_ptxas, nvrtc, ptxas_version, PtxCache};

#[derive(clap::Args)]
pub struct Args {}

/// Exits 0 when NVRTC and ptxas are both usable, 2 otherwise.
pub fn run(_args: Args) -> Result<u8> {
    let (report, complete) = report();
    // A closed pipe (`fencehound toolchain | head -1`) is not an error worth reporting.
    let _ = std::io::stdout().lock().write_all(report.as_bytes());
    Ok(if complete {
        crate::exit::OK
    } else {
        crate::exit::INPUT
    })
}

/// The report text, and whether NVRTC and ptxas were both found.
fn report() -> (String, bool) {
    let mut out = String::new();
    let mut complete = true;
    // Writing to a String cannot fail.
    match nvrtc() {
        Ok(nv) => {
            let archs: Vec<String> = nv
                .supported_archs
                .iter()
                .map(|a| format!("compute_{a}"))
                .collect();
            let _ = writeln!(
                out,
                "nvrtc   {}.{}  {}  ({})\n        builtins {}\n        archs {}",
                nv.version.0,
                nv.version.1,
                nv.library.path.display(),
                nv.library.origin,
                nv.builtins.display(),
                archs.join(" ")
            );
        }
        Err(e) => {
            complete = false;
            let _ = writeln!(out, "nvrtc   MISSING: {e}");
        }
    }
    match find_ptxas() {
        Ok(p) => {
            let version = ptxas_version(&p.path).unwrap_or_else(|e| format!("unknown ({e})"));
            let _ = writeln!(
                out,
                "ptxas   {version}  {}  ({})",
                p.path.display(),
                p.origin
            );
        }
        Err(e) => {
            complete = false;
            let _ = writeln!(out, "ptxas   MISSING: {e}");
        }
    }
    // nvcc is optional: kernel campaigns need only NVRTC; programs (`fencehound nvcc`,
    // `exec`, program campaigns) need it.
    let opt = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "MISSING".into())
    };
    let _ = match fencehound_toolchain::find_nvcc() {
        Ok(tc) => {
            let version = fencehound_toolchain::nvcc_version(&tc.nvcc.path)
                .unwrap_or_else(|e| format!("unknown ({e})"));
            writeln!(
                out,
                "nvcc    {version}  {}  ({})\n        cicc {}\n        crt headers {}\n        runtime headers {}\n        link libcudart {}\n        host c++ {}{}",
                tc.nvcc.path.display(),
                tc.nvcc.origin,
                opt(&tc.cicc),
                opt(&tc.crt_include),
                opt(&tc.runtime_include),
                opt(&tc.cudart_link),
                opt(&tc.host_cxx),
                if tc.missing().is_empty() {
                    String::new()
                } else {
                    "\n        cannot build programs (optional; scripts/setup-cuda.sh installs the rest)"
                        .to_string()
                }
            )
        }
        Err(_) => writeln!(
            out,
            "nvcc    not found (optional: programs need it; scripts/setup-cuda.sh installs it)"
        ),
    };
    let _ = match crate::cmd::exec::find_runtime() {
        Ok(p) => writeln!(
            out,
            "cudart  {}  (fencehound's libcudart.so.13)",
            p.display()
        ),
        Err(e) => writeln!(out, "cudart  MISSING: {e}"),
    };
    let _ = match find_cccl_include() {
        Some(c) => writeln!(out, "cccl    {}  ({})", c.path.display(), c.origin),
        None => writeln!(
            out,
            "cccl    not found (optional: <cuda/atomic> needs it; scripts/setup-cuda.sh or \
             pip install nvidia-cuda-cccl==13.3.5.0.6)"
        ),
    };
    let _ = match PtxCache::from_env() {
        Some(c) => writeln!(out, "cache   {}", c.dir().display()),
        None => writeln!(
            out,
            "cache   disabled (no FENCEHOUND_CACHE_DIR, XDG_CACHE_HOME or HOME)"
        ),
    };
    (out, complete)
}
