//! Emitting the blocks. The glue of a block is written as PTX text and parsed (the parser
//! checks it); original instructions are modified as IR and printed into that text.

use super::{Flavor, RewriteError, RewriteOptions, Rewritten, SiteCounts, MARK, PREFIX};
use crate::stats::DrainReason;
use fencehound_ptx as ptx;
use ptx::{AddrBase, FuncKind, Instruction, Item, Mod, Opcode, Operand, Space, Statement};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::OnceLock;

/// The oldest `.version` the runtime's PTX is valid for is what NVRTC wrote; a module with
/// an older one is raised to it.
pub(super) fn runtime_module() -> Result<&'static ptx::Module, RewriteError> {
    static RT: OnceLock<Result<ptx::Module, String>> = OnceLock::new();
    RT.get_or_init(|| ptx::parse("runtime.ptx", super::runtime::PTX).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| RewriteError::Generated(e.clone()))
}

// meta word layout: see runtime.cu.
const M_RELEASE: u32 = 1 << 4;
const M_CTA_ATOM: u32 = 1 << 12;

fn m_scope(scope: u32) -> u32 {
    scope << 5
}
fn m_reason(r: DrainReason) -> u32 {
    (reason_index(r) as u32) << 8
}
fn m_sem(sem: u32) -> u32 {
    sem << 13
}

/// The index of a drain reason in the runtime's counters: the declaration order of
/// [`DrainReason`].
pub(crate) fn reason_index(r: DrainReason) -> usize {
    match r {
        DrainReason::Fence => 0,
        DrainReason::Release => 1,
        DrainReason::Barrier => 2,
        DrainReason::WarpSync => 3,
        DrainReason::Atomic => 4,
        DrainReason::WriteAfterWrite => 5,
        DrainReason::PartialOverlap => 6,
        DrainReason::Full => 7,
        DrainReason::ThreadExit => 8,
        DrainReason::KernelExit => 9,
        DrainReason::Coherence => 10,
        DrainReason::Liveness => 11,
    }
}

/// Scope numbers of the runtime: 0 cta, 1 gpu (and cluster, which the native handlers
/// treat as GPU scope), 2 sys.
fn scope_num(i: &Instruction, default: u32) -> u32 {
    match i.scope() {
        Some(Mod::Cta) => 0,
        Some(Mod::Sys) => 2,
        Some(_) => 1,
        None => default,
    }
}

fn type_bytes(m: Mod) -> Option<u32> {
    use Mod::*;
    Some(match m {
        S8 | U8 | B8 => 1,
        S16 | U16 | B16 | F16 | Bf16 => 2,
        S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | S16x2 | U16x2 => 4,
        S64 | U64 | B64 | F64 => 8,
        _ => return None,
    })
}

/// Register widths of a function (from its `.reg` declarations).
#[derive(Default)]
struct Regs {
    exact: HashMap<String, u32>,
    ranges: HashMap<String, (u32, u32)>,
}

impl Regs {
    fn collect(body: &[Statement], out: &mut Regs) {
        for s in body {
            match s {
                Statement::Var(v) if v.space == Space::Reg => {
                    let bits = match v.ty {
                        Mod::Pred => 1,
                        t => type_bytes(t).map_or(0, |b| b * 8),
                    } * v.vector.map_or(1, |n| n as u32);
                    match v.range {
                        Some(n) => {
                            out.ranges.insert(v.name.clone(), (n, bits));
                        }
                        None => {
                            out.exact.insert(v.name.clone(), bits);
                        }
                    }
                }
                Statement::Block(b) => Self::collect(b, out),
                _ => {}
            }
        }
    }

    fn width(&self, name: &str) -> Option<u32> {
        if let Some(w) = self.exact.get(name) {
            return Some(*w);
        }
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let (prefix, num) = name.split_at(name.len() - digits);
        let n: u32 = num.parse().ok()?;
        match self.ranges.get(prefix) {
            Some((count, w)) if n < *count => Some(*w),
            _ => None,
        }
    }
}

/// Declared state spaces of variables visible in a function (module and function level).
struct Vars {
    spaces: HashMap<String, Space>,
}

impl Vars {
    fn module(m: &ptx::Module) -> Vars {
        let mut spaces = HashMap::new();
        for v in m.variables() {
            spaces.insert(v.name.clone(), v.space);
        }
        Vars { spaces }
    }
    fn with_function(&self, body: &[Statement]) -> Vars {
        fn walk(b: &[Statement], out: &mut HashMap<String, Space>) {
            for s in b {
                match s {
                    Statement::Var(v) if v.space != Space::Reg => {
                        out.insert(v.name.clone(), v.space);
                    }
                    Statement::Block(b) => walk(b, out),
                    _ => {}
                }
            }
        }
        let mut spaces = self.spaces.clone();
        walk(body, &mut spaces);
        Vars { spaces }
    }
}

/// The memory space an instruction names (`None`: generic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemSpace {
    Global,
    Shared,
    Generic,
    /// Local, const, param: not instrumented.
    Other,
}

fn mem_space(i: &Instruction) -> MemSpace {
    match i.space() {
        Some(Mod::Global) => MemSpace::Global,
        Some(Mod::Shared) | Some(Mod::SharedCta) => MemSpace::Shared,
        None => MemSpace::Generic,
        Some(_) => MemSpace::Other,
    }
}

struct Ctx<'a> {
    opts: &'a RewriteOptions,
    function: &'a str,
    regs: Regs,
    vars: Vars,
    is_kernel: bool,
    /// Whether sites get the inlined fast path (kernels of a module whose other functions
    /// never `exit`: the store counters live in the kernel's registers until its exit).
    fast: bool,
    /// Whether the module has `.cta` atomics on global (or generic) memory: under `scoped`
    /// they use the CTA overlay even at `p_w = 0`, so such a launch is never quiet.
    cta_atoms: bool,
    next_label: u32,
    counts: SiteCounts,
    /// Which body of a fast kernel the blocks are for (see [`Body`]).
    body: Body,
    /// The out-of-line code of a full body's blocks ([`COLD`]), in order.
    cold: Vec<Statement>,
    /// Nested scopes (`{ }`) around the current instruction: labels are scoped to them,
    /// so code inside one stays in line.
    nested: u32,
    /// A full body whose thread sets its header up after the kernel's entry, at
    /// [`SETUP`] ([`setup_point`]): an exit may be reached without it.
    late_setup: bool,
}

/// A fast kernel of the device flavour decides its launch's mode once, at entry, and runs
/// one of two copies of its body: the *full* one (every site's inlined buffering, no
/// further mode test) or the *quiet* one (every site's code for a launch that buffers
/// nothing: the original instruction, and the store counters). So an access pays no
/// per-site mode test and no branch over the other mode's code — in a full launch a load
/// costs its liveness tick and one predicated branch, in a quiet one nothing. The quiet
/// copy's labels are renamed (`__fhq`); its declarations are the full copy's. A body
/// with branch tables or call prototypes (labels the copy would have to rename inside
/// declarations), or whose end is reachable, keeps one body with a mode test per site
/// (`Both`, as the lockstep flavour always does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Both,
    Full,
    Quiet,
}

/// The label of a two-body kernel's quiet copy.
const QUIET_BODY: &str = "$__fh_quiet";

/// A line in a block's lane code where its common path ends (it goes on to `{DONE}`):
/// what follows (the slow paths) is moved out of line in a full body, after the body's
/// last instruction, and ends with a branch to `{DONE}`; elsewhere the line is that branch.
const COLD: &str = "{COLD}\n";

/// Whether a kernel body can be split in two bodies ([`Body`]): no branch tables or call
/// prototypes, and its last statement ends the thread or jumps (so the full body never
/// runs into the quiet one).
fn two_bodies_ok(body: &[Statement]) -> bool {
    fn plain(b: &[Statement]) -> bool {
        b.iter().all(|s| match s {
            Statement::BranchTargets { .. } | Statement::CallPrototype { .. } => false,
            Statement::Block(inner) => plain(inner),
            _ => true,
        })
    }
    let last = body
        .iter()
        .rev()
        .find(|s| !matches!(s, Statement::Loc(_) | Statement::Pragma(_)));
    let ends = matches!(last, Some(Statement::Inst(i))
        if i.guard.is_none()
            && matches!(i.opcode, Opcode::Ret | Opcode::Exit | Opcode::Trap | Opcode::Bra));
    plain(body) && ends
}

/// Where a full body's thread sets its header up.
const SETUP: &str = "$__fh_setup";

/// Where in a kernel body (top-level statement index) the full body's set-up can go
/// instead of the kernel's entry, so that threads which return at once — `if
/// (threadIdx.x != 0) return;`, a bounds check — skip it: the end of the body's first
/// straight run of instructions that touch no memory the rewrite instruments (moves,
/// arithmetic, compares, `ld.param`, `cvta`), where the only branches go to a label whose
/// first instruction is the kernel's `ret`/`exit`. Every path from the entry to any site
/// then passes that point, except paths straight to such an exit, and an exit is the one
/// site that needs no header from a thread that never buffered (`exit_block`). `None`
/// when the run is empty (the set-up stays at the entry).
fn setup_point(body: &[Statement]) -> Option<usize> {
    let ends_at = |label: &str| {
        let mut after = body
            .iter()
            .skip_while(|s| !matches!(s, Statement::Label(l) if l == label))
            .skip(1)
            .filter(|s| !matches!(s, Statement::Loc(_) | Statement::Label(_)));
        matches!(after.next(), Some(Statement::Inst(i))
            if i.guard.is_none() && matches!(i.opcode, Opcode::Ret | Opcode::Exit))
    };
    let pure = |i: &Instruction| {
        use Opcode::*;
        match i.opcode {
            Mov | Cvta | Cvt | Setp | Selp | Add | Sub | Mul | Mad | And | Or | Xor | Shl | Shr
            | Not | Neg => true,
            Ld => i.space() == Some(Mod::Param),
            Bra => matches!(i.operands.first(), Some(Operand::Name(l)) if ends_at(l)),
            _ => false,
        }
    };
    let mut at = None;
    for (k, st) in body.iter().enumerate() {
        match st {
            Statement::Var(_) | Statement::Loc(_) | Statement::Pragma(_) => {}
            Statement::Inst(i) if pure(i) => at = Some(k + 1),
            _ => break,
        }
    }
    // Past the last instruction of the run (after it come its `.loc`s: theirs belong to
    // the next instruction).
    at.filter(|&k| {
        body[..k]
            .iter()
            .any(|s| matches!(s, Statement::Inst(i) if i.opcode == Opcode::Bra))
    })
}

/// The quiet copy of a kernel body: its labels renamed, its declarations (which the full
/// copy keeps) left out; nested scopes keep theirs.
fn quiet_copy(body: &[Statement]) -> Vec<Statement> {
    fn labels(b: &[Statement], out: &mut std::collections::HashSet<String>) {
        for s in b {
            match s {
                Statement::Label(l) => {
                    out.insert(l.clone());
                }
                Statement::Block(inner) => labels(inner, out),
                _ => {}
            }
        }
    }
    fn rename_op(o: &mut Operand, ls: &std::collections::HashSet<String>) {
        match o {
            Operand::Name(n) if ls.contains(n.as_str()) => n.push_str("__fhq"),
            Operand::Vector(v) | Operand::List(v) => v.iter_mut().for_each(|o| rename_op(o, ls)),
            Operand::Pair(a, b) => {
                rename_op(a, ls);
                rename_op(b, ls);
            }
            Operand::Not(a) => rename_op(a, ls),
            _ => {}
        }
    }
    fn copy(b: &[Statement], ls: &std::collections::HashSet<String>, top: bool) -> Vec<Statement> {
        b.iter()
            .filter_map(|s| match s {
                Statement::Label(l) => Some(Statement::Label(format!("{l}__fhq"))),
                Statement::Inst(i) => {
                    let mut i = i.clone();
                    i.operands.iter_mut().for_each(|o| rename_op(o, ls));
                    Some(Statement::Inst(i))
                }
                Statement::Block(inner) => Some(Statement::Block(copy(inner, ls, false))),
                Statement::Var(_) | Statement::Pragma(_) | Statement::Perf(_) if top => None,
                other => Some(other.clone()),
            })
            .collect()
    }
    let mut ls = std::collections::HashSet::new();
    labels(body, &mut ls);
    copy(body, &ls, true)
}

impl Ctx<'_> {
    /// Whether the code is for `scoped` (`Some(true)`), for another model (`Some(false)`),
    /// or for either, the launch's flag `%fhq4` deciding (`None`): see
    /// `RewriteOptions::model`. Only the device flavour specialises.
    fn scoped(&self) -> Option<bool> {
        match self.opts.model {
            Some(m) if self.opts.flavor == Flavor::Device => Some(m == crate::Model::Scoped),
            _ => None,
        }
    }

    /// Whether the thread's header is in `%fhd14` wherever the runtime is called: a fast
    /// kernel of the device flavour finds it at entry, and calls the runtime only in a
    /// full launch.
    fn has_header(&self) -> bool {
        self.fast && self.opts.flavor == Flavor::Device
    }

    fn unsupported(&self, i: &Instruction, why: impl Into<String>) -> RewriteError {
        RewriteError::Unsupported {
            function: self.function.to_string(),
            line: i.pos.line,
            text: ptx::printer::instruction_to_string(i),
            why: why.into(),
        }
    }

    fn label(&mut self) -> String {
        self.next_label += 1;
        format!("$__fh_L{}", self.next_label)
    }
}

pub(super) fn rewrite_module(
    m: &ptx::Module,
    opts: &RewriteOptions,
) -> Result<Rewritten, RewriteError> {
    for v in m.variables() {
        if v.name.starts_with(PREFIX) {
            return Err(RewriteError::AlreadyInstrumented(v.name.clone()));
        }
    }
    for f in m.functions() {
        if f.name.starts_with(PREFIX) {
            return Err(RewriteError::AlreadyInstrumented(f.name.clone()));
        }
    }
    let rt = runtime_module()?;
    let vars = Vars::module(m);
    let mut counts = SiteCounts::default();
    let mut header = Vec::new();
    let mut rest = Vec::new();
    let rt_version = rt.items.iter().find_map(|i| match i {
        Item::Version { major, minor } => Some((*major, *minor)),
        _ => None,
    });
    let mut saw_target = false;
    let scan = Scan::module(m);
    for item in &m.items {
        match item {
            Item::Version { major, minor } => {
                let v = match rt_version {
                    Some(r) if r > (*major, *minor) => r,
                    _ => (*major, *minor),
                };
                header.push(Item::Version {
                    major: v.0,
                    minor: v.1,
                });
            }
            Item::Target(_) => {
                saw_target = true;
                header.push(item.clone());
            }
            Item::AddressSize(n) => {
                if *n != 64 {
                    return Err(RewriteError::Unsupported {
                        function: String::new(),
                        line: 0,
                        text: format!(".address_size {n}"),
                        why: "only 64-bit addressing is supported".into(),
                    });
                }
                header.push(item.clone());
            }
            Item::Func(f) => {
                let mut f = f.clone();
                if let Some(body) = f.body.take() {
                    let fvars = vars.with_function(&body);
                    let mut regs = Regs::default();
                    Regs::collect(&body, &mut regs);
                    // `.reg` parameters of a `.func` are registers too.
                    let sig: Vec<Statement> = f
                        .params
                        .iter()
                        .chain(&f.rets)
                        .map(|v| Statement::Var(v.clone()))
                        .collect();
                    Regs::collect(&sig, &mut regs);
                    let mut cx = Ctx {
                        opts,
                        function: &f.name,
                        regs,
                        vars: fvars,
                        is_kernel: f.kind == FuncKind::Entry,
                        fast: f.kind == FuncKind::Entry && !scan.func_exits,
                        cta_atoms: scan.cta_atoms,
                        next_label: 0,
                        counts: SiteCounts::default(),
                        body: Body::Both,
                        cold: Vec::new(),
                        nested: 0,
                        late_setup: false,
                    };
                    let two = cx.fast && opts.flavor == Flavor::Device && two_bodies_ok(&body);
                    let mut new_body = if two {
                        let quiet = quiet_copy(&body);
                        cx.body = Body::Full;
                        let mut marked = body.clone();
                        // (Not with `eager_header`, whose blocks write the header back at
                        // their end: also an exit's, which may come before the set-up.)
                        let late = cache_persists(&cx).then(|| setup_point(&body)).flatten();
                        if let Some(at) = late {
                            marked.insert(at, Statement::Label(SETUP.to_string()));
                            cx.late_setup = true;
                        }
                        let mut full = rewrite_body(&mut cx, marked)?;
                        if cx.counts == SiteCounts::default() {
                            // No site: one body, as it was (its calls need no cache).
                            cx.body = Body::Both;
                            cx.late_setup = false;
                            cx.cold.clear();
                            rewrite_body(&mut cx, body)?
                        } else {
                            if cx.late_setup {
                                let at = full
                                    .iter()
                                    .position(|s| matches!(s, Statement::Label(l) if l == SETUP))
                                    .ok_or_else(|| {
                                        RewriteError::Generated(format!(
                                            "{}: the set-up point {SETUP} was lost",
                                            f.name
                                        ))
                                    })?;
                                let setup = parse_statements(&inline_begin(&mut cx))?;
                                full.splice(at + 1..at + 1, setup);
                            }
                            // The slow paths after the full body's last instruction (which
                            // ends the thread or jumps: `two_bodies_ok`); the sites counted
                            // once, in the full body.
                            full.append(&mut cx.cold);
                            let c = cx.counts;
                            cx.body = Body::Quiet;
                            let quiet = rewrite_body(&mut cx, quiet)?;
                            cx.body = Body::Full;
                            cx.counts = c;
                            full.push(Statement::Label(QUIET_BODY.to_string()));
                            full.extend(quiet);
                            full
                        }
                    } else {
                        rewrite_body(&mut cx, body)?
                    };
                    let c = cx.counts;
                    if c != SiteCounts::default() {
                        let mut decls = parse_statements(TEMP_DECLS)?;
                        if cx.fast {
                            let mut pro = parse_statements(&prologue(&mut cx))?;
                            // After the function's own declarations.
                            let at = new_body
                                .iter()
                                .position(|s| !matches!(s, Statement::Var(_)))
                                .unwrap_or(new_body.len());
                            let tail = new_body.split_off(at);
                            new_body.append(&mut pro);
                            new_body.extend(tail);
                        }
                        decls.append(&mut new_body);
                        new_body = decls;
                    }
                    counts.loads += c.loads;
                    counts.stores += c.stores;
                    counts.atomics += c.atomics;
                    counts.drains += c.drains;
                    f.body = Some(new_body);
                }
                rest.push(Item::Func(f));
            }
            other => rest.push(other.clone()),
        }
    }
    if !saw_target {
        if let Some(t) = rt.items.iter().find(|i| matches!(i, Item::Target(_))) {
            header.push(t.clone());
        }
    }
    let mut items = header;
    items.extend(rest);
    insert_runtime(&mut items, rt, true);
    Ok(Rewritten {
        module: ptx::Module { items },
        counts,
    })
}

/// Temporaries of the blocks (registers are function-scoped, so every function gets the
/// same names; the prefix keeps them apart from NVRTC's `%r`, `%rd`, ...).
const TEMP_DECLS: &str = "\
.reg .pred %fhp<4>;
.reg .b16 %fhh<4>;
.reg .b32 %fhr<10>;
.reg .b64 %fhd<18>;
.reg .pred %fhq<8>;
.reg .b32 %fhc<4>;
.reg .b32 %fhk<9>;
.reg .b64 %fhe<3>;
";

/// What the fast path needs to know about the whole module.
struct Scan {
    /// A non-kernel function executes `exit` (a kernel's register counters would be lost).
    func_exits: bool,
    cta_atoms: bool,
}

impl Scan {
    fn module(m: &ptx::Module) -> Scan {
        fn walk(b: &[Statement], kernel: bool, s: &mut Scan) {
            for st in b {
                match st {
                    Statement::Inst(i) => match i.opcode {
                        Opcode::Exit if !kernel => s.func_exits = true,
                        Opcode::Atom | Opcode::Red
                            if scope_num(i, 1) == 0
                                && !matches!(mem_space(i), MemSpace::Shared | MemSpace::Other) =>
                        {
                            s.cta_atoms = true
                        }
                        _ => {}
                    },
                    Statement::Block(b) => walk(b, kernel, s),
                    _ => {}
                }
            }
        }
        let mut s = Scan {
            func_exits: false,
            cta_atoms: false,
        };
        for f in m.functions() {
            if let Some(b) = &f.body {
                walk(b, f.kind == FuncKind::Entry, &mut s);
            }
        }
        s
    }
}

// Offset of the counters pointer in the control block (runtime.cu's FhCtl).
const CTL_COUNTERS: u32 = 56;

/// PTX text deciding this launch's mode: `%fhq0` *full* (sites call the runtime), `%fhq1`
/// *quiet* (the launch buffers, but its selection function never selects — `p_w = 0`, or
/// no space buffered — and, under `scoped`, the module has no `.cta` atomic that could
/// use the CTA overlay: then no buffer, overlay or orphan queue ever holds an entry, every
/// runtime call would only count, and sites run the original instruction after counting
/// stores in registers). Neither: the launch does not buffer (sites run the original).
/// The host decides which (`layout::launch_mode`, the control block's mode bytes); the
/// kernel reads the byte for its module's kind (with no control block, neither: the byte
/// is not read, and the compares are and-ed with the pointer test).
/// `not_full`: a predicate also set to "the launch is not full" (the full test's second
/// destination), e.g. `"|%fhq5"`, or `""`.
fn mode_code(cx: &Ctx<'_>, not_full: &str) -> String {
    use super::layout::{CTL_MODE, MODE_FULL, MODE_QUIET};
    let byte = CTL_MODE + u32::from(cx.cta_atoms);
    format!(
        "ld.global.u64 %fhd15, [{PREFIX}ctl];\nsetp.ne.u64 %fhq2, %fhd15, 0;\n\
         @%fhq2 ld.u8 %fhh3, [%fhd15+{byte}];\n\
         setp.eq.and.u16 %fhq0{not_full}, %fhh3, {MODE_FULL}, %fhq2;\n\
         setp.eq.and.u16 %fhq1, %fhh3, {MODE_QUIET}, %fhq2;\n"
    )
}

/// Counter words (of the runtime's `counters`) where quiet launches add the stores they
/// saw, per space: the slots after the drain reasons (see `layout::read_stats`).
pub(crate) const SEEN_GLOBAL: u32 = 12;
pub(crate) const SEEN_SHARED: u32 = 13;

/// The original instruction as the fast path runs it.
fn original(i: &Instruction) -> String {
    format!("{}\n", pr(i))
}

/// The original guard as a predicate prefix.
fn guard_prefix(i: &Instruction) -> String {
    match &i.guard {
        None => String::new(),
        Some(g) => format!("@{}{} ", if g.negated { "!" } else { "" }, g.pred),
    }
}

/// Fast-path PTX text counting `n` stores of `i` (what `n` runtime calls would count in
/// `seen`), per space: a `.global`/`.shared` store by its instruction, a generic one by
/// its address.
fn count_store(
    cx: &Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
    addr: &Operand,
    n: u32,
) -> Result<String, RewriteError> {
    let g = guard_prefix(i);
    Ok(match sp {
        MemSpace::Global => format!("{g}add.u64 %fhd16, %fhd16, {n};\n"),
        MemSpace::Shared => format!("{g}add.u64 %fhd17, %fhd17, {n};\n"),
        _ => {
            let mut t = skip_if_unguarded(i, "{DONE}");
            let a = match addr {
                Operand::Addr {
                    base: AddrBase::Name(r),
                    offset: 0,
                } if cx.regs.width(r) == Some(64) => r.clone(),
                _ => {
                    t.push_str(&generic_addr(cx, i, sp, addr, 0, "%fhd8")?);
                    "%fhd8".to_string()
                }
            };
            let _ = writeln!(
                t,
                "isspacep.global %fhq2, {a};\nisspacep.shared %fhq3, {a};\n\
                 @%fhq2 add.u64 %fhd16, %fhd16, {n};\n@%fhq3 add.u64 %fhd17, %fhd17, {n};"
            );
            t
        }
    })
}

// Offsets in runtime.cu's FhThread.
const T_LEN: u32 = 4;
const T_LEN_S: u32 = 8;
const T_STORES: u32 = 16;
const T_TICKS: u32 = 32;
const T_PEAK: u32 = 112;
const T_SEEN: u32 = 64;
const T_MIXED: u32 = 136;
const T_LIVES: u32 = 152;
const T_BLOCKS: u32 = 120;
const T_CTA: u32 = 128;
const T_ATOM_PENDING: u32 = 148;
const T_TOTAL: u32 = 144;
// The set-up writes `total`, `atom_pending` and `lives` with one vector store.
const _: () =
    assert!(T_ATOM_PENDING == T_TOTAL + 4 && T_LIVES == T_TOTAL + 8 && T_TOTAL.is_multiple_of(16));
const T_ENTRIES: u32 = 176;
const T_PUSHED: u32 = 160;
// Offsets in FhCtl: the flags, the capacities, the exited threads, the live-holder count;
// after it (`layout::control_bytes`) the per-space thresholds, the liveness period - 1 and
// the flush histograms' bins.
const CTL_FLAGS: u32 = 20;
const CTL_CAPACITY: u32 = 24;
const CTL_THR: u32 = 80;
const CTL_LIVE1: u32 = 96;
const CTL_TOTAL: u32 = 112;
const CTL_TAG: u32 = 128;
const CTL_LAST: u32 = 140;
// The counters and the shared flush histogram (less 128), for an inlined drain.
const CTL_FLUSH: u32 = 144;
const CTL_EXITED: u32 = 64;
const CTL_HOLDERS: u32 = 72;
// Offset of the overlay length in FhCta.
const CTA_OV_LEN: u32 = 4;
/// `select::threshold(1.0)`: a space with this threshold selects every store, so the
/// inlined store skips the hash (`(h >> 11) < 2^53` holds for every `h`).
const ALWAYS: u64 = 1 << 53;

// The header's words a fast kernel keeps in registers (the *cache*), from `%fhd14`:
//   %fhk0 len, %fhk1/%fhk2 len_s[0]/[1], %fhk3 ticks, %fhe0 stores, %fhe1 blocks — the
//     words the inlined paths change; written back before each runtime call (which reads
//     and changes them) and read again after it ([`rt_call`]);
//   %fhk4 the liveness period - 1, %fhk5 capacity, %fhq4 (a predicate) scoped,
//     %fhq6/%fhq7 (predicates) "the space's threshold selects every store" (p_w = 1),
//     %fhe2 the CTA's area (from the header), %fhc3 the launch's threads - 1 (for the
//     exit) — set at the start, never changed.
// Only what the common paths read is kept: every register here is live through the whole
// kernel, and each one is a register the original kernel's own values compete with
// (issue 25: at most 16 extra per thread). What rarer paths need stays in memory and is
// read there: the mixed `prefix` (header word `mixed`, read by a store that hashes,
// 0 < p_w < 1), the per-space thresholds (the control block, same stores), the counters'
// and the shared flush histogram's addresses (the control block, read by a drain that
// records a flush). The statistics go where the host reads them as they happen: a store
// seen and not buffered is a `red.add` on the header's `seen` word, a store pushed one on
// its `pushed` word (the host counts it as seen and buffered: one instruction, as the
// register add was), and the longest buffer a `red.max` on its `peak` wherever the length
// can next fall (an inlined drain, and [`cache_store`] before anything else may drain);
// the runtime keeps its own in the same words, so the host's sums are unchanged.
// The device flavour sets the cache up at the kernel's entry (or a little later:
// [`setup_point`]) and keeps it to the thread's exit; the lockstep flavour loads it at
// each block's start and writes all of it back at the block's end, so the header is
// current between blocks, as it was when the inlined paths read and wrote the header
// itself (the device flavour with `eager_header` writes it back at each block's end too,
// keeping the registers). `%fhd15` holds the control block's address wherever the cache
// is live (the mode test leaves it there).

/// The changing words of the cache, read from the header.
fn cache_load() -> String {
    format!(
        "ld.v4.u32 {{%fhr8, %fhk0, %fhk1, %fhk2}}, [%fhd14];\n\
         ld.u32 %fhk3, [%fhd14+{T_TICKS}];\n\
         ld.u64 %fhe0, [%fhd14+{T_STORES}];\nld.u64 %fhe1, [%fhd14+{T_BLOCKS}];\n\
         setp.ne.u32 %fhq5, %fhk0, 0;\n"
    )
}

/// The constant words of the cache — the header's CTA area, the control block's
/// liveness period - 1, flags, capacity and whether each space's threshold selects every
/// store — as the device flavour's set-up loads them (the header's `mixed`, which a store
/// that hashes reads, the runtime's `fh_self` wrote when it set the header up).
fn cache_load_const() -> String {
    use super::layout::FLAG_SCOPED;
    format!(
        "ld.u64 %fhe2, [%fhd14+{T_CTA}];\n\
         ld.v2.u64 {{%fhd12, %fhd13}}, [%fhd15+{CTL_THR}];\n\
         setp.ge.u64 %fhq6, %fhd12, {ALWAYS};\nsetp.ge.u64 %fhq7, %fhd13, {ALWAYS};\n\
         ld.u32 %fhk4, [%fhd15+{CTL_LIVE1}];\n\
         ld.u32 %fhr8, [%fhd15+{CTL_FLAGS}];\nld.u32 %fhk5, [%fhd15+{CTL_CAPACITY}];\n\
         and.b32 %fhr8, %fhr8, {FLAG_SCOPED};\nsetp.ne.u32 %fhq4, %fhr8, 0;\n"
    )
}

/// The changing words of the cache, written back to the header, and the buffer's length
/// joined to its `peak` (what follows may drain).
fn cache_store() -> String {
    format!(
        "st.u32 [%fhd14+{T_LEN}], %fhk0;\nst.v2.u32 [%fhd14+{T_LEN_S}], {{%fhk1, %fhk2}};\n\
         st.u32 [%fhd14+{T_TICKS}], %fhk3;\nst.u64 [%fhd14+{T_STORES}], %fhe0;\n\
         st.u64 [%fhd14+{T_BLOCKS}], %fhe1;\nred.max.u32 [%fhd14+{T_PEAK}], %fhk0;\n"
    )
}

/// Whether the cache lives from the kernel's entry to its exit (the device flavour), not
/// from a block's start to its end.
fn cache_persists(cx: &Ctx<'_>) -> bool {
    cx.opts.flavor == Flavor::Device && !cx.opts.eager_header
}

/// A fast kernel's entry: the store counters (global, shared) start at 0; the device
/// flavour decides the launch's mode once here, and in a full launch sets the thread's
/// header up (`%fhd14`, for the inlined paths; not set, and never read, in other
/// launches) and the cache ([`inline_begin`]). A full launch's header is never 0: the host
/// marks a launch full only when it buffers (`layout`'s `launch_mode`), and the set-up
/// finds the header or traps, so the inlined paths do not test it. The lockstep flavour
/// calls `__fencehound_begin` and loads the cache in each block, where its loads are not
/// preemption points of their own.
fn prologue(cx: &mut Ctx<'_>) -> String {
    let mut t = String::from("mov.u64 %fhd16, 0;\nmov.u64 %fhd17, 0;\n");
    match (cx.opts.flavor, cx.body) {
        (Flavor::Device, Body::Full) => {
            // Two bodies: `%fhq5` is read in the full one only, where the mode test's
            // second destination (not full, or no control block) is false.
            t.push_str(&mode_code(cx, "|%fhq5"));
            // A launch that is not full runs the quiet body.
            let _ = writeln!(t, "@!%fhq0 bra {QUIET_BODY};");
            // Read by every thread: an exit needs the launch's threads - 1 also from a
            // thread that never reaches a late set-up ([`SETUP`]).
            t.push_str(&tag_words());
            if !cx.late_setup {
                t.push_str(&inline_begin(cx));
            }
        }
        (Flavor::Device, _) => {
            t.push_str("setp.ne.u64 %fhq5, %fhd16, 0;\n");
            t.push_str(&mode_code(cx, ""));
            let skip = cx.label();
            let _ = writeln!(t, "@!%fhq0 bra {skip};");
            t.push_str(&tag_words());
            t.push_str(&inline_begin(cx));
            let _ = writeln!(t, "{skip}:");
        }
        (Flavor::Lockstep, _) => t.push_str("setp.ne.u64 %fhq5, %fhd16, 0;\n"),
    }
    t
}

/// The control block's words at [`CTL_TAG`] — the header's tag, the scoped flag, the
/// capacity (`%fhk5`), the launch's threads - 1 (`%fhc3`, which an exit compares with) —
/// read before [`inline_begin`], at the kernel's entry (a set-up placed later still finds
/// them: no code between touches `%fh` registers).
fn tag_words() -> String {
    format!("ld.v4.u32 {{%fhr1, %fhr2, %fhk5, %fhc3}}, [%fhd15+{CTL_TAG}];\n")
}

/// SplitMix64's finaliser (`select::mix`) of `%fhd12` into `%fhd12` (`%fhd13` scratch).
fn mix_fhd12() -> String {
    format!(
        "add.u64 %fhd12, %fhd12, {add:#X};\n\
         shr.u64 %fhd13, %fhd12, 30;\nxor.b64 %fhd12, %fhd12, %fhd13;\n\
         mul.lo.u64 %fhd12, %fhd12, {mul1:#X};\n\
         shr.u64 %fhd13, %fhd12, 27;\nxor.b64 %fhd12, %fhd12, %fhd13;\n\
         mul.lo.u64 %fhd12, %fhd12, {mul2:#X};\n\
         shr.u64 %fhd13, %fhd12, 31;\nxor.b64 %fhd12, %fhd12, %fhd13;\n",
        add = crate::select::MIX_ADD,
        mul1 = crate::select::MIX_MUL1,
        mul2 = crate::select::MIX_MUL2,
    )
}

/// The device flavour's entry in a full launch: what `__fencehound_begin` does (runtime.cu,
/// `fh_self`: the thread's header found and set up for the launch), written into the
/// kernel, with the cache set from the values it computes instead of read back. A kernel's
/// entry is the first time its thread looks its header up in the launch, so the header is
/// set up without testing its tag first. Only the words the runtime reads are written —
/// the tag, `lives`, `cta`, `atom_pending`, `total` — and, when a store may hash, `mixed`
/// (the selection hash's per-thread part; the runtime computes it where it may be
/// missing: `fh_thread_prefix`); the cache's
/// changing words reach the header before every runtime call ([`rt_call`]). The control
/// block's layout is runtime.cu's `FhCtl` — `key` at 0, `launch`,
/// `flags`, `capacity` at 16, `ov_capacity`, `nthreads` at 32, `threads` at 40,
/// `overlays` at 48, `counters` at 56 — and after it the constants the host derives for
/// inlined code ([`super::layout::control_bytes`]): the per-space thresholds at 80, the
/// liveness period - 1 and the flush histograms' bins at 96, what the launch's shape
/// gives at 104-127 (whether it is one-dimensional, the threads per CTA and in all, the
/// strides of a thread's buffers and of a CTA's area, whether the selection hashes), and
/// the header's tag, the scoped flag, the capacity and threads - 1 at 128, the counters and the
/// shared flush histogram at 144 — so a one-dimensional
/// launch reads `%tid.x` and `%ctaid.x` alone, the thread's selection prefix is
/// computed only when a store may need it (0 < p_w < 1), and the host, not each thread,
/// checks that the launch fits the buffers.
fn inline_begin(cx: &mut Ctx<'_>) -> String {
    // (`%fhr1`, `%fhr2`, `%fhk5`, `%fhc3`: [`tag_words`], before it.)
    let (flat, index, hashed) = (cx.label(), cx.label(), cx.label());
    format!(
        // The constants the host derived (see `layout::control_bytes`): liveness - 1,
        // bins, flat, threads per CTA (96); the launch's threads, the strides, whether
        // stores hash (112); the header's tag, scoped, capacity (128). The launch fits the
        // buffers (`layout::begin_launch` checks), so the thread's header is not tested.
        "ld.v4.u32 {{%fhk4, %fhk8, %fhr5, %fhr9}}, [%fhd15+{CTL_LIVE1}];\n\
         ld.v4.u32 {{%fhr4, %fhr6, %fhr8, %fhc0}}, [%fhd15+{CTL_TOTAL}];\n\
         setp.ne.u32 %fhp2, %fhr5, 0;\n@%fhp2 bra {flat};\n\
         mov.u32 %fhr0, %ntid.x;\nmov.u32 %fhc1, %ntid.y;\n\
         mov.u32 %fhr3, %tid.z;\nmov.u32 %fhc2, %tid.y;\nmad.lo.u32 %fhr3, %fhr3, %fhc1, %fhc2;\n\
         mov.u32 %fhc2, %tid.x;\nmad.lo.u32 %fhr3, %fhr3, %fhr0, %fhc2;\n\
         mov.u32 %fhr0, %ctaid.z;\nmov.u32 %fhc1, %nctaid.y;\nmov.u32 %fhc2, %ctaid.y;\n\
         mad.lo.u32 %fhr0, %fhr0, %fhc1, %fhc2;\nmov.u32 %fhc1, %nctaid.x;\n\
         mov.u32 %fhc2, %ctaid.x;\nmad.lo.u32 %fhr0, %fhr0, %fhc1, %fhc2;\n\
         bra.uni {index};\n\
         {flat}:\nmov.u32 %fhr3, %tid.x;\nmov.u32 %fhr0, %ctaid.x;\n\
         {index}:\nmad.lo.u32 %fhr3, %fhr0, %fhr9, %fhr3;\n\
         ld.u64 %fhd11, [%fhd15+40];\nmad.wide.u32 %fhd14, %fhr3, %fhr6, %fhd11;\n\
         ld.u64 %fhd11, [%fhd15+48];\nmad.wide.u32 %fhe2, %fhr0, %fhr8, %fhd11;\n\
         ld.v2.u64 {{%fhd12, %fhd13}}, [%fhd15+{CTL_THR}];\n\
         setp.ge.u64 %fhq6, %fhd12, {ALWAYS};\nsetp.ge.u64 %fhq7, %fhd13, {ALWAYS};\n\
         mov.b64 {{%fhk0, %fhk1}}, %fhd16;\nmov.b64 {{%fhk2, %fhk3}}, %fhd16;\n\
         st.u32 [%fhd14], %fhr1;\nst.u64 [%fhd14+{T_CTA}], %fhe2;\n\
         st.v4.u32 [%fhd14+{T_TOTAL}], {{%fhr4, %fhk0, %fhk0, %fhk0}};\n\
         setp.eq.u32 %fhp2, %fhc0, 0;\n@%fhp2 bra {hashed};\n\
         ld.u64 %fhd11, [%fhd15];\ncvt.u64.u32 %fhd10, %fhr3;\n\
         xor.b64 %fhd12, %fhd11, %fhd10;\n{mix}st.u64 [%fhd14+{T_MIXED}], %fhd12;\n\
         {hashed}:\n\
         {scoped}\
         mov.u64 %fhe0, 0;\nmov.u64 %fhe1, 0;\n",
        mix = mix_fhd12(),
        // A module for one model never tests the launch's scoped flag.
        scoped = if cx.scoped().is_none() {
            "setp.ne.u32 %fhq4, %fhr2, 0;\n"
        } else {
            ""
        },
    )
}

/// Per block of a fast kernel in a full launch: what comes before the lane's code and
/// what comes at its end (`{DONE}` then jumps there). The device flavour keeps the cache
/// from the kernel's entry (nothing), unless `eager_header` (the test seam that keeps
/// the header current between blocks: the cache written back at the end); the lockstep
/// flavour looks the header up and loads the cache first, and writes it back at the end.
fn block_cache(cx: &Ctx<'_>) -> (String, String) {
    let back = cache_store();
    match cx.opts.flavor {
        Flavor::Device if cx.opts.eager_header => (String::new(), back),
        Flavor::Device => (String::new(), String::new()),
        Flavor::Lockstep => {
            let mut pre = call(&format!("{PREFIX}begin"), Some(("b64", "%fhd14")), &[]);
            pre.push_str(&cache_load());
            pre.push_str(&cache_load_const());
            (pre, back)
        }
    }
}

/// The runtime's `fh_fast_overlay` test inline, from the cache: under `scoped`, a
/// nonempty own CTA overlay goes to `slow`; otherwise (not `scoped`, or empty) to `empty`.
fn overlay_test(cx: &Ctx<'_>, empty: &str, slow: &str) -> String {
    let test = format!(
        "ld.volatile.u32 %fhr8, [%fhe2+{CTA_OV_LEN}];\n\
         setp.ne.u32 %fhp2, %fhr8, 0;\n@%fhp2 bra {slow};\n"
    );
    match cx.scoped() {
        None => format!("@!%fhq4 bra {empty};\n{test}"),
        Some(true) => test,
        // Not `scoped`: no overlay (the caller's code after this goes on to `empty`).
        Some(false) => String::new(),
    }
}

/// In a full launch, the first level of `__fencehound_load` inlined at a load of a
/// `.global` or `.shared` address (one runtime call per block): when the thread holds no
/// entry, no liveness drain is due and (global, `scoped`) no CTA overlay could hold one,
/// the call would only count the tick and return the address, so the block does that and
/// runs the original instruction (`{DONE}`: the end of the lane's code); else it goes on to
/// `slow`, the call (the tick taken back first: the call counts it). The same test as the
/// runtime's fast path: `len == 0` (which implies its `fh_miss`), `liveness - 1 < ticks +
/// 1` (unsigned) for `liveness > 0 && ticks + 1 >= liveness`, and under `scoped` for a
/// global load the own CTA's overlay length (its `fh_fast_overlay`, read as the runtime
/// reads it), all from the cache. A thread that holds entries takes the fast path too
/// when none of them can overlap the load (the runtime's `fh_miss`: the address filter's
/// bit of the load's 8-byte block is clear; `gaddr` computes the load's generic address
/// into `%fhd8`). The load is at most 8 bytes (one runtime call) at an address its size
/// divides, so it stays in that block; a misaligned one faults at the original load.
fn inline_load(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
    gaddr: &str,
) -> Option<(String, String)> {
    if !cx.fast || !matches!(sp, MemSpace::Global | MemSpace::Shared) {
        return None;
    }
    let slow = cx.label();
    let (fast, held) = (cx.label(), cx.label());
    let mut t = String::new();
    // In a module for `scoped` alone a global load's overlay length joins the one test
    // (entries, liveness, overlay), and the slow side tells them apart; in a module for
    // both models the overlay is tested after it, when the launch is `scoped`.
    let joined = sp == MemSpace::Global && cx.scoped() == Some(true);
    let (ov_load, ov_or) = if joined {
        (
            format!("ld.volatile.u32 %fhr8, [%fhe2+{CTA_OV_LEN}];\n"),
            "setp.ne.or.u32 %fhp2, %fhr8, 0, %fhp2;\n",
        )
    } else {
        (String::new(), "")
    };
    let _ = write!(
        t,
        "add.u32 %fhk3, %fhk3, 1;\n{ov_load}setp.lt.or.u32 %fhp2, %fhk4, %fhk3, %fhq5;\n\
         {ov_or}@%fhp2 bra {held};\n{fast}:\n"
    );
    if sp == MemSpace::Global && !joined {
        let ok = cx.label();
        t.push_str(&overlay_test(cx, &ok, &slow));
        let _ = writeln!(t, "{ok}:");
    }
    let _ = write!(
        t,
        "{}{COLD}{held}:\nsetp.lt.u32 %fhp2, %fhk4, %fhk3;\n@%fhp2 bra {slow};\n",
        original(i)
    );
    if joined {
        let _ = write!(t, "setp.ne.u32 %fhp2, %fhr8, 0;\n@%fhp2 bra {slow};\n");
    }
    let _ = write!(
        t,
        "{gaddr}cvt.u32.u64 %fhr7, %fhd8;\nbfe.u32 %fhr7, %fhr7, 3, 6;\n\
         shl.b64 %fhd9, 1, %fhr7;\nand.b64 %fhd9, %fhd9, %fhe1;\n\
         setp.eq.u64 %fhp2, %fhd9, 0;\n@%fhp2 bra {fast};\n"
    );
    Some((t, format!("{slow}:\nsub.u32 %fhk3, %fhk3, 1;\n")))
}

/// In a full launch, `__fencehound_store`'s fast paths inlined at a scalar, non-release
/// store to `.global` or `.shared` memory of space `s` (0 global, 1 shared), `size` bytes,
/// whose generic address is in `%fhd0` and value bits in `%fhd1` (`masked`: already
/// zero-extended from `size` bytes): when the store overlaps none of the thread's own
/// entries of its space (no write-after-write drain), the selection function decides
/// (SplitMix64 of the header's `mixed` ^ the store count, against the per-space
/// threshold, 0 for a space not buffered; a threshold of 2^53 selects every store without
/// the hash): selected with room in the space, the entry is pushed here (the address
/// checked by a load first, as the runtime's `fh_read` does, and the statistics the
/// runtime keeps: `stores`, `seen`, `buffered`, `peak`, `blocks`, the live-holder count);
/// not selected and no CTA overlay to consult (`scoped`, global), the store is counted
/// and performed (`{DONE}` is the end of the lane's code). Anything else — a full space,
/// an overlapping entry, a nonempty overlay — falls through to `slow`, the call, which
/// starts over from the header: this code changes nothing before it has decided. The
/// same effects as the runtime's path (runtime.cu, `__fencehound_store`), without the
/// call, on the cache. The lockstep flavour runs it too, so the differential test checks
/// it write for write against the native handlers.
///
/// The filter bit is the 8-byte block of the store's address only: a store of at most 8
/// bytes at an address its size divides stays in that block, and a misaligned one faults
/// (PTX requires natural alignment; the vgpu faults too) at the address check or at the
/// original store, before anything is buffered.
fn inline_store(
    cx: &mut Ctx<'_>,
    s: u32,
    size: u32,
    masked: bool,
    key_bits: u64,
    orig: &str,
) -> (String, String) {
    let slow = cx.label();
    let nowaw = cx.label();
    let unsel = cx.label();
    let sel = cx.label();
    let len_s = format!("%fhk{}", 1 + s);
    let always = format!("%fhq{}", 6 + s);
    let thr = CTL_THR + 8 * s;
    let seen = T_SEEN + 8 * s;
    let pushed = T_PUSHED + 8 * s;
    let mut t = String::new();
    // The filter bit of the store's 8-byte block (runtime.cu, fh_blocks), then: no own
    // entry of the space may overlap; then the selection (select::selected).
    let _ = write!(
        t,
        "cvt.u32.u64 %fhr7, %fhd0;\nbfe.u32 %fhr7, %fhr7, 3, 6;\nshl.b64 %fhd10, 1, %fhr7;\n\
         setp.eq.u32 %fhp2, {len_s}, 0;\n@%fhp2 bra {nowaw};\n\
         and.b64 %fhd11, %fhe1, %fhd10;\nsetp.ne.u64 %fhp2, %fhd11, 0;\n@%fhp2 bra {slow};\n\
         {nowaw}:\n\
         @{always} bra {sel};\n\
         ld.u64 %fhd12, [%fhd14+{T_MIXED}];\nxor.b64 %fhd12, %fhd12, %fhe0;\n{mix}\
         shr.u64 %fhd12, %fhd12, 11;\nld.u64 %fhd13, [%fhd15+{thr}];\n\
         setp.ge.u64 %fhp2, %fhd12, %fhd13;\n@%fhp2 bra {unsel};\n\
         {sel}:\n\
         setp.ge.u32 %fhp2, {len_s}, %fhk5;\n@%fhp2 bra {slow};\n",
        mix = mix_fhd12(),
    );
    // Selected, with room: the address check (the runtime's fh_read, a load of the
    // store's size: `.volatile`, as the runtime's is an `asm volatile`, so that ptxas
    // keeps it although nothing reads its value — a bad address faults at its store, not
    // at the drain), then the push and the statistics.
    let check = match size {
        1 => "ld.volatile.u8 %fhh2, [%fhd0];",
        2 => "ld.volatile.u16 %fhh2, [%fhd0];",
        4 => "ld.volatile.u32 %fhr9, [%fhd0];",
        _ => "ld.volatile.u64 %fhd12, [%fhd0];",
    };
    let _ = writeln!(t, "{check}");
    if size < 8 && !masked {
        let _ = writeln!(t, "and.b64 %fhd1, %fhd1, {};", u64::MAX >> (64 - 8 * size));
    }
    let _ = write!(
        t,
        "mad.wide.u32 %fhd13, %fhk0, 16, %fhd14;\n\
         and.b64 %fhd12, %fhd0, 0x00ffffffffffffff;\nor.b64 %fhd12, %fhd12, {key_bits};\n\
         st.v2.u64 [%fhd13+{T_ENTRIES}], {{%fhd12, %fhd1}};\n\
         add.u64 %fhe0, %fhe0, 1;\nred.add.u64 [%fhd14+{pushed}], 1;\nadd.u32 %fhk0, %fhk0, 1;\n\
         or.b64 %fhe1, %fhe1, %fhd10;\nadd.u32 {len_s}, {len_s}, 1;\n\
         @%fhq5 bra {{DONE}};\nsetp.ne.u32 %fhq5, %fhk0, 0;\n\
         red.add.u32 [%fhd15+{CTL_HOLDERS}], 1;\n{COLD}\
         {unsel}:\n"
    );
    // Not selected: counted and performed, unless a CTA overlay may hold the address.
    if s == 0 {
        let ok = cx.label();
        t.push_str(&overlay_test(cx, &ok, &slow));
        let _ = writeln!(t, "{ok}:");
    }
    let _ = write!(
        t,
        "add.u64 %fhe0, %fhe0, 1;\nred.add.u64 [%fhd14+{seen}], 1;\n{orig}bra.uni {{DONE}};\n"
    );
    (t, format!("{slow}:\n"))
}

/// In a full launch, `__fencehound_drain` inlined at a fence or barrier for a thread that
/// holds entries (`%fhk0`, not 0), when the CTA overlay has no part in it (not `scoped`;
/// else see below: otherwise `slow`, the call, which takes the lock): every entry to
/// memory, oldest first — a plain store of its size written here, any other through
/// `__fencehound_write_entry` (the runtime's `fh_write_entry`) — then what the runtime's
/// drain does after its loop: the buffer empty, the live-holder count down by one, the
/// flush recorded per space (its length's histogram bin and the reason's count).
fn inline_drain(cx: &mut Ctx<'_>, meta: u32, slow: &str) -> String {
    let top = cx.label();
    let next = cx.label();
    let (w1, w2, w8, strong) = (cx.label(), cx.label(), cx.label(), cx.label());
    let write_entry = self::call(
        &format!("{PREFIX}write_entry"),
        None,
        &[("b64", "%fhd10"), ("b64", "%fhd11")],
    );
    let reason = 8 * ((meta >> 8) & 15);
    let mut t = String::new();
    // Under `scoped` only when the CTA overlay has no part in the drain: a CTA-scope
    // drain of shared entries alone (the runtime commits those without its lock too), or
    // a drain to memory while the overlay is empty (read as `fh_fast_overlay` reads it).
    let go = cx.label();
    let scoped = cx.scoped();
    if scoped.is_none() {
        let _ = writeln!(t, "@!%fhq4 bra {go};");
    }
    if scoped == Some(false) {
        // Not `scoped`: no overlay.
    } else if meta & m_scope(3) == 0 {
        let _ = write!(t, "setp.ne.u32 %fhp2, %fhk1, 0;\n@%fhp2 bra {slow};\n");
    } else {
        let _ = write!(
            t,
            "ld.volatile.u32 %fhr8, [%fhe2+{CTA_OV_LEN}];\n\
             setp.ne.u32 %fhp2, %fhr8, 0;\n@%fhp2 bra {slow};\n"
        );
    }
    // The entries, `%fhd9` from the first to `%fhd12`, past the last. The key's bits
    // 56-61 without the space's (bit 59): size - 1 (bits 0-2) and the semantics (bits
    // 4-5, 0 for a weak store), so one compare picks a weak store's size. A store narrower
    // than its 64-bit source register writes the register's low bytes (PTX allows the
    // wider operand), so the value needs no conversion.
    let _ = write!(
        t,
        "{go}:\n\
         add.u64 %fhd9, %fhd14, {T_ENTRIES};\nmad.wide.u32 %fhd12, %fhk0, 16, %fhd9;\n\
         {top}:\n\
         ld.v2.u64 {{%fhd10, %fhd11}}, [%fhd9];\n\
         mov.b64 {{%fhr7, %fhr8}}, %fhd10;\nand.b32 %fhr8, %fhr8, 0x37000000;\n\
         and.b64 %fhd13, %fhd10, 0x00ffffffffffffff;\n\
         setp.eq.u32 %fhp2, %fhr8, 0x03000000;\n@%fhp2 bra {{W4}};\n\
         setp.gt.u32 %fhp2, %fhr8, 0x07000000;\n@%fhp2 bra {strong};\n\
         setp.eq.u32 %fhp2, %fhr8, 0x07000000;\n@%fhp2 bra {w8};\n\
         setp.eq.u32 %fhp2, %fhr8, 0x01000000;\n@%fhp2 bra {w2};\n\
         {w1}:\nst.u8 [%fhd13], %fhd11;\nbra.uni {next};\n\
         {w2}:\nst.u16 [%fhd13], %fhd11;\nbra.uni {next};\n\
         {w8}:\nst.u64 [%fhd13], %fhd11;\nbra.uni {next};\n\
         {strong}:\n{write_entry}bra.uni {next};\n\
         {{W4}}:\nst.u32 [%fhd13], %fhd11;\n\
         {next}:\n\
         add.u64 %fhd9, %fhd9, 16;\nsetp.lt.u64 %fhp2, %fhd9, %fhd12;\n@%fhp2 bra {top};\n"
    );
    let w4 = cx.label();
    let mut t = t.replace("{W4}", &w4);
    // After the loop (runtime.cu, fh_drain_fast): the buffer empty, the flush recorded
    // per space.
    let (rec1, done) = (cx.label(), cx.label());
    let _ = write!(
        t,
        "red.max.u32 [%fhd14+{T_PEAK}], %fhk0;\n\
         mov.u32 %fhk0, 0;\nmov.u64 %fhe1, 0;\nsetp.ne.u32 %fhq5, %fhk0, 0;\n\
         red.add.u32 [%fhd15+{CTL_HOLDERS}], -1;\n\
         ld.v2.u64 {{%fhd10, %fhd11}}, [%fhd15+{CTL_FLUSH}];\n\
         setp.eq.u32 %fhp2, %fhk1, 0;\n@%fhp2 bra {rec1};\n\
         mad.wide.u32 %fhd9, %fhk1, 8, %fhd10;\n\
         red.add.u64 [%fhd9+128], 1;\ncvt.u64.u32 %fhd9, %fhk1;\nred.add.u64 [%fhd10+{reason}], %fhd9;\n\
         mov.u32 %fhk1, 0;\n\
         {rec1}:\n\
         setp.eq.u32 %fhp2, %fhk2, 0;\n@%fhp2 bra {done};\n\
         mad.wide.u32 %fhd9, %fhk2, 8, %fhd11;\n\
         red.add.u64 [%fhd9+128], 1;\ncvt.u64.u32 %fhd9, %fhk2;\nred.add.u64 [%fhd10+{reason}], %fhd9;\n\
         mov.u32 %fhk2, 0;\n\
         {done}:\n{COLD}"
    );
    t
}

fn parse_statements(text: &str) -> Result<Vec<Statement>, RewriteError> {
    // The markers of original instructions, numbered (labels are unique in a function).
    let mut numbered = String::with_capacity(text.len());
    for (k, part) in text.split(ORIGINAL).enumerate() {
        if k > 0 {
            let _ = write!(numbered, "{ORIGINAL}{k}");
        }
        numbered.push_str(part);
    }
    let src = format!(
        ".version 9.0\n.target sm_75\n.address_size 64\n.func {PREFIX}snippet()\n{{\n{numbered}}}\n"
    );
    let m = ptx::parse("<fencehound block>", &src)
        .map_err(|e| RewriteError::Generated(format!("{e}\n{text}")))?;
    let mut body = m
        .items
        .into_iter()
        .find_map(|i| match i {
            Item::Func(f) => f.body,
            _ => None,
        })
        .ok_or_else(|| RewriteError::Generated(text.to_string()))?;
    mark_generated(&mut body, &mut false);
    Ok(body)
}

/// Removes the [`ORIGINAL`] labels of a parsed block; the instruction after each keeps its
/// position, every other instruction gets [`GENERATED`].
fn mark_generated(body: &mut Vec<Statement>, original_next: &mut bool) {
    body.retain_mut(|s| match s {
        Statement::Label(l) if l.starts_with(ORIGINAL) => {
            *original_next = true;
            false
        }
        Statement::Inst(i) => {
            if !std::mem::take(original_next) {
                i.pos = GENERATED;
            }
            true
        }
        Statement::Block(b) => {
            mark_generated(b, original_next);
            true
        }
        _ => true,
    });
}

fn set_loc(body: &mut [Statement], loc: &Option<ptx::Loc>) {
    for s in body {
        match s {
            Statement::Inst(i) => i.loc = loc.clone(),
            Statement::Block(b) => set_loc(b, loc),
            _ => {}
        }
    }
}

/// Puts the runtime's variables (and functions, with `funcs`) before the module's first
/// function: after the header and the variables declared before it, so those keep their
/// addresses, and before any use.
pub(super) fn insert_runtime(items: &mut Vec<Item>, rt: &ptx::Module, funcs: bool) {
    let at = items
        .iter()
        .position(|i| matches!(i, Item::Func(_)))
        .unwrap_or(items.len());
    let add: Vec<Item> = rt
        .items
        .iter()
        .filter(|i| matches!(i, Item::Var(_)) || (funcs && matches!(i, Item::Func(_))))
        .cloned()
        .collect();
    items.splice(at..at, add);
}

/// The reference module of the differential test (see `super::normalize_reference`).
pub(super) fn normalize_reference(m: &ptx::Module) -> Result<ptx::Module, RewriteError> {
    let rt = runtime_module()?;
    let mut out = m.clone();
    for item in &mut out.items {
        if let Item::Func(f) = item {
            if f.kind == FuncKind::Entry {
                if let Some(body) = &mut f.body {
                    ret_to_exit(body);
                }
            }
        }
    }
    insert_runtime(&mut out.items, rt, false);
    Ok(out)
}

pub(super) fn ret_to_exit(body: &mut [Statement]) {
    for s in body {
        match s {
            Statement::Inst(i) if i.opcode == Opcode::Ret => {
                i.opcode = Opcode::Exit;
                i.mods.retain(|m| *m != Mod::Uni);
            }
            Statement::Block(b) => ret_to_exit(b),
            _ => {}
        }
    }
}

fn rewrite_body(cx: &mut Ctx<'_>, body: Vec<Statement>) -> Result<Vec<Statement>, RewriteError> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Statement::Inst(i) => match block_for(cx, &i)? {
                Some(mut stmts) => {
                    set_loc(&mut stmts, &i.loc);
                    out.extend(stmts);
                }
                None => out.push(Statement::Inst(i)),
            },
            Statement::Block(b) => {
                cx.nested += 1;
                let inner = rewrite_body(cx, b);
                cx.nested -= 1;
                out.push(Statement::Block(inner?));
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

fn pr(i: &Instruction) -> String {
    format!("{ORIGINAL}:\n{}", ptx::printer::instruction_to_string(i))
}

/// A label put before the text of an original (or original-derived) instruction in a
/// block's text; [`parse_statements`] removes it and gives every other instruction of the
/// block [`GENERATED`] as its position.
const ORIGINAL: &str = "$__fh_original";

/// The position of code the rewrite generates: PTX line 0, which no parsed instruction
/// has. The vgpu makes it quiet when asked (`fencehound_vgpu::Quiet::generated`), so the
/// instrumented kernel meets the scheduler where the original does.
pub const GENERATED: ptx::Pos = ptx::Pos { line: 0, col: 0 };

/// What kind of block an instruction needs.
fn block_for(cx: &mut Ctx<'_>, i: &Instruction) -> Result<Option<Vec<Statement>>, RewriteError> {
    match i.opcode {
        Opcode::Ld | Opcode::Ldu => {
            let sp = mem_space(i);
            if sp == MemSpace::Other {
                return Ok(None);
            }
            cx.counts.loads += 1;
            load_block(cx, i, sp).map(Some)
        }
        Opcode::St => {
            let sp = mem_space(i);
            if sp == MemSpace::Other {
                return Ok(None);
            }
            cx.counts.stores += 1;
            store_block(cx, i, sp).map(Some)
        }
        Opcode::Atom | Opcode::Red if i.vector().is_some() => {
            // Its elements are atomics on several words: the runtime's atomic path (one
            // word's drain) does not cover them.
            Err(cx.unsupported(i, "vector atomics are not instrumented"))
        }
        Opcode::Atom | Opcode::Red => {
            let sp = mem_space(i);
            if sp == MemSpace::Other {
                return Ok(None);
            }
            cx.counts.atomics += 1;
            atom_block(cx, i, sp).map(Some)
        }
        Opcode::Membar => {
            let scope = match i.scope() {
                Some(Mod::Cta) => 0,
                Some(Mod::Sys) => 2,
                _ => 1,
            };
            cx.counts.drains += 1;
            drain_block(cx, i, m_scope(scope) | m_reason(DrainReason::Fence)).map(Some)
        }
        Opcode::Fence => {
            if i.has(Mod::Proxy) || i.sem() == Some(Mod::Acquire) {
                // Proxy fences order other proxies (no effect on buffers); acquire fences
                // order later accesses, not earlier stores (the drain table: nothing).
                return Ok(None);
            }
            cx.counts.drains += 1;
            drain_block(
                cx,
                i,
                m_scope(scope_num(i, 1)) | m_reason(DrainReason::Fence),
            )
            .map(Some)
        }
        Opcode::Bar | Opcode::Barrier => {
            let reason = if i.has(Mod::Warp) {
                DrainReason::WarpSync
            } else {
                DrainReason::Barrier
            };
            cx.counts.drains += 1;
            drain_block(cx, i, m_scope(0) | m_reason(reason)).map(Some)
        }
        Opcode::Exit => {
            cx.counts.drains += 1;
            exit_block(cx, i).map(Some)
        }
        Opcode::Ret if cx.is_kernel => {
            // A kernel's `ret` is its threads' exit. The lockstep flavour writes it as
            // `exit` (see `normalize_reference`) so that the block ends in a preemption
            // point; the device flavour keeps the `ret`, so that on the vgpu the
            // instrumented kernel meets the scheduler where the original does (a `ret` is
            // no preemption point, an `exit` is).
            cx.counts.drains += 1;
            let mut e = i.clone();
            if cx.opts.flavor == Flavor::Lockstep {
                e.opcode = Opcode::Exit;
                e.mods.retain(|m| *m != Mod::Uni);
            }
            exit_block(cx, &e).map(Some)
        }
        Opcode::Call if cx.fast && cache_persists(cx) => {
            // The function may call the runtime, which reads and changes the header: in a
            // full launch the cache is written back before the call and read again after.
            let t = match cx.body {
                Body::Both => {
                    let (before, after) = (cx.label(), cx.label());
                    format!(
                        "@!%fhq0 bra {before};\n{}{before}:\n{}\n@!%fhq0 bra {after};\n{}{after}:\n",
                        cache_store(),
                        pr(i),
                        cache_load()
                    )
                }
                Body::Full => format!("{}{}\n{}", cache_store(), pr(i), cache_load()),
                Body::Quiet => return Ok(None),
            };
            parse_statements(&t).map(Some)
        }
        Opcode::Cp => Err(cx.unsupported(i, "asynchronous copies are not instrumented")),
        Opcode::Ldmatrix => Err(cx.unsupported(i, "ldmatrix is not instrumented")),
        // A fragment load would miss the thread's own buffered stores, a fragment store
        // would bypass the buffer; `wmma.mma` touches only registers.
        Opcode::Wmma if i.has(Mod::Load) || i.has(Mod::Store) => {
            Err(cx.unsupported(i, "wmma loads and stores are not instrumented"))
        }
        // An arrival is a release operation: passed through as it is, it would leave the
        // thread's buffered stores behind it (a false failure on the device).
        Opcode::Mbarrier => Err(cx.unsupported(i, "mbarrier operations are not instrumented")),
        _ => Ok(None),
    }
}

/// The original instruction's guard as branch conditions that skip lanes for which the
/// instruction does nothing.
fn skip_if_unguarded(i: &Instruction, label: &str) -> String {
    match &i.guard {
        None => String::new(),
        Some(g) => format!(
            "@{}{} bra {label};\n",
            if g.negated { "" } else { "!" },
            g.pred
        ),
    }
}

/// Wraps per-lane code. Device: guard check, code. Lockstep: marker, one lane at a time in
/// lane order, marker. `final_inst` (fences, barriers, exits) comes last, with the
/// original guard, after an "end before final" marker in the lockstep flavour.
fn wrap(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    lane_code: &str,
    fast_code: &str,
    final_inst: Option<&Instruction>,
) -> Result<Vec<Statement>, RewriteError> {
    wrap_early(cx, i, lane_code, fast_code, final_inst, false)
}

/// [`wrap`], and with `empty_skips` (a drain to the CTA: nothing to do without entries,
/// in any launch) a thread of a fast kernel's device flavour that holds no entry
/// (`%fhq5` clear: also in every launch that is not full) goes straight to the final
/// instruction — one predicated branch for the common barrier. The lockstep flavour keeps
/// its markers (the scheduler's view of the block).
fn wrap_early(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    lane_code: &str,
    fast_code: &str,
    final_inst: Option<&Instruction>,
    empty_skips: bool,
) -> Result<Vec<Statement>, RewriteError> {
    let mut t = String::new();
    // In a fast kernel: the runtime only in a full launch, else `fast_code` (which
    // applies the original guard itself; `{DONE}` is the end of the lane's code).
    // The cache of the header's words (see `block_cache`) around the full launch's code.
    let lane = |cx: &mut Ctx<'_>, done: &str, skip: &str| -> Result<String, RewriteError> {
        let fast = cx.label();
        let (pre, back) = block_cache(cx);
        let (end, tail) = if back.is_empty() {
            (done.to_string(), String::new())
        } else {
            let end = cx.label();
            (end.clone(), format!("{end}:\n{back}"))
        };
        // A full body's slow paths out of line ([`COLD`]); elsewhere in line.
        let code = match lane_code.split_once(COLD) {
            Some((hot, cold)) if cx.body == Body::Full && cx.nested == 0 => {
                let text = format!("{cold}bra.uni {end};\n").replace("{DONE}", &end);
                let mut stmts = parse_statements(&text)?;
                set_loc(&mut stmts, &i.loc);
                cx.cold.extend(stmts);
                hot.replace("{DONE}", &end)
            }
            _ => lane_code
                .replace(COLD, &format!("bra.uni {end};\n"))
                .replace("{DONE}", &end),
        };
        let code = format!("{code}{tail}");
        Ok(match cx.body {
            Body::Both => format!(
                "@!%fhq0 bra {fast};\n{skip}{pre}{code}bra.uni {done};\n{fast}:\n{}",
                fast_code.replace("{DONE}", done)
            ),
            // One body per mode (the lockstep flavour never splits: it is `Both`).
            Body::Full => format!("{skip}{pre}{code}"),
            Body::Quiet => fast_code.replace("{DONE}", done),
        })
    };
    match cx.opts.flavor {
        Flavor::Device => {
            let end = cx.label();
            if cx.fast && empty_skips && cx.body != Body::Quiet {
                let _ = writeln!(t, "@!%fhq5 bra {end};");
            }
            if cx.fast {
                let skip = skip_if_unguarded(i, &end);
                t.push_str(&lane(cx, &end, &skip)?);
            } else {
                t.push_str(&skip_if_unguarded(i, &end));
                // (Only a fast kernel's blocks have a `COLD` line.)
                t.push_str(lane_code);
            }
            let _ = writeln!(t, "{end}:");
        }
        Flavor::Lockstep => {
            let top = cx.label();
            let next = cx.label();
            let _ = writeln!(t, "ld.volatile.global.u32 %fhr0, [{MARK}];");
            t.push_str("activemask.b32 %fhr1;\nmov.b32 %fhr2, %fhr1;\n");
            let _ = writeln!(t, "{top}:");
            t.push_str(
                "neg.s32 %fhr3, %fhr2;\nand.b32 %fhr3, %fhr2, %fhr3;\n\
                 mov.u32 %fhr4, %lanemask_eq;\nsetp.eq.b32 %fhp0, %fhr3, %fhr4;\n",
            );
            let _ = writeln!(t, "@!%fhp0 bra {next};");
            t.push_str(&skip_if_unguarded(i, &next));
            if cx.fast {
                let mode = mode_code(cx, "");
                t.push_str(&mode);
                t.push_str(&lane(cx, &next, "")?);
            } else {
                t.push_str(lane_code);
            }
            let _ = writeln!(t, "{next}:");
            t.push_str(
                "vote.sync.ballot.b32 %fhr5, %fhp0, %fhr1;\nxor.b32 %fhr2, %fhr2, %fhr3;\n\
                 setp.ne.b32 %fhp0, %fhr2, 0;\n",
            );
            let _ = writeln!(t, "@%fhp0 bra {top};");
            // Before a final instruction every lane of the block is "pending": the step
            // that runs it (guard true or not) belongs to the block, as the step of the
            // original instruction belonged to it.
            let mark = if final_inst.is_some() { 8 } else { 4 };
            let _ = writeln!(t, "ld.volatile.global.u32 %fhr0, [{MARK}+{mark}];");
        }
    }
    if let Some(f) = final_inst {
        t.push_str(&pr(f));
        t.push('\n');
    }
    parse_statements(&t)
}

/// PTX text computing the generic address of element `k` (`offset + extra`) of memory
/// operand `addr` of `i` into `dst`.
fn generic_addr(
    cx: &Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
    addr: &Operand,
    extra: i64,
    dst: &str,
) -> Result<String, RewriteError> {
    let Operand::Addr { base, offset } = addr else {
        return Err(cx.unsupported(i, "expected an address operand"));
    };
    let off = offset + extra;
    let mut t = String::new();
    // The space the base's value is an address in.
    let mut base_space = sp;
    match base {
        AddrBase::Imm(v) => {
            let _ = writeln!(t, "mov.u64 {dst}, {};", (*v as i64).wrapping_add(off));
        }
        AddrBase::Name(n) => match cx.regs.width(n) {
            Some(64) => {
                let _ = writeln!(t, "add.s64 {dst}, {n}, {off};");
            }
            Some(32) if off == 0 => {
                let _ = writeln!(t, "cvt.u64.u32 {dst}, {n};");
            }
            Some(32) => {
                let _ = writeln!(t, "cvt.u64.u32 {dst}, {n};\nadd.s64 {dst}, {dst}, {off};");
            }
            Some(_) => return Err(cx.unsupported(i, format!("address register `{n}` width"))),
            None => {
                let space = cx.vars.spaces.get(n.as_str()).copied();
                match space {
                    Some(Space::Global) => base_space = MemSpace::Global,
                    Some(Space::Shared) => base_space = MemSpace::Shared,
                    _ => {
                        return Err(cx.unsupported(
                            i,
                            format!("`{n}` is neither a register nor a global/shared variable"),
                        ))
                    }
                }
                if sp != MemSpace::Generic && sp != base_space {
                    return Err(cx.unsupported(i, format!("`{n}` is in another state space")));
                }
                let _ = writeln!(t, "mov.u64 {dst}, {n};\nadd.s64 {dst}, {dst}, {off};");
            }
        },
    }
    match base_space {
        MemSpace::Global => {
            let _ = writeln!(t, "cvta.global.u64 {dst}, {dst};");
        }
        MemSpace::Shared => {
            let _ = writeln!(t, "cvta.shared.u64 {dst}, {dst};");
        }
        _ => {}
    }
    Ok(t)
}

/// `addr` with `extra` added to its offset.
fn shifted(addr: &Operand, extra: i64) -> Operand {
    match addr {
        Operand::Addr { base, offset } => Operand::Addr {
            base: base.clone(),
            offset: offset + extra,
        },
        o => o.clone(),
    }
}

/// A call of a runtime entry point that takes the thread's header first: the header the
/// kernel found at entry (`%fhd14`) in a fast kernel of the device flavour, where every
/// call happens in a full launch; else 0, and the runtime looks it up (`fh_self`).
///
/// In a fast kernel (a full launch) the cache is written back to the header before the
/// call, which reads and changes those words, and read again after it.
fn rt_call(cx: &Ctx<'_>, func: &str, ret: Option<(&str, &str)>, args: &[(&str, &str)]) -> String {
    let header = if cx.has_header() { "%fhd14" } else { "0" };
    let mut all = vec![("b64", header)];
    all.extend_from_slice(args);
    if cx.fast {
        format!("{}{}{}", cache_store(), call(func, ret, &all), cache_load())
    } else {
        call(func, ret, &all)
    }
}

/// A call sequence in its own `{ }` scope (as NVRTC writes them).
fn call(func: &str, ret: Option<(&str, &str)>, args: &[(&str, &str)]) -> String {
    let mut t = String::from("{\n");
    let mut names = Vec::new();
    for (k, (ty, val)) in args.iter().enumerate() {
        let _ = writeln!(
            t,
            ".param .{ty} fh_arg{k};\nst.param.{ty} [fh_arg{k}], {val};"
        );
        names.push(format!("fh_arg{k}"));
    }
    match ret {
        Some((ty, dst)) => {
            let _ = writeln!(
                t,
                ".param .{ty} fh_ret;\ncall.uni (fh_ret), {func}, ({});\nld.param.{ty} {dst}, [fh_ret];",
                names.join(", ")
            );
        }
        None => {
            let _ = writeln!(t, "call.uni {func}, ({});", names.join(", "));
        }
    }
    t.push_str("}\n");
    t
}

/// The instruction's modifiers without the vector width, for one element.
fn scalar_mods(i: &Instruction) -> Vec<Mod> {
    i.mods
        .iter()
        .copied()
        .filter(|m| !matches!(m, Mod::V2 | Mod::V4 | Mod::V8))
        .collect()
}

fn elem_size(cx: &Ctx<'_>, i: &Instruction) -> Result<u32, RewriteError> {
    let ty = i.ty().ok_or_else(|| cx.unsupported(i, "no type"))?;
    type_bytes(ty).ok_or_else(|| cx.unsupported(i, "element type wider than 8 bytes"))
}

/// A load's or store's element size and its register (or value) operands — operand
/// `which`, split when it is a vector — for the forms the rewrite handles: two operands
/// (no cache policy), at most 4 elements.
fn access_elems(
    cx: &Ctx<'_>,
    i: &Instruction,
    which: usize,
) -> Result<(u32, Vec<Operand>), RewriteError> {
    if i.operands.len() != 2 {
        return Err(cx.unsupported(i, "cache-policy operand"));
    }
    let size = elem_size(cx, i)?;
    let elems: Vec<Operand> = match &i.operands[which] {
        Operand::Vector(v) => v.clone(),
        o => vec![o.clone()],
    };
    if elems.len() > 4 {
        return Err(cx.unsupported(i, "vector of more than 4 elements"));
    }
    Ok((size, elems))
}

fn load_block(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
) -> Result<Vec<Statement>, RewriteError> {
    let (size, dests) = access_elems(cx, i, 0)?;
    let addr = &i.operands[1];
    let mut code = String::new();
    let one_call = dests.len() == 1 || size * dests.len() as u32 <= 8;
    if one_call {
        let gaddr = generic_addr(cx, i, sp, addr, 0, "%fhd8")?;
        if let Some((check, slow)) = inline_load(cx, i, sp, &gaddr) {
            code.push_str(&check);
            code.push_str(&slow);
        }
    }
    if dests.len() > 1 && size * dests.len() as u32 <= 8 {
        // One access for the whole vector, as the vgpu makes it (`Hooks` docs): the
        // runtime forwards or reads all of it, and the original vector load reads there.
        let total = size * dests.len() as u32;
        code.push_str(&generic_addr(cx, i, sp, addr, 0, "%fhd8")?);
        code.push_str(&rt_call(
            cx,
            &format!("{PREFIX}load"),
            Some(("b64", "%fhd1")),
            &[("b64", "%fhd8"), ("b32", &total.to_string())],
        ));
        if sp == MemSpace::Global {
            code.push_str("cvta.to.global.u64 %fhd1, %fhd1;\n");
        }
        let mut e = i.clone();
        e.guard = None;
        e.mods = i
            .mods
            .iter()
            .copied()
            .filter(|m| *m != Mod::Nc)
            .filter(|m| sp != MemSpace::Shared || !matches!(m, Mod::Shared | Mod::SharedCta))
            .collect();
        e.operands[1] = Operand::Addr {
            base: AddrBase::Name("%fhd1".into()),
            offset: 0,
        };
        code.push_str(&pr(&e));
        code.push('\n');
        return wrap(cx, i, &code, &original(i), None);
    }
    // Every element's address first: a destination may be the address register.
    for k in 0..dests.len() {
        code.push_str(&generic_addr(
            cx,
            i,
            sp,
            addr,
            k as i64 * size as i64,
            &format!("%fhd{}", 8 + k),
        )?);
    }
    for (k, d) in dests.iter().enumerate() {
        code.push_str(&rt_call(
            cx,
            &format!("{PREFIX}load"),
            Some(("b64", "%fhd1")),
            &[
                ("b64", &format!("%fhd{}", 8 + k)),
                ("b32", &size.to_string()),
            ],
        ));
        if sp == MemSpace::Global {
            code.push_str("cvta.to.global.u64 %fhd1, %fhd1;\n");
        }
        let mut e = i.clone();
        e.guard = None;
        e.opcode = Opcode::Ld;
        e.mods = scalar_mods(i)
            .into_iter()
            .filter(|m| *m != Mod::Nc)
            .filter(|m| sp != MemSpace::Shared || !matches!(m, Mod::Shared | Mod::SharedCta))
            .collect();
        let dest = match d {
            Operand::Sink => Operand::Name(
                match size {
                    8 => "%fhd2",
                    4 => "%fhr5",
                    _ => "%fhh1",
                }
                .into(),
            ),
            o => o.clone(),
        };
        e.operands = vec![
            dest,
            Operand::Addr {
                base: AddrBase::Name("%fhd1".into()),
                offset: 0,
            },
        ];
        code.push_str(&pr(&e));
        code.push('\n');
    }
    wrap(cx, i, &code, &original(i), None)
}

/// Runtime semantics class of a store (0 weak, 1 volatile, 2 relaxed, 3 release) and its
/// scope; the release bit.
fn store_sem(i: &Instruction) -> (u32, u32, bool) {
    match i.sem() {
        None | Some(Mod::Weak) => (0, 2, false),
        Some(Mod::Volatile) => (1, 2, false),
        Some(Mod::Release) => (3, scope_num(i, 1), true),
        Some(_) => (2, scope_num(i, 1), false),
    }
}

/// PTX text putting the raw bits of a store's value operand into `%fhd1`.
fn value_bits(cx: &Ctx<'_>, i: &Instruction, v: &Operand) -> Result<String, RewriteError> {
    Ok(match v {
        Operand::Name(n) => match cx.regs.width(n) {
            Some(64) => format!("mov.b64 %fhd1, {n};\n"),
            Some(32) => format!("mov.b32 %fhr5, {n};\ncvt.u64.u32 %fhd1, %fhr5;\n"),
            Some(16) => format!("mov.b16 %fhh0, {n};\ncvt.u64.u16 %fhd1, %fhh0;\n"),
            Some(_) => return Err(cx.unsupported(i, format!("value register `{n}` width"))),
            // A variable's address as the value.
            None => format!("mov.u64 %fhd1, {n};\n"),
        },
        Operand::Int(x) => format!("mov.u64 %fhd1, {x};\n"),
        Operand::F32(b) => format!("mov.u64 %fhd1, {};\n", *b as u64),
        Operand::F64(b) => format!("mov.u64 %fhd1, {};\n", *b as i64),
        Operand::SymOffset { name, offset } => format!("mov.u64 %fhd1, {name}+{offset};\n"),
        _ => return Err(cx.unsupported(i, "store value operand")),
    })
}

fn store_block(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
) -> Result<Vec<Statement>, RewriteError> {
    let (size, vals) = access_elems(cx, i, 1)?;
    let (sem, scope, release) = store_sem(i);
    let meta = size | m_sem(sem) | m_scope(scope) | if release { M_RELEASE } else { 0 };
    let addr = &i.operands[0];
    let mut code = String::new();
    if vals.len() > 1 && size * vals.len() as u32 <= 8 {
        // One access for the whole vector, as the vgpu makes it (`Hooks` docs): its
        // elements packed into one value of the vector's size, and the original vector
        // store when the runtime did not buffer it.
        let total = size * vals.len() as u32;
        let meta = total | m_sem(sem) | m_scope(scope) | if release { M_RELEASE } else { 0 };
        code.push_str(&generic_addr(cx, i, sp, addr, 0, "%fhd0")?);
        code.push_str("mov.u64 %fhd3, 0;\n");
        for (k, v) in vals.iter().enumerate() {
            code.push_str(&value_bits(cx, i, v)?);
            let _ = writeln!(
                code,
                "and.b64 %fhd1, %fhd1, {};\nshl.b64 %fhd1, %fhd1, {};\nor.b64 %fhd3, %fhd3, %fhd1;",
                u64::MAX >> (64 - 8 * size),
                8 * size * k as u32
            );
        }
        code.push_str(&rt_call(
            cx,
            &format!("{PREFIX}store"),
            Some(("b32", "%fhr6")),
            &[
                ("b64", "%fhd0"),
                ("b64", "%fhd3"),
                ("b32", &meta.to_string()),
            ],
        ));
        code.push_str("setp.ne.b32 %fhp1, %fhr6, 0;\n");
        let mut e = i.clone();
        e.guard = Some(ptx::Guard {
            negated: true,
            pred: "%fhp1".into(),
        });
        code.push_str(&pr(&e));
        code.push('\n');
        let fast = count_store(cx, i, sp, addr, 1)? + &original(i);
        return wrap(cx, i, &code, &fast, None);
    }
    for (k, v) in vals.iter().enumerate() {
        let extra = k as i64 * size as i64;
        code.push_str(&generic_addr(cx, i, sp, addr, extra, "%fhd0")?);
        code.push_str(&value_bits(cx, i, v)?);
        let space = match sp {
            MemSpace::Global => Some(0u32),
            MemSpace::Shared => Some(1),
            _ => None,
        };
        if let (Some(s), true, false, 1) = (space, cx.fast, release, vals.len()) {
            // runtime.cu's entry key: size - 1, space, semantics, scope above the address.
            let key_bits = (u64::from(size - 1) << 56)
                | (u64::from(s) << 59)
                | (u64::from(sem) << 60)
                | (u64::from(scope) << 62);
            // `value_bits` zero-extends a register of the store's width.
            let masked = matches!(v, Operand::Name(n) if cx.regs.width(n) == Some(8 * size));
            let (inline, slow) = inline_store(cx, s, size, masked, key_bits, &original(i));
            code.push_str(&inline);
            code.push_str(&slow);
        }
        code.push_str(&rt_call(
            cx,
            &format!("{PREFIX}store"),
            Some(("b32", "%fhr6")),
            &[
                ("b64", "%fhd0"),
                ("b64", "%fhd1"),
                ("b32", &meta.to_string()),
            ],
        ));
        code.push_str("setp.ne.b32 %fhp1, %fhr6, 0;\n");
        let mut e = i.clone();
        e.guard = Some(ptx::Guard {
            negated: true,
            pred: "%fhp1".into(),
        });
        e.mods = scalar_mods(i);
        e.operands = vec![shifted(addr, extra), v.clone()];
        code.push_str(&pr(&e));
        code.push('\n');
    }
    let fast = count_store(cx, i, sp, addr, vals.len() as u32)? + &original(i);
    wrap(cx, i, &code, &fast, None)
}

fn atom_block(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    sp: MemSpace,
) -> Result<Vec<Statement>, RewriteError> {
    if i.vector().is_some() {
        return Err(cx.unsupported(i, "vector atomics"));
    }
    let size = elem_size(cx, i)?;
    let addr_index = if i.opcode == Opcode::Red { 0 } else { 1 };
    let Some(addr) = i.operands.get(addr_index) else {
        return Err(cx.unsupported(i, "missing address operand"));
    };
    let release = matches!(i.sem(), Some(Mod::Release) | Some(Mod::AcqRel));
    let scope = scope_num(i, 1);
    // A .cta atomic on global memory may act on the CTA overlay (scoped model).
    let cta = scope == 0 && sp != MemSpace::Shared;
    let meta = size
        | m_scope(scope)
        | if release { M_RELEASE } else { 0 }
        | if cta { M_CTA_ATOM } else { 0 };
    let mut code = generic_addr(cx, i, sp, addr, 0, "%fhd0")?;
    code.push_str(&rt_call(
        cx,
        &format!("{PREFIX}atom"),
        Some(("b64", "%fhd1")),
        &[("b64", "%fhd0"), ("b32", &meta.to_string())],
    ));
    if sp == MemSpace::Global {
        code.push_str("cvta.to.global.u64 %fhd1, %fhd1;\n");
    }
    let mut e = i.clone();
    e.guard = None;
    if sp == MemSpace::Shared {
        e.mods
            .retain(|m| !matches!(m, Mod::Shared | Mod::SharedCta));
    }
    e.operands[addr_index] = Operand::Addr {
        base: AddrBase::Name("%fhd1".into()),
        offset: 0,
    };
    code.push_str(&pr(&e));
    code.push('\n');
    if cta {
        code.push_str(&rt_call(
            cx,
            &format!("{PREFIX}atom_done"),
            None,
            &[("b32", &meta.to_string())],
        ));
    }
    wrap(cx, i, &code, &original(i), None)
}

/// Thread exit: the thread's entries become its CTA's orphans (see the runtime).
fn exit_block(cx: &mut Ctx<'_>, i: &Instruction) -> Result<Vec<Statement>, RewriteError> {
    let mut code = String::new();
    // In a full launch a thread that holds no entry only counts itself out
    // (`__fencehound_exit` does nothing else for it); the launch's last one drains the CTA
    // queues (`__fencehound_last`). A thread holding entries makes the call.
    if cx.fast {
        let slow = cx.label();
        // A thread may reach an exit of a late set-up's body without a header
        // ([`setup_point`]; it never buffered, so it takes this path): the last one calls
        // the runtime without it (`fh_self` looks it up, setting it up if need be), and
        // without the cache (nothing of it matters after the thread's last drain).
        let last = if cx.late_setup {
            call(&format!("{PREFIX}last"), None, &[("b64", "0")])
        } else {
            rt_call(cx, &format!("{PREFIX}last"), None, &[])
        };
        // The launch's threads - 1: the device flavour's entry reads it into `%fhc3`.
        let (last_word, last_reg) = if cx.has_header() {
            (String::new(), "%fhc3")
        } else {
            (format!("ld.u32 %fhr8, [%fhd15+{CTL_LAST}];\n"), "%fhr8")
        };
        let _ = write!(
            code,
            "@%fhq5 bra {slow};\n\
             {last_word}\
             atom.add.u32 %fhr9, [%fhd15+{CTL_EXITED}], 1;\n\
             setp.ne.u32 %fhp2, %fhr9, {last_reg};\n@%fhp2 bra {{DONE}};\n\
             {last}bra.uni {{DONE}};\n{slow}:\n"
        );
    }
    code.push_str(&rt_call(cx, &format!("{PREFIX}exit"), None, &[]));
    // A quiet launch: the store counters join the runtime's (nothing is buffered). The
    // mode test left the control block's address in `%fhd15` (at the kernel's entry in the
    // device flavour, in this block in the lockstep flavour), and a quiet launch makes no
    // call that could change it.
    let fast = format!(
        "{}@!%fhq1 bra {{DONE}};\n\
         ld.u64 %fhd13, [%fhd15+{CTL_COUNTERS}];\n\
         red.add.u64 [%fhd13+{}], %fhd16;\nred.add.u64 [%fhd13+{}], %fhd17;\n",
        skip_if_unguarded(i, "{DONE}"),
        8 * SEEN_GLOBAL,
        8 * SEEN_SHARED,
    );
    wrap(cx, i, &code, &fast, Some(i))
}

fn drain_block(
    cx: &mut Ctx<'_>,
    i: &Instruction,
    meta: u32,
) -> Result<Vec<Statement>, RewriteError> {
    let call = rt_call(
        cx,
        &format!("{PREFIX}drain"),
        None,
        &[("b32", &meta.to_string())],
    );
    // A fast kernel runs the call's fast path inline: a thread that holds no entry has
    // nothing to drain, unless (`scoped`, a drain to memory) its CTA's overlay holds some —
    // `__fencehound_drain`'s own test, read as it reads it; one that holds entries drains
    // them in the kernel when it can (`inline_drain`).
    let code = if cx.fast {
        let slow = cx.label();
        let mut t = String::new();
        let own = cx.label();
        if meta & m_scope(3) != 0 {
            // A drain to a scope wider than the CTA (scope field not 0) publishes the
            // overlay.
            let _ = writeln!(t, "@%fhq5 bra {own};");
            t.push_str(&overlay_test(cx, "{DONE}", &slow));
            t.push_str("bra.uni {DONE};\n");
        } else if cx.opts.flavor == Flavor::Lockstep {
            // (The device flavour's `wrap_early` has sent a thread holding nothing to the
            // barrier already.)
            t.push_str("@!%fhq5 bra {DONE};\n");
        }
        let _ = write!(
            t,
            "{own}:\n{}{slow}:\n{call}",
            inline_drain(cx, meta, &slow)
        );
        t
    } else {
        call
    };
    // A quiet launch never holds entries: nothing to drain.
    wrap_early(cx, i, &code, "", Some(i), meta & m_scope(3) == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(text: &str) -> Vec<Statement> {
        let m = ptx::parse("t", text).unwrap();
        let f = m.functions().next().unwrap();
        f.body.clone().unwrap()
    }

    const LOOP: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 p)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\n\
        .reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\n\
        mov.u32 %r1, 0;\n$L_top:\nst.global.u32 [%rd1], %r1;\nadd.u32 %r1, %r1, 1;\n\
        setp.lt.u32 %p1, %r1, 4;\n@%p1 bra $L_top;\nld.global.u32 %r2, [%rd1];\n\
        membar.gl;\nret;\n}\n";

    fn kernel(lines: &str) -> Vec<Statement> {
        body_of(&format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<3>;\n.reg .b32 %r<4>;\n\
             .reg .b64 %rd<3>;\n{lines}}}\n"
        ))
    }

    /// The instruction right after the set-up point, as text.
    fn after_setup(body: &[Statement]) -> Option<String> {
        let at = setup_point(body)?;
        body[at..].iter().find_map(|s| match s {
            Statement::Inst(i) => Some(pr(i)),
            _ => None,
        })
    }

    #[test]
    fn the_set_up_waits_only_past_branches_to_the_kernels_exit() {
        let prefix = "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\n\
                      mov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n";
        // `if (threadIdx.x != 0) return;` then a site: the set-up comes after the branch.
        let early = kernel(&format!(
            "{prefix}@%p1 bra $L_out;\nmov.u32 %r2, 7;\nst.global.u32 [%rd1], %r2;\n\
             $L_out:\nret;\n"
        ));
        let next = after_setup(&early).expect("a set-up point");
        assert!(next.contains("st.global.u32"), "{next}");
        // A second branch to code with sites ends the run before it (the writer/reader
        // split of a seqlock): both paths pass the set-up.
        let split = kernel(&format!(
            "{prefix}@%p1 bra $L_out;\nmov.u32 %r2, %ctaid.x;\nsetp.eq.u32 %p2, %r2, 0;\n\
             @%p2 bra $L_w;\nld.global.u32 %r3, [%rd1];\nret;\n$L_w:\n\
             st.global.u32 [%rd1], %r2;\n$L_out:\nret;\n"
        ));
        let next = after_setup(&split).expect("a set-up point");
        assert!(next.contains("@%p2 bra"), "{next}");
        // A branch to a label whose code is not an exit (a bounds check that skips a loop
        // and then stores): no late set-up.
        let skip = kernel(&format!(
            "{prefix}@%p1 bra $L_tail;\nld.global.u32 %r3, [%rd1];\n$L_tail:\n\
             st.global.u32 [%rd1], %r1;\nret;\n"
        ));
        assert_eq!(setup_point(&skip), None);
        // No branch before the first site: every thread sets up, at the entry as before.
        let straight = kernel(&format!("{prefix}st.global.u32 [%rd1], %r1;\nret;\n"));
        assert_eq!(setup_point(&straight), None);
        // A guarded exit at the target is no exit for every thread.
        let guarded = kernel(&format!(
            "{prefix}@%p1 bra $L_out;\nst.global.u32 [%rd1], %r1;\n$L_out:\n@%p1 ret;\n\
             st.global.u32 [%rd1], %r1;\nret;\n"
        ));
        assert_eq!(setup_point(&guarded), None);
        // The first instruction a site: nothing to wait for.
        let site = kernel("ld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], 1;\nret;\n");
        assert_eq!(setup_point(&site), None);
    }

    #[test]
    fn a_kernel_gets_two_bodies_only_when_its_end_cannot_be_run_into() {
        assert!(two_bodies_ok(&body_of(LOOP)));
        // The last instruction a guarded branch: the full body could fall into the quiet
        // one.
        let guarded = LOOP.replace("membar.gl;\nret;\n", "@%p1 bra $L_top;\n");
        assert!(!two_bodies_ok(&body_of(&guarded)));
        let opts = RewriteOptions::default();
        let two = rewrite_module(&ptx::parse("t", LOOP).unwrap(), &opts).unwrap();
        let text = ptx::printer::print(&two.module);
        // One full body, one quiet copy (its labels renamed), the quiet one entered from
        // the mode test; each site counted once.
        assert!(
            text.contains(&format!("@!%fhq0 bra\t{QUIET_BODY};")),
            "{text}"
        );
        assert!(text.contains("$L_top__fhq:") && text.contains("bra\t$L_top__fhq;"));
        assert_eq!(text.matches("\n$L_top:").count(), 1);
        assert_eq!((two.counts.stores, two.counts.loads), (1, 1));
        // A quiet copy has no runtime call and no mode test.
        let quiet = &text[text.find(&format!("{QUIET_BODY}:")).unwrap()..];
        let quiet = &quiet[..quiet.find("\n}").unwrap()];
        assert!(
            !quiet.contains("call") && !quiet.contains("%fhq0"),
            "{quiet}"
        );
        let one = rewrite_module(&ptx::parse("t", &guarded).unwrap(), &opts).unwrap();
        let text = ptx::printer::print(&one.module);
        assert!(
            !text.contains(QUIET_BODY) && !text.contains("__fhq"),
            "{text}"
        );
        assert_eq!((one.counts.stores, one.counts.loads), (1, 1));
    }

    #[test]
    fn register_widths_from_ranges_and_names() {
        let m = ptx::parse(
            "t",
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .f64 %fd1;\n.reg .b16 %rs<2>;\nret;\n}\n",
        )
        .unwrap();
        let f = m.functions().next().unwrap();
        let mut r = Regs::default();
        Regs::collect(f.body.as_ref().unwrap(), &mut r);
        assert_eq!(r.width("%r3"), Some(32));
        assert_eq!(r.width("%r4"), None);
        assert_eq!(r.width("%fd1"), Some(64));
        assert_eq!(r.width("%rs1"), Some(16));
        assert_eq!(r.width("%x"), None);
    }
}
