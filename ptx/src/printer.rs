//! IR → PTX text that ptxas accepts. Output is canonical (one statement per line, tabs
//! between opcode and operands, decimal integers, `0f`/`0d` floats), so printing a parsed
//! module and parsing it again gives the same module.

use crate::ast::*;
use std::fmt::Write;

pub fn print(m: &Module) -> String {
    let mut out = String::with_capacity(4096);
    for item in &m.items {
        print_item(&mut out, item);
    }
    out
}

fn print_item(o: &mut String, item: &Item) {
    match item {
        Item::Version { major, minor } => {
            let _ = writeln!(o, ".version {major}.{minor}");
        }
        Item::Target(t) => {
            let _ = writeln!(o, ".target {}", t.join(", "));
        }
        Item::AddressSize(n) => {
            let _ = writeln!(o, ".address_size {n}\n");
        }
        Item::File(f) => {
            let _ = write!(o, ".file {} \"{}\"", f.index, f.path);
            if let Some(t) = f.timestamp {
                let _ = write!(o, ", {t}");
                if let Some(s) = f.size {
                    let _ = write!(o, ", {s}");
                }
            }
            o.push('\n');
        }
        Item::Var(v) => {
            var_decl(o, v);
            o.push_str(";\n");
        }
        Item::Func(f) => function(o, f),
        Item::Pragma(p) => {
            pragma(o, p);
            o.push('\n');
        }
        Item::Section(s) => {
            let _ = writeln!(o, ".section .{}\n{{", s.name);
            for e in &s.entries {
                match e {
                    SectionEntry::Label(l) => {
                        let _ = writeln!(o, "{l}:");
                    }
                    SectionEntry::Data { ty, values } => {
                        let _ = write!(o, ".{} ", ty.as_str());
                        for (i, v) in values.iter().enumerate() {
                            if i > 0 {
                                o.push(',');
                            }
                            match v {
                                SectionValue::Int(n) => {
                                    let _ = write!(o, "{n}");
                                }
                                SectionValue::Sym { name, offset } => {
                                    o.push_str(name);
                                    offset_suffix(o, *offset);
                                }
                            }
                        }
                        o.push('\n');
                    }
                }
            }
            o.push_str("}\n");
        }
    }
}

fn pragma(o: &mut String, p: &[String]) {
    o.push_str(".pragma ");
    for (i, s) in p.iter().enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        let _ = write!(o, "\"{s}\"");
    }
    o.push(';');
}

fn offset_suffix(o: &mut String, off: i64) {
    // NVRTC writes negative offsets as `+-4`; ptxas accepts both spellings.
    if off != 0 {
        let _ = write!(o, "+{off}");
    }
}

pub(crate) fn var_decl(o: &mut String, v: &VarDecl) {
    if let Some(l) = v.linkage {
        let _ = write!(o, ".{} ", l.as_str());
    }
    let _ = write!(o, ".{}", v.space.as_str());
    if v.managed {
        o.push_str(" .attribute(.managed)");
    }
    if let Some(a) = v.align {
        let _ = write!(o, " .align {a}");
    }
    if let Some(n) = v.vector {
        let _ = write!(o, " .v{n}");
    }
    let _ = write!(o, " .{}", v.ty.as_str());
    if let Some(p) = &v.ptr {
        o.push_str(" .ptr");
        if let Some(s) = p.space {
            let _ = write!(o, " .{}", s.as_str());
        }
        if let Some(a) = p.align {
            let _ = write!(o, " .align {a}");
        }
    }
    let _ = write!(o, " {}", v.name);
    if let Some(r) = v.range {
        let _ = write!(o, "<{r}>");
    }
    for d in &v.dims {
        match d {
            Some(n) => {
                let _ = write!(o, "[{n}]");
            }
            None => o.push_str("[]"),
        }
    }
    if let Some(init) = &v.init {
        o.push_str(" = ");
        print_init(o, init);
    }
}

fn print_init(o: &mut String, init: &Init) {
    match init {
        Init::List(v) => {
            o.push('{');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                print_init(o, x);
            }
            o.push('}');
        }
        Init::Scalar(InitValue::Int(n)) => {
            let _ = write!(o, "{n}");
        }
        Init::Scalar(InitValue::F32(b)) => {
            let _ = write!(o, "0f{b:08X}");
        }
        Init::Scalar(InitValue::F64(b)) => {
            let _ = write!(o, "0d{b:016X}");
        }
        Init::Scalar(InitValue::Addr {
            name,
            generic,
            offset,
        }) => {
            if *generic {
                let _ = write!(o, "generic({name})");
            } else {
                o.push_str(name);
            }
            offset_suffix(o, *offset);
        }
    }
}

fn param_list(o: &mut String, ps: &[VarDecl], multiline: bool) {
    o.push('(');
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        if multiline {
            o.push_str("\n\t");
        }
        var_decl(o, p);
    }
    if multiline && !ps.is_empty() {
        o.push('\n');
    }
    o.push(')');
}

fn function(o: &mut String, f: &Function) {
    if let Some(l) = f.linkage {
        let _ = write!(o, ".{} ", l.as_str());
    }
    o.push_str(match f.kind {
        FuncKind::Entry => ".entry ",
        FuncKind::Func => ".func ",
    });
    if !f.rets.is_empty() {
        param_list(o, &f.rets, false);
        o.push(' ');
    }
    o.push_str(&f.name);
    // `.entry k()` and `.func f()` both accept an empty list; keep it for symmetry.
    param_list(o, &f.params, true);
    if f.noreturn {
        o.push_str(" .noreturn");
    }
    for p in &f.perf {
        o.push('\n');
        perf(o, p);
    }
    match &f.body {
        None => o.push_str(";\n\n"),
        Some(body) => {
            o.push_str("\n{\n");
            statements(o, body, 1);
            o.push_str("}\n\n");
        }
    }
}

fn perf(o: &mut String, p: &PerfDirective) {
    let _ = write!(o, ".{}", p.name);
    for (i, v) in p.values.iter().enumerate() {
        let _ = write!(o, "{}{v}", if i == 0 { " " } else { ", " });
    }
}

fn indent(o: &mut String, n: usize) {
    for _ in 0..n {
        o.push('\t');
    }
}

fn statements(o: &mut String, body: &[Statement], depth: usize) {
    for s in body {
        match s {
            Statement::Label(l) => {
                let _ = writeln!(o, "{l}:");
            }
            Statement::Block(b) => {
                indent(o, depth);
                o.push_str("{\n");
                statements(o, b, depth + 1);
                indent(o, depth);
                o.push_str("}\n");
            }
            Statement::Var(v) => {
                indent(o, depth);
                var_decl(o, v);
                o.push_str(";\n");
            }
            Statement::Loc(l) => {
                indent(o, depth);
                loc(o, l);
                o.push('\n');
            }
            Statement::Pragma(p) => {
                indent(o, depth);
                pragma(o, p);
                o.push('\n');
            }
            Statement::Perf(p) => {
                indent(o, depth);
                perf(o, p);
                o.push('\n');
            }
            Statement::BranchTargets { name, targets } => {
                let _ = writeln!(o, "{name}: .branchtargets {};", targets.join(", "));
            }
            Statement::CallPrototype {
                name,
                rets,
                params,
                noreturn,
            } => {
                let _ = write!(o, "{name}: .callprototype ");
                if !rets.is_empty() {
                    param_list(o, rets, false);
                    o.push(' ');
                }
                o.push('_');
                o.push(' ');
                param_list(o, params, false);
                if *noreturn {
                    o.push_str(" .noreturn");
                }
                o.push_str(";\n");
            }
            Statement::Inst(i) => {
                indent(o, depth);
                instruction(o, i);
                o.push('\n');
            }
        }
    }
}

pub fn loc(o: &mut String, l: &Loc) {
    let _ = write!(o, ".loc\t{} {} {}", l.file, l.line, l.col);
    if let Some((name, off)) = &l.function_name {
        let _ = write!(o, ", function_name {name}");
        offset_suffix(o, *off);
    }
    if let Some((f, li, c)) = l.inlined_at {
        let _ = write!(o, ", inlined_at {f} {li} {c}");
    }
}

/// One instruction without indentation or newline (used by reports too).
pub fn instruction(o: &mut String, i: &Instruction) {
    if let Some(g) = &i.guard {
        let _ = write!(o, "@{}{} ", if g.negated { "!" } else { "" }, g.pred);
    }
    o.push_str(i.opcode.name());
    for m in &i.mods {
        o.push('.');
        o.push_str(m.as_str());
    }
    for (k, op) in i.operands.iter().enumerate() {
        o.push_str(if k == 0 { "\t" } else { ", " });
        operand(o, op);
    }
    o.push(';');
}

/// Convenience: one instruction as a string.
pub fn instruction_to_string(i: &Instruction) -> String {
    let mut s = String::new();
    instruction(&mut s, i);
    s
}

fn operand(o: &mut String, op: &Operand) {
    match op {
        Operand::Name(n) => o.push_str(n),
        Operand::Special { reg, dim } => {
            o.push_str(&reg.name());
            if let Some(d) = dim {
                o.push_str(match d {
                    0 => ".x",
                    1 => ".y",
                    _ => ".z",
                });
            }
        }
        Operand::Int(v) => {
            let _ = write!(o, "{v}");
        }
        Operand::F32(b) => {
            let _ = write!(o, "0f{b:08X}");
        }
        Operand::F64(b) => {
            let _ = write!(o, "0d{b:016X}");
        }
        Operand::Addr { base, offset } => {
            o.push('[');
            match base {
                AddrBase::Name(n) => o.push_str(n),
                AddrBase::Imm(v) => {
                    let _ = write!(o, "{v}");
                }
            }
            offset_suffix(o, *offset);
            o.push(']');
        }
        Operand::Vector(v) => {
            o.push('{');
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    o.push_str(", ");
                }
                operand(o, x);
            }
            o.push('}');
        }
        Operand::List(v) => {
            o.push('(');
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    o.push_str(", ");
                }
                operand(o, x);
            }
            o.push(')');
        }
        Operand::Pair(a, b) => {
            operand(o, a);
            o.push('|');
            operand(o, b);
        }
        Operand::TexAddr { tex, coords } => {
            o.push('[');
            operand(o, tex);
            o.push_str(", {");
            for (k, x) in coords.iter().enumerate() {
                if k > 0 {
                    o.push_str(", ");
                }
                operand(o, x);
            }
            o.push_str("}]");
        }
        Operand::Not(a) => {
            o.push('!');
            operand(o, a);
        }
        Operand::Sink => o.push('_'),
        Operand::SymOffset { name, offset } => {
            // Always with the offset: `tbl+0` without it would read back as a plain name.
            let _ = write!(o, "{name}+{offset}");
        }
        Operand::Select { name, sel } => {
            let _ = write!(o, "{name}.{}", sel.spelling());
        }
    }
}
