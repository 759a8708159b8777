//! The names of the memory models, as campaigns, reports and the command line spell them.
//!
//! | model | family | what it perturbs | hooks |
//! |---|---|---|---|
//! | `sc` | plain memory | nothing: the golden reference | [`crate::hooks::ScHooks`] |
//! | `bugaroo` | write buffers | stores wait in per-thread buffers; every drain goes to memory | [`crate::buffers::StoreBuffers`] |
//! | `scoped` | write buffers | as `bugaroo`, but CTA-scope drains go to a per-CTA overlay | [`crate::buffers::StoreBuffers`] |
//! | `weak` | weak loads | loads read older stores wherever PTX allows it | [`crate::weak::WeakHooks`] |
//!
//! [`crate::hooks::ModelHooks`] builds the right family from a [`crate::BufferConfig`] and
//! is what the vgpu runs.

use serde::Serialize;

/// The memory model an execution runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// No buffering: sequential consistency (the golden reference).
    Sc,
    /// Flat per-thread buffers; every fence, release and barrier drains to memory.
    Bugaroo,
    /// Scope-aware: CTA-scope drains go to a per-CTA overlay.
    Scoped,
    /// Loads may read older stores wherever PTX allows it ([`crate::weak`]); `p_w` is the
    /// probability that such a load reads stale.
    Weak,
}

impl Model {
    pub fn parse(s: &str) -> Option<Model> {
        match s {
            "sc" => Some(Model::Sc),
            "bugaroo" => Some(Model::Bugaroo),
            "scoped" => Some(Model::Scoped),
            "weak" => Some(Model::Weak),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Model::Sc => "sc",
            Model::Bugaroo => "bugaroo",
            Model::Scoped => "scoped",
            Model::Weak => "weak",
        }
    }

    /// Every model, weakest last.
    pub const ALL: [Model; 4] = [Model::Sc, Model::Bugaroo, Model::Scoped, Model::Weak];

    /// Whether loads can read older values than memory holds: only then can a fence whose
    /// only job is on the reader's side (after a poll, after taking a lock) be judged.
    pub fn delays_loads(self) -> bool {
        self == Model::Weak
    }

    /// Whether `p_w` matters: the probability that a store is buffered (`bugaroo`,
    /// `scoped`) or that a load reads an older store when it may (`weak`). At `p_w` 0 or
    /// 1 such a model delays every access it can or none — never one access and not the
    /// next of its thread, which most fence bugs need (a seqlock writer without the fence
    /// after its odd counter store fails 0 of 100 runs at `p_w = 1` under every model,
    /// 43–72 of 100 at 0.25 and 0.5, 2026-12-07).
    pub fn uses_p(self) -> bool {
        self != Model::Sc
    }

    /// Whether runs at `ps` under this model can delay one access of a thread and not the
    /// next: the model uses `p_w` only at values strictly between 0 and 1 ([`mixes`]);
    /// `sc` has nothing to delay, so it is never blind by its `p_w`.
    pub fn blind_at(self, ps: &[f64]) -> bool {
        self.uses_p() && !mixes(ps)
    }
}

/// Whether some `p_w` lies strictly between 0 and 1. At `p_w = 1` store buffering
/// buffers every store and `weak` reads every load stale that can be (the liveness rule
/// aside); at 0 neither delays anything: neither produces an outcome that needs one
/// access of a thread delayed and the next not — the torn snapshot of a seqlock whose
/// writer lacks its first fence, `campaigns/seqlock.cu`: `audit --p 1` called that fence
/// likely redundant under `weak`, `bugaroo` and `scoped` (0 of 100 each, with a verified
/// removal patch), `--p 0.5,1` necessary (2026-12-07).
pub fn mixes(ps: &[f64]) -> bool {
    ps.iter().any(|&p| p > 0.0 && p < 1.0)
}
