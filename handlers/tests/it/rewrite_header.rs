//! A fast kernel of the device flavour sets its thread's header up itself at entry
//! (`emit::inline_begin`) instead of calling `__fencehound_begin`: every word the runtime
//! reads from the header must be what the runtime's own set-up writes. Checked on a
//! three-dimensional grid of three-dimensional CTAs (so every index term counts) and on a
//! one-dimensional launch (the set-up's shortcut), at p_w = 1 and 0.5, against
//! the lockstep flavour (which calls the runtime's set-up in each block) and against
//! values computed here from the layout and the selection function.
//!
//! And the header words a fast kernel keeps in registers reach the header before it calls
//! a module function (which goes through the runtime) and are read again after it.

use fencehound_handlers::rewrite::{self, layout, Flavor, RewriteOptions};
use fencehound_handlers::{select, BufferConfig, DrainPolicy, Model};
use fencehound_vgpu::{Arg, Device, Dim3};

const KERNEL: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    membar.gl;
    ret;
}
";

/// A three-dimensional launch (every index term counts) and a one-dimensional one (the
/// set-up's `%tid.x`/`%ctaid.x` path).
const SHAPES: [(Dim3, Dim3); 2] = [
    (Dim3 { x: 2, y: 3, z: 2 }, Dim3 { x: 4, y: 2, z: 3 }),
    (Dim3 { x: 5, y: 1, z: 1 }, Dim3 { x: 40, y: 1, z: 1 }),
];
const LAUNCHES: u32 = 2;

/// `text` rewritten in `flavor` and loaded, an output buffer of `out_bytes`, and the
/// buffers' area for `model` at `p_w` (liveness period `liveness`), its control block
/// known to the module.
fn loaded(
    text: &str,
    opts: RewriteOptions,
    model_p: (Model, f64),
    seed: u64,
    liveness: u32,
    sizes: layout::Sizes,
    out_bytes: u64,
) -> (
    Device,
    fencehound_vgpu::ModuleId,
    u64,
    BufferConfig,
    layout::Area,
) {
    let dev = Device::new();
    loaded_on(dev, text, opts, model_p, seed, liveness, sizes, out_bytes)
}

/// [`loaded`] on a device the caller set up (e.g. with quiet code).
#[allow(clippy::too_many_arguments)]
fn loaded_on(
    mut dev: Device,
    text: &str,
    opts: RewriteOptions,
    (model, p_w): (Model, f64),
    seed: u64,
    liveness: u32,
    sizes: layout::Sizes,
    out_bytes: u64,
) -> (
    Device,
    fencehound_vgpu::ModuleId,
    u64,
    BufferConfig,
    layout::Area,
) {
    let m = fencehound_ptx::parse("k", text).unwrap();
    let rw = rewrite::rewrite(&m, &opts).unwrap();
    let module = dev.load_module(&rw.module).unwrap();
    let out = dev.alloc_named(out_bytes, "out".to_string()).unwrap();
    let mut cfg = BufferConfig::new(model, p_w, seed);
    cfg.policy = DrainPolicy::Device {
        liveness_period: liveness,
        overlay_capacity: 64,
    };
    let area = layout::allocate(&mut dev, &cfg, sizes).unwrap();
    let (ctl, _) = dev.global_by_name(module, rewrite::CTL).unwrap();
    dev.copy_to(ctl, &area.ctl.to_le_bytes()).unwrap();
    (dev, module, out, cfg, area)
}

/// Every thread's header after `LAUNCHES` launches, the statistics, and the area.
fn run(
    flavor: Flavor,
    (grid, block): (Dim3, Dim3),
    p_w: f64,
    seed: u64,
) -> (Vec<Vec<u8>>, fencehound_handlers::BufferStats, layout::Area) {
    let threads = grid.x * grid.y * grid.z * block.x * block.y * block.z;
    let sizes = layout::Sizes {
        threads,
        ctas: grid.x * grid.y * grid.z,
    };
    let (mut dev, module, out, cfg, area) = loaded(
        KERNEL,
        with(flavor),
        (Model::Scoped, p_w),
        seed,
        7,
        sizes,
        4 * 64,
    );
    for _ in 0..LAUNCHES {
        let index = dev.launch_count();
        let shape = layout::LaunchShape::of(grid, block);
        layout::begin_launch(&mut dev, &cfg, &area, index, shape, true).unwrap();
        let r = dev
            .launch(module, "k", grid, block, 0, &[Arg::Ptr(out)])
            .unwrap();
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    }
    let stride = layout::thread_bytes(area.capacity);
    let headers = (0..threads as u64)
        .map(|t| {
            let mut h = vec![0u8; layout::THREAD_HEADER as usize];
            dev.copy_from(area.threads + t * stride, &mut h).unwrap();
            h
        })
        .collect();
    let stats = layout::read_stats(&dev, &area).unwrap();
    (headers, stats, area)
}

/// Kernel `k` launched once as one CTA of `threads` (launch 0, its control block written
/// first), run to completion; the first `out_bytes` of `out` after it.
fn one_cta(
    dev: &mut Device,
    module: fencehound_vgpu::ModuleId,
    out: u64,
    cfg: &BufferConfig,
    area: &layout::Area,
    threads: u32,
    out_bytes: u32,
) -> Vec<u8> {
    let one = Dim3 { x: 1, y: 1, z: 1 };
    let block = Dim3 {
        x: threads,
        y: 1,
        z: 1,
    };
    let shape = layout::LaunchShape::of(one, block);
    layout::begin_launch(dev, cfg, area, 0, shape, true).unwrap();
    let r = dev
        .launch(module, "k", one, block, 0, &[Arg::Ptr(out)])
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut words = vec![0u8; out_bytes as usize];
    dev.copy_from(out, &mut words).unwrap();
    words
}

fn with(flavor: Flavor) -> RewriteOptions {
    RewriteOptions {
        flavor,
        ..Default::default()
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn the_inlined_header_set_up_writes_what_the_runtime_writes() {
    // p_w = 1: the set-up skips the selection hash (every store is selected); p_w = 0.5:
    // it mixes the thread's prefix, and which threads buffer (the header's `buffered`,
    // compared per thread below) is the selection function's choice in both flavours.
    for shape in SHAPES {
        for p_w in [1.0, 0.5] {
            same_header_set_up(shape, p_w);
        }
    }
}

fn same_header_set_up(shape: (Dim3, Dim3), p_w: f64) {
    let seed = 11;
    let (inline, inline_stats, area) = run(Flavor::Device, shape, p_w, seed);
    let (called, called_stats, _) = run(Flavor::Lockstep, shape, p_w, seed);
    assert_eq!(inline_stats, called_stats);
    // Every thread stored once per launch: at p_w = 1 all of them buffered, at 0.5 some.
    let threads = inline.len() as u64;
    let buffered = inline_stats.global.stores_buffered;
    if p_w == 1.0 {
        assert_eq!(buffered, threads * LAUNCHES as u64);
    } else {
        assert!(
            buffered > 0 && buffered < threads * LAUNCHES as u64,
            "{buffered} of {} stores buffered at p_w = {p_w}",
            threads * LAUNCHES as u64
        );
    }
    let tpc = (shape.1.x * shape.1.y * shape.1.z) as u64;
    let last = LAUNCHES - 1;
    for (g, (a, b)) in inline.iter().zip(&called).enumerate() {
        // The words the runtime reads: tag, lives, cta, atom_pending, total; and
        // the statistics (seen, buffered, peak; pushed, which only inlined code keeps).
        for (what, at, len) in [
            ("tag", 0, 4),
            ("seen", 64, 16),
            ("buffered", 80, 16),
            ("pushed", 160, 16),
            ("peak", 112, 4),
            ("lives", 152, 4),
            ("cta", 128, 8),
            ("atom_pending", 148, 4),
            ("total", 144, 4),
        ] {
            assert_eq!(
                a[at..at + len],
                b[at..at + len],
                "thread {g}: `{what}` differs"
            );
        }
        assert_eq!(u32_at(a, 0), last + 1, "thread {g}: tag");
        // The selection hash's per-thread part, mixed, where stores hash (at p_w = 1 the
        // inlined set-up skips it: nothing reads it).
        let key = select::launch_key(seed, last);
        let mixed = select::mix(key ^ g as u64);
        assert_eq!(u64_at(b, 136), mixed, "thread {g}: mixed (runtime)");
        if p_w < 1.0 {
            assert_eq!(u64_at(a, 136), mixed, "thread {g}: mixed (inlined)");
        }
        let cta = g as u64 / tpc;
        assert_eq!(
            u64_at(a, 128),
            area.overlays + cta * layout::overlay_bytes(area.overlay_capacity),
            "thread {g}: cta"
        );
        assert_eq!(u32_at(a, 144) as u64, threads, "thread {g}: total");
    }
}

/// A kernel that calls a module function which loads what the kernel buffered and
/// buffers a store of its own, read back by the kernel after the call.
const CALLS: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .func (.param .b32 r) peek(.param .b64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ld.global.u32 %r1, [%rd1];
    add.u32 %r2, %r1, 1;
    st.global.u32 [%rd1+4], %r2;
    st.param.b32 [r], %r1;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    add.u32 %r2, %r1, 100;
    st.global.u32 [%rd3], %r2;
    {
        .param .b64 a;
        st.param.b64 [a], %rd3;
        .param .b32 v;
        call.uni (v), peek, (a);
        ld.param.b32 %r3, [v];
    }
    ld.global.u32 %r4, [%rd3+4];
    st.global.u32 [%rd3+8], %r3;
    st.global.u32 [%rd3+12], %r4;
    membar.gl;
    ret;
}
";

/// A fast kernel writes its cached header words back before it calls a module function
/// (whose accesses go through the runtime, which reads the header) and reads them again
/// after it: the callee forwards the kernel's buffered store, the kernel the callee's.
/// Every store is buffered (`p_w = 1`); the expected words are the program's.
#[test]
fn a_module_function_sees_the_kernels_buffered_stores_and_the_kernel_its() {
    for flavor in [Flavor::Device, Flavor::Lockstep] {
        let threads = 32u32;
        let sizes = layout::Sizes { threads, ctas: 1 };
        let (mut dev, module, out, cfg, area) = loaded(
            CALLS,
            with(flavor),
            (Model::Bugaroo, 1.0),
            3,
            1000,
            sizes,
            16 * threads as u64,
        );
        let words = one_cta(&mut dev, module, out, &cfg, &area, threads, 16 * threads);
        for t in 0..threads {
            let got: Vec<u32> = (0..4)
                .map(|k| u32_at(&words, (16 * t + 4 * k) as usize))
                .collect();
            assert_eq!(
                got,
                vec![100 + t, 101 + t, 100 + t, 101 + t],
                "{flavor:?}: thread {t}"
            );
        }
        let stats = layout::read_stats(&dev, &area).unwrap();
        assert_eq!(stats.global.stores_seen, 4 * threads as u64, "{flavor:?}");
        assert_eq!(
            stats.global.stores_buffered,
            4 * threads as u64,
            "{flavor:?}"
        );
        assert!(
            stats.forwarded_loads >= 2 * threads as u64,
            "{flavor:?}: {stats:?}"
        );
    }
}

/// Thread 0 buffers a store to `x` and publishes it to its CTA (`membar.cta`: under
/// `scoped`, to the CTA's overlay, not to memory); after a barrier thread 32 (another
/// warp) buffers a store of its own — so it holds an entry — and loads `x`: it must read
/// the overlay's 1, not memory's 0, whether the module is for `scoped` alone (the load's
/// overlay test joined with its entries test) or for both models.
const OVERLAY: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra $L_wait;
    mov.u32 %r2, 1;
    st.global.u32 [%rd1], %r2;
    membar.cta;
$L_wait:
    bar.sync 0;
    setp.eq.u32 %p2, %r1, 32;
    @!%p2 bra $L_end;
    mov.u32 %r2, 2;
    st.global.u32 [%rd1+64], %r2;
    ld.global.u32 %r3, [%rd1];
    st.global.u32 [%rd1+128], %r3;
$L_end:
    ret;
}
";

#[test]
fn a_load_of_a_thread_holding_entries_reads_its_ctas_overlay() {
    for model in [None, Some(Model::Scoped)] {
        let threads = 64u32;
        let sizes = layout::Sizes { threads, ctas: 1 };
        let opts = RewriteOptions {
            model,
            ..with(Flavor::Device)
        };
        let (mut dev, module, out, cfg, area) =
            loaded(OVERLAY, opts, (Model::Scoped, 1.0), 5, 1000, sizes, 256);
        let words = one_cta(&mut dev, module, out, &cfg, &area, threads, 256);
        let got = [u32_at(&words, 0), u32_at(&words, 64), u32_at(&words, 128)];
        assert_eq!(got, [1, 2, 1], "{model:?}: x, y, what thread 32 read of x");
        let stats = layout::read_stats(&dev, &area).unwrap();
        assert!(stats.overlay_loads >= 1, "{model:?}: {stats:?}");
    }
}

/// `if (threadIdx.x != 0) return;` then thread 0 stores: the full body sets a thread's
/// header up after that branch (`emit::setup_point`), so threads 1-63 exit without one.
/// Run so that warp 0 ends before warp 1 starts, thread 63 — which never set up — is the
/// launch's last thread to exit and drains the CTA's orphan queue, where thread 0's
/// buffered store went at its exit: it must reach memory.
const EARLY_RETURN: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra $L_out;
    mov.u32 %r2, 7;
    st.global.u32 [%rd1], %r2;
$L_out:
    ret;
}
";

#[test]
fn a_thread_that_returns_before_the_set_up_can_drain_the_launch_as_its_last() {
    let m = fencehound_ptx::parse("k", EARLY_RETURN).unwrap();
    let rw = rewrite::rewrite(&m, &with(Flavor::Device)).unwrap();
    let text = fencehound_ptx::print(&rw.module);
    assert!(
        text.contains("$__fh_setup:"),
        "the set-up is not late:\n{text}"
    );
    for model in [Model::Bugaroo, Model::Scoped] {
        let threads = 64u32;
        let sizes = layout::Sizes { threads, ctas: 1 };
        let (mut dev, module, out, cfg, area) = loaded(
            EARLY_RETURN,
            with(Flavor::Device),
            (model, 1.0),
            5,
            1000,
            sizes,
            4,
        );
        // Warp 0 to its end before warp 1 runs (a long round-robin quantum): thread 0
        // exits holding its entry, and the last thread to exit is lane 63, which
        // returned at once.
        let (one, block) = (Dim3::x(1), Dim3::x(threads));
        let shape = layout::LaunchShape::of(one, block);
        layout::begin_launch(&mut dev, &cfg, &area, 0, shape, true).unwrap();
        let r = dev
            .launch_with(
                module,
                "k",
                one,
                block,
                0,
                &[Arg::Ptr(out)],
                Default::default(),
                &mut fencehound_vgpu::NoHooks,
                &mut fencehound_vgpu::RoundRobin::new(1_000_000),
            )
            .unwrap();
        assert!(r.outcome.is_completed(), "{:?}", r.outcome);
        let mut words = vec![0u8; 4];
        dev.copy_from(out, &mut words).unwrap();
        assert_eq!(
            u32_at(&words, 0),
            7,
            "{model:?}: the buffered store was lost"
        );
        assert_eq!(layout::buffered(&dev, &area).unwrap(), 0, "{model:?}");
        let stats = layout::read_stats(&dev, &area).unwrap();
        assert_eq!(stats.global.stores_buffered, 1, "{model:?}: {stats:?}");
        // The last thread looked its header up itself: it is this launch's.
        let stride = layout::thread_bytes(area.capacity);
        let tags: Vec<u32> = (0..threads as u64)
            .map(|t| {
                let mut h = vec![0u8; 4];
                dev.copy_from(area.threads + t * stride, &mut h).unwrap();
                u32_at(&h, 0)
            })
            .collect();
        assert_eq!(tags[63], 1, "{model:?}: thread 63's tag {tags:?}");
        // Thread 0 set up at the set-up point; 1-62 never did (fresh headers).
        assert_eq!(tags[0], 1, "{model:?}: {tags:?}");
        assert!(tags[1..63].iter().all(|&t| t == 0), "{model:?}: {tags:?}");
    }
}

/// Every thread stores index + 1 and index + 1001 to its two words and exits holding
/// both entries (p_w = 1): a full warp that arrives at its exit together leaves them in its
/// CTA's orphan queue at once (`fh_orphan_warp`, each lane at its prefix-sum place), a
/// partial warp lane by lane; either way every word must reach memory at the end. (No
/// branch before the exit: lanes that diverged on the vgpu may reach it apart, and then
/// take the lane-by-lane path.)
const EXIT_HOLDING: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    add.u32 %r2, %r1, 1;
    st.global.u32 [%rd3], %r2;
    add.u32 %r4, %r1, 1001;
    st.global.u32 [%rd3+4], %r4;
    ret;
}
";

#[test]
fn a_warp_exiting_with_entries_orphans_them_all_at_their_places() {
    let mut lanes_spent = Vec::new();
    for threads in [32u32, 31] {
        for model in [Model::Bugaroo, Model::Scoped] {
            // As `fuzz --instrumented` runs it: the runtime and the generated code quiet
            // (no preemption point inside), so the warp arrives at its exit together.
            let mut quiet = Device::new();
            quiet.set_quiet(Some(fencehound_vgpu::Quiet {
                functions: rewrite::runtime_functions().unwrap(),
                generated: true,
            }));
            let sizes = layout::Sizes { threads, ctas: 1 };
            let (mut dev, module, out, cfg, area) = loaded_on(
                quiet,
                EXIT_HOLDING,
                with(Flavor::Device),
                (model, 1.0),
                9,
                1000,
                sizes,
                8 * threads as u64,
            );
            let (one, block) = (Dim3::x(1), Dim3::x(threads));
            let shape = layout::LaunchShape::of(one, block);
            layout::begin_launch(&mut dev, &cfg, &area, 0, shape, true).unwrap();
            let r = dev
                .launch(module, "k", one, block, 0, &[Arg::Ptr(out)])
                .unwrap();
            assert!(r.outcome.is_completed(), "{:?}", r.outcome);
            let mut words = vec![0u8; 8 * threads as usize];
            dev.copy_from(out, &mut words).unwrap();
            for t in 0..threads {
                let want = [t + 1, t + 1001];
                let got = [
                    u32_at(&words, 8 * t as usize),
                    u32_at(&words, 8 * t as usize + 4),
                ];
                assert_eq!(got, want, "{threads} threads, {model:?}: thread {t}");
            }
            assert_eq!(layout::buffered(&dev, &area).unwrap(), 0);
            let stats = layout::read_stats(&dev, &area).unwrap();
            let stores = 2 * threads as u64;
            assert_eq!(stats.global.stores_buffered, stores, "{stats:?}");
            if model == Model::Bugaroo {
                lanes_spent.push(r.stats.lane_instructions);
            }
        }
    }
    // The full warp took the CTA's lock once; 31 threads took it one by one, each
    // spinning while the lanes before it appended: the one more thread costs less.
    assert!(
        lanes_spent[0] < lanes_spent[1],
        "32 threads {} vs 31 threads {} lane instructions",
        lanes_spent[0],
        lanes_spent[1]
    );
}
