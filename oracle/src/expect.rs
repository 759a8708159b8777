//! Reading the expected values of an `expect` oracle from a file.

use std::path::Path;

use crate::npy::read_npy;
use crate::{ElemType, OracleError, Value};

/// How a file of expected values is read, decided by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectFormat {
    /// `.npy`: any supported dtype, any shape (flattened in C order).
    Npy,
    /// `.txt`, `.csv`, `.tsv`: numbers separated by whitespace and/or commas; `#` starts
    /// a comment. Integers may be hex (`0xff`); floats may be `nan`, `inf`, `-inf`.
    Text,
    /// Anything else: raw little-endian elements of the buffer's type.
    Raw,
}

impl ExpectFormat {
    pub fn of(path: &Path) -> ExpectFormat {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("npy") => ExpectFormat::Npy,
            Some("txt" | "csv" | "tsv") => ExpectFormat::Text,
            _ => ExpectFormat::Raw,
        }
    }
}

/// Reads the values in `path` (for a buffer of type `ty`; only raw files need it).
pub fn read_values(oracle: &str, path: &Path, ty: ElemType) -> Result<Vec<Value>, OracleError> {
    let bytes = std::fs::read(path).map_err(|source| OracleError::ReadFile {
        oracle: oracle.to_string(),
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |reason: String| OracleError::BadFile {
        oracle: oracle.to_string(),
        path: path.to_path_buf(),
        reason,
    };
    match ExpectFormat::of(path) {
        ExpectFormat::Npy => {
            let arr = read_npy(&bytes).map_err(|e| bad(e.to_string()))?;
            Ok(arr.into_buffer("").values().collect())
        }
        ExpectFormat::Raw => {
            if !bytes.len().is_multiple_of(ty.size()) {
                return Err(bad(format!(
                    "{} bytes is not a whole number of {ty} elements (read as raw little-endian {ty} because of its extension)",
                    bytes.len()
                )));
            }
            Ok(crate::Buffer::new("", ty, bytes).values().collect())
        }
        ExpectFormat::Text => {
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                bad(format!(
                    "not UTF-8 text (byte {}); use .npy or a raw file for binary data",
                    e.valid_up_to()
                ))
            })?;
            parse_text(text).map_err(bad)
        }
    }
}

fn parse_text(text: &str) -> Result<Vec<Value>, String> {
    let mut values = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for token in line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            let v = Value::parse(token).ok_or_else(|| {
                let shown: String = token.chars().take(40).collect();
                format!("line {}: `{shown}` is not a number", n + 1)
            })?;
            values.push(v);
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_format() {
        let v = parse_text("# header\n1, 2 ,3\n\n0x10\t-4.5 nan # tail\n").unwrap();
        assert_eq!(v.len(), 6);
        assert_eq!(v[3], Value::Int(16));
        assert_eq!(v[4], Value::Float(-4.5));
        assert_eq!(
            parse_text("1\n2 three\n").unwrap_err(),
            "line 2: `three` is not a number"
        );
    }

    #[test]
    fn format_by_extension() {
        assert_eq!(ExpectFormat::of(Path::new("a.NPY")), ExpectFormat::Npy);
        assert_eq!(ExpectFormat::of(Path::new("a.csv")), ExpectFormat::Text);
        assert_eq!(ExpectFormat::of(Path::new("a.bin")), ExpectFormat::Raw);
        assert_eq!(ExpectFormat::of(Path::new("a")), ExpectFormat::Raw);
    }
}
