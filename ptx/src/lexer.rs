//! PTX lexer (PTX ISA §4: syntax). Produces tokens with 1-based line/column positions.
//! Identifiers follow §4.4 (`[a-zA-Z][a-zA-Z0-9_$]*` or `[_$%][a-zA-Z0-9_$]*`); a dot
//! followed by letters is one token (`.reg`, `.u32`, `.L2::cache_hint`), which is how
//! directives and instruction modifiers are told apart from names.

use crate::ast::Pos;
use crate::error::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A name: opcode, register, variable, label, function (`%r1`, `$L__BB0_1`, `ld`).
    Ident(String),
    /// `.name` — a directive or modifier, stored without the dot.
    Dot(String),
    /// An integer literal (value as written, sign applied later by the parser).
    Int(u64),
    /// `0fXXXXXXXX` single-precision bit pattern.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` double-precision bit pattern, or a decimal float literal.
    F64(u64),
    Str(String),
    Punct(char),
    Eof,
}

impl Tok {
    pub fn text(&self) -> String {
        match self {
            Tok::Ident(s) => s.clone(),
            Tok::Dot(s) => format!(".{s}"),
            Tok::Int(v) => v.to_string(),
            Tok::F32(b) => format!("0f{b:08X}"),
            Tok::F64(b) => format!("0d{b:016X}"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(c) => c.to_string(),
            Tok::Eof => String::new(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
    /// Byte offset of the token's first character (used to slice raw text).
    pub offset: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident_cont(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

pub fn lex(file: &str, src: &str) -> Result<Vec<Token>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4);
    let mut i = 0usize;
    let mut line = 1u32;
    let mut line_start = 0usize;
    let err = |pos: Pos, msg: &str, found: &str| ParseError::new(file, pos, msg, found);
    while i < b.len() {
        let c = b[i];
        let pos = Pos {
            line,
            col: (i - line_start + 1) as u32,
        };
        match c {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            b' ' | b'\t' | b'\r' | 0x0c => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(err(pos, "unterminated block comment", "/*"));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\n' {
                        return Err(err(pos, "unterminated string", &src[start - 1..i]));
                    }
                    // An escape skips the next byte, but never a newline: a string
                    // cannot span lines (and skipping it would throw line counts off).
                    if b[i] == b'\\' && b.get(i + 1) != Some(&b'\n') {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err(err(pos, "unterminated string", &src[start - 1..]));
                }
                let s = src[start..i].to_string();
                i += 1;
                out.push(Token {
                    tok: Tok::Str(s),
                    pos,
                    offset: start - 1,
                });
            }
            // (Also `.1d`/`.2d`/`.3d`, texture and surface geometries, never a number.)
            b'.' if b
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                || (matches!(b.get(i + 1), Some(b'1'..=b'3')) && b.get(i + 2) == Some(&b'd')) =>
            {
                let start = i + 1;
                i += 1;
                // `::` is part of a modifier (`.shared::cta`, `.L2::cache_hint`).
                while i < b.len() {
                    if is_ident_cont(b[i]) {
                        i += 1;
                    } else if b[i] == b':'
                        && b.get(i + 1) == Some(&b':')
                        && b.get(i + 2).is_some_and(|c| is_ident_cont(*c))
                    {
                        i += 2;
                    } else {
                        break;
                    }
                }
                out.push(Token {
                    tok: Tok::Dot(src[start..i].to_string()),
                    pos,
                    offset: start - 1,
                });
            }
            c if c.is_ascii_digit()
                || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                let start = i;
                let (tok, len) = lex_number(&src[i..]).ok_or_else(|| {
                    let mut j = i;
                    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.') {
                        j += 1;
                    }
                    err(pos, "malformed number", &src[i..j])
                })?;
                i += len;
                out.push(Token {
                    tok,
                    pos,
                    offset: start,
                });
            }
            c if is_ident_start(c) => {
                let start = i;
                i += 1;
                while i < b.len() && is_ident_cont(b[i]) {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Ident(src[start..i].to_string()),
                    pos,
                    offset: start,
                });
            }
            b',' | b';' | b':' | b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'<' | b'>' | b'+'
            | b'-' | b'!' | b'@' | b'|' | b'=' | b'*' | b'/' | b'&' | b'~' | b'^' | b'?' => {
                out.push(Token {
                    tok: Tok::Punct(c as char),
                    pos,
                    offset: i,
                });
                i += 1;
            }
            _ => {
                // Report the whole (possibly multi-byte) character.
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(err(pos, "unexpected character", &ch.to_string()));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: Pos {
            line,
            col: (b.len() - line_start + 1) as u32,
        },
        offset: b.len(),
    });
    Ok(out)
}

/// Lexes one numeric literal at the start of `s`: decimal, hex (`0x`), octal (`0`),
/// binary (`0b`), each with an optional `U` suffix; `0f`/`0d` float bit patterns; decimal
/// floating literals (`1.5`, `2e-3`). Returns the token and its length in bytes.
fn lex_number(s: &str) -> Option<(Tok, usize)> {
    let b = s.as_bytes();
    let take = |from: usize, ok: fn(u8) -> bool| {
        let mut j = from;
        while j < b.len() && ok(b[j]) {
            j += 1;
        }
        j
    };
    if b.len() >= 2
        && b[0] == b'0'
        && (b[1] == b'f' || b[1] == b'F' || b[1] == b'd' || b[1] == b'D')
    {
        let end = take(2, |c| c.is_ascii_hexdigit());
        let digits = &s[2..end];
        let single = b[1] == b'f' || b[1] == b'F';
        if (single && digits.len() != 8) || (!single && digits.len() != 16) {
            return None;
        }
        if end < b.len() && is_ident_cont(b[end]) {
            return None;
        }
        let v = u64::from_str_radix(digits, 16).ok()?;
        return Some((
            if single {
                Tok::F32(v as u32)
            } else {
                Tok::F64(v)
            },
            end,
        ));
    }
    if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        let end = take(2, |c| c.is_ascii_hexdigit());
        let v = u64::from_str_radix(&s[2..end], 16).ok()?;
        return finish_int(b, v, end);
    }
    if b.len() >= 2 && b[0] == b'0' && (b[1] == b'b' || b[1] == b'B') {
        let end = take(2, |c| c == b'0' || c == b'1');
        let v = u64::from_str_radix(&s[2..end], 2).ok()?;
        return finish_int(b, v, end);
    }
    let int_end = take(0, |c| c.is_ascii_digit());
    let is_float = b.get(int_end) == Some(&b'.')
        || b.get(int_end) == Some(&b'e')
        || b.get(int_end) == Some(&b'E');
    if is_float {
        let mut j = int_end;
        if b.get(j) == Some(&b'.') {
            j = take(j + 1, |c| c.is_ascii_digit());
        }
        if b.get(j) == Some(&b'e') || b.get(j) == Some(&b'E') {
            let mut k = j + 1;
            if b.get(k) == Some(&b'+') || b.get(k) == Some(&b'-') {
                k += 1;
            }
            let e_end = take(k, |c| c.is_ascii_digit());
            if e_end == k {
                return None;
            }
            j = e_end;
        }
        if j < b.len() && is_ident_cont(b[j]) {
            return None;
        }
        let v: f64 = s[..j].parse().ok()?;
        return Some((Tok::F64(v.to_bits()), j));
    }
    let v = if int_end > 1 && b[0] == b'0' {
        u64::from_str_radix(&s[1..int_end], 8).ok()?
    } else {
        s[..int_end].parse::<u64>().ok()?
    };
    finish_int(b, v, int_end)
}

fn finish_int(b: &[u8], v: u64, mut end: usize) -> Option<(Tok, usize)> {
    if end < b.len() && (b[end] == b'U' || b[end] == b'u') {
        end += 1;
    }
    if end < b.len() && is_ident_cont(b[end]) {
        return None;
    }
    Some((Tok::Int(v), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex("t.ptx", s)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("0x1F 017 0b101 42U 0f3F800000 0d3FF0000000000000 1.5")[..7],
            [
                Tok::Int(31),
                Tok::Int(15),
                Tok::Int(5),
                Tok::Int(42),
                Tok::F32(0x3F80_0000),
                Tok::F64(0x3FF0_0000_0000_0000),
                Tok::F64(1.5f64.to_bits()),
            ]
        );
    }

    #[test]
    fn modifiers_and_idents() {
        assert_eq!(
            toks("ld.global.L2::cache_hint.u32 %r1")[..5],
            [
                Tok::Ident("ld".into()),
                Tok::Dot("global".into()),
                Tok::Dot("L2::cache_hint".into()),
                Tok::Dot("u32".into()),
                Tok::Ident("%r1".into()),
            ]
        );
    }

    #[test]
    fn errors_have_positions() {
        let e = lex("t.ptx", "add\n  \u{7f}").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        let e = lex("t.ptx", "/* never").unwrap_err();
        assert!(e.message.contains("comment"));
        assert!(lex("t.ptx", "0f3F80").is_err());
        assert!(lex("t.ptx", "99999999999999999999999").is_err());
    }
}
