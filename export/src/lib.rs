//! fencehound's results where teams look: SARIF 2.1.0 for code scanning ([`sarif`]),
//! JUnit XML for CI test reports ([`junit`]), a self-contained HTML page with SVG plots
//! ([`html`]).

pub mod html;
pub mod junit;
pub mod sarif;
mod sarif_model;

pub use sarif::SarifLog;
