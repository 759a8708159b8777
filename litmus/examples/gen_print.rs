//! Prints generated programs: `cargo run --example gen_print -- SEED INDEX...`; with
//! `--run` first, also runs each under every model (as `litmus --generate` does) and
//! prints the unsound outcomes and which known bug explains them.
use fencehound_litmus::soundness::{run_one, Config};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let run = args.first().is_some_and(|a| a == "--run");
    if run {
        args.remove(0);
    }
    let mut a = args.into_iter();
    let seed: u64 = a.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    for i in a {
        let i: u64 = i.parse().unwrap_or(0);
        let t = fencehound_litmus::generate::generate(seed, i);
        print!("{}", fencehound_litmus::print::print(&t));
        if run {
            let cfg = Config {
                seed,
                ..Config::default()
            };
            let r = run_one(&cfg, i, &t);
            for u in &r.unsound {
                let ids: Vec<&str> = u.known.iter().map(|k| k.id).collect();
                println!("  UNSOUND under {}: {:?} known {ids:?}", u.model, u.state);
            }
        }
    }
}
