//! Running many litmus files under several models and summarising soundness and power.

use crate::ast::{Cond, LitmusTest, Operand, Var};
use crate::expect::{holds, judge, Expectations, Judgement, Verdict};
use crate::run::{run_model, ExecParams, RunConfig};
use crate::LitmusError;
use fencehound_handlers::Model;
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize)]
pub struct StateCount {
    /// `(variable, value)` in the order the condition names them.
    pub state: Vec<(String, i64)>,
    pub count: u64,
    /// The condition holds in this state (herd's `*`).
    pub holds: bool,
    /// The first execution that produced it.
    pub first: ExecParams,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    pub model: Model,
    pub runs: u64,
    pub states: Vec<StateCount>,
    pub hangs: u64,
    pub faults: u64,
    pub first_fault: Option<String>,
    /// Executions whose final state satisfies the condition.
    pub satisfied: u64,
    pub judgement: Judgement,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum FileStatus {
    Ran {
        name: String,
        condition: String,
        /// The verdict used: the axiomatic checker's, else `--expect`'s, if any.
        verdict: Option<bool>,
        /// The axiomatic checker's verdict ([`crate::axiom`]).
        checker: Option<bool>,
        /// Why the checker has no verdict.
        checker_error: Option<String>,
        /// The verdict `--expect` gives, if any (a cross-check of the checker).
        expected: Option<bool>,
        /// The checker judged every final state, not only the target: it enumerated all
        /// allowed states (no loop was cut at its bound).
        all_states: bool,
        /// Whether the model allows the target outcome.
        target_allowed: Option<bool>,
        /// The target was produced by the `sc` model (so it is not a weak behaviour).
        sc_reachable: Option<bool>,
        models: Vec<ModelReport>,
    },
    Unsupported {
        message: String,
    },
    Error {
        message: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub file: String,
    #[serde(flatten)]
    pub status: FileStatus,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelSummary {
    pub model: String,
    pub executions: u64,
    pub hangs: u64,
    pub faults: u64,
    pub unsound_executions: u64,
    pub unsound_tests: Vec<String>,
    /// Tests whose target is allowed and not SC-reachable, and which of them we produced.
    pub weak_targets_reached: Vec<String>,
    pub weak_targets_missed: Vec<String>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub files: usize,
    pub ran: usize,
    pub unsupported: Vec<String>,
    pub errors: Vec<String>,
    pub without_verdict: Vec<String>,
    /// Files where the checker and `--expect` disagree.
    pub disagreements: Vec<String>,
    /// Files the checker does not take, with the reason.
    pub checker_unsupported: Vec<String>,
    /// Tests whose target the model allows and the `sc` model also produced.
    pub sc_targets: Vec<String>,
    /// Tests whose target the model allows and `sc` never produced.
    pub weak_targets: Vec<String>,
    pub models: Vec<ModelSummary>,
    pub seconds: f64,
}

impl Summary {
    pub fn unsound(&self) -> u64 {
        self.models.iter().map(|m| m.unsound_executions).sum()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    pub files: Vec<FileReport>,
    pub summary: Summary,
}

/// Expands directories into the `.litmus` files below them (sorted); files stay as given.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LitmusError> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), LitmusError> {
        let rd = std::fs::read_dir(p).map_err(|source| LitmusError::Io {
            path: p.display().to_string(),
            source,
        })?;
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                walk(&e, out)?;
            } else if e.extension().is_some_and(|x| x == "litmus") {
                out.push(e);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Renders a condition the way the dialect writes it.
pub fn show_cond(c: &Cond) -> String {
    fn op(o: &Operand) -> String {
        match o {
            Operand::Var(v) => v.to_string(),
            Operand::Const(c) => c.to_string(),
        }
    }
    match c {
        Cond::True => "true".into(),
        Cond::False => "false".into(),
        Cond::Eq(a, b) => format!("{} == {}", op(a), op(b)),
        Cond::Ne(a, b) => format!("{} != {}", op(a), op(b)),
        Cond::Not(x) => format!("~({})", show_cond(x)),
        Cond::And(a, b) => format!("({} /\\ {})", show_cond(a), show_cond(b)),
        Cond::Or(a, b) => format!("({} \\/ {})", show_cond(a), show_cond(b)),
    }
}

/// Runs one parsed test under `models`, judging only its target against `verdict`.
pub fn run_test(
    file: &str,
    test: &LitmusTest,
    models: &[Model],
    cfg: &RunConfig,
    verdict: Option<bool>,
) -> FileStatus {
    run_test_with(file, test, models, cfg, verdict, None)
}

/// Runs one parsed test under `models`. With `allowed` (every final state the PTX model
/// allows, over [`LitmusTest::observed`]) any other state produced is unsound, not only
/// a forbidden target.
pub fn run_test_with(
    file: &str,
    test: &LitmusTest,
    models: &[Model],
    cfg: &RunConfig,
    verdict: Option<bool>,
    allowed: Option<&std::collections::BTreeSet<Vec<i64>>>,
) -> FileStatus {
    let low = match crate::lower::lower_with(file, test, cfg.layout) {
        Ok(l) => l,
        Err(e) if e.is_unsupported() => {
            return FileStatus::Unsupported {
                message: e.to_string(),
            }
        }
        Err(e) => {
            return FileStatus::Error {
                message: e.to_string(),
            }
        }
    };
    let vars: Vec<Var> = test.observed();
    let mut reports = Vec::new();
    for &m in models {
        let t0 = std::time::Instant::now();
        let h = run_model(test, &low, m, cfg);
        let mut j = judge(test, &h, verdict);
        if let Some(a) = allowed {
            for (st, (n, ep)) in &h.states {
                let counted = j.verdict == Verdict::Unsound && crate::expect::is_target(test, st);
                if !a.contains(st) && !counted {
                    j.unsound += n;
                    j.verdict = Verdict::Unsound;
                    if j.unsound_example
                        .as_ref()
                        .is_none_or(|e| ep.index < e.1.index)
                    {
                        j.unsound_example = Some((st.clone(), ep.clone()));
                    }
                }
            }
        }
        let states: Vec<StateCount> = h
            .states
            .iter()
            .map(|(st, (n, ep))| StateCount {
                state: vars
                    .iter()
                    .map(|v| v.to_string())
                    .zip(st.iter().copied())
                    .collect(),
                count: *n,
                holds: holds(test, st),
                first: ep.clone(),
            })
            .collect();
        reports.push(ModelReport {
            model: m,
            runs: cfg.runs,
            satisfied: states.iter().filter(|s| s.holds).map(|s| s.count).sum(),
            states,
            hangs: h.hangs,
            faults: h.faults,
            first_fault: h.first_fault.map(|f| f.0),
            judgement: j,
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    let target_allowed =
        verdict.map(|v| crate::expect::target_allowed(test.condition.quantifier, v));
    let sc_reachable = reports
        .iter()
        .find(|r| r.model == Model::Sc)
        .map(|r| r.judgement.target_count > 0);
    FileStatus::Ran {
        name: test.name.clone(),
        condition: format!(
            "{} ({})",
            test.condition.quantifier.name(),
            show_cond(&test.condition.cond)
        ),
        verdict,
        checker: None,
        checker_error: None,
        expected: None,
        all_states: allowed.is_some(),
        target_allowed,
        sc_reachable,
        models: reports,
    }
}

/// Runs every file. `progress` is called after each file.
pub fn run_suite(
    files: &[PathBuf],
    models: &[Model],
    cfg: &RunConfig,
    expect: Option<&Expectations>,
    mut progress: impl FnMut(&FileReport),
) -> SuiteReport {
    let t0 = std::time::Instant::now();
    let mut out = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let expected = expect.and_then(|e| e.verdict(f));
        let status = match crate::load(f) {
            Ok(t) => {
                // The axiomatic checker is the verdict source; `--expect` cross-checks it.
                let (checker, allowed, checker_error) =
                    match crate::axiom::verdict(&t, &crate::axiom::Options::default()) {
                        Ok(v) => {
                            let all = (!v.outcomes.cut).then_some(v.outcomes.allowed);
                            (Some(v.holds), all, None)
                        }
                        Err(e) => (None, None, Some(e.to_string())),
                    };
                let verdict = checker.or(expected);
                let mut st = run_test_with(&name, &t, models, cfg, verdict, allowed.as_ref());
                if let FileStatus::Ran {
                    checker: c,
                    checker_error: ce,
                    expected: x,
                    ..
                } = &mut st
                {
                    *c = checker;
                    *ce = checker_error;
                    *x = expected;
                }
                st
            }
            Err(e) if e.is_unsupported() => FileStatus::Unsupported {
                message: e.to_string(),
            },
            Err(e) => FileStatus::Error {
                message: e.to_string(),
            },
        };
        let r = FileReport { file: name, status };
        progress(&r);
        out.push(r);
    }
    let summary = summarize(&out, models, expect.is_some(), t0.elapsed().as_secs_f64());
    SuiteReport {
        files: out,
        summary,
    }
}

fn summarize(files: &[FileReport], models: &[Model], have_expect: bool, seconds: f64) -> Summary {
    let mut s = Summary {
        files: files.len(),
        seconds,
        models: models
            .iter()
            .map(|m| ModelSummary {
                model: m.name().into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    for f in files {
        match &f.status {
            FileStatus::Unsupported { message } => s.unsupported.push(message.clone()),
            FileStatus::Error { message } => s.errors.push(message.clone()),
            FileStatus::Ran {
                checker,
                checker_error,
                expected,
                target_allowed,
                sc_reachable,
                models: reps,
                ..
            } => {
                s.ran += 1;
                if have_expect && expected.is_none() {
                    s.without_verdict.push(f.file.clone());
                }
                if let (Some(c), Some(x)) = (checker, expected) {
                    if c != x {
                        s.disagreements.push(format!(
                            "{}: the checker says {}, --expect says {}",
                            f.file, *c as u8, *x as u8
                        ));
                    }
                }
                if let Some(e) = checker_error {
                    s.checker_unsupported.push(e.clone());
                }
                // Without an `sc` run we cannot tell weak targets apart: count all.
                let weak = *target_allowed == Some(true) && *sc_reachable != Some(true);
                if *target_allowed == Some(true) {
                    if weak {
                        s.weak_targets.push(f.file.clone());
                    } else {
                        s.sc_targets.push(f.file.clone());
                    }
                }
                for (ms, r) in s.models.iter_mut().zip(reps) {
                    ms.executions += r.runs;
                    ms.hangs += r.hangs;
                    ms.faults += r.faults;
                    ms.seconds += r.seconds;
                    ms.unsound_executions += r.judgement.unsound;
                    if r.judgement.verdict == Verdict::Unsound {
                        ms.unsound_tests.push(f.file.clone());
                    }
                    if weak {
                        if r.judgement.verdict == Verdict::Reached {
                            ms.weak_targets_reached.push(f.file.clone());
                        } else {
                            ms.weak_targets_missed.push(f.file.clone());
                        }
                    }
                }
            }
        }
    }
    s
}

/// The human-readable report of one file (herd/litmus7 style histogram).
pub fn render_file(r: &FileReport, verbose: bool) -> String {
    let mut o = String::new();
    match &r.status {
        FileStatus::Unsupported { message } => {
            let _ = writeln!(o, "{}: UNSUPPORTED: {message}", r.file);
        }
        FileStatus::Error { message } => {
            let _ = writeln!(o, "{}: ERROR: {message}", r.file);
        }
        FileStatus::Ran {
            name,
            condition,
            verdict,
            checker,
            checker_error,
            expected,
            all_states,
            target_allowed,
            sc_reachable,
            models,
        } => {
            let source = if checker.is_some() {
                "the checker"
            } else {
                "--expect"
            };
            let model_says = match target_allowed {
                Some(true) => format!("target allowed by the PTX model ({source})"),
                Some(false) => format!("target forbidden by the PTX model ({source})"),
                None => "no model verdict".to_string(),
            };
            let _ = writeln!(
                o,
                "Test {name} ({}): {condition} — {model_says}{}{}",
                r.file,
                match (verdict, sc_reachable) {
                    (Some(_), Some(true)) if *target_allowed == Some(true) => ", SC-reachable",
                    (Some(_), Some(false)) if *target_allowed == Some(true) => ", not SC-reachable",
                    _ => "",
                },
                if *all_states {
                    "; every state judged"
                } else {
                    ""
                }
            );
            if let Some(e) = checker_error {
                let _ = writeln!(o, "  checker: {e}");
            }
            if let (Some(c), Some(x)) = (checker, expected) {
                if c != x {
                    let _ = writeln!(
                        o,
                        "  DISAGREEMENT: the checker's verdict is {}, --expect says {}",
                        *c as u8, *x as u8
                    );
                }
            }
            for m in models {
                let obs = if m.satisfied == 0 {
                    "Never"
                } else if m.satisfied == m.runs {
                    "Always"
                } else {
                    "Sometimes"
                };
                let _ = writeln!(
                    o,
                    "  {:<8} Observation {obs} {} {}  states {}  hangs {}  faults {}  [{}]",
                    m.model.name(),
                    m.satisfied,
                    m.runs - m.satisfied,
                    m.states.len(),
                    m.hangs,
                    m.faults,
                    match m.judgement.verdict {
                        Verdict::Unknown => "no verdict",
                        Verdict::Reached => "reached",
                        Verdict::Missed => "missed",
                        Verdict::Sound => "ok",
                        Verdict::Unsound => "UNSOUND",
                    }
                );
                if verbose || m.judgement.verdict == Verdict::Unsound {
                    for st in &m.states {
                        let vals: Vec<String> =
                            st.state.iter().map(|(k, v)| format!("{k}={v};")).collect();
                        let _ = writeln!(
                            o,
                            "    {:>8}{} {}",
                            st.count,
                            if st.holds { "*>" } else { ":>" },
                            vals.join(" ")
                        );
                    }
                    if let Some(f) = &m.first_fault {
                        let _ = writeln!(o, "    first fault: {f}");
                    }
                }
                if let Some((st, ep)) = &m.judgement.unsound_example {
                    let _ = writeln!(
                        o,
                        "    UNSOUND: forbidden state {st:?} first produced by execution {} (seed {}, {}, p_w {})",
                        ep.index, ep.seed, ep.scheduler, ep.p_w
                    );
                }
            }
        }
    }
    o
}

pub fn render_summary(s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n{} files: {} ran, {} unsupported, {} errors ({:.1} s)",
        s.files,
        s.ran,
        s.unsupported.len(),
        s.errors.len(),
        s.seconds
    );
    for u in &s.unsupported {
        let _ = writeln!(o, "  unsupported: {u}");
    }
    for e in &s.errors {
        let _ = writeln!(o, "  error: {e}");
    }
    for w in &s.without_verdict {
        let _ = writeln!(o, "  no verdict in --expect: {w}");
    }
    for c in &s.checker_unsupported {
        let _ = writeln!(o, "  not taken by the checker: {c}");
    }
    if !s.disagreements.is_empty() {
        let _ = writeln!(
            o,
            "{} disagreements between the checker and --expect:",
            s.disagreements.len()
        );
        for d in &s.disagreements {
            let _ = writeln!(o, "  DISAGREEMENT {d}");
        }
    }
    if !s.weak_targets.is_empty() || !s.sc_targets.is_empty() {
        let _ = writeln!(
            o,
            "allowed targets: {} reachable under SC, {} weak (allowed, never produced by sc)",
            s.sc_targets.len(),
            s.weak_targets.len()
        );
    }
    let _ = writeln!(
        o,
        "{:<8} {:>10} {:>8} {:>7} {:>8} {:>12} {:>9}",
        "model", "executions", "hangs", "faults", "unsound", "power", "exec/s"
    );
    for m in &s.models {
        let _ = writeln!(
            o,
            "{:<8} {:>10} {:>8} {:>7} {:>8} {:>12} {:>9.0}",
            m.model,
            m.executions,
            m.hangs,
            m.faults,
            m.unsound_executions,
            format!("{}/{}", m.weak_targets_reached.len(), s.weak_targets.len()),
            m.executions as f64 / m.seconds.max(1e-9)
        );
        for u in &m.unsound_tests {
            let _ = writeln!(o, "  UNSOUND under {}: {u}", m.model);
        }
    }
    o
}
