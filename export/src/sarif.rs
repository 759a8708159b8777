//! SARIF 2.1.0 (OASIS Standard, <https://docs.oasis-open.org/sarif/sarif/v2.1.0/>) for
//! code scanning: one run of the `fencehound` tool whose results are
//!
//! | rule | from | located at |
//! |---|---|---|
//! | `fencehound/underfenced-variant` | `fuzz`, `merge` | the variant's line in the campaign file (the kernel source as related location) |
//! | `fencehound/race` | `fuzz --race`, `race` | the second access's CUDA line (the first as related location) |
//! | `fencehound/missing-fence` | `minimize` | the CUDA line after which the fence goes, with the insertion as a fix |
//! | `fencehound/redundant-fence` | `audit` | the fence's CUDA line, with its deletion as a fix |
//! | `fencehound/fence-scope-too-wide` | `audit` | the fence's CUDA line, with `__threadfence_block()` as a fix |
//!
//! Paths under the base directory (the working directory: a CI job's checkout) are
//! written relative to it, as GitHub code scanning expects (SARIF §3.4.4 relative
//! references); other paths as `file://` URIs. `partialFingerprints` name a finding by
//! rule, variant and source line (not by seed or address), so code scanning recognises
//! the same finding from night to night. Fixes follow SARIF §3.55–3.57: an insertion is a
//! replacement of an empty region (`startColumn == endColumn`).

use crate::sarif_model as s;
use fencehound_fuzzer::report::RaceEntry;
use fencehound_fuzzer::Report;
use fencehound_minimizer::edit::FenceScope;
use fencehound_minimizer::{AuditReport, FenceVerdict, MinimizeReport, Site};
use fencehound_racecheck::RaceReport;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The rules, in the order of `tool.driver.rules` (results refer to them by index).
const RULES: [(&str, &str, &str); 5] = [
    (
        "fencehound/underfenced-variant",
        "A variant of the kernel fails under write buffering",
        "Seeded executions with stores delayed in per-thread write buffers (as the PTX memory model allows) produced outputs the oracle rejects, a fault, a hang or a trap: some fence is missing or too narrow. `fencehound minimize` says where.",
    ),
    (
        "fencehound/race",
        "A data race between two accesses",
        "The shadow-memory race check saw two conflicting accesses not ordered by happens-before (PTX memory model). The message says which synchronization is missing.",
    ),
    (
        "fencehound/missing-fence",
        "A fence is missing here",
        "Delta debugging over candidate fence positions found that this fence makes every tried seed pass, and it was confirmed on fresh seeds.",
    ),
    (
        "fencehound/redundant-fence",
        "This fence is likely redundant",
        "Removing this fence never failed in N seeded executions under write buffering: its failure probability is below 3/N at 95% confidence (rule of three).",
    ),
    (
        "fencehound/fence-scope-too-wide",
        "Block scope suffices for this fence",
        "Replacing this device-scope fence with __threadfence_block() never failed under the scope-aware write-buffer model.",
    ),
];

const UNDERFENCED: usize = 0;
const RACE: usize = 1;
const MISSING: usize = 2;
const REDUNDANT: usize = 3;
const SCOPE: usize = 4;

/// A SARIF log being assembled from fencehound results.
#[derive(Debug, Clone)]
pub struct SarifLog {
    base: PathBuf,
    results: Vec<s::Result>,
}

/// A source position: file and 1-based line.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcePos {
    pub file: PathBuf,
    pub line: u32,
}

/// Lexically normalises `a/./b/../c` to `a/c` (no file system access: the file may be
/// gone, and symlinks are not the point here).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn text(t: impl Into<String>) -> s::Message {
    s::Message { text: t.into() }
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string())
}

/// The 1-based line of `[variants.NAME]` in a campaign file.
fn variant_line(campaign_text: &str, variant: &str) -> Option<u32> {
    campaign_text
        .lines()
        .position(|l| {
            let l = l.trim();
            l == format!("[variants.{variant}]") || l == format!("[variants.\"{variant}\"]")
        })
        .map(|i| i as u32 + 1)
}

/// The text of line `line` (1-based) of `file`, if readable.
fn source_line(file: &Path, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .nth(line.checked_sub(1)? as usize)
        .map(str::to_string)
}

fn site_pos(s: &Site) -> Option<SourcePos> {
    s.cuda.as_ref().map(|c| SourcePos {
        file: PathBuf::from(&c.file),
        line: c.line,
    })
}

impl SarifLog {
    /// Paths under `base` are written relative to it.
    pub fn new(base: &Path) -> SarifLog {
        SarifLog {
            base: normalize(&std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf())),
            results: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.results.len()
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// The artifact location of a file: relative to the base when under it.
    fn artifact(&self, file: &Path) -> s::ArtifactLocation {
        let abs = normalize(&std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()));
        let uri = match abs.strip_prefix(&self.base) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => format!("file://{}", abs.display()),
        };
        s::ArtifactLocation { uri }
    }

    fn location(&self, file: &Path, line: Option<u32>, snippet: Option<String>) -> s::Location {
        let region = line.filter(|l| *l > 0).map(|line| s::Region {
            start_line: Some(line as i64),
            snippet: snippet.map(|text| s::ArtifactContent { text }),
            ..s::Region::default()
        });
        s::Location {
            physical_location: s::PhysicalLocation {
                artifact_location: self.artifact(file),
                region,
            },
        }
    }

    /// A fix (SARIF §3.55–3.57): one replacement of `deleted` in `file` by `inserted`
    /// (nothing: a deletion; an empty `deleted` region: an insertion).
    fn fix(
        &self,
        description: impl Into<String>,
        file: &Path,
        deleted: s::Region,
        inserted: Option<String>,
    ) -> s::Fix {
        s::Fix {
            description: text(description),
            artifact_changes: vec![s::ArtifactChange {
                artifact_location: self.artifact(file),
                replacements: vec![s::Replacement {
                    deleted_region: deleted,
                    inserted_content: inserted.map(|text| s::ArtifactContent { text }),
                }],
            }],
        }
    }

    fn fingerprint(&self, rule: usize, parts: &[&str]) -> BTreeMap<String, String> {
        // Stable across nights and machines: rule and source-level identity only.
        let key = format!("{}|{}", RULES[rule].0, parts.join("|"));
        let mut h: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a, 64 bit
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        [("fencehound/v1".to_string(), format!("{h:016x}"))].into()
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        rule: usize,
        level: s::ResultLevel,
        message: String,
        location: s::Location,
        related: Vec<s::Location>,
        fixes: Vec<s::Fix>,
        fingerprint: &[&str],
        properties: serde_json::Value,
    ) {
        let r = s::Result {
            rule_id: RULES[rule].0.to_string(),
            rule_index: rule as i64,
            level,
            message: text(message),
            locations: vec![location],
            partial_fingerprints: self.fingerprint(rule, fingerprint),
            related_locations: (!related.is_empty()).then_some(related),
            fixes: (!fixes.is_empty()).then_some(fixes),
            properties: match properties {
                serde_json::Value::Object(m) => Some(m.into_iter().collect()),
                _ => None,
            },
        };
        self.results.push(r);
    }

    /// Failing variants (one result per variant × model) and races of a fuzz report.
    pub fn add_fuzz_report(&mut self, report: &Report, report_path: &Path) {
        let campaign_file = [&report.campaign.abs_path, &report.campaign.path]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| !p.as_os_str().is_empty() && p.exists())
            .unwrap_or_else(|| PathBuf::from(&report.campaign.path));
        let kernel = report
            .campaign
            .sources
            .first()
            .map(|s| PathBuf::from(&s.path));
        for v in &report.variants {
            for m in &report.models {
                let cells: Vec<_> = report
                    .summary
                    .iter()
                    .filter(|c| c.variant == v.name && &c.model == m)
                    .collect();
                let failures: u64 = cells.iter().map(|c| c.failures).sum();
                if failures == 0 {
                    continue;
                }
                let runs: u64 = cells.iter().map(|c| c.runs).sum();
                let expected = v.expect.get(m).is_some_and(|e| e == "fail");
                let rates = cells
                    .iter()
                    .map(|c| {
                        format!(
                            "p_w={}: {}/{} [{:.2}, {:.2}]",
                            c.p, c.failures, c.runs, c.ci95.0, c.ci95.1
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                let first = report
                    .failures
                    .iter()
                    .find(|f| f.variant == v.name && &f.model == m);
                let example = match first {
                    Some(f) => format!(
                        " First failure: execution {} (seed {}, p_w={}): {}. Replay: fencehound replay {} --exec {} --trace",
                        f.id,
                        f.seed,
                        f.p,
                        f.verdict.summary(),
                        report_path.display(),
                        f.id
                    ),
                    None => String::new(),
                };
                let message = format!(
                    "Variant `{}` of campaign {} fails under the {m} write-buffer model: {failures} of {runs} executions ({rates}).{}{example}",
                    v.name,
                    report.campaign.name,
                    if expected {
                        " As its campaign expects (a deliberately underfenced variant)."
                    } else {
                        " Some fence is missing or too narrow; `fencehound minimize` finds which."
                    }
                );
                let related = kernel
                    .iter()
                    .map(|k| self.location(k, None, None))
                    .collect();
                let loc = self.location(
                    &campaign_file,
                    variant_line(&report.campaign.text, &v.name),
                    None,
                );
                self.push(
                    UNDERFENCED,
                    if expected {
                        s::ResultLevel::Note
                    } else {
                        s::ResultLevel::Error
                    },
                    message,
                    loc,
                    related,
                    Vec::new(),
                    &[&report.campaign.name, &v.name, m],
                    serde_json::json!({
                        "variant": v.name, "model": m, "failures": failures, "runs": runs,
                        "first_id": first.map(|f| f.id), "first_seed": first.map(|f| f.seed),
                    }),
                );
            }
        }
        for e in &report.races {
            self.add_race_entry(e, None);
        }
    }

    fn add_race_entry(&mut self, e: &RaceEntry, status: Option<&str>) {
        self.add_race(&e.variant, &e.race, status);
    }

    /// One race (`status`: what race-directed exposure found, if it ran).
    pub fn add_race(&mut self, variant: &str, r: &RaceReport, status: Option<&str>) {
        let pos = |a: &fencehound_racecheck::AccessReport| {
            a.cuda.as_ref().map(|c| SourcePos {
                file: PathBuf::from(&c.file),
                line: c.line,
            })
        };
        let describe = |a: &fencehound_racecheck::AccessReport| {
            format!(
                "{} {} by thread {} (CTA {}) at {}",
                a.semantics,
                a.access,
                a.global_tid,
                a.cta,
                a.cuda
                    .as_ref()
                    .map(|c| format!("{}:{}", file_name(&c.file), c.line))
                    .unwrap_or_else(|| format!("`{}`", a.instruction.trim()))
            )
        };
        let message = format!(
            "{} race ({}) in kernel `{}` (variant {variant}) on {} memory{}: first {}, then {}. Missing: {}.{} Seen {} times in {} execution(s).",
            r.class,
            r.conflict,
            r.kernel,
            r.space,
            r.allocation
                .as_ref()
                .map(|a| format!(" (`{a}`)"))
                .unwrap_or_default(),
            describe(&r.first),
            describe(&r.second),
            r.missing,
            status.map(|s| format!(" Exposure: {s}.")).unwrap_or_default(),
            r.occurrences,
            r.executions
        );
        let (Some(primary), related) = (
            pos(&r.second).or_else(|| pos(&r.first)),
            pos(&r.first).filter(|_| r.second.cuda.is_some()),
        ) else {
            // No CUDA line (hand-written PTX): nothing code scanning can point at.
            return;
        };
        let related: Vec<s::Location> = related
            .iter()
            .map(|p| self.location(&p.file, Some(p.line), None))
            .collect();
        let loc = self.location(&primary.file, Some(primary.line), None);
        let lines = format!(
            "{}:{}",
            r.first.cuda.as_ref().map_or(0, |c| c.line),
            primary.line
        );
        self.push(
            RACE,
            s::ResultLevel::Warning,
            message,
            loc,
            related,
            Vec::new(),
            &[
                variant,
                &r.kernel,
                &r.class.to_string(),
                &file_name(&primary.file.display().to_string()),
                &lines,
            ],
            serde_json::json!({ "variant": variant, "class": r.class.to_string(), "occurrences": r.occurrences }),
        );
    }

    /// The fences `minimize` says are missing, each with its insertion as a fix.
    pub fn add_minimize(&mut self, r: &MinimizeReport) {
        let stores = r
            .stores
            .iter()
            .filter_map(|s| {
                s.cuda
                    .as_ref()
                    .map(|c| format!("{}:{}", file_name(&c.file), c.line))
            })
            .collect::<Vec<_>>()
            .join(", ");
        // One result per source line and insertion: the PTX copies of an unrolled line
        // (or an inlined helper) get one fix, as in the patch.
        let mut seen: Vec<(std::path::PathBuf, u32, String)> = Vec::new();
        for f in &r.fences {
            let Some(pos) = site_pos(&f.after) else {
                continue;
            };
            let key = (pos.file.clone(), pos.line, f.insertion.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let indent: String = source_line(&pos.file, pos.line)
                .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
                .unwrap_or_default();
            let insertion = format!("{indent}{}\n", f.insertion.trim());
            let fix = self.fix(
                format!("Insert `{}` after line {}", f.insertion.trim(), pos.line),
                &pos.file,
                s::Region {
                    start_line: Some(pos.line as i64 + 1),
                    start_column: Some(1),
                    end_line: Some(pos.line as i64 + 1),
                    end_column: Some(1),
                    ..s::Region::default()
                },
                Some(insertion),
            );
            let message = format!(
                "Missing fence in variant `{}` ({} model): insert `{}` after {}:{}{}. Without it, buffering the stores at {} fails{}{}",
                r.variant,
                r.model,
                f.insertion.trim(),
                file_name(&pos.file.display().to_string()),
                pos.line,
                f.after
                    .statement
                    .as_ref()
                    .map(|s| format!(" (`{}`)", s.trim()))
                    .unwrap_or_default(),
                if stores.is_empty() { "these sites" } else { &stores },
                r.failure
                    .as_ref()
                    .map(|x| format!(" (seed {}, p_w={}: {})", x.seed, x.p, x.verdict))
                    .unwrap_or_default(),
                if r.confirmed {
                    "; with the fence(s), fresh seeds pass."
                } else {
                    "; NOT confirmed on fresh seeds."
                }
            );
            let message = match &r.scope_note {
                Some(n) => format!("{message} {n}"),
                None => message,
            };
            let snippet = f.after.statement.clone();
            let loc = self.location(&pos.file, Some(pos.line), snippet);
            self.push(
                MISSING,
                s::ResultLevel::Error,
                message,
                loc,
                Vec::new(),
                vec![fix],
                &[
                    &r.variant,
                    &file_name(&pos.file.display().to_string()),
                    &pos.line.to_string(),
                    f.insertion.trim(),
                ],
                serde_json::json!({ "variant": r.variant, "model": r.model, "confirmed": r.confirmed }),
            );
        }
    }

    /// Fences `audit` finds likely redundant (deletion fix) or wider in scope than needed
    /// (`__threadfence_block()` fix).
    pub fn add_audit(&mut self, r: &AuditReport) {
        for f in &r.fences {
            let Some(pos) = site_pos(&f.fence) else {
                continue;
            };
            let name = file_name(&pos.file.display().to_string());
            let line_text = source_line(&pos.file, pos.line).or_else(|| f.fence.statement.clone());
            if let FenceVerdict::LikelyRedundant {
                runs,
                failure_probability_below,
                ..
            } = &f.verdict
            {
                let fix = self.fix(
                    format!("Delete line {}", pos.line),
                    &pos.file,
                    s::Region {
                        start_line: Some(pos.line as i64),
                        start_column: Some(1),
                        end_line: Some(pos.line as i64 + 1),
                        end_column: Some(1),
                        ..s::Region::default()
                    },
                    None,
                );
                let message = format!(
                    "Likely redundant fence in variant `{}` ({} model) at {name}:{}: removing it never failed in {runs} executions (failure probability < {failure_probability_below:.4} at 95%).",
                    r.variant, r.model, pos.line
                );
                let loc = self.location(&pos.file, Some(pos.line), f.fence.statement.clone());
                self.push(
                    REDUNDANT,
                    s::ResultLevel::Warning,
                    message,
                    loc,
                    Vec::new(),
                    vec![fix],
                    &[&r.variant, &name, &pos.line.to_string()],
                    serde_json::json!({ "variant": r.variant, "model": r.model, "runs": runs }),
                );
                continue;
            }
            if f.scope != FenceScope::Device {
                continue;
            }
            let Some(FenceVerdict::LikelyRedundant { runs, .. }) = &f.block_scope else {
                continue;
            };
            // The fix replaces the call's text in the line, when the line spells it out.
            let mut fixes = Vec::new();
            if let Some(col) = line_text.as_deref().and_then(|t| t.find("__threadfence()")) {
                let start = line_text.as_deref().map_or(0, |t| t[..col].chars().count()) + 1;
                fixes.push(self.fix(
                    "Use __threadfence_block()",
                    &pos.file,
                    s::Region {
                        start_line: Some(pos.line as i64),
                        start_column: Some(start as i64),
                        end_column: Some((start + "__threadfence()".len()) as i64),
                        ..s::Region::default()
                    },
                    Some("__threadfence_block()".to_string()),
                ));
            }
            let message = format!(
                "Device-scope fence at {name}:{} in variant `{}`: block scope (`__threadfence_block()`) never failed in {runs} executions under the scoped model; all the ordering it gives is needed only within the block.",
                pos.line, r.variant
            );
            let loc = self.location(&pos.file, Some(pos.line), f.fence.statement.clone());
            self.push(
                SCOPE,
                s::ResultLevel::Note,
                message,
                loc,
                Vec::new(),
                fixes,
                &[&r.variant, &name, &pos.line.to_string()],
                serde_json::json!({ "variant": r.variant, "runs": runs }),
            );
        }
    }

    /// The SARIF document.
    pub fn to_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        let rules: Vec<s::ReportingDescriptor> = RULES
            .iter()
            .map(|(id, short, full)| s::ReportingDescriptor {
                id: id.to_string(),
                name: id.trim_start_matches("fencehound/").to_string(),
                short_description: s::MultiformatMessageString {
                    text: short.to_string(),
                },
                full_description: s::MultiformatMessageString {
                    text: full.to_string(),
                },
            })
            .collect();
        let driver = s::ToolComponent {
            name: "fencehound".to_string(),
            semantic_version: env!("CARGO_PKG_VERSION").to_string(),
            rules,
        };
        let run = s::Run {
            tool: s::Tool { driver },
            results: self.results.clone(),
        };
        let log = s::Sarif {
            schema:
                "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"
                    .to_string(),
            version: "2.1.0".to_string(),
            runs: vec![run],
        };
        serde_json::to_value(&log)
    }

    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(&self.to_value()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_under_the_base_and_normalised() {
        let log = SarifLog::new(Path::new("/work/repo"));
        let uri = |p: &str| log.artifact(Path::new(p)).uri;
        assert_eq!(uri("/work/repo/./campaigns/a.cu"), "campaigns/a.cu");
        assert_eq!(uri("/work/repo/x/../b.cu"), "b.cu");
        assert_eq!(uri("/elsewhere/c.cu"), "file:///elsewhere/c.cu");
        assert_eq!(variant_line("x\n[variants.a]\n", "a"), Some(2));
        assert_eq!(variant_line("x\n", "a"), None);
    }
}
