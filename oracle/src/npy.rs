//! NumPy `.npy` files: a writer for buffers (format 1.0) and a reader for expected values.
//!
//! The format (numpy's `numpy/lib/format.py` documents it): the magic `\x93NUMPY`, a major
//! and minor version byte, the header length (u16 little-endian in 1.0, u32 in 2.0/3.0),
//! then an ASCII (3.0: UTF-8) Python dict literal `{'descr': '<u4', 'fortran_order': False,
//! 'shape': (4,), }` padded with spaces and a final `\n` so the data starts at a multiple of
//! 64 bytes, then the elements in C order.
//!
//! We write only one-dimensional arrays, little-endian. The reader takes any version, any
//! byte order, `bool` as `u8`, and any shape in C order (flattened); Fortran order is only
//! accepted where it does not change the element order (at most one dimension > 1).

use std::path::Path;

use serde::Serialize;

use crate::{Buffer, ElemType, OracleError, Outputs};

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Why a `.npy` file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a readable .npy file: {0}")]
pub struct NpyError(pub String);

/// The dtype string (`descr`) numpy uses for a little-endian element of `ty`.
pub fn npy_descr(ty: ElemType) -> &'static str {
    match ty {
        ElemType::U8 => "|u1",
        ElemType::I8 => "|i1",
        ElemType::U16 => "<u2",
        ElemType::I16 => "<i2",
        ElemType::U32 => "<u4",
        ElemType::I32 => "<i4",
        ElemType::U64 => "<u8",
        ElemType::I64 => "<i8",
        ElemType::F16 => "<f2",
        ElemType::F32 => "<f4",
        ElemType::F64 => "<f8",
    }
}

impl Buffer {
    /// The buffer as a one-dimensional `.npy` file (format 1.0). Trailing bytes that do
    /// not make a whole element are left out.
    pub fn to_npy(&self) -> Vec<u8> {
        let len = self.len();
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
            npy_descr(self.ty)
        );
        // magic + version + u16 length + header + '\n' is padded to a multiple of 64.
        let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
        header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        header.push('\n');
        let mut out = Vec::with_capacity(unpadded + 64 + self.data.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[1, 0]);
        // A 1-D header is < 128 bytes, far below u16::MAX.
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.data[..len * self.ty.size()]);
        out
    }
}

/// One buffer written by [`Outputs::write_npy_dir`], as listed in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NpyFile {
    /// The buffer's name.
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ElemType,
    /// Number of elements.
    pub len: usize,
    /// File name inside the directory.
    pub file: String,
}

impl Outputs {
    /// Writes every buffer to `dir` (which must exist) as `<name>.npy`, and says which
    /// file holds which buffer. Characters other than ASCII letters, digits, `_`, `-` and
    /// `.` in a name become `_` (and a leading `.` too); names that then collide get `-2`,
    /// `-3`, ... so no buffer overwrites another.
    pub fn write_npy_dir(&self, dir: &Path) -> Result<Vec<NpyFile>, OracleError> {
        let mut files: Vec<NpyFile> = Vec::with_capacity(self.buffers.len());
        for buf in &self.buffers {
            let stem = file_stem(&buf.name);
            let mut file = format!("{stem}.npy");
            let mut n = 1;
            while files.iter().any(|f| f.file.eq_ignore_ascii_case(&file)) {
                n += 1;
                file = format!("{stem}-{n}.npy");
            }
            let path = dir.join(&file);
            std::fs::write(&path, buf.to_npy())
                .map_err(|source| OracleError::WriteFile { path, source })?;
            files.push(NpyFile {
                name: buf.name.clone(),
                ty: buf.ty,
                len: buf.len(),
                file,
            });
        }
        Ok(files)
    }
}

fn file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    stem
}

/// An array read from a `.npy` file, flattened, its elements converted to little-endian.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    pub ty: ElemType,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl NpyArray {
    pub fn into_buffer(self, name: impl Into<String>) -> Buffer {
        Buffer::new(name, self.ty, self.data)
    }
}

/// Parses a `.npy` file.
pub fn read_npy(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let err = |m: &str| NpyError(m.to_string());
    let rest = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or_else(|| err("missing the \\x93NUMPY magic"))?;
    let (major, rest) = match rest {
        [major, _minor, rest @ ..] => (*major, rest),
        _ => return Err(err("truncated version")),
    };
    let (header_len, rest) = match (major, rest) {
        (1, [a, b, rest @ ..]) => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        (2 | 3, [a, b, c, d, rest @ ..]) => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest),
        (1..=3, _) => return Err(err("truncated header length")),
        (v, _) => return Err(NpyError(format!("unsupported format version {v}"))),
    };
    if rest.len() < header_len {
        return Err(err("truncated header"));
    }
    let (header, data) = rest.split_at(header_len);
    let header = std::str::from_utf8(header).map_err(|_| err("header is not UTF-8"))?;
    let dict = header::parse_dict(header).map_err(NpyError)?;

    let descr = match dict.get("descr") {
        Some(header::Lit::Str(s)) => s.as_str(),
        _ => return Err(err("header has no string 'descr'")),
    };
    let fortran = match dict.get("fortran_order") {
        Some(header::Lit::Bool(b)) => *b,
        _ => return Err(err("header has no boolean 'fortran_order'")),
    };
    let shape = match dict.get("shape") {
        Some(header::Lit::Tuple(dims)) => dims.clone(),
        _ => return Err(err("header has no tuple 'shape'")),
    };
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(err(
            "Fortran-order arrays with more than one dimension are not supported; save it in C order",
        ));
    }
    let (ty, big_endian) = parse_descr(descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| err("shape is too large"))?;
    let size = ty.size();
    let nbytes = count
        .checked_mul(size)
        .ok_or_else(|| err("shape is too large"))?;
    if data.len() != nbytes {
        return Err(NpyError(format!(
            "shape {shape:?} of {descr} needs {nbytes} data bytes, the file has {}",
            data.len()
        )));
    }
    let mut data = data.to_vec();
    if big_endian {
        for elem in data.chunks_exact_mut(size) {
            elem.reverse();
        }
    }
    Ok(NpyArray { ty, shape, data })
}

fn parse_descr(descr: &str) -> Result<(ElemType, bool), NpyError> {
    let unsupported = || NpyError(format!("unsupported dtype '{descr}'"));
    let mut chars = descr.chars();
    let order = chars.next().ok_or_else(unsupported)?;
    let big_endian = match order {
        '<' | '|' => false,
        '>' => true,
        '=' => cfg!(target_endian = "big"),
        _ => return Err(unsupported()),
    };
    let ty = match chars.as_str() {
        "u1" | "b1" => ElemType::U8,
        "i1" => ElemType::I8,
        "u2" => ElemType::U16,
        "i2" => ElemType::I16,
        "u4" => ElemType::U32,
        "i4" => ElemType::I32,
        "u8" => ElemType::U64,
        "i8" => ElemType::I64,
        "f2" => ElemType::F16,
        "f4" => ElemType::F32,
        "f8" => ElemType::F64,
        _ => return Err(unsupported()),
    };
    Ok((ty, big_endian))
}

/// Just enough of Python's literal syntax for npy headers.
mod header {
    use std::collections::HashMap;

    #[derive(Debug, Clone, PartialEq)]
    pub enum Lit {
        Str(String),
        Bool(bool),
        Tuple(Vec<usize>),
    }

    pub fn parse_dict(text: &str) -> Result<HashMap<String, Lit>, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let mut dict = HashMap::new();
        p.expect(b'{')?;
        loop {
            p.skip_ws();
            if p.eat(b'}') {
                break;
            }
            let key = p.string()?;
            p.expect(b':')?;
            let value = p.value()?;
            dict.insert(key, value);
            p.skip_ws();
            if !p.eat(b',') {
                p.expect(b'}')?;
                break;
            }
        }
        p.skip_ws();
        if p.i != p.s.len() {
            return Err(format!(
                "unexpected text after the header dict at byte {}",
                p.i
            ));
        }
        Ok(dict)
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn skip_ws(&mut self) {
            while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
                self.i += 1;
            }
        }

        fn eat(&mut self, c: u8) -> bool {
            self.skip_ws();
            if self.s.get(self.i) == Some(&c) {
                self.i += 1;
                true
            } else {
                false
            }
        }

        fn expect(&mut self, c: u8) -> Result<(), String> {
            if self.eat(c) {
                Ok(())
            } else {
                Err(format!(
                    "expected `{}` at byte {} of the header",
                    c as char, self.i
                ))
            }
        }

        fn string(&mut self) -> Result<String, String> {
            self.skip_ws();
            let quote = match self.s.get(self.i) {
                Some(&q @ (b'\'' | b'"')) => q,
                _ => {
                    return Err(format!(
                        "expected a string at byte {} of the header",
                        self.i
                    ))
                }
            };
            let start = self.i + 1;
            let len = self.s[start..]
                .iter()
                .position(|&c| c == quote)
                .ok_or("unterminated string in the header")?;
            self.i = start + len + 1;
            String::from_utf8(self.s[start..start + len].to_vec())
                .map_err(|_| "header string is not UTF-8".to_string())
        }

        fn value(&mut self) -> Result<Lit, String> {
            self.skip_ws();
            let rest = &self.s[self.i..];
            if rest.starts_with(b"True") {
                self.i += 4;
                Ok(Lit::Bool(true))
            } else if rest.starts_with(b"False") {
                self.i += 5;
                Ok(Lit::Bool(false))
            } else if self.eat(b'(') {
                let mut dims = Vec::new();
                loop {
                    if self.eat(b')') {
                        break;
                    }
                    dims.push(self.int()?);
                    if !self.eat(b',') {
                        self.expect(b')')?;
                        break;
                    }
                }
                Ok(Lit::Tuple(dims))
            } else {
                self.string().map(Lit::Str)
            }
        }

        fn int(&mut self) -> Result<usize, String> {
            self.skip_ws();
            let start = self.i;
            while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
            }
            // Python 2 era files may write `4L`.
            let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
            let n = digits
                .parse()
                .map_err(|_| format!("expected a dimension at byte {start} of the header"))?;
            if self.s.get(self.i) == Some(&b'L') {
                self.i += 1;
            }
            Ok(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_type() {
        for ty in ElemType::ALL {
            let data: Vec<u8> = (0..ty.size() * 5).map(|i| i as u8).collect();
            let buf = Buffer::new("x", ty, data.clone());
            let bytes = buf.to_npy();
            let header_end = 10 + usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
            assert_eq!(header_end % 64, 0, "{ty}");
            assert_eq!(bytes[header_end - 1], b'\n');
            let arr = read_npy(&bytes).unwrap();
            assert_eq!(arr.ty, ty);
            assert_eq!(arr.shape, vec![5]);
            assert_eq!(arr.data, data);
        }
    }

    #[test]
    fn header_text_is_what_numpy_writes() {
        let bytes = Buffer::from_elems("c", &[1u32, 2, 3]).to_npy();
        let header = std::str::from_utf8(&bytes[10..]).unwrap_or("");
        assert!(header.starts_with("{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }"));
    }

    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[version, 0]);
        if version == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_other_writers_files() {
        // Version 2, big-endian, 2-D, double quotes, no trailing comma.
        let a = read_npy(&npy(
            2,
            "{\"descr\": \">i2\", \"shape\": (2, 1), \"fortran_order\": False}\n",
            &[0, 1, 0xff, 0xfe],
        ))
        .unwrap();
        assert_eq!(a.ty, ElemType::I16);
        assert_eq!(a.shape, vec![2, 1]);
        assert_eq!(
            a.into_buffer("a").values().collect::<Vec<_>>(),
            [crate::Value::Int(1), crate::Value::Int(-2)]
        );
        // Scalars have shape ().
        let s = read_npy(&npy(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
            &2.5f64.to_le_bytes(),
        ))
        .unwrap();
        assert_eq!(s.shape, Vec::<usize>::new());
        assert_eq!(s.data.len(), 8);
        // Bool reads as u8; Fortran order of a vector is harmless.
        let b = read_npy(&npy(
            1,
            "{'descr': '|b1', 'fortran_order': True, 'shape': (3,), }",
            &[1, 0, 1],
        ))
        .unwrap();
        assert_eq!(b.ty, ElemType::U8);
    }

    #[test]
    fn rejects_bad_files_without_panicking() {
        let cases: &[(Vec<u8>, &str)] = &[
            (b"PK\x03\x04".to_vec(), "magic"),
            (MAGIC.to_vec(), "truncated version"),
            (npy(9, "{}", &[]), "version 9"),
            (
                {
                    let mut v = MAGIC.to_vec();
                    v.extend_from_slice(&[1, 0, 200, 0]);
                    v
                },
                "truncated header",
            ),
            (
                npy(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", &[0; 16]),
                "unsupported dtype '<c16'",
            ),
            (
                npy(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }", &[0; 8]),
                "needs 12 data bytes, the file has 8",
            ),
            (
                npy(1, "{'descr': '<u4', 'fortran_order': True, 'shape': (2, 2), }", &[0; 16]),
                "Fortran-order",
            ),
            (
                npy(1, "{'descr': '<u4', 'shape': (1,), }", &[0; 4]),
                "fortran_order",
            ),
            (
                npy(
                    1,
                    "{'descr': '<u8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
                    &[],
                ),
                "too large",
            ),
            (npy(1, "{'descr': '<u4'", &[]), "expected `}`"),
            (npy(1, "{'descr: '<u4'}", &[]), "expected `:`"),
            (npy(1, "{'shape': (x,)}", &[]), "expected a dimension"),
        ];
        for (bytes, want) in cases {
            let e = read_npy(bytes).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} should mention {want:?}");
        }
    }

    #[test]
    fn file_names_are_safe_and_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let outs = Outputs::new(vec![
            Buffer::from_elems("a/b", &[1u8]),
            Buffer::from_elems("a_b", &[2u8]),
            Buffer::from_elems("..", &[3u8]),
            Buffer::from_elems("", &[4u8]),
        ]);
        let files = outs.write_npy_dir(dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(names, ["a_b.npy", "a_b-2.npy", "_...npy", "_.npy"]);
        for f in &files {
            let bytes = std::fs::read(dir.path().join(&f.file)).unwrap();
            let arr = read_npy(&bytes).unwrap();
            assert_eq!(arr.data.len(), 1);
        }
    }
}
