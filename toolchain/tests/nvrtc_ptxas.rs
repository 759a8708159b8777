//! These tests run the real NVRTC and ptxas. They fail (never skip) when the tools are
//! missing: `scripts/test.sh` installs them first.

use fencehound_toolchain::{
    assemble, bundled_headers_dir, compile_with_cache, expand_nvrtc_flags, expand_placeholders,
    nvrtc, CompileRequest, PtxCache, PtxasError, ToolchainError,
};

const STORE_KERNEL: &str = r#"
extern "C" __global__ void publish(int *data, volatile int *flag, int value) {
    data[threadIdx.x] = value;
#ifdef WITH_FENCE
    __threadfence();
#endif
    if (threadIdx.x == 0) {
        *flag = 1;
    }
}
"#;

fn request(source: &str, arch: &str) -> CompileRequest {
    let mut req = CompileRequest::new(source, "publish.cu");
    req.arch = arch.to_string();
    req
}

fn fresh_cache() -> (tempfile::TempDir, PtxCache) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = PtxCache::at(dir.path().join("ptx"));
    (dir, cache)
}

#[test]
fn nvrtc_is_found_and_reports_its_version() {
    let nv = nvrtc().unwrap_or_else(|e| panic!("{e}"));
    assert!(nv.version.0 >= 12, "{:?}", nv.version);
    assert!(nv.builtins.is_file());
    assert!(nv.supported_archs.contains(&80), "{:?}", nv.supported_archs);
}

#[test]
fn compiles_for_several_archs_with_line_info() {
    for (arch, target) in [
        ("compute_75", "sm_75"),
        ("compute_80", "sm_80"),
        ("compute_90", "sm_90"),
    ] {
        let out = compile_with_cache(&request(STORE_KERNEL, arch), None)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        assert!(!out.from_cache);
        assert!(
            out.ptx.contains(&format!(".target {target}")),
            "{arch}: {}",
            out.ptx
        );
        assert!(out.ptx.contains(".visible .entry publish"), "{}", out.ptx);
        assert!(out.ptx.contains("\t.loc\t"), "no .loc lines for {arch}");
        assert!(out.ptx.contains("publish.cu"), "no .file for {arch}");
    }
}

#[test]
fn compute_70_is_rejected_clearly() {
    let version = nvrtc().unwrap_or_else(|e| panic!("{e}")).version;
    let result = compile_with_cache(&request(STORE_KERNEL, "compute_70"), None);
    if version.0 < 13 {
        // CUDA 12 and older still compile for Volta.
        assert!(result.is_ok(), "{result:?}");
        return;
    }
    let err = result.unwrap_err();
    assert!(
        matches!(err, ToolchainError::UnsupportedArch { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("compute_70") && msg.contains("compute_75"),
        "{msg}"
    );

    let err = compile_with_cache(&request(STORE_KERNEL, "sm_80"), None).unwrap_err();
    assert!(err.to_string().contains("use compute_80"), "{err}");
}

#[test]
fn syntax_error_returns_nvrtcs_log() {
    let src = "extern \"C\" __global__ void k(int *p) {\n    *p = 1\n}\n";
    let err = compile_with_cache(&request(src, "compute_80"), None).unwrap_err();
    match &err {
        ToolchainError::Compile { file, log } => {
            assert_eq!(file, "publish.cu");
            assert!(log.contains("publish.cu(3)"), "{log}");
            assert!(log.contains("expected a \";\""), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    assert!(err.to_string().contains("expected a \";\""));
}

#[test]
fn defines_reach_the_preprocessor() {
    let plain = compile_with_cache(&request(STORE_KERNEL, "compute_80"), None).unwrap();
    assert!(!plain.ptx.contains("membar.gl"), "{}", plain.ptx);

    let mut req = request(STORE_KERNEL, "compute_80");
    req.defines.push(("WITH_FENCE".into(), None));
    let fenced = compile_with_cache(&req, None).unwrap();
    assert!(fenced.ptx.contains("membar.gl"), "{}", fenced.ptx);

    let src = "#if VALUE != 7\n#error VALUE must be 7\n#endif\n\
               extern \"C\" __global__ void k(int *p) { *p = VALUE; }\n";
    let mut req = request(src, "compute_80");
    req.defines.push(("VALUE".into(), Some("7".into())));
    let out = compile_with_cache(&req, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.ptx.contains("7;"), "{}", out.ptx);
    req.defines[0].1 = Some("8".into());
    let err = compile_with_cache(&req, None).unwrap_err();
    assert!(err.to_string().contains("VALUE must be 7"), "{err}");
}

#[test]
fn second_compile_hits_the_cache() {
    let (_dir, cache) = fresh_cache();
    let req = request(STORE_KERNEL, "compute_80");
    let first = compile_with_cache(&req, Some(&cache)).unwrap();
    assert!(!first.from_cache);
    let second = compile_with_cache(&req, Some(&cache)).unwrap();
    assert!(second.from_cache);
    assert_eq!(first.ptx, second.ptx);
    assert_eq!(first.log, second.log);

    // Any change in what NVRTC sees is a miss.
    let mut other = req.clone();
    other.defines.push(("WITH_FENCE".into(), None));
    assert!(!compile_with_cache(&other, Some(&cache)).unwrap().from_cache);
    let mut other = req.clone();
    other.include_dirs.push(std::env::temp_dir());
    assert!(!compile_with_cache(&other, Some(&cache)).unwrap().from_cache);

    // A damaged entry is ignored and replaced.
    for entry in std::fs::read_dir(cache.dir()).unwrap() {
        std::fs::write(entry.unwrap().path(), "not a cache entry").unwrap();
    }
    let again = compile_with_cache(&req, Some(&cache)).unwrap();
    assert!(!again.from_cache);
    assert_eq!(again.ptx, first.ptx);
    assert!(compile_with_cache(&req, Some(&cache)).unwrap().from_cache);
}

#[test]
fn unwritable_cache_is_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    // The cache directory would have to be created below a regular file.
    let cache = PtxCache::at(blocker.join("ptx"));
    let out = compile_with_cache(&request(STORE_KERNEL, "compute_80"), Some(&cache)).unwrap();
    assert!(!out.from_cache);
}

#[test]
fn include_dirs_are_searched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("answer.h"), "#define ANSWER 42\n").unwrap();
    let src = "#include \"answer.h\"\nextern \"C\" __global__ void k(int *p) { *p = ANSWER; }\n";
    let mut req = request(src, "compute_80");
    let err = compile_with_cache(&req, None).unwrap_err();
    assert!(err.to_string().contains("answer.h"), "{err}");
    req.include_dirs.push(dir.path().to_path_buf());
    let out = compile_with_cache(&req, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.ptx.contains("42;"), "{}", out.ptx);
}

#[test]
fn cccl_atomic_ref_compiles() {
    let src = r#"
#include <cuda/atomic>
extern "C" __global__ void handoff(int *data, int *flag) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    if (threadIdx.x == 0) {
        data[0] = 42;
        f.store(1, cuda::std::memory_order_release);
    } else if (threadIdx.x == 32) {
        while (f.load(cuda::std::memory_order_acquire) == 0) {}
        data[1] = data[0];
    }
}
"#;
    let out =
        compile_with_cache(&request(src, "compute_80"), None).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.ptx.contains(".release.gpu"), "{}", out.ptx);
    assert!(out.ptx.contains(".acquire.gpu"), "{}", out.ptx);
}

#[test]
fn ptxas_accepts_nvrtc_output() {
    for (arch, sm) in [
        ("compute_75", "sm_75"),
        ("compute_80", "sm_80"),
        ("compute_90", "sm_90"),
    ] {
        let mut req = request(STORE_KERNEL, arch);
        req.defines.push(("WITH_FENCE".into(), None));
        let out = compile_with_cache(&req, None).unwrap();
        assemble(&out.ptx, sm).unwrap_or_else(|e| panic!("{sm}: {e}"));
    }
}

#[test]
fn ptxas_rejects_garbage_with_its_log() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
               .visible .entry k() {\n    frobnicate.u32 %r1;\n    ret;\n}\n";
    let err = assemble(ptx, "sm_80").unwrap_err();
    match &err {
        PtxasError::Rejected { arch, log } => {
            assert_eq!(arch, "sm_80");
            assert!(log.contains("ptxas"), "{log}");
            assert!(
                log.contains("frobnicate") || log.contains("line 5"),
                "{log}"
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert!(!err.log().is_empty());
    assert!(assemble("this is not ptx", "sm_80").is_err());
}

#[test]
fn extra_options_reach_nvrtc_and_the_cache_key() {
    let src =
        "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = sinf(p[threadIdx.x]); }\n";
    let precise = compile_with_cache(&request(src, "compute_80"), None).unwrap();
    assert!(!precise.ptx.contains("sin.approx"), "{}", precise.ptx);
    let mut fast = request(src, "compute_80");
    fast.extra_options.push("-use_fast_math".into());
    let out = compile_with_cache(&fast, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.ptx.contains("sin.approx"), "{}", out.ptx);

    let (_dir, cache) = fresh_cache();
    assert!(
        !compile_with_cache(&request(src, "compute_80"), Some(&cache))
            .unwrap()
            .from_cache
    );
    let first = compile_with_cache(&fast, Some(&cache)).unwrap();
    assert!(!first.from_cache, "extra options must be part of the key");
    assert!(first.ptx.contains("sin.approx"));
    assert!(compile_with_cache(&fast, Some(&cache)).unwrap().from_cache);

    // NVRTC's own complaint about an unknown option comes back as an error.
    let mut bad = request(src, "compute_80");
    bad.extra_options.push("--no-such-option".into());
    let err = compile_with_cache(&bad, None).unwrap_err();
    assert!(err.to_string().contains("no-such-option"), "{err}");
}

#[test]
fn bundled_headers_make_fp16_and_bf16_compile() {
    let src = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\
               extern \"C\" __global__ void k(__half *h, __nv_bfloat16 *b) {\n\
               h[0] = __hadd(h[0], h[1]); b[0] = __hmul(b[0], b[1]); }\n";
    // NVRTC 13 finds these headers only with `--use-bundled-headers`; a compilation that
    // failed for want of them alone is retried with it, so a user's kernel that includes
    // them compiles as it would with nvcc.
    let (_cache_dir, cache) = fresh_cache();
    let plain = compile_with_cache(&request(src, "compute_80"), Some(&cache))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(plain.ptx.contains(".entry k"), "{}", plain.ptx);
    assert!(
        compile_with_cache(&request(src, "compute_80"), Some(&cache))
            .unwrap()
            .from_cache
    );
    // A header NVRTC does not bundle is still an error that names it, alone or beside
    // one it does.
    for missing in [
        "#include <no_such_header.h>\n",
        "#include <cuda_fp16.h>\n#include \"no_such_header.h\"\n",
    ] {
        let err = compile_with_cache(
            &request(
                &format!("{missing}__global__ void k() {{}}\n"),
                "compute_80",
            ),
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("no_such_header.h"), "{err}");
    }
    // A genuine error after the retry is the retry's: it names the real problem.
    let typo = format!("{src}__global__ void bad() {{ undeclared_name = 1; }}\n");
    let err = compile_with_cache(&request(&typo, "compute_80"), None).unwrap_err();
    assert!(err.to_string().contains("undeclared_name"), "{err}");
    assert!(
        !err.to_string().contains("cannot open source file"),
        "{err}"
    );

    let dir = bundled_headers_dir().unwrap_or_else(|e| panic!("{e}"));
    assert!(dir.is_absolute(), "{}", dir.display());
    assert!(dir.join("cuda_fp16.h").is_file());
    assert!(dir.join("cccl/cuda/atomic").is_file());
    assert_eq!(
        bundled_headers_dir().unwrap(),
        dir,
        "stable within a process"
    );

    let expanded = expand_nvrtc_flags("--use-bundled-headers=$NVRTC_BUNDLED_HEADERS").unwrap();
    assert_eq!(
        expanded,
        [format!("--use-bundled-headers={}", dir.display())]
    );
    for arch in ["compute_75", "compute_80", "compute_90"] {
        let mut req = request(src, arch);
        req.extra_options = expanded.clone();
        let started = std::time::Instant::now();
        let out = compile_with_cache(&req, None).unwrap_or_else(|e| panic!("{arch}: {e}"));
        // Already extracted: NVRTC must not unpack 26 MB again.
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        assert!(out.ptx.contains(".entry k"), "{}", out.ptx);
    }
}

#[test]
fn corpus_flags_expand() {
    assert!(expand_nvrtc_flags("none").unwrap().is_empty());
    assert_eq!(
        expand_nvrtc_flags("-use_fast_math --device-int128").unwrap(),
        ["-use_fast_math", "--device-int128"]
    );
    let cccl = expand_nvrtc_flags("-I$CCCL_INCLUDE").unwrap();
    assert_eq!(cccl.len(), 1);
    let dir = std::path::Path::new(&cccl[0][2..]);
    assert!(
        dir.is_absolute() && dir.join("cuda/atomic").is_file(),
        "{cccl:?}"
    );
    assert!(expand_placeholders("-I$HOME").is_err());
    assert_eq!(expand_placeholders("-I/a b").unwrap(), "-I/a b");
}
