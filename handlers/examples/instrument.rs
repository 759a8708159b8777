//! Prints the device-flavour rewrite of every kernel in a `.cu` file (NVRTC, compute_80):
//! `cargo run -p fencehound-handlers --example instrument -- FILE.cu [--lockstep]`.
//! For reading what a block costs.

use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: instrument FILE.cu [--lockstep]");
        std::process::exit(2);
    };
    let flavor = if args.iter().any(|a| a == "--lockstep") {
        Flavor::Lockstep
    } else {
        Flavor::Device
    };
    let run = || -> Result<String, String> {
        let source = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let mut req = fencehound_toolchain::CompileRequest::new(source, path.clone());
        req.arch = "compute_80".into();
        let ptx = fencehound_toolchain::compile(&req)
            .map_err(|e| e.to_string())?
            .ptx;
        let m = fencehound_ptx::parse(path, &ptx).map_err(|e| e.to_string())?;
        let rw = rewrite::rewrite(&m, &RewriteOptions { flavor }).map_err(|e| e.to_string())?;
        Ok(fencehound_ptx::print(&rw.module))
    };
    match run() {
        Ok(t) => print!("{t}"),
        Err(e) => {
            eprintln!("instrument: {e}");
            std::process::exit(2);
        }
    }
}
