//! The oracle checks a campaign declares, as they appear in its `[[oracle]]` tables.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{OracleError, Value};

/// One oracle check. See the crate documentation for the TOML shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum OracleSpec {
    /// Compare with the `sc` (unbuffered) reference run of the same inputs.
    Golden {
        /// Buffers to compare; all output buffers when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        buffers: Option<Vec<String>>,
        #[serde(default)]
        abs: f64,
        #[serde(default)]
        rel: f64,
    },
    /// Exact expected values, inline or from a file (`.npy`; `.txt`/`.csv`/`.tsv` of
    /// numbers; anything else raw little-endian elements of the buffer's type). A relative
    /// path is relative to [`Context::base_dir`](crate::Context::base_dir).
    Expect {
        buffer: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<Vec<Value>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<PathBuf>,
        #[serde(default)]
        abs: f64,
        #[serde(default)]
        rel: f64,
    },
    /// An invariant over one output buffer.
    Invariant { buffer: String, check: Invariant },
    /// An external program judges (exit 0 = pass). See [`crate::command`].
    Command {
        argv: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Program campaigns: the program's exit status (see [`crate::process`]).
    Exit {
        #[serde(default)]
        status: i32,
    },
    /// Program campaigns: the program's standard output.
    Stdout {
        #[serde(flatten)]
        text: TextCheck,
    },
    /// Program campaigns: the program's standard error.
    Stderr {
        #[serde(flatten)]
        text: TextCheck,
    },
    /// Program campaigns: a file the program writes, relative to its working directory.
    File {
        path: PathBuf,
        #[serde(flatten)]
        text: TextCheck,
    },
}

/// How a program's output text is checked: exactly one of `exact` (the whole text),
/// `regex` (matches somewhere; `(?m)^PASS$` for a line) or `golden = true` (equal to the
/// `sc` reference run's).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextCheck {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    #[serde(default)]
    pub golden: bool,
}

/// An invariant over one output buffer, the `check` of an `invariant` oracle; tagged by
/// `kind` (`check = { kind = "sorted", descending = true }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Invariant {
    /// The (mathematical, non-wrapping) sum of the elements equals `equals`, or the sum
    /// of the input buffer `equals_input` (its initial contents); exactly one is given.
    /// Integer sums are exact; float sums are taken in `f64`.
    Sum {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        equals: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        equals_input: Option<String>,
        #[serde(default)]
        abs: f64,
        #[serde(default)]
        rel: f64,
    },
    /// Every adjacent pair is in order (`a[i] <= a[i+1]`, or `>=` when descending);
    /// equal neighbours are fine, a NaN is never in order.
    Sorted {
        #[serde(default)]
        descending: bool,
    },
    /// The output holds the same multiset of values as the input buffer `input`'s initial
    /// contents (values compared bit for bit, except that all NaNs are one value).
    PermutationOf { input: String },
    /// No value occurs twice (same equality as `permutation-of`). A struct variant
    /// (written `Unique {}`) so that unknown keys next to `kind` are still rejected.
    Unique {},
    /// Every element equals `value` (coerced to the buffer's type), or element 0 when
    /// absent. NaN equals NaN, `-0.0` equals `0.0`.
    AllEqual {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
    },
}

impl Invariant {
    /// The `kind` as written in TOML.
    pub fn kind(&self) -> &'static str {
        match self {
            Invariant::Sum { .. } => "sum",
            Invariant::Sorted { .. } => "sorted",
            Invariant::PermutationOf { .. } => "permutation-of",
            Invariant::Unique {} => "unique",
            Invariant::AllEqual { .. } => "all-equal",
        }
    }
}

/// The default `timeout_ms` of a `command` oracle.
pub const DEFAULT_COMMAND_TIMEOUT_MS: u64 = 10_000;

impl OracleSpec {
    /// A short name for reports: `golden`, `expect(c)`, `invariant(out: sorted)`,
    /// `command(python3)`. (A failing golden check names the buffer: `golden(c)`.)
    pub fn describe(&self) -> String {
        match self {
            OracleSpec::Golden { .. } => "golden".to_string(),
            OracleSpec::Expect { buffer, .. } => format!("expect({buffer})"),
            OracleSpec::Invariant { buffer, check } => {
                format!("invariant({buffer}: {})", check.kind())
            }
            OracleSpec::Command { argv, .. } => match argv.first() {
                Some(program) => format!("command({program})"),
                None => "command()".to_string(),
            },
            OracleSpec::Exit { .. } => "exit".to_string(),
            OracleSpec::Stdout { .. } => "stdout".to_string(),
            OracleSpec::Stderr { .. } => "stderr".to_string(),
            OracleSpec::File { path, .. } => format!("file({})", path.display()),
        }
    }

    /// Whether this oracle judges a program's process (exit status, output, files) rather
    /// than a kernel's buffers.
    pub fn is_process(&self) -> bool {
        matches!(
            self,
            OracleSpec::Exit { .. }
                | OracleSpec::Stdout { .. }
                | OracleSpec::Stderr { .. }
                | OracleSpec::File { .. }
        )
    }

    /// Checks what serde cannot: exactly one of `values`/`file`, exactly one of
    /// `equals`/`equals_input`, tolerances that are numbers ≥ 0, a non-empty `argv`, a
    /// non-zero timeout. [`judge`](crate::judge) calls this for every spec first; a
    /// campaign loader should call it too, to reject a bad file before running anything.
    pub fn validate(&self) -> Result<(), OracleError> {
        let invalid = |reason: &str| {
            Err(OracleError::InvalidSpec {
                oracle: self.describe(),
                reason: reason.to_string(),
            })
        };
        let tolerance_ok = |abs: f64, rel: f64| abs >= 0.0 && rel >= 0.0; // false for NaN
        match self {
            OracleSpec::Golden { abs, rel, .. } => {
                if !tolerance_ok(*abs, *rel) {
                    return invalid("`abs` and `rel` must be numbers >= 0");
                }
            }
            OracleSpec::Expect {
                values,
                file,
                abs,
                rel,
                ..
            } => {
                if values.is_some() == file.is_some() {
                    return invalid("give exactly one of `values` and `file`");
                }
                if !tolerance_ok(*abs, *rel) {
                    return invalid("`abs` and `rel` must be numbers >= 0");
                }
            }
            OracleSpec::Invariant { check, .. } => {
                if let Invariant::Sum {
                    equals,
                    equals_input,
                    abs,
                    rel,
                } = check
                {
                    if equals.is_some() == equals_input.is_some() {
                        return invalid("give exactly one of `equals` and `equals_input`");
                    }
                    if !tolerance_ok(*abs, *rel) {
                        return invalid("`abs` and `rel` must be numbers >= 0");
                    }
                }
            }
            OracleSpec::Command { argv, timeout_ms } => {
                if argv.is_empty() {
                    return invalid("`argv` must name a program");
                }
                if *timeout_ms == Some(0) {
                    return invalid("`timeout_ms` must be > 0");
                }
            }
            OracleSpec::Exit { .. } => {}
            OracleSpec::Stdout { text }
            | OracleSpec::Stderr { text }
            | OracleSpec::File { text, .. } => {
                let given =
                    text.exact.is_some() as u8 + text.regex.is_some() as u8 + text.golden as u8;
                if given != 1 {
                    return invalid("give exactly one of `exact`, `regex` and `golden = true`");
                }
                if let Some(r) = &text.regex {
                    if let Err(e) = regex::Regex::new(r) {
                        return invalid(&format!("`regex` does not compile: {e}"));
                    }
                }
            }
        }
        Ok(())
    }
}
