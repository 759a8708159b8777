//! The part of the SARIF 2.1.0 object model (OASIS Standard,
//! <https://docs.oasis-open.org/sarif/sarif/v2.1.0/>) that fencehound writes, as plain serde
//! types: property names as the standard spells them (§3.x), absent properties left out.
//!
//! Written here rather than taken from a crate: the generated model we used before
//! (`serde-sarif`) builds its types from the JSON schema at compile time, which brought
//! a second `syn`, schema code generation, `strum` and `typed-builder` into every build —
//! about 75 s of CPU of a clean test build on the team's 2-core machine (`cargo test
//! --no-run --timings`, 2026-12-02) for the eighteen objects below. The documents are
//! the same: `tests/it/cli_nightly.rs` validates them against the SARIF schema.

use serde::Serialize;
use std::collections::BTreeMap;

/// §3.13: the whole log.
#[derive(Debug, Clone, Serialize)]
pub struct Sarif {
    #[serde(rename = "$schema")]
    pub schema: String,
    pub version: String,
    pub runs: Vec<Run>,
}

/// §3.14.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub tool: Tool,
    pub results: Vec<Result>,
}

/// §3.18.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub driver: ToolComponent,
}

/// §3.19.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolComponent {
    pub name: String,
    pub semantic_version: String,
    pub rules: Vec<ReportingDescriptor>,
}

/// §3.49.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportingDescriptor {
    pub id: String,
    pub name: String,
    pub short_description: MultiformatMessageString,
    pub full_description: MultiformatMessageString,
}

/// §3.12.
#[derive(Debug, Clone, Serialize)]
pub struct MultiformatMessageString {
    pub text: String,
}

/// §3.27.10: `level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ResultLevel {
    Note,
    Warning,
    Error,
}

/// §3.27.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Result {
    pub rule_id: String,
    pub rule_index: i64,
    pub level: ResultLevel,
    pub message: Message,
    pub locations: Vec<Location>,
    pub partial_fingerprints: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_locations: Option<Vec<Location>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixes: Option<Vec<Fix>>,
    /// §3.8: a property bag, here only the tool's own properties.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, serde_json::Value>>,
}

/// §3.11.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    pub text: String,
}

/// §3.28.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

/// §3.29.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
}

/// §3.4.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactLocation {
    pub uri: String,
}

/// §3.30 (lines and columns are 1-based).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_column: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<ArtifactContent>,
}

/// §3.3.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactContent {
    pub text: String,
}

/// §3.55.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    pub description: Message,
    pub artifact_changes: Vec<ArtifactChange>,
}

/// §3.56.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactChange {
    pub artifact_location: ArtifactLocation,
    pub replacements: Vec<Replacement>,
}

/// §3.57: an insertion is the replacement of an empty region.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    pub deleted_region: Region,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inserted_content: Option<ArtifactContent>,
}
