//! Just enough of CUDA C++ to place a statement exactly: a lexer (comments, strings,
//! preprocessor lines skipped) and the statement structure of function bodies — compound
//! statements, `if`/`else`, `for`/`while`/`switch`, `do … while`, and simple statements up
//! to their `;`. It is not a C++ parser: it only has to find where a statement starts and
//! ends, and which statement is the unbraced body of a control statement (inserting after
//! such a body must add braces, or the new line lands outside the `if`).
//!
//! Declarations are told apart from function bodies by the token before `{`: after `)`
//! (or `const`, `noexcept`, `override`, `final`, `mutable`) at namespace or class level it
//! is a function body; `namespace`, `extern "C"`, `struct`/`class`/`union` open a
//! declaration scope; any other brace (initializers, lambdas inside an expression, `enum`
//! bodies) is skipped as part of the statement around it.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: TokKind,
    /// Byte range in the source.
    pub span: Range<usize>,
    /// 1-based line and column (columns count bytes, as `.loc` does).
    pub line: u32,
    pub col: u32,
}

/// The tokens of `src`, without comments and preprocessor lines.
pub fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    let mut line_start = 0usize;
    // Only whitespace since the start of the line: a `#` here starts a directive.
    let mut at_line_start = true;
    let punct3 = ["<<=", ">>=", "...", "->*"];
    let punct2 = [
        "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
        "/=", "%=", "&=", "|=", "^=", ".*",
    ];
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            at_line_start = true;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    line += 1;
                    line_start = i + 1;
                }
                i += 1;
            }
            i = (i + 2).min(b.len());
            continue;
        }
        if c == b'#' && at_line_start {
            // A directive runs to the end of the line, continued by a trailing backslash.
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                    i += 2;
                    line += 1;
                    line_start = i;
                    continue;
                }
                i += 1;
            }
            continue;
        }
        at_line_start = false;
        let start = i;
        let col = (i - line_start) as u32 + 1;
        let tok_line = line;
        let kind;
        if c == b'"' || c == b'\'' {
            // Raw strings (R"x(...)x") are rare in kernels; treated as ordinary strings.
            let q = c;
            i += 1;
            while i < b.len() && b[i] != q && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            kind = if q == b'"' {
                TokKind::Str
            } else {
                TokKind::Char
            };
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            kind = TokKind::Ident;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // A pp-number: digits, letters, dots, digit separators, signed exponents.
            i += 1;
            while i < b.len() {
                let d = b[i];
                let sign =
                    (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if sign || d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || d == b'\'' {
                    i += 1;
                } else {
                    break;
                }
            }
            kind = TokKind::Number;
        } else {
            let rest = &src[i..];
            let n = if punct3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if punct2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                rest.chars().next().map_or(1, char::len_utf8)
            };
            i += n;
            kind = TokKind::Punct;
        }
        out.push(Token {
            kind,
            span: start..i,
            line: tok_line,
            col,
        });
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StmtKind {
    /// An expression or declaration statement, up to and including its `;`.
    Simple,
    /// `{ ... }`; `children` are its statements.
    Block,
    /// `if (cond) then [else other]`; `children` = [then] or [then, else].
    If {
        /// Tokens of `(` and `)` around the condition.
        cond: (usize, usize),
        /// Token index of `else`, if any.
        else_kw: Option<usize>,
    },
    /// `for`/`while`/`switch (…) body`; `children` = [body].
    Loop { cond: (usize, usize) },
    /// `do body while (cond);`; `children` = [body].
    DoWhile { cond: (usize, usize) },
    /// A label (`case 1:`, `default:`, `name:`) or a stray token.
    Label,
    /// A function body or declaration scope (namespace, class); `children` are the
    /// statements (function) or declarations inside.
    Scope { function: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    pub kind: StmtKind,
    /// First and last token (inclusive).
    pub first: usize,
    pub last: usize,
    pub children: Vec<Stmt>,
}

/// A source file: its text, tokens and statement tree.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub text: String,
    pub tokens: Vec<Token>,
    /// Top-level declarations; function bodies are `Scope { function: true }` nodes.
    pub items: Vec<Stmt>,
}

impl SourceFile {
    pub fn parse(text: &str) -> SourceFile {
        let tokens = lex(text);
        let mut p = Parser {
            toks: &tokens,
            src: text,
            i: 0,
        };
        let items = p.decls(None);
        SourceFile {
            text: text.to_string(),
            tokens,
            items,
        }
    }

    pub fn tok(&self, i: usize) -> &str {
        self.tokens
            .get(i)
            .map_or("", |t| &self.text[t.span.clone()])
    }

    /// The text of a statement (from its first to its last token).
    pub fn stmt_text(&self, s: &Stmt) -> &str {
        match (self.tokens.get(s.first), self.tokens.get(s.last)) {
            (Some(a), Some(b)) => &self.text[a.span.start..b.span.end],
            _ => "",
        }
    }

    /// The statements inside function bodies on `line`, outermost first: simple
    /// statements spanning it and compound statements starting or ending on it. Each is
    /// the path (indices into `children`) from a top-level item down to the statement.
    pub fn stmts_on_line(&self, line: u32) -> Vec<Path> {
        let mut out = Vec::new();
        for (k, it) in self.items.iter().enumerate() {
            self.collect_on_line(it, vec![k], line, false, &mut out);
        }
        out
    }

    fn collect_on_line(
        &self,
        s: &Stmt,
        path: Path,
        line: u32,
        in_function: bool,
        out: &mut Vec<Path>,
    ) {
        let (l0, l1) = self.lines_of(s);
        if line < l0 || line > l1 {
            return;
        }
        let function = in_function || matches!(s.kind, StmtKind::Scope { function: true });
        // A compound statement counts when it starts or ends on the line (a loop whose
        // condition is there); one that merely spans the line does not.
        let touches = s.kind == StmtKind::Simple || l0 == line || l1 == line;
        if in_function && touches && !matches!(s.kind, StmtKind::Label) {
            out.push(path.clone());
        }
        for (k, c) in s.children.iter().enumerate() {
            let mut p = path.clone();
            p.push(k);
            self.collect_on_line(c, p, line, function, out);
        }
    }

    /// First and last line of a statement.
    pub fn lines_of(&self, s: &Stmt) -> (u32, u32) {
        let a = self.tokens.get(s.first).map_or(0, |t| t.line);
        let b = self.tokens.get(s.last).map_or(0, |t| t.line);
        (a, b)
    }

    pub fn get(&self, path: &[usize]) -> Option<&Stmt> {
        let (first, rest) = path.split_first()?;
        let mut s = self.items.get(*first)?;
        for k in rest {
            s = s.children.get(*k)?;
        }
        Some(s)
    }

    /// The parent of the statement at `path` (None for a top-level item).
    pub fn parent(&self, path: &[usize]) -> Option<&Stmt> {
        if path.len() < 2 {
            return None;
        }
        self.get(&path[..path.len() - 1])
    }

    /// The indentation (leading whitespace) of the line holding byte `at`.
    pub fn indent_at(&self, at: usize) -> &str {
        let start = self.text[..at].rfind('\n').map_or(0, |p| p + 1);
        let rest = &self.text[start..];
        let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        &rest[..n]
    }

    /// Whether only whitespace or a comment follows byte `at` on its line.
    pub fn line_ends_after(&self, at: usize) -> bool {
        let end = self.text[at..]
            .find('\n')
            .map_or(self.text.len(), |p| at + p);
        let rest = self.text[at..end].trim();
        rest.is_empty()
            || rest.starts_with("//")
            || (rest.starts_with("/*") && rest.ends_with("*/"))
    }

    /// Whether only whitespace precedes byte `at` on its line.
    pub fn line_starts_before(&self, at: usize) -> bool {
        let start = self.text[..at].rfind('\n').map_or(0, |p| p + 1);
        self.text[start..at].trim().is_empty()
    }

    /// Byte offset just past the end of the line holding byte `at` (after its newline).
    pub fn end_of_line(&self, at: usize) -> usize {
        self.text[at..]
            .find('\n')
            .map_or(self.text.len(), |p| at + p + 1)
    }

    /// Byte offset of the start of the line holding byte `at`.
    pub fn start_of_line(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |p| p + 1)
    }
}

/// Indices from a top-level item down to a statement.
pub type Path = Vec<usize>;

struct Parser<'a> {
    toks: &'a [Token],
    src: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn t(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| &self.src[t.span.clone()])
    }
    fn cur(&self) -> &str {
        self.t(self.i)
    }
    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    /// Skips a balanced `(`/`[`/`{` group starting at the current token; returns the index
    /// of its closing token.
    fn skip_group(&mut self) -> usize {
        let mut depth = 0i32;
        while !self.at_end() {
            match self.cur() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth <= 0 {
                        let end = self.i;
                        self.i += 1;
                        return end;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        self.toks.len().saturating_sub(1)
    }

    /// Declarations at namespace or class level until `}` (not consumed) or the end.
    fn decls(&mut self, _closing: Option<()>) -> Vec<Stmt> {
        let mut out = Vec::new();
        while !self.at_end() && self.cur() != "}" {
            let before = self.i;
            out.push(self.decl());
            if self.i == before {
                self.i += 1;
            }
        }
        out
    }

    /// One declaration: up to `;`, or a function body, or a declaration scope.
    fn decl(&mut self) -> Stmt {
        let first = self.i;
        let mut scope_kw = false;
        let mut enum_kw = false;
        loop {
            if self.at_end() {
                return Stmt {
                    kind: StmtKind::Simple,
                    first,
                    last: self.toks.len().saturating_sub(1),
                    children: Vec::new(),
                };
            }
            let t = self.cur().to_string();
            match t.as_str() {
                ";" => {
                    let last = self.i;
                    self.i += 1;
                    return Stmt {
                        kind: StmtKind::Simple,
                        first,
                        last,
                        children: Vec::new(),
                    };
                }
                "namespace" | "struct" | "class" | "union" => scope_kw = true,
                "enum" => enum_kw = true,
                // `extern "C" { ... }` is a scope; `extern "C" void f() { ... }` a function.
                "extern"
                    if self
                        .toks
                        .get(self.i + 1)
                        .is_some_and(|t| t.kind == TokKind::Str)
                        && self.t(self.i + 2) == "{" =>
                {
                    scope_kw = true
                }
                "(" | "[" => {
                    self.skip_group();
                    continue;
                }
                "{" => {
                    let prev = if self.i > first {
                        self.t(self.i - 1)
                    } else {
                        ""
                    };
                    let function = !scope_kw
                        && !enum_kw
                        && matches!(
                            prev,
                            ")" | "const" | "noexcept" | "override" | "final" | "mutable"
                        );
                    if function || (scope_kw && !enum_kw) {
                        self.i += 1;
                        let children = if function {
                            self.stmts()
                        } else {
                            self.decls(None)
                        };
                        let last = self.i.min(self.toks.len().saturating_sub(1));
                        if !self.at_end() {
                            self.i += 1; // `}`
                        }
                        // `struct S { ... } s;` — the declarators belong to the scope.
                        if !function && !self.at_end() && self.cur() != "}" {
                            let mut j = self.i;
                            while j < self.toks.len() && self.t(j) != ";" && self.t(j) != "{" {
                                j += 1;
                            }
                            if self.t(j) == ";" {
                                self.i = j + 1;
                                return Stmt {
                                    kind: StmtKind::Scope { function },
                                    first,
                                    last: j,
                                    children,
                                };
                            }
                        }
                        return Stmt {
                            kind: StmtKind::Scope { function },
                            first,
                            last,
                            children,
                        };
                    }
                    self.skip_group();
                    continue;
                }
                "}" => {
                    return Stmt {
                        kind: StmtKind::Label,
                        first,
                        last: self.i.saturating_sub(1).max(first),
                        children: Vec::new(),
                    }
                }
                _ => {}
            }
            // `public:` and friends inside a class.
            if matches!(t.as_str(), "public" | "private" | "protected") && self.t(self.i + 1) == ":"
            {
                self.i += 2;
                return Stmt {
                    kind: StmtKind::Label,
                    first,
                    last: self.i - 1,
                    children: Vec::new(),
                };
            }
            self.i += 1;
        }
    }

    /// Statements until `}` (not consumed) or the end.
    fn stmts(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        while !self.at_end() && self.cur() != "}" {
            let before = self.i;
            out.push(self.stmt());
            if self.i == before {
                self.i += 1;
            }
        }
        out
    }

    /// `( ... )` at the current token: the indices of both parentheses.
    fn paren(&mut self) -> (usize, usize) {
        if self.cur() != "(" {
            return (self.i, self.i.saturating_sub(1));
        }
        let open = self.i;
        let close = self.skip_group();
        (open, close)
    }

    fn stmt(&mut self) -> Stmt {
        let first = self.i;
        let t = self.cur().to_string();
        match t.as_str() {
            "{" => {
                self.i += 1;
                let children = self.stmts();
                let last = self.i.min(self.toks.len().saturating_sub(1));
                if !self.at_end() {
                    self.i += 1;
                }
                Stmt {
                    kind: StmtKind::Block,
                    first,
                    last,
                    children,
                }
            }
            "if" => {
                self.i += 1;
                if self.cur() == "constexpr" {
                    self.i += 1;
                }
                let cond = self.paren();
                let then = self.stmt();
                let mut last = then.last;
                let mut children = vec![then];
                let mut else_kw = None;
                if self.cur() == "else" {
                    else_kw = Some(self.i);
                    self.i += 1;
                    let other = self.stmt();
                    last = other.last;
                    children.push(other);
                }
                Stmt {
                    kind: StmtKind::If { cond, else_kw },
                    first,
                    last,
                    children,
                }
            }
            "for" | "while" | "switch" => {
                self.i += 1;
                let cond = self.paren();
                let body = self.stmt();
                Stmt {
                    kind: StmtKind::Loop { cond },
                    first,
                    last: body.last,
                    children: vec![body],
                }
            }
            "do" => {
                self.i += 1;
                let body = self.stmt();
                let mut cond = (self.i, self.i);
                if self.cur() == "while" {
                    self.i += 1;
                    cond = self.paren();
                }
                let mut last = cond.1;
                if self.cur() == ";" {
                    last = self.i;
                    self.i += 1;
                }
                Stmt {
                    kind: StmtKind::DoWhile { cond },
                    first,
                    last,
                    children: vec![body],
                }
            }
            "case" | "default" => {
                while !self.at_end() && self.cur() != ":" {
                    self.i += 1;
                }
                let last = self.i.min(self.toks.len().saturating_sub(1));
                self.i += 1;
                Stmt {
                    kind: StmtKind::Label,
                    first,
                    last,
                    children: Vec::new(),
                }
            }
            _ => {
                // `name:` (not `::`) is a label.
                if self
                    .toks
                    .get(self.i)
                    .is_some_and(|t| t.kind == TokKind::Ident)
                    && self.t(self.i + 1) == ":"
                {
                    self.i += 2;
                    return Stmt {
                        kind: StmtKind::Label,
                        first,
                        last: self.i - 1,
                        children: Vec::new(),
                    };
                }
                // A simple statement: to the `;` outside any group. Braces inside it
                // (initializers, lambda bodies, local class bodies) are skipped whole.
                while !self.at_end() {
                    match self.cur() {
                        ";" => {
                            let last = self.i;
                            self.i += 1;
                            return Stmt {
                                kind: StmtKind::Simple,
                                first,
                                last,
                                children: Vec::new(),
                            };
                        }
                        "(" | "[" | "{" => {
                            self.skip_group();
                        }
                        "}" => break,
                        _ => self.i += 1,
                    }
                }
                Stmt {
                    kind: StmtKind::Simple,
                    first,
                    last: self.i.saturating_sub(1).max(first),
                    children: Vec::new(),
                }
            }
        }
    }
}

/// A text edit: replace `range` of a file's text by `text`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TextEdit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Applies non-overlapping edits (in any order) to `text`. Edits at the same position are
/// applied in the order given.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> Option<String> {
    let mut sorted: Vec<(usize, &TextEdit)> = edits.iter().enumerate().collect();
    sorted.sort_by_key(|(k, e)| (e.start, e.end, *k));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (_, e) in sorted {
        if e.start < at || e.end < e.start || e.end > text.len() {
            return None;
        }
        out.push_str(text.get(at..e.start)?);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Where a new statement goes relative to an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

impl SourceFile {
    /// Whether the statement at `path` is the unbraced body of a control statement (the
    /// `then`/`else` of an `if`, the body of a loop or `do`).
    pub fn is_unbraced_body(&self, path: &[usize]) -> bool {
        let Some(s) = self.get(path) else {
            return false;
        };
        if s.kind == StmtKind::Block {
            return false;
        }
        matches!(
            self.parent(path).map(|p| &p.kind),
            Some(StmtKind::If { .. } | StmtKind::Loop { .. } | StmtKind::DoWhile { .. })
        )
    }

    /// The loop (`for`/`while`, not `do`) whose body ends with the statement at `path`: the
    /// statement is the loop's unbraced body, or the last statement of its braced body.
    pub fn loop_ended_by(&self, path: &[usize]) -> Option<Path> {
        let parent = path.get(..path.len().checked_sub(1)?)?;
        let is_loop = |p: &[usize]| {
            matches!(
                self.get(p).map(|s| &s.kind),
                Some(StmtKind::Loop { cond }) if self.tok(cond.0.saturating_sub(1)) != "switch"
            )
        };
        if is_loop(parent) {
            return Some(parent.to_vec());
        }
        let block = self.get(parent)?;
        let last = block.children.len().checked_sub(1)?;
        if block.kind != StmtKind::Block || path.last() != Some(&last) {
            return None;
        }
        let grand = parent.get(..parent.len().checked_sub(1)?)?;
        is_loop(grand).then(|| grand.to_vec())
    }

    /// Edits that insert statement `new` (e.g. `__threadfence();`) before or after the
    /// statement at `path`, in the same block. An unbraced body of a control statement
    /// gets braces around it and the new statement, so that both stay under the control
    /// statement.
    pub fn insert_stmt(&self, path: &[usize], side: Side, new: &str) -> Option<Vec<TextEdit>> {
        let s = self.get(path)?;
        let a = self.tokens.get(s.first)?.span.start;
        let b = self.tokens.get(s.last)?.span.end;
        if self.is_unbraced_body(path) {
            return Some(self.wrap_body(path, side, new));
        }
        let indent = self.indent_at(a).to_string();
        Some(match side {
            Side::After => {
                if self.line_ends_after(b) {
                    // On a new line after the statement's last line.
                    let eol = self.end_of_line(b);
                    let nl = if eol == self.text.len() && !self.text.ends_with('\n') {
                        "\n"
                    } else {
                        ""
                    };
                    vec![TextEdit {
                        start: eol,
                        end: eol,
                        text: format!("{nl}{indent}{new}\n"),
                    }]
                } else {
                    vec![TextEdit {
                        start: b,
                        end: b,
                        text: format!(" {new}"),
                    }]
                }
            }
            Side::Before => {
                if self.line_starts_before(a) {
                    let sol = self.start_of_line(a);
                    vec![TextEdit {
                        start: sol,
                        end: sol,
                        text: format!("{indent}{new}\n"),
                    }]
                } else {
                    vec![TextEdit {
                        start: a,
                        end: a,
                        text: format!("{new} "),
                    }]
                }
            }
        })
    }

    /// `{ body new }` (or `{ new body }`) around an unbraced body.
    fn wrap_body(&self, path: &[usize], side: Side, new: &str) -> Vec<TextEdit> {
        let Some(s) = self.get(path) else {
            return Vec::new();
        };
        let (Some(ft), Some(lt)) = (self.tokens.get(s.first), self.tokens.get(s.last)) else {
            return Vec::new();
        };
        let (a, b) = (ft.span.start, lt.span.end);
        // The token that ends the control header (`)` of the condition, `else`, `do`).
        let header_end = self.tokens[..s.first]
            .last()
            .map(|t| t.span.end)
            .unwrap_or(a);
        let own_lines = self.line_starts_before(a) && self.line_ends_after(b);
        if !own_lines {
            let (open, close) = match side {
                Side::After => ("{ ".to_string(), format!(" {new} }}")),
                Side::Before => (format!("{{ {new} "), " }".to_string()),
            };
            return vec![
                TextEdit {
                    start: a,
                    end: a,
                    text: open,
                },
                TextEdit {
                    start: b,
                    end: b,
                    text: close,
                },
            ];
        }
        let body_indent = self.indent_at(a).to_string();
        let header_indent = self.indent_at(header_end.saturating_sub(1)).to_string();
        let mut edits = vec![TextEdit {
            start: header_end,
            end: header_end,
            text: " {".into(),
        }];
        // The `then` of an `if … else` whose `else` starts a line: close the brace there
        // (`} else`), as one would write it.
        let else_at = match self.parent(path).map(|p| &p.kind) {
            Some(StmtKind::If {
                else_kw: Some(k), ..
            }) if path.last() == Some(&0) => self
                .tokens
                .get(*k)
                .map(|t| t.span.start)
                .filter(|at| self.line_starts_before(*at)),
            _ => None,
        };
        match side {
            Side::After => {
                let eol = self.end_of_line(b);
                let close = if else_at.is_some() {
                    String::new()
                } else {
                    format!("{header_indent}}}\n")
                };
                edits.push(TextEdit {
                    start: eol,
                    end: eol,
                    text: format!("{body_indent}{new}\n{close}"),
                });
                if let Some(at) = else_at {
                    edits.push(TextEdit {
                        start: at,
                        end: at,
                        text: "} ".into(),
                    });
                }
            }
            Side::Before => {
                let sol = self.start_of_line(a);
                edits.push(TextEdit {
                    start: sol,
                    end: sol,
                    text: format!("{body_indent}{new}\n"),
                });
                match else_at {
                    Some(at) => edits.push(TextEdit {
                        start: at,
                        end: at,
                        text: "} ".into(),
                    }),
                    None => {
                        let eol = self.end_of_line(b);
                        edits.push(TextEdit {
                            start: eol,
                            end: eol,
                            text: format!("{header_indent}}}\n"),
                        });
                    }
                }
            }
        }
        edits
    }

    /// Edits that put `new` first in the `k`-th branch of the control statement at `path`
    /// (the `then` or `else` of an `if`, the body of a loop).
    pub fn insert_at_branch_start(
        &self,
        path: &[usize],
        k: usize,
        new: &str,
    ) -> Option<Vec<TextEdit>> {
        let ctl = self.get(path)?;
        let body = ctl.children.get(k)?;
        let mut bp = path.to_vec();
        bp.push(k);
        if body.kind != StmtKind::Block {
            return self.insert_stmt(&bp, Side::Before, new);
        }
        let open = self.tokens.get(body.first)?.span.end;
        if let Some(first) = body.children.first() {
            bp.push(0);
            let _ = first;
            return self.insert_stmt(&bp, Side::Before, new);
        }
        let indent = format!("{}    ", self.indent_at(open.saturating_sub(1)));
        Some(if self.line_ends_after(open) {
            let eol = self.end_of_line(open);
            vec![TextEdit {
                start: eol,
                end: eol,
                text: format!("{indent}{new}\n"),
            }]
        } else {
            vec![TextEdit {
                start: open,
                end: open,
                text: format!(" {new}"),
            }]
        })
    }

    /// Edits that delete the statement at `path`: its whole line(s) when it is alone on
    /// them, otherwise its text and the space after it. An unbraced body of a control
    /// statement becomes `{}` so the control statement keeps a body.
    pub fn remove_stmt(&self, path: &[usize]) -> Option<Vec<TextEdit>> {
        let s = self.get(path)?;
        let a = self.tokens.get(s.first)?.span.start;
        let b = self.tokens.get(s.last)?.span.end;
        if self.is_unbraced_body(path) {
            return Some(vec![TextEdit {
                start: a,
                end: b,
                text: "{}".into(),
            }]);
        }
        if self.line_starts_before(a) && self.line_ends_after(b) {
            let rest_is_blank = {
                let eol = self.end_of_line(b);
                self.text[b..eol].trim().is_empty()
            };
            if rest_is_blank {
                return Some(vec![TextEdit {
                    start: self.start_of_line(a),
                    end: self.end_of_line(b),
                    text: String::new(),
                }]);
            }
        }
        let mut end = b;
        while self.text[end..].starts_with(' ') {
            end += 1;
        }
        Some(vec![TextEdit {
            start: a,
            end,
            text: String::new(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(f: &SourceFile, line: u32) -> Vec<String> {
        f.stmts_on_line(line)
            .iter()
            .map(|p| {
                let s = f.get(p).unwrap();
                format!("{}:{}", kind_name(&s.kind), f.stmt_text(s))
            })
            .collect()
    }

    fn kind_name(k: &StmtKind) -> &'static str {
        match k {
            StmtKind::Simple => "simple",
            StmtKind::Block => "block",
            StmtKind::If { .. } => "if",
            StmtKind::Loop { .. } => "loop",
            StmtKind::DoWhile { .. } => "do",
            StmtKind::Label => "label",
            StmtKind::Scope { .. } => "scope",
        }
    }

    const K: &str = r#"#include "h.cuh"
#define F(x) do { \
  x; } while (0)
struct Q { int *items; __device__ void push(int v) { items[0] = v; } };
extern "C" __global__ void k(int *a, int *f, int *top, int *next) {
    int i = threadIdx.x; // comment ; {
    a[i] = 5; f[i] = 1;
    int me = i, old;
    do { old = *top; next[me] = old; } while (atomicCAS(top, old, me) != old);
    if (i == 0)
        a[i + 1] = 7;
    else
        a[i] = 2;
    int t[2] = {1, 2};
    for (int j = 0; j < 4; j++) { a[j] = j; }
    while (atomicAdd(f, 0) == 0) {}
}
"#;

    /// The loop each simple statement on `line` ends (its text), in source order.
    fn loops_ended(f: &SourceFile, line: u32) -> Vec<Option<String>> {
        f.stmts_on_line(line)
            .iter()
            .filter(|p| f.get(p).is_some_and(|s| s.kind == StmtKind::Simple))
            .map(|p| {
                f.loop_ended_by(p)
                    .and_then(|l| f.get(&l).map(|s| f.stmt_text(s).to_string()))
            })
            .collect()
    }

    #[test]
    fn the_loop_a_statement_ends() {
        let src = r#"__global__ void k(int *a, int n) {
    for (int j = 0; j < 4; j++)
        a[j] = j;
    for (int j = 0; j < 4; j++) { a[j] = 1; a[j + 4] = 2; }
    while (n) { n--; }
    do { a[0] = 3; } while (a[1]);
    switch (n) { case 0: a[2] = 4; }
    if (n) a[3] = 5;
}
"#;
        let f = SourceFile::parse(src);
        let unbraced = "for (int j = 0; j < 4; j++)\n        a[j] = j;";
        assert_eq!(loops_ended(&f, 3), vec![Some(unbraced.to_string())]);
        // Only the last statement of a braced body ends the loop.
        assert_eq!(
            loops_ended(&f, 4),
            vec![
                None,
                Some("for (int j = 0; j < 4; j++) { a[j] = 1; a[j + 4] = 2; }".to_string())
            ]
        );
        assert_eq!(
            loops_ended(&f, 5),
            vec![Some("while (n) { n--; }".to_string())]
        );
        // Not a `do` (its condition follows the body), a `switch` or an `if`.
        assert_eq!(loops_ended(&f, 6), vec![None]);
        assert_eq!(loops_ended(&f, 7), vec![None]);
        assert_eq!(loops_ended(&f, 8), vec![None]);
    }

    #[test]
    fn statements_on_a_line() {
        let f = SourceFile::parse(K);
        assert_eq!(
            kinds(&f, 7),
            vec!["simple:a[i] = 5;", "simple:f[i] = 1;"],
            "{:#?}",
            f.items
        );
        assert_eq!(
            kinds(&f, 9),
            vec![
                "do:do { old = *top; next[me] = old; } while (atomicCAS(top, old, me) != old);",
                "block:{ old = *top; next[me] = old; }",
                "simple:old = *top;",
                "simple:next[me] = old;"
            ]
        );
        assert_eq!(kinds(&f, 4), vec!["simple:items[0] = v;"]);
        assert_eq!(kinds(&f, 14), vec!["simple:int t[2] = {1, 2};"]);
    }

    #[test]
    fn insert_inline_on_a_shared_line() {
        let f = SourceFile::parse(K);
        let paths = f.stmts_on_line(7);
        let e = f
            .insert_stmt(&paths[0], Side::After, "__threadfence();")
            .unwrap();
        let out = apply_edits(K, &e).unwrap();
        assert!(
            out.contains("    a[i] = 5; __threadfence(); f[i] = 1;\n"),
            "{out}"
        );
        let e = f
            .insert_stmt(&paths[1], Side::After, "__threadfence();")
            .unwrap();
        let out = apply_edits(K, &e).unwrap();
        assert!(
            out.contains("    a[i] = 5; f[i] = 1;\n    __threadfence();\n"),
            "{out}"
        );
        let p9 = f.stmts_on_line(9);
        let e = f
            .insert_stmt(&p9[3], Side::After, "__threadfence();")
            .unwrap();
        let out = apply_edits(K, &e).unwrap();
        assert!(
            out.contains("do { old = *top; next[me] = old; __threadfence(); } while"),
            "{out}"
        );
    }

    #[test]
    fn unbraced_if_gets_braces() {
        let f = SourceFile::parse(K);
        let p = f.stmts_on_line(11);
        assert_eq!(p.len(), 1);
        assert!(f.is_unbraced_body(&p[0]));
        let e = f
            .insert_stmt(&p[0], Side::After, "__threadfence();")
            .unwrap();
        let out = apply_edits(K, &e).unwrap();
        assert!(
            out.contains(
                "    if (i == 0) {\n        a[i + 1] = 7;\n        __threadfence();\n    } else\n"
            ),
            "{out}"
        );
        let e = f.remove_stmt(&p[0]).unwrap();
        let out = apply_edits(K, &e).unwrap();
        assert!(out.contains("if (i == 0)\n        {}\n"), "{out}");
    }

    #[test]
    fn remove_a_lone_statement_removes_its_line() {
        let src = "void f() {\n    a = 1;\n    __threadfence();\n    b = 2; __threadfence_block(); c = 3;\n}\n";
        let f = SourceFile::parse(src);
        let p = f.stmts_on_line(3);
        let out = apply_edits(src, &f.remove_stmt(&p[0]).unwrap()).unwrap();
        assert_eq!(
            out,
            "void f() {\n    a = 1;\n    b = 2; __threadfence_block(); c = 3;\n}\n"
        );
        let p = f.stmts_on_line(4);
        let out = apply_edits(src, &f.remove_stmt(&p[1]).unwrap()).unwrap();
        assert!(out.contains("    b = 2; c = 3;\n"), "{out}");
    }

    #[test]
    fn branch_start_and_loop_exit() {
        let src = "__device__ void g(int *m, int *c) {\n    if (atomicCAS(m, 0, 1) == 0) {\n        *c += 1;\n    }\n    while (atomicAdd(m, 0) != 0) {}\n    x = 1;\n}\n";
        let f = SourceFile::parse(src);
        let p = f.stmts_on_line(2);
        let e = f
            .insert_at_branch_start(&p[0], 0, "__threadfence();")
            .unwrap();
        let out = apply_edits(src, &e).unwrap();
        assert!(
            out.contains("== 0) {\n        __threadfence();\n        *c += 1;"),
            "{out}"
        );
        let p = f.stmts_on_line(5);
        let e = f
            .insert_stmt(&p[0], Side::After, "__threadfence();")
            .unwrap();
        let out = apply_edits(src, &e).unwrap();
        assert!(
            out.contains("!= 0) {}\n    __threadfence();\n    x = 1;"),
            "{out}"
        );
    }

    /// Every statement of every kernel in the repository, and some malformed text: parsing
    /// and every edit must succeed without panicking, and edits must apply.
    #[test]
    fn edits_on_every_statement_of_the_corpus_apply() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut texts: Vec<String> = Vec::new();
        for dir in ["campaigns", "campaigns/minimizer", "kernels"] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "cu" || x == "cuh") {
                    texts.push(std::fs::read_to_string(p).unwrap());
                }
            }
        }
        assert!(texts.len() > 20);
        for bad in [
            "}}}{{{",
            "if (",
            "do x; while",
            "a = ;",
            "\"unterminated",
            "#define X \\",
            "é = 1; ü;",
        ] {
            texts.push(bad.to_string());
        }
        let mut edits = 0;
        for t in &texts {
            let f = SourceFile::parse(t);
            let lines = t.lines().count() as u32;
            for line in 1..=lines + 1 {
                for p in f.stmts_on_line(line) {
                    for e in [
                        f.insert_stmt(&p, Side::After, "__threadfence();"),
                        f.insert_stmt(&p, Side::Before, "__threadfence();"),
                        f.remove_stmt(&p),
                        f.insert_at_branch_start(&p, 0, "__threadfence();"),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        assert!(apply_edits(t, &e).is_some(), "{e:?}");
                        edits += 1;
                    }
                }
            }
        }
        assert!(edits > 500, "{edits}");
    }

    #[test]
    fn lexer_skips_comments_strings_and_directives() {
        let t = lex("a /* ; */ b // ;\n#define X ;\\\n ;\n\"s;\" 'c' 1.5e-3f ::x");
        assert_eq!(t.len(), 7);
        assert_eq!(t[2].kind, TokKind::Str);
        assert_eq!(t[2].line, 4);
        assert_eq!(t[4].kind, TokKind::Number);
        assert_eq!(t[5].span.len(), 2);
    }
}
