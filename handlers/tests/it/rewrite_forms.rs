//! Hand-written PTX forms NVRTC rarely emits, through the rewrite: `.reg` parameters,
//! generic and shared-variable addresses, 8- and 16-bit stores from wider registers,
//! vector loads with a sink element, guarded stores and exits, `red`, `.cta` atomics,
//! acquire fences (not instrumented), `membar.cta`, `bar.warp.sync`, `exit` in a
//! function. The rewritten module parses back, loads, assembles, and runs exactly like the
//! original under the native handlers; unsupported forms are clear errors.

use fencehound_handlers::rewrite::lockstep::{self, End, LaunchDesc, Plan};
use fencehound_handlers::rewrite::{self, Flavor, RewriteError, RewriteOptions};
use fencehound_handlers::{BufferConfig, DrainPolicy, Model};
use fencehound_vgpu::{Arg, Device, Dim3};

const FORMS: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.global .align 8 .u32 counter;

.func (.reg .b32 out) twice(.reg .b32 x, .reg .b64 p)
{
    .reg .b16 %h<2>;
    shl.b32 out, x, 1;
    cvt.u16.u32 %h0, x;
    st.u16 [p], %h0;
    ret;
}

.func quit(.reg .b32 x)
{
    .reg .pred %q;
    setp.eq.u32 %q, x, 77;
    @%q exit;
    ret;
}

.visible .entry forms(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b16 %rs<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<4>;
    .shared .align 8 .b8 sh[512];
    ld.param.u64 %rd1, [buf];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    // generic 64-bit and 8-bit stores from a 32-bit register
    st.u32 [%rd3], %r1;
    st.u8 [%rd3+4], %r1;
    // a .reg-parameter function storing through a generic pointer
    add.s64 %rd4, %rd3, 6;
    call.uni (%r2), twice, (%r1, %rd4);
    // shared memory through a variable name and a 32-bit register
    shl.b32 %r3, %r1, 3;
    mov.u32 %r4, sh;
    add.u32 %r5, %r4, %r3;
    st.shared.v2.u32 [%r5], {%r1, %r2};
    cvt.rn.f32.u32 %f1, %r1;
    st.shared.f32 [sh+256], %f1;
    bar.warp.sync -1;
    ld.shared.v2.u32 {%r6, _}, [%r5];
    // guarded store, reduction, .cta atomic on global memory, acquire fence (untouched)
    setp.lt.u32 %p1, %r1, 16;
    @%p1 st.global.u32 [%rd3+8], %r6;
    red.global.add.u32 [counter], 1;
    atom.global.cta.add.u32 %r7, [counter], 2;
    fence.acq_rel.cta;
    fence.acquire.gpu;
    membar.cta;
    ld.volatile.global.u32 %r8, [counter];
    st.global.u32 [%rd3+12], %r8;
    call.uni quit, (%r1);
    setp.ge.u32 %p2, %r1, 40;
    @%p2 exit;
    st.global.u32 [%rd3+12], %r7;
    ret;
}
"#;

fn run_both(m: &fencehound_ptx::Module, model: Model, p: f64, seed: u64) -> Vec<String> {
    let reference = rewrite::normalize_reference(m).unwrap();
    let rw = rewrite::rewrite(
        m,
        &RewriteOptions {
            flavor: Flavor::Lockstep,
            ..Default::default()
        },
    )
    .unwrap();
    let text = fencehound_ptx::print(&rw.module);
    let rw = fencehound_ptx::parse("rewritten", &text).unwrap();
    let mut da = Device::new();
    let ma = da.load_module(&reference).unwrap();
    let mut db = Device::new();
    let mb = db.load_module(&rw).unwrap();
    let pa = da.alloc(64 * 16).unwrap();
    let pb = db.alloc(64 * 16).unwrap();
    assert_eq!(pa, pb);
    let plan = Plan {
        launches: vec![LaunchDesc {
            kernel: "forms".into(),
            grid: Dim3::x(2),
            block: Dim3::x(32),
            dynamic_shared: 0,
            args: vec![Arg::Ptr(pa)],
        }],
        sched_seed: seed,
        fuel: 1_000_000,
        deadline: None,
    };
    let mut cfg = BufferConfig::new(model, p, seed);
    cfg.policy = DrainPolicy::Device {
        liveness_period: 16,
        overlay_capacity: 8,
    };
    let n = lockstep::run_native(&mut da, ma, &plan, cfg.clone()).unwrap();
    let r = lockstep::run_rewritten(&mut db, mb, &plan, &cfg).unwrap();
    let mut problems = Vec::new();
    if n.run.end != End::Completed || n.run.end != r.run.end {
        problems.push(format!("ends {:?} {:?}", n.run.end, r.run.end));
    }
    if let Some(d) = lockstep::compare_writes(&n.writes, &r.writes) {
        problems.push(format!(
            "write #{}: {:?} vs {:?}",
            d.index, d.native, d.rewritten
        ));
    }
    if n.run.stats != r.run.stats {
        problems.push(format!("stats {:?} vs {:?}", n.run.stats, r.run.stats));
    }
    if !r.run.violations.is_empty() {
        problems.push(format!("{:?}", r.run.violations));
    }
    let (mut a, mut b) = (vec![0u8; 1024], vec![0u8; 1024]);
    da.copy_from(pa, &mut a).unwrap();
    db.copy_from(pb, &mut b).unwrap();
    if a != b {
        problems.push("outputs differ".into());
    }
    problems
}

#[test]
fn hand_written_forms_rewrite_assemble_and_match_native() {
    let m = fencehound_ptx::parse("forms.ptx", FORMS).unwrap();
    let rw = rewrite::rewrite(&m, &RewriteOptions::default()).unwrap();
    let c = rw.counts;
    // 8 stores, 2 loads (a vector load is one instruction), 2 atomics; drain points:
    // bar.warp.sync, fence.acq_rel, membar.cta, two exits and the kernel's ret (the
    // acquire fence and the functions' rets are not).
    assert_eq!(
        (c.stores, c.loads, c.atomics, c.drains),
        (8, 2, 2, 6),
        "{c:?}"
    );
    let text = fencehound_ptx::print(&rw.module);
    let back = fencehound_ptx::parse("back", &text).unwrap();
    assert_eq!(back, rw.module, "print/parse round trip");
    Device::new().load_module(&back).unwrap();
    if let Err(e) = fencehound_toolchain::assemble(&text, "sm_90") {
        panic!("{e}");
    }
    let mut fails = Vec::new();
    for model in [Model::Bugaroo, Model::Scoped] {
        for (k, p) in [0.0, 0.5, 1.0].into_iter().enumerate() {
            for s in 0..3u64 {
                let seed = s * 3 + k as u64;
                for problem in run_both(&m, model, p, seed) {
                    fails.push(format!("{} p={p} seed={seed}: {problem}", model.name()));
                }
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn unsupported_forms_are_errors_naming_the_instruction() {
    let src = FORMS.replace(
        "st.global.u32 [%rd3+12], %r8;",
        "cp.async.ca.shared.global [sh], [%rd3], 4;",
    );
    let m = fencehound_ptx::parse("forms.ptx", &src).unwrap();
    match rewrite::rewrite(&m, &RewriteOptions::default()) {
        Err(RewriteError::Unsupported {
            function,
            text,
            why,
            ..
        }) => {
            assert_eq!(function, "forms");
            assert!(text.starts_with("cp.async"), "{text}");
            assert!(why.contains("asynchronous copies"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // A vector atomic touches several words; the runtime's atomic path drains one.
    let src = FORMS.replace(
        "st.global.u32 [%rd3+12], %r8;",
        "red.global.add.v2.f32 [%rd3], {%f1, %f2};",
    );
    let m = fencehound_ptx::parse("forms.ptx", &src).unwrap();
    match rewrite::rewrite(&m, &RewriteOptions::default()) {
        Err(RewriteError::Unsupported { why, .. }) => {
            assert!(why.contains("vector atomics"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // An mbarrier arrival is a release: passed through, it would leave buffered stores
    // behind it.
    let src = FORMS.replace(
        "st.global.u32 [%rd3+12], %r8;",
        "mbarrier.inval.shared.b64 [sh];",
    );
    let m = fencehound_ptx::parse("forms.ptx", &src).unwrap();
    match rewrite::rewrite(&m, &RewriteOptions::default()) {
        Err(RewriteError::Unsupported { text, why, .. }) => {
            assert!(text.starts_with("mbarrier.inval"), "{text}");
            assert!(why.contains("mbarrier"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // A wmma fragment load would miss the thread's buffered stores and a fragment store
    // bypass the buffer; `wmma.mma` (registers only) passes through.
    for (inst, refused) in [
        ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd3];", true),
        ("wmma.store.d.sync.aligned.row.m16n16k16.global.f16 [%rd3], {%r0, %r1, %r2, %r3};", true),
        ("wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, {%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, {%r0, %r1, %r2, %r3};", false),
    ] {
        let src = FORMS.replace("st.global.u32 [%rd3+12], %r8;", inst);
        let m = fencehound_ptx::parse("forms.ptx", &src).unwrap();
        match rewrite::rewrite(&m, &RewriteOptions::default()) {
            Err(RewriteError::Unsupported { text, why, .. }) if refused => {
                assert!(text.starts_with("wmma."), "{text}");
                assert!(why.contains("wmma loads and stores"), "{why}");
            }
            Ok(r) if !refused => assert!(fencehound_ptx::print(&r.module).contains("wmma.mma.sync")),
            other => panic!("{inst}: {other:?}"),
        }
    }
    let once = rewrite::rewrite(
        &fencehound_ptx::parse("f", FORMS).unwrap(),
        &RewriteOptions::default(),
    )
    .unwrap()
    .module;
    assert!(matches!(
        rewrite::rewrite(&once, &RewriteOptions::default()),
        Err(RewriteError::AlreadyInstrumented(_))
    ));
}
