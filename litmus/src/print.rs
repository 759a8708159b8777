//! Printing a [`LitmusTest`] back in the dialect [`crate::parse`] reads, so that generated
//! programs (and the unsound outcomes found in them) can be written out, read again and
//! replayed: `parse(print(t))` is `t` up to source positions.

use crate::ast::*;
use crate::suite::show_cond;
use std::fmt::Write;

fn value(v: &Value) -> String {
    match v {
        Value::Reg(r) => r.clone(),
        Value::Const(c) => c.to_string(),
    }
}

fn ms(mo: Mo, scope: Option<Scope>) -> String {
    match scope {
        Some(s) => format!("{}.{}", mo.name(), s.name()),
        None => mo.name().to_string(),
    }
}

fn rmw_name(op: RmwOp) -> &'static str {
    match op {
        RmwOp::Add => "add",
        RmwOp::Sub => "sub",
        RmwOp::And => "and",
        RmwOp::Or => "or",
        RmwOp::Xor => "xor",
        RmwOp::Min => "min",
        RmwOp::Max => "max",
        RmwOp::Inc => "inc",
        RmwOp::Dec => "dec",
        RmwOp::Exch => "exch",
    }
}

fn arith_name(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "add",
        ArithOp::Sub => "sub",
        ArithOp::Mul => "mul",
        ArithOp::Div => "div",
        ArithOp::And => "and",
        ArithOp::Or => "or",
        ArithOp::Xor => "xor",
    }
}

/// One instruction as the dialect writes it.
pub fn instr(i: &Instr) -> String {
    match i {
        Instr::Load {
            mo,
            scope,
            dst,
            loc,
        } => format!("ld.{} {dst}, {loc}", ms(*mo, *scope)),
        Instr::Store {
            mo,
            scope,
            loc,
            val,
        } => format!("st.{} {loc}, {}", ms(*mo, *scope), value(val)),
        Instr::Rmw {
            mo,
            scope,
            op,
            dst: Some(d),
            loc,
            val,
        } => format!(
            "atom.{}.{} {d}, {loc}, {}",
            ms(*mo, *scope),
            rmw_name(*op),
            value(val)
        ),
        Instr::Rmw {
            mo,
            scope,
            op,
            dst: None,
            loc,
            val,
        } => format!(
            "red.{}.{} {loc}, {}",
            ms(*mo, *scope),
            rmw_name(*op),
            value(val)
        ),
        Instr::Cas {
            mo,
            scope,
            dst,
            loc,
            expected,
            new,
        } => format!(
            "atom.{}.cas {dst}, {loc}, {}, {}",
            ms(*mo, *scope),
            value(expected),
            value(new)
        ),
        Instr::Fence { mo, scope } => format!("fence.{}.{}", mo.name(), scope.name()),
        Instr::Barrier {
            kind,
            instance,
            id,
            quorum,
        } => {
            let mut s = format!(
                "bar.cta.{} {instance}",
                match kind {
                    BarKind::Sync => "sync",
                    BarKind::Arrive => "arrive",
                }
            );
            if let Some(x) = id {
                let _ = write!(s, ", {}", value(x));
                if let Some(q) = quorum {
                    let _ = write!(s, ", {}", value(q));
                }
            }
            s
        }
        Instr::Move { dst, val } => format!("ld {dst}, {}", value(val)),
        Instr::Arith { op, dst, a, b } => {
            format!("{} {dst}, {}, {}", arith_name(*op), value(a), value(b))
        }
        Instr::Branch { eq, a, b, label } => format!(
            "{} {}, {}, {label}",
            if *eq { "beq" } else { "bne" },
            value(a),
            value(b)
        ),
        Instr::Goto { label } => format!("goto {label}"),
        Instr::WarpSync { group: 0 } => "bar.warp.sync".to_string(),
        Instr::WarpSync { group } => format!("bar.warp.sync {group}"),
        Instr::Label { name } => format!("{name}:"),
    }
}

/// The thread's column header, e.g. `P1@cta 0,warp 2,gpu 0`.
pub fn thread_header(t: &Thread) -> String {
    match t.warp {
        Some(w) => format!("P{}@cta {},warp {w},gpu {}", t.id, t.cta, t.gpu),
        None => format!("P{}@cta {},gpu {}", t.id, t.cta, t.gpu),
    }
}

/// The whole test, columns aligned.
pub fn print(t: &LitmusTest) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "PTX {}", t.name);
    let mut init = String::from("{");
    for (l, v) in &t.init_mem {
        let _ = write!(init, " {l}={v};");
    }
    for (th, r, v) in &t.init_regs {
        let _ = write!(init, " P{th}:{r}={v};");
    }
    init.push_str(" }");
    let _ = writeln!(o, "{init}");
    let mut cols: Vec<Vec<String>> = t
        .threads
        .iter()
        .map(|th| {
            let mut c = vec![thread_header(th)];
            c.extend(th.instrs.iter().map(|i| instr(&i.node)));
            c
        })
        .collect();
    let rows = cols.iter().map(|c| c.len()).max().unwrap_or(0);
    for c in &mut cols {
        c.resize(rows, String::new());
    }
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().map(|s| s.len()).max().unwrap_or(0))
        .collect();
    for r in 0..rows {
        let cells: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:<w$}", c[r], w = *w))
            .collect();
        let _ = writeln!(o, " {} ;", cells.join(" | "));
    }
    let _ = writeln!(
        o,
        "{} ({})",
        t.condition.quantifier.name(),
        show_cond(&t.condition.cond)
    );
    o
}
