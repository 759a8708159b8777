//! A fuzz report as one self-contained HTML page: inline CSS, inline SVG plots drawn with
//! `plotters` (SVG backend, no fonts loaded: text is left to the browser), no script and
//! no external reference of any kind, so it opens from a file, an artifact store or a
//! mail attachment with no network.
//!
//! What it shows:
//! - the summary table (Bugaroo's Table IV: failures / runs per variant × model × `p_w`
//!   with 95% Wilson intervals);
//! - per variant, the failure rate against `p_w`, one line per model, with the
//!   intervals as error bars;
//! - per variant, the distribution of flush lengths (entries drained by one event) for
//!   global and shared memory — the shape of Bugaroo's Figures 3–4;
//! - time to the first failure per failing cell, in executions (deterministic) and an
//!   estimate in seconds (the run's mean time per execution);
//! - failure signatures with their first seed and replay command, the first stored
//!   failure of each failing cell with its diff;
//! - races, and fence findings from `minimize --json` / `audit --json` outputs, each with
//!   an excerpt of the CUDA source around the line (read when the page is made).

use fencehound_fuzzer::report::RaceEntry;
use fencehound_fuzzer::{Report, Verdict};
use fencehound_minimizer::{AuditReport, FenceVerdict, MinimizeReport};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {what} plot: {message}")]
pub struct HtmlError {
    what: String,
    message: String,
}

fn plot_err<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> HtmlError + '_ {
    move |e| HtmlError {
        what: what.to_string(),
        message: e.to_string(),
    }
}

/// Everything the page is made of.
pub struct HtmlInputs<'a> {
    pub report: &'a Report,
    /// How the report is named in replay commands.
    pub report_path: &'a Path,
    pub minimize: &'a [MinimizeReport],
    pub audit: &'a [AuditReport],
}

/// One colour per model, in the report's model order.
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string())
}

/// Lines `line ± 3` of `file`, the line itself marked; `None` when unreadable.
fn excerpt(file: &str, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let l = line as usize;
    if l == 0 || l > lines.len() {
        return None;
    }
    let (from, to) = (l.saturating_sub(3).max(1), (l + 3).min(lines.len()));
    let mut o = format!(
        "<figure class=\"excerpt\"><figcaption>{}:{line}</figcaption><pre>",
        esc(&file_name(file))
    );
    for (i, t) in lines.iter().enumerate().take(to).skip(from - 1) {
        let n = i + 1;
        let row = format!("{n:>5} | {}", esc(t));
        if n == l {
            let _ = writeln!(o, "<mark>{row}</mark>");
        } else {
            let _ = writeln!(o, "{row}");
        }
    }
    o.push_str("</pre></figure>");
    Some(o)
}

fn excerpt_or_note(file: &str, line: u32) -> String {
    excerpt(file, line).unwrap_or_else(|| {
        format!(
            "<p class=\"note\">{}:{line} (source not readable when this page was made)</p>",
            esc(&file_name(file))
        )
    })
}

/// Failure rate against `p_w` for one variant: a line and 95% error bars per model.
fn rate_plot(r: &Report, variant: &str) -> Result<String, HtmlError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 340)).into_drawing_area();
        let e = plot_err("failure rate");
        root.fill(&WHITE).map_err(&e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{variant}: failure rate vs p_w (95% intervals)"),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(-0.02f64..1.04f64, 0f64..1.02f64)
            .map_err(&e)?;
        chart
            .configure_mesh()
            .x_desc("p_w (probability a store is buffered)")
            .y_desc("failure rate")
            .x_labels(6)
            .y_labels(6)
            .draw()
            .map_err(&e)?;
        let n = r.models.len().max(1) as f64;
        for (k, m) in r.models.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            // Models side by side at each p_w, so that their error bars stay apart.
            let dx = (k as f64 - (n - 1.0) / 2.0) * 0.012;
            let mut cells: Vec<_> = r
                .summary
                .iter()
                .filter(|c| c.variant == variant && &c.model == m)
                .collect();
            cells.sort_by(|a, b| a.p.total_cmp(&b.p));
            if cells.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(
                    cells.iter().map(|c| (c.p + dx, c.rate)),
                    color.stroke_width(2),
                ))
                .map_err(&e)?
                .label(m.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(cells.iter().map(|c| {
                    ErrorBar::new_vertical(c.p + dx, c.ci95.0, c.rate, c.ci95.1, color.filled(), 8)
                }))
                .map_err(&e)?;
            chart
                .draw_series(
                    cells
                        .iter()
                        .map(|c| Circle::new((c.p + dx, c.rate), 3, color.filled())),
                )
                .map_err(&e)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(&e)?;
        root.present().map_err(&e)?;
    }
    Ok(svg)
}

/// Flush lengths of one variant, global and shared side by side, as fractions of all
/// flushes of that space; lengths above 32 are pooled into one bar.
fn flush_plot(r: &Report, variant: &str) -> Result<Option<String>, HtmlError> {
    let Some(st) = r.stats.get(variant) else {
        return Ok(None);
    };
    const CAP: u32 = 32;
    let pool = |m: &BTreeMap<u32, u64>| {
        let mut v: BTreeMap<u32, u64> = BTreeMap::new();
        for (&len, &n) in m {
            *v.entry(len.min(CAP)).or_default() += n;
        }
        let total: u64 = v.values().sum();
        (v, total)
    };
    let spaces = [
        ("global", pool(&st.global.flush_lengths)),
        ("shared", pool(&st.shared.flush_lengths)),
    ];
    if spaces.iter().all(|(_, (_, t))| *t == 0) {
        return Ok(None);
    }
    let max_len = spaces
        .iter()
        .flat_map(|(_, (v, _))| v.keys().copied())
        .max()
        .unwrap_or(1)
        .max(1);
    let max_frac = spaces
        .iter()
        .flat_map(|(_, (v, t))| v.values().map(move |n| *n as f64 / (*t).max(1) as f64))
        .fold(0.0f64, f64::max)
        .max(0.05);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 300)).into_drawing_area();
        let e = plot_err("flush length");
        root.fill(&WHITE).map_err(&e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{variant}: flush lengths (entries drained per flush)"),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0.4f64..(max_len as f64 + 0.6), 0f64..(max_frac * 1.1))
            .map_err(&e)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(if max_len >= CAP {
                format!("flush length ({CAP} = {CAP} or more)")
            } else {
                "flush length".to_string()
            })
            .y_desc("fraction of flushes")
            .x_label_formatter(&|x| format!("{}", x.round() as i64))
            .draw()
            .map_err(&e)?;
        for (k, (name, (v, total))) in spaces.iter().enumerate() {
            if *total == 0 {
                continue;
            }
            let color = if k == 0 {
                RGBColor(31, 119, 180)
            } else {
                RGBColor(255, 127, 14)
            };
            let (x0, x1) = if k == 0 { (-0.38, 0.0) } else { (0.0, 0.38) };
            chart
                .draw_series(v.iter().map(|(&len, &n)| {
                    let f = n as f64 / *total as f64;
                    Rectangle::new(
                        [(len as f64 + x0, 0.0), (len as f64 + x1, f)],
                        color.filled(),
                    )
                }))
                .map_err(&e)?
                .label(format!("{name} ({total} flushes)"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(&e)?;
        root.present().map_err(&e)?;
    }
    Ok(Some(svg))
}

/// Executions until the first failure of every failing cell, as horizontal bars (the
/// first cell on top).
fn first_failure_plot(cells: &[(String, u64)]) -> Result<String, HtmlError> {
    let n = cells.len().max(1);
    let height = (70 + 24 * n).min(2400) as u32;
    let max = cells.iter().map(|c| c.1).max().unwrap_or(1).max(1) as f64;
    let row = |i: usize| n - 1 - i;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, height)).into_drawing_area();
        let e = plot_err("time to first failure");
        root.fill(&WHITE).map_err(&e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("executions until the first failure", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(230)
            .build_cartesian_2d(0f64..max * 1.1, (0..n).into_segmented())
            .map_err(&e)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(r) if *r < n => cells
                    .get(n - 1 - *r)
                    .map(|c| c.0.clone())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .x_desc("executions (run number of the first failure + 1)")
            .draw()
            .map_err(&e)?;
        chart
            .draw_series(cells.iter().enumerate().map(|(i, (_, v))| {
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row(i))),
                        (*v as f64, SegmentValue::Exact(row(i) + 1)),
                    ],
                    RGBColor(214, 39, 40).filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(&e)?;
        root.present().map_err(&e)?;
    }
    Ok(svg)
}

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failing td.rate { background: #fde0dc; } tr.clean td.rate { background: #e3f4e1; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; } figcaption { font-size: 0.85em; color: #555; }
pre { background: #f6f8fa; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
mark { background: #fff3a3; display: block; }
code { background: #f0f0f0; padding: 0 0.2em; }
.note { color: #666; font-size: 0.9em; }
.worse { color: #b00020; font-weight: bold; }
"#;

/// The page.
pub fn render(inp: &HtmlInputs) -> Result<String, HtmlError> {
    let r = inp.report;
    let rp = inp.report_path.display().to_string();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>fencehound: {}</title><style>{STYLE}</style></head><body>",
        esc(&r.campaign.name)
    );
    let _ = write!(
        h,
        "<h1>fencehound report: {}</h1><table class=\"meta\">",
        esc(&r.campaign.name)
    );
    let row = |h: &mut String, k: &str, v: String| {
        let _ = write!(h, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    };
    row(&mut h, "tool", esc(&r.tool));
    row(&mut h, "report", format!("<code>{}</code>", esc(&rp)));
    row(
        &mut h,
        "campaign",
        format!(
            "<code>{}</code> (sha256 {})",
            esc(&r.campaign.path),
            esc(&r.campaign.campaign_sha256)
        ),
    );
    for s in &r.campaign.sources {
        row(
            &mut h,
            "source",
            format!("<code>{}</code> (sha256 {})", esc(&s.path), esc(&s.sha256)),
        );
    }
    row(
        &mut h,
        "plan",
        esc(&format!(
            "{} variant(s) × models {} × p_w {:?} × {} runs; master seed {}; scheduler {}{}",
            r.variants.len(),
            r.models.join(", "),
            r.p,
            r.runs,
            r.master_seed,
            r.scheduler,
            r.shard.map(|s| format!("; shard {s}")).unwrap_or_default()
        )),
    );
    row(
        &mut h,
        "executions",
        esc(&format!(
            "{} of {} in {:.1} s{}",
            r.executions_done,
            r.executions_planned,
            r.wall_seconds,
            if r.interrupted {
                " — INTERRUPTED"
            } else {
                ""
            }
        )),
    );
    row(
        &mut h,
        "failures",
        esc(&format!(
            "{} failing execution(s), {} distinct signature(s); the first {} per cell stored in full",
            r.failure_count(),
            r.signatures.len(),
            r.keep_failures
        )),
    );
    h.push_str("</table>");

    // Summary table.
    h.push_str("<h2 id=\"summary\">Summary</h2><table class=\"summary\"><tr><th>variant</th><th>model</th><th>p_w</th><th>failures / runs</th><th>rate</th><th>95% interval</th><th>expected</th></tr>");
    for c in &r.summary {
        let _ = write!(
            h,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td><td class=\"num rate\">{:.3}</td><td class=\"num\">[{:.3}, {:.3}]</td><td>{}</td></tr>",
            if c.failures > 0 { "failing" } else { "clean" },
            esc(&c.variant),
            esc(&c.model),
            c.p,
            c.failures,
            c.runs,
            c.rate,
            c.ci95.0,
            c.ci95.1,
            esc(c.expect.as_deref().unwrap_or("—"))
        );
    }
    h.push_str("</table>");
    let mism = r.expectation_mismatches();
    for m in &mism {
        let _ = write!(h, "<p class=\"worse\">expectation not met: {}</p>", esc(m));
    }

    // Rate plots, one per variant.
    h.push_str("<h2 id=\"rates\">Failure rate versus p_w</h2><div class=\"plots\">");
    for v in &r.variants {
        let svg = rate_plot(r, &v.name)?;
        let _ = write!(
            h,
            "<figure class=\"rate-plot\" data-variant=\"{}\">{svg}<figcaption>{}</figcaption></figure>",
            esc(&v.name),
            esc(&format!(
                "variant {}{}",
                v.name,
                if v.defines.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (-D {})",
                        v.defines
                            .iter()
                            .map(|(k, x)| format!("{k}={x}"))
                            .collect::<Vec<_>>()
                            .join(" -D ")
                    )
                }
            ))
        );
    }
    h.push_str("</div>");

    // Flush lengths.
    h.push_str("<h2 id=\"flushes\">Flush lengths</h2><p class=\"note\">How many buffered entries one drain event (fence, barrier, release, full buffer, exit, ...) made visible, summed over all executions of the variant — the distributions Bugaroo plots in its Figures 3–4.</p><div class=\"plots\">");
    let mut any_flush = false;
    for v in &r.variants {
        if let Some(svg) = flush_plot(r, &v.name)? {
            any_flush = true;
            let _ = write!(
                h,
                "<figure class=\"flush-plot\" data-variant=\"{}\">{svg}</figure>",
                esc(&v.name)
            );
        }
    }
    if !any_flush {
        h.push_str("<p class=\"note\">No store was buffered.</p>");
    }
    h.push_str("</div>");

    // Time to first failure.
    h.push_str("<h2 id=\"first-failure\">Time to first failure</h2>");
    let per_exec = if r.executions_done > 0 {
        r.wall_seconds / r.executions_done as f64
    } else {
        0.0
    };
    let firsts: Vec<(String, u64)> = r
        .summary
        .iter()
        .filter_map(|c| {
            c.first_failure_run.map(|run| {
                (
                    format!("{} {} p_w={}", c.variant, c.model, c.p),
                    run as u64 + 1,
                )
            })
        })
        .collect();
    if firsts.is_empty() {
        h.push_str("<p>No execution failed.</p>");
    } else {
        let svg = first_failure_plot(&firsts)?;
        let _ = write!(h, "<figure class=\"first-failure-plot\">{svg}</figure>");
        h.push_str("<table><tr><th>cell</th><th>executions</th><th>≈ seconds</th></tr>");
        for (name, n) in &firsts {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"num\">{n}</td><td class=\"num\">{:.3}</td></tr>",
                esc(name),
                *n as f64 * per_exec
            );
        }
        h.push_str("</table><p class=\"note\">Seconds are estimated from the run's mean time per execution on its machine.</p>");
    }

    // Signatures and first failures.
    if !r.signatures.is_empty() {
        h.push_str("<h2 id=\"signatures\">Failure signatures</h2><table><tr><th>variant</th><th>model</th><th>p_w</th><th>kind</th><th>first difference</th><th>count</th><th>first execution</th><th>replay</th></tr>");
        for s in r.signatures.iter().take(500) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{} (seed {})</td><td><code>fencehound replay {} --exec {} --trace</code></td></tr>",
                esc(&s.variant),
                esc(&s.model),
                s.p,
                esc(&s.kind),
                esc(&s.detail),
                s.count,
                s.first_id,
                s.first_seed,
                esc(&rp),
                s.first_id
            );
        }
        h.push_str("</table>");
        if r.signatures.len() > 500 {
            let _ = write!(
                h,
                "<p class=\"note\">{} more signatures in the report.</p>",
                r.signatures.len() - 500
            );
        }
        h.push_str("<h2 id=\"failures\">First failure of each failing cell</h2>");
        let mut seen = std::collections::BTreeSet::new();
        for f in &r.failures {
            if !seen.insert((f.variant.clone(), f.model.clone(), f.p.to_bits())) {
                continue;
            }
            let _ = write!(
                h,
                "<h3>{} {} p_w={}: execution {} (seed {})</h3><p>{}</p>",
                esc(&f.variant),
                esc(&f.model),
                f.p,
                f.id,
                f.seed,
                esc(&f.verdict.summary())
            );
            let detail = match &f.verdict {
                Verdict::WrongOutput { diff, .. } => diff.as_str(),
                Verdict::Deadlock { dump } | Verdict::Timeout { dump, .. } => dump.as_str(),
                _ => "",
            };
            if !detail.is_empty() {
                let _ = write!(h, "<pre>{}</pre>", esc(detail));
            }
        }
    }

    // Races.
    h.push_str("<h2 id=\"races\">Races</h2>");
    if r.races.is_empty() {
        h.push_str(if r.race {
            "<p>The race check found no race.</p>"
        } else {
            "<p class=\"note\">The race check did not run (<code>fuzz --race</code>).</p>"
        });
    }
    for e in &r.races {
        h.push_str(&race_html(e));
    }

    // Fences.
    if !inp.minimize.is_empty() || !inp.audit.is_empty() {
        h.push_str("<h2 id=\"fences\">Fences</h2>");
    }
    for m in inp.minimize {
        let _ = write!(
            h,
            "<h3>missing fences: variant {} ({} model){}</h3>",
            esc(&m.variant),
            esc(&m.model),
            if m.confirmed {
                " — confirmed on fresh seeds"
            } else {
                " — not confirmed"
            }
        );
        if m.fences.is_empty() {
            h.push_str("<p>No missing fence found.</p>");
        }
        // One entry per source line and insertion (the PTX copies of an unrolled line
        // get one fix, as in the patch).
        let mut seen: Vec<String> = Vec::new();
        for f in &m.fences {
            let key = match &f.after.cuda {
                Some(c) => format!("{}:{} {}", c.file, c.line, f.insertion),
                None => format!("PTX {} {}", f.after.at.ptx_line, f.insertion),
            };
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let _ = write!(
                h,
                "<p>insert <code>{}</code> after {}</p>",
                esc(f.insertion.trim()),
                f.after
                    .cuda
                    .as_ref()
                    .map(|c| esc(&format!("{}:{}", file_name(&c.file), c.line)))
                    .unwrap_or_else(|| esc(&format!("PTX line {}", f.after.at.ptx_line)))
            );
            if let Some(c) = &f.after.cuda {
                h.push_str(&excerpt_or_note(&c.file, c.line));
            }
        }
        if let Some(n) = &m.scope_note {
            let _ = write!(h, "<p>{}</p>", esc(n));
        }
        if !m.diff.is_empty() {
            let _ = write!(h, "<pre class=\"diff\">{}</pre>", esc(&m.diff));
        }
    }
    for a in inp.audit {
        let _ = write!(
            h,
            "<h3>fence audit: variant {} ({} model)</h3>",
            esc(&a.variant),
            esc(&a.model)
        );
        for f in &a.fences {
            let verdict = match &f.verdict {
                FenceVerdict::Necessary { failing } => format!(
                    "necessary: removing it fails (seed {}, p_w={})",
                    failing.seed, failing.p
                ),
                FenceVerdict::LikelyRedundant {
                    runs,
                    failure_probability_below,
                    given_that_stay,
                } => format!(
                    "likely redundant: 0 failures in {runs} runs without it (p_fail < {failure_probability_below:.4} at 95%){}",
                    if given_that_stay.is_empty() {
                        String::new()
                    } else {
                        format!(", given that {} stay", given_that_stay.join(", "))
                    }
                ),
                FenceVerdict::NeededWithOthersRemoved { failing, with } => format!(
                    "redundant alone, but not together with {} (seed {}, p_w={})",
                    with.join(", "),
                    failing.seed,
                    failing.p
                ),
                FenceVerdict::NotExercised { copies, unreached } => format!(
                    "not exercised by this campaign ({unreached} of {copies} copies never ran)"
                ),
                FenceVerdict::CannotJudge { reason } => format!("cannot judge: {reason}"),
            };
            let _ = write!(
                h,
                "<p><code>{}</code>: {}</p>",
                esc(f.fence.ptx.trim()),
                esc(&verdict)
            );
            if let Some(c) = &f.fence.cuda {
                h.push_str(&excerpt_or_note(&c.file, c.line));
            }
        }
    }
    h.push_str("<footer class=\"note\"><p>Made by fencehound from the report above; every execution replays bit for bit with <code>fencehound replay REPORT --exec ID --trace</code>.</p></footer></body></html>\n");
    Ok(h)
}

fn race_html(e: &RaceEntry) -> String {
    let r = &e.race;
    let mut h = format!(
        "<h3>{} race ({}) in <code>{}</code>, variant {}</h3><p>{} memory{}; seen {} times in {} execution(s), first in execution {}.</p><p>Missing: {}</p>",
        esc(&r.class.to_string()),
        esc(&r.conflict.to_string()),
        esc(&r.kernel),
        esc(&e.variant),
        esc(&r.space),
        r.allocation
            .as_ref()
            .map(|a| format!(" (<code>{}</code>)", esc(a)))
            .unwrap_or_default(),
        r.occurrences,
        r.executions,
        e.first_exec,
        esc(&r.missing)
    );
    for (which, a) in [("first", &r.first), ("second", &r.second)] {
        let _ = write!(
            h,
            "<p>{which}: {} {} by thread {} (CTA {}): <code>{}</code></p>",
            esc(&a.semantics),
            esc(&a.access),
            a.global_tid,
            a.cta,
            esc(a.instruction.trim())
        );
        if let Some(c) = &a.cuda {
            h.push_str(&excerpt_or_note(&c.file, c.line));
        }
    }
    h
}

#[cfg(test)]
mod tests {
    #[test]
    fn escaping() {
        assert_eq!(
            super::esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
