//! Device `printf` (`vprintf(fmt, args)`): CUDA packs the arguments into a local buffer,
//! each aligned to its own size; integers narrower than 32 bits are promoted to 32, and
//! `float` to `double` (C varargs rules). We format with C semantics for the common
//! conversions (`d i u x X o c s p f F e E g G %`, flags `-+ #0`, width, precision,
//! length `hh h l ll z`).

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
                prec = Some(next(4) as i32 as usize);
                i += 1;
            } else {
                let s = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                prec = Some(fmt[s..i].parse().unwrap_or(0));
            }
        }
        let mut long = 0;
        while i < b.len() && b"hlLzjt".contains(&b[i]) {
            if b[i] == b'l' || b[i] == b'z' || b[i] == b'j' || b[i] == b't' || b[i] == b'L' {
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
                let v = if isize == 8 {
                    v as i64
                } else {
                    v as u32 as i32 as i64
                };
                let mut s = v.unsigned_abs().to_string();
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
                let v = if isize == 8 { v } else { v & 0xffff_ffff };
                let mut s = match conv {
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
                if flags.contains('#') && v != 0 {
                    s = match conv {
                        'x' => format!("0x{s}"),
                        'X' => format!("0X{s}"),
                        'o' => format!("0{s}"),
                        _ => s,
                    };
                }
                s
            }
            'c' => ((next(4) as u8) as char).to_string(),
            's' => {
                let p = next(8);
                let s = read_str(p);
                match prec {
                    Some(n) => s.chars().take(n).collect(),
                    None => s,
                }
            }
            'p' => format!("0x{:x}", next(8)),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = f64::from_bits(next(8));
                fmt_float(v, conv, prec.unwrap_or(6), &flags)
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
            } else if flags.contains('0') && !matches!(conv, 's' | 'c') && prec.is_none() {
                let (sign, digits) = match body.strip_prefix(['-', '+', ' ']) {
                    Some(rest) => (&body[..1], rest),
                    None => ("", body.as_str()),
                };
                out.push_str(sign);
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

fn fmt_float(v: f64, conv: char, prec: usize, flags: &str) -> String {
    let upper = conv.is_ascii_uppercase();
    let s = if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        if v < 0.0 {
            "-inf".into()
        } else {
            "inf".into()
        }
    } else {
        match conv.to_ascii_lowercase() {
            'f' => format!("{v:.prec$}"),
            'e' => c_exp(v, prec),
            'a' => format!("{v:e}"),
            _ => {
                // %g: precision P (0 → 1); use %e if exp < -4 or exp >= P, then strip zeros.
                let p = prec.max(1);
                let exp = if v == 0.0 {
                    0
                } else {
                    v.abs().log10().floor() as i32
                };
                let mut s = if exp < -4 || exp >= p as i32 {
                    c_exp(v, p - 1)
                } else {
                    format!("{v:.*}", (p as i32 - 1 - exp).max(0) as usize)
                };
                if !flags.contains('#') {
                    if let Some(epos) = s.find('e') {
                        let (m, e) = s.split_at(epos);
                        let m = if m.contains('.') {
                            m.trim_end_matches('0').trim_end_matches('.')
                        } else {
                            m
                        };
                        s = format!("{m}{e}");
                    } else if s.contains('.') {
                        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
                    }
                }
                s
            }
        }
    };
    let s = if upper { s.to_uppercase() } else { s };
    if v >= 0.0 && !v.is_nan() && flags.contains('+') {
        format!("+{s}")
    } else if v >= 0.0 && flags.contains(' ') {
        format!(" {s}")
    } else {
        s
    }
}

/// C's `%.Ne`: mantissa, `e`, sign, at least two exponent digits.
fn c_exp(v: f64, prec: usize) -> String {
    let s = format!("{v:.prec$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
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
