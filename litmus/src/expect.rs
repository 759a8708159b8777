//! Model verdicts (`expected-ptx-v7.5.csv`: `PATH,0|1`) and judging outcomes against them.
//!
//! Each test has one *target* outcome: a final state satisfying the condition for
//! `exists`/`~exists`, violating it for `forall`. The verdict says whether the PTX model
//! allows the target:
//!
//! | quantifier | verdict 1 | verdict 0 |
//! |---|---|---|
//! | `exists C` | target allowed | target forbidden |
//! | `~exists C` | target forbidden | target allowed |
//! | `forall C` | target forbidden | target allowed |
//!
//! Producing a forbidden target is **unsound**. Producing an allowed target is **power**;
//! a target counts as *non-SC* when the `sc` model (no buffering, every interleaving the
//! schedulers try) never produced it in the same run.

use crate::ast::{LitmusTest, Quantifier, Var};
use crate::error::LitmusError;
use crate::run::{ExecParams, Histogram};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Default)]
pub struct Expectations {
    /// `(path as written in the CSV, verdict)`.
    pub entries: Vec<(String, bool)>,
}

impl Expectations {
    pub fn load(path: &Path) -> Result<Expectations, LitmusError> {
        let text = std::fs::read_to_string(path).map_err(|source| LitmusError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    pub fn parse(name: &str, text: &str) -> Result<Expectations, LitmusError> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let Some((p, v)) = l.rsplit_once(',') else {
                return Err(LitmusError::Expect {
                    path: name.into(),
                    line: n + 1,
                    message: format!("expected `PATH,0|1`, found `{l}`"),
                });
            };
            let v = match v.trim() {
                "1" => true,
                "0" => false,
                other => {
                    return Err(LitmusError::Expect {
                        path: name.into(),
                        line: n + 1,
                        message: format!("verdict `{other}` is not 0 or 1"),
                    })
                }
            };
            entries.push((p.trim().to_string(), v));
        }
        Ok(Expectations { entries })
    }

    /// The verdict for `file`: the entry whose path is the longest suffix of it (at a
    /// path-component boundary).
    pub fn verdict(&self, file: &Path) -> Option<bool> {
        let f = file.to_string_lossy().replace('\\', "/");
        self.entries
            .iter()
            .filter(|(p, _)| f == *p || f.ends_with(&format!("/{p}")))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, v)| *v)
    }
}

/// Whether the model allows the target outcome, from the quantifier and the verdict.
pub fn target_allowed(q: Quantifier, verdict: bool) -> bool {
    match q {
        Quantifier::Exists => verdict,
        Quantifier::NotExists | Quantifier::Forall => !verdict,
    }
}

/// Is this final state the test's target outcome?
pub fn is_target(test: &LitmusTest, state: &[i64]) -> bool {
    let vars = test.observed();
    let get = |v: &Var| {
        vars.iter()
            .position(|x| x == v)
            .and_then(|i| state.get(i).copied())
            .unwrap_or(0)
    };
    let holds = test.condition.cond.eval(&get);
    match test.condition.quantifier {
        Quantifier::Exists | Quantifier::NotExists => holds,
        Quantifier::Forall => !holds,
    }
}

/// Does the final state satisfy the condition (what herd prints as `*`)?
pub fn holds(test: &LitmusTest, state: &[i64]) -> bool {
    let vars = test.observed();
    let get = |v: &Var| {
        vars.iter()
            .position(|x| x == v)
            .and_then(|i| state.get(i).copied())
            .unwrap_or(0)
    };
    test.condition.cond.eval(&get)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No verdict for this file.
    Unknown,
    /// The target is allowed and was produced.
    Reached,
    /// The target is allowed and was not produced.
    Missed,
    /// The target is forbidden and was not produced.
    Sound,
    /// The target is forbidden and was produced: a false alarm.
    Unsound,
}

#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    /// Executions whose final state is the target.
    pub target_count: u64,
    pub allowed: Option<bool>,
    pub verdict: Verdict,
    /// Executions that produced a forbidden target.
    pub unsound: u64,
    /// One forbidden final state and the execution that produced it first.
    pub unsound_example: Option<(Vec<i64>, ExecParams)>,
}

pub fn judge(test: &LitmusTest, h: &Histogram, verdict: Option<bool>) -> Judgement {
    let mut target_count = 0;
    let mut first: Option<(Vec<i64>, ExecParams)> = None;
    for (state, (n, ep)) in &h.states {
        if is_target(test, state) {
            target_count += n;
            if first.as_ref().is_none_or(|f| ep.index < f.1.index) {
                first = Some((state.clone(), ep.clone()));
            }
        }
    }
    let allowed = verdict.map(|v| target_allowed(test.condition.quantifier, v));
    let (v, unsound, example) = match allowed {
        None => (Verdict::Unknown, 0, None),
        Some(true) if target_count > 0 => (Verdict::Reached, 0, None),
        Some(true) => (Verdict::Missed, 0, None),
        Some(false) if target_count > 0 => (Verdict::Unsound, target_count, first),
        Some(false) => (Verdict::Sound, 0, None),
    };
    Judgement {
        target_count,
        allowed,
        verdict: v,
        unsound,
        unsound_example: example,
    }
}
