//! `docs/ARCHITECTURE.md` names only files and folders that exist, and the README sends
//! readers to it (not to a design document outside the repository).

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Inline code spans outside fenced code blocks that look like repository paths: they
/// contain a `/` (or end in a file extension) and nothing that cannot be in a path.
fn named_paths(markdown: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            !s.contains(char::is_whitespace)
                && !s.contains("::")
                && !s.starts_with('-')
                && !s.contains(['<', '>', '*', '[', '(', '$', '='])
                && (s.contains('/')
                    || [".rs", ".md", ".sh", ".toml", ".dict"]
                        .iter()
                        .any(|e| s.ends_with(e)))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn architecture_doc_names_only_existing_paths() {
    let text = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md exists");
    let paths = named_paths(&text);
    assert!(
        paths.len() >= 40,
        "expected the doc to name many files, found {}: {paths:?}",
        paths.len()
    );
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !root().join(p.trim_end_matches('/')).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn path_extraction_sees_what_the_doc_writes() {
    let md = "see `vgpu/src/hooks.rs` and `ptx/` but not `Model::Sc`, `a b/c`,\n\
              ```\nnot/in/a/code/block.rs\n```\nnor `-D`; `fuzz/parse.dict`";
    assert_eq!(
        named_paths(md),
        vec!["vgpu/src/hooks.rs", "ptx/", "fuzz/parse.dict"]
    );
}

#[test]
fn readme_links_the_architecture_doc() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.contains("docs/ARCHITECTURE.md"),
        "README.md should link docs/ARCHITECTURE.md"
    );
    assert!(
        !readme.contains("../shared/DESIGN.md"),
        "README.md still points outside the repository"
    );
}

/// Every workspace member (Cargo.toml `members`) has a row in the crate table, by folder
/// and by package name.
#[test]
fn architecture_doc_names_every_workspace_member() {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members line");
    let members: Vec<&str> = line
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|m| *m != ".")
        .collect();
    assert!(members.len() >= 10, "{members:?}");
    let mut missing = Vec::new();
    for m in members {
        let toml = std::fs::read_to_string(root().join(m).join("Cargo.toml")).unwrap();
        let name = toml
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = \""))
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{m}/Cargo.toml has no name"));
        let row = doc
            .lines()
            .any(|l| l.starts_with(&format!("| `{m}/` | `{name}` |")));
        if !row {
            missing.push(format!("{m} ({name})"));
        }
    }
    assert!(
        missing.is_empty(),
        "not in docs/ARCHITECTURE.md's crate table: {missing:?}"
    );
}
