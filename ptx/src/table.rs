//! The instruction set, described once. The parser validates against it, the printer
//! spells from it, and the vgpu decodes with it: an opcode name, how many operands it
//! takes, and which modifier classes it accepts (PTX ISA §9.7). Modifiers are a closed set
//! of spellings (`Mod`); what a spelling *means* can depend on the opcode (`.lo` is a
//! comparison for `setp` and a half-select for `mul`), so interpretation lives in the
//! typed accessors of `Instruction`, not here.

macro_rules! modifiers {
    ($($(#[$m:meta])* $v:ident = $s:literal : $class:ident),* $(,)?) => {
        /// One instruction modifier spelling (without its leading dot).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(non_camel_case_types)]
        pub enum Mod { $($(#[$m])* $v),* }

        impl Mod {
            pub const ALL: &'static [Mod] = &[$(Mod::$v),*];
            /// The spelling, without the dot.
            pub fn as_str(self) -> &'static str {
                match self { $(Mod::$v => $s),* }
            }
            pub fn parse(s: &str) -> Option<Mod> {
                match s { $($s => Some(Mod::$v),)* _ => None }
            }
            pub fn class(self) -> ModClass {
                match self { $(Mod::$v => ModClass::$class),* }
            }
        }
    };
}

/// Coarse grouping of modifiers, used for validation per opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModClass {
    Type,
    Space,
    Sem,
    Scope,
    Vector,
    Cmp,
    /// Logical/atomic operation names (`.and`, `.add`, `.cas`, `.popc`, ...).
    Op,
    Round,
    /// Cache and eviction hints; no semantic effect on the vgpu.
    Cache,
    /// Everything else: instruction-specific flags.
    Flag,
}

modifiers! {
    S8 = "s8": Type, S16 = "s16": Type, S32 = "s32": Type, S64 = "s64": Type,
    U8 = "u8": Type, U16 = "u16": Type, U32 = "u32": Type, U64 = "u64": Type,
    B8 = "b8": Type, B16 = "b16": Type, B32 = "b32": Type, B64 = "b64": Type, B128 = "b128": Type,
    F16 = "f16": Type, F16x2 = "f16x2": Type, Bf16 = "bf16": Type, Bf16x2 = "bf16x2": Type,
    F32 = "f32": Type, F64 = "f64": Type, Pred = "pred": Type, Tf32 = "tf32": Type,
    S16x2 = "s16x2": Type, U16x2 = "u16x2": Type,
    E4m3 = "e4m3": Type, E5m2 = "e5m2": Type, E4m3x2 = "e4m3x2": Type, E5m2x2 = "e5m2x2": Type,
    /// Sub-byte integers (`cvt.pack`, `mma`).
    U2 = "u2": Type, S2 = "s2": Type, U4 = "u4": Type, S4 = "s4": Type,
    /// Single-bit elements (`wmma` `.m8n8k128`).
    B1 = "b1": Type,

    Global = "global": Space, Shared = "shared": Space, SharedCta = "shared::cta": Space,
    SharedCluster = "shared::cluster": Space, Local = "local": Space, Const = "const": Space,
    Param = "param": Space, ParamEntry = "param::entry": Space, ParamFunc = "param::func": Space,

    Weak = "weak": Sem, Relaxed = "relaxed": Sem, Acquire = "acquire": Sem, Release = "release": Sem,
    AcqRel = "acq_rel": Sem, Sc = "sc": Sem, Volatile = "volatile": Sem, Mmio = "mmio": Sem,

    Cta = "cta": Scope, Cluster = "cluster": Scope, Gpu = "gpu": Scope, Sys = "sys": Scope,
    /// `membar.gl`: device scope, spelled the old way.
    Gl = "gl": Scope,

    V2 = "v2": Vector, V4 = "v4": Vector, V8 = "v8": Vector,

    Eq = "eq": Cmp, Ne = "ne": Cmp, Lt = "lt": Cmp, Le = "le": Cmp, Gt = "gt": Cmp, Ge = "ge": Cmp,
    /// `.lo`: unsigned less-than for `setp`, low half for `mul`/`mad`.
    Lo = "lo": Cmp,
    Ls = "ls": Cmp,
    /// `.hi`: unsigned greater-than for `setp`, high half for `mul`/`mad`.
    Hi = "hi": Cmp,
    Hs = "hs": Cmp, Equ = "equ": Cmp, Neu = "neu": Cmp, Ltu = "ltu": Cmp, Leu = "leu": Cmp,
    Gtu = "gtu": Cmp, Geu = "geu": Cmp, Num = "num": Cmp, Nan = "nan": Cmp,

    And = "and": Op, Or = "or": Op, Xor = "xor": Op, Add = "add": Op, Inc = "inc": Op,
    Dec = "dec": Op, Min = "min": Op, Max = "max": Op, Exch = "exch": Op, Cas = "cas": Op,
    Popc = "popc": Op,

    Rn = "rn": Round, Rz = "rz": Round, Rm = "rm": Round, Rp = "rp": Round, Rna = "rna": Round,
    Rs = "rs": Round, Rni = "rni": Round, Rzi = "rzi": Round, Rmi = "rmi": Round, Rpi = "rpi": Round,

    Ca = "ca": Cache, Cg = "cg": Cache, Cs = "cs": Cache, Lu = "lu": Cache, Cv = "cv": Cache,
    Wb = "wb": Cache, Wt = "wt": Cache, Nc = "nc": Cache,
    L1EvictNormal = "L1::evict_normal": Cache, L1EvictUnchanged = "L1::evict_unchanged": Cache,
    L1EvictFirst = "L1::evict_first": Cache, L1EvictLast = "L1::evict_last": Cache,
    L1NoAllocate = "L1::no_allocate": Cache, L2EvictNormal = "L2::evict_normal": Cache,
    L2EvictFirst = "L2::evict_first": Cache, L2EvictLast = "L2::evict_last": Cache,
    L2CacheHint = "L2::cache_hint": Cache, L2_64B = "L2::64B": Cache, L2_128B = "L2::128B": Cache,
    L2_256B = "L2::256B": Cache, L1 = "L1": Cache, L2 = "L2": Cache,

    Ftz = "ftz": Flag, Sat = "sat": Flag, Satfinite = "satfinite": Flag, Approx = "approx": Flag,
    Full = "full": Flag, Relu = "relu": Flag, NaN = "NaN": Flag, Xorsign = "xorsign": Flag,
    Abs = "abs": Flag, Noftz = "noftz": Flag, Oob = "oob": Flag,
    /// Carry-out (`add.cc`).
    Cc = "cc": Flag,
    Wide = "wide": Flag, Uni = "uni": Flag, Sync = "sync": Flag, Aligned = "aligned": Flag,
    Arrive = "arrive": Flag, Red = "red": Flag, Warp = "warp": Flag, To = "to": Flag,
    Up = "up": Flag, Down = "down": Flag, Bfly = "bfly": Flag, Idx = "idx": Flag,
    All = "all": Flag, Any = "any": Flag, Ballot = "ballot": Flag,
    L = "l": Flag, R = "r": Flag, Wrap = "wrap": Flag, Clamp = "clamp": Flag,
    Shiftamt = "shiftamt": Flag,
    F4e = "f4e": Flag, B4e = "b4e": Flag, Rc8 = "rc8": Flag, Ecl = "ecl": Flag, Ecr = "ecr": Flag,
    Rc16 = "rc16": Flag,
    Finite = "finite": Flag, Infinite = "infinite": Flag, Number = "number": Flag,
    Notanumber = "notanumber": Flag, Normal = "normal": Flag, Subnormal = "subnormal": Flag,
    Proxy = "proxy": Flag, Alias = "alias": Flag, Async = "async": Flag,
    CommitGroup = "commit_group": Flag, WaitGroup = "wait_group": Flag, WaitAll = "wait_all": Flag,
    Clamp2 = "clamp_to_edge": Flag,
    /// `cvt.pack`: narrow and pack several sources into one register.
    Pack = "pack": Flag,
    /// `ldmatrix` shapes and counts, and the `.trans` (column-major) load.
    M8n8 = "m8n8": Flag, M16n16 = "m16n16": Flag, M8n16 = "m8n16": Flag,
    X1 = "x1": Flag, X2 = "x2": Flag, X4 = "x4": Flag, Trans = "trans": Flag,
    /// `mma` shapes and operand layouts.
    M8n8k4 = "m8n8k4": Flag, M8n8k16 = "m8n8k16": Flag, M8n8k32 = "m8n8k32": Flag,
    M16n8k4 = "m16n8k4": Flag, M16n8k8 = "m16n8k8": Flag, M16n8k16 = "m16n8k16": Flag,
    M16n8k32 = "m16n8k32": Flag, M16n8k64 = "m16n8k64": Flag,
    Row = "row": Flag, Col = "col": Flag,
    /// `wmma` (PTX ISA §9.7.14.4): operations, fragments and shapes.
    Load = "load": Flag, Store = "store": Flag, Mma = "mma": Flag,
    FragA = "a": Flag, FragB = "b": Flag, FragC = "c": Flag, FragD = "d": Flag,
    M16n16k16 = "m16n16k16": Flag, M32n8k16 = "m32n8k16": Flag, M8n32k16 = "m8n32k16": Flag,
    M16n16k8 = "m16n16k8": Flag, M8n8k128 = "m8n8k128": Flag,
    /// `mbarrier` operations (PTX ISA §9.7.13.15) and `cp.async.mbarrier.arrive`.
    Mbarrier = "mbarrier": Flag, Init = "init": Flag, ArriveDrop = "arrive_drop": Flag,
    TestWait = "test_wait": Flag, TryWait = "try_wait": Flag, Parity = "parity": Flag,
    PendingCount = "pending_count": Flag, Inval = "inval": Flag,
    NoComplete = "noComplete": Flag, Noinc = "noinc": Flag,
    ExpectTx = "expect_tx": Flag, CompleteTx = "complete_tx": Flag,
    /// `cp.async.bulk` (sm_90 bulk copies) completing on an mbarrier.
    Bulk = "bulk": Flag, CompleteTxBytes = "mbarrier::complete_tx::bytes": Flag,
    /// `griddepcontrol` (programmatic dependent launch, sm_90).
    Wait = "wait": Flag, LaunchDependents = "launch_dependents": Flag,
    // Texture and surface geometries (`tex`, `suld`, `sust`), surface boundary modes.
    Geom1d = "1d": Flag, Geom2d = "2d": Flag, Geom3d = "3d": Flag,
    TrapMode = "trap": Flag, Zero = "zero": Flag,
}

/// Fixed properties of one opcode.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    pub op: Opcode,
    pub name: &'static str,
    /// Operand count range (a `{a,b}` vector, an `a|b` pair and a `(..)` list count as one).
    pub min_operands: u8,
    pub max_operands: u8,
    /// Modifier classes accepted (bit set over `ModClass`).
    pub classes: u16,
}

const fn bit(c: ModClass) -> u16 {
    1 << (c as u16)
}

macro_rules! opcodes {
    ($($v:ident = $s:literal [$min:literal, $max:literal] $($cls:ident)|*;)*) => {
        /// A PTX opcode (the part before the first dot).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($v),* }

        pub const OPCODES: &[OpInfo] = &[$(OpInfo {
            op: Opcode::$v, name: $s, min_operands: $min, max_operands: $max,
            classes: 0 $(| bit(ModClass::$cls))*,
        }),*];

        impl Opcode {
            pub fn parse(s: &str) -> Option<Opcode> {
                match s { $($s => Some(Opcode::$v),)* _ => None }
            }
        }
    };
}

// Operand counts follow PTX ISA 9.x §9.7; optional trailing operands (cache policies,
// named-barrier counts, `setp`'s combining predicate) widen the range.
opcodes! {
    Abs = "abs" [2, 2] Type | Flag;
    Activemask = "activemask" [1, 1] Type;
    Add = "add" [3, 3] Type | Round | Flag;
    Addc = "addc" [3, 3] Type | Flag;
    And = "and" [3, 3] Type;
    Atom = "atom" [3, 5] Type | Space | Sem | Scope | Op | Vector | Cache | Flag;
    Bar = "bar" [1, 4] Type | Op | Scope | Flag;
    Barrier = "barrier" [0, 4] Type | Op | Scope | Flag;
    Bfe = "bfe" [4, 4] Type;
    Bfi = "bfi" [5, 5] Type;
    Bfind = "bfind" [2, 2] Type | Flag;
    Bmsk = "bmsk" [3, 3] Type | Flag;
    Bra = "bra" [1, 1] Flag;
    Brev = "brev" [2, 2] Type;
    Tex = "tex" [2, 2] Type | Vector | Flag;
    Suld = "suld" [2, 2] Type | Vector | Flag;
    Sust = "sust" [2, 2] Type | Vector | Flag;
    Brkpt = "brkpt" [0, 0];
    Brx = "brx" [2, 2] Flag;
    Call = "call" [1, 4] Flag;
    Clz = "clz" [2, 2] Type;
    Cnot = "cnot" [2, 2] Type;
    Copysign = "copysign" [3, 3] Type;
    Cos = "cos" [2, 2] Type | Flag;
    Cp = "cp" [0, 5] Type | Space | Cache | Flag;
    Cvt = "cvt" [2, 4] Type | Round | Flag;
    Cvta = "cvta" [2, 2] Type | Space | Flag;
    Discard = "discard" [2, 2] Space | Cache;
    Div = "div" [3, 3] Type | Round | Flag;
    Dp2a = "dp2a" [4, 4] Type | Cmp;
    Dp4a = "dp4a" [4, 4] Type;
    Elect = "elect" [2, 2] Flag;
    Ex2 = "ex2" [2, 2] Type | Flag;
    Exit = "exit" [0, 0];
    Fence = "fence" [0, 0] Sem | Scope | Flag;
    Fma = "fma" [4, 4] Type | Round | Flag;
    Griddepcontrol = "griddepcontrol" [0, 0] Flag;
    Fns = "fns" [4, 4] Type;
    Isspacep = "isspacep" [2, 2] Space;
    Ld = "ld" [2, 3] Type | Space | Sem | Scope | Vector | Cache | Flag;
    Ldu = "ldu" [2, 2] Type | Space | Vector;
    Ldmatrix = "ldmatrix" [2, 2] Type | Space | Flag;
    Lg2 = "lg2" [2, 2] Type | Flag;
    Lop3 = "lop3" [5, 5] Type | Op;
    Mad = "mad" [4, 4] Type | Cmp | Round | Flag;
    Mapa = "mapa" [3, 3] Type | Space;
    Mad24 = "mad24" [4, 4] Type | Cmp | Flag;
    Madc = "madc" [4, 4] Type | Cmp | Flag;
    Match = "match" [3, 3] Type | Flag;
    Max = "max" [3, 3] Type | Flag;
    Mbarrier = "mbarrier" [1, 4] Type | Space | Sem | Scope | Flag;
    Membar = "membar" [0, 0] Scope | Flag;
    Min = "min" [3, 3] Type | Flag;
    Mma = "mma" [4, 4] Type | Round | Flag;
    Mov = "mov" [2, 2] Type | Vector;
    Mul = "mul" [3, 3] Type | Cmp | Round | Flag;
    Mul24 = "mul24" [3, 3] Type | Cmp;
    Nanosleep = "nanosleep" [1, 1] Type;
    Neg = "neg" [2, 2] Type | Flag;
    Not = "not" [2, 2] Type;
    Or = "or" [3, 3] Type;
    Pmevent = "pmevent" [1, 1] Flag;
    Popc = "popc" [2, 2] Type;
    Prefetch = "prefetch" [1, 1] Space | Cache;
    Prefetchu = "prefetchu" [1, 1] Cache;
    Prmt = "prmt" [4, 4] Type | Flag;
    Rcp = "rcp" [2, 2] Type | Round | Flag;
    Red = "red" [2, 3] Type | Space | Sem | Scope | Op | Vector | Cache | Flag;
    Redux = "redux" [3, 3] Type | Op | Flag;
    Rem = "rem" [3, 3] Type;
    Ret = "ret" [0, 0] Flag;
    Rsqrt = "rsqrt" [2, 2] Type | Flag;
    Sad = "sad" [4, 4] Type;
    Selp = "selp" [4, 4] Type;
    Set = "set" [3, 4] Type | Cmp | Op | Flag;
    Setp = "setp" [3, 4] Type | Cmp | Op | Flag;
    Shf = "shf" [4, 4] Type | Flag;
    Shfl = "shfl" [4, 5] Type | Flag;
    Shl = "shl" [3, 3] Type;
    Shr = "shr" [3, 3] Type;
    Sin = "sin" [2, 2] Type | Flag;
    Slct = "slct" [4, 4] Type | Flag;
    Sqrt = "sqrt" [2, 2] Type | Round | Flag;
    St = "st" [2, 3] Type | Space | Sem | Scope | Vector | Cache | Flag;
    Sub = "sub" [3, 3] Type | Round | Flag;
    Subc = "subc" [3, 3] Type | Flag;
    Tanh = "tanh" [2, 2] Type | Flag;
    Testp = "testp" [2, 2] Type | Flag;
    Trap = "trap" [0, 0];
    Vabsdiff = "vabsdiff" [3, 4] Type | Cmp | Op | Flag;
    Vabsdiff2 = "vabsdiff2" [3, 4] Type | Cmp | Op | Flag;
    Vabsdiff4 = "vabsdiff4" [3, 4] Type | Cmp | Op | Flag;
    Vadd = "vadd" [3, 4] Type | Cmp | Op | Flag;
    Vadd2 = "vadd2" [3, 4] Type | Cmp | Op | Flag;
    Vadd4 = "vadd4" [3, 4] Type | Cmp | Op | Flag;
    Vavrg2 = "vavrg2" [3, 4] Type | Cmp | Op | Flag;
    Vavrg4 = "vavrg4" [3, 4] Type | Cmp | Op | Flag;
    Vmad = "vmad" [4, 4] Type | Cmp | Op | Flag;
    Vmax = "vmax" [3, 4] Type | Cmp | Op | Flag;
    Vmax2 = "vmax2" [3, 4] Type | Cmp | Op | Flag;
    Vmax4 = "vmax4" [3, 4] Type | Cmp | Op | Flag;
    Vmin = "vmin" [3, 4] Type | Cmp | Op | Flag;
    Vmin2 = "vmin2" [3, 4] Type | Cmp | Op | Flag;
    Vmin4 = "vmin4" [3, 4] Type | Cmp | Op | Flag;
    Vset = "vset" [3, 4] Type | Cmp | Op | Flag;
    Vset2 = "vset2" [3, 4] Type | Cmp | Op | Flag;
    Vset4 = "vset4" [3, 4] Type | Cmp | Op | Flag;
    Vshl = "vshl" [3, 4] Type | Cmp | Op | Flag;
    Vshr = "vshr" [3, 4] Type | Cmp | Op | Flag;
    Vsub = "vsub" [3, 4] Type | Cmp | Op | Flag;
    Vsub2 = "vsub2" [3, 4] Type | Cmp | Op | Flag;
    Vsub4 = "vsub4" [3, 4] Type | Cmp | Op | Flag;
    Vote = "vote" [2, 3] Type | Flag;
    Wmma = "wmma" [2, 4] Type | Space | Op | Round | Flag;
    Xor = "xor" [3, 3] Type;
}

impl Opcode {
    pub fn info(self) -> &'static OpInfo {
        // OPCODES is declared in enum order.
        &OPCODES[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// Whether the opcode accepts modifiers of this class.
    pub fn accepts(self, class: ModClass) -> bool {
        self.info().classes & bit(class) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_spellings_round_trip() {
        for (i, info) in OPCODES.iter().enumerate() {
            assert_eq!(info.op as usize, i);
            assert_eq!(Opcode::parse(info.name), Some(info.op));
            assert!(info.min_operands <= info.max_operands);
        }
        for m in Mod::ALL {
            assert_eq!(Mod::parse(m.as_str()), Some(*m));
        }
    }
}
