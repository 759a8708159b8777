//! Every corpus kernel, compiled by NVRTC and run with its header's launch and arguments,
//! must load and complete (`assert_kernel` must trap: its header's input trips the assert).
//! Kernels using a construct the vgpu does not support yet are listed in `UNSUPPORTED`
//! with the construct; the test fails if one of those starts loading (so the list is kept
//! short) or any other kernel fails.

use crate::common;
use common::*;
use fencehound_vgpu::*;

/// (kernel, the text its load error must contain): constructs the vgpu does not support
/// yet. An entry is removed as soon as the kernel loads.
const UNSUPPORTED: &[(&str, &str)] = &[];

fn unsupported(stem: &str) -> Option<&'static str> {
    UNSUPPORTED
        .iter()
        .find(|(k, _)| *k == stem)
        .map(|(_, why)| *why)
}

#[test]
fn every_corpus_kernel_loads_and_runs_to_its_verdict() {
    let mut failures = Vec::new();
    let mut pending = Vec::new();
    let mut ran = 0;
    for stem in corpus_stems() {
        let mut c = match Corpus::try_new(&stem, &[]) {
            Ok(c) => c,
            Err(e) if unsupported(&stem).is_some_and(|why| e.contains(why)) => {
                pending.push(stem);
                continue;
            }
            Err(e) => {
                failures.push(format!("{stem}: {e}"));
                continue;
            }
        };
        if unsupported(&stem).is_some() {
            failures.push(format!("{stem}: loads now; remove it from UNSUPPORTED"));
        }
        let r = c.run_with(
            LaunchOptions {
                fuel: 500_000_000,
                ..Default::default()
            },
            &mut NoHooks,
            &mut RoundRobin::new(1),
        );
        ran += 1;
        let ok = match (&r.result.outcome, stem.as_str()) {
            (LaunchOutcome::Trap(t), "assert_kernel") => t.message.contains("Assertion"),
            (LaunchOutcome::Completed, "assert_kernel") => false,
            (LaunchOutcome::Completed, _) => true,
            _ => false,
        };
        if !ok {
            let o = format!("{:?}", r.result.outcome);
            failures.push(format!("{stem}: {}", &o[..o.len().min(400)]));
        }
    }
    if !pending.is_empty() {
        eprintln!(
            "{} kernels use unsupported constructs: {}",
            pending.len(),
            pending.join(", ")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 20, "only {ran} kernels ran");
}
