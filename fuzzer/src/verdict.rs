//! The verdict of one execution.

use fencehound_oracle::Judgement;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    /// An oracle rejected the outputs.
    WrongOutput {
        oracle: String,
        message: String,
        diff: String,
    },
    /// An invalid memory access.
    Fault {
        message: String,
    },
    /// `trap`, `brkpt` or a failed `assert`.
    Trap {
        message: String,
    },
    /// Threads that can never proceed.
    Deadlock {
        dump: String,
    },
    /// Fuel ran out (`wall = false`, reproducible) or the wall-clock limit hit (`wall = true`).
    Timeout {
        dump: String,
        wall: bool,
    },
    /// Stopped by Ctrl-C or `--stop-at-first`; not counted.
    Interrupted,
    /// The oracle could not judge (an external `command` that cannot start or does not
    /// finish in time, unreadable expected values). Says nothing about the kernel: not a
    /// failure, not counted; the runner stops the campaign and the CLI exits 2.
    OracleError {
        message: String,
    },
}

impl Verdict {
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            Verdict::Pass | Verdict::Interrupted | Verdict::OracleError { .. }
        )
    }
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::WrongOutput { .. } => "wrong-output",
            Verdict::Fault { .. } => "fault",
            Verdict::Trap { .. } => "trap",
            Verdict::Deadlock { .. } => "deadlock",
            Verdict::Timeout { .. } => "timeout",
            Verdict::Interrupted => "interrupted",
            Verdict::OracleError { .. } => "oracle-error",
        }
    }
    /// One line for tables and progress output.
    pub fn summary(&self) -> String {
        match self {
            Verdict::Pass => "pass".into(),
            Verdict::WrongOutput {
                oracle, message, ..
            } => format!("wrong output ({oracle}): {message}"),
            Verdict::Fault { message } => format!("fault: {message}"),
            Verdict::Trap { message } => format!("trap: {message}"),
            Verdict::Deadlock { .. } => "deadlock".into(),
            Verdict::Timeout { wall: false, .. } => "timeout (fuel)".into(),
            Verdict::Timeout { wall: true, .. } => "timeout (wall clock)".into(),
            Verdict::Interrupted => "interrupted".into(),
            Verdict::OracleError { message } => format!("the oracle could not judge: {message}"),
        }
    }
}

/// Wilson score interval for `k` successes in `n` trials at 95% (z = 1.96).
pub fn wilson95(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / denom;
    // At k = 0 (k = n) the exact bound is 0 (1); rounding would leave a tiny residue.
    let lo = if k == 0.0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (lo, hi)
}

impl Verdict {
    /// The verdict of an oracle's judgement of the outputs; `note` is appended to a
    /// failure's message. A judge that cannot run (or hangs) says nothing about the
    /// kernel: [`Verdict::OracleError`].
    pub fn from_judgement<E: std::fmt::Display>(j: Result<Judgement, E>, note: &str) -> Verdict {
        match j {
            Ok(Judgement::Pass) => Verdict::Pass,
            Ok(Judgement::Fail(f)) => Verdict::WrongOutput {
                oracle: f.oracle,
                message: format!("{}{note}", f.message),
                diff: f.diff,
            },
            Err(e) => Verdict::OracleError {
                message: e.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wilson() {
        let (lo, hi) = super::wilson95(0, 100);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.037).abs() < 0.001, "{hi}");
        let (lo, hi) = super::wilson95(50, 100);
        assert!((lo - 0.404).abs() < 0.001 && (hi - 0.596).abs() < 0.001);
    }
}
