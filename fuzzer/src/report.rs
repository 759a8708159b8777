//! The report of a fuzzing campaign: everything needed to reproduce any execution (tool
//! version, campaign text and hash, the exact PTX of every variant, model, `p_w`, seed,
//! scheduler), failures in full, passes summarized, buffer statistics, and a summary
//! table in the style of Bugaroo's Table IV (failure probability per variant × `p_w` with
//! 95% Wilson intervals). Written atomically.

use crate::verdict::{wilson95, Verdict};
use fencehound_handlers::BufferStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub format: u32,
    pub tool: String,
    pub campaign: CampaignInfo,
    pub master_seed: u64,
    pub scheduler: String,
    pub models: Vec<String>,
    pub p: Vec<f64>,
    pub runs: u32,
    pub variants: Vec<VariantInfo>,
    /// Executions that failed, in full.
    pub failures: Vec<ExecRecord>,
    /// Cells of the summary table.
    pub summary: Vec<Cell>,
    /// Per-variant buffer statistics, summed over executions.
    pub stats: BTreeMap<String, BufferStats>,
    pub executions_planned: u64,
    pub executions_done: u64,
    pub interrupted: bool,
    pub wall_seconds: f64,
    /// Races found by the race check, deduplicated by (kernel, class, conflict, site pair)
    /// with occurrence and execution counts.
    #[serde(default)]
    pub races: Vec<fencehound_racecheck::RaceReport>,
    /// Executions the oracle could not judge (not counted in the summary). The runner
    /// stops at the first one; the CLI exits 2.
    #[serde(default)]
    pub oracle_errors: Vec<ExecRecord>,
    /// Where the executions ran: `vgpu`, `vgpu-instrumented` or `gpu`
    /// (see `crate::backend`), and on which device.
    #[serde(default = "default_backend")]
    pub backend: String,
    #[serde(default = "default_device")]
    pub device: String,
}

fn default_backend() -> String {
    "vgpu".into()
}

fn default_device() -> String {
    crate::backend::VGPU_DEVICE.into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CampaignInfo {
    pub name: String,
    pub path: String,
    /// SHA-256 of the campaign file text and the source text.
    pub sha256: String,
    /// The campaign file, verbatim (replay re-reads it from here).
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantInfo {
    pub name: String,
    pub defines: BTreeMap<String, String>,
    pub expect: BTreeMap<String, String>,
    pub ptx_sha256: String,
    pub ptx: String,
}

/// One execution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecRecord {
    pub id: u64,
    pub variant: String,
    pub model: String,
    pub p: f64,
    pub seed: u64,
    pub scheduler: String,
    pub verdict: Verdict,
    pub output_hash: String,
    pub lane_instructions: u64,
    pub wall_ms: u64,
    #[serde(default)]
    pub printf: String,
    /// The backend and device that ran it.
    #[serde(default = "default_backend")]
    pub backend: String,
    #[serde(default = "default_device")]
    pub device: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    pub variant: String,
    pub model: String,
    pub p: f64,
    pub runs: u64,
    pub failures: u64,
    pub rate: f64,
    pub ci95: (f64, f64),
    /// pass / fail / none: what the campaign expects.
    pub expect: Option<String>,
    /// Underfenced (failures seen), or `Clean` (none in `runs`).
    pub status: String,
}

impl Report {
    pub fn cell_mut(&mut self, variant: &str, model: &str, p: f64) -> &mut Cell {
        let i = match self
            .summary
            .iter()
            .position(|c| c.variant == variant && c.model == model && c.p == p)
        {
            Some(i) => i,
            None => {
                self.summary.push(Cell {
                    variant: variant.into(),
                    model: model.into(),
                    p,
                    runs: 0,
                    failures: 0,
                    rate: 0.0,
                    ci95: (0.0, 1.0),
                    expect: None,
                    status: String::new(),
                });
                self.summary.len() - 1
            }
        };
        &mut self.summary[i]
    }

    /// Merges one execution's races into the deduplicated list.
    pub fn add_races(&mut self, races: &[fencehound_racecheck::RaceReport]) {
        for r in races {
            let same = |x: &fencehound_racecheck::RaceReport| {
                x.kernel == r.kernel
                    && x.class == r.class
                    && x.conflict == r.conflict
                    && x.first.site == r.first.site
                    && x.second.site == r.second.site
            };
            match self.races.iter_mut().find(|x| same(x)) {
                Some(x) => {
                    x.occurrences += r.occurrences;
                    x.executions += 1;
                }
                None => {
                    let mut r = r.clone();
                    r.executions = 1;
                    self.races.push(r);
                }
            }
        }
    }

    /// Records one execution.
    pub fn add(&mut self, rec: ExecRecord, stats: &BufferStats) {
        if rec.verdict == Verdict::Interrupted {
            return;
        }
        if let Verdict::OracleError { .. } = rec.verdict {
            self.oracle_errors.push(rec);
            return;
        }
        self.executions_done += 1;
        let fail = rec.verdict.is_failure();
        let cell = self.cell_mut(&rec.variant, &rec.model, rec.p);
        cell.runs += 1;
        cell.failures += fail as u64;
        cell.rate = cell.failures as f64 / cell.runs as f64;
        cell.ci95 = wilson95(cell.failures, cell.runs);
        cell.status = if cell.failures > 0 {
            "failing".into()
        } else {
            "clean".into()
        };
        self.stats
            .entry(rec.variant.clone())
            .or_default()
            .merge(stats);
        if fail {
            self.failures.push(rec);
        }
    }

    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// Variants whose observed behaviour contradicts their `expect`.
    pub fn expectation_mismatches(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in &self.variants {
            for (model, e) in &v.expect {
                let cells: Vec<&Cell> = self
                    .summary
                    .iter()
                    .filter(|c| c.variant == v.name && &c.model == model)
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                let failures: u64 = cells.iter().map(|c| c.failures).sum();
                let runs: u64 = cells.iter().map(|c| c.runs).sum();
                match e.as_str() {
                    "pass" if failures > 0 => out.push(format!(
                        "{} under {model}: expected to pass, failed {failures} of {runs}",
                        v.name
                    )),
                    "fail" if failures == 0 => out.push(format!(
                        "{} under {model}: expected to fail, passed all {runs}",
                        v.name
                    )),
                    _ => {}
                }
            }
        }
        out
    }

    /// Writes the report atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report.json".into());
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    pub fn read(path: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let r: Report = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a fencehound report: {e}", path.display()))?;
        if r.format != FORMAT {
            return Err(format!(
                "{}: report format {} is not supported (this tool reads {FORMAT})",
                path.display(),
                r.format
            ));
        }
        Ok(r)
    }

    /// The summary table as text (Bugaroo Table IV style).
    pub fn table(&self) -> String {
        let mut ps: Vec<f64> = self.p.clone();
        ps.sort_by(|a, b| a.total_cmp(b));
        let mut out = String::new();
        let width = self
            .variants
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(7)
            .max(7);
        out.push_str(&format!("{:width$}  {:8}", "variant", "model"));
        for p in &ps {
            out.push_str(&format!("  {:>20}", format!("p_w={p}")));
        }
        out.push_str("  verdict\n");
        for v in &self.variants {
            for m in &self.models {
                let cells: Vec<Option<&Cell>> = ps
                    .iter()
                    .map(|p| {
                        self.summary
                            .iter()
                            .find(|c| c.variant == v.name && &c.model == m && c.p == *p)
                    })
                    .collect();
                if cells.iter().all(|c| c.is_none()) {
                    continue;
                }
                out.push_str(&format!("{:width$}  {:8}", v.name, m));
                let mut total_f = 0;
                for c in &cells {
                    match c {
                        Some(c) => {
                            total_f += c.failures;
                            out.push_str(&format!(
                                "  {:>20}",
                                format!(
                                    "{}/{} [{:.2},{:.2}]",
                                    c.failures, c.runs, c.ci95.0, c.ci95.1
                                )
                            ));
                        }
                        None => out.push_str(&format!("  {:>20}", "-")),
                    }
                }
                let runs: u64 = cells.iter().flatten().map(|c| c.runs).sum();
                let verdict = if total_f > 0 {
                    "UNDERFENCED".to_string()
                } else {
                    format!(
                        "no failure in {runs} (p_fail < {:.3} at 95%)",
                        3.0 / runs.max(1) as f64
                    )
                };
                let exp = v
                    .expect
                    .get(m)
                    .map(|e| format!(" (expected {e})"))
                    .unwrap_or_default();
                out.push_str(&format!("  {verdict}{exp}\n"));
            }
        }
        out
    }
}
