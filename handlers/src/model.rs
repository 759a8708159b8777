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
}
