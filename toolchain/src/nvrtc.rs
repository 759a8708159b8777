//! Loading libnvrtc and compiling CUDA C++ to PTX with it.
//!
//! The calls go through `cudarc::nvrtc`, whose loader `dlopen`s libnvrtc *by name*
//! (`libnvrtc.so`, `libnvrtc.so.13`, ...). We load the library we found by absolute path
//! first and keep it loaded for the life of the process; the dynamic loader then resolves
//! cudarc's by-name lookup to that already-loaded object through its SONAME. We check that it
//! really did (the addresses of `nvrtcVersion` must agree) and never call into cudarc before
//! `is_culib_present()` says its loader will succeed, because its loader panics otherwise.

use std::ffi::{c_char, c_int, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::result as nvrtc_result;
use cudarc::nvrtc::sys as nvrtc_sys;
use libloading::Library;

use crate::cache::{CacheEntry, PtxCache};
use crate::discover::{find_cccl_include, find_nvrtc, Located};
use crate::error::ToolchainError;

/// The architecture used when a request names none.
pub const DEFAULT_ARCH: &str = "compute_80";

/// A loaded libnvrtc. Obtained from [`nvrtc()`]; lives until the process exits.
#[derive(Debug)]
pub struct Nvrtc {
    /// The library, as found (the path is canonical).
    pub library: Located,
    /// `libnvrtc-builtins.so.MAJOR.MINOR`, which NVRTC opens while compiling.
    pub builtins: PathBuf,
    /// `(major, minor)` as reported by `nvrtcVersion`.
    pub version: (i32, i32),
    /// The virtual architectures this NVRTC accepts, as numbers (`75` for `compute_75`).
    pub supported_archs: Vec<i32>,
    // Never dropped: unloading would invalidate the function pointers cudarc caches.
    _libraries: [Library; 2],
}

static LOADED: OnceLock<Nvrtc> = OnceLock::new();
static LOADING: Mutex<()> = Mutex::new(());

/// Finds and loads libnvrtc (once per process; a failure is retried on the next call).
pub fn nvrtc() -> Result<&'static Nvrtc, ToolchainError> {
    if let Some(n) = LOADED.get() {
        return Ok(n);
    }
    let _guard = LOADING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(n) = LOADED.get() {
        return Ok(n);
    }
    let loaded = load(find_nvrtc()?)?;
    Ok(LOADED.get_or_init(|| loaded))
}

type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;

fn load(found: Located) -> Result<Nvrtc, ToolchainError> {
    let path = std::fs::canonicalize(&found.path).map_err(|source| ToolchainError::Io {
        action: "resolving",
        path: found.path.clone(),
        source,
    })?;
    let load_err = |path: &Path, e: libloading::Error| ToolchainError::Load {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    // SAFETY: loading a shared library runs its initialisers; libnvrtc's are NVIDIA's and
    // have no preconditions beyond a sane process.
    let library = unsafe { Library::new(&path) }.map_err(|e| load_err(&path, e))?;
    // SAFETY: the symbol has this signature in every NVRTC release (nvrtc.h).
    let our_version_fn: VersionFn =
        *unsafe { library.get::<VersionFn>(b"nvrtcVersion\0") }.map_err(|e| load_err(&path, e))?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let rc = unsafe { our_version_fn(&mut major, &mut minor) };
    if rc != 0 {
        return Err(ToolchainError::Nvrtc {
            call: "nvrtcVersion",
            code: format!("status {rc}"),
            log: String::new(),
        });
    }

    let dir = path.parent().unwrap_or(Path::new("/"));
    let builtins = dir.join(format!("libnvrtc-builtins.so.{major}.{minor}"));
    if !builtins.is_file() {
        return Err(ToolchainError::BuiltinsMissing {
            nvrtc: path,
            expected: builtins,
        });
    }
    // Loaded here too so that NVRTC's own by-name dlopen finds it even when libnvrtc was
    // reached through a symlink that breaks its `$ORIGIN` rpath.
    // SAFETY: as above.
    let builtins_lib = unsafe { Library::new(&builtins) }.map_err(|e| load_err(&builtins, e))?;

    // SAFETY: `is_culib_present` only tries to dlopen candidate names.
    if !unsafe { nvrtc_sys::is_culib_present() } {
        return Err(ToolchainError::LibraryMismatch { found: path });
    }
    // SAFETY: `is_culib_present` just succeeded, so `culib` will not panic.
    let cudarc_lib = unsafe { nvrtc_sys::culib() };
    // SAFETY: same symbol and signature as above.
    let cudarc_version_fn: VersionFn = *unsafe { cudarc_lib.get::<VersionFn>(b"nvrtcVersion\0") }
        .map_err(|e| load_err(&path, e))?;
    if cudarc_version_fn as usize != our_version_fn as usize {
        return Err(ToolchainError::LibraryMismatch { found: path });
    }

    let supported_archs = supported_archs()?;
    Ok(Nvrtc {
        library: Located {
            path,
            origin: found.origin,
        },
        builtins,
        version: (major, minor),
        supported_archs,
        _libraries: [library, builtins_lib],
    })
}

fn supported_archs() -> Result<Vec<i32>, ToolchainError> {
    let mut n: c_int = 0;
    // SAFETY: a valid out-pointer; the library is loaded (checked by the caller).
    unsafe { nvrtc_sys::nvrtcGetNumSupportedArchs(&mut n) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcGetNumSupportedArchs", e, String::new()))?;
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    // SAFETY: `archs` has room for the `n` entries NVRTC said it will write.
    unsafe { nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
        .result()
        .map_err(|e| nvrtc_error("nvrtcGetSupportedArchs", e, String::new()))?;
    Ok(archs)
}

fn nvrtc_error(call: &'static str, e: nvrtc_result::NvrtcError, log: String) -> ToolchainError {
    ToolchainError::Nvrtc {
        call,
        code: format!("{:?}", e.0),
        log,
    }
}

/// One CUDA translation unit to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileRequest {
    /// The CUDA C++ source text.
    pub source: String,
    /// The name NVRTC reports in diagnostics and writes into `.file` directives.
    pub file_name: String,
    /// `-D NAME` (`None`) or `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I` directories, searched in order, before the CCCL headers.
    pub include_dirs: Vec<PathBuf>,
    /// A virtual architecture, `compute_75` or newer (`compute_90a` style suffixes allowed).
    pub arch: String,
    /// Further NVRTC options, passed verbatim after the defines and include directories
    /// (e.g. `-use_fast_math`, `--device-int128`, `--use-bundled-headers=DIR`; see
    /// [`expand_nvrtc_flags`](crate::expand_nvrtc_flags) for corpus headers). Part of the
    /// cache key as written: a relative path in here makes the key depend on the current
    /// directory, so prefer absolute paths.
    pub extra_options: Vec<String>,
    /// C++ names of kernels to instantiate and look up, as written in the source
    /// (`reduce<128, true>`, `ns::kernel`): NVRTC name expressions
    /// (`nvrtcAddNameExpression`); [`Compiled::lowered_names`] gives their PTX names.
    pub name_expressions: Vec<String>,
}

/// PTX comment lines recording NVRTC's lowered names, appended to the PTX (so cached and
/// recorded PTX keep them): `// fencehound-lowered-name: EXPR = MANGLED`.
pub const LOWERED_NAME_MARK: &str = "// fencehound-lowered-name: ";

/// The `(expression, PTX name)` pairs recorded in a PTX text by [`compile`].
pub fn lowered_names(ptx: &str) -> Vec<(String, String)> {
    ptx.lines()
        .filter_map(|l| l.strip_prefix(LOWERED_NAME_MARK))
        .filter_map(|l| l.rsplit_once(" = "))
        .map(|(e, m)| (e.to_string(), m.trim().to_string()))
        .collect()
}

impl CompileRequest {
    /// A request with no defines or include directories, for [`DEFAULT_ARCH`].
    pub fn new(source: impl Into<String>, file_name: impl Into<String>) -> Self {
        CompileRequest {
            source: source.into(),
            file_name: file_name.into(),
            defines: Vec::new(),
            include_dirs: Vec::new(),
            arch: DEFAULT_ARCH.to_string(),
            extra_options: Vec::new(),
            name_expressions: Vec::new(),
        }
    }
}

/// The result of a compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub ptx: String,
    /// NVRTC's log (warnings); empty when it had nothing to say.
    pub log: String,
    pub nvrtc_version: (i32, i32),
    /// True when the PTX came from the cache rather than from NVRTC.
    pub from_cache: bool,
    /// Each requested name expression and the PTX entry name it lowers to.
    pub lowered_names: Vec<(String, String)>,
}

/// Compiles with the default cache ([`PtxCache::from_env`]).
pub fn compile(req: &CompileRequest) -> Result<Compiled, ToolchainError> {
    compile_with_cache(req, PtxCache::from_env().as_ref())
}

/// Compiles, using `cache` when given. Always passes `-lineinfo`; adds the CCCL include
/// directory after the request's own include directories and extra options when it is
/// installed.
pub fn compile_with_cache(
    req: &CompileRequest,
    cache: Option<&PtxCache>,
) -> Result<Compiled, ToolchainError> {
    let arch_number = parse_compute_arch(&req.arch)?;
    let nv = nvrtc()?;
    if !nv.supported_archs.contains(&arch_number) {
        return Err(ToolchainError::UnsupportedArch {
            arch: req.arch.clone(),
            version: nv.version,
            supported: nv.supported_archs.clone(),
        });
    }
    let cccl = find_cccl_include();
    let options = nvrtc_options(req, cccl.as_ref().map(|c| c.path.as_path()))?;
    // Name expressions change the output (they instantiate templates): part of the key.
    let mut key_options = options.clone();
    key_options.extend(
        req.name_expressions
            .iter()
            .map(|e| format!("name-expression {e}")),
    );
    let key = PtxCache::key(&req.source, &req.file_name, &key_options, nv.version);
    if let Some(hit) = cache.and_then(|c| c.load(&key)) {
        return Ok(Compiled {
            lowered_names: lowered_names(&hit.ptx),
            ptx: hit.ptx,
            log: hit.log,
            nvrtc_version: nv.version,
            from_cache: true,
        });
    }
    let (mut ptx, log, lowered) =
        match run_nvrtc_named(&req.source, &req.file_name, &options, &req.name_expressions) {
            Ok(done) => done,
            Err(e) => match with_bundled_headers(&e, &options) {
                // The retry's result, or its error: it is the one that says what else
                // is wrong with the source.
                Some(retry) => {
                    run_nvrtc_named(&req.source, &req.file_name, &retry, &req.name_expressions)?
                }
                None => return Err(e),
            },
        };
    for (e, m) in &lowered {
        ptx.push_str(&format!("{LOWERED_NAME_MARK}{e} = {m}\n"));
    }
    if let Some(c) = cache {
        // A cache that cannot be written only costs time later.
        let _ = c.store(
            &key,
            &CacheEntry {
                ptx: ptx.clone(),
                log: log.clone(),
            },
        );
    }
    Ok(Compiled {
        ptx,
        log,
        nvrtc_version: nv.version,
        from_cache: false,
        lowered_names: lowered,
    })
}

/// The options again with `--use-bundled-headers=DIR` when NVRTC failed only because it
/// could not open a header that NVRTC itself bundles (`cuda_fp16.h`, `cuda_bf16.h`, …;
/// see [`crate::bundled_headers_dir`]) and the options did not ask for the bundled
/// headers already: a user's `#include <cuda_fp16.h>` compiles as it does with nvcc,
/// without knowing the option (corpus kernels say it in their `nvrtc-flags`). `None`
/// otherwise. The PTX is cached under the key of the options as given: with them alone
/// the compilation fails, so no other PTX can be stored under that key.
fn with_bundled_headers(err: &ToolchainError, options: &[String]) -> Option<Vec<String>> {
    let ToolchainError::Compile { log, .. } = err else {
        return None;
    };
    if options
        .iter()
        .any(|o| o.starts_with("--use-bundled-headers") || o.starts_with("-use-bundled-headers"))
    {
        return None;
    }
    let missing: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("cannot open source file \""))
        .filter_map(|(_, rest)| rest.split_once('"').map(|(name, _)| name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    // Extracted only now: a compilation that needs no bundled header never pays for it.
    let dir = crate::bundled_headers_dir().ok()?;
    if !missing
        .iter()
        .all(|n| dir.join(n).is_file() || dir.join("cccl").join(n).is_file())
    {
        return None;
    }
    let mut retry = options.to_vec();
    retry.push(format!("--use-bundled-headers={}", dir.to_str()?));
    Some(retry)
}

/// `compute_80` → 80. Suffixes (`compute_90a`, `compute_100f`) are kept by NVRTC and
/// checked against the base number.
fn parse_compute_arch(arch: &str) -> Result<i32, ToolchainError> {
    let bad = |reason: &str| ToolchainError::BadArch {
        arch: arch.to_string(),
        reason: reason.to_string(),
    };
    if let Some(n) = arch.strip_prefix("sm_") {
        return Err(bad(&format!(
            "NVRTC produces PTX for a virtual architecture; use compute_{n}"
        )));
    }
    let rest = arch
        .strip_prefix("compute_")
        .ok_or_else(|| bad("expected compute_NN, e.g. compute_80"))?;
    let digits = rest.trim_end_matches(['a', 'f']);
    if digits.is_empty() || rest.len() - digits.len() > 1 {
        return Err(bad("expected compute_NN, e.g. compute_80"));
    }
    digits
        .parse()
        .map_err(|_| bad("expected compute_NN, e.g. compute_80"))
}

/// The exact option list handed to NVRTC (and hashed into the cache key): architecture,
/// `-lineinfo`, defines, the request's include directories, its extra options, then CCCL.
fn nvrtc_options(req: &CompileRequest, cccl: Option<&Path>) -> Result<Vec<String>, ToolchainError> {
    let mut options = vec![
        format!("--gpu-architecture={}", req.arch),
        "-lineinfo".into(),
    ];
    for (name, value) in &req.defines {
        if name.is_empty() || name.contains(['=', ' ', '\t', '\n']) {
            return Err(ToolchainError::InvalidInput {
                what: format!("define `{name}`"),
                reason: "is not a macro name",
            });
        }
        options.push(match value {
            None => format!("-D{name}"),
            Some(v) => format!("-D{name}={v}"),
        });
    }
    let include = |dir: &Path| {
        // Absolute, so that the cache key does not depend on the current directory.
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        abs.to_str()
            .map(|text| format!("-I{text}"))
            .ok_or_else(|| ToolchainError::InvalidInput {
                what: format!("include directory {}", dir.display()),
                reason: "is not valid UTF-8",
            })
    };
    for dir in &req.include_dirs {
        options.push(include(dir)?);
    }
    for extra in &req.extra_options {
        if extra.is_empty() {
            return Err(ToolchainError::InvalidInput {
                what: "an extra NVRTC option".into(),
                reason: "is empty",
            });
        }
        options.push(extra.clone());
    }
    if let Some(dir) = cccl {
        options.push(include(dir)?);
    }
    if let Some(o) = options.iter().find(|o| o.contains('\0')) {
        return Err(ToolchainError::InvalidInput {
            what: format!("option `{}`", o.replace('\0', "\\0")),
            reason: "contains a NUL byte",
        });
    }
    Ok(options)
}

/// Destroys the NVRTC program on every exit path.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { nvrtc_result::destroy_program(self.0) };
    }
}

/// Runs NVRTC once, without the cache. `nvrtc()` must have succeeded before.
pub(crate) fn run_nvrtc(
    source: &str,
    file_name: &str,
    options: &[String],
) -> Result<(String, String), ToolchainError> {
    run_nvrtc_named(source, file_name, options, &[]).map(|(p, l, _)| (p, l))
}

/// `(name expression, lowered PTX name)` pairs.
type LoweredNames = Vec<(String, String)>;

/// [`run_nvrtc`] with name expressions; also returns their lowered names.
fn run_nvrtc_named(
    source: &str,
    file_name: &str,
    options: &[String],
    name_expressions: &[String],
) -> Result<(String, String, LoweredNames), ToolchainError> {
    let nul = |what: &str| ToolchainError::InvalidInput {
        what: what.to_string(),
        reason: "contains a NUL byte",
    };
    let source = CString::new(source).map_err(|_| nul("the source"))?;
    let name = CString::new(file_name).map_err(|_| nul("the file name"))?;
    let program = Program(
        nvrtc_result::create_program(&source, Some(&name))
            .map_err(|e| nvrtc_error("nvrtcCreateProgram", e, String::new()))?,
    );
    let exprs: Vec<CString> = name_expressions
        .iter()
        .map(|e| CString::new(e.as_str()).map_err(|_| nul("a kernel name")))
        .collect::<Result<_, _>>()?;
    for e in &exprs {
        // SAFETY: a live program and a NUL-terminated expression.
        let r = unsafe { nvrtc_sys::nvrtcAddNameExpression(program.0, e.as_ptr()) };
        if r != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_error(
                "nvrtcAddNameExpression",
                cudarc::nvrtc::result::NvrtcError(r),
                String::new(),
            ));
        }
    }
    // SAFETY: a live program; `options` were checked for NUL bytes (cudarc unwraps them).
    let compiled = unsafe { nvrtc_result::compile_program(program.0, options) };
    // SAFETY: a live program.
    let log = unsafe { nvrtc_result::get_program_log(program.0) }
        .map(|l| c_text(&l))
        .unwrap_or_default();
    match compiled {
        Ok(()) => {}
        Err(e) if e.0 == nvrtc_sys::nvrtcResult::NVRTC_ERROR_COMPILATION => {
            return Err(ToolchainError::Compile {
                file: file_name.to_string(),
                log,
            })
        }
        Err(e) => return Err(nvrtc_error("nvrtcCompileProgram", e, log)),
    }
    // SAFETY: a live, successfully compiled program.
    let ptx = unsafe { nvrtc_result::get_ptx(program.0) }
        .map_err(|e| nvrtc_error("nvrtcGetPTX", e, log.clone()))?;
    let mut lowered = Vec::new();
    for (text, e) in name_expressions.iter().zip(&exprs) {
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: a live, compiled program; the expression was added before compiling.
        let r = unsafe { nvrtc_sys::nvrtcGetLoweredName(program.0, e.as_ptr(), &mut out) };
        if r != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS || out.is_null() {
            return Err(ToolchainError::Compile {
                file: file_name.to_string(),
                log: format!("`{text}` names no kernel NVRTC could instantiate\n{log}"),
            });
        }
        // SAFETY: NVRTC returns a NUL-terminated string owned by the live program.
        let name = unsafe { std::ffi::CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        lowered.push((text.clone(), name));
    }
    Ok((c_text(&ptx), log, lowered))
}

/// NVRTC's NUL-terminated buffers as text.
fn c_text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().map(|&c| c as u8).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_parsing() {
        assert_eq!(parse_compute_arch("compute_80").unwrap(), 80);
        assert_eq!(parse_compute_arch("compute_90a").unwrap(), 90);
        assert_eq!(parse_compute_arch("compute_100f").unwrap(), 100);
        for bad in ["sm_80", "compute_", "compute_8x", "80", "compute_90aa", ""] {
            assert!(parse_compute_arch(bad).is_err(), "{bad}");
        }
        let msg = parse_compute_arch("sm_80").unwrap_err().to_string();
        assert!(msg.contains("compute_80"), "{msg}");
    }

    #[test]
    fn options_always_have_lineinfo_and_absolute_includes() {
        let mut req = CompileRequest::new("", "k.cu");
        req.defines = vec![("A".into(), None), ("B".into(), Some("2".into()))];
        req.include_dirs = vec!["rel/inc".into()];
        let opts = nvrtc_options(&req, Some(Path::new("/cccl"))).unwrap();
        assert_eq!(opts[0], "--gpu-architecture=compute_80");
        assert!(opts.contains(&"-lineinfo".to_string()));
        assert!(opts.contains(&"-DA".to_string()));
        assert!(opts.contains(&"-DB=2".to_string()));
        let inc: Vec<_> = opts.iter().filter(|o| o.starts_with("-I")).collect();
        assert_eq!(inc.len(), 2);
        assert!(Path::new(&inc[0][2..]).is_absolute());
        assert_eq!(inc[1], "-I/cccl");

        req.extra_options = vec!["-use_fast_math".into()];
        let opts = nvrtc_options(&req, Some(Path::new("/cccl"))).unwrap();
        let at = |o: &str| opts.iter().position(|x| x == o).unwrap();
        assert!(at("-use_fast_math") > at("-DB=2"));
        assert!(at("-use_fast_math") < at("-I/cccl"));
        req.extra_options = vec!["".into()];
        assert!(nvrtc_options(&req, None).is_err());
        req.extra_options = vec!["-DX\0".into()];
        assert!(nvrtc_options(&req, None).is_err());
        req.extra_options.clear();

        req.defines = vec![("".into(), None)];
        assert!(nvrtc_options(&req, None).is_err());
        req.defines = vec![("X\0".into(), None)];
        assert!(nvrtc_options(&req, None).is_err());
    }
}
