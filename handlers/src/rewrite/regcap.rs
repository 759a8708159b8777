//! Register caps for an instrumented module (issue 25: at most 16 registers per thread
//! more than the original kernel).
//!
//! Why the instrumented kernels need 50–91 registers more (median 66; BENCHMARKS.md,
//! issue 25): in a whole-program compile ptxas gives a kernel about (its values live at a
//! call) + (the callee's registers), and each level of the runtime's call chains stacks
//! the same way. The kernel-side code is the smaller part: with every runtime function
//! replaced by an empty one of the same signature, sdk_red's `reduce` (14 registers)
//! needs 38 (2026-12-06, 8e3d7b9; 54 before the inlined paths' register cache was
//! trimmed to what the common paths read — see `emit.rs`, "the cache"). Under a cap,
//! what the kernel keeps live across a call and past the cap is what ptxas spills in the
//! kernel itself.
//!
//! [`cap_registers`] turns that around: the kernel's calls into the runtime become
//! indirect calls (through a `.callprototype`), which ptxas compiles with the ABI's
//! calling convention instead of merging the callee's registers into the caller's, and
//! each kernel gets `.maxnreg` = its cap. The runtime's functions then fit the cap by
//! spilling inside themselves; they run only on the slow paths (a selected store, a load
//! while the thread holds entries, drains), not on the inline fast path of a load. The
//! cap must come from the original kernel's own count, which the rewrite cannot know
//! (an estimate of the maximum number of live values from the PTX was off by −11 … +10
//! registers against ptxas on the campaign kernels): whoever compiles the module measures
//! it (`fencehound instrument` runs ptxas on the original; its default, and the gpu
//! backend's, is `--max-extra-registers 16`).
//!
//! A capped module must be assembled whole: ptxas then compiles the runtime's functions
//! to fit each caller's cap. Assembled apart (`ptxas -c`, as
//! `fencehound_toolchain::assemble_linked` does for uncapped modules), they do not know
//! it, and nvlink refuses ("entry function 'dot' with max regcount of 30 calls function
//! '__fencehound_store' with regcount of 157").

use super::{RewriteError, PREFIX};
use fencehound_ptx as ptx;
use ptx::{Item, Opcode, Operand, Statement};
use std::collections::{BTreeSet, HashMap};

/// The register that holds the callee's address at each indirect call.
const FP: &str = "%fhfp";

/// The fewest registers ptxas gives a kernel that makes ABI (indirect) calls, whatever its
/// `.maxnreg` (measured with the wheel's ptxas 13.5: `.maxnreg 16` on `cbe_dot`'s
/// instrumented kernel gave 24).
pub const ABI_MIN_REGISTERS: u32 = 24;

/// The cap of a kernel that needs `original` registers uninstrumented, allowing `extra`
/// more: never below [`ABI_MIN_REGISTERS`].
pub fn cap_for(original: u32, extra: u32) -> u32 {
    original.saturating_add(extra).max(ABI_MIN_REGISTERS)
}

/// Makes every call of a kernel or user function into the device runtime indirect and
/// gives each kernel named in `caps` a `.maxnreg` of its cap (replacing one it had). `m`
/// must be the output of [`super::rewrite`] (Device flavour). A kernel not named keeps
/// no cap but its calls are indirect too. Returns how many calls it made indirect.
pub fn cap_registers(m: &mut ptx::Module, caps: &[(String, u32)]) -> Result<usize, RewriteError> {
    let runtime = super::emit::runtime_module()?;
    let protos: HashMap<&str, &ptx::Function> = runtime
        .functions()
        .filter(|f| f.body.is_some() && f.name.starts_with(PREFIX))
        .map(|f| (f.name.as_str(), f))
        .collect();
    let runtime_names: BTreeSet<&str> = runtime
        .functions()
        .filter(|f| f.body.is_some())
        .map(|f| f.name.as_str())
        .collect();
    let cap_of: HashMap<&str, u32> = caps.iter().map(|(k, c)| (k.as_str(), *c)).collect();
    let mut calls = 0;
    for item in &mut m.items {
        let Item::Func(f) = item else { continue };
        if runtime_names.contains(f.name.as_str()) {
            continue;
        }
        let Some(body) = f.body.as_mut() else {
            continue;
        };
        let mut used = BTreeSet::new();
        let n = redirect(body, &protos, &mut used)?;
        if n > 0 {
            let mut head = vec![reg_decl()?];
            for name in &used {
                head.push(prototype(protos[name.as_str()]));
            }
            body.splice(0..0, head);
            calls += n;
        }
        if f.kind == ptx::FuncKind::Entry {
            if let Some(&cap) = cap_of.get(f.name.as_str()) {
                f.perf.retain(|p| p.name != "maxnreg");
                f.perf.push(ptx::PerfDirective {
                    name: "maxnreg".into(),
                    values: vec![cap as u64],
                });
            }
        }
    }
    Ok(calls)
}

/// The prototype label of runtime function `name`.
fn proto_name(name: &str) -> String {
    format!("{name}_proto")
}

fn prototype(f: &ptx::Function) -> Statement {
    let blank = |v: &[ptx::VarDecl]| {
        v.iter()
            .map(|d| ptx::VarDecl {
                name: "_".into(),
                ..d.clone()
            })
            .collect()
    };
    Statement::CallPrototype {
        name: proto_name(&f.name),
        rets: blank(&f.rets),
        params: blank(&f.params),
        noreturn: f.noreturn,
    }
}

/// `.reg .b64 %fhfp;`, parsed (the parser builds the declaration).
fn reg_decl() -> Result<Statement, RewriteError> {
    let text = format!(
        ".version 7.0\n.target sm_75\n.address_size 64\n.func {PREFIX}snippet()\n{{\n.reg .b64 {FP};\n}}\n"
    );
    let m = ptx::parse("regcap", &text).map_err(|e| RewriteError::Generated(e.to_string()))?;
    let decl = m
        .functions()
        .next()
        .and_then(|f| f.body.as_ref())
        .and_then(|b| b.first().cloned());
    decl.ok_or_else(|| RewriteError::Generated("regcap: no declaration".into()))
}

/// Rewrites the runtime calls in `body` (and its nested blocks) as indirect calls;
/// returns how many, and adds the callees to `used`.
fn redirect(
    body: &mut Vec<Statement>,
    protos: &HashMap<&str, &ptx::Function>,
    used: &mut BTreeSet<String>,
) -> Result<usize, RewriteError> {
    let mut n = 0;
    let mut k = 0;
    while k < body.len() {
        match &mut body[k] {
            Statement::Block(b) => {
                n += redirect(b, protos, used)?;
            }
            Statement::Inst(i) if i.opcode == Opcode::Call => {
                let at = match i.operands.first() {
                    Some(Operand::List(_)) => 1,
                    _ => 0,
                };
                let callee = match i.operands.get(at) {
                    Some(Operand::Name(c)) if protos.contains_key(c.as_str()) => c.clone(),
                    _ => {
                        k += 1;
                        continue;
                    }
                };
                i.operands[at] = Operand::Name(FP.into());
                i.operands.push(Operand::Name(proto_name(&callee)));
                let mov = ptx::Instruction {
                    pos: i.pos,
                    loc: i.loc.clone(),
                    guard: None,
                    opcode: Opcode::Mov,
                    mods: vec![ptx::Mod::U64],
                    operands: vec![Operand::Name(FP.into()), Operand::Name(callee.clone())],
                };
                body.insert(k, Statement::Inst(mov));
                used.insert(callee);
                n += 1;
                k += 1;
            }
            _ => {}
        }
        k += 1;
    }
    Ok(n)
}
