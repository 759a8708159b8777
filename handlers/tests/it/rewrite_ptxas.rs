//! Every kernel of `kernels/`, compiled by NVRTC for compute_75, compute_80 and compute_90
//! and rewritten (device flavour, the one a GPU loads), assembles with ptxas for the
//! matching sm_75, sm_80, sm_90. A kernel NVRTC cannot compile for an architecture (it uses
//! a newer instruction) is reported and skipped for that architecture only. Each
//! architecture gets another form of the module (`model_for`): for both models, for
//! `bugaroo` alone, for `scoped` alone (`fencehound instrument --model`), so every form
//! meets ptxas on every kernel at no extra ptxas run.

use fencehound_handlers::rewrite::{self, RewriteOptions};
use fencehound_handlers::Model;
use std::path::PathBuf;

/// The module form assembled for `arch` (see the module docs).
fn model_for(arch: &str) -> Option<Model> {
    match arch {
        "80" => Some(Model::Bugaroo),
        "90" => Some(Model::Scoped),
        _ => None,
    }
}

const ARCHS: [&str; 3] = ["75", "80", "90"];

fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

fn header_value<'a>(src: &'a str, key: &str) -> &'a str {
    let prefix = format!("// {key}:");
    src.lines()
        .take(6)
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or("")
        .trim()
}

#[test]
fn every_rewritten_kernel_assembles_for_sm_75_80_90() {
    let mut stems: Vec<String> = std::fs::read_dir(kernels_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "cu").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    stems.sort();
    let jobs: Vec<(String, &str)> = stems
        .iter()
        .flat_map(|s| ARCHS.iter().map(move |a| (s.clone(), *a)))
        .collect();
    // Two workers: ptxas dominates and is single-threaded.
    let chunks: Vec<Vec<(String, &str)>> = (0..2)
        .map(|w| jobs.iter().skip(w).step_by(2).cloned().collect())
        .collect();
    let results: Vec<(Vec<String>, Vec<String>, usize)> = std::thread::scope(|sc| {
        let hs: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                sc.spawn(move || {
                    let (mut fails, mut skips, mut ok) = (Vec::new(), Vec::new(), 0);
                    for (stem, arch) in chunk {
                        let path = kernels_dir().join(format!("{stem}.cu"));
                        let source = std::fs::read_to_string(&path).unwrap();
                        let flags = fencehound_toolchain::expand_nvrtc_flags(header_value(
                            &source,
                            "nvrtc-flags",
                        ))
                        .unwrap();
                        let mut req = fencehound_toolchain::CompileRequest::new(
                            source.clone(),
                            format!("{stem}.cu"),
                        );
                        req.extra_options = flags;
                        req.arch = format!("compute_{arch}");
                        let ptx = match fencehound_toolchain::compile(&req) {
                            Ok(c) => c.ptx,
                            Err(e) => {
                                let first = e.to_string().lines().next().unwrap_or("").to_string();
                                skips.push(format!("{stem} sm_{arch}: NVRTC: {first}"));
                                continue;
                            }
                        };
                        let m = fencehound_ptx::parse(&stem, &ptx).unwrap();
                        let opts = RewriteOptions {
                            model: model_for(arch),
                            ..Default::default()
                        };
                        let rw = match rewrite::rewrite(&m, &opts) {
                            Ok(r) => r,
                            Err(e) => {
                                fails.push(format!("{stem}: rewrite: {e}"));
                                continue;
                            }
                        };
                        let (k, r) = rewrite::assembly_parts(&rw.module)
                            .expect("a rewritten module holds the runtime verbatim");
                        match fencehound_toolchain::assemble_linked(
                            &k,
                            &[&r],
                            &format!("sm_{arch}"),
                        ) {
                            Ok(()) => ok += 1,
                            Err(e) => fails.push(format!("{stem} sm_{arch}: {e}")),
                        }
                    }
                    (fails, skips, ok)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut fails = Vec::new();
    let mut ok = 0;
    for (f, s, n) in results {
        fails.extend(f);
        for s in s {
            eprintln!("SKIP {s}");
        }
        ok += n;
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
    eprintln!("{ok} rewritten kernels assembled");
    assert!(ok >= 150, "only {ok} kernels assembled");
}

/// The split assembly the test above uses checks what assembling the whole module checks:
/// a rewritten kernel that assembles whole links from its parts; its kernels' part alone
/// does not link (nvlink resolves every runtime symbol it uses); an invalid instruction
/// in the kernels' part is rejected as in the whole module; and the split kept every item.
#[test]
fn split_assembly_checks_what_whole_assembly_checks() {
    let path = kernels_dir().join("algo_histogram.cu");
    let source = std::fs::read_to_string(&path).unwrap();
    let mut req = fencehound_toolchain::CompileRequest::new(source.clone(), "algo_histogram.cu");
    req.extra_options =
        fencehound_toolchain::expand_nvrtc_flags(header_value(&source, "nvrtc-flags")).unwrap();
    let ptx = fencehound_toolchain::compile(&req).unwrap().ptx;
    let m = fencehound_ptx::parse("algo_histogram", &ptx).unwrap();
    let rw = rewrite::rewrite(&m, &RewriteOptions::default()).unwrap();
    let whole = fencehound_ptx::print(&rw.module);
    fencehound_toolchain::assemble(&whole, "sm_80").unwrap();
    let (kernels_text, runtime_text) = rewrite::assembly_parts(&rw.module).unwrap();
    fencehound_toolchain::assemble_linked(&kernels_text, &[&runtime_text], "sm_80").unwrap();
    let (kernels, runtime) = rewrite::split_runtime(&rw.module).unwrap();
    let definitions = |m: &fencehound_ptx::Module| {
        m.functions()
            .filter(|f| f.body.is_some())
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    };
    let mut both = definitions(&kernels);
    both.extend(definitions(&runtime));
    both.sort();
    let mut all = definitions(&rw.module);
    all.sort();
    assert_eq!(both, all);
    let alone = fencehound_toolchain::assemble_linked(&kernels_text, &[], "sm_80").unwrap_err();
    assert!(
        alone.log().contains("Undefined reference"),
        "{}",
        alone.log()
    );
    let broken = kernels_text.replacen("ret;", "ret.bogus;", 1);
    assert_ne!(broken, kernels_text);
    assert!(fencehound_toolchain::assemble_linked(&broken, &[&runtime_text], "sm_80").is_err());
    assert!(
        fencehound_toolchain::assemble(&whole.replacen("ret;", "ret.bogus;", 1), "sm_80").is_err()
    );
}

/// The committed `runtime.ptx` is what `runtime.cu` compiles to with the toolchain's
/// NVRTC (`cargo run -p fencehound-handlers --example gen_runtime -- --write` regenerates
/// it): an edit of the CUDA source that was not carried into the PTX the rewrite links
/// fails here.
#[test]
fn runtime_ptx_is_current() {
    use fencehound_handlers::rewrite::runtime;
    let mut req = fencehound_toolchain::CompileRequest::new(runtime::SOURCE, "runtime.cu");
    req.arch = runtime::ARCH.to_string();
    req.extra_options = runtime::NVRTC_OPTIONS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let compiled = fencehound_toolchain::compile(&req).expect("NVRTC compiles runtime.cu");
    let ptx = runtime::normalize(&compiled.ptx).expect("runtime PTX normalizes");
    let committed = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/rewrite/runtime.ptx"),
    )
    .expect("runtime.ptx is readable");
    assert!(
        ptx == committed,
        "handlers/src/rewrite/runtime.ptx is not what NVRTC {}.{} makes of runtime.cu (the \
         committed file comes from the pinned wheel, scripts/setup-cuda.sh): run `cargo run \
         -p fencehound-handlers --example gen_runtime -- --write`",
        compiled.nvrtc_version.0,
        compiled.nvrtc_version.1
    );
}
