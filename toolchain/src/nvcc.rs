//! nvcc on a machine without a GPU: finding it and the pieces it needs, and running it.
//!
//! nvcc is a driver: it runs the host compiler (the machine's `g++`), `cudafe++`, `cicc`
//! (from the `nvidia-nvvm` wheel, `nvvm/bin/cicc` beside `bin/`), `ptxas` and `fatbinary`,
//! and reads the crt headers (`include/crt/host_runtime.h`, from `nvidia-cuda-crt`) and the
//! runtime headers (`cuda_runtime.h`, from `nvidia-cuda-runtime`). The wheels all install
//! into one `nvidia/cu13` tree, which is the layout `bin/nvcc.profile` expects, so the
//! wheel's nvcc works as is once those are present. Checked with the 13.5.37 wheels and
//! gcc 12: `nvcc -cudart shared -gencode arch=compute_80,code=compute_80 app.cu -o app`
//! builds a program whose only CUDA dependency is `libcudart.so.13`.
//!
//! `-cudart shared` links with `-lcudart`, which needs an unversioned `lib/libcudart.so`;
//! `scripts/setup-cuda.sh` adds that link to the wheel install.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::discover::{project_tools_dirs, site_packages_nvidia_dirs, Located, Origin};
use crate::error::ToolchainError;

/// What to tell someone who has no nvcc.
pub const NVCC_INSTALL_HINT: &str = "install it with one of:\n  \
     scripts/setup-cuda.sh                             (pinned wheels into .tools/cuda)\n  \
     python3 -m pip install nvidia-cuda-nvcc==13.5.37 nvidia-nvvm==13.5.37 \\\n      \
     nvidia-cuda-crt==13.5.37 nvidia-cuda-runtime==13.5.37\n  \
     export FENCEHOUND_NVCC=/path/to/nvcc";

/// nvcc and the parts of a CUDA installation it needs, each `None` when missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccToolchain {
    pub nvcc: Located,
    /// The toolkit root (`nvcc`'s `bin/..`).
    pub root: PathBuf,
    /// `nvvm/bin/cicc`, the CUDA C++ to PTX compiler.
    pub cicc: Option<PathBuf>,
    /// The include directory holding `crt/host_runtime.h`.
    pub crt_include: Option<PathBuf>,
    /// The include directory holding `cuda_runtime.h`.
    pub runtime_include: Option<PathBuf>,
    /// The library nvcc links programs against (`libcudart.so` in `lib/` or `lib64/`).
    pub cudart_link: Option<PathBuf>,
    /// The host C++ compiler nvcc will run (`g++` on `PATH`, or `$NVCC_CCBIN`).
    pub host_cxx: Option<PathBuf>,
}

impl NvccToolchain {
    /// What is missing for nvcc to build a program, as readable items; empty when complete.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        let root = self.root.display();
        if self.cicc.is_none() {
            out.push(format!(
                "cicc ({root}/nvvm/bin/cicc; pip package nvidia-nvvm)"
            ));
        }
        if self.crt_include.is_none() {
            out.push(format!(
                "crt headers ({root}/include/crt/host_runtime.h; pip package nvidia-cuda-crt)"
            ));
        }
        if self.runtime_include.is_none() {
            out.push(format!(
                "CUDA runtime headers ({root}/include/cuda_runtime.h; pip package nvidia-cuda-runtime)"
            ));
        }
        if self.cudart_link.is_none() {
            out.push(format!(
                "libcudart.so to link against ({root}/lib/libcudart.so; scripts/setup-cuda.sh links it to libcudart.so.13)"
            ));
        }
        if self.host_cxx.is_none() {
            out.push("a host C++ compiler (g++ on PATH, or $NVCC_CCBIN)".into());
        }
        out
    }
}

/// Finds nvcc and what it needs. Order for nvcc: `FENCEHOUND_NVCC`, `CUDA_HOME`/`CUDA_PATH`
/// (`bin/nvcc`), `PATH`, the project's `.tools/cuda`, python3 site-packages.
pub fn find_nvcc() -> Result<NvccToolchain, ToolchainError> {
    let nvcc = locate_nvcc()?;
    let root = nvcc
        .path
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let file_in = |cands: &[&str]| cands.iter().map(|c| root.join(c)).find(|p| p.is_file());
    let dir_with = |dirs: &[&str], file: &str| {
        dirs.iter()
            .map(|d| root.join(d))
            .find(|d| d.join(file).is_file())
    };
    let include_dirs = ["include", "targets/x86_64-linux/include"];
    Ok(NvccToolchain {
        cicc: file_in(&["nvvm/bin/cicc"]),
        crt_include: dir_with(&include_dirs, "crt/host_runtime.h"),
        runtime_include: dir_with(&include_dirs, "cuda_runtime.h"),
        cudart_link: file_in(&[
            "lib/libcudart.so",
            "lib64/libcudart.so",
            "targets/x86_64-linux/lib/libcudart.so",
        ]),
        host_cxx: host_cxx(),
        root,
        nvcc,
    })
}

fn host_cxx() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("NVCC_CCBIN").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("g++"))
        .find(|p| p.is_file())
}

fn locate_nvcc() -> Result<Located, ToolchainError> {
    let mut looked = Vec::new();
    if let Some(v) = std::env::var_os("FENCEHOUND_NVCC").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(v);
        if path.is_file() {
            return Ok(Located {
                path,
                origin: Origin::Override("FENCEHOUND_NVCC"),
            });
        }
        return Err(ToolchainError::BadOverride {
            var: "FENCEHOUND_NVCC",
            path,
        });
    }
    looked.push("$FENCEHOUND_NVCC: not set".to_string());
    let mut candidates: Vec<(Origin, PathBuf)> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        match std::env::var_os(var).filter(|v| !v.is_empty()) {
            Some(root) => {
                candidates.push((Origin::Toolkit(var), PathBuf::from(root).join("bin/nvcc")))
            }
            None => looked.push(format!("${var}: not set")),
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path).filter(|d| !d.as_os_str().is_empty()) {
            candidates.push((Origin::Path, d.join("nvcc")));
        }
    }
    for t in project_tools_dirs() {
        candidates.push((Origin::ProjectTools, t.join("nvidia/cu13/bin/nvcc")));
    }
    for (origin, path) in &candidates {
        if path.is_file() {
            return Ok(Located {
                path: path.clone(),
                origin: origin.clone(),
            });
        }
        if *origin != Origin::Path {
            looked.push(format!("{origin}: {}", path.display()));
        }
    }
    looked.push("PATH: no nvcc in any of its directories".into());
    for n in site_packages_nvidia_dirs() {
        for p in [n.join("cu13/bin/nvcc"), n.join("cuda_nvcc/bin/nvcc")] {
            if p.is_file() {
                return Ok(Located {
                    path: p,
                    origin: Origin::SitePackages,
                });
            }
            looked.push(format!("{}: {}", Origin::SitePackages, p.display()));
        }
    }
    Err(ToolchainError::NotFound {
        tool: "nvcc",
        looked,
        hint: NVCC_INSTALL_HINT,
    })
}

/// The options `fencehound nvcc` adds unless the arguments already decide them:
/// `-cudart shared` (fencehound's runtime replaces the shared library; a statically linked
/// runtime cannot be replaced) and `-lineinfo` (faults, traces and fence suggestions speak
/// in CUDA lines only when the PTX has `.loc` directives).
pub fn default_nvcc_options(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let has = |pred: &dyn Fn(&str) -> bool| args.iter().any(|a| pred(a));
    if !has(&|a| {
        a == "-cudart" || a == "--cudart" || a.starts_with("-cudart=") || a.starts_with("--cudart=")
    }) {
        out.push("-cudart".into());
        out.push("shared".into());
    }
    if !has(&|a| {
        matches!(
            a,
            "-lineinfo" | "--generate-line-info" | "-G" | "--device-debug"
        )
    }) {
        out.push("-lineinfo".into());
    }
    out
}

/// A command running nvcc with `args` (plus [`default_nvcc_options`]): nvcc's own directory
/// first on `PATH` (it runs `cudafe++`, `ptxas`, `fatbinary` from there), so the wheel's
/// tools win over any others.
pub fn nvcc_command(tc: &NvccToolchain, args: &[String]) -> Command {
    let mut cmd = Command::new(&tc.nvcc.path);
    cmd.args(default_nvcc_options(args));
    cmd.args(args);
    if let Some(bin) = tc.nvcc.path.parent() {
        let mut dirs = vec![bin.to_path_buf()];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        if let Ok(joined) = std::env::join_paths(dirs) {
            cmd.env("PATH", joined);
        }
    }
    cmd
}

/// `nvcc --version`'s last "release" line, e.g. `Cuda compilation tools, release 13.5, V13.5.37`.
pub fn nvcc_version(nvcc: &Path) -> Result<String, ToolchainError> {
    let out = Command::new(nvcc)
        .arg("--version")
        .output()
        .map_err(|source| ToolchainError::Io {
            action: "running",
            path: nvcc.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .rev()
        .find(|l| l.contains("release"))
        .unwrap_or("unknown version")
        .trim()
        .to_string())
}
