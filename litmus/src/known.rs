//! Known soundness bugs of the operational models, in one place.
//!
//! An outcome a model produces and the axiomatic checker forbids is a soundness bug.
//! While a bug is being fixed, the CI sample of generated programs
//! (`tests/generated.rs`) tolerates the outcomes it explains — and only those: each
//! entry says *which* outcomes, precisely, by a weakening of the checker's model that
//! allows them (an outcome is excused when the weakened checker allows it, by one entry or
//! by all entries of its model together). Delete an entry when its fix lands: the test then
//! fails again on every outcome it used to excuse. `litmus/UNSOUND.md` describes each
//! entry with a minimal program (also in `tests/unsound/`).

use crate::ast::LitmusTest;
use crate::axiom::{self, Forms, Options};
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

pub const KNOWN: &[Known] = &[
    Known {
        id: "hb-pattern-forms",
        issue: "issue 23 (hb: release/acquire pattern forms; being fixed in hb)",
        models: &["weak"],
        what: "hb does not recognise the release pattern \"release operation on M followed \
               in program order by a strong write to M\" nor its acquire twin \"strong read \
               on M followed in program order by an acquire operation on M\": an acquire that \
               reads the later write (or a read before the acquire) does not synchronize",
        weaken: |o| {
            o.forms = Forms {
                release_then_write: false,
                read_then_acquire: false,
            }
        },
    },
    Known {
        id: "weak-late-insertion",
        issue: "found by the litmus generator (issue 23 part 2), litmus/UNSOUND.md; \
                handlers/src/weak.rs",
        models: &["weak"],
        what: "weak inserts a store W2 into coherence order before a later store K its \
               thread does not know (handlers/src/weak.rs, insert_at), after some thread that \
               knows K already read a store W1 that W2 follows: W1 co W2 co K then orders W1 \
               before K after the fact, and that read contradicts coherence (CoWR through \
               transitivity: Causality, SC per location). Explained outcomes: those allowed \
               when coherence is not closed transitively and SC per location is not checked \
               (reads checked only against the writes the reader knows, directly)",
        weaken: |o| {
            o.co_transitive = false;
            o.sc_per_location = false;
        },
    },
    Known {
        id: "failed-cas-writes-back",
        issue: "found by the litmus generator (issue 23 part 2), litmus/UNSOUND.md; \
                vgpu atomics / handlers/src/weak.rs",
        models: &["weak"],
        what: "a failing atom.cas writes the value it read back (the vgpu's atomic hook \
               always stores rmw(old)); under `weak` it may have read a stale value, which \
               then becomes the newest — the PTX model as Dat3M encodes it (and C++) has a \
               failing CAS only read",
        weaken: |o| o.failed_cas_writes = true,
    },
    Known {
        id: "hb-rmw-publishes-acquired",
        issue: "found by the litmus generator (issue 23 part 2), litmus/UNSOUND.md; \
                hb/src/sync.rs",
        models: &["weak"],
        what: "an acq_rel RMW whose read synchronizes with a .cta release of its CTA does \
               not publish what it acquired through its own (.gpu/.sys) release: a reader \
               in another CTA that acquires the RMW's write does not see the first \
               thread's earlier writes (cumulativity through the RMW). Explained outcomes: \
               those allowed when an RMW's write does not follow its read in base causality",
        weaken: |o| o.rmw_publishes_acquired = false,
    },
    Known {
        id: "hb-sc-fence-wide-to-cta",
        issue: "found by the litmus generator (issue 23 part 2), litmus/UNSOUND.md; \
                hb/src/sync.rs",
        models: &["weak"],
        what: "a .gpu/.sys fence.sc does not synchronize with a later .cta fence.sc of \
               its CTA in Fence-SC order (they are morally strong): what the wide fence's \
               thread observed before it (e.g. a write of another CTA) does not reach the \
               .cta fence's thread (RWC with fence.sc.gpu and fence.sc.cta). Explained \
               outcomes: those allowed when such fence pairs do not synchronize",
        weaken: |o| o.sc_wide_to_cta = false,
    },
];

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
