//! Prints generated programs: `cargo run --example gen_print -- SEED INDEX...`.
fn main() {
    let mut a = std::env::args().skip(1);
    let seed: u64 = a.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    for i in a {
        let i: u64 = i.parse().unwrap_or(0);
        let t = fencehound_litmus::generate::generate(seed, i);
        print!("{}", fencehound_litmus::print::print(&t));
    }
}
