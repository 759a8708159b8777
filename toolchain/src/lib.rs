//! NVRTC and ptxas for fencehound: finding them, compiling CUDA C++ to PTX, caching the
//! PTX, and asking ptxas whether a PTX text is valid.
//!
//! # Where the tools are looked for
//!
//! The first match wins; an explicit override that names a missing file is an error, not a
//! reason to keep looking.
//!
//! | what | order |
//! |---|---|
//! | libnvrtc | `$FENCEHOUND_NVRTC` (the `.so` itself); `$CUDA_HOME`, `$CUDA_PATH` (`lib64/`, `lib/`); each directory of `$LD_LIBRARY_PATH`; `lib64/`, `lib/` beside an `nvcc` on `$PATH`; the project-local install `.tools/cuda/nvidia/cu13/lib/libnvrtc.so.13`; python3's site-packages (`nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib`) |
//! | ptxas | `$FENCEHOUND_PTXAS`; `$CUDA_HOME/bin`, `$CUDA_PATH/bin`; `$PATH`; `.tools/cuda/nvidia/cu13/bin/ptxas`; site-packages |
//! | nvcc | `$FENCEHOUND_NVCC`; `$CUDA_HOME/bin`, `$CUDA_PATH/bin`; `$PATH`; `.tools/cuda/nvidia/cu13/bin/nvcc`; site-packages. With it: `cicc`, the crt and runtime headers and `libcudart.so` under the same root, and the host `g++` (see [`find_nvcc`]) |
//! | CCCL headers (`<cuda/atomic>`, CUB) | `$FENCEHOUND_CCCL_INCLUDE`; `$CUDA_HOME/include/cccl` or `include`; the same beside an `nvcc` on `$PATH`; `.tools/cuda/nvidia/cu13/include/cccl`; site-packages. Optional: added as the last `-I` when present |
//!
//! The project-local `.tools/cuda` is `$FENCEHOUND_TOOLS_DIR` if set, else the first
//! `.tools/cuda` found walking up from the current directory, and from the running
//! executable's directory. `scripts/setup-cuda.sh` installs the pinned NVIDIA wheels there.
//! python3 is asked (once, with a timeout) only when nothing else matched.
//!
//! libnvrtc is loaded by absolute path and kept loaded; `cudarc`'s by-name lookup then
//! resolves to it (see [`nvrtc()`]). `libnvrtc-builtins.so.MAJOR.MINOR` must sit beside it.
//! CUDA 13's NVRTC compiles for `compute_75` and newer; the accepted list comes from NVRTC.
//!
//! # The PTX cache
//!
//! [`compile`] stores PTX under `$FENCEHOUND_CACHE_DIR`, else `$XDG_CACHE_HOME/fencehound/ptx`,
//! else `~/.cache/fencehound/ptx`, keyed by SHA-256 of the source, file name, every NVRTC
//! option (architecture, defines, absolute include directories) and the NVRTC version.
//! **Header contents are not part of the key**: after editing an `#include`d file, clear the
//! cache. Writes are atomic (temporary file + rename); damaged entries count as misses.
//!
//! # Bundled headers and corpus flags
//!
//! NVRTC 13 resolves `<cuda_fp16.h>` and friends only from headers it extracts itself
//! (`--use-bundled-headers=DIR`). [`bundled_headers_dir`] extracts them once per NVRTC
//! version into `bundled-headers/` beside the PTX cache; [`expand_nvrtc_flags`] turns a
//! corpus kernel's `// nvrtc-flags:` line into [`CompileRequest::extra_options`].

mod cache;
mod discover;
mod error;
mod headers;
mod nvcc;
mod nvrtc;
mod ptxas;

pub use cache::{CacheEntry, PtxCache};
pub use discover::{
    find_cccl_include, find_nvrtc, find_ptxas, project_tools_dirs, Located, Origin,
};
pub use error::{PtxasError, ToolchainError, NVRTC_INSTALL_HINT, PTXAS_INSTALL_HINT};
pub use headers::{
    bundled_headers_dir, expand_nvrtc_flags, expand_placeholders, BUNDLED_HEADERS_PLACEHOLDER,
    CCCL_INCLUDE_PLACEHOLDER,
};
pub use nvcc::{
    default_nvcc_options, find_nvcc, nvcc_command, nvcc_version, NvccToolchain, NVCC_INSTALL_HINT,
};
pub use nvrtc::{
    compile, compile_with_cache, lowered_names, nvrtc, CompileRequest, Compiled, Nvrtc,
    DEFAULT_ARCH, LOWERED_NAME_MARK,
};
pub use ptxas::{
    assemble, assemble_linked, assemble_with, ptxas_version, resource_usage, resource_usage_with,
    FunctionUsage,
};
