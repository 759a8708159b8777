//! `fencehound toolchain`: where NVRTC, ptxas and the CCCL headers were found.
use anyhow::Result;
use fencehound_toolchain::{find_cccl_include, find_ptxas, nvrtc, ptxas_version, PtxCache};

#[derive(clap::Args)]
pub struct Args {}

/// Exits 0 when NVRTC and ptxas are both usable, 2 otherwise.
pub fn run(_args: Args) -> Result<u8> {
    let mut complete = true;
    match nvrtc() {
        Ok(nv) => {
            println!(
                "nvrtc   {}.{}  {}  ({})",
                nv.version.0,
                nv.version.1,
                nv.library.path.display(),
                nv.library.origin
            );
            println!("        builtins {}", nv.builtins.display());
            let archs: Vec<String> = nv
                .supported_archs
                .iter()
                .map(|a| format!("compute_{a}"))
                .collect();
            println!("        archs {}", archs.join(" "));
        }
        Err(e) => {
            complete = false;
            println!("nvrtc   MISSING: {e}");
        }
    }
    match find_ptxas() {
        Ok(p) => {
            let version = ptxas_version(&p.path).unwrap_or_else(|e| format!("unknown ({e})"));
            println!("ptxas   {version}  {}  ({})", p.path.display(), p.origin);
        }
        Err(e) => {
            complete = false;
            println!("ptxas   MISSING: {e}");
        }
    }
    match find_cccl_include() {
        Some(c) => println!("cccl    {}  ({})", c.path.display(), c.origin),
        None => println!(
            "cccl    not found (optional: <cuda/atomic> needs it; scripts/setup-cuda.sh or \
             pip install nvidia-cuda-cccl==13.3.5.0.6)"
        ),
    }
    match PtxCache::from_env() {
        Some(c) => println!("cache   {}", c.dir().display()),
        None => println!("cache   disabled (no FENCEHOUND_CACHE_DIR, XDG_CACHE_HOME or HOME)"),
    }
    Ok(if complete {
        crate::exit::OK
    } else {
        crate::exit::INPUT
    })
}
