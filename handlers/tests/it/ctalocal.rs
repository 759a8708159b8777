//! CTA-local scheduling under the write buffers (`Hooks::cta_steps_local` of
//! `StoreBuffers`; the vgpu's `exec/ctalocal.rs`): a CTA's picks stay among its own warps
//! only while no thread of it holds a buffered *global* store, because its next barrier
//! would make that store visible — a step another CTA's loads do not commute with. These
//! tests compare outcome sets with the reduction and without, under `bugaroo` and
//! `scoped`, on a kernel whose outcomes hang on exactly that.

use fencehound_handlers::{BufferConfig, Model, WriteBuffers};
use fencehound_vgpu::*;
use std::collections::BTreeSet;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Two CTAs of 64 threads. CTA 0: thread 0 stores 1 to `x`; thread 32 (the other warp)
/// stores 1 to `y`, then adds 1 to `z` with an atomic (which reaches memory at once: `z =
/// 1` tells that `y`'s store has been made); each warp adds its lanes to the shared word
/// `s` with a plain load and store; `bar.sync 0`, each thread's arrival draining its
/// buffer; then thread 0 writes `s` to `out[3]`. CTA 1: thread 0 reads `z`, `x`, `y` into
/// `out[0..3]`. `z = 1, x = 1, y = 0` needs CTA 1's loads after the atomic and between the
/// two warps' arrivals: lost if CTA 0's barrier ran as a CTA-local step while the store to
/// `y` waited in a buffer (the arrival of warp 1 would follow warp 0's, or the atomic,
/// within one CTA-local run).
const KERNEL: &str = r#"
.visible .entry k(.param .u64 x, .param .u64 y, .param .u64 z, .param .u64 out)
{
    .shared .align 4 .b8 s[4];
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u64 %rd4, [z];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra READER;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra NOT0;
    st.global.u32 [%rd1], 1;
NOT0:
    setp.ne.u32 %p2, %r1, 32;
    @%p2 bra NOT32;
    st.global.u32 [%rd2], 1;
    atom.global.add.u32 %r7, [%rd4], 1;
NOT32:
    ld.shared.u32 %r3, [s];
    add.u32 %r3, %r3, 1;
    st.shared.u32 [s], %r3;
    bar.sync 0;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra DONE;
    ld.shared.u32 %r4, [s];
    st.global.u32 [%rd3+12], %r4;
    bra.uni DONE;
READER:
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra DONE;
    ld.volatile.global.u32 %r8, [%rd4];
    ld.volatile.global.u32 %r5, [%rd1];
    ld.volatile.global.u32 %r6, [%rd2];
    st.global.u32 [%rd3], %r8;
    st.global.u32 [%rd3+4], %r5;
    st.global.u32 [%rd3+8], %r6;
DONE:
    ret;
}
"#;

/// What a run ended with: `z`, `x`, `y` as CTA 1 read them, and CTA 0's shared count.
type Outcome = (u32, u32, u32, u32);

/// Loads the kernel and allocates `x`, `y`, `z` and `out` (zeroed).
fn setup() -> (Device, ModuleId, [Arg; 4], u64) {
    let module = fencehound_ptx::parse("k", &format!("{HEADER}{KERNEL}")).unwrap();
    let mut dev = Device::new();
    let m = dev.load_module(&module).unwrap();
    let mut ptrs = [0u8; 4].map(|_| dev.alloc(16).unwrap());
    for p in &mut ptrs {
        dev.copy_to(*p, &[0; 16]).unwrap();
    }
    let args = ptrs.map(Arg::Ptr);
    (dev, m, args, ptrs[3])
}

/// One launch: its outcome and the picks made among one CTA's warps.
fn launch(model: Model, p: f64, seed: u64, cta_local: bool) -> (Outcome, u64) {
    let (mut dev, m, args, out) = setup();
    let mut hooks = WriteBuffers::new(BufferConfig::new(model, p, seed));
    let r = dev
        .launch_with(
            m,
            "k",
            Dim3::x(2),
            Dim3::x(64),
            0,
            &args,
            LaunchOptions {
                cta_local,
                ..Default::default()
            },
            &mut hooks,
            &mut RandomScheduler::new(seed),
        )
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    let mut b = [0u8; 16];
    dev.copy_from(out, &mut b).unwrap();
    let w = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    ((w(0), w(1), w(2), w(3)), r.stats.cta_local_picks)
}

fn outcomes(model: Model, p: f64, cta_local: bool) -> (BTreeSet<Outcome>, u64) {
    let (mut set, mut local) = (BTreeSet::new(), 0);
    for seed in 0..600 {
        let (o, l) = launch(model, p, seed, cta_local);
        set.insert(o);
        local += l;
    }
    (set, local)
}

#[test]
fn models_keep_their_outcome_sets_under_cta_local_picks() {
    for model in [Model::Bugaroo, Model::Scoped, Model::Weak] {
        for p in [0.5, 1.0] {
            let (off, local_off) = outcomes(model, p, false);
            let (on, local_on) = outcomes(model, p, true);
            let name = model.name();
            assert_eq!(local_off, 0);
            assert!(local_on > 0, "{name} p {p}: no pick among one CTA's warps");
            // What CTA 1 read, and CTA 0's count (compared apart: their product has
            // combinations too rare for these runs either way).
            let reads = |s: &BTreeSet<Outcome>| -> BTreeSet<(u32, u32, u32)> {
                s.iter().map(|o| (o.0, o.1, o.2)).collect()
            };
            let counts =
                |s: &BTreeSet<Outcome>| -> BTreeSet<u32> { s.iter().map(|o| o.3).collect() };
            assert_eq!(reads(&on), reads(&off), "{name} p {p}");
            if model == Model::Bugaroo {
                // The loads fell after the atomic and between the warps' arrivals.
                assert!(reads(&off).contains(&(1, 1, 0)), "{name} p {p}: {off:?}");
            }
            // The shared lost update: 64 increments by plain loads and stores, each
            // warp's lanes in one instruction, and with buffered shared stores draining
            // at the arrivals: 1 to 4 survive, with the reduction as without.
            // (`weak` at p = 1: every load reads the oldest store it may, 0: 1 only.)
            let want: BTreeSet<u32> = if model == Model::Weak && p == 1.0 {
                [1].into()
            } else {
                (1..=4).collect()
            };
            assert_eq!(counts(&off), want, "{name} p {p}");
            assert_eq!(counts(&on), counts(&off), "{name} p {p}");
        }
    }
}

/// A model's hooks that, after every store and every barrier arrival, ask
/// `cta_steps_local` of CTAs 0 and 1 (`tpb` threads each): (the storing thread, or
/// `u32::MAX` for an arrival; CTA 0's answer; CTA 1's).
struct Asking {
    inner: WriteBuffers,
    tpb: u32,
    answers: Vec<(u32, bool, bool)>,
}

impl Asking {
    fn new(cfg: BufferConfig, tpb: u32) -> Self {
        Asking {
            inner: WriteBuffers::new(cfg),
            tpb,
            answers: Vec::new(),
        }
    }

    fn ask(&mut self, who: u32) {
        let t = self.tpb;
        let a = (
            who,
            self.inner.cta_steps_local(0, 0, t),
            self.inner.cta_steps_local(1, t, t),
        );
        self.answers.push(a);
    }
}

impl Hooks for Asking {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.inner.launch_begin(info)
    }
    fn load(&mut self, mem: &mut Memory, a: &Access, buf: &mut [u8]) -> Result<(), MemError> {
        self.inner.load(mem, a, buf)
    }
    fn store(&mut self, mem: &mut Memory, a: &Access, data: &[u8]) -> Result<(), MemError> {
        self.inner.store(mem, a, data)?;
        self.ask(a.thread.global);
        Ok(())
    }
    fn atomic(
        &mut self,
        mem: &mut Memory,
        a: &Access,
        rmw: fencehound_vgpu::hooks::RmwFn<'_>,
    ) -> Result<u64, MemError> {
        self.inner.atomic(mem, a, rmw)
    }
    fn fence(&mut self, mem: &mut Memory, f: &Fence) {
        self.inner.fence(mem, f)
    }
    fn barrier_arrive(&mut self, mem: &mut Memory, b: &Barrier) {
        self.inner.barrier_arrive(mem, b);
        self.ask(u32::MAX);
    }
    fn barrier_release(&mut self, mem: &mut Memory, b: &Barrier, threads: &[ThreadRef]) {
        self.inner.barrier_release(mem, b, threads)
    }
    fn thread_exit(&mut self, mem: &mut Memory, t: ThreadRef) {
        self.inner.thread_exit(mem, t)
    }
    fn cta_exit(&mut self, mem: &mut Memory, cta: u32) {
        self.inner.cta_exit(mem, cta)
    }
    fn stalled(&mut self, mem: &mut Memory) -> bool {
        self.inner.stalled(mem)
    }
    fn launch_end(&mut self, mem: &mut Memory) {
        self.inner.launch_end(mem)
    }
}

/// The answer itself: false while a thread of the CTA holds a buffered global store (until
/// a barrier or fence drains it), true for other CTAs and once drained.
#[test]
fn a_buffered_global_store_keeps_its_cta_from_local_picks() {
    for model in [Model::Bugaroo, Model::Scoped] {
        let (mut dev, m, args, _) = setup();
        let mut h = Asking::new(BufferConfig::new(model, 1.0, 3), 64);
        dev.launch_with(
            m,
            "k",
            Dim3::x(2),
            Dim3::x(64),
            0,
            &args,
            LaunchOptions::default(),
            &mut h,
            &mut RoundRobin::new(1),
        )
        .unwrap();
        let name = model.name();
        // Thread 0's store to `x` is buffered (p_w = 1): CTA 0 holds a global store, CTA 1
        // nothing.
        let first = h
            .answers
            .iter()
            .find(|a| a.0 == 0)
            .expect("thread 0 stored");
        assert_eq!((first.1, first.2), (false, true), "{name}");
        // Thread 32's store to `y`: CTA 0 holds a global store.
        let y_store = h
            .answers
            .iter()
            .find(|a| a.0 == 32)
            .expect("thread 32 stored");
        assert!(!y_store.1, "{name}");
        // Shared stores (buffered too) do not count: once the barrier arrivals drained
        // `x` and `y` to memory (`bugaroo`), CTA 0 is local again. Under `scoped` they
        // wait in CTA 0's overlay, which a shared store releasing at `.gpu` scope — a
        // CTA-local step — would publish: not local while it holds them.
        let arrivals: Vec<_> = h.answers.iter().filter(|a| a.0 == u32::MAX).collect();
        assert_eq!(arrivals.len(), 64, "{name}");
        assert_eq!(
            arrivals.last().unwrap().1,
            model == Model::Bugaroo,
            "{name}: {arrivals:?}"
        );
        // CTA 1's reader stores its results to global memory: buffered, so at the end
        // of the run CTA 1 is no longer local.
        let last = h
            .answers
            .iter()
            .rev()
            .find(|a| a.0 == 64)
            .expect("reader stored");
        assert!(!last.2, "{name}");
    }
}

/// `weak` keeps a CTA's picks global once a thread of it may hold an observation from
/// outside its shared memory (a watermark compares sequence numbers across CTAs), and not
/// before; other CTAs keep theirs.
#[test]
fn weak_answers_by_observations() {
    // CTA 1's thread 0 stores 1 to `g`; CTA 0's thread 0 polls `g` with strong loads
    // until it reads 1 (an observation of another CTA's store), then stores to shared
    // memory (where the answers are taken).
    const OBS: &str = r#"
.visible .entry o(.param .u64 g)
{
    .shared .align 4 .b8 s[4];
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [g];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra WRITER;
WAIT:
    ld.volatile.global.u32 %r3, [%rd1];
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra WAIT;
    st.shared.u32 [s], %r3;
    bra.uni DONE;
WRITER:
    st.shared.u32 [s], 7;
    st.volatile.global.u32 [%rd1], 1;
DONE:
    ret;
}
"#;
    let module = fencehound_ptx::parse("o", &format!("{HEADER}{OBS}")).unwrap();
    let mut dev = Device::new();
    let m = dev.load_module(&module).unwrap();
    let g = dev.alloc(4).unwrap();
    dev.copy_to(g, &[0; 4]).unwrap();
    // p = 0: every load reads the newest store (no stale choice), the poll ends.
    let mut h = Asking::new(BufferConfig::new(Model::Weak, 0.0, 1), 32);
    let r = dev
        .launch_with(
            m,
            "o",
            Dim3::x(2),
            Dim3::x(32),
            0,
            &[Arg::Ptr(g)],
            LaunchOptions::default(),
            &mut h,
            &mut RoundRobin::new(1),
        )
        .unwrap();
    assert!(r.outcome.is_completed(), "{:?}", r.outcome);
    // The writer's stores: nobody has observed anything yet.
    let writer: Vec<_> = h.answers.iter().filter(|a| a.0 == 32).collect();
    assert_eq!(writer.len(), 2);
    assert!(writer.iter().all(|a| a.1 && a.2), "{writer:?}");
    // After the poll read 1: CTA 0 holds an observation of another CTA's store; CTA 1,
    // which only stored, does not.
    let reader = h
        .answers
        .iter()
        .find(|a| a.0 == 0)
        .expect("the reader stored");
    assert_eq!((reader.1, reader.2), (false, true));
}
