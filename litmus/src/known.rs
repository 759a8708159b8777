//! Known soundness bugs of the operational models, in one place.
//!
//! An outcome a model produces and the axiomatic checker forbids is a soundness bug.
//! While a bug is being fixed, the CI sample of generated programs
//! (`tests/it/generated.rs`) tolerates the outcomes it explains — and only those: each
//! entry says *which* outcomes, precisely, by a weakening of the checker's model that
//! allows them (an outcome is excused when the weakened checker allows it, by one entry or
//! by all entries of its model together). Delete an entry when its fix lands: the test then
//! fails again on every outcome it used to excuse. `litmus/UNSOUND.md` describes each
//! entry with a minimal program (kept in `tests/fixed/` once fixed).

use crate::ast::LitmusTest;
use crate::axiom::{self, Options};
use fencehound_handlers::Model;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Known {
    pub id: &'static str,
    /// Where it is tracked.
    pub issue: &'static str,
    /// The models that have it.
    pub models: &'static [&'static str],
    pub what: &'static str,
    /// The weakened checker whose allowed outcomes it explains.
    #[serde(skip)]
    pub weaken: fn(&mut Options),
}

/// Empty since wave 3: the five bugs the generator and the pattern forms found
/// (`hb-pattern-forms`, `weak-late-insertion`, `failed-cas-writes-back`,
/// `hb-rmw-publishes-acquired`, `hb-sc-fence-wide-to-cta`) are fixed; their minimal
/// programs are regression tests (`tests/fixed/`, `tests/it/fixed.rs`) and UNSOUND.md keeps
/// their story.
pub const KNOWN: &[Known] = &[];

/// The known bugs that explain `model` producing `state` (over `t.observed()`) in `t`:
/// the first entry that does alone, else all entries of the model if they do together,
/// else none.
pub fn explain(t: &LitmusTest, model: Model, state: &[i64]) -> Vec<&'static Known> {
    let mine: Vec<&'static Known> = KNOWN
        .iter()
        .filter(|k| k.models.contains(&model.name()))
        .collect();
    let allows = |ks: &[&'static Known]| {
        let mut o = Options::default();
        for k in ks {
            (k.weaken)(&mut o);
        }
        axiom::outcomes(t, &o).is_ok_and(|o| o.allowed.contains(state))
    };
    if let Some(k) = mine.iter().find(|k| allows(&[**k])) {
        return vec![*k];
    }
    if mine.len() > 1 && allows(&mine) {
        return mine;
    }
    Vec::new()
}
