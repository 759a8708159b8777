//! Running ptxas: the authority on whether a PTX text is valid for a real GPU.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::discover::find_ptxas;
use crate::error::{PtxasError, ToolchainError};

/// Assembles `ptx` for `arch` (`sm_80`; `compute_80` is taken to mean `sm_80`) with the
/// ptxas [`find_ptxas`] finds. The cubin is written to a temporary directory and discarded:
/// only ptxas's verdict matters.
pub fn assemble(ptx: &str, arch: &str) -> Result<(), PtxasError> {
    let ptxas = find_ptxas()?;
    assemble_with(&ptxas.path, ptx, arch)
}

/// [`assemble`] with an explicit ptxas.
pub fn assemble_with(ptxas: &Path, ptx: &str, arch: &str) -> Result<(), PtxasError> {
    run(ptxas, ptx, arch, false).map(|_| ())
}

/// What ptxas allocated for one function (`ptxas -v`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionUsage {
    pub name: String,
    /// A kernel (`.entry`) rather than a device function.
    pub entry: bool,
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_bytes: u32,
}

/// Assembles `ptx` for `arch` like [`assemble`] and returns ptxas's resource report
/// (`-v`): registers, spills and stack frame per function, in the order ptxas reports them.
pub fn resource_usage(ptx: &str, arch: &str) -> Result<Vec<FunctionUsage>, PtxasError> {
    let ptxas = find_ptxas()?;
    resource_usage_with(&ptxas.path, ptx, arch)
}

/// [`resource_usage`] with an explicit ptxas.
pub fn resource_usage_with(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
) -> Result<Vec<FunctionUsage>, PtxasError> {
    run(ptxas, ptx, arch, true).map(|log| parse_usage(&log))
}

/// Assembles `unique` and each of `shared` as relocatable device code (`ptxas -c`) for
/// `arch` and links the objects with nvlink (found beside ptxas): the module they make
/// together assembles and every symbol one part uses from another resolves. For many
/// modules that carry one large part verbatim — an instrumented module is the device
/// runtime's 170 KB of PTX, the same in every one, plus the kernel — the shared parts are
/// assembled once per process and architecture (their objects kept in memory, written
/// beside `unique`'s for each link) and only `unique` each time: ptxas took 0.61 s for an
/// instrumented histogram kernel whole, 0.06 s for its kernel part against the runtime's
/// declarations (sm_80, 2026-12-06).
pub fn assemble_linked(unique: &str, shared: &[&str], arch: &str) -> Result<(), PtxasError> {
    /// Objects by architecture, then by PTX text (looked up by `&str`: no copy of a
    /// 170 KB part per call).
    type Objects = HashMap<String, HashMap<String, Vec<u8>>>;
    static OBJECTS: OnceLock<Mutex<Objects>> = OnceLock::new();
    let ptxas = find_ptxas()?.path;
    let sm = real_arch(arch)?;
    let nvlink = ptxas.with_file_name("nvlink");
    if !nvlink.is_file() {
        return Err(ToolchainError::Io {
            action: "finding nvlink beside ptxas at",
            path: nvlink,
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .into());
    }
    let work = scratch_dir()?;
    let objects = OBJECTS.get_or_init(Default::default);
    let lock = || objects.lock().unwrap_or_else(|p| p.into_inner());
    let mut inputs: Vec<PathBuf> = Vec::new();
    for (n, part) in shared.iter().enumerate() {
        let obj = work.path().join(format!("shared-{n}.o"));
        let known = lock().get(&sm).and_then(|m| m.get(*part)).cloned();
        match known {
            Some(bytes) => std::fs::write(&obj, bytes).map_err(io("writing", &obj))?,
            None => {
                run_to(&ptxas, part, arch, false, Some(&obj))?;
                let bytes = std::fs::read(&obj).map_err(io("reading", &obj))?;
                lock()
                    .entry(sm.clone())
                    .or_default()
                    .insert(part.to_string(), bytes);
            }
        }
        inputs.push(obj);
    }
    let own = work.path().join("unique.o");
    run_to(&ptxas, unique, arch, false, Some(&own))?;
    inputs.push(own);
    let cubin = work.path().join("linked.cubin");
    let out = Command::new(&nvlink)
        .arg(format!("-arch={sm}"))
        .args(&inputs)
        .arg("-o")
        .arg(&cubin)
        .output()
        .map_err(io("running", &nvlink))?;
    if out.status.success() {
        return Ok(());
    }
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    Err(PtxasError::Rejected {
        arch: sm,
        log: format!("nvlink: {}", log.trim_end()),
    })
}

/// A temporary directory for one ptxas or nvlink run, removed when dropped.
fn scratch_dir() -> Result<tempfile::TempDir, ToolchainError> {
    tempfile::Builder::new()
        .prefix("fencehound-ptxas-")
        .tempdir()
        .map_err(io(
            "creating a temporary directory in",
            &std::env::temp_dir(),
        ))
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ToolchainError {
    let path = path.to_path_buf();
    move |source| ToolchainError::Io {
        action,
        path,
        source,
    }
}

/// Runs ptxas (with `-v` when `verbose`) and returns its output (stderr, then stdout).
fn run(ptxas: &Path, ptx: &str, arch: &str, verbose: bool) -> Result<String, PtxasError> {
    run_to(ptxas, ptx, arch, verbose, None)
}

/// [`run`]; with `object`, as relocatable code (`-c`) written there.
fn run_to(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    verbose: bool,
    object: Option<&Path>,
) -> Result<String, PtxasError> {
    let sm = real_arch(arch)?;
    let dir = scratch_dir()?;
    let input = dir.path().join("input.ptx");
    let scratch = dir.path().join("output.cubin");
    let output = object.unwrap_or(&scratch);
    std::fs::write(&input, ptx).map_err(io("writing", &input))?;
    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={sm}"));
    if verbose {
        cmd.arg("-v");
    }
    if object.is_some() {
        cmd.arg("-c");
    }
    let out = cmd
        .arg(&input)
        .arg("-o")
        .arg(output)
        .output()
        .map_err(io("running", ptxas))?;
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    if out.status.success() {
        return Ok(log);
    }
    if log.trim().is_empty() {
        log = format!("ptxas exited with {}", out.status);
    }
    Err(PtxasError::Rejected {
        arch: sm,
        log: log.trim_end().to_string(),
    })
}

/// The first unsigned number in `s` that is followed by `unit`.
fn number_before(s: &str, unit: &str) -> Option<u32> {
    let i = s.find(unit)?;
    s[..i].split_whitespace().last()?.parse().ok()
}

/// Parses `ptxas -v` output: a function's block starts at `Compiling entry function 'k'`
/// or `Function properties for f`; `N bytes stack frame, N bytes spill stores, N bytes
/// spill loads` and `Used N registers` fill it in.
fn parse_usage(log: &str) -> Vec<FunctionUsage> {
    let mut out: Vec<FunctionUsage> = Vec::new();
    let mut cur: Option<usize> = None;
    for line in log.lines() {
        let l = line.trim();
        let named = if let Some(rest) = l.split("Compiling entry function ").nth(1) {
            rest.split('\'').nth(1).map(|n| (n.to_string(), true))
        } else {
            l.split("Function properties for ")
                .nth(1)
                .map(|n| (n.trim().to_string(), false))
        };
        if let Some((name, entry)) = named {
            let i = match out.iter().position(|f| f.name == name) {
                Some(i) => i,
                None => {
                    out.push(FunctionUsage {
                        name,
                        entry: false,
                        registers: 0,
                        spill_stores: 0,
                        spill_loads: 0,
                        stack_bytes: 0,
                    });
                    out.len() - 1
                }
            };
            out[i].entry |= entry;
            cur = Some(i);
            continue;
        }
        let Some(f) = cur.and_then(|i| out.get_mut(i)) else {
            continue;
        };
        if l.contains("stack frame") {
            f.stack_bytes = number_before(l, "bytes stack frame").unwrap_or(0);
            f.spill_stores = number_before(l, "bytes spill stores").unwrap_or(0);
            f.spill_loads = number_before(l, "bytes spill loads").unwrap_or(0);
        } else if let Some(r) = l.split("Used ").nth(1) {
            f.registers = number_before(r, "registers").unwrap_or(0);
        }
    }
    out
}

/// The version line of a ptxas (`Cuda compilation tools, release 13.5, V13.5.37`).
pub fn ptxas_version(ptxas: &Path) -> Result<String, ToolchainError> {
    let out = Command::new(ptxas)
        .arg("--version")
        .output()
        .map_err(|source| ToolchainError::Io {
            action: "running",
            path: ptxas.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .find(|l| l.contains("release"))
        .or_else(|| text.lines().last())
        .unwrap_or("")
        .trim()
        .to_string())
}

fn real_arch(arch: &str) -> Result<String, ToolchainError> {
    let number = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))
        .filter(|n| {
            let digits = n.trim_end_matches(['a', 'f']);
            !digits.is_empty()
                && n.len() - digits.len() <= 1
                && digits.bytes().all(|b| b.is_ascii_digit())
        })
        .ok_or_else(|| ToolchainError::BadArch {
            arch: arch.to_string(),
            reason: "expected sm_NN, e.g. sm_80".to_string(),
        })?;
    Ok(format!("sm_{number}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_report() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'scan' for 'sm_80'\n\
ptxas info    : Function properties for scan\n\
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
ptxas info    : Used 40 registers, 380 bytes cmem[0]\n\
ptxas info    : Function properties for __fencehound_load\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        let u = parse_usage(log);
        assert_eq!(u.len(), 2);
        assert_eq!(
            u[0],
            FunctionUsage {
                name: "scan".into(),
                entry: true,
                registers: 40,
                spill_stores: 8,
                spill_loads: 4,
                stack_bytes: 16,
            }
        );
        assert_eq!(u[1].name, "__fencehound_load");
        assert!(!u[1].entry);
        assert_eq!(u[1].registers, 0);
    }

    #[test]
    fn arch_names() {
        assert_eq!(real_arch("sm_80").unwrap(), "sm_80");
        assert_eq!(real_arch("compute_90a").unwrap(), "sm_90a");
        for bad in ["80", "sm_", "sm_8x", "sm_80; rm -rf /", "sm_90af"] {
            assert!(real_arch(bad).is_err(), "{bad}");
        }
    }
}
