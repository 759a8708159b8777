//! Judging a whole program's run (program campaigns): its exit status, its standard
//! output and error, and files it writes, against fixed expectations or against the `sc`
//! reference run of the same program.
//!
//! ```toml
//! [[oracle]]
//! type = "exit"            # the exit status must be `status` (default 0)
//! status = 0
//!
//! [[oracle]]
//! type = "stdout"          # or "stderr"
//! regex = "(?m)^PASS"      # or exact = "PASS\n", or golden = true (equal to the sc run)
//!
//! [[oracle]]
//! type = "file"            # a file the program writes, relative to its working directory
//! path = "result.txt"
//! golden = true
//! ```
//!
//! A program killed by a signal fails every `exit` oracle; a file the program did not
//! write fails its `file` oracle.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::{Failure, Judgement, OracleError, OracleSpec, TextCheck};

/// What a program run produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessOutputs {
    pub status: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The files the `file` oracles name, as the program left them (`None`: not written).
    pub files: BTreeMap<PathBuf, Option<Vec<u8>>>,
}

/// The paths the `file` oracles of `specs` read.
pub fn files_to_collect(specs: &[OracleSpec]) -> Vec<PathBuf> {
    specs
        .iter()
        .filter_map(|s| match s {
            OracleSpec::File { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

/// Judges one program run; `golden` is the `sc` reference run (needed by `golden = true`).
pub fn judge(
    specs: &[OracleSpec],
    out: &ProcessOutputs,
    golden: Option<&ProcessOutputs>,
) -> Result<Judgement, OracleError> {
    for spec in specs {
        spec.validate()?;
    }
    for spec in specs {
        if let Some(f) = judge_one(spec, out, golden)? {
            return Ok(Judgement::Fail(f));
        }
    }
    Ok(Judgement::Pass)
}

fn judge_one(
    spec: &OracleSpec,
    out: &ProcessOutputs,
    golden: Option<&ProcessOutputs>,
) -> Result<Option<Failure>, OracleError> {
    let oracle = spec.describe();
    let no_golden = || OracleError::NoGoldenRun {
        oracle: oracle.clone(),
    };
    match spec {
        OracleSpec::Exit { status } => Ok(match (out.status, out.signal) {
            (_, Some(sig)) => Some(Failure {
                oracle,
                message: format!("the program was killed by signal {sig}"),
                diff: String::new(),
            }),
            (Some(s), _) if s == *status => None,
            (s, _) => Some(Failure {
                oracle,
                message: format!(
                    "exit status {}, expected {status}",
                    s.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into())
                ),
                diff: String::new(),
            }),
        }),
        OracleSpec::Stdout { text } => {
            let want = match golden {
                Some(g) => Some(g.stdout.as_slice()),
                None if text.golden => return Err(no_golden()),
                None => None,
            };
            Ok(check_text(oracle, text, &out.stdout, want))
        }
        OracleSpec::Stderr { text } => {
            let want = match golden {
                Some(g) => Some(g.stderr.as_slice()),
                None if text.golden => return Err(no_golden()),
                None => None,
            };
            Ok(check_text(oracle, text, &out.stderr, want))
        }
        OracleSpec::File { path, text } => {
            let got = out.files.get(path).cloned().flatten();
            let want = match golden {
                Some(g) => g.files.get(path).cloned().flatten(),
                None if text.golden => return Err(no_golden()),
                None => None,
            };
            match got {
                None => Ok(Some(Failure {
                    oracle,
                    message: format!("the program did not write {}", path.display()),
                    diff: String::new(),
                })),
                Some(g) => Ok(check_text(oracle, text, &g, want.as_deref())),
            }
        }
        _ => Err(OracleError::InvalidSpec {
            oracle,
            reason: "judges buffers; program campaigns use exit, stdout, stderr and file".into(),
        }),
    }
}

/// Checks one text; `golden` is the reference run's text (for `golden = true`).
fn check_text(
    oracle: String,
    check: &TextCheck,
    got: &[u8],
    golden: Option<&[u8]>,
) -> Option<Failure> {
    let got_s = String::from_utf8_lossy(got);
    if let Some(r) = &check.regex {
        // validate() compiled it already; a failure here cannot happen, but is no pass.
        let ok = regex::Regex::new(r)
            .map(|re| re.is_match(&got_s))
            .unwrap_or(false);
        return (!ok).then(|| Failure {
            oracle,
            message: format!("does not match /{r}/"),
            diff: tail(&got_s),
        });
    }
    let want: std::borrow::Cow<'_, str> = match (&check.exact, golden) {
        (Some(e), _) => e.as_str().into(),
        (None, Some(g)) => String::from_utf8_lossy(g),
        (None, None) => return None,
    };
    if want == got_s {
        return None;
    }
    let what = if check.golden {
        "the sc run's"
    } else {
        "the expected"
    };
    let diff = similar::TextDiff::from_lines(want.as_ref(), got_s.as_ref())
        .unified_diff()
        .context_radius(2)
        .header(&format!("expected ({what})"), "got")
        .to_string();
    Some(Failure {
        oracle,
        message: format!("differs from {what} text"),
        diff: diff.lines().take(40).collect::<Vec<_>>().join("\n"),
    })
}

/// The last lines of a text, for messages.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let from = lines.len().saturating_sub(8);
    lines[from..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_text: &str) -> OracleSpec {
        toml::from_str(toml_text).expect("spec")
    }

    #[test]
    fn exit_status_and_signals() {
        let s = [spec("type = \"exit\"")];
        let ok = ProcessOutputs {
            status: Some(0),
            ..Default::default()
        };
        assert_eq!(judge(&s, &ok, None).unwrap(), Judgement::Pass);
        let bad = ProcessOutputs {
            status: Some(1),
            ..Default::default()
        };
        assert!(
            matches!(judge(&s, &bad, None).unwrap(), Judgement::Fail(f) if f.message.contains("exit status 1"))
        );
        let killed = ProcessOutputs {
            signal: Some(11),
            ..Default::default()
        };
        assert!(
            matches!(judge(&s, &killed, None).unwrap(), Judgement::Fail(f) if f.message.contains("signal 11"))
        );
    }

    #[test]
    fn text_exact_regex_and_golden() {
        let out = ProcessOutputs {
            status: Some(0),
            stdout: b"sum = 10\nPASS\n".to_vec(),
            ..Default::default()
        };
        let gold = ProcessOutputs {
            stdout: b"sum = 12\nPASS\n".to_vec(),
            ..out.clone()
        };
        let re = [spec("type = \"stdout\"\nregex = \"(?m)^PASS$\"")];
        assert_eq!(judge(&re, &out, None).unwrap(), Judgement::Pass);
        let exact = [spec("type = \"stdout\"\nexact = \"sum = 10\\nPASS\\n\"")];
        assert_eq!(judge(&exact, &out, None).unwrap(), Judgement::Pass);
        let g = [spec("type = \"stdout\"\ngolden = true")];
        match judge(&g, &out, Some(&gold)).unwrap() {
            Judgement::Fail(f) => assert!(
                f.diff.contains("-sum = 12") && f.diff.contains("+sum = 10"),
                "{}",
                f.diff
            ),
            Judgement::Pass => panic!("differing text passed"),
        }
        assert!(judge(&g, &out, None).is_err());
    }

    #[test]
    fn files_and_bad_specs() {
        let f = [spec("type = \"file\"\npath = \"r.txt\"\nexact = \"1\"")];
        let mut out = ProcessOutputs::default();
        out.files.insert("r.txt".into(), None);
        assert!(
            matches!(judge(&f, &out, None).unwrap(), Judgement::Fail(x) if x.message.contains("did not write"))
        );
        out.files.insert("r.txt".into(), Some(b"1".to_vec()));
        assert_eq!(judge(&f, &out, None).unwrap(), Judgement::Pass);
        let two = spec("type = \"stdout\"\nexact = \"a\"\ngolden = true");
        assert!(two.validate().is_err());
        let bad_re = spec("type = \"stderr\"\nregex = \"(\"");
        assert!(bad_re.validate().is_err());
        // A misspelt key is an error, not an ignored option.
        assert!(toml::from_str::<OracleSpec>("type = \"stdout\"\nregx = \"a\"").is_err());
    }
}
