//! Edits of a PTX module: insert a fence after an instruction, remove or re-scope a fence.
//! Instructions are named by (function, PTX line), which is unique in compiler output.

use fencehound_ptx::{Instruction, Item, Mod, Module, Opcode, Statement};

/// A place in the module: the instruction at `ptx_line` of `function`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct InstRef {
    pub function: String,
    pub ptx_line: u32,
}

/// Fence scope to insert.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum FenceScope {
    /// `membar.cta` — `__threadfence_block()`
    Block,
    /// `membar.gl` — `__threadfence()`
    Device,
}

impl FenceScope {
    pub fn cuda(self) -> &'static str {
        match self {
            FenceScope::Block => "__threadfence_block();",
            FenceScope::Device => "__threadfence();",
        }
    }
    pub fn ptx(self) -> &'static str {
        match self {
            FenceScope::Block => "membar.cta;",
            FenceScope::Device => "membar.gl;",
        }
    }
}

fn fence_inst(scope: FenceScope, like: &Instruction) -> Instruction {
    Instruction {
        pos: Default::default(),
        loc: like.loc.clone(),
        guard: None,
        opcode: Opcode::Membar,
        mods: vec![match scope {
            FenceScope::Block => Mod::Cta,
            FenceScope::Device => Mod::Gl,
        }],
        operands: Vec::new(),
    }
}

fn edit_body(
    body: &mut Vec<Statement>,
    f: &mut dyn FnMut(&mut Vec<Statement>, usize) -> bool,
) -> bool {
    let mut i = 0;
    while i < body.len() {
        if let Statement::Block(b) = &mut body[i] {
            if edit_body(b, f) {
                return true;
            }
        } else if f(body, i) {
            return true;
        }
        i += 1;
    }
    false
}

fn with_function(
    m: &mut Module,
    name: &str,
    f: &mut dyn FnMut(&mut Vec<Statement>, usize) -> bool,
) -> bool {
    for it in &mut m.items {
        if let Item::Func(func) = it {
            if func.name == name {
                if let Some(b) = &mut func.body {
                    return edit_body(b, f);
                }
            }
        }
    }
    false
}

/// Inserts a fence right after the instruction. Returns false if it was not found.
pub fn insert_fence_after(m: &mut Module, at: &InstRef, scope: FenceScope) -> bool {
    with_function(m, &at.function, &mut |body, i| match &body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line => {
            let fence = fence_inst(scope, inst);
            body.insert(i + 1, Statement::Inst(fence));
            true
        }
        _ => false,
    })
}

/// Whether an instruction is a fence the audit considers (`membar`, `fence.sc`,
/// `fence.acq_rel`, `fence.release`; not proxy fences).
pub fn is_fence(i: &Instruction) -> bool {
    match i.opcode {
        Opcode::Membar => true,
        Opcode::Fence => !i.has(Mod::Proxy) && !i.has(Mod::Acquire),
        _ => false,
    }
}

/// Removes the fence at `at`.
pub fn remove_fence(m: &mut Module, at: &InstRef) -> bool {
    with_function(m, &at.function, &mut |body, i| match &body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line && is_fence(inst) => {
            body.remove(i);
            true
        }
        _ => false,
    })
}

/// Narrows the fence at `at` to CTA scope (`membar.gl` → `membar.cta`, `fence.X.gpu` →
/// `fence.X.cta`).
pub fn narrow_fence(m: &mut Module, at: &InstRef) -> bool {
    with_function(m, &at.function, &mut |body, i| match &mut body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line && is_fence(inst) => {
            for md in inst.mods.iter_mut() {
                // membar.gl/.sys and fence.X.gpu/.sys/.cluster all become CTA scope.
                if matches!(md, Mod::Gl | Mod::Sys | Mod::Gpu | Mod::Cluster) {
                    *md = Mod::Cta;
                }
            }
            true
        }
        _ => false,
    })
}

/// Every fence in defined functions.
pub fn fences(m: &Module) -> Vec<(InstRef, Instruction)> {
    let mut out = Vec::new();
    for f in m.functions() {
        if let Some(b) = &f.body {
            for i in Module::instructions(b) {
                if is_fence(i) {
                    out.push((
                        InstRef {
                            function: f.name.clone(),
                            ptx_line: i.pos.line,
                        },
                        i.clone(),
                    ));
                }
            }
        }
    }
    out
}

/// Scope of an existing fence: true for CTA scope.
pub fn is_cta_fence(i: &Instruction) -> bool {
    i.has(Mod::Cta)
}
