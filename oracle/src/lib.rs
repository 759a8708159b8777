//! Judging a kernel execution's outputs: does this run look like a correct one?
//!
//! A campaign lists one or more oracles; [`judge`] runs them in order over an execution's
//! [`Outputs`] and the first that fails decides the [`Judgement`]. This crate only looks at
//! buffers: it never runs kernels (the `sc` golden run is the caller's), which keeps the
//! split LibAFL draws between running, observing and judging.
//!
//! A wrong output is shown compactly: the first few differing elements with their indices
//! (`c[3]: expected 1024, got 1020`), a line diff of a small window around the first
//! difference, and a count of all differences. Floats compare equal when
//! `|got - expected| <= abs + rel * |expected|`; NaN equals NaN, `-0.0` equals `0.0`,
//! and `inf` equals only `inf`. Expected values are first rounded to the buffer's
//! element type, so `values = [0.1]` for an `f32` buffer means `0.1f32`.
//!
//! An [`OracleError`] (a missing buffer, a bad spec, an unreadable file, a judge program
//! that hangs) means the oracle could not judge: it is never a verdict about the kernel.
//!
//! # Campaign syntax
//!
//! Each `[[oracle]]` table is one [`OracleSpec`], tagged by `type`; unknown keys are
//! errors that name the key. Buffer names refer to the campaign's buffers.
//!
//! ```toml
//! # Compare with the sc (unbuffered) run of the same inputs: all buffers, or some.
//! [[oracle]]
//! type = "golden"
//! buffers = ["c"]          # optional; default: every output buffer
//! abs = 1e-6               # optional float tolerance, default 0
//! rel = 1e-5               # optional, default 0
//!
//! # Exact values, inline ...
//! [[oracle]]
//! type = "expect"
//! buffer = "counts"
//! values = [1, 2, 3, "0xffffffffffffffff"]   # strings for u64 values above i64::MAX
//!
//! # ... or from a file, relative to the campaign file: .npy; .txt/.csv/.tsv of numbers;
//! # any other extension is raw little-endian elements of the buffer's type.
//! [[oracle]]
//! type = "expect"
//! buffer = "y"
//! file = "expected/y.npy"
//! rel = 1e-6
//!
//! # Invariants over one buffer; `check` is tagged by `kind`.
//! [[oracle]]
//! type = "invariant"
//! buffer = "out"
//! check = { kind = "sorted" }                       # or descending = true
//!
//! [[oracle]]
//! type = "invariant"
//! buffer = "total"
//! check = { kind = "sum", equals = 4950 }           # exact for integers
//!
//! [[oracle]]
//! type = "invariant"
//! buffer = "hist"
//! check = { kind = "sum", equals_input = "data", rel = 1e-6 }  # = sum of an input's initial contents
//!
//! [[oracle]]
//! type = "invariant"
//! buffer = "keys"
//! check = { kind = "permutation-of", input = "keys" }  # same multiset as the initial contents
//!
//! [[oracle]]
//! type = "invariant"
//! buffer = "ids"
//! check = { kind = "unique" }
//!
//! [[oracle]]
//! type = "invariant"
//! buffer = "flags"
//! check = { kind = "all-equal", value = 1 }         # value optional: then all equal element 0
//!
//! # An external judge: exit 0 passes. See the `command` module for the files it gets.
//! [[oracle]]
//! type = "command"
//! argv = ["python3", "check.py", "{manifest}"]      # no shell; {dir} works too
//! timeout_ms = 5000                                  # default 10000; exceeding it is an error
//! ```
//!
//! The same in Rust:
//!
//! ```
//! use fencehound_oracle::{judge, Buffer, Context, Judgement, OracleSpec, Outputs};
//!
//! #[derive(serde::Deserialize)]
//! struct Campaign { oracle: Vec<OracleSpec> }
//! let campaign: Campaign = toml::from_str(r#"
//!     [[oracle]]
//!     type = "invariant"
//!     buffer = "out"
//!     check = { kind = "sorted" }
//! "#).unwrap();
//!
//! let outputs = Outputs::new(vec![Buffer::from_elems("out", &[1u32, 3, 2])]);
//! let cx = Context {
//!     outputs: &outputs,
//!     inputs: &Outputs::default(),
//!     golden: None,
//!     base_dir: std::path::Path::new("."),
//! };
//! match judge(&campaign.oracle, &cx).unwrap() {
//!     Judgement::Fail(f) => assert_eq!(f.oracle, "invariant(out: sorted)"),
//!     Judgement::Pass => unreachable!(),
//! }
//! ```

pub mod command;
pub mod compare;
mod error;
pub mod expect;
mod invariant;
pub mod npy;
pub mod process;
mod spec;
mod types;

use std::path::Path;

use serde::Serialize;

pub use compare::Tolerance;
pub use error::{BufferSet, OracleError};
pub use npy::{read_npy, NpyArray, NpyError, NpyFile};
pub use spec::{Invariant, OracleSpec, TextCheck, DEFAULT_COMMAND_TIMEOUT_MS};
pub use types::{Buffer, Elem, ElemType, Outputs, Value};

/// What an oracle gets to look at.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The execution's buffers after its last launch.
    pub outputs: &'a Outputs,
    /// The buffers' initial contents (for `sum.equals_input`, `permutation-of`, `command`).
    pub inputs: &'a Outputs,
    /// The `sc` (unbuffered) run's outputs; required when [`needs_golden`] says so.
    pub golden: Option<&'a Outputs>,
    /// The campaign file's directory: relative `expect` files and `command` programs
    /// are resolved from here (the command runs in it). Empty means the current directory.
    pub base_dir: &'a Path,
}

/// The verdict of the oracles on one execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Judgement {
    Pass,
    Fail(Failure),
}

/// Why an execution's outputs are wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// Which oracle failed, e.g. `golden(c)`, `invariant(out: sorted)`.
    pub oracle: String,
    /// One line: what is wrong, e.g. `3 of 1024 elements differ (first at index 3)`.
    pub message: String,
    /// Several lines showing it (element list and window diff, or a judge's output tail).
    pub diff: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}: {}", self.oracle, self.message)?;
        f.write_str(&self.diff)
    }
}

/// Whether any spec compares with the golden (`sc`) run, so the caller must provide it.
pub fn needs_golden(specs: &[OracleSpec]) -> bool {
    specs.iter().any(|s| matches!(s, OracleSpec::Golden { .. }))
}

/// Judges one execution. Every spec is validated first (so a bad spec is an error even
/// when an earlier oracle would fail); then they run in order and the first failure is
/// the judgement. All must pass for [`Judgement::Pass`].
pub fn judge(specs: &[OracleSpec], cx: &Context<'_>) -> Result<Judgement, OracleError> {
    for spec in specs {
        spec.validate()?;
    }
    for spec in specs {
        if let Some(failure) = judge_one(spec, cx)? {
            return Ok(Judgement::Fail(failure));
        }
    }
    Ok(Judgement::Pass)
}

/// Runs one spec (assumed valid): `None` when it passes.
fn judge_one(spec: &OracleSpec, cx: &Context<'_>) -> Result<Option<Failure>, OracleError> {
    let oracle = spec.describe();
    let lookup = |set: BufferSet, name: &str| -> Result<&Buffer, OracleError> {
        let outputs = match set {
            BufferSet::Outputs => cx.outputs,
            BufferSet::Inputs => cx.inputs,
            BufferSet::Golden => cx.golden.ok_or_else(|| OracleError::NoGoldenRun {
                oracle: oracle.clone(),
            })?,
        };
        let buf = outputs
            .get(name)
            .ok_or_else(|| OracleError::MissingBuffer {
                oracle: oracle.clone(),
                name: name.to_string(),
                set,
            })?;
        buf.check_whole()?;
        Ok(buf)
    };
    let fail = |oracle: String, m: compare::Mismatch| Failure {
        oracle,
        message: m.message,
        diff: m.diff,
    };

    match spec {
        OracleSpec::Golden { buffers, abs, rel } => {
            if cx.golden.is_none() {
                return Err(OracleError::NoGoldenRun { oracle });
            }
            let names: Vec<&str> = match buffers {
                Some(names) => names.iter().map(String::as_str).collect(),
                None => cx.outputs.buffers.iter().map(|b| b.name.as_str()).collect(),
            };
            let tol = Tolerance {
                abs: *abs,
                rel: *rel,
            };
            for name in names {
                let got = lookup(BufferSet::Outputs, name)?;
                let want = lookup(BufferSet::Golden, name)?;
                let oracle = format!("golden({name})");
                if got.ty != want.ty || got.len() != want.len() {
                    return Err(OracleError::ShapeMismatch {
                        oracle,
                        what: format!(
                            "output is {} × {}, the golden run's is {} × {}",
                            got.len(),
                            got.ty,
                            want.len(),
                            want.ty
                        ),
                    });
                }
                let m = compare::diff_elements(
                    name,
                    got.ty,
                    got.len(),
                    |i| want.value(i).unwrap_or(Value::Int(0)),
                    |i| got.value(i).unwrap_or(Value::Int(0)),
                    tol,
                );
                if let Some(m) = m {
                    return Ok(Some(fail(oracle, m)));
                }
            }
            Ok(None)
        }
        OracleSpec::Expect {
            buffer,
            values,
            file,
            abs,
            rel,
        } => {
            let got = lookup(BufferSet::Outputs, buffer)?;
            let raw = match (values, file) {
                (Some(values), _) => values.clone(),
                (None, Some(file)) => {
                    expect::read_values(&oracle, &cx.base_dir.join(file), got.ty)?
                }
                (None, None) => Vec::new(), // rejected by validate()
            };
            if raw.len() != got.len() {
                return Err(OracleError::ShapeMismatch {
                    oracle,
                    what: format!(
                        "{} expected values for buffer `{buffer}` of {} elements",
                        raw.len(),
                        got.len()
                    ),
                });
            }
            let mut want = Vec::with_capacity(raw.len());
            for (i, v) in raw.into_iter().enumerate() {
                want.push(
                    got.ty
                        .coerce(v)
                        .map_err(|reason| OracleError::InvalidSpec {
                            oracle: oracle.clone(),
                            reason: format!("expected value {i}: {reason}"),
                        })?,
                );
            }
            let m = compare::diff_elements(
                buffer,
                got.ty,
                got.len(),
                |i| want[i],
                |i| got.value(i).unwrap_or(Value::Int(0)),
                Tolerance {
                    abs: *abs,
                    rel: *rel,
                },
            );
            Ok(m.map(|m| fail(oracle, m)))
        }
        OracleSpec::Invariant { buffer, check } => {
            let got = lookup(BufferSet::Outputs, buffer)?;
            let m = match check {
                Invariant::Sum {
                    equals,
                    equals_input,
                    abs,
                    rel,
                } => {
                    let (expected, label) = match (equals, equals_input) {
                        (Some(v), _) => (*v, "given".to_string()),
                        (None, Some(input)) => (
                            invariant::sum(lookup(BufferSet::Inputs, input)?),
                            format!("sum of input `{input}`"),
                        ),
                        (None, None) => return Ok(None), // rejected by validate()
                    };
                    invariant::check_sum(
                        got,
                        expected,
                        &label,
                        Tolerance {
                            abs: *abs,
                            rel: *rel,
                        },
                    )
                }
                Invariant::Sorted { descending } => invariant::check_sorted(got, *descending),
                Invariant::PermutationOf { input } => {
                    let input = lookup(BufferSet::Inputs, input)?;
                    if input.len() != got.len() {
                        return Err(OracleError::ShapeMismatch {
                            oracle,
                            what: format!(
                                "`{buffer}` has {} elements, input `{}` has {}: never a permutation",
                                got.len(),
                                input.name,
                                input.len()
                            ),
                        });
                    }
                    invariant::check_permutation(got, input)
                }
                Invariant::Unique {} => invariant::check_unique(got),
                Invariant::AllEqual { value } => {
                    let value = value
                        .map(|v| got.ty.coerce(v))
                        .transpose()
                        .map_err(|reason| OracleError::InvalidSpec {
                            oracle: oracle.clone(),
                            reason,
                        })?;
                    invariant::check_all_equal(got, value)
                }
            };
            Ok(m.map(|m| fail(oracle, m)))
        }
        OracleSpec::Command { argv, timeout_ms } => command::run(
            &oracle,
            argv,
            timeout_ms.unwrap_or(DEFAULT_COMMAND_TIMEOUT_MS),
            cx,
        ),
        // Program oracles judge a process, not buffers: see [`process::judge`].
        OracleSpec::Exit { .. }
        | OracleSpec::Stdout { .. }
        | OracleSpec::Stderr { .. }
        | OracleSpec::File { .. } => Err(OracleError::InvalidSpec {
            oracle,
            reason: "judges a program's process; kernel campaigns have buffers instead".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Errors travel through every judgement; keep them small (wasmi pins its error size too).
    #[test]
    fn error_size() {
        assert!(
            std::mem::size_of::<OracleError>() <= 80,
            "{}",
            std::mem::size_of::<OracleError>()
        );
    }
}
