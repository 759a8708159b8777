//! The typed IR of a PTX module. It keeps everything needed to print the module back so
//! that ptxas accepts it, and every instruction keeps its PTX position and CUDA location.
//!
//! Positions (`Pos`) never take part in equality: `parse(print(m)) == m` compares
//! structure, not where things were written.

use crate::table::{Mod, ModClass, Opcode};

/// A 1-based line/column in the PTX text. Always equal to every other `Pos` (see module doc).
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl PartialEq for Pos {
    fn eq(&self, _: &Pos) -> bool {
        true
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Version { major: u32, minor: u32 },
    Target(Vec<String>),
    AddressSize(u32),
    File(FileDecl),
    Var(VarDecl),
    Func(Function),
    Pragma(Vec<String>),
    Section(Section),
}

/// `.file 1 "k.cu"` with optional timestamp and size.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDecl {
    pub index: u32,
    pub path: String,
    pub timestamp: Option<u64>,
    pub size: Option<u64>,
}

/// `.section .debug_str { ... }` (DWARF data NVRTC emits with line info).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub entries: Vec<SectionEntry>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SectionEntry {
    Label(String),
    /// `.b8 1, 2, 3` or `.b32 label+4` etc.
    Data {
        ty: Mod,
        values: Vec<SectionValue>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum SectionValue {
    Int(i64),
    Sym { name: String, offset: i64 },
}

/// Linkage/visibility directive in front of a variable or function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    Visible,
    Extern,
    Weak,
    Common,
}

impl Linkage {
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
            Linkage::Weak => "weak",
            Linkage::Common => "common",
        }
    }
}

/// Where a variable lives (declaration spaces, PTX ISA §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Reg,
    Global,
    Shared,
    Local,
    Const,
    Param,
}

impl Space {
    pub fn as_str(self) -> &'static str {
        match self {
            Space::Reg => "reg",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }
}

/// A variable declaration: module variables, `.local`/`.shared` in functions, `.param`
/// in signatures and call blocks, `.reg` declarations.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub pos: Pos,
    pub linkage: Option<Linkage>,
    pub space: Space,
    pub align: Option<u32>,
    /// `.v2`/`.v4`
    pub vector: Option<u8>,
    /// A type modifier (`Mod::U32` etc.).
    pub ty: Mod,
    /// `.ptr .global .align 8` attributes on kernel parameters.
    pub ptr: Option<PtrAttr>,
    /// `.attribute(.managed)`: a `__managed__` variable (CUDA unified memory).
    pub managed: bool,
    pub name: String,
    /// `%r<10>`: declares `%r0` … `%r9`.
    pub range: Option<u32>,
    /// Array dimensions; `None` is an unsized `[]` dimension.
    pub dims: Vec<Option<u64>>,
    pub init: Option<Init>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PtrAttr {
    pub space: Option<Space>,
    pub align: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Scalar(InitValue),
    List(Vec<Init>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum InitValue {
    Int(i64),
    F32(u32),
    F64(u64),
    /// The address of a variable or function, optionally `generic(...)` and with an offset.
    Addr {
        name: String,
        generic: bool,
        offset: i64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuncKind {
    Entry,
    Func,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub pos: Pos,
    pub linkage: Option<Linkage>,
    pub kind: FuncKind,
    pub name: String,
    pub rets: Vec<VarDecl>,
    pub params: Vec<VarDecl>,
    /// `.noreturn`
    pub noreturn: bool,
    /// Performance-tuning directives (`.maxntid 256, 1, 1`, `.reqntid`, `.minnctapersm`, …).
    pub perf: Vec<PerfDirective>,
    /// `None` for a declaration (`.extern .func vprintf(...);`).
    pub body: Option<Vec<Statement>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PerfDirective {
    pub name: String,
    pub values: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Inst(Instruction),
    Label(String),
    Var(VarDecl),
    Loc(Loc),
    /// `{ ... }` — a nested scope (NVRTC wraps call sequences in one).
    Block(Vec<Statement>),
    Pragma(Vec<String>),
    /// `name: .branchtargets a, b, c;`
    BranchTargets {
        name: String,
        targets: Vec<String>,
    },
    /// `name: .callprototype (.param .b32 _) _ (.param .b64 _);`
    CallPrototype {
        name: String,
        rets: Vec<VarDecl>,
        params: Vec<VarDecl>,
        noreturn: bool,
    },
    /// Performance directives may also appear inside a body in hand-written PTX.
    Perf(PerfDirective),
}

/// `.loc file line col [, function_name L [+ off]] [, inlined_at file line col]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub function_name: Option<(String, i64)>,
    pub inlined_at: Option<(u32, u32, u32)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    pub negated: bool,
    pub pred: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub pos: Pos,
    /// The CUDA location in effect (the most recent `.loc`), if any.
    pub loc: Option<Loc>,
    pub guard: Option<Guard>,
    pub opcode: Opcode,
    pub mods: Vec<Mod>,
    pub operands: Vec<Operand>,
}

/// Special registers (PTX ISA §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    Tid,
    Ntid,
    Ctaid,
    Nctaid,
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    Clock,
    ClockHi,
    Clock64,
    Globaltimer,
    GlobaltimerLo,
    GlobaltimerHi,
    DynamicSmemSize,
    TotalSmemSize,
    AggrSmemSize,
    Pm0,
    Pm1,
    Pm2,
    Pm3,
    Envreg(u8),
    IsExplicitCluster,
    ClusterId,
    Nclusterid,
    ClusterCtaid,
    ClusterNctaid,
    ClusterCtarank,
    ClusterNctarank,
    ReservedSmemOffsetBegin,
}

impl Special {
    pub fn parse(s: &str) -> Option<Special> {
        use Special::*;
        Some(match s {
            "%tid" => Tid,
            "%ntid" => Ntid,
            "%ctaid" => Ctaid,
            "%nctaid" => Nctaid,
            "%laneid" => Laneid,
            "%warpid" => Warpid,
            "%nwarpid" => Nwarpid,
            "%smid" => Smid,
            "%nsmid" => Nsmid,
            "%gridid" => Gridid,
            "%lanemask_eq" => LanemaskEq,
            "%lanemask_le" => LanemaskLe,
            "%lanemask_lt" => LanemaskLt,
            "%lanemask_ge" => LanemaskGe,
            "%lanemask_gt" => LanemaskGt,
            "%clock" => Clock,
            "%clock_hi" => ClockHi,
            "%clock64" => Clock64,
            "%globaltimer" => Globaltimer,
            "%globaltimer_lo" => GlobaltimerLo,
            "%globaltimer_hi" => GlobaltimerHi,
            "%dynamic_smem_size" => DynamicSmemSize,
            "%total_smem_size" => TotalSmemSize,
            "%aggr_smem_size" => AggrSmemSize,
            "%pm0" => Pm0,
            "%pm1" => Pm1,
            "%pm2" => Pm2,
            "%pm3" => Pm3,
            "%is_explicit_cluster" => IsExplicitCluster,
            "%clusterid" => ClusterId,
            "%nclusterid" => Nclusterid,
            "%cluster_ctaid" => ClusterCtaid,
            "%cluster_nctaid" => ClusterNctaid,
            "%cluster_ctarank" => ClusterCtarank,
            "%cluster_nctarank" => ClusterNctarank,
            "%reserved_smem_offset_begin" => ReservedSmemOffsetBegin,
            _ => {
                let n: u8 = s.strip_prefix("%envreg")?.parse().ok()?;
                if n < 32 {
                    return Some(Envreg(n));
                }
                return None;
            }
        })
    }

    pub fn name(self) -> String {
        use Special::*;
        match self {
            Tid => "%tid",
            Ntid => "%ntid",
            Ctaid => "%ctaid",
            Nctaid => "%nctaid",
            Laneid => "%laneid",
            Warpid => "%warpid",
            Nwarpid => "%nwarpid",
            Smid => "%smid",
            Nsmid => "%nsmid",
            Gridid => "%gridid",
            LanemaskEq => "%lanemask_eq",
            LanemaskLe => "%lanemask_le",
            LanemaskLt => "%lanemask_lt",
            LanemaskGe => "%lanemask_ge",
            LanemaskGt => "%lanemask_gt",
            Clock => "%clock",
            ClockHi => "%clock_hi",
            Clock64 => "%clock64",
            Globaltimer => "%globaltimer",
            GlobaltimerLo => "%globaltimer_lo",
            GlobaltimerHi => "%globaltimer_hi",
            DynamicSmemSize => "%dynamic_smem_size",
            TotalSmemSize => "%total_smem_size",
            AggrSmemSize => "%aggr_smem_size",
            Pm0 => "%pm0",
            Pm1 => "%pm1",
            Pm2 => "%pm2",
            Pm3 => "%pm3",
            Envreg(n) => return format!("%envreg{n}"),
            IsExplicitCluster => "%is_explicit_cluster",
            ClusterId => "%clusterid",
            Nclusterid => "%nclusterid",
            ClusterCtaid => "%cluster_ctaid",
            ClusterNctaid => "%cluster_nctaid",
            ClusterCtarank => "%cluster_ctarank",
            ClusterNctarank => "%cluster_nctarank",
            ReservedSmemOffsetBegin => "%reserved_smem_offset_begin",
        }
        .to_string()
    }

    /// Whether the register has `.x/.y/.z` components.
    pub fn has_dims(self) -> bool {
        use Special::*;
        matches!(
            self,
            Tid | Ntid | Ctaid | Nctaid | ClusterId | Nclusterid | ClusterCtaid | ClusterNctaid
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register, variable, function or label name; what it refers to is resolved by
    /// whoever consumes the IR (registers and variables share one namespace in PTX).
    Name(String),
    Special {
        reg: Special,
        dim: Option<u8>,
    },
    Int(i64),
    F32(u32),
    F64(u64),
    /// `[base]`, `[base+off]`, `[imm]`.
    Addr {
        base: AddrBase,
        offset: i64,
    },
    /// `{a, b, c, d}` — vector register list (`_` allowed as a sink element).
    Vector(Vec<Operand>),
    /// `d|p` — the two destinations of `setp`/`shfl`.
    Pair(Box<Operand>, Box<Operand>),
    /// `!p` — a negated predicate source.
    Not(Box<Operand>),
    /// `_` — the sink.
    Sink,
    /// `(a, b)` — call return/argument lists.
    List(Vec<Operand>),
    /// `[tex, {c0, c1}]` — a texture fetch's texture (a texture object's handle in a
    /// register, or a `.texref` name) and coordinates (`tex`, unified mode).
    TexAddr {
        tex: Box<Operand>,
        coords: Vec<Operand>,
    },
    /// `name+off` as an immediate address (e.g. `mov.u64 %rd1, tbl+8`).
    SymOffset {
        name: String,
        offset: i64,
    },
    /// `%v.x`: a member of a vector register, or `%r1.b1`: a video-instruction operand
    /// selector.
    Select {
        name: String,
        sel: Selector,
    },
}

/// A component selector after a register name (PTX ISA §5.4.2 "Vectors": `.x .y .z .w`,
/// aliases `.r .g .b .a`; §9.7.16 video instructions: `.b0`–`.b3`, `.h0`, `.h1`, and the
/// SIMD forms `.bNNNN` (four byte numbers 0–7) and `.hNN` (two half numbers 0–3)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Vector member 0–3 (`.x`/`.r` … `.w`/`.a`).
    Member(u8),
    /// Byte 0–3 of a 32-bit register.
    Byte(u8),
    /// Half 0–1 of a 32-bit register.
    Half(u8),
    /// SIMD video byte selector, digits as written (`.b3210` → `[3, 2, 1, 0]`).
    Bytes([u8; 4]),
    /// SIMD video half selector, digits as written (`.h10` → `[1, 0]`).
    Halves([u8; 2]),
}

impl Selector {
    /// Parses a selector spelling without its dot.
    pub fn parse(s: &str) -> Option<Selector> {
        let digits = |t: &str, max: u8| -> Option<Vec<u8>> {
            t.bytes()
                .map(|c| c.checked_sub(b'0').filter(|d| *d <= max))
                .collect()
        };
        Some(match s {
            "x" | "r" => Selector::Member(0),
            "y" | "g" => Selector::Member(1),
            "z" | "b" => Selector::Member(2),
            "w" | "a" => Selector::Member(3),
            _ => {
                let (kind, rest) = s.split_at(1);
                match (kind, rest.len()) {
                    ("b", 1) => Selector::Byte(digits(rest, 3)?[0]),
                    ("h", 1) => Selector::Half(digits(rest, 1)?[0]),
                    ("b", 4) => {
                        let d = digits(rest, 7)?;
                        Selector::Bytes([d[0], d[1], d[2], d[3]])
                    }
                    ("h", 2) => {
                        let d = digits(rest, 3)?;
                        Selector::Halves([d[0], d[1]])
                    }
                    _ => return None,
                }
            }
        })
    }

    /// The spelling without the dot (members print as `.x .y .z .w`).
    pub fn spelling(self) -> String {
        match self {
            Selector::Member(i) => ["x", "y", "z", "w"][i as usize & 3].to_string(),
            Selector::Byte(i) => format!("b{i}"),
            Selector::Half(i) => format!("h{i}"),
            Selector::Bytes(d) => format!("b{}{}{}{}", d[0], d[1], d[2], d[3]),
            Selector::Halves(d) => format!("h{}{}", d[0], d[1]),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum AddrBase {
    Name(String),
    Imm(u64),
}

impl Instruction {
    /// Whether the instruction carries modifier `m`.
    pub fn has(&self, m: Mod) -> bool {
        self.mods.contains(&m)
    }
    /// Modifiers of one class, in order.
    pub fn mods_of(&self, class: ModClass) -> impl Iterator<Item = Mod> + '_ {
        self.mods
            .iter()
            .copied()
            .filter(move |m| m.class() == class)
    }
    /// The type modifiers, in order (`cvt.f32.s32` → [F32, S32]).
    pub fn types(&self) -> Vec<Mod> {
        self.mods_of(ModClass::Type).collect()
    }
    /// The last type modifier (the operation type for most instructions).
    pub fn ty(&self) -> Option<Mod> {
        self.mods_of(ModClass::Type).last()
    }
    /// The state space of a memory instruction; `None` means generic addressing.
    pub fn space(&self) -> Option<Mod> {
        self.mods_of(ModClass::Space).next()
    }
    pub fn sem(&self) -> Option<Mod> {
        self.mods_of(ModClass::Sem).next()
    }
    pub fn scope(&self) -> Option<Mod> {
        self.mods_of(ModClass::Scope).next()
    }
    pub fn vector(&self) -> Option<u8> {
        self.mods.iter().find_map(|m| match m {
            Mod::V2 => Some(2),
            Mod::V4 => Some(4),
            Mod::V8 => Some(8),
            _ => None,
        })
    }
    pub fn rounding(&self) -> Option<Mod> {
        self.mods_of(ModClass::Round).next()
    }
    /// The comparison of `setp`/`set`/`slct`-style instructions.
    pub fn cmp(&self) -> Option<Mod> {
        self.mods_of(ModClass::Cmp).next()
    }
    /// The operation of `atom`/`red`/`redux`/`bar.red`, or `setp`'s combining op.
    pub fn op(&self) -> Option<Mod> {
        self.mods_of(ModClass::Op).next()
    }
}

impl Function {
    pub fn is_kernel(&self) -> bool {
        self.kind == FuncKind::Entry
    }
}

impl Module {
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Func(f) => Some(f),
            _ => None,
        })
    }
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions().find(|f| f.name == name)
    }
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions().filter(|f| f.is_kernel())
    }
    pub fn variables(&self) -> impl Iterator<Item = &VarDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Var(v) => Some(v),
            _ => None,
        })
    }
    /// The file table from `.file` directives.
    pub fn file(&self, index: u32) -> Option<&FileDecl> {
        self.items.iter().find_map(|i| match i {
            Item::File(f) if f.index == index => Some(f),
            _ => None,
        })
    }
    pub fn target(&self) -> Option<&[String]> {
        self.items.iter().find_map(|i| match i {
            Item::Target(t) => Some(t.as_slice()),
            _ => None,
        })
    }
    /// Every instruction of a function body in program order, with nested blocks flattened.
    pub fn instructions(body: &[Statement]) -> Vec<&Instruction> {
        fn walk<'a>(s: &'a [Statement], out: &mut Vec<&'a Instruction>) {
            for st in s {
                match st {
                    Statement::Inst(i) => out.push(i),
                    Statement::Block(b) => walk(b, out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(body, &mut out);
        out
    }

    /// The name of an inlined function from a `.loc ... function_name L+off` reference
    /// (a NUL-terminated string in `.section .debug_str`).
    pub fn debug_str(&self, label: &str, offset: i64) -> Option<String> {
        for item in &self.items {
            let Item::Section(s) = item else { continue };
            let mut bytes = Vec::new();
            let mut found = false;
            for e in &s.entries {
                match e {
                    SectionEntry::Label(l) if l == label => found = true,
                    SectionEntry::Data {
                        ty: Mod::B8,
                        values,
                    } if found => {
                        for v in values {
                            if let SectionValue::Int(b) = v {
                                bytes.push(*b as u8);
                            }
                        }
                    }
                    SectionEntry::Label(_) if found => break,
                    _ => {}
                }
            }
            if found {
                let start = usize::try_from(offset).ok()?;
                let tail = bytes.get(start..)?;
                let end = tail.iter().position(|b| *b == 0).unwrap_or(tail.len());
                return Some(String::from_utf8_lossy(&tail[..end]).into_owned());
            }
        }
        None
    }
}
