//! Prints the final states the axiomatic checker allows (and the SC ones) for each file:
//! `cargo run --example axiom_check -- FILE...` (environment: `AXIOM_NOSC` skips the SC
//! states, `AXIOM_NOTRANS` and `AXIOM_CASWRITES` weaken the model as `known.rs` does).
use fencehound_litmus::axiom::{outcomes, Options};

fn main() {
    for f in std::env::args().skip(1) {
        let t = match fencehound_litmus::load(std::path::Path::new(&f)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let env = |k: &str| std::env::var_os(k).is_some();
        let opts = Options {
            sc: !env("AXIOM_NOSC"),
            co_transitive: !env("AXIOM_NOTRANS"),
            sc_per_location: !env("AXIOM_NOTRANS"),
            failed_cas_writes: env("AXIOM_CASWRITES"),
            ..Options::default()
        };
        match outcomes(&t, &opts) {
            Ok(o) => {
                let vars: Vec<String> = o.vars.iter().map(|v| v.to_string()).collect();
                println!("{f}: {}", vars.join(" "));
                for s in &o.allowed {
                    let sc = if o.sc.contains(s) { "sc" } else { "  " };
                    println!("  {sc} {s:?}");
                }
                for s in o.sc.difference(&o.allowed) {
                    println!("  SC-ONLY (checker bug) {s:?}");
                }
                println!("  {:?} cut={}", o.stats, o.cut);
            }
            Err(e) => println!("{f}: {e}"),
        }
    }
}
