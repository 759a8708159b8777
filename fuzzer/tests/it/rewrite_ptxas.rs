//! Every variant of every campaign, compiled by NVRTC for compute_75, compute_80 and
//! compute_90 and rewritten (device flavour, what the GPU backend loads), assembles with
//! ptxas for the matching sm_75, sm_80 and sm_90, uncapped, and register-capped (the
//! default of `fencehound instrument` and the gpu backend: each kernel's `.maxnreg` its
//! original count + 16) for sm_80 and, for each campaign's first variant, sm_75 and
//! sm_90; for sm_80 the capped kernels' counts are checked (at most 16 registers over the
//! original's, as ptxas reports both). sm_75 gets the module for both
//! models, sm_80 the one for `bugaroo` alone, sm_90 the one for `scoped` alone
//! (`fencehound instrument --model`; `RewriteOptions::model`).

use fencehound_fuzzer::Campaign;
use fencehound_handlers::rewrite::{self, RewriteOptions};
use std::path::Path;

#[test]
fn every_rewritten_campaign_variant_assembles_for_sm_75_80_90() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaigns");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut jobs = Vec::new();
    for f in &files {
        let c = Campaign::load(f).unwrap();
        let source = std::fs::read_to_string(&c.source).unwrap();
        for (i, (name, v)) in c.variants.iter().enumerate() {
            for arch in ["75", "80", "90"] {
                let mut req = fencehound_toolchain::CompileRequest::new(
                    source.clone(),
                    c.source.display().to_string(),
                );
                req.defines = v
                    .defines
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone())))
                    .collect();
                req.include_dirs = vec![c.dir.clone()];
                req.extra_options = c.file.nvrtc_options.clone();
                req.arch = format!("compute_{arch}");
                // Capped whole (see `capped`): every variant for sm_80, the first of each
                // campaign for sm_75 and sm_90 (a variant differs from its campaign's
                // others by a fence or two; whole assembly is 0.6 s a module).
                let cap = arch == "80" || i == 0;
                jobs.push((format!("{} {name} sm_{arch}", c.name), req, arch, cap));
            }
        }
    }
    // Two workers: ptxas is single-threaded and dominates.
    let fails: Vec<String> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|w| {
                let mine: Vec<_> = jobs.iter().skip(w).step_by(2).collect();
                sc.spawn(move || {
                    let mut fails = Vec::new();
                    for (what, req, arch, cap) in mine {
                        let ptx = match fencehound_toolchain::compile(req) {
                            Ok(c) => c.ptx,
                            Err(e) => {
                                fails.push(format!("{what}: NVRTC: {e}"));
                                continue;
                            }
                        };
                        let m = fencehound_ptx::parse(what, &ptx).unwrap();
                        let opts = RewriteOptions {
                            model: match *arch {
                                "80" => Some(fencehound_handlers::Model::Bugaroo),
                                "90" => Some(fencehound_handlers::Model::Scoped),
                                _ => None,
                            },
                            ..Default::default()
                        };
                        match rewrite::rewrite(&m, &opts) {
                            Ok(rw) => {
                                let sm = format!("sm_{arch}");
                                let linked = |module: &fencehound_ptx::Module| {
                                    let (k, r) = rewrite::assembly_parts(module)
                                        .expect("a rewritten module holds the runtime verbatim");
                                    fencehound_toolchain::assemble_linked(&k, &[&r], &sm)
                                        .map_err(|e| e.to_string())
                                };
                                if let Err(e) = linked(&rw.module) {
                                    fails.push(format!("{what}: {e}"));
                                }
                                // The form `instrument` and the gpu backend emit by
                                // default: capped at the original's count + 16.
                                if *cap {
                                    if let Err(e) = capped(&m, rw, &sm, *arch == "80") {
                                        fails.push(format!("{what} capped: {e}"));
                                    }
                                }
                            }
                            Err(e) => fails.push(format!("{what}: rewrite: {e}")),
                        }
                    }
                    fails
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(fails.is_empty(), "{}", fails.join("\n"));
    assert!(jobs.len() >= 26 * 3, "{} modules", jobs.len());
}

/// Caps `rw` at the original's registers + 16 for `sm` and assembles it (whole); with
/// `count`, checks ptxas's register counts too.
fn capped(
    original: &fencehound_ptx::Module,
    mut rw: rewrite::Rewritten,
    sm: &str,
    count: bool,
) -> Result<(), String> {
    let caps =
        fencehound_fuzzer::backend::instrumented::cap_registers(original, &mut rw.module, 16, sm)?;
    let text = fencehound_ptx::print(&rw.module);
    if caps.is_empty() || !text.contains(".callprototype") {
        return Err(format!("nothing capped: {caps:?}"));
    }
    if !count {
        // Whole: a callee assembled apart does not know its caller's cap (nvlink refuses
        // "entry function … with max regcount of 30 calls function … with regcount of
        // 157"), so the split assembly `linked` does is for uncapped modules only.
        return fencehound_toolchain::assemble(&text, sm).map_err(|e| e.to_string());
    }
    let after = fencehound_toolchain::resource_usage(&text, sm).map_err(|e| e.to_string())?;
    for b in &caps {
        let a = after
            .iter()
            .find(|u| u.entry && u.name == b.kernel)
            .ok_or_else(|| format!("{} missing after the rewrite", b.kernel))?;
        if a.registers > b.original + 16 {
            return Err(format!(
                "{}: {} -> {} registers",
                b.kernel, b.original, a.registers
            ));
        }
    }
    Ok(())
}
