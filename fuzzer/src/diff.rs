//! Night to night: what changed between two reports of a campaign.
//!
//! Per cell (variant × model × `p_w`): a *new* failure is a cell that failed now and did
//! not before (or did not run); a *fixed* one the reverse. A failure-rate change counts
//! only when the two 95% Wilson intervals do not overlap, so that noise between nights
//! of a few hundred runs is not reported as a change. Failure kinds (`wrong-output`,
//! `deadlock`, ...) a variant shows for the first time and races not seen before are
//! listed too.
//!
//! "Worse" respects the campaign's expectations: for a variant expected to fail (a
//! deliberately underfenced one), failing is the point and *not* failing any more is the
//! regression (the bug is no longer found); for every other variant, new failures,
//! higher rates, new failure kinds and new races are.
//!
//! Reports carry the tool version and the hashes of the campaign and of every file it
//! reads; when they differ, the diff says so first, since the two nights then did not
//! test the same thing.

use crate::report::{Cell, RaceEntry, Report};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Counts {
    pub runs: u64,
    pub failures: u64,
    pub rate: f64,
    pub ci95: (f64, f64),
}

impl From<&Cell> for Counts {
    fn from(c: &Cell) -> Counts {
        Counts {
            runs: c.runs,
            failures: c.failures,
            rate: c.rate,
            ci95: c.ci95,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellChange {
    pub variant: String,
    pub model: String,
    pub p: f64,
    pub old: Option<Counts>,
    pub new: Option<Counts>,
    /// What the campaign (new report) expects of this variant under this model.
    pub expect: Option<String>,
    /// Whether this change is a regression (see the module comment).
    pub worse: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KindChange {
    pub variant: String,
    pub model: String,
    pub kind: String,
    /// An example: the detail, id and seed of its first execution in the new report.
    pub detail: String,
    pub first_id: u64,
    pub first_seed: u64,
    pub worse: bool,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ReportDiff {
    pub campaign: String,
    /// Inputs that differ: tool version, campaign file, sources, plan.
    pub changed_inputs: Vec<String>,
    pub new_failures: Vec<CellChange>,
    pub fixed: Vec<CellChange>,
    pub higher_rates: Vec<CellChange>,
    pub lower_rates: Vec<CellChange>,
    pub new_failure_kinds: Vec<KindChange>,
    /// Races in the new report, not in the old (one line each).
    pub new_races: Vec<String>,
    pub gone_races: Vec<String>,
    /// Remarks that qualify the comparison (incomplete runs, race check not run).
    pub notes: Vec<String>,
}

impl ReportDiff {
    pub fn worse(&self) -> bool {
        self.new_failures.iter().any(|c| c.worse)
            || self.fixed.iter().any(|c| c.worse)
            || self.higher_rates.iter().any(|c| c.worse)
            || self.lower_rates.iter().any(|c| c.worse)
            || self.new_failure_kinds.iter().any(|k| k.worse)
            || !self.new_races.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.new_failures.is_empty()
            && self.fixed.is_empty()
            && self.higher_rates.is_empty()
            && self.lower_rates.is_empty()
            && self.new_failure_kinds.is_empty()
            && self.new_races.is_empty()
            && self.gone_races.is_empty()
    }
}

/// A race, named the same way across nights: variant, kernel, class and both accesses
/// by kind and CUDA line (site ids and addresses change with the PTX and the seed).
pub fn race_line(e: &RaceEntry) -> String {
    let r = &e.race;
    let place = |a: &fencehound_racecheck::AccessReport| match &a.cuda {
        Some(c) => format!(
            "{} {} at {}:{}",
            a.semantics,
            a.access,
            Path::new(&c.file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| c.file.clone()),
            c.line
        ),
        None => format!("{} {} `{}`", a.semantics, a.access, a.instruction.trim()),
    };
    format!(
        "{}: {} race ({}) in `{}`: {} / {}",
        e.variant,
        r.class,
        r.conflict,
        r.kernel,
        place(&r.first),
        place(&r.second)
    )
}

fn overlap(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string())
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

/// What changed from `old` to `new`.
pub fn diff(old: &Report, new: &Report) -> ReportDiff {
    let mut d = ReportDiff {
        campaign: new.campaign.name.clone(),
        ..ReportDiff::default()
    };
    // The inputs first: a diff across changed inputs compares different things.
    if old.campaign.name != new.campaign.name {
        d.changed_inputs.push(format!(
            "campaign name: {} → {}",
            old.campaign.name, new.campaign.name
        ));
    }
    if old.tool != new.tool {
        d.changed_inputs
            .push(format!("tool: {} → {}", old.tool, new.tool));
    }
    if old.campaign.campaign_sha256 != new.campaign.campaign_sha256 {
        d.changed_inputs.push(format!(
            "campaign file {}: sha256 {} → {}",
            file_name(&new.campaign.path),
            short(&old.campaign.campaign_sha256),
            short(&new.campaign.campaign_sha256)
        ));
    }
    for s in &new.campaign.sources {
        match old
            .campaign
            .sources
            .iter()
            .find(|o| file_name(&o.path) == file_name(&s.path))
        {
            Some(o) if o.sha256 == s.sha256 => {}
            Some(o) => d.changed_inputs.push(format!(
                "source {}: sha256 {} → {}",
                file_name(&s.path),
                short(&o.sha256),
                short(&s.sha256)
            )),
            None => d
                .changed_inputs
                .push(format!("source {}: not read before", file_name(&s.path))),
        }
    }
    for o in &old.campaign.sources {
        if !new
            .campaign
            .sources
            .iter()
            .any(|s| file_name(&s.path) == file_name(&o.path))
        {
            d.changed_inputs
                .push(format!("source {}: no longer read", file_name(&o.path)));
        }
    }
    for v in &new.variants {
        if let Some(o) = old.variants.iter().find(|o| o.name == v.name) {
            if o.ptx_sha256 != v.ptx_sha256 {
                d.changed_inputs.push(format!(
                    "variant {}: PTX sha256 {} → {}",
                    v.name,
                    short(&o.ptx_sha256),
                    short(&v.ptx_sha256)
                ));
            }
        }
    }
    let plan = |r: &Report| {
        format!(
            "models {}, p_w {:?}, {} runs, seed {}, scheduler {}",
            r.models.join(","),
            r.p,
            r.runs,
            r.master_seed,
            r.scheduler
        )
    };
    if plan(old) != plan(new) {
        d.changed_inputs
            .push(format!("plan: {} → {}", plan(old), plan(new)));
    }
    for (which, r) in [("old", old), ("new", new)] {
        if !r.complete() {
            d.notes.push(format!(
                "the {which} report is incomplete: {} of {} executions",
                r.executions_done, r.executions_planned
            ));
        }
    }

    let expect = |c: &Cell| {
        new.variants
            .iter()
            .find(|v| v.name == c.variant)
            .and_then(|v| v.expect.get(&c.model).cloned())
    };
    let expected_fail = |e: &Option<String>| e.as_deref() == Some("fail");
    let find = |r: &'_ Report, c: &Cell| -> Option<Cell> {
        r.summary
            .iter()
            .find(|x| x.variant == c.variant && x.model == c.model && x.p == c.p)
            .cloned()
    };
    for n in &new.summary {
        let o = find(old, n);
        let e = expect(n);
        let change = |worse: bool| CellChange {
            variant: n.variant.clone(),
            model: n.model.clone(),
            p: n.p,
            old: o.as_ref().map(Counts::from),
            new: Some(Counts::from(n)),
            expect: e.clone(),
            worse,
        };
        let old_failures = o.as_ref().map_or(0, |o| o.failures);
        if n.failures > 0 && old_failures == 0 {
            d.new_failures.push(change(!expected_fail(&e)));
        } else if n.failures == 0 && old_failures > 0 {
            d.fixed.push(change(expected_fail(&e)));
        } else if let Some(o) = &o {
            if !overlap(o.ci95, n.ci95) {
                if n.rate > o.rate {
                    d.higher_rates.push(change(!expected_fail(&e)));
                } else {
                    d.lower_rates.push(change(expected_fail(&e)));
                }
            }
        }
    }
    // Cells that ran before and not now say nothing about the kernel: a note.
    let gone: Vec<String> = old
        .summary
        .iter()
        .filter(|o| find(new, o).is_none())
        .map(|o| format!("{} {} p_w={}", o.variant, o.model, o.p))
        .collect();
    if !gone.is_empty() {
        d.notes
            .push(format!("not run in the new report: {}", gone.join(", ")));
    }

    let kinds = |r: &Report| -> BTreeSet<(String, String, String)> {
        r.signatures
            .iter()
            .map(|s| (s.variant.clone(), s.model.clone(), s.kind.clone()))
            .collect()
    };
    let old_kinds = kinds(old);
    let old_failing: BTreeSet<(String, String)> = old
        .summary
        .iter()
        .filter(|c| c.failures > 0)
        .map(|c| (c.variant.clone(), c.model.clone()))
        .collect();
    let mut seen = BTreeSet::new();
    for s in &new.signatures {
        let key = (s.variant.clone(), s.model.clone(), s.kind.clone());
        // Only for variants that failed before too: otherwise the cell is a new failure.
        if old_kinds.contains(&key)
            || !old_failing.contains(&(s.variant.clone(), s.model.clone()))
            || !seen.insert(key)
        {
            continue;
        }
        let e = new
            .variants
            .iter()
            .find(|v| v.name == s.variant)
            .and_then(|v| v.expect.get(&s.model).cloned());
        d.new_failure_kinds.push(KindChange {
            variant: s.variant.clone(),
            model: s.model.clone(),
            kind: s.kind.clone(),
            detail: s.detail.clone(),
            first_id: s.first_id,
            first_seed: s.first_seed,
            worse: !expected_fail(&e),
        });
    }

    let races = |r: &Report| -> BTreeSet<String> { r.races.iter().map(race_line).collect() };
    let (old_races, new_races) = (races(old), races(new));
    if new.race && !old.race {
        d.notes.push(
            "the old report ran without the race check (--race): every race counts as new".into(),
        );
    }
    if old.race && !new.race {
        d.notes
            .push("the new report ran without the race check (--race): no races compared".into());
    }
    d.new_races = new_races.difference(&old_races).cloned().collect();
    if new.race {
        d.gone_races = old_races.difference(&new_races).cloned().collect();
    }
    d
}

impl std::fmt::Display for ReportDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = |c: &Option<Counts>| match c {
            Some(c) => format!(
                "{}/{} ({:.1}%, 95% CI {:.1}–{:.1}%)",
                c.failures,
                c.runs,
                100.0 * c.rate,
                100.0 * c.ci95.0,
                100.0 * c.ci95.1
            ),
            None => "not run".into(),
        };
        let cell = |c: &CellChange| {
            format!(
                "{} {} p_w={}: {} → {}{}{}",
                c.variant,
                c.model,
                c.p,
                counts(&c.old),
                counts(&c.new),
                c.expect
                    .as_ref()
                    .map(|e| format!(" (expected to {e})"))
                    .unwrap_or_default(),
                if c.worse { "  WORSE" } else { "" }
            )
        };
        writeln!(f, "{}", self.campaign)?;
        if !self.changed_inputs.is_empty() {
            writeln!(
                f,
                "the two reports did not test the same inputs; changed since the old one:"
            )?;
            for c in &self.changed_inputs {
                writeln!(f, "  {c}")?;
            }
        }
        let sections: [(&str, &Vec<CellChange>); 4] = [
            ("new failures", &self.new_failures),
            ("fixed", &self.fixed),
            (
                "failure rate up (95% intervals do not overlap)",
                &self.higher_rates,
            ),
            (
                "failure rate down (95% intervals do not overlap)",
                &self.lower_rates,
            ),
        ];
        for (title, v) in sections {
            if !v.is_empty() {
                writeln!(f, "{title}:")?;
                for c in v {
                    writeln!(f, "  {}", cell(c))?;
                }
            }
        }
        if !self.new_failure_kinds.is_empty() {
            writeln!(f, "new kinds of failure:")?;
            for k in &self.new_failure_kinds {
                writeln!(
                    f,
                    "  {} {}: {} — {} (first: execution {}, seed {}){}",
                    k.variant,
                    k.model,
                    k.kind,
                    k.detail,
                    k.first_id,
                    k.first_seed,
                    if k.worse { "  WORSE" } else { "" }
                )?;
            }
        }
        if !self.new_races.is_empty() {
            writeln!(f, "new races:")?;
            for r in &self.new_races {
                writeln!(f, "  {r}  WORSE")?;
            }
        }
        if !self.gone_races.is_empty() {
            writeln!(f, "races no longer seen:")?;
            for r in &self.gone_races {
                writeln!(f, "  {r}")?;
            }
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        if self.is_empty() {
            writeln!(f, "no change")?;
        }
        write!(
            f,
            "{}",
            if self.worse() {
                "verdict: WORSE"
            } else {
                "verdict: not worse"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CampaignInfo, VariantInfo};
    use crate::verdict::wilson95;

    fn report(cells: &[(&str, u64, u64)]) -> Report {
        let info = CampaignInfo {
            name: "c".into(),
            path: "c.toml".into(),
            abs_path: String::new(),
            sha256: "x".into(),
            campaign_sha256: "y".into(),
            sources: Vec::new(),
            text: String::new(),
        };
        let variants = ["a", "b", "bug"]
            .iter()
            .map(|n| VariantInfo {
                name: n.to_string(),
                defines: Default::default(),
                expect: [(
                    "bugaroo".to_string(),
                    if *n == "bug" { "fail" } else { "pass" }.to_string(),
                )]
                .into(),
                ptx_sha256: "p".into(),
                ptx: String::new(),
            })
            .collect();
        let mut r = Report::new(
            info,
            variants,
            1,
            "random".into(),
            vec!["bugaroo".into()],
            vec![0.5],
            100,
            300,
        );
        for (v, f, n) in cells {
            let c = r.cell_mut(v, "bugaroo", 0.5);
            c.runs = *n;
            c.failures = *f;
            c.rate = *f as f64 / *n as f64;
            c.ci95 = wilson95(*f, *n);
        }
        r
    }

    #[test]
    fn only_non_overlapping_intervals_count_and_expectations_decide_worse() {
        let old = report(&[("a", 5, 100), ("b", 5, 100), ("bug", 50, 100)]);
        let new = report(&[("a", 60, 100), ("b", 8, 100), ("bug", 0, 100)]);
        let d = diff(&old, &new);
        assert_eq!(d.higher_rates.len(), 1, "{d}");
        assert_eq!(d.higher_rates[0].variant, "a");
        assert!(d.higher_rates[0].worse);
        // 5/100 → 8/100: the intervals overlap, no change.
        assert!(d.lower_rates.is_empty() && d.new_failures.is_empty());
        // The deliberately underfenced variant stopped failing: the bug is not found any
        // more, which is worse.
        assert_eq!(d.fixed.len(), 1);
        assert!(d.fixed[0].worse);
        assert!(d.worse());
        assert!(d.changed_inputs.is_empty());
        // The other way round: a rate down and a variant that fails as it should.
        let d = diff(&new, &old);
        assert_eq!(d.lower_rates.len(), 1);
        assert!(!d.lower_rates[0].worse);
        assert_eq!(d.new_failures.len(), 1);
        assert!(!d.new_failures[0].worse);
        assert!(!d.worse(), "{d}");
        let same = diff(&old, &old);
        assert!(same.is_empty() && !same.worse());
        assert!(same.to_string().contains("no change"));
    }
}
