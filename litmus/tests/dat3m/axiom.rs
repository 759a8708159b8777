//! The axiomatic checker against every verdict of `expected-ptx-v7.5.csv` (the Dat3M PTX
//! litmus tests, PTX v7.5 as encoded in Dat3M's `ptx-v7.5.cat`): it must agree on every
//! file it supports, and the files it does not support are listed here with the reason
//! (none today).

use fencehound_litmus::axiom::{self, Options};
use fencehound_litmus::expect::Expectations;
use fencehound_litmus::suite::expand;
use std::path::Path;
use std::time::Instant;

/// Files the checker does not support, with the reason. Keep empty unless a construct is
/// really out of the model (the proxy tests are not in the CSV at all).
const UNSUPPORTED: &[(&str, &str)] = &[];

pub fn axiomatic_checker_agrees_with_every_dat3m_verdict(dir: &Path) {
    let exp = Expectations::load(&dir.join("expected-ptx-v7.5.csv")).unwrap();
    let files = expand(&[dir.join("ptx")]).unwrap();
    assert!(files.len() >= 104, "{} files", files.len());
    let mut checked = 0;
    let mut disagree = Vec::new();
    let mut unsupported = Vec::new();
    for f in &files {
        let Some(want) = exp.verdict(f) else { continue };
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let t = fencehound_litmus::load(f).unwrap();
        let t0 = Instant::now();
        match axiom::verdict(&t, &Options::default()) {
            Ok(v) => {
                checked += 1;
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                println!(
                    "  {name}: checker {} csv {} ({} allowed states, {:.1} ms){}",
                    v.holds as u8,
                    want as u8,
                    v.outcomes.allowed.len(),
                    ms,
                    if v.outcomes.cut { ", loops cut" } else { "" }
                );
                if v.holds != want {
                    disagree.push(format!(
                        "{name}: checker says {}, expected-ptx-v7.5.csv says {}",
                        v.holds as u8, want as u8
                    ));
                }
            }
            Err(e) => unsupported.push((name, e.to_string())),
        }
    }
    for (n, e) in &unsupported {
        println!("  unsupported: {n}: {e}");
    }
    assert!(
        disagree.is_empty(),
        "disagreements:\n{}",
        disagree.join("\n")
    );
    let listed: Vec<&str> = UNSUPPORTED.iter().map(|u| u.0).collect();
    let got: Vec<&str> = unsupported.iter().map(|u| u.0.as_str()).collect();
    assert_eq!(got, listed, "unsupported files changed: {unsupported:?}");
    assert!(checked >= 103, "{checked} files checked");
    println!("  {checked} verdicts checked, all agree");
}
