//! Finding libnvrtc, ptxas and the CCCL (libcu++/CUB) headers on this machine.
//!
//! Every search records what it looked at, so "not found" can list it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::{ToolchainError, NVRTC_INSTALL_HINT, PTXAS_INSTALL_HINT};

/// Where a tool was found, in the order the search tries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An explicit override such as `FENCEHOUND_NVRTC`.
    Override(&'static str),
    /// A CUDA toolkit named by `CUDA_HOME` or `CUDA_PATH`.
    Toolkit(&'static str),
    /// A directory on `LD_LIBRARY_PATH`.
    LdLibraryPath,
    /// A directory on `PATH`.
    Path,
    /// The project-local wheels installed by `scripts/setup-cuda.sh` (`.tools/cuda`).
    ProjectTools,
    /// The `nvidia` package of the `python3` site-packages.
    SitePackages,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Override(var) => write!(f, "${var}"),
            Origin::Toolkit(var) => write!(f, "CUDA toolkit from ${var}"),
            Origin::LdLibraryPath => f.write_str("LD_LIBRARY_PATH"),
            Origin::Path => f.write_str("PATH"),
            Origin::ProjectTools => f.write_str("project .tools/cuda"),
            Origin::SitePackages => f.write_str("python3 site-packages"),
        }
    }
}

/// A file or directory the search found, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub origin: Origin,
}

const NO_PROJECT_TOOLS: &str =
    "project .tools/cuda: none above the current directory or the executable";

/// The toolkit roots named by `CUDA_HOME` / `CUDA_PATH`, in that order.
fn toolkit_roots() -> Vec<(&'static str, PathBuf)> {
    ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(|var| non_empty_env(var).map(|v| (var, PathBuf::from(v))))
        .collect()
}

fn non_empty_env(var: &str) -> Option<OsString> {
    std::env::var_os(var).filter(|v| !v.is_empty())
}

fn env_dirs(var: &str) -> Vec<PathBuf> {
    non_empty_env(var)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Toolkit roots (`<root>/bin/nvcc`) of every nvcc on `PATH`.
fn nvcc_toolkit_roots() -> Vec<PathBuf> {
    env_dirs("PATH")
        .into_iter()
        .filter(|d| d.join("nvcc").is_file())
        .filter_map(|d| d.parent().map(Path::to_path_buf))
        .collect()
}

/// The `.tools/cuda` directories to try: `FENCEHOUND_TOOLS_DIR`, then the first `.tools/cuda`
/// found walking up from the current directory, then from the running executable's directory
/// (so a binary under `target/` finds the install of its checkout wherever it is run from).
pub fn project_tools_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = non_empty_env("FENCEHOUND_TOOLS_DIR") {
        dirs.push(PathBuf::from(d));
    }
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf)),
    ];
    for start in starts.into_iter().flatten() {
        if let Some(found) = start
            .ancestors()
            .map(|a| a.join(".tools").join("cuda"))
            .find(|c| c.is_dir())
        {
            if !dirs.contains(&found) {
                dirs.push(found);
            }
        }
    }
    dirs
}

/// The directories of python3's `nvidia` namespace package (empty when python3 or the
/// package is missing). Asked once per process, with a timeout so a broken python cannot
/// hang us.
pub fn site_packages_nvidia_dirs() -> &'static [PathBuf] {
    static DIRS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    DIRS.get_or_init(|| ask_python_for_nvidia_dirs(Duration::from_secs(5)).unwrap_or_default())
}

fn ask_python_for_nvidia_dirs(timeout: Duration) -> Option<Vec<PathBuf>> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import nvidia, sys; sys.stdout.write('\\n'.join(list(nvidia.__path__)))",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect(),
    )
}

/// Library directories inside a wheel's `nvidia` package: CUDA 13 wheels share
/// `nvidia/cu13`, CUDA 12 wheels use one folder per component.
fn wheel_subdirs(nvidia: &Path, component: &str, leaf: &str) -> Vec<PathBuf> {
    vec![
        nvidia.join("cu13").join(leaf),
        nvidia.join(component).join(leaf),
    ]
}

/// The libnvrtc in `dir`, if any: `libnvrtc.so.13`, else `libnvrtc.so`, else the
/// highest `libnvrtc.so.N`.
fn nvrtc_in_dir(dir: &Path) -> Option<PathBuf> {
    for name in ["libnvrtc.so.13", "libnvrtc.so"] {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let major: u32 = name.strip_prefix("libnvrtc.so.")?.parse().ok()?;
            Some((major, e.path()))
        })
        .filter(|(_, p)| p.is_file())
        .max_by_key(|(major, _)| *major)
        .map(|(_, p)| p)
}

/// Finds libnvrtc. Order: `FENCEHOUND_NVRTC`, `CUDA_HOME`/`CUDA_PATH` (`lib64/`, `lib/`),
/// `LD_LIBRARY_PATH`, the project's `.tools/cuda`, python3 site-packages.
pub fn find_nvrtc() -> Result<Located, ToolchainError> {
    let mut looked = Vec::new();
    if let Some(found) = explicit_override("FENCEHOUND_NVRTC", &mut looked)? {
        return Ok(found);
    }
    let mut candidates: Vec<(Origin, PathBuf)> = Vec::new();
    for (var, root) in toolkit_roots() {
        for sub in ["lib64", "lib", "targets/x86_64-linux/lib"] {
            candidates.push((Origin::Toolkit(var), root.join(sub)));
        }
    }
    note_unset(&["CUDA_HOME", "CUDA_PATH"], &mut looked);
    for d in env_dirs("LD_LIBRARY_PATH") {
        candidates.push((Origin::LdLibraryPath, d));
    }
    note_unset(&["LD_LIBRARY_PATH"], &mut looked);
    // A toolkit whose nvcc is on PATH but that nobody named in CUDA_HOME: scripts/setup-cuda.sh
    // accepts such a toolkit, so the search must find its libnvrtc too.
    for root in nvcc_toolkit_roots() {
        for sub in ["lib64", "lib", "targets/x86_64-linux/lib"] {
            candidates.push((Origin::Path, root.join(sub)));
        }
    }
    let tools = project_tools_dirs();
    if tools.is_empty() {
        looked
            .push("project .tools/cuda: none above the current directory or the executable".into());
    }
    for t in tools {
        candidates.push((Origin::ProjectTools, t.join("nvidia/cu13/lib")));
    }
    let from_dirs = |candidates: &[(Origin, PathBuf)], looked: &mut Vec<String>| {
        for (origin, dir) in candidates {
            if let Some(path) = nvrtc_in_dir(dir) {
                return Some(Located {
                    path,
                    origin: origin.clone(),
                });
            }
            looked.push(format!("{origin}: {}", dir.display()));
        }
        None
    };
    if let Some(found) = from_dirs(&candidates, &mut looked) {
        return Ok(found);
    }
    // Python is the slowest source, so it is only asked when everything else failed.
    let site: Vec<(Origin, PathBuf)> = site_packages_nvidia_dirs()
        .iter()
        .flat_map(|n| wheel_subdirs(n, "cuda_nvrtc", "lib"))
        .map(|d| (Origin::SitePackages, d))
        .collect();
    if site.is_empty() {
        looked.push("python3 site-packages: no `nvidia` package".into());
    }
    if let Some(found) = from_dirs(&site, &mut looked) {
        return Ok(found);
    }
    Err(ToolchainError::NotFound {
        tool: "NVRTC (libnvrtc.so)",
        looked,
        hint: NVRTC_INSTALL_HINT,
    })
}

/// Finds ptxas. Order: `FENCEHOUND_PTXAS`, `CUDA_HOME`/`CUDA_PATH` (`bin/`), `PATH`, the
/// project's `.tools/cuda`, python3 site-packages.
pub fn find_ptxas() -> Result<Located, ToolchainError> {
    let mut looked = Vec::new();
    if let Some(found) = explicit_override("FENCEHOUND_PTXAS", &mut looked)? {
        return Ok(found);
    }
    let mut candidates: Vec<(Origin, PathBuf)> = Vec::new();
    for (var, root) in toolkit_roots() {
        candidates.push((Origin::Toolkit(var), root.join("bin/ptxas")));
    }
    note_unset(&["CUDA_HOME", "CUDA_PATH"], &mut looked);
    if let Some(found) = first_file(&candidates, &mut looked) {
        return Ok(found);
    }
    // PATH is listed as one line: it is long, and "not on PATH" says enough.
    let path_dirs = env_dirs("PATH");
    if let Some(path) = path_dirs
        .iter()
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
    {
        return Ok(Located {
            path,
            origin: Origin::Path,
        });
    }
    looked.push(format!(
        "PATH: not in any of its {} directories",
        path_dirs.len()
    ));
    candidates.clear();
    let tools = project_tools_dirs();
    if tools.is_empty() {
        looked.push(NO_PROJECT_TOOLS.into());
    }
    for t in tools {
        candidates.push((Origin::ProjectTools, t.join("nvidia/cu13/bin/ptxas")));
    }
    if let Some(found) = first_file(&candidates, &mut looked) {
        return Ok(found);
    }
    let site: Vec<(Origin, PathBuf)> = site_packages_nvidia_dirs()
        .iter()
        .flat_map(|n| wheel_subdirs(n, "cuda_nvcc", "bin"))
        .map(|d| (Origin::SitePackages, d.join("ptxas")))
        .collect();
    if site.is_empty() {
        looked.push("python3 site-packages: no `nvidia` package".into());
    }
    if let Some(found) = first_file(&site, &mut looked) {
        return Ok(found);
    }
    Err(ToolchainError::NotFound {
        tool: "ptxas",
        looked,
        hint: PTXAS_INSTALL_HINT,
    })
}

/// Finds the CCCL headers (the directory that holds `cuda/atomic`). Order:
/// `FENCEHOUND_CCCL_INCLUDE`, `CUDA_HOME`/`CUDA_PATH` (`include/cccl`, `include`), the
/// project's `.tools/cuda`, python3 site-packages. `None` when absent: they are optional.
pub fn find_cccl_include() -> Option<Located> {
    let mut looked = Vec::new();
    if let Ok(Some(found)) = explicit_override("FENCEHOUND_CCCL_INCLUDE", &mut looked) {
        return Some(found);
    }
    let mut candidates: Vec<(Origin, PathBuf)> = Vec::new();
    for (var, root) in toolkit_roots() {
        candidates.push((Origin::Toolkit(var), root.join("include/cccl")));
        candidates.push((Origin::Toolkit(var), root.join("include")));
    }
    for root in nvcc_toolkit_roots() {
        candidates.push((Origin::Path, root.join("include/cccl")));
        candidates.push((Origin::Path, root.join("include")));
    }
    for t in project_tools_dirs() {
        candidates.push((Origin::ProjectTools, t.join("nvidia/cu13/include/cccl")));
    }
    let holds_cccl = |d: &Path| d.join("cuda/atomic").is_file();
    if let Some((origin, dir)) = candidates.iter().find(|(_, d)| holds_cccl(d)) {
        return Some(Located {
            path: dir.clone(),
            origin: origin.clone(),
        });
    }
    site_packages_nvidia_dirs()
        .iter()
        .flat_map(|n| [n.join("cu13/include/cccl"), n.join("cuda_cccl/include")])
        .find(|d| holds_cccl(d))
        .map(|path| Located {
            path,
            origin: Origin::SitePackages,
        })
}

/// `Ok(Some)` when `var` names an existing file, `Err` when it names nothing, `Ok(None)`
/// when unset.
fn explicit_override(
    var: &'static str,
    looked: &mut Vec<String>,
) -> Result<Option<Located>, ToolchainError> {
    match non_empty_env(var) {
        None => {
            looked.push(format!("${var}: not set"));
            Ok(None)
        }
        Some(v) => {
            let path = PathBuf::from(v);
            if path.exists() {
                Ok(Some(Located {
                    path,
                    origin: Origin::Override(var),
                }))
            } else {
                Err(ToolchainError::BadOverride { var, path })
            }
        }
    }
}

fn note_unset(vars: &[&str], looked: &mut Vec<String>) {
    for var in vars {
        if non_empty_env(var).is_none() {
            looked.push(format!("${var}: not set"));
        }
    }
}

fn first_file(candidates: &[(Origin, PathBuf)], looked: &mut Vec<String>) -> Option<Located> {
    for (origin, path) in candidates {
        if path.is_file() {
            return Some(Located {
                path: path.clone(),
                origin: origin.clone(),
            });
        }
        looked.push(format!("{origin}: {}", path.display()));
    }
    None
}
