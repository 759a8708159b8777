//! PTX litmus tests for fencehound: parse Dat3M's PTX litmus dialect, lower each test to
//! a vgpu kernel (one warp per litmus thread, semantics and scopes kept exactly), run it
//! many times under the operational models, and judge the outcomes against the PTX
//! memory model — computed by our own exhaustive axiomatic checker ([`axiom`]), which
//! `expected-ptx-v7.5.csv` (Dat3M's verdicts) cross-checks.
//!
//! ```text
//! file.litmus ──parse──► LitmusTest ──lower──► PTX ──ptx::parse──► vgpu kernel
//!      run_model(model, seeds, schedulers, p_w) ──► Histogram ──judge──► unsound / power
//!                 └──axiom::outcomes──► allowed final states (and SC ones) ──┘
//! generate(seed, i) ──► LitmusTest ──► soundness::run_one (every model) ──► report
//! ```
//!
//! [`generate`] draws programs of 2–4 threads × ≤ 3 operations; [`soundness`] runs them
//! under every model and reports unsound outcomes and the coverage of weak outcomes;
//! [`known`] lists the known soundness bugs the CI sample tolerates; [`print`] writes a
//! test back in the dialect.
//!
//! An execution that deadlocks or spins forever has no final state: it satisfies no
//! `exists` and falsifies no `forall` (it is counted as a hang).

pub mod ast;
pub mod axiom;
pub mod error;
pub mod expect;
pub mod generate;
pub mod known;
pub mod lower;
pub mod parse;
pub mod print;
pub mod racejudge;
pub mod run;
pub mod soundness;
pub mod suite;

pub use ast::LitmusTest;
pub use error::LitmusError;
pub use expect::{judge, Expectations, Judgement, Verdict};
pub use lower::{lower, Lowered};
pub use parse::parse;
pub use run::{run_model, run_range, ExecOutcome, Histogram, RunConfig};
pub use suite::{run_suite, SuiteReport};

/// Reads and parses one file.
pub fn load(path: &std::path::Path) -> Result<LitmusTest, LitmusError> {
    let text = std::fs::read_to_string(path).map_err(|source| LitmusError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&path.display().to_string(), &text)
}
