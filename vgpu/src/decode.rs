//! Lowering the `ptx` IR to a [`Program`]: resolve registers, variables, labels and
//! functions; lay out frames, shared memory and kernel parameters; decode every
//! instruction once. Anything the executor cannot run is a [`LoadError::Unsupported`]
//! here, naming the instruction and its location — never a wrong result at run time.

use crate::error::LoadError;
use crate::hooks::{FenceKind, Scope, Sem};
use crate::program::*;
use fencehound_ptx as ptx;
use ptx::{Mod, Opcode, Operand, Statement};
use std::collections::HashMap;

/// The largest frame (`.local` and `.param` variables of one function) in bytes.
const MAX_FRAME: u32 = 1 << 24;

/// Addresses of module variables, assigned by the device before decoding.
pub struct ModuleLayout {
    /// name → (space, address): global/const variables get device addresses, shared
    /// variables CTA offsets.
    pub vars: HashMap<String, (ptx::Space, u64)>,
    pub shared_end: u32,
    /// Per kernel: the bytes of static shared memory it uses (its variables' extent).
    pub kernel_shared: HashMap<String, u32>,
}

pub fn type_bytes(m: Mod) -> Option<u32> {
    Some(match m {
        Mod::S8 | Mod::U8 | Mod::B8 | Mod::E4m3 | Mod::E5m2 => 1,
        Mod::S16 | Mod::U16 | Mod::B16 | Mod::F16 | Mod::Bf16 | Mod::E4m3x2 | Mod::E5m2x2 => 2,
        Mod::S32
        | Mod::U32
        | Mod::B32
        | Mod::F32
        | Mod::F16x2
        | Mod::Bf16x2
        | Mod::Tf32
        | Mod::S16x2
        | Mod::U16x2 => 4,
        Mod::S64 | Mod::U64 | Mod::B64 | Mod::F64 => 8,
        Mod::B128 => 16,
        Mod::Pred => 1,
        _ => return None,
    })
}

/// The scalar video instructions, whose operands may carry byte/half selectors.
fn is_video(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Vadd
            | Opcode::Vsub
            | Opcode::Vabsdiff
            | Opcode::Vmin
            | Opcode::Vmax
            | Opcode::Vshl
            | Opcode::Vshr
            | Opcode::Vmad
            | Opcode::Vset
    )
}

pub fn is_signed(m: Mod) -> bool {
    matches!(m, Mod::S8 | Mod::S16 | Mod::S32 | Mod::S64)
}

pub fn is_float(m: Mod) -> bool {
    matches!(
        m,
        Mod::F16 | Mod::F16x2 | Mod::Bf16 | Mod::Bf16x2 | Mod::F32 | Mod::F64
    )
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

/// Size in bytes of a declared variable.
pub fn var_size(v: &ptx::VarDecl) -> Option<u64> {
    let mut n = type_bytes(v.ty)? as u64 * v.vector.unwrap_or(1) as u64;
    for d in &v.dims {
        n = n.checked_mul(d.unwrap_or(0))?;
    }
    Some(n)
}

pub fn var_align(v: &ptx::VarDecl) -> u64 {
    v.align
        .map(|a| a as u64)
        .unwrap_or_else(|| type_bytes(v.ty).unwrap_or(1) as u64 * v.vector.unwrap_or(1) as u64)
        .max(1)
}

/// Declares a `.reg` parameter or return value of a device function in its scope: a
/// scalar register, or for `.v2`/`.v4` a vector register of that many consecutive slots.
/// Returns the first slot, or `None` for a shape the executor does not run (an array, a
/// `.v8` register, any `.reg` parameter of a kernel).
fn reg_param<'a>(
    scope: &mut FnScope<'a>,
    nregs: &mut u32,
    p: &'a ptx::VarDecl,
    device_fn: bool,
) -> Option<Slot> {
    if !device_fn || !p.dims.is_empty() || p.range.is_some() {
        return None;
    }
    let name = match p.vector {
        None => Name::Reg(scope.alloc(nregs, p.ty, 1)),
        Some(n @ (2 | 4)) => Name::VecReg(scope.alloc(nregs, p.ty, n as u32), n),
        Some(_) => return None,
    };
    scope.names.insert(&p.name, name);
    match name {
        Name::Reg(s) | Name::VecReg(s, _) => Some(s),
        _ => None,
    }
}

/// What a name means inside one function.
#[derive(Debug, Clone, Copy)]
enum Name {
    Reg(Slot),
    /// A vector register (`.reg .v4 .u32 %v`): `n` consecutive slots from the first.
    VecReg(Slot, u8),
    /// Frame variable (`.local` or `.param` in a device-function frame): offset.
    Frame(u32, ptx::Space),
    KernelParam(u32),
    Global(u64),
    Const(u64),
    Shared(u64),
    Label(u32),
    Func(u32),
}

struct FnScope<'a> {
    names: HashMap<&'a str, Name>,
    branch_targets: HashMap<&'a str, Vec<&'a str>>,
    /// The declared type of every register slot (slot 0, `CC.CF`, is `.pred`-like).
    types: Vec<Mod>,
    /// The slots of vector registers (`.reg .v4`): consecutive, they keep slots of their
    /// own when the function's slots are compacted ([`crate::regalloc`]).
    vector_slots: Vec<Slot>,
}

impl FnScope<'_> {
    /// Allocates `n` consecutive register slots of type `ty`; returns the first.
    fn alloc(&mut self, nregs: &mut u32, ty: Mod, n: u32) -> Slot {
        let first = *nregs;
        *nregs += n;
        self.types.extend(std::iter::repeat_n(ty, n as usize));
        first
    }
}

pub struct Decoder<'a> {
    module: &'a ptx::Module,
    layout: &'a ModuleLayout,
    funcs: HashMap<&'a str, u32>,
    file_names: HashMap<u32, String>,
    prog: Program,
    /// `Some` in checking mode: errors are collected and decoding goes on.
    errors: Option<Vec<LoadError>>,
}

impl<'a> Decoder<'a> {
    pub fn new(module: &'a ptx::Module, layout: &'a ModuleLayout) -> Self {
        let mut file_names = HashMap::new();
        for it in &module.items {
            if let ptx::Item::File(f) = it {
                file_names.insert(f.index, f.path.clone());
            }
        }
        Decoder {
            module,
            layout,
            funcs: HashMap::new(),
            file_names,
            errors: None,
            prog: Program {
                insts: Vec::new(),
                funcs: Vec::new(),
                sites: Vec::new(),
                shared_static: layout.shared_end,
                dyn_shared_offset: 0,
                globals: Vec::new(),
                polls: Default::default(),
                writes: Default::default(),
                shared_quiet: Default::default(),
                sync: Default::default(),
                cta_local: Default::default(),
            },
        }
    }

    fn cuda_loc(&self, loc: &ptx::Loc) -> CudaLoc {
        let file = |i: u32| {
            self.file_names
                .get(&i)
                .cloned()
                .unwrap_or_else(|| format!("file{i}"))
        };
        CudaLoc {
            file: file(loc.file),
            line: loc.line,
            col: loc.col,
            inlined_at: loc.inlined_at.map(|(f, l, c)| (file(f), l, c)),
            caller: None,
            function: loc
                .function_name
                .as_ref()
                .and_then(|(l, off)| self.module.debug_str(l, *off)),
        }
    }

    pub fn run(mut self) -> Result<Program, LoadError> {
        self.run_inner()?;
        Ok(self.prog)
    }

    /// Every reason the module cannot be loaded, instead of only the first: each
    /// instruction the executor does not support (with its location), each undefined
    /// name, each declaration it refuses.
    pub fn check(mut self) -> Vec<LoadError> {
        self.errors = Some(Vec::new());
        let failed = self.run_inner().err();
        let mut errors = self.errors.take().unwrap_or_default();
        errors.extend(failed);
        errors
    }

    fn run_inner(&mut self) -> Result<(), LoadError> {
        // Function indices first, so calls can refer forward. Declarations without
        // bodies are known only by name (vprintf, __assertfail).
        let defined: Vec<&'a ptx::Function> = self
            .module
            .functions()
            .filter(|f| f.body.is_some())
            .collect();
        for (i, f) in defined.iter().enumerate() {
            self.funcs.insert(f.name.as_str(), i as u32);
        }
        for f in &defined {
            match self.function(f) {
                Ok(func) => self.prog.funcs.push(func),
                Err(e) => self.collect(e)?,
            }
        }
        Ok(())
    }

    /// In checking mode, records `e` and goes on; otherwise fails with it.
    fn collect(&mut self, e: LoadError) -> Result<(), LoadError> {
        match &mut self.errors {
            Some(v) => {
                v.push(e);
                Ok(())
            }
            None => Err(e),
        }
    }

    /// [`Self::cuda_loc`] with [`CudaLoc::caller`]: the inline stack is followed through
    /// `sites`, the inlined call sites seen so far in the function (`inlined_at a` → the
    /// latest `.loc a …, inlined_at b` → …), as NVCC and NVRTC describe it.
    fn cuda_loc_in(&self, loc: &ptx::Loc, sites: &HashMap<(u32, u32, u32), &ptx::Loc>) -> CudaLoc {
        let mut c = self.cuda_loc(loc);
        let mut stack = vec![(loc.file, loc.line)];
        let mut next = loc.inlined_at;
        // Bounded: a malformed chain must not loop.
        while let (Some(at), true) = (next, stack.len() <= 64) {
            stack.push((at.0, at.1));
            next = sites.get(&at).and_then(|l| l.inlined_at);
        }
        let outer = stack[stack.len() - 1].0;
        if loc.file != outer {
            if let Some(&(f, l)) = stack.iter().find(|(f, _)| *f == outer) {
                c.caller = Some((
                    self.file_names
                        .get(&f)
                        .cloned()
                        .unwrap_or_else(|| format!("file{f}")),
                    l,
                ));
            }
        }
        c
    }

    fn loc_str(&self, f: &ptx::Function, pos: ptx::Pos, loc: Option<&ptx::Loc>) -> String {
        let mut s = format!("PTX line {} in `{}`", pos.line, f.name);
        if let Some(l) = loc {
            s.push_str(&format!(" ({})", self.cuda_loc(l)));
        }
        s
    }

    fn function(&mut self, f: &'a ptx::Function) -> Result<Func, LoadError> {
        let body = f.body.as_deref().unwrap_or(&[]);
        let mut scope = FnScope {
            names: HashMap::new(),
            branch_targets: HashMap::new(),
            types: vec![Mod::Pred],
            vector_slots: Vec::new(),
        };
        let mut nregs: u32 = 1; // slot 0: CC.CF
        let mut frame: u64 = 0;
        let mut params = Vec::new();
        let mut param_names = Vec::new();
        let mut rets = Vec::new();
        let mut param_bytes = 0u64;
        let loc0 = format!("`{}` (PTX line {})", f.name, f.pos.line);
        let invalid = |message: String| LoadError::Invalid {
            message,
            location: loc0.clone(),
        };

        // Parameters. `.reg` parameters (PTX ISA §5.1.6.4, device functions only) are
        // registers of the callee's frame that a call fills from the caller's operands; a
        // `.reg .v2`/`.v4` one is a vector register (§5.4.2), `n` consecutive slots that
        // a call fills from a vector register of the caller.
        for p in &f.params {
            if p.space == ptx::Space::Reg {
                let Some(slot) = reg_param(&mut scope, &mut nregs, p, !f.is_kernel()) else {
                    return Err(LoadError::Unsupported {
                        what: format!("`.reg` parameter `{}` of this shape", p.name),
                        location: loc0.clone(),
                    });
                };
                param_names.push(p.name.clone());
                params.push(ParamLoc::Reg(slot));
                continue;
            }
            let size = var_size(p).ok_or_else(|| invalid(format!("bad parameter `{}`", p.name)))?;
            let align = var_align(p);
            param_names.push(p.name.clone());
            if f.is_kernel() {
                param_bytes = align_up(param_bytes, align);
                scope
                    .names
                    .insert(&p.name, Name::KernelParam(param_bytes as u32));
                params.push(ParamLoc::Frame(param_bytes as u32, size as u32));
                param_bytes += size;
            } else {
                frame = align_up(frame, align);
                scope
                    .names
                    .insert(&p.name, Name::Frame(frame as u32, ptx::Space::Param));
                params.push(ParamLoc::Frame(frame as u32, size as u32));
                frame += size;
            }
        }
        for r in &f.rets {
            if r.space == ptx::Space::Reg {
                let Some(slot) = reg_param(&mut scope, &mut nregs, r, !f.is_kernel()) else {
                    return Err(LoadError::Unsupported {
                        what: format!("`.reg` return value `{}` of this shape", r.name),
                        location: loc0.clone(),
                    });
                };
                rets.push(ParamLoc::Reg(slot));
                continue;
            }
            let size = var_size(r).ok_or_else(|| invalid(format!("bad return `{}`", r.name)))?;
            frame = align_up(frame, var_align(r));
            scope
                .names
                .insert(&r.name, Name::Frame(frame as u32, ptx::Space::Param));
            rets.push(ParamLoc::Frame(frame as u32, size as u32));
            frame += size;
        }

        // `CC.CF` and the `.reg` parameters and returns: slots a caller names by number.
        let fixed = nregs;
        // Labels and branch targets: one namespace per function.
        let entry = self.prog.insts.len() as u32;
        let mut pc = entry;
        let mut order: Vec<&'a Statement> = Vec::new();
        fn flatten<'b>(s: &'b [Statement], out: &mut Vec<&'b Statement>) {
            for st in s {
                match st {
                    Statement::Block(b) => flatten(b, out),
                    _ => out.push(st),
                }
            }
        }
        flatten(body, &mut order);
        for st in &order {
            match st {
                Statement::Inst(_) => pc += 1,
                Statement::Label(l) => {
                    scope.names.insert(l, Name::Label(pc));
                }
                Statement::BranchTargets { name, targets } => {
                    scope
                        .branch_targets
                        .insert(name, targets.iter().map(|s| s.as_str()).collect());
                }
                _ => {}
            }
        }

        // Declarations are scoped by `{ }` blocks (PTX ISA, "Statements"): NVRTC's inline
        // sequences declare `.reg .u32 %r0, %r1, %r2, %r3` in a block, shadowing the
        // function's own `%r3` only inside it. A block's declarations are visible in the
        // whole block, so each block declares first, then decodes its instructions and
        // nested blocks in order; leaving a block restores what it shadowed.
        enum Event<'b> {
            Enter,
            Decl(&'b ptx::VarDecl),
            Inst(&'b ptx::Instruction),
            Loc(&'b ptx::Loc),
            Exit,
        }
        fn events<'b>(s: &'b [Statement], out: &mut Vec<Event<'b>>) {
            out.push(Event::Enter);
            for st in s {
                if let Statement::Var(v) = st {
                    out.push(Event::Decl(v));
                }
            }
            for st in s {
                match st {
                    Statement::Inst(i) => out.push(Event::Inst(i)),
                    Statement::Loc(l) if l.inlined_at.is_some() => out.push(Event::Loc(l)),
                    Statement::Block(b) => events(b, out),
                    _ => {}
                }
            }
            out.push(Event::Exit);
        }
        let mut evs = Vec::new();
        events(body, &mut evs);
        type Shadowed<'b> = Vec<(&'b str, Option<Name>)>;
        let mut undo: Vec<Shadowed<'a>> = Vec::new();
        // Inlined call sites by position, the latest of each (see `cuda_loc_in`).
        let mut inline_sites: HashMap<(u32, u32, u32), &ptx::Loc> = HashMap::new();
        for ev in evs {
            match ev {
                Event::Enter => undo.push(Vec::new()),
                Event::Loc(l) => {
                    inline_sites.insert((l.file, l.line, l.col), l);
                }
                Event::Exit => {
                    for (name, prev) in undo.pop().unwrap_or_default().into_iter().rev() {
                        match prev {
                            Some(n) => scope.names.insert(name, n),
                            None => scope.names.remove(name),
                        };
                    }
                }
                Event::Decl(v) => match v.space {
                    ptx::Space::Reg => {
                        let width = v.vector.unwrap_or(1);
                        if !v.dims.is_empty() || !matches!(width, 1 | 2 | 4) {
                            return Err(LoadError::Unsupported {
                                what: format!("array or `.v{width}` register `{}`", v.name),
                                location: self.loc_str(f, v.pos, None),
                            });
                        }
                        let mut declare = |name: &'a str, scope: &mut FnScope<'a>| {
                            let slot = scope.alloc(&mut nregs, v.ty, width as u32);
                            if v.vector.is_some() {
                                scope.vector_slots.extend(slot..slot + width as u32);
                            }
                            let n = if v.vector.is_some() {
                                Name::VecReg(slot, width)
                            } else {
                                Name::Reg(slot)
                            };
                            let prev = scope.names.insert(name, n);
                            if let Some(u) = undo.last_mut() {
                                u.push((name, prev));
                            }
                        };
                        match v.range {
                            Some(n) => {
                                for i in 0..n {
                                    // Leaked names keep the map borrow-free; modules
                                    // are loaded a bounded number of times.
                                    let name: &'a str =
                                        Box::leak(format!("{}{}", v.name, i).into_boxed_str());
                                    declare(name, &mut scope);
                                }
                            }
                            None => declare(&v.name, &mut scope),
                        }
                    }
                    ptx::Space::Local | ptx::Space::Param => {
                        let size = var_size(v)
                            .ok_or_else(|| invalid(format!("bad variable `{}`", v.name)))?;
                        frame = align_up(frame, var_align(v));
                        let prev = scope
                            .names
                            .insert(&v.name, Name::Frame(frame as u32, v.space));
                        if let Some(u) = undo.last_mut() {
                            u.push((&v.name, prev));
                        }
                        frame += size;
                    }
                    ptx::Space::Shared | ptx::Space::Global | ptx::Space::Const => {
                        match self.layout.vars.get(&v.name) {
                            Some((sp, addr)) => {
                                let n = match sp {
                                    ptx::Space::Shared => Name::Shared(*addr),
                                    ptx::Space::Const => Name::Const(*addr),
                                    _ => Name::Global(*addr),
                                };
                                let prev = scope.names.insert(&v.name, n);
                                if let Some(u) = undo.last_mut() {
                                    u.push((&v.name, prev));
                                }
                            }
                            None => {
                                return Err(LoadError::Undefined {
                                    name: v.name.clone(),
                                    location: self.loc_str(f, v.pos, None),
                                })
                            }
                        }
                    }
                },
                Event::Inst(i) => {
                    let site = self.prog.sites.len() as u32;
                    let mut text = String::new();
                    ptx::printer::instruction(&mut text, i);
                    self.prog.sites.push(SiteInfo {
                        text,
                        function: f.name.clone(),
                        ptx_line: i.pos.line,
                        cuda: i.loc.as_ref().map(|l| self.cuda_loc_in(l, &inline_sites)),
                    });
                    let where_ = self.loc_str(f, i.pos, i.loc.as_ref());
                    let cx = Cx {
                        d: self,
                        scope: &scope,
                        inst: i,
                        where_: &where_,
                    };
                    let decoded = cx.decode();
                    let guard = match &i.guard {
                        Some(g) => cx.reg(&g.pred).map(|p| Some((p, g.negated))),
                        None => Ok(None),
                    };
                    let (op, guard) = match (decoded, guard) {
                        (Ok(op), Ok(guard)) => (op, guard),
                        (Err(e), _) | (_, Err(e)) => {
                            self.collect(e)?;
                            (Op::Nop, None)
                        }
                    };
                    self.prog.insts.push(Inst { op, guard, site });
                }
            }
        }
        if frame > MAX_FRAME as u64 {
            return Err(invalid(format!("frame of {frame} bytes is too large")));
        }
        if nregs > 1 << 20 {
            return Err(invalid(format!("{nregs} registers is too many")));
        }

        let end = self.prog.insts.len() as u32;
        // A body that falls off its end returns.
        if end == entry
            || !matches!(
                self.prog.insts.last().map(|i| &i.op),
                Some(Op::Ret | Op::Exit | Op::Bra { .. } | Op::Trap)
            )
        {
            let site = self.prog.sites.len() as u32;
            self.prog.sites.push(SiteInfo {
                text: "ret; // implicit".into(),
                function: f.name.clone(),
                ptx_line: f.pos.line,
                cuda: None,
            });
            self.prog.insts.push(Inst {
                op: Op::Ret,
                guard: None,
                site,
            });
        }
        let end = self.prog.insts.len() as u32;
        let writes = crate::unwritten::function_writes(
            &self.prog.insts[entry as usize..],
            f.is_kernel(),
            nregs as usize,
            &params,
        );
        let slots = crate::regalloc::compact(
            &mut self.prog.insts[entry as usize..],
            entry,
            nregs,
            fixed,
            &scope.vector_slots,
        );
        Ok(Func {
            name: f.name.clone(),
            is_kernel: f.is_kernel(),
            entry,
            end,
            nregs: slots,
            declared_regs: nregs,
            frame_size: align_up(frame, 16) as u32,
            params,
            param_names,
            rets,
            param_bytes: param_bytes as u32,
            shared_bytes: self.layout.kernel_shared.get(&f.name).copied().unwrap_or(0),
            writes,
        })
    }
}

/// Decoding context for one instruction.
struct Cx<'c, 'a> {
    d: &'c Decoder<'a>,
    scope: &'c FnScope<'a>,
    inst: &'c ptx::Instruction,
    where_: &'c str,
}

impl Cx<'_, '_> {
    fn unsupported<T>(&self, why: &str) -> Result<T, LoadError> {
        let mut text = String::new();
        ptx::printer::instruction(&mut text, self.inst);
        Err(LoadError::Unsupported {
            what: if why.is_empty() {
                format!("`{text}`")
            } else {
                format!("`{text}` ({why})")
            },
            location: self.where_.to_string(),
        })
    }

    fn undefined<T>(&self, name: &str) -> Result<T, LoadError> {
        Err(LoadError::Undefined {
            name: name.to_string(),
            location: self.where_.to_string(),
        })
    }

    fn lookup(&self, name: &str) -> Option<Name> {
        if let Some(n) = self.scope.names.get(name) {
            return Some(*n);
        }
        if let Some((sp, addr)) = self.d.layout.vars.get(name) {
            return Some(match sp {
                ptx::Space::Shared => Name::Shared(*addr),
                ptx::Space::Const => Name::Const(*addr),
                _ => Name::Global(*addr),
            });
        }
        self.d.funcs.get(name).map(|i| Name::Func(*i))
    }

    fn reg(&self, name: &str) -> Result<Slot, LoadError> {
        match self.lookup(name) {
            Some(Name::Reg(s)) => Ok(s),
            Some(Name::VecReg(..)) => self.unsupported(&format!(
                "vector register `{name}` used where a scalar is expected (name a member, `{name}.x`)"
            )),
            Some(_) => self.unsupported(&format!("`{name}` is not a register")),
            None => self.undefined(name),
        }
    }

    /// The register a selected operand names: a vector member (`%v.y`), or, for the
    /// video instructions (which read their byte/half selectors from the IR), the whole
    /// register.
    fn selected_reg(&self, name: &str, sel: ptx::Selector) -> Result<Slot, LoadError> {
        match (self.lookup(name), sel) {
            (Some(Name::VecReg(base, n)), ptx::Selector::Member(i)) if i < n => Ok(base + i as u32),
            (Some(Name::VecReg(..)), ptx::Selector::Member(i)) => {
                self.unsupported(&format!("`{name}` has no member {i}"))
            }
            (Some(Name::Reg(s)), ptx::Selector::Member(_)) => {
                let _ = s;
                self.unsupported(&format!("`{name}` is not a vector register"))
            }
            (Some(Name::Reg(s)), _) if is_video(self.inst.opcode) => Ok(s),
            (Some(_), _) => self.unsupported(&format!(
                "operand selector `.{}` on `{name}`",
                sel.spelling()
            )),
            (None, _) => self.undefined(name),
        }
    }

    /// The declared type of a register slot.
    fn reg_type(&self, s: Slot) -> Option<Mod> {
        self.scope.types.get(s as usize).copied()
    }

    fn dst(&self, op: &Operand) -> Result<Option<Slot>, LoadError> {
        match op {
            Operand::Name(n) => Ok(Some(self.reg(n)?)),
            Operand::Select { name, sel } => Ok(Some(self.selected_reg(name, *sel)?)),
            Operand::Sink => Ok(None),
            _ => self.unsupported("destination must be a register"),
        }
    }

    /// The elements of a vector operand: a brace list `{a, b}` or a vector register.
    fn elements<'o>(
        &self,
        op: &'o Operand,
    ) -> Result<Vec<std::borrow::Cow<'o, Operand>>, LoadError> {
        use std::borrow::Cow;
        match op {
            Operand::Vector(v) => Ok(v.iter().map(Cow::Borrowed).collect()),
            Operand::Name(n) => match self.lookup(n) {
                Some(Name::VecReg(_, k)) => Ok((0..k)
                    .map(|i| {
                        Cow::Owned(Operand::Select {
                            name: n.clone(),
                            sel: ptx::Selector::Member(i),
                        })
                    })
                    .collect()),
                _ => Ok(vec![Cow::Borrowed(op)]),
            },
            _ => Ok(vec![Cow::Borrowed(op)]),
        }
    }

    fn dst1(&self, op: &Operand) -> Result<Slot, LoadError> {
        match self.dst(op)? {
            Some(s) => Ok(s),
            // Writes to `_` go to a scratch slot nobody reads: slot 0 would clobber CC.
            None => self.unsupported("`_` destination"),
        }
    }

    /// A source operand. `f32` converts decimal float literals (which lex as f64).
    fn src(&self, op: &Operand) -> Result<Src, LoadError> {
        let ty = self.inst.ty();
        Ok(match op {
            Operand::Name(n) => match self.lookup(n) {
                Some(Name::Reg(s)) => Src::Reg(s),
                Some(Name::VecReg(..)) => Src::Reg(self.reg(n)?),
                Some(Name::Global(a)) | Some(Name::Const(a)) | Some(Name::Shared(a)) => Src::Imm(a),
                Some(Name::KernelParam(o)) => Src::Imm(o as u64),
                Some(Name::Frame(o, _)) => Src::LocalAddr(o),
                Some(Name::Func(i)) => Src::Imm(FUNC_WINDOW + 16 * i as u64),
                Some(Name::Label(_)) => return self.unsupported(&format!("`{n}` used as a value")),
                // PTX ISA §10.x: `WARP_SZ` is a predefined run-time constant, the warp size.
                None if n == "WARP_SZ" => Src::Imm(32),
                None => return self.undefined(n),
            },
            Operand::Select { name, sel } => Src::Reg(self.selected_reg(name, *sel)?),
            Operand::SymOffset { name, offset } => match self.src(&Operand::Name(name.clone()))? {
                Src::Imm(a) => Src::Imm(a.wrapping_add(*offset as u64)),
                // `mov.u64 %rd, __local_depot0+8`, `cvta.local.u64 %rd, buf+4`: the local
                // address of a byte inside the thread's frame (PTX ISA §6.4.1, "the
                // address of a variable ... plus an offset"). Kept inside the frame limit,
                // so the frame base plus it cannot overflow.
                Src::LocalAddr(o) => match u32::try_from(i64::from(o) + offset) {
                    Ok(a) if a <= MAX_FRAME => Src::LocalAddr(a),
                    _ => return self.unsupported("offset outside the local frame"),
                },
                _ => return self.unsupported("offset from a non-address"),
            },
            Operand::Not(inner) => match &**inner {
                Operand::Name(n) => Src::NotReg(self.reg(n)?),
                _ => return self.unsupported("`!` on a non-register"),
            },
            Operand::Int(v) => Src::Imm(*v as u64),
            Operand::F32(b) => match ty {
                Some(Mod::F64) => Src::Imm((f32::from_bits(*b) as f64).to_bits()),
                _ => Src::Imm(*b as u64),
            },
            Operand::F64(b) => match ty {
                Some(Mod::F32) | Some(Mod::F16) | Some(Mod::F16x2) => {
                    Src::Imm((f64::from_bits(*b) as f32).to_bits() as u64)
                }
                _ => Src::Imm(*b),
            },
            Operand::Special { reg, dim } => self.special(*reg, *dim)?,
            _ => return self.unsupported("unexpected operand form"),
        })
    }

    /// The special registers the executor evaluates (the cluster registers are not).
    fn special(&self, r: ptx::Special, dim: Option<u8>) -> Result<Src, LoadError> {
        use ptx::Special as S;
        match r {
            S::IsExplicitCluster
            | S::ClusterId
            | S::Nclusterid
            | S::ClusterCtaid
            | S::ClusterNctaid
            | S::ClusterCtarank
            | S::ClusterNctarank => self.unsupported(&format!(
                "special register `{}`: thread block clusters (sm_90 `__cluster_dims__`, \
                 `cooperative_groups::this_cluster()`) — the virtual GPU runs every CTA as a \
                 cluster of its own",
                r.name()
            )),
            S::ReservedSmemOffsetBegin => self.unsupported("special register"),
            _ => Ok(Src::Special(r, dim.unwrap_or(0))),
        }
    }

    fn operands(&self) -> &[Operand] {
        &self.inst.operands
    }

    /// An atomic's semantics and scope: `.relaxed.gpu` unless given (an atomic is never
    /// weak; a `.volatile` one is relaxed).
    fn atom_sem_scope(&self) -> (Sem, Scope) {
        match self.sem_scope(Sem::Relaxed) {
            (Sem::Weak | Sem::Volatile, _) => (Sem::Relaxed, Scope::Gpu),
            ss => ss,
        }
    }

    fn sem_scope(&self, default_sem: Sem) -> (Sem, Scope) {
        let sem = match self.inst.sem() {
            Some(Mod::Weak) | None => default_sem,
            Some(Mod::Volatile) => Sem::Volatile,
            Some(Mod::Relaxed) => Sem::Relaxed,
            Some(Mod::Acquire) => Sem::Acquire,
            Some(Mod::Release) => Sem::Release,
            Some(Mod::AcqRel) => Sem::AcqRel,
            Some(Mod::Sc) => Sem::Sc,
            Some(_) => Sem::Relaxed,
        };
        let scope = match self.inst.scope() {
            Some(Mod::Cta) => Scope::Cta,
            Some(Mod::Cluster) => Scope::Cluster,
            Some(Mod::Sys) => Scope::Sys,
            Some(_) => Scope::Gpu,
            // Weak and volatile accesses have no scope; strong ones default to .gpu.
            None if matches!(sem, Sem::Weak | Sem::Volatile) => Scope::Sys,
            None => Scope::Gpu,
        };
        (sem, scope)
    }

    fn mem_space(&self) -> MemSpace {
        match self.inst.space() {
            Some(Mod::Global) => MemSpace::Global,
            Some(Mod::Shared) | Some(Mod::SharedCta) => MemSpace::Shared,
            Some(Mod::Local) => MemSpace::Local,
            Some(Mod::Const) => MemSpace::Const,
            Some(Mod::Param) | Some(Mod::ParamEntry) | Some(Mod::ParamFunc) => {
                MemSpace::KernelParam
            }
            _ => MemSpace::Generic,
        }
    }

    /// An address operand; for `.param` it also picks kernel vs frame parameters.
    fn addr(&self, op: &Operand, space: &mut MemSpace) -> Result<Addr, LoadError> {
        let (base, offset) = match op {
            Operand::Addr { base, offset } => (base, *offset),
            _ => return self.unsupported("expected an address `[...]`"),
        };
        let base = match base {
            ptx::AddrBase::Imm(v) => AddrBase::Abs(*v),
            ptx::AddrBase::Name(n) => match self.lookup(n) {
                Some(Name::Reg(s)) => AddrBase::Reg(s),
                Some(Name::VecReg(..)) => AddrBase::Reg(self.reg(n)?),
                Some(Name::Frame(o, sp)) => {
                    match (*space, sp) {
                        (MemSpace::KernelParam, ptx::Space::Param) => *space = MemSpace::FrameParam,
                        (MemSpace::Local, _) => {}
                        // A variable's name in a generic access is its generic address
                        // (PTX ISA §6.4.1); for a `.local` variable that is the thread's
                        // own local memory, which is what the local space reads.
                        (MemSpace::Generic, ptx::Space::Local) => *space = MemSpace::Local,
                        (MemSpace::Generic, _) => {
                            return self
                                .unsupported("generic access to a `.param` variable by name")
                        }
                        _ => return self.unsupported("variable in a different state space"),
                    }
                    AddrBase::Frame(o)
                }
                Some(Name::KernelParam(o)) => {
                    if *space != MemSpace::KernelParam {
                        return self.unsupported("kernel parameter accessed outside `.param`");
                    }
                    AddrBase::Abs(o as u64)
                }
                Some(Name::Global(a)) => {
                    if !matches!(*space, MemSpace::Global | MemSpace::Generic) {
                        return self.unsupported("global variable accessed in another space");
                    }
                    AddrBase::Abs(a)
                }
                Some(Name::Const(a)) => {
                    if *space != MemSpace::Const {
                        return self.unsupported("const variable accessed outside `.const`");
                    }
                    AddrBase::Abs(a)
                }
                Some(Name::Shared(a)) => match *space {
                    MemSpace::Shared => AddrBase::Abs(a),
                    MemSpace::Generic => AddrBase::Abs(a + crate::memory::SHARED_WINDOW),
                    _ => return self.unsupported("shared variable accessed in another space"),
                },
                Some(_) => return self.unsupported(&format!("`{n}` is not an address")),
                None => return self.undefined(n),
            },
        };
        Ok(Addr { base, offset })
    }

    fn decode(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        Ok(match i.opcode {
            Opcode::Ld | Opcode::Ldu => self.decode_ld()?,
            Opcode::St => self.decode_st()?,
            Opcode::Atom | Opcode::Red => self.decode_atom()?,
            Opcode::Mov => self.decode_mov()?,
            Opcode::Cvta => {
                let to = i.has(Mod::To);
                let space = self.mem_space();
                let bits = i.ty().and_then(type_bytes).unwrap_or(8) * 8;
                Op::Cvta {
                    to_generic: !to,
                    space,
                    d: self.dst1(&ops[0])?,
                    a: self.src(&ops[1])?,
                    bits,
                }
            }
            Opcode::Isspacep => Op::Isspacep {
                space: self.mem_space(),
                d: self.dst1(&ops[0])?,
                a: self.src(&ops[1])?,
            },
            Opcode::Bra => match &ops[0] {
                Operand::Name(l) => match self.lookup(l) {
                    Some(Name::Label(pc)) => Op::Bra { target: pc },
                    _ => return self.undefined(l),
                },
                _ => return self.unsupported("indirect branch"),
            },
            Opcode::Brx => {
                let index = self.src(&ops[0])?;
                let Operand::Name(t) = &ops[1] else {
                    return self.unsupported("branch-target list");
                };
                let Some(labels) = self.scope.branch_targets.get(t.as_str()) else {
                    return self.undefined(t);
                };
                let mut targets = Vec::new();
                for l in labels {
                    match self.lookup(l) {
                        Some(Name::Label(pc)) => targets.push(pc),
                        _ => return self.undefined(l),
                    }
                }
                Op::Brx { index, targets }
            }
            Opcode::Call => self.decode_call()?,
            Opcode::Ret => Op::Ret,
            Opcode::Exit => Op::Exit,
            Opcode::Trap => Op::Trap,
            Opcode::Brkpt => Op::Brkpt,
            Opcode::Bar | Opcode::Barrier => self.decode_bar()?,
            Opcode::Membar => {
                let scope = match i.scope() {
                    Some(Mod::Cta) => Scope::Cta,
                    Some(Mod::Sys) => Scope::Sys,
                    Some(Mod::Gl) => Scope::Gpu,
                    _ => return self.unsupported("membar level"),
                };
                Op::Fence {
                    kind: FenceKind::Sc,
                    scope,
                }
            }
            Opcode::Fence => {
                if i.has(Mod::Proxy) {
                    // Proxy fences order the async/texture proxies against the generic
                    // proxy; the vgpu has only the generic proxy.
                    Op::Nop
                } else {
                    let (sem, scope) = self.sem_scope(Sem::Sc);
                    let kind = match sem {
                        Sem::Sc => FenceKind::Sc,
                        Sem::AcqRel => FenceKind::AcqRel,
                        Sem::Acquire => FenceKind::Acquire,
                        Sem::Release => FenceKind::Release,
                        _ => return self.unsupported("fence semantics"),
                    };
                    Op::Fence { kind, scope }
                }
            }
            Opcode::Shfl => {
                if !i.has(Mod::Sync) {
                    return self.unsupported("non-`.sync` shfl is not valid on sm_70+");
                }
                let mode = if i.has(Mod::Up) {
                    ShflMode::Up
                } else if i.has(Mod::Down) {
                    ShflMode::Down
                } else if i.has(Mod::Bfly) {
                    ShflMode::Bfly
                } else {
                    ShflMode::Idx
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (self.dst1(a)?, self.dst(b)?),
                    o => (self.dst1(o)?, None),
                };
                if ops.len() != 5 {
                    return self.unsupported("shfl.sync takes d, a, b, c, membermask");
                }
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(&ops[1])?,
                    b: self.src(&ops[2])?,
                    c: self.src(&ops[3])?,
                    mask: self.src(&ops[4])?,
                }
            }
            Opcode::Vote => {
                // Legacy `vote` without `.sync` (PTX ISA < 6.4, sm < 70) votes over the
                // warp; it runs here as `vote.sync` with the full member mask.
                let mask = match (i.has(Mod::Sync), ops.len()) {
                    (true, 3) => self.src(&ops[2])?,
                    (false, 2) => Src::Imm(0xffff_ffff),
                    _ => return self.unsupported("vote operands"),
                };
                let mode = if i.has(Mod::All) {
                    VoteMode::All
                } else if i.has(Mod::Any) {
                    VoteMode::Any
                } else if i.has(Mod::Uni) {
                    VoteMode::Uni
                } else {
                    VoteMode::Ballot
                };
                Op::Vote {
                    mode,
                    d: self.dst1(&ops[0])?,
                    a: self.src(&ops[1])?,
                    mask,
                }
            }
            Opcode::Match => {
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (self.dst1(a)?, self.dst(b)?),
                    o => (self.dst1(o)?, None),
                };
                Op::Match {
                    all: i.has(Mod::All),
                    bits: i.ty().and_then(type_bytes).unwrap_or(4) * 8,
                    d,
                    p,
                    a: self.src(&ops[1])?,
                    mask: self.src(&ops[2])?,
                }
            }
            Opcode::Redux => {
                let signed = i.ty().is_some_and(is_signed);
                let op = match i.op() {
                    Some(Mod::Add) => ReduxOp::Add,
                    Some(Mod::Min) if signed => ReduxOp::MinS,
                    Some(Mod::Min) => ReduxOp::MinU,
                    Some(Mod::Max) if signed => ReduxOp::MaxS,
                    Some(Mod::Max) => ReduxOp::MaxU,
                    Some(Mod::And) => ReduxOp::And,
                    Some(Mod::Or) => ReduxOp::Or,
                    Some(Mod::Xor) => ReduxOp::Xor,
                    _ => return self.unsupported("redux operation"),
                };
                if i.ty().is_some_and(is_float) {
                    return self.unsupported("floating-point redux");
                }
                Op::Redux {
                    op,
                    d: self.dst1(&ops[0])?,
                    a: self.src(&ops[1])?,
                    mask: self.src(&ops[2])?,
                }
            }
            Opcode::Activemask => Op::Activemask {
                d: self.dst1(&ops[0])?,
            },
            Opcode::Tex => self.decode_tex()?,
            Opcode::Suld | Opcode::Sust => self.decode_surface()?,
            Opcode::Nanosleep => Op::Nanosleep,
            Opcode::Prefetch | Opcode::Prefetchu | Opcode::Discard | Opcode::Pmevent => Op::Nop,
            // Programmatic dependent launch (sm_90; CUB's and Thrust's kernels for sm_90
            // use it). The vgpu runs a program's launches one after another, each after
            // every earlier one completed and its stores reached memory (the kernel-exit
            // drain): the grids a `wait` waits for are complete when the kernel starts,
            // so it returns at once, and `launch_dependents` is a scheduling hint. (So the
            // vgpu cannot show a dependent kernel that reads before its `wait`.)
            Opcode::Griddepcontrol => {
                if !(self.inst.has(Mod::Wait) || self.inst.has(Mod::LaunchDependents)) {
                    return self
                        .unsupported("griddepcontrol other than `.wait`, `.launch_dependents`");
                }
                Op::Nop
            }
            Opcode::Cp => self.decode_cp()?,
            Opcode::Mbarrier => self.decode_mbarrier()?,
            Opcode::Mapa => {
                return self.unsupported(
                    "`mapa`: distributed shared memory of thread block clusters (sm_90 \
                     `cluster.map_shared_rank`) — the virtual GPU runs every CTA as a \
                     cluster of its own",
                )
            }
            Opcode::Elect => {
                if !i.has(Mod::Sync) {
                    return self.unsupported("`elect` without `.sync`");
                }
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (self.dst(a)?, self.dst(b)?),
                    _ => return self.unsupported("`elect.sync` takes `d|p`"),
                };
                Op::Elect {
                    d,
                    p,
                    mask: self.src(&ops[1])?,
                }
            }
            Opcode::Ldmatrix => self.decode_ldmatrix()?,
            Opcode::Mma => self.decode_mma()?,
            Opcode::Wmma => self.decode_wmma()?,
            _ => {
                let mut dsts = Vec::new();
                let mut srcs = Vec::new();
                for (k, o) in ops.iter().enumerate() {
                    if k == 0 {
                        match o {
                            Operand::Pair(a, b) => {
                                dsts.push(self.dst(a)?);
                                dsts.push(self.dst(b)?);
                            }
                            o => dsts.push(self.dst(o)?),
                        }
                    } else {
                        let s = self.src(o)?;
                        if matches!(s, Src::Special(..) | Src::LocalAddr(_)) {
                            return self.unsupported("special register as an arithmetic operand");
                        }
                        srcs.push(s);
                    }
                }
                match crate::alu::decode(i, &dsts, &srcs) {
                    Ok(a) => Op::Alu(a),
                    Err(why) => return self.unsupported(&why),
                }
            }
        })
    }

    fn elem(&self) -> Result<(u32, bool), LoadError> {
        let ty = match self.inst.ty() {
            Some(t) => t,
            None => return self.unsupported("missing type"),
        };
        match type_bytes(ty) {
            Some(n) if n <= 8 => Ok((n, is_signed(ty))),
            _ => self.unsupported("type"),
        }
    }

    /// A texture or surface access's `[handle, {c…}]`: the register holding the object's
    /// handle, and as many coordinates as the geometry (`.1d`, `.2d`, `.3d`) has (a 3-D
    /// access names four, the fourth ignored).
    fn texture_operand(&self, op: &Operand) -> Result<(Src, Vec<Src>), LoadError> {
        let mods = &self.inst.mods;
        let dims = if mods.contains(&Mod::Geom1d) {
            1
        } else if mods.contains(&Mod::Geom2d) {
            2
        } else if mods.contains(&Mod::Geom3d) {
            3
        } else {
            return self.unsupported("geometry other than .1d, .2d, .3d");
        };
        let Operand::TexAddr { tex, coords } = op else {
            return self.unsupported("operand other than `[handle, {coordinates}]`");
        };
        if coords.len() < dims || coords.len() > dims.max(4) {
            return self.unsupported("coordinate count for the geometry");
        }
        let handle = match &**tex {
            Operand::Name(n) if matches!(self.lookup(n), Some(Name::Reg(_))) => self.src(tex)?,
            _ => {
                return self.unsupported(
                    "a texture or surface reference (`.texref`, `.surfref`) instead of an object",
                )
            }
        };
        let coords = coords[..dims]
            .iter()
            .map(|c| self.src(c))
            .collect::<Result<_, _>>()?;
        Ok((handle, coords))
    }

    /// `tex.geom.v4.dtype.ctype d, [tex, {c…}]` (unified mode; `crate::texture`).
    fn decode_tex(&self) -> Result<Op, LoadError> {
        use crate::texture::TexType;
        let ops = self.operands();
        let mods = &self.inst.mods;
        let types: Vec<Mod> = mods
            .iter()
            .copied()
            .filter(|m| m.class() == ptx::ModClass::Type)
            .collect();
        let ty = match types.first() {
            Some(Mod::S32) => TexType::S32,
            Some(Mod::U32) => TexType::U32,
            Some(Mod::F32) => TexType::F32,
            _ => return self.unsupported("texture result type other than .s32, .u32, .f32"),
        };
        let int_coords = match types.get(1) {
            Some(Mod::S32) => true,
            Some(Mod::F32) => false,
            _ => return self.unsupported("texture coordinate type other than .s32, .f32"),
        };
        if ops.len() != 2 || self.inst.vector() != Some(4) {
            return self.unsupported("texture fetch form (LOD, offsets, depth compare, non-.v4)");
        }
        let (tex, coords) = self.texture_operand(&ops[1])?;
        let mut ds = [None; 4];
        let elems = self.elements(&ops[0])?;
        if elems.len() != 4 {
            return self.unsupported("texture result other than four registers");
        }
        for (k, o) in elems.iter().enumerate() {
            ds[k] = self.dst(o)?;
        }
        Ok(Op::Tex {
            ds,
            tex,
            coords,
            int_coords,
            ty,
        })
    }

    /// `suld.b.geom{.v}.bN.mode d, [surf, {c…}]` and `sust.b.geom{.v}.bN.mode [surf,
    /// {c…}], {v…}` (`crate::texture::surface_address`).
    fn decode_surface(&self) -> Result<Op, LoadError> {
        use crate::texture::Boundary;
        let ops = self.operands();
        let mods = &self.inst.mods;
        if !mods.contains(&Mod::FragB) {
            return self.unsupported("formatted surface access (only `.b`)");
        }
        let size = match self.inst.ty() {
            Some(Mod::B8) => 1,
            Some(Mod::B16) => 2,
            Some(Mod::B32) => 4,
            Some(Mod::B64) => 8,
            _ => return self.unsupported("surface element type other than .b8-.b64"),
        };
        let mode = if mods.contains(&Mod::Zero) {
            Boundary::Zero
        } else if mods.contains(&Mod::Clamp) {
            Boundary::Clamp
        } else {
            Boundary::Trap
        };
        let load = self.inst.opcode == Opcode::Suld;
        if ops.len() != 2 {
            return self.unsupported("surface access operands");
        }
        let (addr, data) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let (surf, coords) = self.texture_operand(addr)?;
        let elems = self.elements(data)?;
        if elems.len() != self.inst.vector().unwrap_or(1) as usize {
            return self.unsupported("vector width and operand count differ");
        }
        Ok(if load {
            Op::Suld {
                ds: elems
                    .iter()
                    .map(|o| self.dst(o))
                    .collect::<Result<_, _>>()?,
                surf,
                coords,
                size,
                mode,
            }
        } else {
            Op::Sust {
                surf,
                coords,
                vals: elems
                    .iter()
                    .map(|o| self.src(o))
                    .collect::<Result<_, _>>()?,
                size,
                mode,
            }
        })
    }

    fn decode_ld(&self) -> Result<Op, LoadError> {
        let ops = self.operands();
        if ops.len() != 2 {
            return self.unsupported("cache-policy operand");
        }
        let (size, signed) = self.elem()?;
        let mut space = self.mem_space();
        let addr = self.addr(&ops[1], &mut space)?;
        let ds: Vec<Option<Slot>> = self
            .elements(&ops[0])?
            .iter()
            .map(|o| self.dst(o))
            .collect::<Result<_, _>>()?;
        if ds.len() != self.inst.vector().unwrap_or(1) as usize {
            return self.unsupported("vector width and operand count differ");
        }
        let (sem, scope) = self.sem_scope(Sem::Weak);
        if sem == Sem::Release || sem == Sem::AcqRel {
            return self.unsupported("load with release semantics");
        }
        Ok(Op::Ld {
            space,
            ds,
            addr,
            size,
            signed,
            sem,
            scope,
        })
    }

    fn decode_st(&self) -> Result<Op, LoadError> {
        let ops = self.operands();
        if ops.len() != 2 {
            return self.unsupported("cache-policy operand");
        }
        let (size, _) = self.elem()?;
        let mut space = self.mem_space();
        let addr = self.addr(&ops[0], &mut space)?;
        if matches!(space, MemSpace::Const | MemSpace::KernelParam) {
            return self.unsupported("store to read-only space");
        }
        let vals: Vec<Src> = self
            .elements(&ops[1])?
            .iter()
            .map(|o| self.src(o))
            .collect::<Result<_, _>>()?;
        if vals.len() != self.inst.vector().unwrap_or(1) as usize {
            return self.unsupported("vector width and operand count differ");
        }
        let (sem, scope) = self.sem_scope(Sem::Weak);
        if sem == Sem::Acquire || sem == Sem::AcqRel {
            return self.unsupported("store with acquire semantics");
        }
        Ok(Op::St {
            space,
            addr,
            vals,
            size,
            sem,
            scope,
        })
    }

    fn decode_atom(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        let is_red = i.opcode == Opcode::Red;
        let vector = i.vector();
        let ty = match i.ty() {
            Some(t) => t,
            None => return self.unsupported("missing type"),
        };
        let size = match type_bytes(ty) {
            Some(n) if n <= 8 => n,
            _ => return self.unsupported("atomic type"),
        };
        let signed = is_signed(ty);
        let op = match (i.op(), ty) {
            (Some(Mod::And), _) => AtomOp::And,
            (Some(Mod::Or), _) => AtomOp::Or,
            (Some(Mod::Xor), _) => AtomOp::Xor,
            (Some(Mod::Exch), _) => AtomOp::Exch,
            (Some(Mod::Cas), _) => AtomOp::Cas,
            (Some(Mod::Add), Mod::F32) => AtomOp::AddF32,
            (Some(Mod::Add), Mod::F64) => AtomOp::AddF64,
            (Some(Mod::Add), Mod::F16) => AtomOp::AddF16,
            (Some(Mod::Add), Mod::F16x2) => AtomOp::AddF16x2,
            (Some(Mod::Add), Mod::Bf16) => AtomOp::AddBf16,
            (Some(Mod::Add), Mod::Bf16x2) => AtomOp::AddBf16x2,
            (Some(Mod::Add), _) => AtomOp::AddInt,
            (Some(Mod::Inc), _) => AtomOp::Inc,
            (Some(Mod::Dec), _) => AtomOp::Dec,
            (Some(Mod::Min), t) if is_float(t) => AtomOp::MinF,
            (Some(Mod::Max), t) if is_float(t) => AtomOp::MaxF,
            (Some(Mod::Min), _) if signed => AtomOp::MinS,
            (Some(Mod::Min), _) => AtomOp::MinU,
            (Some(Mod::Max), _) if signed => AtomOp::MaxS,
            (Some(Mod::Max), _) => AtomOp::MaxU,
            _ => return self.unsupported("atomic operation"),
        };
        if matches!(op, AtomOp::MinF | AtomOp::MaxF) && ty != Mod::F32 && ty != Mod::F64 {
            return self.unsupported("half-precision atomic min/max");
        }
        if let Some(n) = vector {
            return self.decode_atom_vector(op, size, n as usize, is_red);
        }
        let mut space = self.mem_space();
        if !matches!(
            space,
            MemSpace::Global | MemSpace::Shared | MemSpace::Generic
        ) {
            return self.unsupported("atomic on this state space");
        }
        let (d, rest) = if is_red {
            (None, ops)
        } else {
            (self.dst(&ops[0])?, &ops[1..])
        };
        let want = if op == AtomOp::Cas { 3 } else { 2 };
        if rest.len() != want {
            return self.unsupported("operand count (cache policies are not supported)");
        }
        let addr = self.addr(&rest[0], &mut space)?;
        let b = self.src(&rest[1])?;
        let c = if op == AtomOp::Cas {
            Some(self.src(&rest[2])?)
        } else {
            None
        };
        let (sem, scope) = self.atom_sem_scope();
        Ok(Op::Atom {
            space,
            op,
            size,
            d,
            addr,
            b,
            c,
            sem,
            scope,
        })
    }

    /// `atom`/`red` with a vector type (sm_90: `atom.global.add.v2.f32`, `.v4.f32`, and the
    /// 16-bit and packed half forms): each element is an atomic of its own on consecutive
    /// elements of memory, in element order (the ISA guarantees atomicity per element, not
    /// across the vector).
    fn decode_atom_vector(
        &self,
        op: AtomOp,
        size: u32,
        n: usize,
        is_red: bool,
    ) -> Result<Op, LoadError> {
        let ops = self.operands();
        if !matches!(
            op,
            AtomOp::AddF32
                | AtomOp::AddF16
                | AtomOp::AddBf16
                | AtomOp::AddF16x2
                | AtomOp::AddBf16x2
                | AtomOp::MinF
                | AtomOp::MaxF
        ) {
            return self.unsupported("vector atomic operation (only floating-point add, min, max)");
        }
        let mut space = self.mem_space();
        if !matches!(space, MemSpace::Global | MemSpace::Generic) {
            return self.unsupported("vector atomics outside global memory");
        }
        let (ds, rest) = if is_red {
            (vec![None; n], ops)
        } else {
            let ds = self
                .elements(&ops[0])?
                .iter()
                .map(|d| self.dst(d))
                .collect::<Result<Vec<_>, _>>()?;
            (ds, &ops[1..])
        };
        if rest.len() != 2 {
            return self.unsupported("operand count (cache policies are not supported)");
        }
        let addr = self.addr(&rest[0], &mut space)?;
        let bs = self
            .elements(&rest[1])?
            .iter()
            .map(|b| self.src(b))
            .collect::<Result<Vec<_>, _>>()?;
        if ds.len() != n || bs.len() != n {
            return self.unsupported("vector width and operand count differ");
        }
        let (sem, scope) = self.atom_sem_scope();
        Ok(Op::AtomVec {
            space,
            op,
            size,
            ds,
            addr,
            bs,
            sem,
            scope,
        })
    }

    fn decode_mov(&self) -> Result<Op, LoadError> {
        let ops = self.operands();
        if let Some(n) = self.inst.vector() {
            // `mov.v4.u32 %v, {a, b, c, d}` and friends: element-wise, all sources read
            // before any destination is written.
            let ds = self.elements(&ops[0])?;
            let ss = self.elements(&ops[1])?;
            if ds.len() != n as usize || ss.len() != n as usize {
                return self.unsupported("vector width and operand count differ");
            }
            let mut pairs = Vec::new();
            for (d, a) in ds.iter().zip(&ss) {
                if let Some(d) = self.dst(d)? {
                    pairs.push((d, self.src(a)?));
                }
            }
            return Ok(Op::Movs { pairs });
        }
        let bits = self.inst.ty().and_then(type_bytes).unwrap_or(4) * 8;
        match (&ops[0], &ops[1]) {
            (Operand::Vector(parts), src) => {
                let ds: Vec<Option<Slot>> = parts
                    .iter()
                    .map(|o| self.dst(o))
                    .collect::<Result<_, _>>()?;
                let n = ds.len() as u32;
                if n == 0 || !bits.is_multiple_of(n) {
                    return self.unsupported("vector unpack shape");
                }
                Ok(Op::Unpack {
                    ds,
                    a: self.src(src)?,
                    bits: bits / n,
                })
            }
            (d, Operand::Vector(parts)) => {
                let srcs: Vec<Src> = parts
                    .iter()
                    .map(|o| self.src(o))
                    .collect::<Result<_, _>>()?;
                let n = srcs.len() as u32;
                if n == 0 || !bits.is_multiple_of(n) {
                    return self.unsupported("vector pack shape");
                }
                Ok(Op::Pack {
                    d: self.dst1(d)?,
                    parts: srcs,
                    bits: bits / n,
                })
            }
            (d, a) => Ok(Op::Mov {
                d: self.dst1(d)?,
                a: self.src(a)?,
            }),
        }
    }

    /// The first slot of the vector register `op` names, which must have `n` members: the
    /// caller's side of a `.reg .vN` parameter or return value `param`.
    fn vector_reg(&self, op: &Operand, n: u8, param: &str) -> Result<Slot, LoadError> {
        if let Operand::Name(name) = op {
            match self.lookup(name) {
                Some(Name::VecReg(first, k)) if k == n => return Ok(first),
                None => return self.undefined(name),
                _ => {}
            }
        }
        self.unsupported(&format!(
            "`{param}` is a `.v{n}` register parameter; pass a `.v{n}` vector register"
        ))
    }

    fn frame_var(&self, op: &Operand) -> Result<(u32, u32), LoadError> {
        let Operand::Name(n) = op else {
            return self.unsupported("call argument must be a `.param` variable");
        };
        match self.lookup(n) {
            Some(Name::Frame(o, ptx::Space::Param)) => Ok((o, 0)),
            Some(_) => self.unsupported(&format!("call argument `{n}` is not a `.param` variable")),
            None => self.undefined(n),
        }
    }

    fn decode_call(&self) -> Result<Op, LoadError> {
        let ops = self.operands();
        let mut k = 0;
        let rets: &[Operand] = match ops.first() {
            Some(Operand::List(v)) => {
                k = 1;
                v
            }
            _ => &[],
        };
        let Some(Operand::Name(callee)) = ops.get(k) else {
            return self.unsupported("call target");
        };
        let args: &[Operand] = match ops.get(k + 1) {
            Some(Operand::List(v)) => v,
            None => &[],
            _ => return self.unsupported("call operands"),
        };
        if let Some(Name::Reg(slot)) = self.lookup(callee) {
            // Indirect call through a function address; the optional prototype (or
            // branch-target list) operand only restates the signature, which the
            // executor checks against the callee it finds.
            let frame = |v: &[Operand]| {
                v.iter()
                    .map(|a| self.frame_var(a).map(|x| x.0))
                    .collect::<Result<Vec<u32>, _>>()
            };
            return Ok(Op::CallIndirect {
                target: Src::Reg(slot),
                args: frame(args)?,
                rets: frame(rets)?,
            });
        }
        if ops.len() > k + 2 {
            return self.unsupported("direct call with a prototype operand");
        }
        let frame_offs = |v: &[Operand]| {
            v.iter()
                .map(|a| self.frame_var(a).map(|x| x.0))
                .collect::<Result<Vec<u32>, _>>()
        };
        match callee.as_str() {
            "vprintf" if !self.d.funcs.contains_key("vprintf") => {
                let arg_offs = frame_offs(args)?;
                if arg_offs.len() != 2 {
                    return self.unsupported("vprintf takes 2 arguments");
                }
                return Ok(Op::Vprintf {
                    args: arg_offs,
                    ret: frame_offs(rets)?.first().copied(),
                });
            }
            "__assertfail" if !self.d.funcs.contains_key("__assertfail") => {
                let arg_offs = frame_offs(args)?;
                if arg_offs.len() < 4 {
                    return self.unsupported("__assertfail takes 5 arguments");
                }
                return Ok(Op::AssertFail { args: arg_offs });
            }
            // The device heap (CUDA's `malloc`/`free`, and `new`/`delete` through them),
            // declared `.extern` by every module that uses it.
            "malloc" if !self.d.funcs.contains_key("malloc") => {
                let (size, ret) = (frame_offs(args)?, frame_offs(rets)?);
                if size.len() != 1 || ret.len() != 1 {
                    return self.unsupported("malloc takes 1 argument and returns 1 value");
                }
                return Ok(Op::DevMalloc {
                    size: size[0],
                    ret: ret[0],
                });
            }
            "free" if !self.d.funcs.contains_key("free") => {
                let ptr = frame_offs(args)?;
                if ptr.len() != 1 || !rets.is_empty() {
                    return self.unsupported("free takes 1 argument and returns nothing");
                }
                return Ok(Op::DevFree { ptr: ptr[0] });
            }
            _ => {}
        }
        let Some(&idx) = self.d.funcs.get(callee.as_str()) else {
            if self.d.module.function(callee).is_some() {
                // The device runtime (`-lcudadevrt`): its entry points are `cnp*`
                // functions the driver provides.
                if callee.starts_with("cnp") || callee.starts_with("cudaLaunchDevice") {
                    return self.unsupported(&format!(
                        "call to `{callee}`: device-side kernel launches and the device \
                         runtime (dynamic parallelism, -lcudadevrt)"
                    ));
                }
                return self.unsupported(&format!("call to external function `{callee}`"));
            }
            return self.undefined(callee);
        };
        let target = self
            .d
            .module
            .functions()
            .filter(|f| f.body.is_some())
            .nth(idx as usize);
        let Some(target) = target else {
            return self.undefined(callee);
        };
        if target.params.len() != args.len() || target.rets.len() != rets.len() {
            return self.unsupported(&format!(
                "`{callee}` takes {} argument(s) and {} return value(s)",
                target.params.len(),
                target.rets.len()
            ));
        }
        // Callee frame layout mirrors `Decoder::function`: `.param` parameters, then
        // `.param` returns; `.reg` ones are the callee's first register slots, in
        // declaration order (parameters, then returns).
        let mut off = 0u64;
        let mut reg: Slot = 1;
        let mut cargs = Vec::new();
        for (p, caller) in target.params.iter().zip(args) {
            if p.space == ptx::Space::Reg {
                if let Some(n) = p.vector {
                    // A vector parameter takes a vector register of the same width
                    // (ptxas accepts no other operand there), member by member.
                    let from = self.vector_reg(caller, n, &p.name)?;
                    for i in 0..n as u32 {
                        cargs.push(CallArg::Reg {
                            value: Src::Reg(from + i),
                            to: reg + i,
                        });
                    }
                    reg += n as u32;
                    continue;
                }
                let value = self.src(caller)?;
                if matches!(value, Src::Special(..) | Src::LocalAddr(_)) {
                    return self.unsupported("special register as a call argument");
                }
                cargs.push(CallArg::Reg { value, to: reg });
                reg += 1;
                continue;
            }
            let size = var_size(p).unwrap_or(0);
            off = align_up(off, var_align(p));
            cargs.push(CallArg::Frame {
                from: self.frame_var(caller)?.0,
                to: off as u32,
                bytes: size as u32,
            });
            off += size;
        }
        let mut crets = Vec::new();
        for (r, caller) in target.rets.iter().zip(rets) {
            if r.space == ptx::Space::Reg {
                if let Some(n) = r.vector {
                    let to = self.vector_reg(caller, n, &r.name)?;
                    for i in 0..n as u32 {
                        crets.push(CallRet::Reg {
                            from: reg + i,
                            to: to + i,
                        });
                    }
                    reg += n as u32;
                    continue;
                }
                let Some(to) = self.dst(caller)? else {
                    return self.unsupported("`_` as a `.reg` return value");
                };
                crets.push(CallRet::Reg { from: reg, to });
                reg += 1;
                continue;
            }
            let size = var_size(r).unwrap_or(0);
            off = align_up(off, var_align(r));
            crets.push(CallRet::Frame {
                from: off as u32,
                to: self.frame_var(caller)?.0,
                bytes: size as u32,
            });
            off += size;
        }
        Ok(Op::Call {
            callee: idx,
            args: cargs,
            rets: crets,
        })
    }

    /// `cp.async` and its group instructions (PTX ISA §9.7.9.25.3). The bulk and
    /// mbarrier-completed forms do not parse (their modifiers are not in the table).
    fn decode_cp(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        if !i.has(Mod::Async) {
            return self.unsupported("`cp` without `.async`");
        }
        if i.has(Mod::Bulk) {
            return self.decode_bulk_copy();
        }
        if i.has(Mod::Mbarrier) {
            // `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]`
            if !i.has(Mod::Arrive) || ops.len() != 1 {
                return self.unsupported("`cp.async.mbarrier` other than `.arrive [addr]`");
            }
            let mut space = MemSpace::Shared;
            let addr = self.addr(&ops[0], &mut space)?;
            return Ok(Op::Mbar {
                kind: MbarKind::CpAsyncArrive {
                    noinc: i.has(Mod::Noinc),
                },
                space,
                addr,
                d: None,
                b: None,
                sem: Sem::Release,
                scope: Scope::Cta,
            });
        }
        if i.has(Mod::CommitGroup) {
            return match ops.len() {
                0 => Ok(Op::CpAsyncCommit),
                _ => self.unsupported("operands"),
            };
        }
        if i.has(Mod::WaitAll) {
            return match ops.len() {
                0 => Ok(Op::CpAsyncWait {
                    pending: 0,
                    all: true,
                }),
                _ => self.unsupported("operands"),
            };
        }
        if i.has(Mod::WaitGroup) {
            return match ops {
                [Operand::Int(n)] if (0..=i64::from(u32::MAX)).contains(n) => Ok(Op::CpAsyncWait {
                    pending: *n as u32,
                    all: false,
                }),
                _ => self.unsupported("`wait_group` takes an integer constant"),
            };
        }
        let spaces: Vec<Mod> = i.mods_of(ptx::ModClass::Space).collect();
        if !matches!(
            spaces.as_slice(),
            [Mod::Shared | Mod::SharedCta, Mod::Global]
        ) {
            return self.unsupported("only `.shared.global` copies");
        }
        let cg = i.has(Mod::Cg);
        if !(cg || i.has(Mod::Ca)) {
            return self.unsupported("cache operator must be `.ca` or `.cg`");
        }
        // An `.L2::cache_hint` copy ends with a cache-policy operand: a hint only.
        let n = ops.len() - usize::from(i.has(Mod::L2CacheHint));
        if !(3..=4).contains(&n) {
            return self.unsupported("operands");
        }
        let size = match ops[2] {
            Operand::Int(4) | Operand::Int(8) if !cg => ops_int(&ops[2]),
            Operand::Int(16) => 16,
            _ => return self.unsupported("cp-size must be 4, 8 or 16 (16 for `.cg`)"),
        };
        let (mut src_size, mut ignore_src) = (None, None);
        if n == 4 {
            let is_pred = match &ops[3] {
                Operand::Not(_) => true,
                Operand::Name(r) => match self.lookup(r) {
                    Some(Name::Reg(s)) => self.reg_type(s) == Some(Mod::Pred),
                    _ => false,
                },
                _ => false,
            };
            let v = self.src(&ops[3])?;
            if is_pred {
                ignore_src = Some(v);
            } else {
                src_size = Some(v);
            }
        }
        let mut dst_space = MemSpace::Shared;
        let mut src_space = MemSpace::Global;
        Ok(Op::CpAsync {
            dst: self.addr(&ops[0], &mut dst_space)?,
            src: self.addr(&ops[1], &mut src_space)?,
            size,
            src_size,
            ignore_src,
        })
    }

    /// `cp.async.bulk.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes [dst],
    /// [src], size, [mbar]` (PTX ISA §9.7.9.25.4.1), the bulk copy behind
    /// `cuda::memcpy_async` with a `cuda::barrier` on sm_90. Not decoded: the other
    /// directions (`bulk_group` completion), multicast, and cache or byte-mask operands.
    fn decode_bulk_copy(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        let spaces: Vec<Mod> = i.mods_of(ptx::ModClass::Space).collect();
        if !matches!(
            spaces.as_slice(),
            [Mod::SharedCta | Mod::SharedCluster, Mod::Global]
        ) || !i.has(Mod::CompleteTxBytes)
        {
            return self.unsupported(
                "bulk copies other than global to shared memory completing on an mbarrier",
            );
        }
        if ops.len() != 4 || i.has(Mod::L2CacheHint) {
            return self.unsupported("operands (multicast and cache hints are not supported)");
        }
        let (mut dst_space, mut src_space, mut mbar_space) =
            (MemSpace::Shared, MemSpace::Global, MemSpace::Shared);
        Ok(Op::BulkCopy {
            dst: self.addr(&ops[0], &mut dst_space)?,
            src: self.addr(&ops[1], &mut src_space)?,
            size: self.src(&ops[2])?,
            mbar: self.addr(&ops[3], &mut mbar_space)?,
        })
    }

    /// `mbarrier.*` (PTX ISA §9.7.13.15) on a barrier object in shared memory: `init`,
    /// `arrive{.noComplete}`, `arrive_drop`, `test_wait{.parity}`, `try_wait{.parity}`
    /// (without a time limit: it returns at once, as a `try_wait` whose limit ran out may),
    /// `pending_count`, `inval`, and the transaction counts of sm_90 bulk copies
    /// (`expect_tx`, `complete_tx`, `arrive.expect_tx`). A `.shared::cluster` address is
    /// the CTA's own shared memory: the vgpu launches clusters of one CTA.
    fn decode_mbarrier(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        if i.ty().is_some_and(|t| t != Mod::B64) {
            return self.unsupported("mbarrier type other than `.b64`");
        }
        // The object is in shared memory: `.shared` addresses it there, no space a
        // generic address (which must point into shared memory).
        let mut space = match i.space() {
            None => MemSpace::Generic,
            Some(_) => MemSpace::Shared,
        };
        let (sem, scope) = self.sem_scope(Sem::Relaxed);
        let scope = if i.scope().is_none() {
            Scope::Cta
        } else {
            scope
        };
        let strong = |s: Sem| {
            if s == Sem::Relaxed && i.sem().is_none() {
                None
            } else {
                Some(s)
            }
        };
        let tx = i.has(Mod::ExpectTx) || i.has(Mod::CompleteTx);
        let (kind, d, addr, b, sem) = if tx && !(i.has(Mod::Arrive) || i.has(Mod::ArriveDrop)) {
            // `mbarrier.expect_tx` / `complete_tx [a], txCount`: relaxed by default.
            if ops.len() != 2 {
                return self.unsupported("operands");
            }
            let a = self.addr(&ops[0], &mut space)?;
            let kind = if i.has(Mod::ExpectTx) {
                MbarKind::ExpectTx
            } else {
                MbarKind::CompleteTx
            };
            (kind, None, Some(a), Some(self.src(&ops[1])?), sem)
        } else if i.has(Mod::Init) {
            if ops.len() != 2 {
                return self.unsupported("operands");
            }
            let a = self.addr(&ops[0], &mut space)?;
            (
                MbarKind::Init,
                None,
                Some(a),
                Some(self.src(&ops[1])?),
                Sem::Weak,
            )
        } else if i.has(Mod::Arrive) || i.has(Mod::ArriveDrop) {
            if !(2..=3).contains(&ops.len()) {
                return self.unsupported("operands");
            }
            let a = self.addr(&ops[1], &mut space)?;
            if i.has(Mod::CompleteTx) {
                return self.unsupported("`mbarrier.arrive` with `.complete_tx`");
            }
            // The count, or with `.expect_tx` the transaction count (one arrival).
            let count = match ops.get(2) {
                Some(c) => self.src(c)?,
                None if tx => return self.unsupported("`.expect_tx` without a count"),
                None => Src::Imm(1),
            };
            let sem = strong(sem).unwrap_or(Sem::Release);
            (
                MbarKind::Arrive {
                    drop: i.has(Mod::ArriveDrop),
                    tx,
                },
                self.dst(&ops[0])?,
                Some(a),
                Some(count),
                sem,
            )
        } else if i.has(Mod::TestWait) || i.has(Mod::TryWait) {
            // `try_wait` may take a suspend-time hint as a fourth operand: a hint only.
            let n = if i.has(Mod::TryWait) { 3..=4 } else { 3..=3 };
            if !n.contains(&ops.len()) {
                return self.unsupported("operands");
            }
            let a = self.addr(&ops[1], &mut space)?;
            let sem = strong(sem).unwrap_or(Sem::Acquire);
            (
                MbarKind::Test {
                    parity: i.has(Mod::Parity),
                },
                self.dst(&ops[0])?,
                Some(a),
                Some(self.src(&ops[2])?),
                sem,
            )
        } else if i.has(Mod::PendingCount) {
            if ops.len() != 2 {
                return self.unsupported("operands");
            }
            (
                MbarKind::PendingCount,
                self.dst(&ops[0])?,
                None,
                Some(self.src(&ops[1])?),
                Sem::Weak,
            )
        } else if i.has(Mod::Inval) {
            if ops.len() != 1 {
                return self.unsupported("operands");
            }
            let a = self.addr(&ops[0], &mut space)?;
            (MbarKind::Inval, None, Some(a), None, Sem::Weak)
        } else {
            return self.unsupported("mbarrier operation");
        };
        let addr = match addr {
            Some(a) => a,
            // `pending_count` touches no memory: any address, never used.
            None => Addr {
                base: AddrBase::Abs(0),
                offset: 0,
            },
        };
        Ok(Op::Mbar {
            kind,
            space,
            addr,
            d,
            b,
            sem,
            scope,
        })
    }

    /// `ldmatrix` (PTX ISA §9.7.14.5.15): the `.m8n8` 16-bit shape.
    fn decode_ldmatrix(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        if !(i.has(Mod::Sync) && i.has(Mod::Aligned)) {
            return self.unsupported("`ldmatrix` needs `.sync.aligned`");
        }
        if !i.has(Mod::M8n8) || i.ty() != Some(Mod::B16) || i.types().len() != 1 {
            return self.unsupported("only the `.m8n8` shape with `.b16` elements");
        }
        let num = if i.has(Mod::X1) {
            1
        } else if i.has(Mod::X2) {
            2
        } else if i.has(Mod::X4) {
            4
        } else {
            return self.unsupported("`.num` must be `.x1`, `.x2` or `.x4`");
        };
        let mut space = match i.space() {
            Some(Mod::Shared | Mod::SharedCta) => MemSpace::Shared,
            None => MemSpace::Generic,
            Some(_) => return self.unsupported("state space"),
        };
        let ds = self
            .elements(&ops[0])?
            .iter()
            .map(|o| self.dst1(o))
            .collect::<Result<Vec<Slot>, _>>()?;
        if ds.len() != num {
            return self.unsupported("one destination register per matrix");
        }
        Ok(Op::Ldmatrix {
            ds,
            addr: self.addr(&ops[1], &mut space)?,
            space,
            trans: i.has(Mod::Trans),
        })
    }

    /// `mma.sync.aligned.shape.row.col` (PTX ISA §9.7.14.5.14) with `.f16`/`.bf16`
    /// inputs (`.m16n8k8`, `.m16n8k16`), `.tf32` (`.m16n8k4`, `.m16n8k8`), `.f64`
    /// (`.m8n8k4`, `.m16n8k4`, `.m16n8k8`, `.m16n8k16`), `.e4m3`/`.e5m2` (`.m16n8k32`),
    /// `.s8`/`.u8` inputs (`.m8n8k16`, `.m16n8k16`, `.m16n8k32`) or `.s4`/`.u4` inputs
    /// (`.m8n8k32`): the shapes whose fragment layouts §9.7.14.5.x gives. Other shapes and
    /// types stay unsupported.
    fn decode_mma(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        if !(i.has(Mod::Sync) && i.has(Mod::Aligned) && i.has(Mod::Row) && i.has(Mod::Col)) {
            return self.unsupported("`mma` needs `.sync.aligned` and the `.row.col` layout");
        }
        let (m, k) = if i.has(Mod::M16n8k4) {
            (16, 4)
        } else if i.has(Mod::M8n8k4) {
            (8, 4)
        } else if i.has(Mod::M16n8k8) {
            (16, 8)
        } else if i.has(Mod::M16n8k16) {
            (16, 16)
        } else if i.has(Mod::M16n8k32) {
            (16, 32)
        } else if i.has(Mod::M8n8k16) {
            (8, 16)
        } else if i.has(Mod::M8n8k32) {
            (8, 32)
        } else {
            return self.unsupported(
                "shape (`.m16n8k4`, `.m16n8k8`, `.m16n8k16`, `.m16n8k32`, `.m8n8k4`, `.m8n8k16` and `.m8n8k32` run)",
            );
        };
        let input = |m: Mod| match m {
            Mod::F16 => Some(MmaIn::F16),
            Mod::Bf16 => Some(MmaIn::Bf16),
            Mod::S8 => Some(MmaIn::S8),
            Mod::U8 => Some(MmaIn::U8),
            Mod::S4 => Some(MmaIn::S4),
            Mod::U4 => Some(MmaIn::U4),
            Mod::Tf32 => Some(MmaIn::Tf32),
            Mod::F64 => Some(MmaIn::F64),
            Mod::E4m3 => Some(MmaIn::E4m3),
            Mod::E5m2 => Some(MmaIn::E5m2),
            _ => None,
        };
        let acc = |m: Mod| match m {
            Mod::F32 => Some(MmaAcc::F32),
            Mod::F16 => Some(MmaAcc::F16),
            Mod::S32 => Some(MmaAcc::S32),
            Mod::F64 => Some(MmaAcc::F64),
            _ => None,
        };
        let types = i.types();
        let (Some(d), Some(a), Some(b), Some(c)) = (
            types.first().copied().and_then(acc),
            types.get(1).copied().and_then(input),
            types.get(2).copied().and_then(input),
            types.get(3).copied().and_then(acc),
        ) else {
            return self.unsupported("types");
        };
        if types.len() != 4 {
            return self.unsupported("types");
        }
        let satfinite = i.has(Mod::Satfinite);
        let int = a.is_int();
        let ok = if int {
            // A and B of one width (`.s8`/`.u8` mixes, `.s4`/`.u4` mixes), `.s32` C and D.
            b.is_int()
                && b.bits() == a.bits()
                && c == MmaAcc::S32
                && d == MmaAcc::S32
                && match a.bits() {
                    8 => matches!((m, k), (16, 16) | (16, 32) | (8, 16)),
                    _ => (m, k) == (8, 32),
                }
        } else {
            let fp8 = |t: MmaIn| matches!(t, MmaIn::E4m3 | MmaIn::E5m2);
            !satfinite
                && c == d
                && match a {
                    // m16n8k4 and m16n8k8 (sm_80).
                    MmaIn::Tf32 => b == a && m == 16 && (k == 4 || k == 8) && c == MmaAcc::F32,
                    // m8n8k4 (sm_80); m16n8k4, k8, k16 (sm_90).
                    MmaIn::F64 => {
                        b == a && c == MmaAcc::F64 && (m == 8 && k == 4 || m == 16 && k != 32)
                    }
                    // m16n8k32 (sm_89), either format in A and B.
                    MmaIn::E4m3 | MmaIn::E5m2 => {
                        fp8(b) && m == 16 && k == 32 && matches!(c, MmaAcc::F32 | MmaAcc::F16)
                    }
                    _ => {
                        m == 16
                            && a == b
                            && (k == 8 || k == 16)
                            && (c == MmaAcc::F32 || (a == MmaIn::F16 && c == MmaAcc::F16))
                    }
                }
        };
        let rnd = self.f64_rounding(a == MmaIn::F64)?;
        if !ok {
            return self.unsupported("shape and type combination");
        }
        // Registers per thread (PTX ISA §9.7.14.5.x fragment tables): A holds m*k
        // elements, B k*8, C/D m*8, over 32 threads, packed 32/bits per `.b32` register,
        // or one `.f32`/`.s32` per register (two `.f16` per `.f16x2` register).
        let per_reg = a.per_reg();
        let (m, k) = (m as usize, k as usize);
        let (na, nb) = (m * k / 32 / per_reg, k * 8 / 32 / per_reg);
        let ncd = |t: MmaAcc| if t == MmaAcc::F16 { m / 8 } else { m / 4 };
        let (dregs, av, bv, cv) = self.mma_lists()?;
        if av.len() != na || bv.len() != nb || cv.len() != ncd(c) || dregs.len() != ncd(d) {
            return self.unsupported("fragment register counts for this shape");
        }
        Ok(Op::Mma {
            kind: MmaKind {
                m: m as u8,
                k: k as u8,
                a,
                b,
                c,
                d,
                satfinite,
                rnd,
            },
            d: dregs,
            a: av,
            b: bv,
            c: cv,
        })
    }

    /// `wmma.load`, `wmma.store` and `wmma.mma` (PTX ISA §9.7.14.4) in every shape and
    /// type the ISA lists: `.f16`/`.bf16`/`.s8`/`.u8` in `.m16n16k16`, `.m32n8k16`,
    /// `.m8n32k16`; `.tf32` in `.m16n16k8`; `.f64` in `.m8n8k4`; `.s4`/`.u4` in
    /// `.m8n8k32`; `.b1` in `.m8n8k128`. Fragment register counts are checked against the
    /// ISA's fragment tables.
    fn decode_wmma(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        if !(i.has(Mod::Sync) && i.has(Mod::Aligned)) {
            return self.unsupported("`wmma` needs `.sync.aligned`");
        }
        let shape = match [
            (Mod::M16n16k16, (16, 16, 16)),
            (Mod::M32n8k16, (32, 8, 16)),
            (Mod::M8n32k16, (8, 32, 16)),
            (Mod::M16n16k8, (16, 16, 8)),
            (Mod::M8n8k4, (8, 8, 4)),
            (Mod::M8n8k32, (8, 8, 32)),
            (Mod::M8n8k128, (8, 8, 128)),
        ]
        .into_iter()
        .find(|(m, _)| i.has(*m))
        {
            Some((_, (m, n, k))) => WmmaShape { m, n, k },
            None => return self.unsupported("wmma shape"),
        };
        let elem = |m: Mod| {
            Some(match m {
                Mod::F16 => WmmaElem::F16,
                Mod::Bf16 => WmmaElem::Bf16,
                Mod::Tf32 => WmmaElem::Tf32,
                Mod::F32 => WmmaElem::F32,
                Mod::F64 => WmmaElem::F64,
                Mod::S8 => WmmaElem::S8,
                Mod::U8 => WmmaElem::U8,
                Mod::S32 => WmmaElem::S32,
                Mod::S4 => WmmaElem::S4,
                Mod::U4 => WmmaElem::U4,
                Mod::B1 => WmmaElem::B1,
                _ => return None,
            })
        };
        let types: Vec<WmmaElem> = match i.types().into_iter().map(elem).collect() {
            Some(t) => t,
            None => return self.unsupported("wmma type"),
        };
        if i.has(Mod::Load) || i.has(Mod::Store) {
            return self.decode_wmma_mem(shape, &types);
        }
        if !i.has(Mod::Mma) || ops.len() != 4 {
            return self.unsupported("wmma operation (`load`, `store`, `mma`)");
        }
        // `.dtype.ctype` (`.f16` inputs) or `.dtype.atype.btype.ctype`.
        let (d, a, b, c) = match types[..] {
            [d, c] => (d, WmmaElem::F16, WmmaElem::F16, c),
            [d, a, b, c] => (d, a, b, c),
            _ => return self.unsupported("wmma.mma types"),
        };
        let ok = wmma_valid(shape, WmmaFrag::A, a)
            && wmma_valid(shape, WmmaFrag::B, b)
            && wmma_valid(shape, WmmaFrag::C, c)
            && wmma_valid(shape, WmmaFrag::C, d)
            && (a == b
                || matches!(
                    (a, b),
                    (WmmaElem::S8 | WmmaElem::U8, WmmaElem::S8 | WmmaElem::U8)
                )
                || matches!(
                    (a, b),
                    (WmmaElem::S4 | WmmaElem::U4, WmmaElem::S4 | WmmaElem::U4)
                ))
            && a.is_float() == c.is_float()
            && a.is_float() == d.is_float()
            && (a != WmmaElem::Bf16 && a != WmmaElem::Tf32 || (c == WmmaElem::F32 && d == c));
        if !ok {
            return self.unsupported("wmma.mma shape and type combination");
        }
        let and = i.has(Mod::And);
        if a == WmmaElem::B1 && !(i.has(Mod::Popc) && (and || i.has(Mod::Xor))) {
            return self.unsupported("`.b1` wmma.mma needs `.xor.popc` or `.and.popc`");
        }
        let rnd = self.f64_rounding(a == WmmaElem::F64)?;
        let (dregs, av, bv, cv) = self.mma_lists()?;
        self.wmma_count(dregs.len(), shape.regs(WmmaFrag::C, d), "D")?;
        self.wmma_count(av.len(), shape.regs(WmmaFrag::A, a), "A")?;
        self.wmma_count(bv.len(), shape.regs(WmmaFrag::B, b), "B")?;
        self.wmma_count(cv.len(), shape.regs(WmmaFrag::C, c), "C")?;
        Ok(Op::WmmaMma {
            kind: WmmaKind {
                shape,
                a,
                b,
                c,
                d,
                satfinite: i.has(Mod::Satfinite),
                rnd,
                and,
            },
            d: dregs,
            a: av,
            b: bv,
            c: cv,
        })
    }

    /// `wmma.load`/`wmma.store` of `shape` with element types `types` (see
    /// [`Self::decode_wmma`]).
    fn decode_wmma_mem(&self, shape: WmmaShape, types: &[WmmaElem]) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        let load = i.has(Mod::Load);
        let frag = match (
            load,
            i.has(Mod::FragA),
            i.has(Mod::FragB),
            i.has(Mod::FragC),
        ) {
            (true, true, false, false) => WmmaFrag::A,
            (true, false, true, false) => WmmaFrag::B,
            (true, false, false, true) => WmmaFrag::C,
            (false, false, false, false) if i.has(Mod::FragD) => WmmaFrag::C,
            _ => return self.unsupported("wmma fragment (`.a`, `.b`, `.c`; `.d` to store)"),
        };
        let row = match (i.has(Mod::Row), i.has(Mod::Col)) {
            (true, false) => true,
            (false, true) => false,
            _ => return self.unsupported("wmma layout (`.row` or `.col`)"),
        };
        let [e] = types[..] else {
            return self.unsupported("wmma load/store takes one type");
        };
        if !wmma_valid(shape, frag, e) {
            return self.unsupported("wmma shape, fragment and type combination");
        }
        // Sub-byte A is row-major and B column-major in memory (ISA syntax).
        if matches!(e, WmmaElem::S4 | WmmaElem::U4 | WmmaElem::B1)
            && ((frag == WmmaFrag::A && !row) || (frag == WmmaFrag::B && row))
        {
            return self.unsupported("sub-byte A must be `.row` and B `.col`");
        }
        let mut space = match i.space() {
            Some(Mod::Global) => MemSpace::Global,
            Some(Mod::Shared | Mod::SharedCta) => MemSpace::Shared,
            None => MemSpace::Generic,
            Some(_) => return self.unsupported("wmma state space"),
        };
        let (r, a) = if load { (0, 1) } else { (1, 0) };
        let addr = self.addr(&ops[a], &mut space)?;
        let stride = match ops.get(2) {
            Some(o) => Some(self.src(o)?),
            None => None,
        };
        if ops.len() > 3 {
            return self.unsupported("operands");
        }
        let list = self.elements(&ops[r])?;
        self.wmma_count(list.len(), shape.regs(frag, e), "wmma")?;
        Ok(if load {
            let ds = list
                .iter()
                .map(|o| self.dst1(o))
                .collect::<Result<Vec<Slot>, _>>()?;
            Op::WmmaLoad {
                frag,
                shape,
                elem: e,
                row,
                space,
                addr,
                stride,
                ds,
            }
        } else {
            let vals = list
                .iter()
                .map(|o| self.src(o))
                .collect::<Result<Vec<Src>, _>>()?;
            Op::WmmaStore {
                shape,
                elem: e,
                row,
                space,
                addr,
                stride,
                vals,
            }
        })
    }

    /// Fails unless a fragment operand has the `want` registers the ISA gives it.
    fn wmma_count(&self, n: usize, want: usize, what: &str) -> Result<(), LoadError> {
        if n == want {
            Ok(())
        } else {
            self.unsupported(&format!(
                "a {what} fragment of this shape and type has {want} registers, not {n}"
            ))
        }
    }

    /// The register lists `d, a, b, c` of an `mma` or `wmma.mma`.
    #[allow(clippy::type_complexity)]
    fn mma_lists(&self) -> Result<(Vec<Slot>, Vec<Src>, Vec<Src>, Vec<Src>), LoadError> {
        let ops = self.operands();
        let list = |o: &Operand| -> Result<Vec<Src>, LoadError> {
            self.elements(o)?.iter().map(|x| self.src(x)).collect()
        };
        let d = self
            .elements(&ops[0])?
            .iter()
            .map(|o| self.dst1(o))
            .collect::<Result<Vec<Slot>, _>>()?;
        Ok((d, list(&ops[1])?, list(&ops[2])?, list(&ops[3])?))
    }

    /// The rounding of an `mma`/`wmma.mma`: `.rn` unless given; the other modes only for
    /// `.f64` (`f64`).
    fn f64_rounding(&self, f64: bool) -> Result<crate::arith::Rounding, LoadError> {
        use crate::arith::Rounding;
        Ok(match self.inst.rounding() {
            None | Some(Mod::Rn) => Rounding::Rn,
            Some(Mod::Rz) if f64 => Rounding::Rz,
            Some(Mod::Rm) if f64 => Rounding::Rm,
            Some(Mod::Rp) if f64 => Rounding::Rp,
            Some(_) => return self.unsupported("rounding"),
        })
    }

    fn decode_bar(&self) -> Result<Op, LoadError> {
        let i = self.inst;
        let ops = self.operands();
        if i.scope() == Some(Mod::Cluster) {
            // `barrier.cluster.arrive` / `.wait` (sm_90 `cluster.sync()`): a cluster's CTAs
            // wait for each other, which needs clusters of several CTAs.
            return self.unsupported(
                "`barrier.cluster`: thread block clusters (sm_90 `__cluster_dims__`, \
                 `cluster.sync()`) — the virtual GPU runs every CTA as a cluster of its own",
            );
        }
        if i.has(Mod::Warp) {
            if !i.has(Mod::Sync) {
                return self.unsupported("bar.warp without .sync");
            }
            return Ok(Op::WarpSync {
                mask: self.src(&ops[0])?,
            });
        }
        if i.has(Mod::Red) {
            let (kind, ty_ok) = match i.op() {
                Some(Mod::Popc) => (BarKind::RedPopc, i.ty() == Some(Mod::U32)),
                Some(Mod::And) => (BarKind::RedAnd, i.ty() == Some(Mod::Pred)),
                Some(Mod::Or) => (BarKind::RedOr, i.ty() == Some(Mod::Pred)),
                _ => return self.unsupported("bar.red operation"),
            };
            if !ty_ok || !(3..=4).contains(&ops.len()) {
                return self.unsupported("bar.red form");
            }
            let count = if ops.len() == 4 {
                Some(self.src(&ops[2])?)
            } else {
                None
            };
            return Ok(Op::Bar {
                kind,
                id: self.src(&ops[1])?,
                count,
                d: Some(self.dst1(&ops[0])?),
                pred: Some(self.src(&ops[ops.len() - 1])?),
            });
        }
        let kind = if i.has(Mod::Arrive) {
            BarKind::Arrive
        } else if i.has(Mod::Sync) || i.opcode == Opcode::Bar {
            BarKind::Sync
        } else {
            return self.unsupported("barrier form");
        };
        if ops.is_empty() || ops.len() > 2 {
            return self.unsupported("barrier operands");
        }
        if kind == BarKind::Arrive && ops.len() != 2 {
            return self.unsupported("bar.arrive needs a thread count");
        }
        Ok(Op::Bar {
            kind,
            id: self.src(&ops[0])?,
            count: ops.get(1).map(|o| self.src(o)).transpose()?,
            d: None,
            pred: None,
        })
    }
}

fn ops_int(o: &Operand) -> u32 {
    match o {
        Operand::Int(v) => *v as u32,
        _ => 0,
    }
}

/// Whether PTX has a `wmma` fragment `f` of element type `e` in `shape` (PTX ISA
/// §9.7.14.4.3, `wmma.load`'s syntax table; a `D` fragment is a `C` one).
fn wmma_valid(shape: WmmaShape, f: WmmaFrag, e: WmmaElem) -> bool {
    use WmmaElem::*;
    let big = matches!(
        (shape.m, shape.n, shape.k),
        (16, 16, 16) | (32, 8, 16) | (8, 32, 16)
    );
    match (shape.m, shape.n, shape.k) {
        _ if big => match f {
            WmmaFrag::A | WmmaFrag::B => matches!(e, F16 | Bf16 | S8 | U8),
            WmmaFrag::C => matches!(e, F16 | F32 | S32),
        },
        (16, 16, 8) => match f {
            WmmaFrag::A | WmmaFrag::B => e == Tf32,
            WmmaFrag::C => e == F32,
        },
        (8, 8, 4) => e == F64,
        (8, 8, 32) => match f {
            WmmaFrag::A | WmmaFrag::B => matches!(e, S4 | U4),
            WmmaFrag::C => e == S32,
        },
        (8, 8, 128) => match f {
            WmmaFrag::A | WmmaFrag::B => e == B1,
            WmmaFrag::C => e == S32,
        },
        _ => false,
    }
}
