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

/// `bar.warp.sync -1;` — `__syncwarp()` with the full mask.
fn warp_sync_inst(like: &Instruction) -> Instruction {
    Instruction {
        pos: Default::default(),
        loc: like.loc.clone(),
        guard: None,
        opcode: Opcode::Bar,
        mods: vec![Mod::Warp, Mod::Sync],
        operands: vec![fencehound_ptx::Operand::Int(-1)],
    }
}

/// Inserts `bar.warp.sync -1` right after the instruction.
pub fn insert_warp_sync_after(m: &mut Module, at: &InstRef) -> bool {
    with_function(m, &at.function, &mut |body, i| match &body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line => {
            let w = warp_sync_inst(inst);
            body.insert(i + 1, Statement::Inst(w));
            true
        }
        _ => false,
    })
}

/// Widens the fence at `at` to device scope (`membar.cta` → `membar.gl`, `fence.X.cta` →
/// `fence.X.gpu`).
pub fn widen_fence(m: &mut Module, at: &InstRef) -> bool {
    with_function(m, &at.function, &mut |body, i| match &mut body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line && is_fence(inst) => {
            let device = if inst.opcode == Opcode::Membar {
                Mod::Gl
            } else {
                Mod::Gpu
            };
            for md in inst.mods.iter_mut() {
                if *md == Mod::Cta {
                    *md = device;
                }
            }
            true
        }
        _ => false,
    })
}

const SEMS: [Mod; 7] = [
    Mod::Weak,
    Mod::Relaxed,
    Mod::Volatile,
    Mod::Acquire,
    Mod::Release,
    Mod::AcqRel,
    Mod::Sc,
];
const SCOPES: [Mod; 4] = [Mod::Cta, Mod::Cluster, Mod::Gpu, Mod::Sys];

/// Gives the access at `at` the semantics `sem` at device scope (`st.release.gpu`,
/// `ld.acquire.gpu`, `atom.release.gpu`). False if it is not an access that can carry
/// them (`ld.global.nc`, a local access, a store given acquire).
pub fn strengthen_access(m: &mut Module, at: &InstRef, sem: Mod) -> bool {
    with_function(m, &at.function, &mut |body, i| match &mut body[i] {
        Statement::Inst(inst) if inst.pos.line == at.ptx_line => {
            let ok = match (inst.opcode, sem) {
                (Opcode::St, Mod::Release) => true,
                (Opcode::Ld, Mod::Acquire) => !inst.has(Mod::Nc),
                (Opcode::Atom, Mod::Release | Mod::Acquire | Mod::AcqRel) => true,
                _ => false,
            };
            if !ok
                || inst.has(Mod::Local)
                || inst.has(Mod::Param)
                || inst.has(Mod::Const)
                || inst
                    .mods
                    .iter()
                    .any(|m| m.class() == fencehound_ptx::ModClass::Vector)
            {
                return false;
            }
            inst.mods
                .retain(|m| !SEMS.contains(m) && !SCOPES.contains(m));
            inst.mods.insert(0, Mod::Gpu);
            inst.mods.insert(0, sem);
            true
        }
        _ => false,
    })
}

/// One PTX-level change the minimizer tries.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(tag = "edit", rename_all = "kebab-case")]
pub enum PtxEdit {
    InsertFence {
        after: InstRef,
        scope: FenceScope,
    },
    InsertWarpSync {
        after: InstRef,
    },
    RemoveFence {
        at: InstRef,
    },
    WidenFence {
        at: InstRef,
    },
    NarrowFence {
        at: InstRef,
    },
    /// The store or atomic at `at` becomes a device-scope release.
    Release {
        at: InstRef,
    },
    /// The load or atomic at `at` becomes a device-scope acquire.
    Acquire {
        at: InstRef,
    },
}

impl PtxEdit {
    /// Applies the edit; false when its instruction was not found or cannot take it.
    pub fn apply(&self, m: &mut Module) -> bool {
        match self {
            PtxEdit::InsertFence { after, scope } => insert_fence_after(m, after, *scope),
            PtxEdit::InsertWarpSync { after } => insert_warp_sync_after(m, after),
            PtxEdit::RemoveFence { at } => remove_fence(m, at),
            PtxEdit::WidenFence { at } => widen_fence(m, at),
            PtxEdit::NarrowFence { at } => narrow_fence(m, at),
            PtxEdit::Release { at } => strengthen_access(m, at, Mod::Release),
            PtxEdit::Acquire { at } => strengthen_access(m, at, Mod::Acquire),
        }
    }

    /// The instruction the edit is anchored at.
    pub fn anchor(&self) -> &InstRef {
        match self {
            PtxEdit::InsertFence { after, .. } | PtxEdit::InsertWarpSync { after } => after,
            PtxEdit::RemoveFence { at }
            | PtxEdit::WidenFence { at }
            | PtxEdit::NarrowFence { at }
            | PtxEdit::Release { at }
            | PtxEdit::Acquire { at } => at,
        }
    }

    /// The edit as a PTX-level sentence.
    pub fn describe(&self) -> String {
        let w = |r: &InstRef| format!("PTX line {} of `{}`", r.ptx_line, r.function);
        match self {
            PtxEdit::InsertFence { after, scope } => {
                format!("insert `{}` after {}", scope.ptx(), w(after))
            }
            PtxEdit::InsertWarpSync { after } => {
                format!("insert `bar.warp.sync -1;` after {}", w(after))
            }
            PtxEdit::RemoveFence { at } => format!("remove the fence at {}", w(at)),
            PtxEdit::WidenFence { at } => format!("widen the fence at {} to device scope", w(at)),
            PtxEdit::NarrowFence { at } => format!("narrow the fence at {} to CTA scope", w(at)),
            PtxEdit::Release { at } => format!("make the access at {} `.release.gpu`", w(at)),
            PtxEdit::Acquire { at } => format!("make the access at {} `.acquire.gpu`", w(at)),
        }
    }
}

/// The module with every edit applied; None if one of them could not be.
pub fn apply_all(m: &Module, edits: &[PtxEdit]) -> Option<Module> {
    let mut out = m.clone();
    for e in edits {
        if !e.apply(&mut out) {
            return None;
        }
    }
    Some(out)
}
