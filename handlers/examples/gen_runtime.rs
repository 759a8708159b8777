//! Regenerates `handlers/src/rewrite/runtime.ptx` from `runtime.cu` with NVRTC:
//! `cargo run -p fencehound-handlers --example gen_runtime` prints the PTX; with `--write`
//! it replaces the committed file. The test `runtime_ptx_is_current` checks that the
//! committed file is what this produces.

use fencehound_handlers::rewrite::runtime;

fn main() {
    let write = std::env::args().any(|a| a == "--write");
    let mut req = fencehound_toolchain::CompileRequest::new(runtime::SOURCE, "runtime.cu");
    req.arch = runtime::ARCH.to_string();
    req.extra_options = runtime::NVRTC_OPTIONS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ptx = match fencehound_toolchain::compile(&req)
        .map_err(|e| e.to_string())
        .and_then(|c| runtime::normalize(&c.ptx).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gen_runtime: {e}");
            std::process::exit(2);
        }
    };
    if write {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rewrite/runtime.ptx");
        if let Err(e) = std::fs::write(path, &ptx) {
            eprintln!("gen_runtime: {path}: {e}");
            std::process::exit(2);
        }
    } else {
        print!("{ptx}");
    }
}
