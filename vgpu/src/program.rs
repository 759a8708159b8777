//! The executable form of a module: instructions decoded once from the `ptx` IR with
//! registers resolved to slots, labels to program counters, variables to addresses and
//! modifiers to typed fields. Built by [`crate::decode`], run by [`crate::exec`].

use crate::alu::AluInst;
use crate::hooks::{AccessKind, BarrierKind, FenceKind, Scope, Sem, SiteId};
pub use crate::operand::{Slot, Src, CC_SLOT};

/// Function "addresses" (`mov.u64 %rd, func`) live in their own window, outside every
/// memory window, so a load or store through one faults: function `i` is
/// `FUNC_WINDOW + 16 * i`.
pub const FUNC_WINDOW: u64 = 0x0005_0000_0000_0000;

/// The state space of a memory instruction after decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemSpace {
    Generic,
    Global,
    Shared,
    Local,
    Const,
    /// Kernel parameters (read-only buffer shared by all threads).
    KernelParam,
    /// `.param` variables of a device-function frame (per thread, frame-relative).
    FrameParam,
}

/// Where an address comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrBase {
    Reg(Slot),
    /// An absolute address in the instruction's space.
    Abs(u64),
    /// A frame-relative offset (local variables, frame `.param` variables).
    Frame(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    pub base: AddrBase,
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    And,
    Or,
    Xor,
    Exch,
    Cas,
    AddInt,
    AddF16,
    AddF16x2,
    AddBf16,
    AddBf16x2,
    AddF32,
    AddF64,
    Inc,
    Dec,
    MinS,
    MinU,
    MaxS,
    MaxU,
    MinF,
    MaxF,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    MinS,
    MinU,
    MaxS,
    MaxU,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    /// `bar.red.popc.u32`
    RedPopc,
    /// `bar.red.and.pred`
    RedAnd,
    /// `bar.red.or.pred`
    RedOr,
}

/// An element type `mma` multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaIn {
    F16,
    Bf16,
    S8,
    U8,
    S4,
    U4,
    /// `.tf32` in a `.b32` register (one per register).
    Tf32,
    /// `.f64` (one per 64-bit register).
    F64,
    /// 8-bit floats (sm_89).
    E4m3,
    E5m2,
}

impl MmaIn {
    /// Bits per element; a `.b32` register holds `32 / bits` of them, low first.
    pub fn bits(self) -> u32 {
        match self {
            MmaIn::F64 => 64,
            MmaIn::Tf32 => 32,
            MmaIn::F16 | MmaIn::Bf16 => 16,
            MmaIn::S8 | MmaIn::U8 | MmaIn::E4m3 | MmaIn::E5m2 => 8,
            MmaIn::S4 | MmaIn::U4 => 4,
        }
    }
    /// Elements per register: packed low first in a `.b32`, or one of 32 or 64 bits.
    pub fn per_reg(self) -> usize {
        (32 / self.bits()).max(1) as usize
    }
    pub fn is_int(self) -> bool {
        matches!(self, MmaIn::S8 | MmaIn::U8 | MmaIn::S4 | MmaIn::U4)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, MmaIn::S8 | MmaIn::S4)
    }
}

/// An accumulator type of `mma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaAcc {
    F32,
    F16,
    S32,
    F64,
}

/// The shape (`mMn8kK`, `M` 8 or 16) and types of an `mma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaKind {
    pub m: u8,
    pub k: u8,
    pub a: MmaIn,
    pub b: MmaIn,
    pub c: MmaAcc,
    pub d: MmaAcc,
    /// Integer `.satfinite`: clamp instead of wrap.
    pub satfinite: bool,
    /// `.f64`'s rounding (`.rn` unless given).
    pub rnd: crate::arith::Rounding,
}

/// An element type of a `wmma` fragment (and of the matrix in memory it is loaded from
/// or stored to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaElem {
    F16,
    Bf16,
    /// 32-bit floats in memory and registers, multiplied as `.tf32`.
    Tf32,
    F32,
    F64,
    S8,
    U8,
    S32,
    S4,
    U4,
    B1,
}

impl WmmaElem {
    pub fn bits(self) -> u32 {
        match self {
            WmmaElem::F64 => 64,
            WmmaElem::Tf32 | WmmaElem::F32 | WmmaElem::S32 => 32,
            WmmaElem::F16 | WmmaElem::Bf16 => 16,
            WmmaElem::S8 | WmmaElem::U8 => 8,
            WmmaElem::S4 | WmmaElem::U4 => 4,
            WmmaElem::B1 => 1,
        }
    }
    /// Elements per register: one of 32 or 64 bits, else packed low first in `.b32`.
    pub fn per_reg(self) -> usize {
        (32 / self.bits().min(32)) as usize
    }
    pub fn is_float(self) -> bool {
        matches!(
            self,
            WmmaElem::F16 | WmmaElem::Bf16 | WmmaElem::Tf32 | WmmaElem::F32 | WmmaElem::F64
        )
    }
}

/// Which matrix of `D = A·B + C` a `wmma` fragment holds (`D` shares `C`'s shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaFrag {
    A,
    B,
    C,
}

/// A `wmma` shape `.mMnNkK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WmmaShape {
    pub m: u8,
    pub n: u8,
    pub k: u8,
}

impl WmmaShape {
    /// (rows, columns) of the fragment's matrix: A is M×K, B K×N, C and D M×N.
    pub fn dims(self, f: WmmaFrag) -> (usize, usize) {
        let (m, n, k) = (self.m as usize, self.n as usize, self.k as usize);
        match f {
            WmmaFrag::A => (m, k),
            WmmaFrag::B => (k, n),
            WmmaFrag::C => (m, n),
        }
    }
    /// Elements each thread holds: the matrix over 32 threads, except `.f16` A and B,
    /// which PTX gives eight `.f16x2` registers in every shape (so some matrices are held
    /// twice or four times over the warp).
    pub fn elems_per_thread(self, f: WmmaFrag, e: WmmaElem) -> usize {
        let (r, c) = self.dims(f);
        if e == WmmaElem::F16 && f != WmmaFrag::C {
            16
        } else {
            r * c / 32
        }
    }
    /// Registers of a fragment (PTX ISA §9.7.14.4.1, "Matrix Fragments for WMMA").
    pub fn regs(self, f: WmmaFrag, e: WmmaElem) -> usize {
        self.elems_per_thread(f, e) / e.per_reg()
    }
}

/// The types of a `wmma.mma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WmmaKind {
    pub shape: WmmaShape,
    pub a: WmmaElem,
    pub b: WmmaElem,
    pub c: WmmaElem,
    pub d: WmmaElem,
    pub satfinite: bool,
    /// `.f64`'s rounding.
    pub rnd: crate::arith::Rounding,
    /// `.b1`: `.xor.popc` (false) or `.and.popc` (true).
    pub and: bool,
}

#[derive(Debug, Clone)]
pub enum Op {
    Alu(AluInst),
    Mov {
        d: Slot,
        a: Src,
    },
    /// Element-wise vector move (`mov.v4`): every source is read before any destination
    /// is written.
    Movs {
        pairs: Vec<(Slot, Src)>,
    },
    /// `mov.b64 %rd, {%r1, %r2}` (parts low first).
    Pack {
        d: Slot,
        parts: Vec<Src>,
        bits: u32,
    },
    /// `mov.b64 {%r1, %r2}, %rd`
    Unpack {
        ds: Vec<Option<Slot>>,
        a: Src,
        bits: u32,
    },
    Ld {
        space: MemSpace,
        ds: Vec<Option<Slot>>,
        addr: Addr,
        /// Bytes per element.
        size: u32,
        /// Sign-extend into wider registers.
        signed: bool,
        sem: Sem,
        scope: Scope,
    },
    St {
        space: MemSpace,
        addr: Addr,
        vals: Vec<Src>,
        size: u32,
        sem: Sem,
        scope: Scope,
    },
    Atom {
        space: MemSpace,
        op: AtomOp,
        size: u32,
        d: Option<Slot>,
        addr: Addr,
        b: Src,
        c: Option<Src>,
        sem: Sem,
        scope: Scope,
    },
    /// A vector `atom`/`red` (sm_90): element `k` is an atomic `op` on `addr + k * size`
    /// with operand `bs[k]`, its old value to `ds[k]`, one after another.
    AtomVec {
        space: MemSpace,
        op: AtomOp,
        size: u32,
        ds: Vec<Option<Slot>>,
        addr: Addr,
        bs: Vec<Src>,
        sem: Sem,
        scope: Scope,
    },
    Cvta {
        to_generic: bool,
        space: MemSpace,
        d: Slot,
        a: Src,
        /// Destination width in bits (32 or 64).
        bits: u32,
    },
    Isspacep {
        space: MemSpace,
        d: Slot,
        a: Src,
    },
    Bra {
        target: u32,
    },
    Brx {
        index: Src,
        targets: Vec<u32>,
    },
    /// `call (rets), %rd, (args), prototype;` through a function address.
    CallIndirect {
        target: Src,
        /// Caller frame offsets of the argument and return `.param` variables; the
        /// callee's layout is looked up at run time.
        args: Vec<u32>,
        rets: Vec<u32>,
    },
    Call {
        callee: u32,
        args: Vec<CallArg>,
        rets: Vec<CallRet>,
    },
    /// `call vprintf`: frame offsets of the format-pointer and argument-buffer params,
    /// and of the return value.
    Vprintf {
        args: Vec<u32>,
        ret: Option<u32>,
    },
    /// `call __assertfail`: frame offsets of (message, file, line, function) params.
    AssertFail {
        args: Vec<u32>,
    },
    /// `call (ret), malloc, (size)` (device-side heap, `new`): frame offsets.
    DevMalloc {
        size: u32,
        ret: u32,
    },
    /// `call free, (ptr)` (`delete`): the frame offset of the pointer.
    DevFree {
        ptr: u32,
    },
    Ret,
    Exit,
    Trap,
    Brkpt,
    Bar {
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        d: Option<Slot>,
        pred: Option<Src>,
    },
    WarpSync {
        mask: Src,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
    },
    Shfl {
        mode: ShflMode,
        d: Slot,
        p: Option<Slot>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    Vote {
        mode: VoteMode,
        d: Slot,
        a: Src,
        mask: Src,
    },
    Match {
        all: bool,
        bits: u32,
        d: Slot,
        p: Option<Slot>,
        a: Src,
        mask: Src,
    },
    Redux {
        op: ReduxOp,
        d: Slot,
        a: Src,
        mask: Src,
    },
    Activemask {
        d: Slot,
    },
    /// `tex.{1d,2d,3d}.v4.{s32,u32,f32}.{s32,f32}` in unified mode: a fetch from the
    /// texture object whose handle `tex` holds, at `coords` (`int_coords`: `.s32`
    /// texel indices, else `.f32`), into four registers (`crate::texture::fetch`).
    Tex {
        ds: [Option<Slot>; 4],
        tex: Src,
        coords: Vec<Src>,
        int_coords: bool,
        ty: crate::texture::TexType,
    },
    /// `suld.b.{1d,2d,3d}{.v2,.v4}.b{8,16,32,64}.{trap,clamp,zero}`: a surface load (x
    /// in bytes, y and z in rows), each component `size` bytes (`crate::texture::surface`).
    Suld {
        ds: Vec<Option<Slot>>,
        surf: Src,
        coords: Vec<Src>,
        size: u32,
        mode: crate::texture::Boundary,
    },
    /// `sust.b…`: a surface store of `vals`.
    Sust {
        surf: Src,
        coords: Vec<Src>,
        vals: Vec<Src>,
        size: u32,
        mode: crate::texture::Boundary,
    },
    /// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16`: a warp-collective
    /// load of 8x8 matrices of 16-bit elements (one destination register per matrix).
    Ldmatrix {
        ds: Vec<Slot>,
        addr: Addr,
        /// `Shared`, or `Generic` (which must point into shared memory).
        space: MemSpace,
        trans: bool,
    },
    /// `mma.sync.aligned.m16n8kK.row.col`: a warp-collective matrix multiply-accumulate.
    Mma {
        kind: MmaKind,
        d: Vec<Slot>,
        a: Vec<Src>,
        b: Vec<Src>,
        c: Vec<Src>,
    },
    /// `wmma.load.{a,b,c}.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}`: a
    /// warp-collective load of a matrix fragment (`row`: row-major in memory).
    WmmaLoad {
        frag: WmmaFrag,
        shape: WmmaShape,
        elem: WmmaElem,
        row: bool,
        space: MemSpace,
        addr: Addr,
        stride: Option<Src>,
        ds: Vec<Slot>,
    },
    /// `wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}`.
    WmmaStore {
        shape: WmmaShape,
        elem: WmmaElem,
        row: bool,
        space: MemSpace,
        addr: Addr,
        stride: Option<Src>,
        vals: Vec<Src>,
    },
    /// `wmma.mma.sync.aligned.alayout.blayout.shape.types d, a, b, c`.
    WmmaMma {
        kind: WmmaKind,
        d: Vec<Slot>,
        a: Vec<Src>,
        b: Vec<Src>,
        c: Vec<Src>,
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size | ignore-src}`.
    /// The copy is queued and performed by the `cp.async.wait_*` that completes its group
    /// (or when the thread exits): one of the executions the ISA allows, and the one that
    /// exposes a read of the destination before the wait.
    CpAsync {
        dst: Addr,
        src: Addr,
        size: u32,
        src_size: Option<Src>,
        /// `ignore-src` predicate (`!p` reads as `NotReg`).
        ignore_src: Option<Src>,
    },
    /// `cp.async.commit_group`
    CpAsyncCommit,
    /// `cp.async.wait_group N` (`all`: `cp.async.wait_all`, which first commits).
    CpAsyncWait {
        pending: u32,
        all: bool,
    },
    /// An `mbarrier` operation on the 8-byte barrier object at `addr` (shared memory), or
    /// `cp.async.mbarrier.arrive` ([`MbarKind`]; `exec/mbarrier.rs` has the semantics).
    Mbar {
        kind: MbarKind,
        /// `Shared`, or `Generic` (which must resolve to shared memory).
        space: MemSpace,
        addr: Addr,
        /// The state token (`arrive`), the predicate (`test_wait`, `try_wait`) or the
        /// count (`pending_count`).
        d: Option<Slot>,
        /// The count (`init`, `arrive{, count}`), the state or phase parity (`test_wait`,
        /// `try_wait`, `pending_count`).
        b: Option<Src>,
        sem: Sem,
        scope: Scope,
    },
    /// `cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar]`: copies `size` bytes, then completes that many transaction bytes on the
    /// mbarrier object at `mbar` (`exec/mbarrier.rs`).
    BulkCopy {
        dst: Addr,
        src: Addr,
        size: Src,
        mbar: Addr,
    },
    /// `elect.sync d|p, membermask`: the lowest lane of the member mask is the leader.
    Elect {
        d: Option<Slot>,
        p: Option<Slot>,
        mask: Src,
    },
    Nanosleep,
    /// Performance hints (`prefetch`, `discard`, `pmevent`): no effect.
    Nop,
}

/// Which `mbarrier` operation (PTX ISA §9.7.13.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarKind {
    /// `mbarrier.init [a], count`
    Init,
    /// `mbarrier.arrive{.noComplete}` (`drop`: `mbarrier.arrive_drop`, which also lowers the
    /// expected count of later phases; `tx`: `.expect_tx`, whose operand is a transaction
    /// count added before one arrival).
    Arrive { drop: bool, tx: bool },
    /// `mbarrier.expect_tx [a], txCount`
    ExpectTx,
    /// `mbarrier.complete_tx [a], txCount`
    CompleteTx,
    /// `mbarrier.test_wait` / `try_wait` (`parity`: the `.parity` forms, whose operand is a
    /// phase parity instead of a state).
    Test { parity: bool },
    /// `mbarrier.pending_count d, state`: no memory access.
    PendingCount,
    /// `mbarrier.inval [a]`
    Inval,
    /// `cp.async.mbarrier.arrive{.noinc}`: the thread's pending `cp.async` copies complete,
    /// then (with `.noinc`) it arrives.
    CpAsyncArrive { noinc: bool },
}

impl Op {
    /// A preemption point: the scheduler may switch warps before this instruction.
    pub fn is_sync_point(&self) -> bool {
        match self {
            Op::Ld { space, .. }
            | Op::St { space, .. }
            | Op::Atom { space, .. }
            | Op::AtomVec { space, .. } => {
                matches!(
                    space,
                    MemSpace::Generic | MemSpace::Global | MemSpace::Shared
                )
            }
            Op::Mbar { kind, .. } => *kind != MbarKind::PendingCount,
            Op::Bar { .. }
            | Op::WarpSync { .. }
            | Op::Fence { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::Elect { .. }
            | Op::BulkCopy { .. }
            | Op::Redux { .. }
            | Op::Ldmatrix { .. }
            | Op::Mma { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. }
            | Op::WmmaMma { .. }
            | Op::CpAsyncWait { .. }
            | Op::Nanosleep
            | Op::Exit
            | Op::Trap
            | Op::AssertFail { .. } => true,
            _ => false,
        }
    }

    /// Whether a step that starts with this instruction touches nothing another CTA can
    /// see or change: an instruction that is not a preemption point (registers, local,
    /// parameter and constant memory, and the loads of memory no thread writes that
    /// `crate::unwritten` lets run inside a step), an access to the CTA's own shared
    /// memory (the vgpu launches clusters of one CTA, so `.shared::cluster` is the
    /// CTA's own), a CTA barrier, or a warp collective. Everything else a step can start
    /// with — global and generic accesses, fences, `mbarrier` operations (a `cp.async`
    /// completes through them), asynchronous copies and their waits, `nanosleep`, exit
    /// and traps — is not. What it is for: `crate::exec`'s CTA-local scheduling
    /// (the argument is in `exec/ctalocal.rs`).
    pub fn is_cta_local(&self) -> bool {
        match self {
            Op::Ld { space, .. }
            | Op::St { space, .. }
            | Op::Atom { space, .. }
            | Op::AtomVec { space, .. } => !matches!(space, MemSpace::Generic | MemSpace::Global),
            Op::Ldmatrix { space, .. }
            | Op::WmmaLoad { space, .. }
            | Op::WmmaStore { space, .. } => *space == MemSpace::Shared,
            Op::Bar { .. }
            | Op::WarpSync { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::Elect { .. }
            | Op::Redux { .. }
            | Op::Mma { .. }
            | Op::WmmaMma { .. } => true,
            // (Every `mbarrier` operation, `pending_count` too, which is no preemption
            // point: kept out whole.)
            Op::Mbar { .. } => false,
            // Fences, bulk copies, `cp.async` waits, `nanosleep`, exit, traps: preemption
            // points, so not local; everything else only touches registers and the like.
            _ => !self.is_sync_point(),
        }
    }
}

/// How one argument reaches the callee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallArg {
    /// A `.param` variable: copy `bytes` from the caller's frame offset to the callee's.
    Frame { from: u32, to: u32, bytes: u32 },
    /// A `.reg` parameter: the caller's operand value goes into callee register `to`.
    Reg { value: Src, to: Slot },
}

/// How one return value reaches the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRet {
    /// A `.param` return: copy `bytes` from the callee's frame offset to the caller's.
    Frame { from: u32, to: u32, bytes: u32 },
    /// A `.reg` return: callee register `from` goes into caller register `to`.
    Reg { from: Slot, to: Slot },
}

/// Where a function's parameter or return value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamLoc {
    /// Frame offset (device functions) or kernel-parameter offset (kernels), and size.
    Frame(u32, u32),
    /// A `.reg` parameter: a register slot of the function's frame.
    Reg(Slot),
}

#[derive(Debug, Clone)]
pub struct Inst {
    pub op: Op,
    /// `@p` (false) / `@!p` (true).
    pub guard: Option<(Slot, bool)>,
    pub site: SiteId,
}

/// The state space a memory instruction names. `Generic` is resolved per access at run
/// time (the hooks then see the concrete space).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessSpace {
    Generic,
    Global,
    Shared,
    Local,
    Const,
    /// Kernel parameters or a device function's `.param` variables.
    Param,
}

/// What one static instruction does to memory ordering: the public description of a site
/// for tools that choose sites (the minimizer's store and fence candidates) without
/// depending on the executor's decoded form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteOp {
    /// `ld`, `st`, `atom` or `red`; `sem`/`scope` as the hooks will see them.
    Access {
        kind: AccessKind,
        space: AccessSpace,
        sem: Sem,
        scope: Scope,
    },
    /// `fence.*`, `membar.*`.
    Fence { kind: FenceKind, scope: Scope },
    /// `bar`/`barrier` (`Sync` or `Arrive`) and `bar.warp.sync` (`Warp`).
    Barrier(BarrierKind),
    /// Anything else: ALU, control flow, warp collectives.
    Other,
}

impl MemSpace {
    pub fn access_space(self) -> AccessSpace {
        match self {
            MemSpace::Generic => AccessSpace::Generic,
            MemSpace::Global => AccessSpace::Global,
            MemSpace::Shared => AccessSpace::Shared,
            MemSpace::Local => AccessSpace::Local,
            MemSpace::Const => AccessSpace::Const,
            MemSpace::KernelParam | MemSpace::FrameParam => AccessSpace::Param,
        }
    }
}

impl Inst {
    pub fn site_op(&self) -> SiteOp {
        let access = |kind, space: &MemSpace, sem, scope| SiteOp::Access {
            kind,
            space: space.access_space(),
            sem,
            scope,
        };
        match &self.op {
            Op::Ld {
                space, sem, scope, ..
            } => access(AccessKind::Load, space, *sem, *scope),
            Op::St {
                space, sem, scope, ..
            } => access(AccessKind::Store, space, *sem, *scope),
            Op::Atom {
                space, sem, scope, ..
            }
            | Op::AtomVec {
                space, sem, scope, ..
            } => access(AccessKind::Atomic, space, *sem, *scope),
            Op::Fence { kind, scope } => SiteOp::Fence {
                kind: *kind,
                scope: *scope,
            },
            Op::Bar { kind, .. } => SiteOp::Barrier(match kind {
                BarKind::Arrive => BarrierKind::Arrive,
                _ => BarrierKind::Sync,
            }),
            Op::WarpSync { .. } => SiteOp::Barrier(BarrierKind::Warp),
            Op::Ldmatrix { space, .. } | Op::WmmaLoad { space, .. } => {
                access(AccessKind::Load, space, Sem::Weak, Scope::Sys)
            }
            Op::WmmaStore { space, .. } => access(AccessKind::Store, space, Sem::Weak, Scope::Sys),
            // The store to shared memory is what a write buffer can delay (the global
            // read happens at the same time, when the group completes).
            Op::CpAsync { .. } => SiteOp::Access {
                kind: AccessKind::Store,
                space: AccessSpace::Shared,
                sem: Sem::Weak,
                scope: Scope::Sys,
            },
            Op::BulkCopy { .. } => SiteOp::Access {
                kind: AccessKind::Store,
                space: AccessSpace::Shared,
                sem: Sem::Weak,
                scope: Scope::Sys,
            },
            Op::Mbar {
                kind, sem, scope, ..
            } => match kind {
                MbarKind::Init => access(AccessKind::Store, &MemSpace::Shared, *sem, *scope),
                MbarKind::Arrive { .. }
                | MbarKind::ExpectTx
                | MbarKind::CompleteTx
                | MbarKind::CpAsyncArrive { noinc: true } => {
                    access(AccessKind::Atomic, &MemSpace::Shared, *sem, *scope)
                }
                MbarKind::Test { .. } => access(AccessKind::Load, &MemSpace::Shared, *sem, *scope),
                MbarKind::PendingCount | MbarKind::Inval | MbarKind::CpAsyncArrive { .. } => {
                    SiteOp::Other
                }
            },
            _ => SiteOp::Other,
        }
    }
}

/// Where an instruction came from, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    /// The instruction as PTX text.
    pub text: String,
    pub function: String,
    /// Line in the PTX text.
    pub ptx_line: u32,
    /// CUDA file, line, column from `.loc` (file resolved through `.file`).
    pub cuda: Option<CudaLoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CudaLoc {
    pub file: String,
    pub line: u32,
    pub col: u32,
    /// The call site this code was inlined into, if any.
    pub inlined_at: Option<(String, u32, u32)>,
    /// For code inlined from another file (a header: `mma.h`, libcu++'s atomics,
    /// cooperative groups), the line of the function's own source file it was inlined
    /// from: the innermost frame of the inline stack in the file of its outermost frame.
    pub caller: Option<(String, u32)>,
    pub function: Option<String>,
}

impl std::fmt::Display for CudaLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = std::path::Path::new(&self.file)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.file.clone());
        write!(f, "{short}:{}", self.line)?;
        if let Some((file, line, _)) = &self.inlined_at {
            let s = std::path::Path::new(file)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.clone());
            write!(f, " (inlined at {s}:{line})")?;
        }
        Ok(())
    }
}

impl SiteInfo {
    /// `k.cu:42` when line info exists, else `k.ptx line 120`.
    pub fn location(&self) -> String {
        match &self.cuda {
            Some(c) if c.line > 0 => c.to_string(),
            _ => format!("PTX line {}", self.ptx_line),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Func {
    pub name: String,
    pub is_kernel: bool,
    pub entry: u32,
    pub end: u32,
    /// Register slots (including `CC_SLOT`) after compaction ([`crate::regalloc`]): what
    /// each lane's frame holds.
    pub nregs: u32,
    /// Register slots the PTX declares (including `CC_SLOT`), before compaction.
    pub declared_regs: u32,
    /// Bytes of per-thread frame memory (`.local` variables and frame `.param`s).
    pub frame_size: u32,
    pub params: Vec<ParamLoc>,
    pub param_names: Vec<String>,
    pub rets: Vec<ParamLoc>,
    /// Size of the kernel-parameter buffer.
    pub param_bytes: u32,
    /// A kernel's static shared memory: the extent of the `.shared` variables it (or a
    /// function it calls) uses. 0 for other functions.
    pub shared_bytes: u32,
    /// What this function's global writes may address (`crate::unwritten`).
    pub(crate) writes: crate::unwritten::Writes,
}

#[derive(Debug, Clone)]
pub struct Program {
    pub insts: Vec<Inst>,
    pub funcs: Vec<Func>,
    pub sites: Vec<SiteInfo>,
    /// Static shared memory of the module's largest kernel (the layout lets variables
    /// that no kernel uses together overlap; see `Device::load_module`).
    pub shared_static: u32,
    /// Where dynamic (`extern .shared`) memory starts: after every kernel's static
    /// variables.
    pub dyn_shared_offset: u32,
    /// Module `.global`/`.const` variables: name → (address, size, is_const).
    pub globals: Vec<(String, u64, u64, bool)>,
    /// [`Program::poll_sites`], found on first use: the race check asks for them each
    /// time it is made (every launch under `exec --race`, every execution under
    /// `fuzz --race`), and the module does not change after it is loaded.
    pub(crate) polls: std::sync::OnceLock<Vec<SiteId>>,
    /// Per function, the bound on a kernel's global writes (`crate::unwritten`), found
    /// on first use.
    pub(crate) writes: std::sync::OnceLock<Vec<crate::unwritten::Writes>>,
    /// `crate::unwritten::shared_quiet`, found on first use.
    pub(crate) shared_quiet: std::sync::OnceLock<crate::unwritten::SharedQuiet>,
    /// Per instruction, [`Op::is_sync_point`], found on first use.
    pub(crate) sync: std::sync::OnceLock<Vec<bool>>,
    /// Per instruction, [`Op::is_cta_local`], found on first use.
    pub(crate) cta_local: std::sync::OnceLock<Vec<bool>>,
}

impl Program {
    /// Per instruction, whether it is a preemption point ([`Op::is_sync_point`]): asked
    /// before every interpreted instruction, where the call and its match over the
    /// instruction's kind were 5% of `fuzz campaigns/mp_queue.toml` (`perf`); a table
    /// made once per module instead.
    pub fn sync_points(&self) -> &[bool] {
        self.sync
            .get_or_init(|| self.insts.iter().map(|i| i.op.is_sync_point()).collect())
    }

    /// Per instruction, [`Op::is_cta_local`]: a table made once per module, as
    /// [`Program::sync_points`].
    pub fn cta_local_points(&self) -> &[bool] {
        self.cta_local
            .get_or_init(|| self.insts.iter().map(|i| i.op.is_cta_local()).collect())
    }

    /// The sites of the memory reads that poll: spin-wait reads whose value decides
    /// whether their loop goes round again (see `regalloc::poll_reads`). Sorted; worked
    /// out once per module.
    pub fn poll_sites(&self) -> &[SiteId] {
        self.polls.get_or_init(|| {
            let mut out: Vec<SiteId> = self
                .funcs
                .iter()
                .flat_map(|f| {
                    crate::regalloc::poll_reads(&self.insts, f.entry as usize, f.end as usize)
                })
                .map(|i| self.insts[i].site)
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        })
    }

    /// [`Program::writes`] of function `func` (`Anywhere` for a device function).
    pub(crate) fn kernel_writes(&self, func: u32) -> &crate::unwritten::Writes {
        static ANYWHERE: crate::unwritten::Writes = crate::unwritten::Writes::Anywhere;
        let all = self.writes.get_or_init(|| {
            (0..self.funcs.len() as u32)
                .map(|f| {
                    if self.funcs[f as usize].is_kernel {
                        crate::unwritten::kernel_writes(self, f)
                    } else {
                        crate::unwritten::Writes::Anywhere
                    }
                })
                .collect()
        });
        all.get(func as usize).unwrap_or(&ANYWHERE)
    }

    /// Where shared writes can still come before a CTA barrier (`crate::unwritten`).
    pub(crate) fn shared_quiet(&self) -> &crate::unwritten::SharedQuiet {
        self.shared_quiet
            .get_or_init(|| crate::unwritten::shared_quiet(self))
    }

    /// The memory-ordering description of every instruction, by site.
    pub fn site_ops(&self) -> Vec<(SiteId, SiteOp)> {
        self.insts.iter().map(|i| (i.site, i.site_op())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Device;

    /// Which strong reads poll (`Program::poll_sites`): a spin on a flag, a loop whose first
    /// read the compiler peeled (CUB's look-back: the peeled read decides whether the loop
    /// runs), a CAS spin — but not a read whose value only feeds data, only chooses a path
    /// inside the loop, or is weak.
    #[test]
    fn poll_sites_are_reads_that_decide_whether_their_loop_spins() {
        let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<8>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
SPIN:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra SPIN;
    ld.relaxed.gpu.global.u32 %r2, [%rd1+4];
    bra.uni CHECK;
RELOAD:
    ld.relaxed.gpu.global.u32 %r2, [%rd1+4];
CHECK:
    setp.eq.u32 %p2, %r2, 99;
    vote.sync.any.pred %p3, %p2, -1;
    @%p3 bra WAIT;
    bra.uni DONE2;
WAIT:
    membar.cta;
    bra.uni RELOAD;
DONE2:
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
SUM:
    ld.volatile.global.u32 %r5, [%rd1+8];
    add.u32 %r4, %r4, %r5;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p4, %r3, 4;
    @%p4 bra SUM;
    mov.u32 %r6, 0;
PICK:
    ld.volatile.global.u32 %r7, [%rd1+12];
    setp.eq.u32 %p5, %r7, 0;
    @%p5 bra SKIP;
    add.u32 %r4, %r4, 1;
SKIP:
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p6, %r6, 4;
    @%p6 bra PICK;
WEAK:
    ld.global.u32 %r8, [%rd1+16];
    setp.eq.u32 %p7, %r8, 0;
    @%p7 bra WEAK;
LOCK:
    atom.global.cas.b32 %r9, [%rd1+20], 0, 1;
    setp.ne.u32 %p1, %r9, 0;
    @%p1 bra LOCK;
    st.global.u32 [%rd1+24], %r4;
    ret;
}
"#;
        let m = fencehound_ptx::parse("polls.ptx", ptx).unwrap();
        let mut dev = Device::new();
        let id = dev.load_module(&m).unwrap();
        let prog = dev.program(id).unwrap();
        let polls: Vec<String> = prog
            .poll_sites()
            .iter()
            .map(|&s| prog.sites[s as usize].text.clone())
            .collect();
        let has = |t: &str| polls.iter().filter(|p| p.contains(t)).count();
        assert_eq!(has("[%rd1]"), 1, "the spin: {polls:?}");
        assert_eq!(
            has("[%rd1+4]"),
            2,
            "the peeled read and the reload: {polls:?}"
        );
        assert_eq!(has("[%rd1+8]"), 0, "a read that is only summed: {polls:?}");
        assert_eq!(
            has("[%rd1+12]"),
            0,
            "a read that only picks a path: {polls:?}"
        );
        assert_eq!(has("[%rd1+16]"), 0, "a weak read: {polls:?}");
        assert_eq!(has("[%rd1+20]"), 1, "a CAS spin: {polls:?}");
        assert_eq!(polls.len(), 4, "{polls:?}");
    }

    #[test]
    fn site_ops_describe_memory_ordering_per_site() {
        let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ld.acquire.gpu.global.u32 %r1, [%rd1];
    st.shared.u32 [%rd1], %r1;
    atom.relaxed.cta.global.add.u32 %r2, [%rd1], 1;
    st.u32 [%rd1], %r2;
    fence.acq_rel.gpu;
    bar.sync 0;
    bar.warp.sync -1;
    ret;
}
"#;
        let m = fencehound_ptx::parse("sites.ptx", ptx).unwrap();
        let mut dev = Device::new();
        let id = dev.load_module(&m).unwrap();
        let ops: Vec<SiteOp> = dev
            .site_ops(id)
            .unwrap()
            .into_iter()
            .map(|(_, o)| o)
            .collect();
        let acc = |kind, space, sem, scope| SiteOp::Access {
            kind,
            space,
            sem,
            scope,
        };
        assert_eq!(
            ops,
            vec![
                acc(AccessKind::Load, AccessSpace::Param, Sem::Weak, Scope::Sys),
                acc(
                    AccessKind::Load,
                    AccessSpace::Global,
                    Sem::Acquire,
                    Scope::Gpu
                ),
                acc(
                    AccessKind::Store,
                    AccessSpace::Shared,
                    Sem::Weak,
                    Scope::Sys
                ),
                acc(
                    AccessKind::Atomic,
                    AccessSpace::Global,
                    Sem::Relaxed,
                    Scope::Cta
                ),
                acc(
                    AccessKind::Store,
                    AccessSpace::Generic,
                    Sem::Weak,
                    Scope::Sys
                ),
                SiteOp::Fence {
                    kind: FenceKind::AcqRel,
                    scope: Scope::Gpu
                },
                SiteOp::Barrier(BarrierKind::Sync),
                SiteOp::Barrier(BarrierKind::Warp),
                SiteOp::Other,
            ]
        );
    }
}
