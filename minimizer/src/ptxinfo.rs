//! What the minimizer needs to know about a PTX module, read from the PTX itself: which
//! instructions are memory accesses, fences and barriers (and of which space, semantics
//! and scope), the CUDA inline stack of every instruction (from `.loc … inlined_at`), and
//! the module's *memory skeleton* — the order of its memory operations, fences and
//! barriers — used to check that a source patch compiles to the PTX change that was tested.

use crate::edit::InstRef;
use fencehound_ptx::{Instruction, Item, Loc, Mod, Module, Opcode, Statement};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The state space of an access, as far as write buffers care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Shared,
    /// A generic address: global or shared, decided at run time.
    Generic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Load,
    Store,
    /// `atom` (reads and writes).
    Rmw,
    /// `red` (writes, returns nothing).
    Red,
}

/// What one instruction is, for the minimizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstKind {
    Access {
        kind: AccessKind,
        space: Space,
        /// `.release`, `.acquire`, `.acq_rel`, `.relaxed`, `.volatile`; `None` for weak.
        sem: Option<Mod>,
    },
    /// `membar`/`fence` (not proxy fences); `cta` when its scope is the CTA.
    Fence {
        cta: bool,
        acquire_only: bool,
    },
    /// `bar.sync`, `barrier.sync`, `bar.red`, `bar.arrive`.
    Barrier,
    /// `bar.warp.sync`
    WarpSync,
    Other,
}

pub fn classify(i: &Instruction) -> InstKind {
    let space = || {
        if i.has(Mod::Global) {
            Some(Space::Global)
        } else if i.has(Mod::Shared) || i.has(Mod::SharedCta) || i.has(Mod::SharedCluster) {
            Some(Space::Shared)
        } else if i.has(Mod::Local)
            || i.has(Mod::Const)
            || i.has(Mod::Param)
            || i.has(Mod::ParamEntry)
            || i.has(Mod::ParamFunc)
        {
            None
        } else {
            Some(Space::Generic)
        }
    };
    let sem = || {
        [
            Mod::Release,
            Mod::Acquire,
            Mod::AcqRel,
            Mod::Relaxed,
            Mod::Volatile,
            Mod::Sc,
        ]
        .into_iter()
        .find(|m| i.has(*m))
    };
    let access = |kind| match space() {
        Some(space) => InstKind::Access {
            kind,
            space,
            sem: sem(),
        },
        None => InstKind::Other,
    };
    match i.opcode {
        Opcode::Ld | Opcode::Ldu => access(AccessKind::Load),
        Opcode::St => access(AccessKind::Store),
        Opcode::Atom => access(AccessKind::Rmw),
        Opcode::Red => access(AccessKind::Red),
        Opcode::Membar => InstKind::Fence {
            cta: i.has(Mod::Cta),
            acquire_only: false,
        },
        Opcode::Fence if !i.has(Mod::Proxy) => InstKind::Fence {
            cta: i.has(Mod::Cta),
            acquire_only: i.has(Mod::Acquire),
        },
        Opcode::Bar | Opcode::Barrier if i.has(Mod::Warp) => InstKind::WarpSync,
        Opcode::Bar | Opcode::Barrier => InstKind::Barrier,
        _ => InstKind::Other,
    }
}

/// One frame of a CUDA inline stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub col: u32,
    /// The function this frame's code belongs to, when `.loc` names it (inlined code);
    /// the outermost frame belongs to the PTX function itself.
    pub function: Option<String>,
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", short(&self.file), self.line)
    }
}

/// The file name without its folders.
pub fn short(p: &str) -> String {
    std::path::Path::new(p)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string())
}

/// One instruction of the module with what the minimizer knows about it.
#[derive(Debug, Clone)]
pub struct PtxInst {
    pub at: InstRef,
    pub kind: InstKind,
    /// The CUDA inline stack, innermost frame first (empty without line info).
    pub stack: Vec<Frame>,
}

/// Every instruction of every defined function, in order, with inline stacks.
pub fn instructions(m: &Module) -> Vec<PtxInst> {
    let files: HashMap<u32, String> = m
        .items
        .iter()
        .filter_map(|it| match it {
            Item::File(f) => Some((f.index, f.path.clone())),
            _ => None,
        })
        .collect();
    let file = |i: u32| files.get(&i).cloned().unwrap_or_else(|| format!("file{i}"));
    let name = |l: &Loc| {
        l.function_name
            .as_ref()
            .and_then(|(label, off)| m.debug_str(label, *off))
    };
    let mut out = Vec::new();
    for f in m.functions() {
        let Some(body) = &f.body else { continue };
        // `.loc` directives that describe an inlined call site, by position: the chain
        // `inlined_at a → .loc a …, inlined_at b → …` gives the whole stack.
        let mut sites: HashMap<(u32, u32, u32), Loc> = HashMap::new();
        let mut stmts: Vec<&Statement> = Vec::new();
        flatten(body, &mut stmts);
        for st in stmts {
            match st {
                Statement::Loc(l) if l.inlined_at.is_some() || l.function_name.is_some() => {
                    sites.insert((l.file, l.line, l.col), l.clone());
                }
                Statement::Inst(i) => {
                    let mut stack = Vec::new();
                    if let Some(l) = i.loc.as_ref().filter(|l| l.line > 0) {
                        stack.push(Frame {
                            file: file(l.file),
                            line: l.line,
                            col: l.col,
                            function: name(l),
                        });
                        let mut next = l.inlined_at;
                        // Bounded: a malformed chain must not loop.
                        while let Some((fi, li, ci)) = next {
                            if stack.len() > 64 {
                                break;
                            }
                            let outer = sites.get(&(fi, li, ci));
                            stack.push(Frame {
                                file: file(fi),
                                line: li,
                                col: ci,
                                function: outer.and_then(name),
                            });
                            next = outer.and_then(|o| o.inlined_at);
                        }
                    }
                    out.push(PtxInst {
                        at: InstRef {
                            function: f.name.clone(),
                            ptx_line: i.pos.line,
                        },
                        kind: classify(i),
                        stack,
                    });
                }
                _ => {}
            }
        }
    }
    out
}

fn flatten<'a>(body: &'a [Statement], out: &mut Vec<&'a Statement>) {
    for s in body {
        match s {
            Statement::Block(b) => flatten(b, out),
            other => out.push(other),
        }
    }
}

/// The memory skeleton of one function: a token per global/shared/generic access, fence,
/// barrier and call, in program text order. Spaces and types are left out (a libcu++
/// access is generic where a plain one is global), semantics and scopes are kept.
pub fn skeleton(m: &Module) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for f in m.functions() {
        let Some(body) = &f.body else { continue };
        let mut stmts = Vec::new();
        flatten(body, &mut stmts);
        let mut toks = Vec::new();
        for st in stmts {
            if let Statement::Inst(i) = st {
                if let Some(t) = token(i) {
                    toks.push(t);
                }
            }
        }
        out.push((f.name.clone(), toks));
    }
    out
}

fn scope_name(i: &Instruction) -> &'static str {
    if i.has(Mod::Cta) {
        "cta"
    } else if i.has(Mod::Sys) {
        "sys"
    } else if i.has(Mod::Cluster) {
        "cluster"
    } else {
        "gpu"
    }
}

fn token(i: &Instruction) -> Option<String> {
    match classify(i) {
        InstKind::Access { kind, sem, .. } => {
            let op = match kind {
                AccessKind::Load => "ld",
                AccessKind::Store => "st",
                AccessKind::Rmw => "atom",
                AccessKind::Red => "red",
            };
            let mut t = op.to_string();
            if let Some(s) = sem {
                t.push('.');
                t.push_str(s.as_str());
                if s != Mod::Volatile {
                    t.push('.');
                    t.push_str(scope_name(i));
                }
            }
            if let Some(o) = i.mods_of(fencehound_ptx::ModClass::Op).next() {
                t.push('.');
                t.push_str(o.as_str());
            }
            Some(t)
        }
        InstKind::Fence { .. } => {
            let sem = [Mod::AcqRel, Mod::Acquire, Mod::Release]
                .into_iter()
                .find(|m| i.has(*m))
                .map_or("sc", |m| m.as_str());
            Some(format!("F.{sem}.{}", scope_name(i)))
        }
        InstKind::Barrier => Some("B".into()),
        InstKind::WarpSync => Some("W".into()),
        InstKind::Other if i.opcode == Opcode::Call => {
            let target = i.operands.iter().find_map(|o| match o {
                fencehound_ptx::Operand::Name(n) => Some(n.clone()),
                _ => None,
            });
            Some(format!("call {}", target.unwrap_or_default()))
        }
        InstKind::Other => None,
    }
}

/// One difference between two skeletons, placed by the index of the base token.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Change {
    /// A token inserted before base token `at` (`at` = length: at the end).
    Insert {
        function: String,
        at: usize,
        token: String,
    },
    Delete {
        function: String,
        at: usize,
        token: String,
    },
    Replace {
        function: String,
        at: usize,
        old: String,
        new: String,
    },
    /// A function present on one side only.
    Function { name: String },
}

fn fence_like(t: &str) -> bool {
    t.starts_with('F') || t == "W" || t == "B"
}

/// The changes that turn skeleton `base` into `new`: fences, barriers and warp syncs may
/// be inserted or deleted, any token may be replaced in place. Greedy (a fence-like token
/// that does not match is an insertion when the next one lines up), which is enough for
/// patches that touch a few statements.
pub fn changes(base: &[(String, Vec<String>)], new: &[(String, Vec<String>)]) -> Vec<Change> {
    let mut out = Vec::new();
    for (name, b) in base {
        let Some((_, p)) = new.iter().find(|(n, _)| n == name) else {
            out.push(Change::Function { name: name.clone() });
            continue;
        };
        let (mut i, mut k) = (0, 0);
        while i < b.len() || k < p.len() {
            if i < b.len() && k < p.len() && b[i] == p[k] {
                i += 1;
                k += 1;
                continue;
            }
            let can_insert = k < p.len()
                && fence_like(&p[k])
                && (i == b.len() || p.get(k + 1) == b.get(i) || p.get(k + 1).is_none());
            let can_delete = i < b.len()
                && fence_like(&b[i])
                && (k == p.len() || b.get(i + 1) == p.get(k) || b.get(i + 1).is_none());
            if can_insert {
                out.push(Change::Insert {
                    function: name.clone(),
                    at: i,
                    token: p[k].clone(),
                });
                k += 1;
            } else if can_delete {
                out.push(Change::Delete {
                    function: name.clone(),
                    at: i,
                    token: b[i].clone(),
                });
                i += 1;
            } else if i < b.len() && k < p.len() {
                out.push(Change::Replace {
                    function: name.clone(),
                    at: i,
                    old: b[i].clone(),
                    new: p[k].clone(),
                });
                i += 1;
                k += 1;
            } else if i == b.len() {
                out.push(Change::Insert {
                    function: name.clone(),
                    at: i,
                    token: p[k].clone(),
                });
                k += 1;
            } else {
                out.push(Change::Delete {
                    function: name.clone(),
                    at: i,
                    token: b[i].clone(),
                });
                i += 1;
            }
        }
    }
    for (name, _) in new {
        if !base.iter().any(|(n, _)| n == name) {
            out.push(Change::Function { name: name.clone() });
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(f: &str, t: &[&str]) -> Vec<(String, Vec<String>)> {
        vec![(f.into(), t.iter().map(|s| s.to_string()).collect())]
    }

    #[test]
    fn changes_find_insertions_deletions_and_replacements() {
        let base = sk("k", &["ld", "st", "atom.cas", "st"]);
        let new = sk("k", &["ld", "st", "F.sc.gpu", "atom.cas", "st"]);
        assert_eq!(
            changes(&base, &new),
            vec![Change::Insert {
                function: "k".into(),
                at: 2,
                token: "F.sc.gpu".into()
            }]
        );
        let new = sk("k", &["ld", "st", "atom.cas", "st.release.gpu"]);
        assert!(matches!(
            &changes(&base, &new)[..],
            [Change::Replace { at: 3, .. }]
        ));
        let fenced = sk("k", &["st", "F.sc.cta", "st"]);
        let removed = sk("k", &["st", "st"]);
        assert_eq!(
            changes(&fenced, &removed),
            vec![Change::Delete {
                function: "k".into(),
                at: 1,
                token: "F.sc.cta".into()
            }]
        );
        assert!(changes(&base, &base).is_empty());
        let two = sk("k", &["F.sc.gpu", "ld", "st", "atom.cas", "st", "F.sc.gpu"]);
        assert_eq!(changes(&base, &two).len(), 2);
    }

    #[test]
    fn inline_stacks_follow_inlined_at() {
        let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<3>;
	.loc	1 11 5
	ld.param.u64 %rd1, [p];
	.loc	2 3 5, function_name $L__info_string0, inlined_at 1 11 5
	.loc	2 1 33, function_name $L__info_string1, inlined_at 2 3 5
	st.global.u32 [%rd1], %r1;
	membar.gl;
	ret;
}
	.file	1 "/x/k.cu"
	.file	2 "/x/h.cuh"
	.section	.debug_str
	{
$L__info_string0:
.b8 112,117,98,0
$L__info_string1:
.b8 115,118,0
	}
"#;
        let m = fencehound_ptx::parse("t.ptx", ptx).unwrap();
        let insts = instructions(&m);
        let st = insts
            .iter()
            .find(|i| {
                matches!(
                    i.kind,
                    InstKind::Access {
                        kind: AccessKind::Store,
                        ..
                    }
                )
            })
            .unwrap();
        let frames: Vec<String> = st
            .stack
            .iter()
            .map(|f| format!("{}:{}:{} {:?}", short(&f.file), f.line, f.col, f.function))
            .collect();
        assert_eq!(
            frames,
            vec![
                "h.cuh:1:33 Some(\"sv\")",
                "h.cuh:3:5 Some(\"pub\")",
                "k.cu:11:5 None"
            ]
        );
        assert!(insts.iter().any(|i| i.kind
            == InstKind::Fence {
                cta: false,
                acquire_only: false
            }));
        assert_eq!(
            skeleton(&m),
            vec![(
                "k".to_string(),
                vec!["st".to_string(), "F.sc.gpu".to_string()]
            )]
        );
    }
}
