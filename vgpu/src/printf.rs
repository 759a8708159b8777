//! Device `printf` (`vprintf(fmt, args)`): CUDA packs the arguments into a local buffer,
//! each aligned to its own size; integers narrower than 32 bits are promoted to 32, and
//! `float` to `double` (C varargs rules). CUDA formats the output on the host with the
//! host's C library; we format with glibc's semantics for the conversions CUDA accepts
//! (`d i u x X o c s p f F e E g G a A %`, flags `-+ #0`, width, precision, `*`, length
//! `hh h l ll z j t`), checked line for line against the host's `printf` by
//! tests/programs/printf_check.cu.

pub fn format(
    fmt: &str,
    args: u64,
    read: impl Fn(u64, usize) -> Option<u64>,
    read_str: impl Fn(u64) -> String,
) -> String {
    let mut out = String::new();
    let mut off = 0u64;
    let mut next = |size: usize| -> u64 {
        off = off.div_ceil(size as u64) * size as u64;
        let v = read(args.wrapping_add(off), size).unwrap_or(0);
        off += size as u64;
        v
    };
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            let start = i;
            while i < b.len() && b[i] != b'%' {
                i += 1;
            }
            out.push_str(&fmt[start..i]);
            continue;
        }
        i += 1;
        if i < b.len() && b[i] == b'%' {
            out.push('%');
            i += 1;
            continue;
        }
        let mut flags = String::new();
        while i < b.len() && b"-+ #0".contains(&b[i]) {
            flags.push(b[i] as char);
            i += 1;
        }
        let mut width = None;
        if i < b.len() && b[i] == b'*' {
            width = Some(next(4) as i32 as i64);
            i += 1;
        } else {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i > s {
                width = fmt[s..i].parse().ok();
            }
        }
        let mut prec: Option<usize> = None;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            if i < b.len() && b[i] == b'*' {
                // A negative precision is taken as if it were omitted.
                prec = usize::try_from(next(4) as i32).ok();
                i += 1;
            } else {
                let s = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                prec = Some(fmt[s..i].parse().unwrap_or(0));
            }
        }
        let (mut long, mut short) = (0, 0);
        while i < b.len() && b"hlLzjt".contains(&b[i]) {
            if b[i] == b'h' {
                short += 1;
            } else {
                long += 1;
            }
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let conv = b[i] as char;
        i += 1;
        let isize = if long > 0 { 8 } else { 4 };
        let body = match conv {
            'd' | 'i' => {
                let v = next(isize);
                // `h` and `hh` print the promoted int converted back to short and char.
                let v = match (isize, short) {
                    (8, _) => v as i64,
                    (_, 0) => v as u32 as i32 as i64,
                    (_, 1) => v as u16 as i16 as i64,
                    _ => v as u8 as i8 as i64,
                };
                // A zero printed with precision 0 has no digits.
                let mut s = if v == 0 && prec == Some(0) {
                    String::new()
                } else {
                    v.unsigned_abs().to_string()
                };
                if let Some(p) = prec {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                if v < 0 {
                    format!("-{s}")
                } else if flags.contains('+') {
                    format!("+{s}")
                } else if flags.contains(' ') {
                    format!(" {s}")
                } else {
                    s
                }
            }
            'u' | 'x' | 'X' | 'o' => {
                let v = next(isize);
                let v = match (isize, short) {
                    (8, _) => v,
                    (_, 0) => v & 0xffff_ffff,
                    (_, 1) => v & 0xffff,
                    _ => v & 0xff,
                };
                let mut s = match conv {
                    _ if v == 0 && prec == Some(0) => String::new(),
                    'u' => v.to_string(),
                    'x' => format!("{v:x}"),
                    'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = prec {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                if flags.contains('#') {
                    s = match conv {
                        'x' if v != 0 => format!("0x{s}"),
                        'X' if v != 0 => format!("0X{s}"),
                        'o' if !s.starts_with('0') => format!("0{s}"),
                        _ => s,
                    };
                }
                s
            }
            'c' => ((next(4) as u8) as char).to_string(),
            's' => {
                let p = next(8);
                // glibc prints a null string as `(null)`, or as nothing when a precision
                // below 6 would cut it.
                let s = if p == 0 {
                    if prec.is_some_and(|n| n < 6) {
                        ""
                    } else {
                        "(null)"
                    }
                    .to_string()
                } else {
                    read_str(p)
                };
                match prec {
                    Some(n) => s.chars().take(n).collect(),
                    None => s,
                }
            }
            // glibc: `(nil)` for a null pointer.
            'p' => match next(8) {
                0 => "(nil)".to_string(),
                p => format!("0x{p:x}"),
            },
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = f64::from_bits(next(8));
                fmt_float(v, conv, prec, &flags)
            }
            _ => format!("%{conv}"),
        };
        let w = width.unwrap_or(0);
        let left = flags.contains('-') || w < 0;
        let w = w.unsigned_abs() as usize;
        let len = body.chars().count();
        if len < w {
            let pad = w - len;
            if left {
                out.push_str(&body);
                out.extend(std::iter::repeat_n(' ', pad));
            } else if flags.contains('0') && zero_pads(conv, prec, &body) {
                // Zeros go after the sign and a `0x` prefix.
                let (sign, digits) = match body.strip_prefix(['-', '+', ' ']) {
                    Some(rest) => (&body[..1], rest),
                    None => ("", body.as_str()),
                };
                let (prefix, digits) = match digits.get(..2) {
                    Some("0x" | "0X") => digits.split_at(2),
                    _ => ("", digits),
                };
                out.push_str(sign);
                out.push_str(prefix);
                out.extend(std::iter::repeat_n('0', pad));
                out.push_str(digits);
            } else {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(&body);
            }
        } else {
            out.push_str(&body);
        }
    }
    out
}

/// Whether the `0` flag pads `body` of conversion `conv` with zeros: integers without a
/// precision, floats that are finite (glibc pads `inf` and `nan` with spaces).
fn zero_pads(conv: char, prec: Option<usize>, body: &str) -> bool {
    match conv {
        'd' | 'i' | 'u' | 'x' | 'X' | 'o' => prec.is_none(),
        // `inf` and `nan` are the float bodies without a digit.
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => body.bytes().any(|b| b.is_ascii_digit()),
        _ => false,
    }
}

fn fmt_float(v: f64, conv: char, prec: Option<usize>, flags: &str) -> String {
    let upper = conv.is_ascii_uppercase();
    let alt = flags.contains('#');
    let a = v.abs();
    let s = if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        "inf".into()
    } else {
        match conv.to_ascii_lowercase() {
            'f' => point(format!("{a:.*}", prec.unwrap_or(6)), alt),
            'e' => c_exp(a, prec.unwrap_or(6), alt),
            'a' => hex_float(a, prec, alt),
            _ => {
                // %g: precision P (0 → 1); X the exponent %e would print at precision
                // P - 1 (after its rounding): %f with precision P - 1 - X if P > X ≥ -4,
                // else %e with P - 1; then, without `#`, no trailing zeros or point.
                let p = prec.unwrap_or(6).max(1);
                let e = c_exp(a, p - 1, false);
                let x: i32 = e
                    .rsplit_once('e')
                    .and_then(|(_, x)| x.parse().ok())
                    .unwrap_or(0);
                let s = if x < -4 || x >= p as i32 {
                    c_exp(a, p - 1, alt)
                } else {
                    point(format!("{a:.*}", (p as i32 - 1 - x) as usize), alt)
                };
                if alt {
                    s
                } else {
                    match s.split_once('e') {
                        Some((m, e)) if m.contains('.') => {
                            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
                        }
                        Some(_) => s,
                        None if s.contains('.') => {
                            s.trim_end_matches('0').trim_end_matches('.').to_string()
                        }
                        None => s,
                    }
                }
            }
        }
    };
    let s = if upper { s.to_uppercase() } else { s };
    // The sign of a negative value, -0.0 and -nan included (glibc prints them).
    if v.is_sign_negative() {
        format!("-{s}")
    } else if flags.contains('+') {
        format!("+{s}")
    } else if flags.contains(' ') {
        format!(" {s}")
    } else {
        s
    }
}

/// `#`: a decimal point even when no digit follows it.
fn point(s: String, alt: bool) -> String {
    if alt && !s.contains('.') {
        format!("{s}.")
    } else {
        s
    }
}

/// glibc's `%a` of a non-negative finite `a`: `0x1.<hex digits>p<exponent>` for normal
/// numbers, `0x0.<digits>p-1022` for subnormals, `0x0p+0` for zero; without a precision
/// the digits are the mantissa's without trailing zeros, with one they are rounded to
/// that many (to nearest, ties to even).
fn hex_float(a: f64, prec: Option<usize>, alt: bool) -> String {
    let bits = a.to_bits();
    let (mut lead, exp, mut frac) = match (bits >> 52) as i32 {
        0 if bits == 0 => (0u64, 0, 0u64),
        0 => (0, -1022, bits & ((1 << 52) - 1)),
        e => (1, e - 1023, bits & ((1 << 52) - 1)),
    };
    let mut digits = format!("{frac:013x}");
    match prec {
        None => digits = digits.trim_end_matches('0').to_string(),
        Some(p) if p < 13 => {
            // Rounded as glibc does: the leading digit is the last one kept when p is 0,
            // and a carry into it makes it 2 (`0x2.0p+0`), not a new exponent.
            let drop = 4 * (13 - p) as u32;
            let whole = lead << 52 | frac;
            let (keep, rest) = (whole >> drop, whole & ((1u64 << drop) - 1));
            let half = 1u64 << (drop - 1);
            let kept = keep + u64::from(rest > half || (rest == half && keep & 1 == 1));
            lead = kept >> (4 * p);
            frac = kept & ((1u64 << (4 * p)) - 1);
            digits = if p == 0 {
                String::new()
            } else {
                format!("{frac:0w$x}", w = p)
            };
        }
        Some(p) => digits.push_str(&"0".repeat(p - 13)),
    }
    let dot = if digits.is_empty() && !alt { "" } else { "." };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("0x{lead}{dot}{digits}p{sign}{}", exp.unsigned_abs())
}

/// C's `%.Ne`: mantissa, `e`, sign, at least two exponent digits (`#`: a point even
/// with no digits after it).
fn c_exp(v: f64, prec: usize, alt: bool) -> String {
    let s = format!("{v:.prec$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{}e{sign}{digits:0>2}", point(m.to_string(), alt))
        }
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(fmt: &str, args: &[u8]) -> String {
        let args = args.to_vec();
        format(
            fmt,
            0,
            |a, n| {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(args.get(a as usize..a as usize + n)?);
                Some(u64::from_le_bytes(b))
            },
            |_| "str".into(),
        )
    }

    #[test]
    fn c_semantics() {
        let mut a = Vec::new();
        a.extend_from_slice(&(-42i32).to_le_bytes());
        a.extend_from_slice(&[0; 4]);
        a.extend_from_slice(&1.5f64.to_bits().to_le_bytes());
        a.extend_from_slice(&255u32.to_le_bytes());
        assert_eq!(run("x=%d y=%f z=%#x %%", &a), "x=-42 y=1.500000 z=0xff %");
        assert_eq!(
            run(
                "[%5d][%-4d|][%05d]",
                &[7, 0, 0, 0, 7, 0, 0, 0, 0xf9, 0xff, 0xff, 0xff]
            ),
            "[    7][7   |][-0007]"
        );
        let mut b = Vec::new();
        b.extend_from_slice(&1234.5f64.to_bits().to_le_bytes());
        b.extend_from_slice(&0.0001f64.to_bits().to_le_bytes());
        assert_eq!(run("%e %g", &b), "1.234500e+03 0.0001");
    }
}
