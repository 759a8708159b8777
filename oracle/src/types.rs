//! Typed views of the bytes a kernel leaves in its buffers.
//!
//! A [`Buffer`] is raw little-endian bytes plus an [`ElemType`]; oracles never look at the
//! bytes directly but at [`Value`]s, so integer and float buffers of every width share one
//! comparison path. Integers widen to `i128` (exact for every element type, and for sums of
//! any buffer that fits in memory); floats widen to `f64` (exact for `f16`/`f32`).

use std::fmt;

use fencehound_numconv::cvt::cvt_f64_to_f16;
use fencehound_numconv::Rounding;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// The element type of a buffer. Serialized as in campaign files: `"u8"`, `"f32"`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 11] = [
        ElemType::U8,
        ElemType::I8,
        ElemType::U16,
        ElemType::I16,
        ElemType::U32,
        ElemType::I32,
        ElemType::U64,
        ElemType::I64,
        ElemType::F16,
        ElemType::F32,
        ElemType::F64,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 | ElemType::F16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F16 | ElemType::F32 | ElemType::F64)
    }

    /// The name used in campaign files and JSON: `"u32"`.
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
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    /// The inclusive integer range of an integer type; `None` for floats.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            ElemType::U8 => (0, u8::MAX.into()),
            ElemType::I8 => (i8::MIN.into(), i8::MAX.into()),
            ElemType::U16 => (0, u16::MAX.into()),
            ElemType::I16 => (i16::MIN.into(), i16::MAX.into()),
            ElemType::U32 => (0, u32::MAX.into()),
            ElemType::I32 => (i32::MIN.into(), i32::MAX.into()),
            ElemType::U64 => (0, u64::MAX.into()),
            ElemType::I64 => (i64::MIN.into(), i64::MAX.into()),
            ElemType::F16 | ElemType::F32 | ElemType::F64 => return None,
        })
    }

    /// Decodes one little-endian element. `None` if `bytes` is not exactly [`size`](Self::size) long.
    pub fn decode(self, bytes: &[u8]) -> Option<Value> {
        fn arr<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
            b.try_into().ok()
        }
        Some(match self {
            ElemType::U8 => Value::Int(u8::from_le_bytes(arr(bytes)?).into()),
            ElemType::I8 => Value::Int(i8::from_le_bytes(arr(bytes)?).into()),
            ElemType::U16 => Value::Int(u16::from_le_bytes(arr(bytes)?).into()),
            ElemType::I16 => Value::Int(i16::from_le_bytes(arr(bytes)?).into()),
            ElemType::U32 => Value::Int(u32::from_le_bytes(arr(bytes)?).into()),
            ElemType::I32 => Value::Int(i32::from_le_bytes(arr(bytes)?).into()),
            ElemType::U64 => Value::Int(u64::from_le_bytes(arr(bytes)?).into()),
            ElemType::I64 => Value::Int(i64::from_le_bytes(arr(bytes)?).into()),
            ElemType::F16 => Value::Float(half::f16::from_le_bytes(arr(bytes)?).to_f64()),
            ElemType::F32 => Value::Float(f32::from_le_bytes(arr(bytes)?).into()),
            ElemType::F64 => Value::Float(f64::from_le_bytes(arr(bytes)?)),
        })
    }

    /// Converts a value written by a person (a campaign's expected value) into what an
    /// element of this type can hold: floats are rounded to the type's precision (so
    /// `0.1` for an `f32` buffer means `0.1f32`), integers must be in range, and a float
    /// is accepted for an integer type only when it is integral.
    pub fn coerce(self, v: Value) -> Result<Value, String> {
        match (self.int_range(), v) {
            (Some((lo, hi)), Value::Int(i)) => {
                if (lo..=hi).contains(&i) {
                    Ok(Value::Int(i))
                } else {
                    Err(format!("{i} is out of range for {self}"))
                }
            }
            (Some(_), Value::Float(f)) => {
                // f64 integral values up to 2^1023 fit i128 only below 2^127.
                if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 {
                    self.coerce(Value::Int(f as i128))
                } else {
                    Err(format!("{f:?} is not an integer, but the buffer is {self}"))
                }
            }
            (None, v) => {
                let f = v.as_f64();
                Ok(Value::Float(match self {
                    // One rounding, the same on every host (see `cvt_f64_to_f16`).
                    ElemType::F16 => cvt_f64_to_f16(f, Rounding::Rn).to_f64(),
                    ElemType::F32 => f64::from(f as f32),
                    _ => f,
                }))
            }
        }
    }

    /// Formats a value of this type for a diff: integers in decimal, floats with the
    /// shortest text that reads back to the same value *of this type* (so an `f32` 0.1
    /// prints as `0.1`, not `0.10000000149011612`), in `{:?}` style (`1.0`, `NaN`, `1e-7`).
    pub fn format(self, v: Value) -> String {
        match v {
            Value::Int(i) => i.to_string(),
            Value::Float(f) => match self {
                ElemType::F16 | ElemType::F32 => format!("{:?}", f as f32),
                _ => format!("{f:?}"),
            },
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One element, widened: integers exactly as `i128`, floats as `f64`.
///
/// In campaign files (`values`, `equals`, `value`) a `Value` is a TOML number, or a string
/// holding an integer (decimal or `0x` hex) for `u64` values above `i64::MAX`, which TOML
/// integers cannot express.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }

    /// Parses a number as written in a text file or a campaign string: an integer
    /// (optional sign, decimal or `0x`/`0b`/`0o`), else a float (`1.5`, `-2e3`, `nan`, `inf`).
    pub fn parse(text: &str) -> Option<Value> {
        let t = text.trim();
        if let Some(i) = parse_int(t) {
            return Some(Value::Int(i));
        }
        // Rust's float parser accepts "infinity"/"NaN" in any case, which is what people write.
        t.parse::<f64>().ok().map(Value::Float)
    }
}

fn parse_int(t: &str) -> Option<i128> {
    let (neg, rest) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let rest = rest.replace('_', "");
    let lower = rest.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        0i128.checked_sub_unsigned(magnitude)
    } else {
        i128::try_from(magnitude).ok()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i.into())
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Self {
        Value::Int(i.into())
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Value::Int(i) => {
                if let Ok(v) = i64::try_from(i) {
                    s.serialize_i64(v)
                } else if let Ok(v) = u64::try_from(i) {
                    s.serialize_u64(v)
                } else {
                    s.serialize_str(&i.to_string())
                }
            }
            Value::Float(f) => s.serialize_f64(f),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, or a string holding an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                Ok(Value::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                Ok(Value::Int(v.into()))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
                Ok(Value::Int(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
                i128::try_from(v)
                    .map(Value::Int)
                    .map_err(|_| E::custom(format!("integer {v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                Ok(Value::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                Value::parse(v).ok_or_else(|| E::custom(format!("`{v}` is not a number")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A Rust type that is one of the [`ElemType`]s, for building buffers from slices.
pub trait Elem: Copy {
    const TYPE: ElemType;
    fn extend_le(self, out: &mut Vec<u8>);
}

macro_rules! elem {
    ($($t:ty => $e:ident),*) => {$(
        impl Elem for $t {
            const TYPE: ElemType = ElemType::$e;
            fn extend_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
elem!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64,
      i64 => I64, half::f16 => F16, f32 => F32, f64 => F64);

/// One named buffer's contents: little-endian elements of type `ty`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    pub name: String,
    pub ty: ElemType,
    pub data: Vec<u8>,
}

impl Buffer {
    pub fn new(name: impl Into<String>, ty: ElemType, data: Vec<u8>) -> Self {
        Buffer {
            name: name.into(),
            ty,
            data,
        }
    }

    /// A buffer holding `elems`, typed after their Rust type.
    pub fn from_elems<T: Elem>(name: impl Into<String>, elems: &[T]) -> Self {
        let mut data = Vec::with_capacity(elems.len() * T::TYPE.size());
        for e in elems {
            e.extend_le(&mut data);
        }
        Buffer::new(name, T::TYPE, data)
    }

    /// Number of whole elements (trailing bytes that do not make an element are ignored
    /// here; oracles reject such buffers with [`OracleError::RaggedBuffer`](crate::OracleError::RaggedBuffer)).
    pub fn len(&self) -> usize {
        self.data.len() / self.ty.size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, or `None` past the end.
    pub fn value(&self, i: usize) -> Option<Value> {
        let size = self.ty.size();
        let start = i.checked_mul(size)?;
        let bytes = self.data.get(start..start.checked_add(size)?)?;
        self.ty.decode(bytes)
    }

    /// All elements in order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = Value> + '_ {
        let ty = self.ty;
        self.data
            .chunks_exact(ty.size())
            .map(move |c| ty.decode(c).unwrap_or(Value::Int(0)))
    }

    pub(crate) fn check_whole(&self) -> Result<(), crate::OracleError> {
        if self.data.len().is_multiple_of(self.ty.size()) {
            Ok(())
        } else {
            Err(crate::OracleError::RaggedBuffer {
                name: self.name.clone(),
                ty: self.ty,
                bytes: self.data.len(),
            })
        }
    }
}

/// The buffers of one execution (or the initial contents, or the golden run's outputs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outputs {
    pub buffers: Vec<Buffer>,
}

impl Outputs {
    pub fn new(buffers: Vec<Buffer>) -> Self {
        Outputs { buffers }
    }

    /// The first buffer called `name`.
    pub fn get(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_every_type() {
        let cases: Vec<(Buffer, Value)> = vec![
            (Buffer::from_elems("a", &[200u8]), Value::Int(200)),
            (Buffer::from_elems("a", &[-5i8]), Value::Int(-5)),
            (Buffer::from_elems("a", &[65535u16]), Value::Int(65535)),
            (Buffer::from_elems("a", &[-300i16]), Value::Int(-300)),
            (
                Buffer::from_elems("a", &[u32::MAX]),
                Value::Int(u32::MAX.into()),
            ),
            (
                Buffer::from_elems("a", &[i32::MIN]),
                Value::Int(i32::MIN.into()),
            ),
            (
                Buffer::from_elems("a", &[u64::MAX]),
                Value::Int(u64::MAX.into()),
            ),
            (
                Buffer::from_elems("a", &[i64::MIN]),
                Value::Int(i64::MIN.into()),
            ),
            (
                Buffer::from_elems("a", &[half::f16::from_f32(1.5)]),
                Value::Float(1.5),
            ),
            (Buffer::from_elems("a", &[0.25f32]), Value::Float(0.25)),
            (Buffer::from_elems("a", &[-0.0f64]), Value::Float(-0.0)),
        ];
        for (buf, want) in cases {
            assert_eq!(buf.len(), 1, "{:?}", buf.ty);
            assert_eq!(buf.value(0), Some(want), "{:?}", buf.ty);
            assert_eq!(buf.value(1), None);
            assert_eq!(buf.value(usize::MAX), None);
        }
    }

    #[test]
    fn coerce_rounds_and_range_checks() {
        assert_eq!(
            ElemType::F32.coerce(Value::Float(0.1)),
            Ok(Value::Float(f64::from(0.1f32)))
        );
        // Just below the tie 8134 between the f16 values 8132 and 8136: one rounding
        // gives 8132 on every host (through f32 it would be 8134.0, then 8136).
        assert_eq!(
            ElemType::F16.coerce(Value::Float(8133.9998779296875)),
            Ok(Value::Float(8132.0))
        );
        assert_eq!(ElemType::U8.coerce(Value::Float(3.0)), Ok(Value::Int(3)));
        assert!(ElemType::U8.coerce(Value::Int(256)).is_err());
        assert!(ElemType::I8.coerce(Value::Int(-129)).is_err());
        assert!(ElemType::U32.coerce(Value::Float(1.5)).is_err());
        assert!(ElemType::U32.coerce(Value::Float(f64::NAN)).is_err());
        assert!(ElemType::U64.coerce(Value::Float(1e300)).is_err());
        assert_eq!(
            ElemType::U64.coerce(Value::Int(u64::MAX.into())),
            Ok(Value::Int(u64::MAX.into()))
        );
    }

    #[test]
    fn parse_numbers() {
        assert_eq!(Value::parse("42"), Some(Value::Int(42)));
        assert_eq!(Value::parse("-0x10"), Some(Value::Int(-16)));
        assert_eq!(
            Value::parse("0xffff_ffff_ffff_ffff"),
            Some(Value::Int(u64::MAX.into()))
        );
        assert_eq!(Value::parse("1e3"), Some(Value::Float(1000.0)));
        assert_eq!(Value::parse("-inf"), Some(Value::Float(f64::NEG_INFINITY)));
        assert!(matches!(Value::parse("nan"), Some(Value::Float(f)) if f.is_nan()));
        assert_eq!(Value::parse(""), None);
        assert_eq!(Value::parse("-"), None);
        assert_eq!(Value::parse("0x"), None);
        assert_eq!(Value::parse("12abc"), None);
        assert_eq!(
            Value::parse(&"9".repeat(60)),
            Some(Value::Float(1e60 - 1.0))
        );
    }

    #[test]
    fn format_uses_the_element_precision() {
        let v = ElemType::F32.coerce(Value::Float(0.1)).unwrap();
        assert_eq!(ElemType::F32.format(v), "0.1");
        assert_eq!(ElemType::F64.format(v), "0.10000000149011612");
        assert_eq!(ElemType::F64.format(Value::Float(-0.0)), "-0.0");
        assert_eq!(ElemType::F64.format(Value::Float(f64::NAN)), "NaN");
        assert_eq!(ElemType::I64.format(Value::Int(-7)), "-7");
    }
}
