//! JUnit XML for CI test reports: one test suite per campaign report, one test case per
//! variant × model. A case fails when the variant does what it should not: it failed
//! (any `p_w`) although it is not expected to, or — for a variant the campaign expects
//! to fail, a deliberately underfenced one — it never failed. The failure message holds
//! the counts, the first failing execution's seed and the command that replays it.

use fencehound_fuzzer::Report;
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
#[error("cannot write JUnit XML: {0}")]
pub struct JunitError(String);

/// A JUnit document of one or more fuzz reports.
#[derive(Debug, Clone)]
pub struct JunitReport {
    inner: quick_junit::Report,
}

impl Default for JunitReport {
    fn default() -> Self {
        JunitReport {
            inner: quick_junit::Report::new("fencehound"),
        }
    }
}

impl JunitReport {
    /// Adds the report's cases as one test suite.
    pub fn add_fuzz_report(&mut self, report: &Report, report_path: &Path) {
        let mut suite = TestSuite::new(format!("fencehound.{}", report.campaign.name));
        suite.add_property(Property::new(
            "campaign_sha256",
            report.campaign.sha256.clone(),
        ));
        suite.add_property(Property::new("master_seed", report.master_seed.to_string()));
        suite.add_property(Property::new("tool", report.tool.clone()));
        suite.add_property(Property::new("report", report_path.display().to_string()));
        if let Some(s) = report.shard {
            suite.add_property(Property::new("shard", s.to_string()));
        }
        // Time per case: its share of the run's wall clock (executions are similar).
        let per_exec = if report.executions_done > 0 {
            report.wall_seconds / report.executions_done as f64
        } else {
            0.0
        };
        for v in &report.variants {
            for m in &report.models {
                let cells: Vec<_> = report
                    .summary
                    .iter()
                    .filter(|c| c.variant == v.name && &c.model == m)
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                let runs: u64 = cells.iter().map(|c| c.runs).sum();
                let failures: u64 = cells.iter().map(|c| c.failures).sum();
                let expect_fail = v.expect.get(m).is_some_and(|e| e == "fail");
                let table = cells
                    .iter()
                    .map(|c| {
                        format!(
                            "p_w={}: {}/{} failed, 95% CI [{:.3}, {:.3}]\n",
                            c.p, c.failures, c.runs, c.ci95.0, c.ci95.1
                        )
                    })
                    .collect::<String>();
                let first = report
                    .failures
                    .iter()
                    .find(|f| f.variant == v.name && &f.model == m);
                let status = match (failures > 0, expect_fail) {
                    (true, false) => {
                        let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        let message = match first {
                            Some(f) => format!(
                                "{failures} of {runs} executions failed; first: execution {} seed {} p_w={}: {}; replay: fencehound replay {} --exec {} --trace",
                                f.id,
                                f.seed,
                                f.p,
                                f.verdict.summary(),
                                report_path.display(),
                                f.id
                            ),
                            None => format!("{failures} of {runs} executions failed"),
                        };
                        st.set_message(message);
                        st.set_type(first.map_or("failure", |f| f.verdict.name()));
                        let mut desc = table.clone();
                        if let Some(f) = first {
                            if let fencehound_fuzzer::Verdict::WrongOutput { diff, .. } = &f.verdict
                            {
                                desc.push_str(diff);
                            }
                        }
                        st.set_description(desc);
                        st
                    }
                    (false, true) => {
                        let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        st.set_message(format!(
                            "expected to fail (a deliberately underfenced variant), but all {runs} executions passed: the bug was not found"
                        ));
                        st.set_type("not-detected");
                        st.set_description(table.clone());
                        st
                    }
                    _ => TestCaseStatus::success(),
                };
                let mut case = TestCase::new(format!("{} [{m}]", v.name), status);
                case.set_classname(format!("fencehound.{}", report.campaign.name));
                case.set_time(Duration::from_secs_f64(per_exec * runs as f64));
                case.add_property(Property::new("runs", runs.to_string()));
                case.add_property(Property::new("failures", failures.to_string()));
                if let Some(e) = v.expect.get(m) {
                    case.add_property(Property::new("expect", e.clone()));
                }
                case.set_system_out(table);
                suite.add_test_case(case);
            }
        }
        suite.set_time(Duration::from_secs_f64(report.wall_seconds.max(0.0)));
        self.inner.add_test_suite(suite);
    }

    pub fn to_xml(&self) -> Result<String, JunitError> {
        self.inner
            .to_string()
            .map_err(|e| JunitError(e.to_string()))
    }
}
