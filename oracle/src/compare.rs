//! Element-wise comparison and the diff text a wrong output is shown with.
//!
//! A diff lists the first [`MAX_LISTED`] differing elements as `c[3]: expected 1024, got
//! 1020`, then a line-diff (via `similar`) of a small window of elements around the first
//! difference, so a shifted or swapped run of values is easy to see. Elements that differ
//! in text but are equal within tolerance are shown as context, with both values.

use similar::{ChangeTag, TextDiff};

use crate::{ElemType, Value};

/// How many differing elements a diff lists one by one.
pub const MAX_LISTED: usize = 8;
/// How many elements before the first difference the window shows.
const WINDOW_BEFORE: usize = 3;
/// How many elements from the first difference on the window shows.
const WINDOW_FROM: usize = 8;

/// Float tolerance: `|got - expected| <= abs + rel * |expected|`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Tolerance {
    pub const EXACT: Tolerance = Tolerance { abs: 0.0, rel: 0.0 };

    pub fn is_exact(self) -> bool {
        self.abs == 0.0 && self.rel == 0.0
    }

    /// Whether `got` matches `expected`. Equal values always match (so `-0.0` matches
    /// `0.0` and `inf` matches `inf`), NaN matches NaN and nothing else, and integers are
    /// compared exactly unless a tolerance is given.
    pub fn matches(self, got: Value, expected: Value) -> bool {
        if let (Value::Int(g), Value::Int(e)) = (got, expected) {
            if g == e {
                return true;
            }
            if self.is_exact() {
                return false;
            }
            let diff = match g.checked_sub(e) {
                Some(d) => d.unsigned_abs() as f64,
                None => (g as f64 - e as f64).abs(),
            };
            return diff <= self.abs + self.rel * (e as f64).abs();
        }
        let (g, e) = (got.as_f64(), expected.as_f64());
        if g == e || (g.is_nan() && e.is_nan()) {
            return true;
        }
        // An infinity or NaN that is not equal is never close: `rel * |inf|` would
        // otherwise make anything match an expected infinity.
        !self.is_exact()
            && g.is_finite()
            && e.is_finite()
            && (g - e).abs() <= self.abs + self.rel * e.abs()
    }
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "abs {:?}, rel {:?}", self.abs, self.rel)
    }
}

/// A found mismatch: one-line summary and the diff text.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub message: String,
    pub diff: String,
}

/// Compares `got` with `expected` element by element (both `len` long, formatted as `ty`)
/// and describes the differences; `None` when all match.
pub fn diff_elements(
    name: &str,
    ty: ElemType,
    len: usize,
    expected: impl Fn(usize) -> Value,
    got: impl Fn(usize) -> Value,
    tol: Tolerance,
) -> Option<Mismatch> {
    let mut count = 0usize;
    let mut listed = Vec::new();
    for i in 0..len {
        if !tol.matches(got(i), expected(i)) {
            count += 1;
            if listed.len() < MAX_LISTED {
                listed.push(i);
            }
        }
    }
    let first = *listed.first()?;

    let mut diff = String::new();
    for &i in &listed {
        diff.push_str(&format!(
            "{name}[{i}]: expected {}, got {}\n",
            ty.format(expected(i)),
            ty.format(got(i))
        ));
    }
    if count > listed.len() {
        diff.push_str(&format!("... and {} more\n", count - listed.len()));
    }

    let window = first.saturating_sub(WINDOW_BEFORE)..len.min(first + WINDOW_FROM);
    let mut want_text = String::new();
    let mut got_text = String::new();
    for i in window.clone() {
        let (e, g) = (expected(i), got(i));
        let (es, gs) = (ty.format(e), ty.format(g));
        if es != gs && tol.matches(g, e) {
            let same = format!("{name}[{i}] = {gs}  (expected {es}, matches)\n");
            want_text.push_str(&same);
            got_text.push_str(&same);
        } else {
            want_text.push_str(&format!("{name}[{i}] = {es}\n"));
            got_text.push_str(&format!("{name}[{i}] = {gs}\n"));
        }
    }
    diff.push_str(&window_diff(
        &format!("{name}[{}..{}]", window.start, window.end),
        &want_text,
        &got_text,
    ));

    let mut message = format!(
        "{count} of {len} elements differ (first at index {first})",
        len = len
    );
    if !tol.is_exact() {
        message.push_str(&format!(", tolerance {tol}"));
    }
    Some(Mismatch { message, diff })
}

/// A unified-style diff of two short texts, every line shown (they are a small window),
/// headed by `--- expected` / `+++ got` and the window's range instead of line numbers.
pub fn window_diff(range: &str, expected: &str, got: &str) -> String {
    let mut out = format!("--- expected\n+++ got\n@@ {range} @@\n");
    let diff = TextDiff::from_lines(expected, got);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        out.push(sign);
        out.push_str(change.value());
        if change.missing_newline() {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f64 = f64::NAN;
    const INF: f64 = f64::INFINITY;

    #[test]
    fn tolerance_table() {
        let t = |abs, rel| Tolerance { abs, rel };
        let f = Value::Float;
        let i = Value::Int;
        #[rustfmt::skip]
        let cases: &[(Value, Value, Tolerance, bool)] = &[
            // got, expected, tolerance, matches
            (f(1.0), f(1.0), Tolerance::EXACT, true),
            (f(1.0), f(1.0 + f64::EPSILON), Tolerance::EXACT, false),
            (f(NAN), f(NAN), Tolerance::EXACT, true),
            (f(-NAN), f(NAN), Tolerance::EXACT, true),
            (f(NAN), f(1.0), t(INF, INF), false),
            (f(1.0), f(NAN), t(1.0, 1.0), false),
            (f(-0.0), f(0.0), Tolerance::EXACT, true),
            (f(0.0), f(-0.0), Tolerance::EXACT, true),
            (f(INF), f(INF), Tolerance::EXACT, true),
            (f(INF), f(INF), t(1.0, 0.0), true),
            (f(-INF), f(INF), t(1.0, 1.0), false),
            (f(INF), f(1e308), t(1e300, 1.0), false),
            (f(1e308), f(INF), t(1e300, 1.0), false),
            (f(1e308), f(-1e308), t(INF, 0.0), true),
            (f(-0.0), f(0.0), t(0.0, 1.0), true),
            (f(1.0), f(1.5), t(0.5, 0.0), true),    // boundary is inclusive
            (f(1.0), f(1.5), t(0.499, 0.0), false),
            (f(99.0), f(100.0), t(0.0, 0.01), true), // rel is relative to expected
            (f(100.0), f(99.0), t(0.0, 0.01), false),
            (i(5), i(5), Tolerance::EXACT, true),
            (i(5), i(6), Tolerance::EXACT, false),
            (i(5), i(6), t(1.0, 0.0), true),
            (i(i128::MAX), i(i128::MIN), t(1.0, 0.0), false),
            (i(u64::MAX.into()), i(u64::MAX as i128 - 1), Tolerance::EXACT, false),
            (i(3), f(3.0), Tolerance::EXACT, true),
            (f(3.5), i(3), t(0.5, 0.0), true),
        ];
        for (n, &(got, expected, tol, want)) in cases.iter().enumerate() {
            assert_eq!(
                tol.matches(got, expected),
                want,
                "case {n}: {got:?} vs {expected:?} {tol:?}"
            );
        }
    }

    #[test]
    fn no_diff_when_equal() {
        let v = [1.0, NAN, -0.0];
        let w = [1.0, NAN, 0.0];
        assert_eq!(
            diff_elements(
                "a",
                ElemType::F64,
                3,
                |i| Value::Float(w[i]),
                |i| Value::Float(v[i]),
                Tolerance::EXACT
            ),
            None
        );
    }

    #[test]
    fn empty_diff_is_none() {
        assert_eq!(
            diff_elements(
                "a",
                ElemType::U8,
                0,
                |_| Value::Int(0),
                |_| Value::Int(1),
                Tolerance::EXACT
            ),
            None
        );
    }
}
