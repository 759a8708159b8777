//! Prints the device-flavour rewrite of every kernel in a `.cu` file (NVRTC, compute_80),
//! for reading what a block costs; with `--assemble`, instead rewrites each given file for
//! compute_75, compute_80 and compute_90 and assembles it with ptxas for the matching
//! sm_75/80/90, printing one line per file and architecture (exit status 1 on a failure).
//!
//! ```sh
//! cargo run -p fencehound-handlers --example instrument -- FILE.cu [--lockstep]
//! cargo run -p fencehound-handlers --example instrument -- --assemble campaigns/*.cu
//! ```

use fencehound_handlers::rewrite::{self, Flavor, RewriteOptions};

fn rewritten(path: &str, arch: &str, flavor: Flavor) -> Result<String, String> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut req = fencehound_toolchain::CompileRequest::new(source, path.to_string());
    req.arch = format!("compute_{arch}");
    let ptx = fencehound_toolchain::compile(&req)
        .map_err(|e| e.to_string())?
        .ptx;
    let m = fencehound_ptx::parse(path, &ptx).map_err(|e| e.to_string())?;
    let rw = rewrite::rewrite(
        &m,
        &RewriteOptions {
            flavor,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(fencehound_ptx::print(&rw.module))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if files.is_empty() {
        eprintln!("usage: instrument FILE.cu [--lockstep] | --assemble FILE.cu...");
        std::process::exit(2);
    }
    if args.iter().any(|a| a == "--assemble") {
        let mut failed = false;
        for f in files {
            for arch in ["75", "80", "90"] {
                let r = rewritten(f, arch, Flavor::Device).and_then(|t| {
                    fencehound_toolchain::assemble(&t, &format!("sm_{arch}"))
                        .map_err(|e| e.to_string())
                });
                match r {
                    Ok(()) => println!("{f} sm_{arch}: ok"),
                    Err(e) => {
                        failed = true;
                        println!("{f} sm_{arch}: FAILED {}", e.lines().next().unwrap_or(""));
                    }
                }
            }
        }
        std::process::exit(i32::from(failed));
    }
    let flavor = if args.iter().any(|a| a == "--lockstep") {
        Flavor::Lockstep
    } else {
        Flavor::Device
    };
    match rewritten(files[0], "80", flavor) {
        Ok(t) => print!("{t}"),
        Err(e) => {
            eprintln!("instrument: {e}");
            std::process::exit(2);
        }
    }
}
