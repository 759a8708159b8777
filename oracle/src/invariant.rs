//! Invariants over one output buffer: sum, sorted, permutation-of, unique, all-equal.

use std::collections::BTreeMap;

use crate::compare::{diff_elements, window_diff, Mismatch, Tolerance, MAX_LISTED};
use crate::{Buffer, Value};

/// Checks `buf` against a sum. `expected_label` says where the expected sum came from.
pub(crate) fn check_sum(
    buf: &Buffer,
    expected: Value,
    expected_label: &str,
    tol: Tolerance,
) -> Option<Mismatch> {
    let got = sum(buf);
    if tol.matches(got, expected) {
        return None;
    }
    let fmt = |v: Value| match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
    };
    let mut message = format!(
        "sum of `{}` is {}, expected {} ({expected_label})",
        buf.name,
        fmt(got),
        fmt(expected)
    );
    if !tol.is_exact() {
        message.push_str(&format!(", tolerance {tol}"));
    }
    let difference = match (got, expected) {
        (Value::Int(g), Value::Int(e)) => g.checked_sub(e).map(|d| d.to_string()),
        _ => None,
    }
    .unwrap_or_else(|| format!("{:?}", got.as_f64() - expected.as_f64()));
    let diff = format!(
        "got:        {}\nexpected:   {} ({expected_label})\ndifference: {difference}\n",
        fmt(got),
        fmt(expected)
    );
    Some(Mismatch { message, diff })
}

/// The mathematical sum: exact `i128` for integers (no wrapping), compensated `f64`
/// summation (Neumaier) for floats so the result does not depend much on length.
pub(crate) fn sum(buf: &Buffer) -> Value {
    if !buf.ty.is_float() {
        let mut total: i128 = 0;
        for v in buf.values() {
            if let Value::Int(i) = v {
                match total.checked_add(i) {
                    Some(t) => total = t,
                    // Needs > 2^63 elements of 64-bit values: not reachable in memory.
                    None => return Value::Float(buf.values().map(Value::as_f64).sum()),
                }
            }
        }
        return Value::Int(total);
    }
    let (mut total, mut compensation) = (0.0f64, 0.0f64);
    for v in buf.values() {
        let x = v.as_f64();
        let t = total + x;
        if total.abs() >= x.abs() {
            compensation += (total - t) + x;
        } else {
            compensation += (x - t) + total;
        }
        total = t;
    }
    // With inf/NaN among the elements the compensation is NaN; the plain sum is right then.
    Value::Float(if compensation.is_finite() {
        total + compensation
    } else {
        total
    })
}

fn in_order(a: Value, b: Value, descending: bool) -> bool {
    let (a, b) = if descending { (b, a) } else { (a, b) };
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => a <= b,
        _ => a.as_f64() <= b.as_f64(),
    }
}

/// A total order for showing what a sorted buffer would look like (NaN last).
fn total_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => a.cmp(b),
        _ => a.as_f64().total_cmp(&b.as_f64()),
    }
}

pub(crate) fn check_sorted(buf: &Buffer, descending: bool) -> Option<Mismatch> {
    let values: Vec<Value> = buf.values().collect();
    let order = if descending {
        "descending"
    } else {
        "ascending"
    };
    let name = &buf.name;
    let fmt = |v: Value| buf.ty.format(v);
    let bad: Vec<usize> = (1..values.len())
        .filter(|&i| !in_order(values[i - 1], values[i], descending))
        .collect();
    let first = *bad.first()?;

    let mut diff = String::new();
    for &i in bad.iter().take(MAX_LISTED) {
        diff.push_str(&format!(
            "{name}[{}] = {}, {name}[{i}] = {}: not {order}\n",
            i - 1,
            fmt(values[i - 1]),
            fmt(values[i])
        ));
    }
    if bad.len() > MAX_LISTED {
        diff.push_str(&format!("... and {} more\n", bad.len() - MAX_LISTED));
    }
    // "Expected" is the same values sorted: a swapped pair or a misplaced run shows up as
    // such in the window.
    let mut sorted = values.clone();
    sorted.sort_by(total_cmp);
    if descending {
        sorted.reverse();
    }
    let window = (first - 1).saturating_sub(2)..values.len().min(first + 7);
    let text = |vals: &[Value]| -> String {
        window
            .clone()
            .map(|i| format!("{name}[{i}] = {}\n", fmt(vals[i])))
            .collect()
    };
    diff.push_str(&window_diff(
        &format!(
            "{name}[{}..{}], expected = sorted",
            window.start, window.end
        ),
        &text(&sorted),
        &text(&values),
    ));
    let message = format!(
        "{} of {} adjacent pairs are not in {order} order (first at index {})",
        bad.len(),
        values.len().saturating_sub(1),
        first - 1
    );
    Some(Mismatch { message, diff })
}

/// The identity of a value for multiset checks: bit-exact, except that all NaNs are one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Int(i128),
    Float(u64),
}

impl Key {
    fn of(v: Value) -> Key {
        match v {
            Value::Int(i) => Key::Int(i),
            Value::Float(f) if f.is_nan() => Key::Float(f64::NAN.to_bits()),
            Value::Float(f) => Key::Float(f.to_bits()),
        }
    }

    fn value(self) -> Value {
        match self {
            Key::Int(i) => Value::Int(i),
            Key::Float(bits) => Value::Float(f64::from_bits(bits)),
        }
    }
}

/// Value → (count, first index).
fn histogram(buf: &Buffer) -> BTreeMap<Key, (usize, usize)> {
    let mut h = BTreeMap::new();
    for (i, v) in buf.values().enumerate() {
        h.entry(Key::of(v)).or_insert((0, i)).0 += 1;
    }
    h
}

pub(crate) fn check_permutation(out: &Buffer, input: &Buffer) -> Option<Mismatch> {
    let have = histogram(out);
    let want = histogram(input);
    // (value, how many too many or too few, first index in its buffer)
    let mut extra: Vec<(Key, usize, usize)> = Vec::new();
    let mut missing: Vec<(Key, usize, usize)> = Vec::new();
    for (k, &(n, first)) in &have {
        let m = want.get(k).map_or(0, |w| w.0);
        if n > m {
            extra.push((*k, n - m, first));
        }
    }
    for (k, &(m, first)) in &want {
        let n = have.get(k).map_or(0, |h| h.0);
        if m > n {
            missing.push((*k, m - n, first));
        }
    }
    if extra.is_empty() && missing.is_empty() {
        return None;
    }
    // Show values in the order they appear, which is how a person scans the buffers.
    extra.sort_by_key(|e| e.2);
    missing.sort_by_key(|e| e.2);
    let count = |v: &[(Key, usize, usize)]| v.iter().map(|e| e.1).sum::<usize>();
    let message = format!(
        "`{}` is not a permutation of input `{}`: {} elements missing, {} extra",
        out.name,
        input.name,
        count(&missing),
        count(&extra)
    );
    let mut diff = String::new();
    let mut section = |title: String, items: &[(Key, usize, usize)], buf: &Buffer| {
        if items.is_empty() {
            return;
        }
        diff.push_str(&title);
        diff.push('\n');
        for &(k, n, first) in items.iter().take(MAX_LISTED) {
            let times = if n > 1 {
                format!(" ×{n}")
            } else {
                String::new()
            };
            diff.push_str(&format!(
                "  {}{times} (first at {}[{first}])\n",
                buf.ty.format(k.value()),
                buf.name
            ));
        }
        if items.len() > MAX_LISTED {
            diff.push_str(&format!(
                "  ... and {} more values\n",
                items.len() - MAX_LISTED
            ));
        }
    };
    section(
        format!("missing from `{}` (in input `{}`):", out.name, input.name),
        &missing,
        input,
    );
    section(format!("extra in `{}`:", out.name), &extra, out);
    Some(Mismatch { message, diff })
}

pub(crate) fn check_unique(buf: &Buffer) -> Option<Mismatch> {
    let mut positions: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for (i, v) in buf.values().enumerate() {
        positions.entry(Key::of(v)).or_default().push(i);
    }
    let mut dups: Vec<(Key, Vec<usize>)> = positions
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .collect();
    if dups.is_empty() {
        return None;
    }
    dups.sort_by_key(|d| d.1[0]);
    let surplus: usize = dups.iter().map(|d| d.1.len() - 1).sum();
    let message = format!(
        "{} values occur more than once in `{}` ({surplus} elements too many)",
        dups.len(),
        buf.name
    );
    const MAX_POSITIONS: usize = 4;
    let mut diff = String::new();
    for (k, at) in dups.iter().take(MAX_LISTED) {
        let mut places: Vec<String> = at
            .iter()
            .take(MAX_POSITIONS)
            .map(|i| format!("{}[{i}]", buf.name))
            .collect();
        if at.len() > MAX_POSITIONS {
            places.push(format!("... ({} times)", at.len()));
        }
        diff.push_str(&format!(
            "{} at {}\n",
            buf.ty.format(k.value()),
            places.join(", ")
        ));
    }
    if dups.len() > MAX_LISTED {
        diff.push_str(&format!(
            "... and {} more repeated values\n",
            dups.len() - MAX_LISTED
        ));
    }
    Some(Mismatch { message, diff })
}

pub(crate) fn check_all_equal(buf: &Buffer, value: Option<Value>) -> Option<Mismatch> {
    let expected = match value {
        Some(v) => v,
        None => buf.value(0)?,
    };
    let mut m = diff_elements(
        &buf.name,
        buf.ty,
        buf.len(),
        |_| expected,
        |i| buf.value(i).unwrap_or(Value::Int(0)),
        Tolerance::EXACT,
    )?;
    let source = if value.is_some() {
        String::new()
    } else {
        " (element 0)".to_string()
    };
    m.message = format!(
        "not all equal to {}{source}: {}",
        buf.ty.format(expected),
        m.message
    );
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_are_exact_for_integers_and_compensated_for_floats() {
        let big = Buffer::from_elems("a", &[u64::MAX, u64::MAX, 2]);
        assert_eq!(sum(&big), Value::Int(2 * u64::MAX as i128 + 2));
        let floats = Buffer::from_elems("f", &[1e16, 1.0, -1e16, 1.0]);
        assert_eq!(sum(&floats), Value::Float(2.0));
        let inf = Buffer::from_elems("f", &[f64::INFINITY, 1.0]);
        assert_eq!(sum(&inf), Value::Float(f64::INFINITY));
        let empty = Buffer::from_elems::<f32>("f", &[]);
        assert_eq!(sum(&empty), Value::Float(0.0));
    }

    #[test]
    fn sorted_edge_cases() {
        assert!(check_sorted(&Buffer::from_elems::<u8>("a", &[]), false).is_none());
        assert!(check_sorted(&Buffer::from_elems("a", &[1u8]), false).is_none());
        assert!(check_sorted(&Buffer::from_elems("a", &[1u8, 1, 2]), false).is_none());
        assert!(check_sorted(&Buffer::from_elems("a", &[-0.0f32, 0.0, -0.0]), false).is_none());
        assert!(check_sorted(&Buffer::from_elems("a", &[1.0f32, f32::NAN]), false).is_some());
        assert!(check_sorted(&Buffer::from_elems("a", &[3i32, 2, 2, -1]), true).is_none());
    }
}
