//! The kernel corpus (`kernels/*.cu`) through the whole front end, for every architecture
//! NVRTC 13 and the vgpu both care about: NVRTC compiles it (with the flags from its
//! header), the PTX parses, the printed module is accepted by ptxas for the matching real
//! architecture, and the round trip is exact (`parse(print(m)) == m`, `print` a fixed
//! point).
//!
//! Runs the real NVRTC and ptxas and fails, never skips, when they are missing
//! (`scripts/setup-cuda.sh` installs them). Compilations go through the default PTX cache,
//! so after the first run the time is mostly ptxas; jobs run on two threads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fencehound_toolchain::{assemble, compile, expand_nvrtc_flags, find_ptxas, nvrtc};

const ARCHS: [(&str, &str); 3] = [
    ("compute_75", "sm_75"),
    ("compute_80", "sm_80"),
    ("compute_90", "sm_90"),
];
const HEADER_KEYS: [&str; 6] = [
    "fencehound-corpus",
    "categories",
    "nvrtc-flags",
    "launch",
    "args",
    "expect",
];
const MIN_KERNELS: usize = 40;
const THREADS: usize = 2;

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// One corpus kernel and its header.
struct Kernel {
    name: String,
    path: PathBuf,
    source: String,
    categories: Vec<String>,
    nvrtc_flags: String,
}

/// Reads the six header lines; a malformed header is a test failure naming the file.
fn read_kernel(path: &Path) -> Kernel {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let source = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{name}: cannot read {}: {e}", path.display()));
    let mut values = Vec::new();
    for (i, key) in HEADER_KEYS.iter().enumerate() {
        let line = source.lines().nth(i).unwrap_or("");
        let value = line
            .strip_prefix("// ")
            .and_then(|l| l.strip_prefix(key))
            .and_then(|l| l.strip_prefix(':'))
            .unwrap_or_else(|| {
                panic!(
                    "{name}: header line {} should be `// {key}: ...`, is `{line}`",
                    i + 1
                )
            });
        values.push(value.trim().to_string());
    }
    let categories = values[1]
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    Kernel {
        name,
        path: path.to_path_buf(),
        source,
        categories,
        nvrtc_flags: values[2].clone(),
    }
}

fn corpus() -> Vec<Kernel> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(kernels_dir())
        .expect("kernels/ directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read_kernel(p)).collect()
}

/// The category set from kernels/README.md: the backticked list after "Category set:", up
/// to the end of that sentence.
fn readme_categories() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(kernels_dir().join("README.md")).expect("README");
    let start = readme
        .find("Category set:")
        .expect("kernels/README.md has a `Category set:` paragraph");
    let rest = &readme[start..];
    let sentence = &rest[..rest.find("`.").map_or(rest.len(), |end| end + 1)];
    let set: BTreeSet<String> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|quoted| quoted.split(','))
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    assert!(set.len() >= 10, "category set looks wrong: {set:?}");
    set
}

#[test]
fn corpus_headers_cover_every_category() {
    let kernels = corpus();
    assert!(
        kernels.len() >= MIN_KERNELS,
        "only {} kernels in kernels/ (want at least {MIN_KERNELS})",
        kernels.len()
    );
    let known = readme_categories();
    let mut covered = BTreeSet::new();
    for k in &kernels {
        assert!(!k.categories.is_empty(), "{}: no categories", k.name);
        for c in &k.categories {
            assert!(
                known.contains(c),
                "{}: category `{c}` is not in kernels/README.md's set {known:?}",
                k.name
            );
            covered.insert(c.clone());
        }
        // One entry point named after the file (kernels/README.md).
        let entry = format!("extern \"C\" __global__ void {}(", k.name);
        assert!(
            k.source.contains(&entry),
            "{}: no `{entry}...` in {}",
            k.name,
            k.path.display()
        );
    }
    let missing: Vec<_> = known.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "no kernel covers categories {missing:?}"
    );
}

/// Compiles, parses, prints, assembles and round-trips one kernel for one architecture.
fn check(kernel: &Kernel, arch: &str, sm: &str) -> Result<(), String> {
    let mut req = fencehound_toolchain::CompileRequest::new(
        kernel.source.clone(),
        format!("{}.cu", kernel.name),
    );
    req.arch = arch.to_string();
    req.extra_options = expand_nvrtc_flags(&kernel.nvrtc_flags)
        .map_err(|e| format!("expanding nvrtc-flags `{}`: {e}", kernel.nvrtc_flags))?;
    let ptx = compile(&req).map_err(|e| format!("NVRTC: {e}"))?.ptx;
    let file = format!("{}.{arch}.ptx", kernel.name);
    let module = fencehound_ptx::parse(&file, &ptx).map_err(|e| format!("parse: {e}"))?;
    if module.kernels().all(|k| k.name != kernel.name) {
        return Err(format!("no `.entry {}` in the parsed module", kernel.name));
    }
    let printed = fencehound_ptx::print(&module);
    if let Err(e) = assemble(&printed, sm) {
        let original = match assemble(&ptx, sm) {
            Ok(()) => "accepts NVRTC's own PTX",
            Err(_) => "rejects NVRTC's own PTX too",
        };
        return Err(format!(
            "ptxas {sm} rejects the printed PTX ({original}): {e}"
        ));
    }
    let reparsed = fencehound_ptx::parse(&format!("{file}.printed"), &printed)
        .map_err(|e| format!("printed PTX does not parse: {e}"))?;
    if reparsed != module {
        return Err(format!(
            "parse(print(m)) != m; first differing item: {}",
            first_difference(&module, &reparsed)
        ));
    }
    let printed_again = fencehound_ptx::print(&reparsed);
    if printed_again != printed {
        let line = printed
            .lines()
            .zip(printed_again.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "(length differs)".to_string(), |i| format!("{}", i + 1));
        return Err(format!("print(parse(print(m))) != print(m) at line {line}"));
    }
    Ok(())
}

fn first_difference(a: &fencehound_ptx::Module, b: &fencehound_ptx::Module) -> String {
    match a.items.iter().zip(&b.items).position(|(x, y)| x != y) {
        Some(i) => format!(
            "#{i}:\n  m:     {:?}\n  again: {:?}",
            a.items[i], b.items[i]
        ),
        None => format!("item counts {} vs {}", a.items.len(), b.items.len()),
    }
}

#[test]
fn every_kernel_parses_prints_assembles_and_round_trips() {
    // Missing tools are a failure with the install hint, not a skip.
    let nv = nvrtc().unwrap_or_else(|e| panic!("{e}"));
    find_ptxas().unwrap_or_else(|e| panic!("{e}"));
    let supported: Vec<String> = nv
        .supported_archs
        .iter()
        .map(|a| format!("compute_{a}"))
        .collect();
    for (arch, _) in ARCHS {
        assert!(
            supported.iter().any(|s| s == arch),
            "NVRTC {:?} does not support {arch}",
            nv.version
        );
    }

    let kernels = corpus();
    assert!(kernels.len() >= MIN_KERNELS, "{} kernels", kernels.len());
    let jobs: Vec<(&Kernel, &str, &str)> = kernels
        .iter()
        .flat_map(|k| ARCHS.iter().map(move |&(arch, sm)| (k, arch, sm)))
        .collect();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                while let Some(&(kernel, arch, sm)) = jobs.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    // A panic inside the front end is a failure of this job, not of the run.
                    let outcome = std::panic::catch_unwind(|| check(kernel, arch, sm))
                        .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&*p))));
                    if let Err(e) = outcome {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{} ({arch}): {e}", kernel.name));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    eprintln!(
        "corpus: {} kernels x {} archs = {} jobs in {:.1?} on {THREADS} threads",
        kernels.len(),
        ARCHS.len(),
        jobs.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus jobs failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(non-string panic)".into())
}
