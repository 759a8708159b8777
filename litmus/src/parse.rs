//! Parser for the PTX litmus dialect of Dat3M (grammar facts restated in
//! `../shared/litmus/README.md`): a header `PTX NAME`, an optional quoted comment, the
//! initial state in braces, a table of threads (columns separated by `|`, rows ended by
//! `;`, the first row giving each thread's `@cta N,gpu M` placement), and a final
//! `exists` / `~exists` / `forall` condition.
//!
//! Every error carries the file's line and column.

use crate::ast::*;
use crate::error::LitmusError;

struct Src<'a> {
    file: &'a str,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Src<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Src {
            file,
            text,
            line_starts,
        }
    }

    fn pos(&self, off: usize) -> Pos {
        let line = self.line_starts.partition_point(|s| *s <= off).max(1);
        let start = self.line_starts[line - 1];
        let col = self.text[start..off.min(self.text.len())].chars().count() + 1;
        Pos {
            line: line as u32,
            col: col as u32,
        }
    }

    fn err(&self, off: usize, message: impl Into<String>) -> LitmusError {
        LitmusError::Parse {
            file: self.file.to_string(),
            pos: self.pos(off),
            message: message.into(),
        }
    }
}

/// A piece of the source with its byte offset.
#[derive(Clone, Copy)]
struct Piece<'a> {
    s: &'a str,
    off: usize,
}

impl<'a> Piece<'a> {
    fn trim(self) -> Piece<'a> {
        let lead = self.s.len() - self.s.trim_start().len();
        Piece {
            s: self.s.trim(),
            off: self.off + lead,
        }
    }
    fn split(self, sep: char) -> Vec<Piece<'a>> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, c) in self.s.char_indices() {
            if c == sep {
                out.push(Piece {
                    s: &self.s[start..i],
                    off: self.off + start,
                });
                start = i + c.len_utf8();
            }
        }
        out.push(Piece {
            s: &self.s[start..],
            off: self.off + start,
        });
        out
    }
}

/// Parses one litmus file. `file` is used in error messages only.
pub fn parse(file: &str, text: &str) -> Result<LitmusTest, LitmusError> {
    let src = Src::new(file, text);
    let mut off = skip_ws(text, 0);
    // Header: `PTX NAME`.
    let line_end = text[off..].find('\n').map_or(text.len(), |i| off + i);
    let header = &text[off..line_end];
    let mut words = header.split_whitespace();
    match words.next() {
        Some("PTX") => {}
        Some(w) => return Err(src.err(off, format!("expected `PTX NAME` header, found `{w}`"))),
        None => return Err(src.err(off, "empty file: expected `PTX NAME` header")),
    }
    let name = words.collect::<Vec<_>>().join(" ");
    if name.is_empty() {
        return Err(src.err(off, "the `PTX` header has no test name"));
    }
    off = skip_ws(text, line_end);
    // Optional quoted comment.
    // Optional quoted comment. Comments may quote text themselves, so the comment ends at
    // the first `"` followed (after blanks) by the `{` of the initial state.
    if text[off..].starts_with('"') {
        let mut end = None;
        for (i, _) in text[off + 1..].match_indices('"') {
            let after = off + 1 + i + 1;
            if text[skip_ws(text, after)..].starts_with('{') {
                end = Some(after);
                break;
            }
        }
        match end {
            Some(e) => off = skip_ws(text, e),
            None => return Err(src.err(off, "unterminated comment string (or no `{` after it)")),
        }
    }
    // Initial state.
    if !text[off..].starts_with('{') {
        return Err(src.err(off, "expected `{` opening the initial state"));
    }
    let close = text[off..]
        .find('}')
        .map(|i| off + i)
        .ok_or_else(|| src.err(off, "unterminated initial state: missing `}`"))?;
    let mut init_mem = Vec::new();
    let mut init_regs = Vec::new();
    let body = Piece {
        s: &text[off + 1..close],
        off: off + 1,
    };
    for entry in body.split(';') {
        let e = entry.trim();
        if e.s.is_empty() {
            continue;
        }
        let Some((lhs, rhs)) = e.s.split_once('=') else {
            return Err(src.err(e.off, format!("expected `NAME = VALUE`, found `{}`", e.s)));
        };
        let value = parse_int(rhs.trim()).ok_or_else(|| {
            src.err(
                e.off + lhs.len() + 1,
                format!("`{}` is not an integer", rhs.trim()),
            )
        })?;
        let lhs = lhs.trim();
        // Typed declarations (`int x = 0`) keep only the name.
        let lhs = lhs.rsplit(char::is_whitespace).next().unwrap_or(lhs);
        match parse_var(lhs) {
            Some(Var::Reg { thread, name }) => init_regs.push((thread, name, value)),
            Some(Var::Loc(l)) => init_mem.push((l, value)),
            None => return Err(src.err(e.off, format!("`{lhs}` is not a location or register"))),
        }
    }
    off = close + 1;
    // Program: everything up to the condition keyword.
    let (prog_end, cond_off) = find_condition(text, off).ok_or_else(|| {
        src.err(
            off,
            "missing final condition (`exists`, `~exists` or `forall`)",
        )
    })?;
    let prog = Piece {
        s: &text[off..prog_end],
        off,
    };
    let mut rows: Vec<Piece> = prog.split(';');
    // What follows the last `;` must be blank.
    if let Some(last) = rows.pop() {
        let t = last.trim();
        if !t.s.is_empty() {
            return Err(src.err(t.off, format!("row not ended by `;`: `{}`", t.s)));
        }
    }
    let Some(header_row) = rows.first().copied() else {
        return Err(src.err(off, "no thread table"));
    };
    let mut threads = Vec::new();
    for col in header_row.split('|') {
        let c = col.trim();
        threads.push(parse_thread_header(&src, c)?);
    }
    for (i, t) in threads.iter().enumerate() {
        if t.id as usize != i {
            return Err(src.err(
                header_row.trim().off,
                format!(
                    "threads must be named P0, P1, … in order; column {i} is P{}",
                    t.id
                ),
            ));
        }
    }
    for row in &rows[1..] {
        let cols = row.split('|');
        if cols.len() > threads.len() {
            return Err(src.err(
                cols[threads.len()].off,
                format!(
                    "row has {} columns but there are {} threads",
                    cols.len(),
                    threads.len()
                ),
            ));
        }
        for (t, col) in cols.into_iter().enumerate() {
            let c = col.trim();
            if c.s.is_empty() {
                continue;
            }
            let instr = parse_instr(&src, c)?;
            threads[t].instrs.push(Spanned {
                pos: src.pos(c.off),
                node: instr,
            });
        }
    }
    // Labels must exist and be unique per thread.
    for t in &threads {
        let mut labels: Vec<&str> = Vec::new();
        for i in &t.instrs {
            if let Instr::Label { name } = &i.node {
                if labels.contains(&name.as_str()) {
                    return Err(LitmusError::Parse {
                        file: file.into(),
                        pos: i.pos,
                        message: format!("label `{name}` defined twice in P{}", t.id),
                    });
                }
                labels.push(name);
            }
        }
        for i in &t.instrs {
            if let Instr::Branch { label, .. } | Instr::Goto { label } = &i.node {
                if !labels.contains(&label.as_str()) {
                    return Err(LitmusError::Parse {
                        file: file.into(),
                        pos: i.pos,
                        message: format!("label `{label}` is not defined in P{}", t.id),
                    });
                }
            }
        }
    }
    for (t, r, _) in &init_regs {
        if *t as usize >= threads.len() {
            return Err(src.err(
                0,
                format!("initial state names thread P{t}, which does not exist"),
            ));
        }
        let _ = r;
    }
    let condition = parse_condition(&src, cond_off)?;
    let mut vars = Vec::new();
    condition.cond.vars(&mut vars);
    for v in &vars {
        if let Var::Reg { thread, .. } = v {
            if *thread as usize >= threads.len() {
                return Err(LitmusError::Parse {
                    file: file.into(),
                    pos: condition.pos,
                    message: format!("condition names thread P{thread}, which does not exist"),
                });
            }
        }
    }
    Ok(LitmusTest {
        name,
        init_mem,
        init_regs,
        threads,
        condition,
    })
}

fn skip_ws(text: &str, off: usize) -> usize {
    let rest = &text[off.min(text.len())..];
    off + (rest.len() - rest.trim_start().len())
}

/// Finds the line where the condition starts: returns (end of program, condition start).
fn find_condition(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut line_start = from;
    loop {
        let rest = &text[line_start..];
        let t = rest.trim_start_matches([' ', '\t', '\r']);
        let off = line_start + (rest.len() - t.len());
        for kw in ["exists", "~exists", "forall", "~ exists"] {
            if let Some(after) = t.strip_prefix(kw) {
                if after.is_empty() || !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    return Some((line_start, off));
                }
            }
        }
        let nl = rest.find('\n')?;
        line_start += nl + 1;
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    s.parse::<i64>().ok()
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `P1:r0`, `1:r0` or a location name.
fn parse_var(s: &str) -> Option<Var> {
    if let Some((t, r)) = s.split_once(':') {
        let t = t.trim();
        let t = t.strip_prefix('P').unwrap_or(t);
        let thread = t.parse::<u32>().ok()?;
        let r = r.trim();
        return is_ident(r).then(|| Var::Reg {
            thread,
            name: r.to_string(),
        });
    }
    is_ident(s).then(|| Var::Loc(s.to_string()))
}

fn parse_thread_header(src: &Src, c: Piece) -> Result<Thread, LitmusError> {
    let (name, place) = match c.s.split_once('@') {
        Some((n, p)) => (n.trim(), Some(p)),
        None => (c.s, None),
    };
    let id = name
        .strip_prefix('P')
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| {
            src.err(
                c.off,
                format!("expected a thread name `PN`, found `{name}`"),
            )
        })?;
    let (mut cta, mut gpu, mut warp) = (0, 0, None);
    if let Some(p) = place {
        for part in p.split(',') {
            let mut w = part.split_whitespace();
            let (Some(k), Some(v), None) = (w.next(), w.next(), w.next()) else {
                return Err(src.err(c.off, format!("expected `@cta N,gpu M`, found `{}`", c.s)));
            };
            let v = v
                .parse::<u32>()
                .map_err(|_| src.err(c.off, format!("`{v}` is not a CTA/GPU number")))?;
            match k {
                "cta" => cta = v,
                "gpu" => gpu = v,
                "warp" => warp = Some(v),
                _ => {
                    return Err(src.err(
                        c.off,
                        format!("unknown placement `{k}` (expected cta, warp, gpu)"),
                    ))
                }
            }
        }
    }
    Ok(Thread {
        id,
        cta,
        gpu,
        warp,
        pos: src.pos(c.off),
        instrs: Vec::new(),
    })
}

fn value(src: &Src, p: Piece) -> Result<Value, LitmusError> {
    let p = p.trim();
    if let Some(v) = parse_int(p.s) {
        return Ok(Value::Const(v));
    }
    if is_ident(p.s) {
        return Ok(Value::Reg(p.s.to_string()));
    }
    Err(src.err(
        p.off,
        format!("expected a register or an integer, found `{}`", p.s),
    ))
}

fn reg(src: &Src, p: Piece) -> Result<String, LitmusError> {
    match value(src, p)? {
        Value::Reg(r) => Ok(r),
        Value::Const(_) => Err(src.err(
            p.trim().off,
            format!("expected a register, found `{}`", p.s.trim()),
        )),
    }
}

fn loc(src: &Src, p: Piece) -> Result<String, LitmusError> {
    let p = p.trim();
    if is_ident(p.s) {
        Ok(p.s.to_string())
    } else {
        Err(src.err(
            p.off,
            format!("expected a memory location, found `{}`", p.s),
        ))
    }
}

fn parse_instr(src: &Src, c: Piece) -> Result<Instr, LitmusError> {
    if let Some(l) = c.s.strip_suffix(':') {
        let l = l.trim();
        if is_ident(l) {
            return Ok(Instr::Label {
                name: l.to_string(),
            });
        }
        return Err(src.err(c.off, format!("`{l}` is not a valid label")));
    }
    let split = c.s.find(char::is_whitespace).unwrap_or(c.s.len());
    let opcode = &c.s[..split];
    let rest = Piece {
        s: &c.s[split..],
        off: c.off + split,
    };
    let ops: Vec<Piece> = if rest.s.trim().is_empty() {
        Vec::new()
    } else {
        rest.split(',').into_iter().map(|p| p.trim()).collect()
    };
    let parts: Vec<&str> = opcode.split('.').collect();
    let n_ops = |n: std::ops::RangeInclusive<usize>| -> Result<(), LitmusError> {
        if n.contains(&ops.len()) {
            Ok(())
        } else {
            Err(src.err(
                c.off,
                format!(
                    "`{opcode}` takes {} operand(s), found {}",
                    if n.start() == n.end() {
                        n.start().to_string()
                    } else {
                        format!("{} to {}", n.start(), n.end())
                    },
                    ops.len()
                ),
            ))
        }
    };
    let bad_mod = |m: &str| src.err(c.off, format!("unknown modifier `.{m}` in `{opcode}`"));
    // `.MO[.SCOPE]` after the opcode.
    let mo_scope = |mods: &[&str]| -> Result<(Mo, Option<Scope>, usize), LitmusError> {
        let Some(first) = mods.first() else {
            return Err(src.err(
                c.off,
                format!("`{opcode}` needs a memory order (weak, relaxed, …)"),
            ));
        };
        let mo = Mo::parse(first).ok_or_else(|| bad_mod(first))?;
        match mods.get(1).and_then(|s| Scope::parse(s)) {
            Some(sc) => Ok((mo, Some(sc), 2)),
            None => Ok((mo, None, 1)),
        }
    };
    match parts[0] {
        "ld" if parts.len() == 1 => {
            n_ops(2..=2)?;
            Ok(Instr::Move {
                dst: reg(src, ops[0])?,
                val: value(src, ops[1])?,
            })
        }
        "ld" => {
            let (mo, scope, used) = mo_scope(&parts[1..])?;
            if let Some(m) = parts.get(1 + used) {
                return Err(bad_mod(m));
            }
            n_ops(2..=2)?;
            Ok(Instr::Load {
                mo,
                scope,
                dst: reg(src, ops[0])?,
                loc: loc(src, ops[1])?,
            })
        }
        "st" => {
            let (mo, scope, used) = mo_scope(&parts[1..])?;
            if let Some(m) = parts.get(1 + used) {
                return Err(bad_mod(m));
            }
            n_ops(2..=2)?;
            Ok(Instr::Store {
                mo,
                scope,
                loc: loc(src, ops[0])?,
                val: value(src, ops[1])?,
            })
        }
        "atom" | "red" => {
            let (mo, scope, used) = mo_scope(&parts[1..])?;
            let rest = &parts[1 + used..];
            let [op] = rest else {
                return Err(src.err(
                    c.off,
                    format!("`{opcode}` needs exactly one operation (add, cas, exch, …)"),
                ));
            };
            let is_atom = parts[0] == "atom";
            if *op == "cas" {
                if !is_atom {
                    return Err(src.err(c.off, "`red` has no `cas` form"));
                }
                n_ops(4..=4)?;
                return Ok(Instr::Cas {
                    mo,
                    scope,
                    dst: reg(src, ops[0])?,
                    loc: loc(src, ops[1])?,
                    expected: value(src, ops[2])?,
                    new: value(src, ops[3])?,
                });
            }
            let op = RmwOp::parse(op).ok_or_else(|| bad_mod(op))?;
            if is_atom {
                n_ops(3..=3)?;
                Ok(Instr::Rmw {
                    mo,
                    scope,
                    op,
                    dst: Some(reg(src, ops[0])?),
                    loc: loc(src, ops[1])?,
                    val: value(src, ops[2])?,
                })
            } else {
                n_ops(2..=2)?;
                Ok(Instr::Rmw {
                    mo,
                    scope,
                    op,
                    dst: None,
                    loc: loc(src, ops[0])?,
                    val: value(src, ops[1])?,
                })
            }
        }
        "fence" => {
            n_ops(0..=0)?;
            if parts.get(1) == Some(&"proxy") {
                return Err(LitmusError::Unsupported {
                    file: src.file.into(),
                    pos: src.pos(c.off),
                    what: format!("proxy fence `{opcode}`"),
                });
            }
            let (mo, scope, used) = mo_scope(&parts[1..])?;
            if let Some(m) = parts.get(1 + used) {
                return Err(bad_mod(m));
            }
            let scope = scope.ok_or_else(|| {
                src.err(c.off, format!("`{opcode}` needs a scope (cta, gpu, sys)"))
            })?;
            Ok(Instr::Fence { mo, scope })
        }
        "bar" if parts[1..] == ["warp", "sync"] => {
            n_ops(0..=1)?;
            let group = match ops.first().map(|p| value(src, *p)).transpose()? {
                None => 0,
                Some(Value::Const(g)) if (0..32).contains(&g) => g as u32,
                Some(_) => {
                    return Err(src.err(
                        ops[0].off,
                        "the bar.warp.sync group must be a constant from 0 to 31",
                    ))
                }
            };
            Ok(Instr::WarpSync { group })
        }
        "bar" => {
            let kind = match &parts[1..] {
                ["cta", "sync"] | ["sync"] => BarKind::Sync,
                ["cta", "arrive"] | ["arrive"] => BarKind::Arrive,
                _ => {
                    return Err(src.err(
                        c.off,
                        format!(
                            "unknown barrier `{opcode}` (expected bar.cta.sync or bar.cta.arrive)"
                        ),
                    ))
                }
            };
            n_ops(1..=3)?;
            let instance = match value(src, ops[0])? {
                Value::Const(v) => v,
                Value::Reg(_) => {
                    return Err(src.err(ops[0].off, "the barrier instance must be a constant"))
                }
            };
            let id = ops.get(1).map(|p| value(src, *p)).transpose()?;
            let quorum = ops.get(2).map(|p| value(src, *p)).transpose()?;
            Ok(Instr::Barrier {
                kind,
                instance,
                id,
                quorum,
            })
        }
        "beq" | "bne" => {
            n_ops(3..=3)?;
            let label = ops[2].s.to_string();
            if !is_ident(&label) {
                return Err(src.err(ops[2].off, format!("`{label}` is not a valid label")));
            }
            Ok(Instr::Branch {
                eq: parts[0] == "beq",
                a: value(src, ops[0])?,
                b: value(src, ops[1])?,
                label,
            })
        }
        "goto" => {
            n_ops(1..=1)?;
            let label = ops[0].s.to_string();
            if !is_ident(&label) {
                return Err(src.err(ops[0].off, format!("`{label}` is not a valid label")));
            }
            Ok(Instr::Goto { label })
        }
        op if ArithOp::parse(op).is_some() && parts.len() == 1 => {
            n_ops(3..=3)?;
            Ok(Instr::Arith {
                op: ArithOp::parse(op).unwrap_or(ArithOp::Add),
                dst: reg(src, ops[0])?,
                a: value(src, ops[1])?,
                b: value(src, ops[2])?,
            })
        }
        _ => Err(LitmusError::Unsupported {
            file: src.file.into(),
            pos: src.pos(c.off),
            what: format!("instruction `{opcode}`"),
        }),
    }
}

// ---- conditions ----

struct CondParser<'s, 'a> {
    src: &'s Src<'a>,
    toks: Vec<(String, usize)>,
    i: usize,
}

fn tokenize_cond(src: &Src, off: usize) -> Result<Vec<(String, usize)>, LitmusError> {
    let text = src.text;
    let b = text.as_bytes();
    let mut i = off;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        if matches!(two, "/\\" | "\\/" | "==" | "!=" | "&&" | "||") {
            out.push((two.to_string(), i));
            i += 2;
            continue;
        }
        if matches!(c, b'(' | b')' | b'~' | b'=' | b':') {
            out.push(((c as char).to_string(), i));
            i += 1;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((text[start..i].to_string(), start));
            continue;
        }
        return Err(src.err(
            i,
            format!(
                "unexpected `{}` in the condition",
                text[i..].chars().next().unwrap_or('?')
            ),
        ));
    }
    Ok(out)
}

impl CondParser<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.i).map(|t| t.0.as_str())
    }
    fn off(&self) -> usize {
        self.toks.get(self.i).map_or(self.src.text.len(), |t| t.1)
    }
    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.i).map(|t| t.0.clone());
        self.i += 1;
        t
    }
    fn expect(&mut self, s: &str) -> Result<(), LitmusError> {
        let off = self.off();
        match self.next() {
            Some(t) if t == s => Ok(()),
            Some(t) => Err(self.src.err(off, format!("expected `{s}`, found `{t}`"))),
            None => Err(self
                .src
                .err(off, format!("expected `{s}`, found the end of the file"))),
        }
    }
    fn or(&mut self) -> Result<Cond, LitmusError> {
        let mut l = self.and()?;
        while matches!(self.peek(), Some("\\/") | Some("||")) {
            self.i += 1;
            let r = self.and()?;
            l = Cond::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Cond, LitmusError> {
        let mut l = self.unary()?;
        while matches!(self.peek(), Some("/\\") | Some("&&")) {
            self.i += 1;
            let r = self.unary()?;
            l = Cond::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<Cond, LitmusError> {
        match self.peek() {
            Some("~") => {
                self.i += 1;
                Ok(Cond::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.i += 1;
                let c = self.or()?;
                self.expect(")")?;
                Ok(c)
            }
            Some("true") => {
                self.i += 1;
                Ok(Cond::True)
            }
            Some("false") => {
                self.i += 1;
                Ok(Cond::False)
            }
            _ => {
                let a = self.operand()?;
                let off = self.off();
                let eq = match self.next().as_deref() {
                    Some("==") | Some("=") => true,
                    Some("!=") => false,
                    Some(t) => {
                        return Err(self
                            .src
                            .err(off, format!("expected `==` or `!=`, found `{t}`")))
                    }
                    None => {
                        return Err(self
                            .src
                            .err(off, "expected `==` or `!=`, found the end of the file"))
                    }
                };
                let b = self.operand()?;
                Ok(if eq { Cond::Eq(a, b) } else { Cond::Ne(a, b) })
            }
        }
    }
    fn operand(&mut self) -> Result<Operand, LitmusError> {
        let off = self.off();
        let Some(t) = self.next() else {
            return Err(self.src.err(
                off,
                "expected a register, location or integer, found the end of the file",
            ));
        };
        if self.peek() == Some(":") {
            self.i += 1;
            let roff = self.off();
            let r = self.next().unwrap_or_default();
            return parse_var(&format!("{t}:{r}"))
                .map(Operand::Var)
                .ok_or_else(|| self.src.err(roff, format!("`{t}:{r}` is not a register")));
        }
        if let Some(v) = parse_int(&t) {
            return Ok(Operand::Const(v));
        }
        if is_ident(&t) {
            return Ok(Operand::Var(Var::Loc(t)));
        }
        Err(self.src.err(
            off,
            format!("expected a register, location or integer, found `{t}`"),
        ))
    }
}

fn parse_condition(src: &Src, off: usize) -> Result<Condition, LitmusError> {
    let toks = tokenize_cond(src, off)?;
    let mut p = CondParser { src, toks, i: 0 };
    let pos = src.pos(off);
    let quantifier = match (p.next().as_deref(), p.peek()) {
        (Some("exists"), _) => Quantifier::Exists,
        (Some("forall"), _) => Quantifier::Forall,
        (Some("~"), Some("exists")) => {
            p.i += 1;
            Quantifier::NotExists
        }
        _ => return Err(src.err(off, "expected `exists`, `~exists` or `forall`")),
    };
    let cond = p.or()?;
    if p.i < p.toks.len() {
        let (t, o) = &p.toks[p.i];
        return Err(src.err(*o, format!("unexpected `{t}` after the condition")));
    }
    Ok(Condition {
        quantifier,
        cond,
        pos,
    })
}
