//! Recursive-descent parser from tokens to the IR (PTX ISA §4–§9 syntax). Every error
//! names the position and the offending token; nothing here panics on any input (the
//! `cargo fuzz` target in `fuzz/` exercises that).

use crate::ast::*;
use crate::error::ParseError;
use crate::lexer::{lex, Tok, Token};
use crate::table::{Mod, ModClass, Opcode};

/// Deepest `{ }` / initializer nesting accepted (guards the stack on hostile input).
const MAX_DEPTH: u32 = 64;

/// Parses a PTX module. `file` is used in error messages only.
pub fn parse(file: &str, src: &str) -> Result<Module, ParseError> {
    let toks = lex(file, src)?;
    let mut p = Parser {
        file,
        src,
        toks,
        i: 0,
        loc: None,
        depth: 0,
    };
    p.module()
}

struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<Token>,
    i: usize,
    /// The `.loc` in effect for the next instruction.
    loc: Option<Loc>,
    depth: u32,
}

type R<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.i + n).min(self.toks.len() - 1)].tok
    }
    fn pos(&self) -> Pos {
        self.toks[self.i.min(self.toks.len() - 1)].pos
    }
    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }
    fn err<T>(&self, msg: impl Into<String>) -> R<T> {
        Err(ParseError::new(
            self.file,
            self.pos(),
            msg,
            self.peek().text(),
        ))
    }
    fn is_punct(&self, c: char) -> bool {
        *self.peek() == Tok::Punct(c)
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char) -> R<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!("expected `{c}`"))
        }
    }
    fn is_dot(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Dot(d) if d == s)
    }
    fn eat_dot(&mut self, s: &str) -> bool {
        if self.is_dot(s) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn ident(&mut self, what: &str) -> R<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.err(format!("expected {what}")),
        }
    }
    fn uint(&mut self, what: &str) -> R<u64> {
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(v)
            }
            _ => self.err(format!("expected {what}")),
        }
    }
    fn u32(&mut self, what: &str) -> R<u32> {
        let v = self.uint(what)?;
        u32::try_from(v).or_else(|_| {
            self.i -= 1;
            self.err(format!("{what} out of range"))
        })
    }
    /// A possibly negated integer.
    fn int(&mut self, what: &str) -> R<i64> {
        let neg = self.eat_punct('-');
        let v = self.uint(what)? as i64;
        Ok(if neg { v.wrapping_neg() } else { v })
    }
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        Ok(())
    }

    fn module(&mut self) -> R<Module> {
        let mut items = Vec::new();
        loop {
            let pos = self.pos();
            match self.peek().clone() {
                Tok::Eof => break,
                Tok::Dot(d) => match d.as_str() {
                    "version" => {
                        self.bump();
                        items.push(self.version()?);
                    }
                    "target" => {
                        self.bump();
                        let mut t = vec![self.ident("a target name")?];
                        while self.eat_punct(',') {
                            t.push(self.ident("a target name")?);
                        }
                        items.push(Item::Target(t));
                    }
                    "address_size" => {
                        self.bump();
                        let n = self.u32("an address size")?;
                        if n != 32 && n != 64 {
                            self.i -= 1;
                            return self.err("address size must be 32 or 64");
                        }
                        items.push(Item::AddressSize(n));
                    }
                    "file" => {
                        self.bump();
                        items.push(Item::File(self.file_decl()?));
                    }
                    "pragma" => {
                        self.bump();
                        items.push(Item::Pragma(self.pragma()?));
                    }
                    "section" => {
                        self.bump();
                        items.push(Item::Section(self.section()?));
                    }
                    "visible" | "extern" | "weak" | "common" | "entry" | "func" | "global"
                    | "const" | "shared" | "local" => {
                        let linkage = self.linkage();
                        if self.is_dot("entry") || self.is_dot("func") {
                            items.push(Item::Func(self.function(pos, linkage)?));
                        } else {
                            let mut decls = self.var_decl(pos, linkage)?;
                            self.expect_punct(';')?;
                            items.extend(decls.drain(..).map(Item::Var));
                        }
                    }
                    _ => return self.err("unknown or misplaced directive"),
                },
                _ => return self.err("expected a directive"),
            }
        }
        Ok(Module { items })
    }

    fn version(&mut self) -> R<Item> {
        // Read the raw text: `9.5` lexes as a float, and `8.10` must not become 8.1.
        let start = self.toks[self.i].offset;
        let t = self.bump();
        let end = self.toks[self.i].offset;
        let raw = self.src.get(start..end).unwrap_or("").trim();
        let parsed = match t {
            Tok::F64(_) => raw
                .split_once('.')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
            _ => None,
        };
        match parsed {
            Some((major, minor)) => Ok(Item::Version { major, minor }),
            None => {
                self.i -= 1;
                self.err("expected a version like 8.5")
            }
        }
    }

    fn file_decl(&mut self) -> R<FileDecl> {
        let index = self.u32("a file index")?;
        let path = match self.bump() {
            Tok::Str(s) => s,
            _ => {
                self.i -= 1;
                return self.err("expected a quoted file name");
            }
        };
        let (mut timestamp, mut size) = (None, None);
        if self.eat_punct(',') {
            timestamp = Some(self.uint("a timestamp")?);
            if self.eat_punct(',') {
                size = Some(self.uint("a file size")?);
            }
        }
        Ok(FileDecl {
            index,
            path,
            timestamp,
            size,
        })
    }

    fn pragma(&mut self) -> R<Vec<String>> {
        let mut v = Vec::new();
        loop {
            match self.bump() {
                Tok::Str(s) => v.push(s),
                _ => {
                    self.i -= 1;
                    return self.err("expected a quoted pragma");
                }
            }
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')?;
        Ok(v)
    }

    fn section(&mut self) -> R<Section> {
        let name = match self.bump() {
            Tok::Dot(d) => d,
            _ => {
                self.i -= 1;
                return self.err("expected a section name like .debug_str");
            }
        };
        self.expect_punct('{')?;
        let mut entries = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Punct('}') => {
                    self.bump();
                    break;
                }
                Tok::Ident(l) if *self.peek_at(1) == Tok::Punct(':') => {
                    self.bump();
                    self.bump();
                    entries.push(SectionEntry::Label(l));
                }
                Tok::Dot(d) => {
                    let ty = match Mod::parse(&d) {
                        Some(m @ (Mod::B8 | Mod::B16 | Mod::B32 | Mod::B64)) => m,
                        _ => return self.err("expected .b8/.b16/.b32/.b64 section data"),
                    };
                    self.bump();
                    let mut values = Vec::new();
                    loop {
                        match self.peek().clone() {
                            Tok::Ident(name) => {
                                self.bump();
                                let offset = if self.is_punct('+') || self.is_punct('-') {
                                    let neg = self.bump() == Tok::Punct('-');
                                    let v = self.int("an offset")?;
                                    if neg {
                                        v.wrapping_neg()
                                    } else {
                                        v
                                    }
                                } else {
                                    0
                                };
                                values.push(SectionValue::Sym { name, offset });
                            }
                            _ => values.push(SectionValue::Int(self.int("section data")?)),
                        }
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                    entries.push(SectionEntry::Data { ty, values });
                }
                _ => return self.err("unexpected token in section"),
            }
        }
        Ok(Section { name, entries })
    }

    fn linkage(&mut self) -> Option<Linkage> {
        let l = match self.peek() {
            Tok::Dot(d) => match d.as_str() {
                "visible" => Linkage::Visible,
                "extern" => Linkage::Extern,
                "weak" => Linkage::Weak,
                "common" => Linkage::Common,
                _ => return None,
            },
            _ => return None,
        };
        self.bump();
        Some(l)
    }

    fn space_of(d: &str) -> Option<Space> {
        Some(match d {
            "reg" => Space::Reg,
            "global" => Space::Global,
            "shared" => Space::Shared,
            "local" => Space::Local,
            "const" => Space::Const,
            "param" => Space::Param,
            _ => return None,
        })
    }

    /// `.space [.align N] [.vN] .type [.ptr [.space] [.align N]] name[<N>][dims] [= init]`
    /// (and `, name2, ...` for `.reg`). Attributes may come in any order before the name.
    fn var_decl(&mut self, pos: Pos, linkage: Option<Linkage>) -> R<Vec<VarDecl>> {
        let space = match self.peek() {
            Tok::Dot(d) => Self::space_of(d),
            _ => None,
        };
        let Some(space) = space else {
            return self
                .err("expected a state space (.reg, .global, .shared, .local, .const, .param)");
        };
        self.bump();
        let (mut align, mut vector, mut ty, mut ptr) = (None, None, None, None);
        let mut managed = false;
        loop {
            match self.peek().clone() {
                // `.attribute(.managed)` (and `.attribute(.unified(…))`, whose identifiers
                // only matter to a multi-device loader).
                Tok::Dot(d) if d == "attribute" => {
                    self.bump();
                    self.expect_punct('(')?;
                    let mut depth = 1;
                    while depth > 0 {
                        match self.peek().clone() {
                            Tok::Dot(a) if a == "managed" && depth == 1 => managed = true,
                            Tok::Eof => return self.err("unterminated `.attribute(`"),
                            _ if self.is_punct('(') => depth += 1,
                            _ if self.is_punct(')') => depth -= 1,
                            _ => {}
                        }
                        self.bump();
                    }
                }
                Tok::Dot(d) if d == "align" => {
                    self.bump();
                    align = Some(self.u32("an alignment")?);
                }
                Tok::Dot(d) if d == "v2" || d == "v4" || d == "v8" => {
                    self.bump();
                    vector = Some(d[1..].parse().unwrap_or(2));
                }
                Tok::Dot(d) if d == "ptr" => {
                    self.bump();
                    let mut attr = PtrAttr {
                        space: None,
                        align: None,
                    };
                    if let Tok::Dot(s) = self.peek().clone() {
                        if let Some(sp) = Self::space_of(&s) {
                            self.bump();
                            attr.space = Some(sp);
                        }
                    }
                    if self.eat_dot("align") {
                        attr.align = Some(self.u32("an alignment")?);
                    }
                    ptr = Some(attr);
                }
                Tok::Dot(d) => match Mod::parse(&d) {
                    Some(m) if m.class() == ModClass::Type && ty.is_none() => {
                        self.bump();
                        ty = Some(m);
                    }
                    _ => return self.err("unexpected attribute in declaration"),
                },
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return self.err("expected a type (.u32, .b8, .f32, ...)");
        };
        let mut out = Vec::new();
        loop {
            let vpos = self.pos();
            let name = self.ident("a name")?;
            let mut range = None;
            if self.eat_punct('<') {
                range = Some(self.u32("a register count")?);
                self.expect_punct('>')?;
            }
            let mut dims = Vec::new();
            while self.eat_punct('[') {
                if self.eat_punct(']') {
                    dims.push(None);
                } else {
                    dims.push(Some(self.uint("an array size")?));
                    self.expect_punct(']')?;
                }
            }
            let init = if self.eat_punct('=') {
                Some(self.init()?)
            } else {
                None
            };
            out.push(VarDecl {
                pos: if out.is_empty() { pos } else { vpos },
                linkage,
                space,
                align,
                vector,
                ty,
                ptr: ptr.clone(),
                managed,
                name,
                range,
                dims,
                init,
            });
            // `.reg .u32 %a, %b;` declares several registers; in a parameter list a
            // comma is followed by the next declaration instead.
            if space == Space::Reg && self.is_punct(',') && matches!(self.peek_at(1), Tok::Ident(_))
            {
                self.bump();
                continue;
            }
            break;
        }
        Ok(out)
    }

    fn init(&mut self) -> R<Init> {
        if self.eat_punct('{') {
            self.enter()?;
            let mut v = Vec::new();
            if !self.is_punct('}') {
                loop {
                    v.push(self.init()?);
                    if !self.eat_punct(',') {
                        break;
                    }
                }
            }
            self.expect_punct('}')?;
            self.depth -= 1;
            return Ok(Init::List(v));
        }
        let neg = self.eat_punct('-');
        let v = match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                let v = v as i64;
                InitValue::Int(if neg { v.wrapping_neg() } else { v })
            }
            Tok::F32(b) => {
                self.bump();
                InitValue::F32(if neg { b ^ 0x8000_0000 } else { b })
            }
            Tok::F64(b) => {
                self.bump();
                InitValue::F64(if neg { b ^ (1 << 63) } else { b })
            }
            Tok::Ident(name) if !neg => {
                self.bump();
                let generic = name == "generic" && self.is_punct('(');
                let name = if generic {
                    self.expect_punct('(')?;
                    let n = self.ident("a variable name")?;
                    self.expect_punct(')')?;
                    n
                } else {
                    name
                };
                let mut offset = 0;
                if self.eat_punct('+') {
                    offset = self.int("an offset")?;
                }
                InitValue::Addr {
                    name,
                    generic,
                    offset,
                }
            }
            _ => return self.err("expected an initializer value"),
        };
        Ok(Init::Scalar(v))
    }

    fn param_list(&mut self) -> R<Vec<VarDecl>> {
        self.expect_punct('(')?;
        let mut v = Vec::new();
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            let pos = self.pos();
            let mut d = self.var_decl(pos, None)?;
            if d.len() != 1 {
                return self.err("one parameter per declaration");
            }
            v.append(&mut d);
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(')')?;
        Ok(v)
    }

    fn perf_directive(&mut self) -> R<Option<PerfDirective>> {
        let name = match self.peek() {
            Tok::Dot(d)
                if matches!(
                    d.as_str(),
                    "maxntid"
                        | "reqntid"
                        | "minnctapersm"
                        | "maxnctapersm"
                        | "maxnreg"
                        | "explicitcluster"
                        | "reqnctapercluster"
                        | "maxclusterrank"
                        | "blocksareclusters"
                ) =>
            {
                d.clone()
            }
            _ => return Ok(None),
        };
        self.bump();
        let mut values = Vec::new();
        if matches!(self.peek(), Tok::Int(_)) {
            loop {
                values.push(self.uint("a number")?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        Ok(Some(PerfDirective { name, values }))
    }

    fn function(&mut self, pos: Pos, linkage: Option<Linkage>) -> R<Function> {
        let kind = if self.eat_dot("entry") {
            FuncKind::Entry
        } else {
            self.bump();
            FuncKind::Func
        };
        let rets = if kind == FuncKind::Func && self.is_punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        let name = self.ident("a function name")?;
        let params = if self.is_punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut noreturn = false;
        let mut perf = Vec::new();
        loop {
            if self.eat_dot("noreturn") {
                noreturn = true;
            } else if let Some(p) = self.perf_directive()? {
                perf.push(p);
            } else {
                break;
            }
        }
        let body = if self.eat_punct(';') {
            None
        } else if self.is_punct('{') {
            self.bump();
            self.loc = None;
            Some(self.block_body()?)
        } else {
            return self.err("expected `{` or `;` after the function header");
        };
        Ok(Function {
            pos,
            linkage,
            kind,
            name,
            rets,
            params,
            noreturn,
            perf,
            body,
        })
    }

    /// Statements up to and including the closing `}`.
    fn block_body(&mut self) -> R<Vec<Statement>> {
        self.enter()?;
        let mut out = Vec::new();
        loop {
            let pos = self.pos();
            match self.peek().clone() {
                Tok::Punct('}') => {
                    self.bump();
                    break;
                }
                Tok::Punct('{') => {
                    self.bump();
                    out.push(Statement::Block(self.block_body()?));
                }
                Tok::Eof => return self.err("unexpected end of input inside a function body"),
                Tok::Ident(l) if *self.peek_at(1) == Tok::Punct(':') => {
                    self.bump();
                    self.bump();
                    if self.eat_dot("branchtargets") {
                        let mut targets = vec![self.ident("a label")?];
                        while self.eat_punct(',') {
                            targets.push(self.ident("a label")?);
                        }
                        self.expect_punct(';')?;
                        out.push(Statement::BranchTargets { name: l, targets });
                    } else if self.eat_dot("callprototype") {
                        let rets = if self.is_punct('(') {
                            self.param_list()?
                        } else {
                            Vec::new()
                        };
                        let n = self.ident("`_`")?;
                        if n != "_" {
                            self.i -= 1;
                            return self.err("expected `_` in a call prototype");
                        }
                        let params = if self.is_punct('(') {
                            self.param_list()?
                        } else {
                            Vec::new()
                        };
                        let noreturn = self.eat_dot("noreturn");
                        self.expect_punct(';')?;
                        out.push(Statement::CallPrototype {
                            name: l,
                            rets,
                            params,
                            noreturn,
                        });
                    } else {
                        out.push(Statement::Label(l));
                    }
                }
                Tok::Dot(d) => match d.as_str() {
                    "reg" | "local" | "shared" | "param" | "const" | "global" => {
                        let mut v = self.var_decl(pos, None)?;
                        self.expect_punct(';')?;
                        out.extend(v.drain(..).map(Statement::Var));
                    }
                    "extern" | "visible" | "weak" => {
                        let linkage = self.linkage();
                        let mut v = self.var_decl(pos, linkage)?;
                        self.expect_punct(';')?;
                        out.extend(v.drain(..).map(Statement::Var));
                    }
                    "loc" => {
                        self.bump();
                        let loc = self.loc_directive()?;
                        self.loc = Some(loc.clone());
                        out.push(Statement::Loc(loc));
                    }
                    "pragma" => {
                        self.bump();
                        out.push(Statement::Pragma(self.pragma()?));
                    }
                    _ => match self.perf_directive()? {
                        Some(p) => {
                            self.eat_punct(';');
                            out.push(Statement::Perf(p));
                        }
                        None => return self.err("unknown or misplaced directive"),
                    },
                },
                Tok::Punct('@') | Tok::Ident(_) => {
                    out.push(Statement::Inst(self.instruction()?));
                }
                _ => return self.err("expected an instruction, label or directive"),
            }
        }
        self.depth -= 1;
        Ok(out)
    }

    fn loc_directive(&mut self) -> R<Loc> {
        let file = self.u32("a file index")?;
        let line = self.u32("a line number")?;
        let col = self.u32("a column")?;
        let mut loc = Loc {
            file,
            line,
            col,
            function_name: None,
            inlined_at: None,
        };
        while self.eat_punct(',') {
            let key = self.ident("`function_name` or `inlined_at`")?;
            match key.as_str() {
                "function_name" => {
                    let l = self.ident("a label")?;
                    let off = if self.eat_punct('+') {
                        self.int("an offset")?
                    } else {
                        0
                    };
                    loc.function_name = Some((l, off));
                }
                "inlined_at" => {
                    let f = self.u32("a file index")?;
                    let l = self.u32("a line number")?;
                    let c = self.u32("a column")?;
                    loc.inlined_at = Some((f, l, c));
                }
                _ => {
                    self.i -= 1;
                    return self.err("expected `function_name` or `inlined_at`");
                }
            }
        }
        Ok(loc)
    }

    fn instruction(&mut self) -> R<Instruction> {
        let pos = self.pos();
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let pred = self.ident("a predicate register")?;
            Some(Guard { negated, pred })
        } else {
            None
        };
        let op_pos = self.pos();
        let name = self.ident("an instruction")?;
        let Some(opcode) = Opcode::parse(&name) else {
            self.i -= 1;
            let what = if matches!(name.as_str(), "tld4" | "txq" | "sured" | "suq" | "istypep") {
                "texture and surface instructions are not supported"
            } else {
                "unknown instruction"
            };
            return Err(ParseError::new(self.file, op_pos, what, name));
        };
        let mut mods = Vec::new();
        while let Tok::Dot(d) = self.peek().clone() {
            let m = match Mod::parse(&d) {
                Some(m) if opcode.accepts(m.class()) => m,
                Some(_) => {
                    return self.err(format!("modifier `.{d}` does not apply to `{name}`"));
                }
                None => return self.err(format!("unknown modifier for `{name}`")),
            };
            self.bump();
            mods.push(m);
        }
        let mut operands = Vec::new();
        if !self.is_punct(';') {
            loop {
                operands.push(self.operand(0)?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        if !self.is_punct(';') {
            return self.err("expected `,` or `;` after an operand");
        }
        let info = opcode.info();
        let n = operands.len();
        if n < info.min_operands as usize || n > info.max_operands as usize {
            let want = if info.min_operands == info.max_operands {
                info.min_operands.to_string()
            } else {
                format!("{} to {}", info.min_operands, info.max_operands)
            };
            return Err(ParseError::new(
                self.file,
                op_pos,
                format!("`{name}` takes {want} operands, found {n}"),
                name,
            ));
        }
        self.bump();
        Ok(Instruction {
            pos,
            loc: self.loc.clone(),
            guard,
            opcode,
            mods,
            operands,
        })
    }

    fn operand(&mut self, depth: u32) -> R<Operand> {
        if depth > 8 {
            return self.err("operand nesting too deep");
        }
        match self.peek().clone() {
            Tok::Punct('[') => {
                self.bump();
                let base = match self.peek().clone() {
                    Tok::Ident(n) => {
                        self.bump();
                        AddrBase::Name(n)
                    }
                    Tok::Int(v) => {
                        self.bump();
                        AddrBase::Imm(v)
                    }
                    _ => return self.err("expected a register, variable or address"),
                };
                // `[tex, {x, y}]`: a texture fetch's texture and coordinates.
                if self.eat_punct(',') {
                    let AddrBase::Name(n) = base else {
                        return self.err("expected a texture before `,`");
                    };
                    let Operand::Vector(coords) = self.operand(depth + 1)? else {
                        return self.err("expected `{…}` coordinates after the texture");
                    };
                    self.expect_punct(']')?;
                    return Ok(Operand::TexAddr {
                        tex: Box::new(Operand::Name(n)),
                        coords,
                    });
                }
                let mut offset = 0i64;
                // `[a+4]`, `[a+-4]` (NVRTC's spelling) and `[a-4]`.
                if self.eat_punct('+') || self.is_punct('-') {
                    offset = self.int("an offset")?;
                }
                self.expect_punct(']')?;
                Ok(Operand::Addr { base, offset })
            }
            Tok::Punct('{') => {
                self.bump();
                let mut v = Vec::new();
                loop {
                    v.push(self.operand(depth + 1)?);
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct('}')?;
                Ok(Operand::Vector(v))
            }
            Tok::Punct('(') => {
                self.bump();
                let mut v = Vec::new();
                if !self.is_punct(')') {
                    loop {
                        v.push(self.operand(depth + 1)?);
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                }
                self.expect_punct(')')?;
                Ok(Operand::List(v))
            }
            Tok::Punct('!') => {
                self.bump();
                Ok(Operand::Not(Box::new(self.operand(depth + 1)?)))
            }
            Tok::Punct('-') => {
                self.bump();
                match self.bump() {
                    Tok::Int(v) => Ok(Operand::Int((v as i64).wrapping_neg())),
                    Tok::F32(b) => Ok(Operand::F32(b ^ 0x8000_0000)),
                    Tok::F64(b) => Ok(Operand::F64(b ^ (1 << 63))),
                    _ => {
                        self.i -= 1;
                        self.err("expected a number after `-`")
                    }
                }
            }
            Tok::Int(v) => {
                self.bump();
                Ok(Operand::Int(v as i64))
            }
            Tok::F32(b) => {
                self.bump();
                Ok(Operand::F32(b))
            }
            Tok::F64(b) => {
                self.bump();
                Ok(Operand::F64(b))
            }
            Tok::Ident(n) => {
                self.bump();
                let first = if n == "_" {
                    Operand::Sink
                } else if let Some(reg) = Special::parse(&n) {
                    let mut dim = None;
                    if reg.has_dims() {
                        if let Tok::Dot(d) = self.peek().clone() {
                            dim = match d.as_str() {
                                "x" => Some(0),
                                "y" => Some(1),
                                "z" => Some(2),
                                _ => return self.err("expected .x, .y or .z"),
                            };
                            self.bump();
                        }
                    }
                    Operand::Special { reg, dim }
                } else if let Some(sel) = match self.peek() {
                    Tok::Dot(d) => Selector::parse(d),
                    _ => None,
                } {
                    self.bump();
                    Operand::Select { name: n, sel }
                } else if self.is_punct('+')
                    && matches!(self.peek_at(1), Tok::Int(_) | Tok::Punct('-'))
                {
                    self.bump();
                    let offset = self.int("an offset")?;
                    Operand::SymOffset { name: n, offset }
                } else {
                    Operand::Name(n)
                };
                if self.eat_punct('|') {
                    let second = self.operand(depth + 1)?;
                    return Ok(Operand::Pair(Box::new(first), Box::new(second)));
                }
                Ok(first)
            }
            _ => self.err("expected an operand"),
        }
    }
}
