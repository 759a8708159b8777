//! Campaign files: errors name the file, line and key; valid files resolve.

use fencehound_fuzzer::{Campaign, CampaignError};
use std::path::Path;

fn load(text: &str) -> Result<Campaign, CampaignError> {
    Campaign::from_text(Path::new("/tmp/x/c.toml"), text.to_string())
}

const OK: &str = r#"
source = "k.cu"
seed = 7
buffers = ["a:u32[16] iota", "out:u32[1] zero"]
[[launch]]
kernel = "k"
grid = [2]
block = [32, 1]
args = ["a", "out", "n:u32=16"]
[[oracle]]
type = "golden"
[variants.fenced]
defines = { FENCE = "1" }
expect = "pass"
[variants.unfenced]
expect = { bugaroo = "fail", scoped = "fail" }
"#;

#[test]
fn valid_campaign_resolves() {
    let c = load(OK).unwrap();
    assert_eq!(c.name, "c");
    assert_eq!(c.source, Path::new("/tmp/x/k.cu"));
    assert_eq!(c.buffers.len(), 2);
    assert_eq!(c.launches[0].args.len(), 3);
    assert_eq!(c.variant_names(), vec!["fenced", "unfenced"]);
    assert_eq!(
        c.variant("unfenced").unwrap().expect_for("scoped"),
        Some(fencehound_fuzzer::Expect::Fail)
    );
    assert_eq!(c.file.fuzz.runs, 100);
}

fn err(text: &str) -> String {
    match load(text) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_file_line_and_key() {
    let e = err(&OK.replace("seed = 7", "seed = \"seven\""));
    assert!(e.starts_with("/tmp/x/c.toml:"), "{e}");
    assert!(e.contains("line 3") || e.contains("3:"), "{e}");
    assert!(e.contains("seed"), "{e}");
    let e = err(&OK.replace("kernel = \"k\"", "kernel = \"k\"\nkernal = 1"));
    assert!(e.contains("kernal"), "{e}");
    let e = err(&OK.replace("\"a\", \"out\"", "\"a\", \"nope\""));
    assert!(e.contains("launch[0].args[1]") && e.contains("nope"), "{e}");
    assert!(e.starts_with("/tmp/x/c.toml:9: "), "{e}");
    let e = err(&OK.replace("a:u32[16] iota", "a:u33[16] iota"));
    assert!(e.contains("buffers[0]") && e.contains("u33"), "{e}");
    let e = err(&OK.replace("source = \"k.cu\"", "source = \"k.txt\""));
    assert!(e.contains("source"), "{e}");
    let e = err(&OK.replace("grid = [2]", "grid = [2, 0]"));
    assert!(e.contains("launch[0].grid"), "{e}");
    assert!(e.starts_with("/tmp/x/c.toml:7: "), "{e}");
    let e = err(&OK.replace("expect = \"pass\"", "expect = \"maybe\""));
    assert!(e.contains("expect") || e.contains("variants"), "{e}");
    // A campaign without an oracle loads (`race` needs none), but every
    // command that judges executions refuses it, naming the key.
    let bare = load(&OK.replace("[[oracle]]\ntype = \"golden\"\n", "")).unwrap();
    let e = bare.require_oracle().unwrap_err().to_string();
    assert!(
        e.contains("oracle") && e.starts_with("/tmp/x/c.toml"),
        "{e}"
    );
    load(OK).unwrap().require_oracle().unwrap();
    let e = err("this is not toml");
    assert!(e.starts_with("/tmp/x/c.toml:"), "{e}");
}
