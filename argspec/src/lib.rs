//! Host-side specifications of kernel arguments: typed buffers with their initial contents,
//! and scalars. One grammar serves the corpus headers (`kernels/README.md`, `// args:`),
//! the tests and `fencehound run-kernel --arg`, so a kernel can be run the same way
//! everywhere.
//!
//! It is its own crate because it is a host-side (campaign and CLI) concern, not part of
//! executing PTX: the fuzzer's campaigns and `run-kernel` use it, and so do the vgpu and
//! racecheck tests, which could not depend on the fuzzer (it depends on both of them).
//!
//! ```text
//! args     := arg ("," arg)*           commas inside parentheses do not separate
//! arg      := buffer | scalar
//! buffer   := NAME ":" TYPE "[" LEN "]" [INIT]       (INIT defaults to `zero`)
//! scalar   := NAME ":" TYPE "=" VALUE
//! TYPE     := u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64
//! INIT     := zero | fill(V) | iota | iota(START[,STEP]) | iota_from(START)
//!           | values(V, V, ...) | random(SEED[,LO,HI]) | special | file(PATH)
//! ```
//!
//! Values: integer literals (decimal, `0x` hex, `0b` binary, optional sign) for every type;
//! for float types also decimal/scientific literals, `nan`, `inf`, `-inf`, and a hex
//! literal is the raw bit pattern (`f32=0x7fc00001` is a NaN with payload 1). An integer
//! value must fit the type's width as either a signed or an unsigned number (`u32=-1` is
//! `0xffffffff`; `u8=256` is an error).
//!
//! Initializers, for element `i` of a buffer of type `T`:
//!
//! | init | element `i` |
//! |---|---|
//! | `zero` | 0 |
//! | `fill(V)` | `V` |
//! | `iota` | `i` |
//! | `iota(S[,D])`, `iota_from(S)` | `S + i*D` (`D` = 1); integers wrap to the width of `T`, floats are computed in f64 and rounded to nearest-even in `T` |
//! | `values(a,b,...)` | the `i`-th value; the count must equal the length |
//! | `random(SEED)` | integers: the low bits of `bits(SEED, i)` (uniform over all patterns); floats: `[0,1)` from the top `p` bits, `(bits >> (64-p)) * 2^-p` with `p` the significand width of `T` (53, 24, 11, 8), so it is exact |
//! | `random(SEED,LO,HI)` | uniform in `[LO,HI)`: integers `LO + ((bits * (HI-LO)) >> 64)` (128-bit product; LO, HI integers); floats `LO + u*(HI-LO)` with `u` as for `random(SEED)` in f64, rounded to `T`, and if that rounds up to `HI` the next value of `T` below `HI` |
//! | `special` | floats only: `NaN, -NaN, +inf, -inf, +0, -0, 1e-40, -1e-40, MAX, -MIN_POSITIVE` of `T` (rounded to `T`), then `random(0)` for the rest |
//! | `file(PATH)` | raw little-endian elements of `T`; the file must hold exactly `LEN` elements |
//!
//! The random generator is counter-based, so element `i` does not depend on the length or
//! on any other element, and it is pinned here (and by tests) so results are reproducible
//! across machines and versions:
//!
//! ```text
//! mix(z)     = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
//! bits(s, i) = mix(mix(s) + (i + 1) * 0x9E3779B97F4A7C15)          (wrapping u64 arithmetic)
//! ```
//!
//! `mix` is SplitMix64's output function (Steele, Lea & Flood, OOPSLA'14).

use fencehound_numconv::cvt::{cvt_f64_to_bf16, cvt_f64_to_f16};
use fencehound_numconv::Rounding;
use fencehound_vgpu::{Arg, Device, DeviceError, Dim3};
use std::fmt;
use std::path::PathBuf;

/// The element type of a buffer or scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 12] = [
        ElemType::U8,
        ElemType::I8,
        ElemType::U16,
        ElemType::I16,
        ElemType::U32,
        ElemType::I32,
        ElemType::U64,
        ElemType::I64,
        ElemType::F16,
        ElemType::Bf16,
        ElemType::F32,
        ElemType::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::I8 => "i8",
            ElemType::U16 => "u16",
            ElemType::I16 => "i16",
            ElemType::U32 => "u32",
            ElemType::I32 => "i32",
            ElemType::U64 => "u64",
            ElemType::I64 => "i64",
            ElemType::F16 => "f16",
            ElemType::Bf16 => "bf16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub fn parse(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 | ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F16 | ElemType::Bf16 | ElemType::F32 | ElemType::F64
        )
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64
        )
    }

    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    /// Significand width (with the implicit bit) of a float type.
    fn precision(self) -> u32 {
        match self {
            ElemType::F16 => 11,
            ElemType::Bf16 => 8,
            ElemType::F32 => 24,
            _ => 53,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parsed literal, before it is given a type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    Int(i128),
    /// A hex literal: integers take its value, floats its bit pattern.
    Hex(u64),
    Float(f64),
}

/// How a buffer is initialised.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Zero,
    Fill(Literal),
    Iota {
        start: Literal,
        step: Literal,
    },
    Values(Vec<Literal>),
    Random {
        seed: u64,
        range: Option<(Literal, Literal)>,
    },
    Special,
    File(PathBuf),
}

/// `name:TYPE[LEN] INIT`
#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    pub name: String,
    pub ty: ElemType,
    pub len: usize,
    pub init: Init,
}

/// `name:TYPE=VALUE`
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarSpec {
    pub name: String,
    pub ty: ElemType,
    pub value: Literal,
}

/// One kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    Buffer(BufferSpec),
    Scalar(ScalarSpec),
}

impl ArgSpec {
    pub fn name(&self) -> &str {
        match self {
            ArgSpec::Buffer(b) => &b.name,
            ArgSpec::Scalar(s) => &s.name,
        }
    }
}

/// Largest buffer a spec may ask for (elements), so a typo cannot exhaust host memory.
pub const MAX_LEN: usize = 1 << 28;

/// A spec that cannot be parsed or realised. Each variant carries the offending text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("`{0}`: expected `NAME:TYPE[LEN] INIT` (a buffer) or `NAME:TYPE=VALUE` (a scalar)")]
    Syntax(String),
    #[error("`{0}` is not a valid name (letters, digits, `_`; not starting with a digit)")]
    BadName(String),
    #[error("unknown type `{0}` (types: u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)")]
    UnknownType(String),
    #[error("`{0}` is not a valid buffer length (1..={MAX_LEN})")]
    BadLength(String),
    #[error("unknown initializer `{0}` (zero, fill(V), iota, iota(S,D), iota_from(S), values(..), random(SEED[,LO,HI]), special, file(PATH))")]
    UnknownInit(String),
    #[error("`{init}`: {message}")]
    BadInit { init: String, message: String },
    #[error("`{text}` is not a valid {ty} value")]
    BadValue { text: String, ty: ElemType },
    #[error("unbalanced parentheses in `{0}`")]
    Unbalanced(String),
    #[error("argument name `{0}` is used twice")]
    DuplicateName(String),
    #[error("`{path}`: {message}")]
    File { path: String, message: String },
}

fn valid_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits at `sep` outside parentheses and brackets; errors on unbalanced ones.
fn split_top(s: &str, sep: char) -> Result<Vec<&str>, SpecError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(SpecError::Unbalanced(s.to_string()));
                }
            }
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(SpecError::Unbalanced(s.to_string()));
    }
    out.push(&s[start..]);
    Ok(out)
}

/// Parses a comma-separated argument list (a corpus `// args:` value). Names must be
/// distinct.
pub fn parse_args(s: &str) -> Result<Vec<ArgSpec>, SpecError> {
    let s = s.trim();
    if s.is_empty() || s == "none" {
        return Ok(Vec::new());
    }
    let mut out: Vec<ArgSpec> = Vec::new();
    for part in split_top(s, ',')? {
        let a = parse_arg(part)?;
        if out.iter().any(|b| b.name() == a.name()) {
            return Err(SpecError::DuplicateName(a.name().to_string()));
        }
        out.push(a);
    }
    Ok(out)
}

/// Parses one argument: `name:TYPE[LEN] INIT` or `name:TYPE=VALUE`.
pub fn parse_arg(s: &str) -> Result<ArgSpec, SpecError> {
    let s = s.trim();
    let syntax = || SpecError::Syntax(s.to_string());
    split_top(s, ',')?; // balance check with a precise error
    let (name, rest) = s.split_once(':').ok_or_else(syntax)?;
    let name = name.trim();
    if !valid_name(name) {
        return Err(SpecError::BadName(name.to_string()));
    }
    let rest = rest.trim_start();
    let ty_end = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let ty_text = &rest[..ty_end];
    if ty_text.is_empty() {
        return Err(syntax());
    }
    let ty = ElemType::parse(ty_text).ok_or_else(|| SpecError::UnknownType(ty_text.into()))?;
    let rest = rest[ty_end..].trim_start();
    if let Some(v) = rest.strip_prefix('=') {
        let value = parse_literal(v.trim(), ty)?;
        return Ok(ArgSpec::Scalar(ScalarSpec {
            name: name.into(),
            ty,
            value,
        }));
    }
    let rest = rest.strip_prefix('[').ok_or_else(syntax)?;
    let (len_text, init_text) = rest.split_once(']').ok_or_else(syntax)?;
    let len_text = len_text.trim();
    let len = parse_int(len_text)
        .and_then(|v| usize::try_from(v).ok())
        .filter(|n| (1..=MAX_LEN).contains(n))
        .ok_or_else(|| SpecError::BadLength(len_text.into()))?;
    let init = parse_init(init_text.trim(), ty, len)?;
    Ok(ArgSpec::Buffer(BufferSpec {
        name: name.into(),
        ty,
        len,
        init,
    }))
}

fn parse_init(s: &str, ty: ElemType, len: usize) -> Result<Init, SpecError> {
    if s.is_empty() || s == "zero" {
        return Ok(Init::Zero);
    }
    if s == "iota" {
        return Ok(Init::Iota {
            start: Literal::Int(0),
            step: Literal::Int(1),
        });
    }
    if s == "special" {
        if !ty.is_float() {
            return Err(SpecError::BadInit {
                init: s.into(),
                message: format!("`special` is for float types, not {ty}"),
            });
        }
        return Ok(Init::Special);
    }
    let (head, args) = match s.split_once('(') {
        Some((h, a)) if a.ends_with(')') => (h.trim(), &a[..a.len() - 1]),
        _ => return Err(SpecError::UnknownInit(s.into())),
    };
    let bad = |message: String| SpecError::BadInit {
        init: s.into(),
        message,
    };
    if head == "file" {
        let p = args.trim();
        if p.is_empty() {
            return Err(bad("no path given".into()));
        }
        return Ok(Init::File(PathBuf::from(p)));
    }
    let parts: Vec<&str> = if args.trim().is_empty() {
        Vec::new()
    } else {
        args.split(',').map(str::trim).collect()
    };
    let count = |n: &[usize]| -> Result<(), SpecError> {
        if n.contains(&parts.len()) {
            Ok(())
        } else {
            let want: Vec<String> = n.iter().map(|x| x.to_string()).collect();
            Err(bad(format!(
                "takes {} value(s), {} given",
                want.join(" or "),
                parts.len()
            )))
        }
    };
    let lit = |t: &str| parse_literal(t, ty);
    match head {
        "fill" => {
            count(&[1])?;
            Ok(Init::Fill(lit(parts[0])?))
        }
        "iota" => {
            count(&[1, 2])?;
            let start = lit(parts[0])?;
            let step = match parts.get(1) {
                Some(p) => lit(p)?,
                None => Literal::Int(1),
            };
            Ok(Init::Iota { start, step })
        }
        "iota_from" => {
            count(&[1])?;
            Ok(Init::Iota {
                start: lit(parts[0])?,
                step: Literal::Int(1),
            })
        }
        "values" => {
            if parts.len() != len {
                return Err(bad(format!(
                    "gives {} value(s) for a buffer of {len}",
                    parts.len()
                )));
            }
            Ok(Init::Values(
                parts.iter().map(|p| lit(p)).collect::<Result<_, _>>()?,
            ))
        }
        "random" => {
            count(&[1, 3])?;
            let seed = parse_int(parts[0])
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| bad(format!("`{}` is not a seed (0..2^64)", parts[0])))?;
            let range = if parts.len() == 3 {
                let (lo, hi) = (lit(parts[1])?, lit(parts[2])?);
                if ty.is_float() {
                    let (l, h) = (lit_f64(lo, ty), lit_f64(hi, ty));
                    if l.partial_cmp(&h) != Some(std::cmp::Ordering::Less)
                        || !l.is_finite()
                        || !h.is_finite()
                    {
                        return Err(bad(format!("needs finite LO < HI, got [{l}, {h})")));
                    }
                } else {
                    match (lo, hi) {
                        (Literal::Int(l), Literal::Int(h)) if l < h => {}
                        (Literal::Int(_), Literal::Int(_)) => {
                            return Err(bad("needs LO < HI".into()))
                        }
                        _ => return Err(bad(format!("LO and HI must be integers for {ty}"))),
                    }
                }
                Some((lo, hi))
            } else {
                None
            };
            Ok(Init::Random { seed, range })
        }
        _ => Err(SpecError::UnknownInit(s.into())),
    }
}

/// Parses an integer literal: optional sign, decimal, `0x`, `0b` or `0o`.
fn parse_int(s: &str) -> Option<i128> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let body = body.replace('_', "");
    let v = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if let Some(o) = body.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()?
    } else if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) {
        body.parse::<i128>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// Parses a value for type `ty`, checking that it fits.
pub fn parse_literal(s: &str, ty: ElemType) -> Result<Literal, SpecError> {
    let bad = || SpecError::BadValue {
        text: s.to_string(),
        ty,
    };
    let t = s.trim();
    let is_hex = {
        let b = t.strip_prefix('+').unwrap_or(t);
        b.starts_with("0x") || b.starts_with("0X")
    };
    if ty.is_float() {
        if is_hex {
            let v = parse_int(t).filter(|v| *v >= 0).ok_or_else(bad)?;
            if ty.bits() < 64 && v >> ty.bits() != 0 {
                return Err(bad());
            }
            return Ok(Literal::Hex(v as u64));
        }
        if let Some(v) = parse_int(t) {
            return Ok(Literal::Int(v));
        }
        let f = match t.to_ascii_lowercase().as_str() {
            "nan" | "+nan" => f64::NAN,
            "-nan" => -f64::NAN,
            "inf" | "+inf" | "infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            other => {
                // Rust's float grammar also accepts "infinity"/"nan" spellings handled above;
                // require a digit so words like "e" are rejected.
                if !other.bytes().any(|c| c.is_ascii_digit()) {
                    return Err(bad());
                }
                other.parse::<f64>().map_err(|_| bad())?
            }
        };
        return Ok(Literal::Float(f));
    }
    let v = parse_int(t).ok_or_else(bad)?;
    let bits = ty.bits();
    let min = -(1i128 << (bits - 1));
    let max = (1i128 << bits) - 1;
    if v < min || v > max {
        return Err(bad());
    }
    Ok(if is_hex {
        Literal::Hex(v as u64)
    } else {
        Literal::Int(v)
    })
}

/// The value of a literal as an f64 (for float types; hex is a bit pattern of `ty`).
fn lit_f64(l: Literal, ty: ElemType) -> f64 {
    match l {
        Literal::Int(v) => v as f64,
        Literal::Float(f) => f,
        Literal::Hex(b) => decode_float(ty, b),
    }
}

fn decode_float(ty: ElemType, bits: u64) -> f64 {
    match ty {
        ElemType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ElemType::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
        ElemType::F32 => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits),
    }
}

/// Rounds an f64 to nearest-even in a float type; returns the bit pattern.
fn encode_float(ty: ElemType, v: f64) -> u64 {
    match ty {
        ElemType::F16 => cvt_f64_to_f16(v, Rounding::Rn).to_bits() as u64,
        ElemType::Bf16 => cvt_f64_to_bf16(v, Rounding::Rn).to_bits() as u64,
        ElemType::F32 => (v as f32).to_bits() as u64,
        _ => v.to_bits(),
    }
}

/// The raw bits (in the low `ty.size()` bytes) of a literal of type `ty`.
pub fn literal_bits(l: Literal, ty: ElemType) -> u64 {
    let m = if ty.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    };
    if ty.is_float() {
        return match l {
            Literal::Hex(b) => b & m,
            other => encode_float(ty, lit_f64(other, ty)),
        };
    }
    match l {
        Literal::Int(v) => (v as u64) & m,
        Literal::Hex(b) => b & m,
        Literal::Float(f) => (f as i128 as u64) & m,
    }
}

/// SplitMix64's output function.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The counter-based generator: 64 random bits for element `index` of seed `seed`.
#[inline]
pub fn random_bits(seed: u64, index: u64) -> u64 {
    mix64(mix64(seed).wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// The next value of a float type below `x` (bit pattern in, bit pattern out).
fn next_down(ty: ElemType, bits: u64) -> u64 {
    let sign = 1u64 << (ty.bits() - 1);
    let mag = bits & (sign - 1);
    if mag == 0 {
        sign | 1 // -0 and +0 both step to the smallest negative subnormal
    } else if bits & sign == 0 {
        bits - 1
    } else {
        bits + 1
    }
}

impl Init {
    /// The bits of element `i` (in the low `ty.size()` bytes).
    fn element(&self, ty: ElemType, i: usize) -> u64 {
        let m = if ty.bits() == 64 {
            u64::MAX
        } else {
            (1u64 << ty.bits()) - 1
        };
        match self {
            Init::Zero | Init::File(_) => 0,
            Init::Fill(v) => literal_bits(*v, ty),
            Init::Values(v) => v.get(i).map_or(0, |x| literal_bits(*x, ty)),
            Init::Iota { start, step } => {
                if ty.is_float() {
                    let v = lit_f64(*start, ty) + i as f64 * lit_f64(*step, ty);
                    encode_float(ty, v)
                } else {
                    let s = literal_bits(*start, ElemType::U64) as u128;
                    let d = literal_bits(*step, ElemType::U64) as u128;
                    (s.wrapping_add(d.wrapping_mul(i as u128)) as u64) & m
                }
            }
            Init::Random { seed, range } => random_element(ty, *seed, i as u64, *range),
            Init::Special => {
                let v = match (i, ty) {
                    (0, _) => f64::NAN,
                    (1, _) => -f64::NAN,
                    (2, _) => f64::INFINITY,
                    (3, _) => f64::NEG_INFINITY,
                    (4, _) => 0.0,
                    (5, _) => -0.0,
                    (6, _) => 1e-40,
                    (7, _) => -1e-40,
                    (8, ElemType::F16) => half::f16::MAX.to_f64(),
                    (8, ElemType::Bf16) => half::bf16::MAX.to_f64(),
                    (8, ElemType::F32) => f32::MAX as f64,
                    (8, _) => f64::MAX,
                    (9, ElemType::F16) => -half::f16::MIN_POSITIVE.to_f64(),
                    (9, ElemType::Bf16) => -half::bf16::MIN_POSITIVE.to_f64(),
                    (9, ElemType::F32) => -f32::MIN_POSITIVE as f64,
                    (9, _) => -f64::MIN_POSITIVE,
                    _ => return random_element(ty, 0, i as u64, None),
                };
                encode_float(ty, v)
            }
        }
    }
}

fn random_element(ty: ElemType, seed: u64, i: u64, range: Option<(Literal, Literal)>) -> u64 {
    let r = random_bits(seed, i);
    let m = if ty.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    };
    if ty.is_float() {
        let p = ty.precision();
        let u = (r >> (64 - p)) as f64 * (-(p as f64)).exp2();
        match range {
            None => encode_float(ty, u),
            Some((lo, hi)) => {
                let (l, h) = (lit_f64(lo, ty), lit_f64(hi, ty));
                let v = encode_float(ty, l + u * (h - l));
                let hb = encode_float(ty, h);
                if decode_float(ty, v) >= decode_float(ty, hb) {
                    next_down(ty, hb)
                } else {
                    v
                }
            }
        }
    } else {
        match range {
            None => r & m,
            Some((Literal::Int(lo), Literal::Int(hi))) => {
                let span = (hi - lo) as u128;
                let off = ((r as u128 * span) >> 64) as i128;
                ((lo + off) as u64) & m
            }
            Some(_) => 0, // rejected by the parser
        }
    }
}

impl BufferSpec {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * self.ty.size()
    }

    /// The initial contents, little-endian.
    pub fn initial_bytes(&self) -> Result<Vec<u8>, SpecError> {
        if let Init::File(p) = &self.init {
            let file_err = |message: String| SpecError::File {
                path: p.display().to_string(),
                message,
            };
            let data = std::fs::read(p).map_err(|e| file_err(e.to_string()))?;
            if data.len() != self.bytes() {
                return Err(file_err(format!(
                    "holds {} bytes; `{}` needs {} ({} × {})",
                    data.len(),
                    self.name,
                    self.bytes(),
                    self.len,
                    self.ty
                )));
            }
            return Ok(data);
        }
        let n = self.ty.size();
        let mut out = Vec::with_capacity(self.bytes());
        for i in 0..self.len {
            out.extend_from_slice(&self.init.element(self.ty, i).to_le_bytes()[..n]);
        }
        Ok(out)
    }

    /// The initial contents as host values.
    pub fn initial(&self) -> Result<HostBuffer, SpecError> {
        Ok(HostBuffer {
            name: self.name.clone(),
            ty: self.ty,
            bytes: self.initial_bytes()?,
        })
    }
}

impl ScalarSpec {
    /// The kernel argument (its size is the type's size).
    pub fn arg(&self) -> Arg {
        let b = literal_bits(self.value, self.ty);
        match self.ty {
            ElemType::U32 => Arg::U32(b as u32),
            ElemType::I32 => Arg::I32(b as u32 as i32),
            ElemType::U64 => Arg::U64(b),
            ElemType::I64 => Arg::I64(b as i64),
            ElemType::F32 => Arg::F32(f32::from_bits(b as u32)),
            ElemType::F64 => Arg::F64(f64::from_bits(b)),
            t => Arg::Bytes(b.to_le_bytes()[..t.size()].to_vec()),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Hex(v) => write!(f, "{v:#x}"),
            Literal::Float(v) => write!(f, "{v:?}"),
        }
    }
}

impl fmt::Display for Init {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[Literal]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Init::Zero => f.write_str("zero"),
            Init::Fill(v) => write!(f, "fill({v})"),
            Init::Iota { start, step } => write!(f, "iota({start},{step})"),
            Init::Values(v) => write!(f, "values({})", list(v)),
            Init::Random { seed, range: None } => write!(f, "random({seed})"),
            Init::Random {
                seed,
                range: Some((lo, hi)),
            } => write!(f, "random({seed},{lo},{hi})"),
            Init::Special => f.write_str("special"),
            Init::File(p) => write!(f, "file({})", p.display()),
        }
    }
}

/// Prints the spec back in the grammar it was parsed from (`parse_arg(x.to_string()) == x`).
impl fmt::Display for ArgSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgSpec::Buffer(b) => write!(f, "{}:{}[{}] {}", b.name, b.ty, b.len, b.init),
            ArgSpec::Scalar(s) => write!(f, "{}:{}={}", s.name, s.ty, s.value),
        }
    }
}

/// A buffer allocated and initialised on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceBuffer {
    pub name: String,
    pub ty: ElemType,
    pub len: usize,
    pub ptr: u64,
}

impl DeviceBuffer {
    /// Reads the buffer back.
    pub fn read(&self, dev: &Device) -> Result<HostBuffer, DeviceError> {
        let mut bytes = vec![0u8; self.len * self.ty.size()];
        dev.copy_from(self.ptr, &mut bytes)?;
        Ok(HostBuffer {
            name: self.name.clone(),
            ty: self.ty,
            bytes,
        })
    }
}

/// Arguments realised on a device: what to pass to `launch`, and where the buffers are.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundArgs {
    pub args: Vec<Arg>,
    pub buffers: Vec<DeviceBuffer>,
}

impl BoundArgs {
    pub fn buffer(&self, name: &str) -> Option<&DeviceBuffer> {
        self.buffers.iter().find(|b| b.name == name)
    }

    /// Reads back every buffer, in argument order.
    pub fn read_all(&self, dev: &Device) -> Result<Vec<HostBuffer>, DeviceError> {
        self.buffers.iter().map(|b| b.read(dev)).collect()
    }
}

/// Why arguments could not be realised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("`{name}`: {source}")]
    Device { name: String, source: DeviceError },
}

/// Allocates (named after the spec, so faults name it) and initialises every buffer, and
/// turns every argument into a kernel [`Arg`].
pub fn bind(dev: &mut Device, specs: &[ArgSpec]) -> Result<BoundArgs, BindError> {
    let mut out = BoundArgs {
        args: Vec::with_capacity(specs.len()),
        buffers: Vec::new(),
    };
    for s in specs {
        match s {
            ArgSpec::Scalar(sc) => out.args.push(sc.arg()),
            ArgSpec::Buffer(b) => {
                let data = b.initial_bytes()?;
                let dev_err = |source| BindError::Device {
                    name: b.name.clone(),
                    source,
                };
                let ptr = dev
                    .alloc_named(data.len() as u64, b.name.clone())
                    .map_err(dev_err)?;
                dev.copy_to(ptr, &data).map_err(dev_err)?;
                out.args.push(Arg::Ptr(ptr));
                out.buffers.push(DeviceBuffer {
                    name: b.name.clone(),
                    ty: b.ty,
                    len: b.len,
                    ptr,
                });
            }
        }
    }
    Ok(out)
}

/// A value type a buffer can be read as.
pub trait Element: Copy {
    const TYPE: ElemType;
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $e:ident) => {
        impl Element for $t {
            const TYPE: ElemType = ElemType::$e;
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
        }
    };
}
element!(u8, U8);
element!(i8, I8);
element!(u16, U16);
element!(i16, I16);
element!(u32, U32);
element!(i32, I32);
element!(u64, U64);
element!(i64, I64);
element!(f32, F32);
element!(f64, F64);

impl Element for half::f16 {
    const TYPE: ElemType = ElemType::F16;
    fn from_le(b: &[u8]) -> Self {
        half::f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
    }
}

impl Element for half::bf16 {
    const TYPE: ElemType = ElemType::Bf16;
    fn from_le(b: &[u8]) -> Self {
        half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]]))
    }
}

/// Buffer contents on the host, with their type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBuffer {
    pub name: String,
    pub ty: ElemType,
    pub bytes: Vec<u8>,
}

impl HostBuffer {
    pub fn len(&self) -> usize {
        self.bytes.len() / self.ty.size()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The elements as `T`, or `None` if `T` is not the buffer's type.
    pub fn values<T: Element>(&self) -> Option<Vec<T>> {
        if T::TYPE != self.ty {
            return None;
        }
        Some(
            self.bytes
                .chunks_exact(self.ty.size())
                .map(T::from_le)
                .collect(),
        )
    }

    /// Raw bits of element `i`.
    pub fn bits(&self, i: usize) -> Option<u64> {
        let n = self.ty.size();
        let s = self.bytes.get(i * n..i * n + n)?;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(s);
        Some(u64::from_le_bytes(b))
    }

    /// Element `i` formatted: integers in decimal, floats in the shortest form that
    /// reads back to the same value (`NaN`, `inf`, `-inf`, `-0.0` spelled out).
    pub fn format_element(&self, i: usize) -> Option<String> {
        Some(format_bits(self.ty, self.bits(i)?))
    }

    /// `name: TYPE[LEN] = [a, b, ...]`, eliding the middle of long buffers to at most
    /// `max` elements (`None`: all).
    pub fn format(&self, max: Option<usize>) -> String {
        let n = self.len();
        let items: Vec<String> = match max {
            Some(m) if n > m => {
                let head = m.div_ceil(2);
                let tail = m - head;
                let mut v: Vec<String> = (0..head)
                    .map(|i| format_bits(self.ty, self.bits(i).unwrap_or(0)))
                    .collect();
                v.push(format!("... ({} more)", n - m));
                v.extend((n - tail..n).map(|i| format_bits(self.ty, self.bits(i).unwrap_or(0))));
                v
            }
            _ => (0..n)
                .map(|i| format_bits(self.ty, self.bits(i).unwrap_or(0)))
                .collect(),
        };
        format!("{}: {}[{}] = [{}]", self.name, self.ty, n, items.join(", "))
    }

    /// `{"name":..,"type":..,"len":..,"values":[..]}`. Non-finite floats are the strings
    /// `"NaN"`, `"inf"`, `"-inf"` (JSON has no literals for them).
    pub fn to_json(&self) -> String {
        let vals: Vec<String> = (0..self.len())
            .map(|i| json_bits(self.ty, self.bits(i).unwrap_or(0)))
            .collect();
        format!(
            "{{\"name\":{},\"type\":\"{}\",\"len\":{},\"values\":[{}]}}",
            json_string(&self.name),
            self.ty,
            self.len(),
            vals.join(",")
        )
    }
}

fn sign_extend(ty: ElemType, bits: u64) -> i64 {
    let sh = 64 - ty.bits();
    ((bits << sh) as i64) >> sh
}

/// Formats a value of type `ty` given its bits.
pub fn format_bits(ty: ElemType, bits: u64) -> String {
    if ty.is_float() {
        let v = decode_float(ty, bits);
        if v.is_nan() {
            return "NaN".into();
        }
        if v.is_infinite() {
            return if v > 0.0 { "inf" } else { "-inf" }.into();
        }
        // Shortest round-trip text for the value at its own precision.
        return match ty {
            ElemType::F32 => format!("{:?}", v as f32),
            ElemType::F16 => format!("{:?}", cvt_f64_to_f16(v, Rounding::Rn).to_f32()),
            ElemType::Bf16 => format!("{:?}", cvt_f64_to_bf16(v, Rounding::Rn).to_f32()),
            _ => format!("{v:?}"),
        };
    }
    if ty.is_signed_int() {
        sign_extend(ty, bits).to_string()
    } else {
        bits.to_string()
    }
}

fn json_bits(ty: ElemType, bits: u64) -> String {
    let s = format_bits(ty, bits);
    if ty.is_float() && matches!(s.as_str(), "NaN" | "inf" | "-inf") {
        format!("\"{s}\"")
    } else {
        s
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Parses a launch dimension: `X`, `X,Y` or `X,Y,Z` (missing ones are 1; each ≥ 1).
pub fn parse_dim3(s: &str) -> Option<Dim3> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.parse::<u32>().ok().filter(|v| *v > 0)?;
    }
    Some(Dim3::new(d[0], d[1], d[2]))
}
