//! From a PTX-level fix to a source patch a user can apply blindly.
//!
//! 1. **Where**: the instruction a PTX edit is anchored at has a CUDA inline stack
//!    ([`crate::ptxinfo`]). Frames in files that are not the user's (CCCL/CUB headers, the
//!    toolkit) are skipped: the edit goes into the innermost frame in the user's own files
//!    (the campaign's folder or the source's folder), while reports still name the
//!    instruction inside the library.
//! 2. **Which statement**: NVRTC's `-lineinfo` columns are per line, not per statement (two
//!    statements on one line share a column), so columns cannot pick the statement. Every
//!    statement on that line is a candidate ([`crate::cxx`]): after a simple statement,
//!    after a loop whose condition is on the line (the loop exit), at the start of an `if`
//!    body whose condition is on the line; unbraced bodies get braces.
//! 3. **Which candidate**: each is compiled with NVRTC (a program campaign's: built with
//!    its build command from a mirror of its folder, and the module it registers taken
//!    from one `sc` run) and its memory skeleton compared
//!    with the skeleton of the tested PTX change ([`crate::ptxinfo::changes`]). A candidate
//!    whose compiled changes equal the tested ones is *exact*; one that also adds fences
//!    elsewhere (a helper inlined at several call sites) *covers* it; the innermost exact
//!    candidate wins, else the one with the fewest extra changes.
//! 4. **Patch**: unified diffs with paths relative to the campaign file's folder (or, when
//!    an edited file lies outside it, the nearest folder holding both), so `git apply` works
//!    from there; included files are patched too.

use crate::cxx::{apply_edits, Side, SourceFile, StmtKind, TextEdit, TokKind};
use crate::edit::{FenceScope, PtxEdit};
use crate::ptxinfo::{self, Change, PtxInst};
use fencehound_fuzzer::Campaign;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Which files are the user's own: those under the campaign's folder or the source's
/// folder, except the toolkit's and CCCL's headers.
#[derive(Debug, Clone)]
pub struct UserFiles {
    roots: Vec<PathBuf>,
    excluded: Vec<PathBuf>,
}

impl UserFiles {
    pub fn for_campaign(c: &Campaign) -> UserFiles {
        let mut roots = vec![canonical(&c.dir)];
        if let Some(d) = c.source.parent() {
            roots.push(canonical(d));
        }
        let mut excluded = Vec::new();
        if let Some(cccl) = fencehound_toolchain::find_cccl_include() {
            excluded.push(canonical(&cccl.path));
        }
        UserFiles { roots, excluded }
    }

    pub fn contains(&self, path: &str) -> bool {
        let p = canonical(Path::new(path));
        if !p.is_file() {
            return false;
        }
        // Installed toolkits and Python wheels are never the user's.
        let foreign = p.components().any(|c| {
            matches!(c, Component::Normal(n) if n == ".tools" || n == "site-packages" || n == "cccl")
        });
        !foreign
            && self.roots.iter().any(|r| p.starts_with(r))
            && !self.excluded.iter().any(|e| p.starts_with(e))
    }
}

/// The absolute, normalized path (symlinks resolved when the file exists).
pub fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p)
        .or_else(|_| std::path::absolute(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

/// A place in the user's source, for reports: file, line and the statement's text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceSite {
    /// Relative to the campaign file's folder when possible.
    pub file: String,
    pub line: u32,
    /// The statement the edit is anchored at, on one line.
    pub text: String,
    /// What the edit does there, e.g. "insert `__threadfence();` after".
    pub action: String,
}

impl std::fmt::Display for SourceSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}:{} `{}`",
            self.action, self.file, self.line, self.text
        )
    }
}

/// Text edits in one file, anchored at one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceEdit {
    pub file: PathBuf,
    pub edits: Vec<TextEdit>,
    pub site: SourceSite,
}

/// How well a placed source edit reproduces the PTX change that was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "fit")]
pub enum Fit {
    /// The compiled patch changes exactly the tested memory operations and fences.
    Exact,
    /// It makes the tested change and `extra` more (e.g. the fence lands in a helper that
    /// is inlined at several call sites).
    Covers { extra: usize },
    /// No candidate compiled to the tested change; the first one is used and only the
    /// verification run judges it.
    Unmatched,
}

/// The source side of a set of PTX edits.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// One entry per PTX edit: the source edit that carries it (several PTX edits may share
    /// one, e.g. the copies of an inlined helper), and how well.
    pub per_edit: Vec<Option<(usize, Fit)>>,
    /// The distinct source edits.
    pub edits: Vec<SourceEdit>,
}

impl Placement {
    /// Only the source edits `kept` (indices into `edits`, in order): the placement of
    /// the PTX edits they carry, and those PTX edits' indices into `per_edit`.
    pub fn keep(&self, kept: &[usize]) -> (Placement, Vec<usize>) {
        let mut per_edit = Vec::new();
        let mut ptx = Vec::new();
        for (k, pe) in self.per_edit.iter().enumerate() {
            let Some((e, fit)) = pe else { continue };
            if let Some(new) = kept.iter().position(|x| x == e) {
                per_edit.push(Some((new, *fit)));
                ptx.push(k);
            }
        }
        let edits = kept.iter().map(|&e| self.edits[e].clone()).collect();
        (Placement { per_edit, edits }, ptx)
    }
}

/// One patched file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchedFile {
    /// Path relative to the patch root, as written in the diff headers.
    pub path: String,
    #[serde(skip)]
    pub absolute: PathBuf,
    #[serde(skip)]
    pub old: String,
    #[serde(skip)]
    pub new: String,
}

/// A multi-file patch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Patch {
    /// The folder to run `git apply` in, relative to the campaign file's folder (`.` when
    /// every file is under it).
    pub apply_from: String,
    pub files: Vec<PatchedFile>,
    /// Unified diff, paths `a/<path>` and `b/<path>`.
    pub diff: String,
    pub sites: Vec<SourceSite>,
}

/// The deepest folder that holds every path.
fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut it = paths.iter();
    let Some(first) = it.next() else {
        return PathBuf::from("/");
    };
    let mut acc: PathBuf = first.clone();
    for p in it {
        while !p.starts_with(&acc) {
            if !acc.pop() {
                return PathBuf::from("/");
            }
        }
    }
    acc
}

/// `to` relative to `from` (both absolute, normalized), with `..` where needed.
fn relative(from: &Path, to: &Path) -> String {
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..f.len() {
        parts.push("..".into());
    }
    for c in &t[common..] {
        parts.push(c.as_os_str().to_string_lossy().into_owned());
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// Builds the patch of a set of source edits (grouped per file, applied to the files'
/// current text).
pub fn build_patch(campaign: &Campaign, edits: &[SourceEdit]) -> Result<Patch, String> {
    let dir = canonical(&campaign.dir);
    let mut by_file: BTreeMap<PathBuf, Vec<TextEdit>> = BTreeMap::new();
    for e in edits {
        let v = by_file.entry(e.file.clone()).or_default();
        for t in &e.edits {
            if !v.contains(t) {
                v.push(t.clone());
            }
        }
    }
    let mut all: Vec<PathBuf> = by_file.keys().cloned().collect();
    let inside = all.iter().all(|p| p.starts_with(&dir));
    let root = if inside {
        dir.clone()
    } else {
        all.push(dir.clone());
        common_ancestor(&all)
    };
    let mut files = Vec::new();
    let mut diff = String::new();
    for (path, tes) in by_file {
        let old = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let new = apply_edits(&old, &tes)
            .ok_or_else(|| format!("overlapping edits in {}", path.display()))?;
        let rel = relative(&root, &path);
        if old != new {
            diff.push_str(
                &similar::TextDiff::from_lines(&old, &new)
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{rel}"), &format!("b/{rel}"))
                    .to_string(),
            );
        }
        files.push(PatchedFile {
            path: rel,
            absolute: path,
            old,
            new,
        });
    }
    let mut sites: Vec<SourceSite> = edits.iter().map(|e| e.site.clone()).collect();
    sites.dedup();
    Ok(Patch {
        apply_from: relative(&dir, &root),
        files,
        diff,
        sites,
    })
}

/// The compiled memory skeleton of a set of file texts.
#[derive(Debug)]
pub struct Compiled {
    pub ptx: String,
    pub skeleton: Vec<(String, Vec<String>)>,
    /// A program campaign's patched program, built with the campaign's own build command
    /// and run once for its reference (`ptx` is the module it registered): verification
    /// fuzzes this program, not the original running edited PTX.
    pub program: Option<Arc<PatchedProgram>>,
}

/// A program campaign built from patched files: a mirror of the campaign's folders in
/// which the patched files are real files and everything else links to the original.
#[derive(Debug)]
pub struct PatchedProgram {
    pub prepared: Arc<fencehound_fuzzer::Prepared>,
    /// Holds the mirror (`{dir}` of the patched campaign) while the program runs.
    _mirror: tempfile::TempDir,
}

/// Mirrors `from` into `to`: patched files are written, folders in `open` (those on the
/// way to a patched file or to a folder the campaign names) are recreated, and every
/// other entry becomes a symbolic link to the original.
fn mirror(
    from: &Path,
    to: &Path,
    files: &BTreeMap<PathBuf, String>,
    open: &BTreeSet<PathBuf>,
) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for e in entries.flatten() {
        let src = from.join(e.file_name());
        let dst = to.join(e.file_name());
        if let Some(text) = files.get(&src) {
            std::fs::write(&dst, text)
                .map_err(|e| format!("cannot write {}: {e}", dst.display()))?;
        } else if open.contains(&src) {
            mirror(&src, &dst, files, open)?;
        } else {
            #[cfg(unix)]
            std::os::unix::fs::symlink(&src, &dst)
                .map_err(|e| format!("cannot link {}: {e}", dst.display()))?;
            #[cfg(not(unix))]
            return Err("verifying a program's patch needs symbolic links (Unix)".into());
        }
    }
    Ok(())
}

/// The replaced files of one compilation (path, text), sorted by path.
type FileSet = Vec<(PathBuf, String)>;

/// Compiles the campaign's variant with some files replaced, exactly as
/// `fencehound_fuzzer::prepare` compiles it otherwise. Replaced headers are written to a
/// mirror folder searched before the campaign's folder.
pub struct Compiler {
    campaign: Arc<Campaign>,
    variant: String,
    done: HashMap<FileSet, Result<Arc<Compiled>, String>>,
    /// NVRTC runs (cache hits of this compiler not counted).
    pub compiles: u32,
    pub seconds: f64,
}

impl Compiler {
    pub fn new(campaign: Arc<Campaign>, variant: &str) -> Compiler {
        Compiler {
            campaign,
            variant: variant.to_string(),
            done: HashMap::new(),
            compiles: 0,
            seconds: 0.0,
        }
    }

    /// Compiles with `files` (absolute path → new text) in place of the files on disk.
    pub fn compile(&mut self, files: &BTreeMap<PathBuf, String>) -> Result<Arc<Compiled>, String> {
        let key: FileSet = files.iter().map(|(p, t)| (p.clone(), t.clone())).collect();
        if let Some(r) = self.done.get(&key) {
            return r.clone();
        }
        let start = std::time::Instant::now();
        let r = self.compile_uncached(files).map(Arc::new);
        self.compiles += 1;
        self.seconds += start.elapsed().as_secs_f64();
        self.done.insert(key, r.clone());
        r
    }

    fn compile_uncached(&self, files: &BTreeMap<PathBuf, String>) -> Result<Compiled, String> {
        if self.campaign.is_program() {
            return self.build_program(files);
        }
        let c = &self.campaign;
        let v = c
            .variant(&self.variant)
            .ok_or_else(|| format!("no variant `{}`", self.variant))?;
        let main = canonical(&c.source);
        let src = match files.get(&main) {
            Some(t) => t.clone(),
            None => std::fs::read_to_string(&c.source)
                .map_err(|e| format!("cannot read {}: {e}", c.source.display()))?,
        };
        let mut req =
            fencehound_toolchain::CompileRequest::new(src, c.source.display().to_string());
        req.defines = v
            .defines
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        req.extra_options = c.file.nvrtc_options.clone();
        if let Some(a) = &c.file.arch {
            req.arch = a.clone();
        }
        let headers: Vec<(&PathBuf, &String)> = files.iter().filter(|(p, _)| **p != main).collect();
        let dir = canonical(&c.dir);
        let mut include = Vec::new();
        // Patched headers go to a mirror of the folders involved. NVRTC looks for
        // `#include "x"` next to the file named in the request first, so the main source
        // is named as if it lay in the mirror too (its text is passed directly).
        let mirror = if headers.is_empty() {
            None
        } else {
            Some(
                tempfile::tempdir()
                    .map_err(|e| format!("cannot create a temporary folder: {e}"))?,
            )
        };
        if let Some(m) = &mirror {
            let mut all: Vec<PathBuf> = headers.iter().map(|(p, _)| (*p).clone()).collect();
            all.push(dir.clone());
            all.push(main.clone());
            let root = common_ancestor(&all);
            for (p, text) in &headers {
                let rel = p.strip_prefix(&root).map_err(|e| e.to_string())?;
                let to = m.path().join(rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                std::fs::write(&to, text).map_err(|e| e.to_string())?;
            }
            if let Ok(rel) = main.strip_prefix(&root) {
                req.file_name = m.path().join(rel).display().to_string();
            }
            let mut dirs = vec![dir.clone()];
            if let Some(sd) = main.parent() {
                dirs.push(sd.to_path_buf());
            }
            for d in dirs {
                if let Ok(rel) = d.strip_prefix(&root) {
                    include.push(m.path().join(rel));
                }
            }
        }
        include.push(c.dir.clone());
        req.include_dirs = include;
        let out = fencehound_toolchain::compile(&req).map_err(|e| e.to_string())?;
        let module = fencehound_ptx::parse(&c.source.display().to_string(), &out.ptx)
            .map_err(|e| e.to_string())?;
        Ok(Compiled {
            skeleton: ptxinfo::skeleton(&module),
            ptx: out.ptx,
            program: None,
        })
    }

    /// A program campaign cannot be compiled with NVRTC (its source holds host code): the
    /// campaign's folder is mirrored with `files` in place of the originals, the program
    /// is built there with the campaign's own build command and run once under `sc`
    /// (`fencehound_fuzzer::prepare`), and the module it registers is the result.
    fn build_program(&self, files: &BTreeMap<PathBuf, String>) -> Result<Compiled, String> {
        let c = &self.campaign;
        let dir = canonical(&c.dir);
        let mut anchors = vec![dir.clone(), canonical(&c.source), canonical(&c.path)];
        anchors.extend(files.keys().cloned());
        let root = common_ancestor(&anchors);
        let mut open = BTreeSet::new();
        for a in &anchors {
            let mut p = a.as_path();
            while let Some(parent) = p.parent() {
                if !parent.starts_with(&root) {
                    break;
                }
                open.insert(parent.to_path_buf());
                p = parent;
            }
        }
        open.insert(dir.clone());
        let tmp = tempfile::Builder::new()
            .prefix("fencehound-patched-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        mirror(&root, tmp.path(), files, &open)?;
        let moved = |p: &Path| -> PathBuf {
            let p = canonical(p);
            match p.strip_prefix(&root) {
                Ok(rel) => tmp.path().join(rel),
                Err(_) => p,
            }
        };
        let mut patched = (**c).clone();
        patched.dir = moved(&c.dir);
        patched.source = moved(&c.source);
        patched.path = moved(&c.path);
        let prepared = fencehound_fuzzer::prepare(Arc::new(patched), &self.variant)
            .map_err(|e| e.to_string())?;
        Ok(Compiled {
            skeleton: ptxinfo::skeleton(&prepared.module),
            ptx: prepared.ptx.clone(),
            program: Some(Arc::new(PatchedProgram {
                prepared: Arc::new(prepared),
                _mirror: tmp,
            })),
        })
    }
}

/// Whether the user's code already uses libcu++ atomics (then a release store or acquire
/// load through `cuda::atomic_ref` is a fix in the code's own idiom).
pub fn uses_libcupp(text: &str) -> bool {
    [
        "<cuda/atomic>",
        "<cuda/std/atomic>",
        "atomic_ref",
        "cuda::atomic",
    ]
    .iter()
    .any(|n| text.contains(n))
}

/// Source-level placement of PTX edits.
pub struct Placer<'a> {
    pub campaign: &'a Campaign,
    pub user: UserFiles,
    pub insts: &'a [PtxInst],
    pub base: &'a fencehound_ptx::Module,
    base_skeleton: Vec<(String, Vec<String>)>,
    files: HashMap<PathBuf, Option<Arc<SourceFile>>>,
    /// Most NVRTC runs spent on one PTX edit's candidates.
    pub max_probes: usize,
}

/// One candidate: the source edit and the innermost-first rank of its frame.
type Candidate = SourceEdit;

impl<'a> Placer<'a> {
    pub fn new(
        campaign: &'a Campaign,
        base: &'a fencehound_ptx::Module,
        insts: &'a [PtxInst],
    ) -> Placer<'a> {
        Placer {
            campaign,
            user: UserFiles::for_campaign(campaign),
            insts,
            base,
            base_skeleton: ptxinfo::skeleton(base),
            files: HashMap::new(),
            max_probes: 8,
        }
    }

    pub fn inst(&self, at: &crate::edit::InstRef) -> Option<&'a PtxInst> {
        self.insts.iter().find(|i| &i.at == at)
    }

    fn file(&mut self, path: &str) -> Option<(PathBuf, Arc<SourceFile>)> {
        let p = canonical(Path::new(path));
        let f = self
            .files
            .entry(p.clone())
            .or_insert_with(|| {
                std::fs::read_to_string(&p)
                    .ok()
                    .map(|t| Arc::new(SourceFile::parse(&t)))
            })
            .clone()?;
        Some((p, f))
    }

    /// The path shown in reports: relative to the campaign's folder.
    pub fn display(&self, p: &Path) -> String {
        relative(&canonical(&self.campaign.dir), p)
    }

    /// Whether any of the user's files uses libcu++ atomics.
    pub fn user_uses_libcupp(&mut self) -> bool {
        let mut paths: BTreeSet<String> = BTreeSet::new();
        paths.insert(self.campaign.source.display().to_string());
        for i in self.insts {
            for f in &i.stack {
                paths.insert(f.file.clone());
            }
        }
        paths.into_iter().any(|p| {
            self.user.contains(&p) && self.file(&p).is_some_and(|(_, f)| uses_libcupp(&f.text))
        })
    }

    /// The user frames of an instruction's stack, innermost first: (file, line).
    pub fn user_frames(&self, inst: &PtxInst) -> Vec<(String, u32)> {
        inst.stack
            .iter()
            .filter(|f| self.user.contains(&f.file))
            .map(|f| (f.file.clone(), f.line))
            .collect()
    }

    /// Candidate source edits for one PTX edit, most likely first.
    pub fn candidates(&mut self, e: &PtxEdit) -> Vec<Candidate> {
        let Some(inst) = self.inst(e.anchor()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (file, line) in self.user_frames(inst).into_iter().take(3) {
            let Some((path, sf)) = self.file(&file) else {
                continue;
            };
            let shown = self.display(&path);
            let paths = sf.stmts_on_line(line);
            let site = |s: &crate::cxx::Stmt, action: String| SourceSite {
                file: shown.clone(),
                line,
                text: one_line(sf.stmt_text(s)),
                action,
            };
            let mut push = |edits: Option<Vec<TextEdit>>, site: SourceSite| {
                if let Some(edits) = edits.filter(|v| !v.is_empty()) {
                    let c = SourceEdit {
                        file: path.clone(),
                        edits,
                        site,
                    };
                    if !out.contains(&c) {
                        out.push(c);
                    }
                }
            };
            match e {
                PtxEdit::InsertFence { .. } | PtxEdit::InsertWarpSync { .. } => {
                    let new = match e {
                        PtxEdit::InsertFence { scope, .. } => scope.cuda(),
                        _ => "__syncwarp();",
                    };
                    // Simple statements first, in source order; then loops and ifs whose
                    // condition is on the line.
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        if s.kind == StmtKind::Simple {
                            push(
                                sf.insert_stmt(p, Side::After, new),
                                site(s, format!("insert `{new}` after")),
                            );
                        }
                    }
                    // After the loop whose body the statement ends: an unrolled loop's
                    // copies of the statement need one fence after the last of them (the
                    // search moves fences to the end of each run of copies), which a fence
                    // after the statement would put after every copy. Tried after the
                    // statement's own candidate, so it is taken only when it compiles to
                    // the searched change and that one does not (`place`).
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        if s.kind != StmtKind::Simple {
                            continue;
                        }
                        if let Some(lp) = sf.loop_ended_by(p) {
                            if let Some(l) = sf.get(&lp) {
                                push(
                                    sf.insert_stmt(&lp, Side::After, new),
                                    SourceSite {
                                        file: shown.clone(),
                                        line: sf.lines_of(l).1,
                                        text: one_line(sf.stmt_text(l)),
                                        action: format!("insert `{new}` after the loop"),
                                    },
                                );
                            }
                        }
                    }
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        let cond_line = |c: (usize, usize)| {
                            sf.tokens.get(c.0).map(|t| t.line) == Some(line)
                                || sf.tokens.get(c.1).map(|t| t.line) == Some(line)
                        };
                        match &s.kind {
                            StmtKind::Loop { cond } | StmtKind::DoWhile { cond }
                                if cond_line(*cond) =>
                            {
                                push(
                                    sf.insert_stmt(p, Side::After, new),
                                    site(s, format!("insert `{new}` after the loop")),
                                );
                            }
                            StmtKind::If { cond, .. } if cond_line(*cond) => {
                                let mut edits = sf.insert_at_branch_start(p, 0, new);
                                if s.children.len() > 1 {
                                    if let (Some(a), Some(b)) =
                                        (edits.as_mut(), sf.insert_at_branch_start(p, 1, new))
                                    {
                                        a.extend(b);
                                    }
                                }
                                push(
                                    edits,
                                    site(
                                        s,
                                        format!("insert `{new}` at the start of the branches of"),
                                    ),
                                );
                            }
                            _ => {}
                        }
                    }
                }
                PtxEdit::RemoveFence { .. } => {
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        if s.kind == StmtKind::Simple && looks_like_fence(&sf, s) {
                            push(sf.remove_stmt(p), site(s, "remove".into()));
                        }
                    }
                }
                PtxEdit::WidenFence { .. } | PtxEdit::NarrowFence { .. } => {
                    let widen = matches!(e, PtxEdit::WidenFence { .. });
                    let swaps: [(&str, &str); 2] = if widen {
                        [
                            ("__threadfence_block", "__threadfence"),
                            ("thread_scope_block", "thread_scope_device"),
                        ]
                    } else {
                        [
                            ("__threadfence", "__threadfence_block"),
                            ("thread_scope_device", "thread_scope_block"),
                        ]
                    };
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        for (from, to) in swaps {
                            for k in s.first..=s.last {
                                if sf.tok(k) == from {
                                    let t = &sf.tokens[k];
                                    push(
                                        Some(vec![TextEdit {
                                            start: t.span.start,
                                            end: t.span.end,
                                            text: to.into(),
                                        }]),
                                        site(s, format!("change `{from}` to `{to}` in")),
                                    );
                                }
                            }
                        }
                    }
                }
                PtxEdit::Release { .. } | PtxEdit::Acquire { .. } => {
                    let to = if matches!(e, PtxEdit::Release { .. }) {
                        "memory_order_release"
                    } else {
                        "memory_order_acquire"
                    };
                    for p in &paths {
                        let Some(s) = sf.get(p) else { continue };
                        for k in s.first..=s.last {
                            if sf.tok(k) == "memory_order_relaxed" {
                                let t = &sf.tokens[k];
                                push(
                                    Some(vec![TextEdit {
                                        start: t.span.start,
                                        end: t.span.end,
                                        text: to.into(),
                                    }]),
                                    site(s, format!("change `memory_order_relaxed` to `{to}` in")),
                                );
                            }
                        }
                        if matches!(e, PtxEdit::Release { .. }) && s.kind == StmtKind::Simple {
                            if let Some(te) = release_store_rewrite(&sf, s) {
                                push(
                                    Some(vec![te]),
                                    site(s, "make a release store (`cuda::atomic_ref`) of".into()),
                                );
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Places a set of PTX edits in the source. `compiler` probes candidates.
    pub fn place(&mut self, edits: &[PtxEdit], compiler: &mut Compiler) -> Placement {
        let Some(target_module) = crate::edit::apply_all(self.base, edits) else {
            return Placement {
                per_edit: vec![None; edits.len()],
                edits: Vec::new(),
            };
        };
        let target: BTreeSet<Change> =
            ptxinfo::changes(&self.base_skeleton, &ptxinfo::skeleton(&target_module))
                .into_iter()
                .collect();
        let mut placement = Placement {
            per_edit: vec![None; edits.len()],
            edits: Vec::new(),
        };
        for i in 0..edits.len() {
            if placement.per_edit[i].is_some() {
                continue;
            }
            let want: BTreeSet<Change> = match crate::edit::apply_all(self.base, &edits[i..=i]) {
                Some(m) => ptxinfo::changes(&self.base_skeleton, &ptxinfo::skeleton(&m))
                    .into_iter()
                    .collect(),
                None => continue,
            };
            let cands = self.candidates(&edits[i]);
            let mut best: Option<(usize, SourceEdit, BTreeSet<Change>)> = None;
            let mut chosen: Option<(SourceEdit, Fit, BTreeSet<Change>)> = None;
            for c in cands.iter().take(self.max_probes) {
                let Some(got) = self.probe(c, compiler) else {
                    continue;
                };
                if !want.is_subset(&got) {
                    continue;
                }
                let extra = got.difference(&target).count();
                if extra == 0 {
                    chosen = Some((c.clone(), Fit::Exact, got));
                    break;
                }
                if best.as_ref().is_none_or(|(e, _, _)| extra < *e) {
                    best = Some((extra, c.clone(), got));
                }
            }
            let chosen =
                chosen.or_else(|| best.map(|(extra, c, got)| (c, Fit::Covers { extra }, got)));
            let (edit, fit, got) = match chosen {
                Some(x) => x,
                None => match cands.into_iter().next() {
                    Some(c) => (c, Fit::Unmatched, BTreeSet::new()),
                    None => continue,
                },
            };
            let k = match placement.edits.iter().position(|e| *e == edit) {
                Some(k) => k,
                None => {
                    placement.edits.push(edit);
                    placement.edits.len() - 1
                }
            };
            placement.per_edit[i] = Some((k, fit));
            // Other PTX edits this source edit also carries (copies of one statement).
            for j in i + 1..edits.len() {
                if placement.per_edit[j].is_some() || got.is_empty() {
                    continue;
                }
                if let Some(m) = crate::edit::apply_all(self.base, &edits[j..=j]) {
                    let w: BTreeSet<Change> =
                        ptxinfo::changes(&self.base_skeleton, &ptxinfo::skeleton(&m))
                            .into_iter()
                            .collect();
                    if !w.is_empty() && w.is_subset(&got) {
                        placement.per_edit[j] = Some((k, fit));
                    }
                }
            }
        }
        placement
    }

    /// The skeleton changes a candidate compiles to (None: it does not compile).
    fn probe(&mut self, c: &SourceEdit, compiler: &mut Compiler) -> Option<BTreeSet<Change>> {
        let (_, sf) = self.file(&c.file.display().to_string())?;
        let new = apply_edits(&sf.text, &c.edits)?;
        let mut files = BTreeMap::new();
        files.insert(c.file.clone(), new);
        let compiled = compiler.compile(&files).ok()?;
        Some(
            ptxinfo::changes(&self.base_skeleton, &compiled.skeleton)
                .into_iter()
                .collect(),
        )
    }

    /// Whether the compiled patch makes exactly the changes of `edits`.
    pub fn matches(&self, edits: &[PtxEdit], compiled: &Compiled) -> bool {
        let Some(m) = crate::edit::apply_all(self.base, edits) else {
            return false;
        };
        ptxinfo::changes(&self.base_skeleton, &ptxinfo::skeleton(&m))
            == ptxinfo::changes(&self.base_skeleton, &compiled.skeleton)
    }
}

/// A statement that is (most likely) just a fence: a fence call, or a bare macro name
/// (`UNLOCK_FENCE;`) standing for one.
fn looks_like_fence(sf: &SourceFile, s: &crate::cxx::Stmt) -> bool {
    let toks: Vec<&str> = (s.first..=s.last).map(|k| sf.tok(k)).collect();
    let fence_names = [
        "__threadfence",
        "__threadfence_block",
        "__threadfence_system",
        "atomic_thread_fence",
        "__syncwarp",
    ];
    if toks.iter().any(|t| fence_names.contains(t)) {
        return true;
    }
    // `NAME;` or `NAME();` (a macro the campaign defines as a fence)
    let macro_like = sf
        .tokens
        .get(s.first)
        .is_some_and(|t| t.kind == TokKind::Ident);
    macro_like && (toks[1..] == [";"] || toks[1..] == ["(", ")", ";"])
}

/// `LHS = RHS;` → a release store through `cuda::atomic_ref` (device scope). Only for a
/// plain assignment whose left side is not a declaration.
fn release_store_rewrite(sf: &SourceFile, s: &crate::cxx::Stmt) -> Option<TextEdit> {
    let mut eq = None;
    let mut depth = 0i32;
    for k in s.first..s.last {
        match sf.tok(k) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "=" if depth == 0 => {
                if eq.is_some() {
                    return None;
                }
                eq = Some(k);
            }
            _ => {}
        }
    }
    let eq = eq?;
    // Both sides must be non-empty: `lhs = rhs;`.
    if eq == s.first || eq + 1 >= s.last || sf.tok(s.last) != ";" {
        return None;
    }
    // `int x = …` declares: two identifiers in a row on the left.
    for k in s.first..eq.saturating_sub(1) {
        if sf.tokens[k].kind == TokKind::Ident && sf.tokens[k + 1].kind == TokKind::Ident {
            return None;
        }
    }
    let lhs = sf.text[sf.tokens[s.first].span.start..sf.tokens[eq - 1].span.end].trim();
    let rhs = sf.text[sf.tokens[eq + 1].span.start..sf.tokens[s.last - 1].span.end].trim();
    Some(TextEdit {
        start: sf.tokens[s.first].span.start,
        end: sf.tokens[s.last].span.end,
        text: format!(
            "cuda::atomic_ref<cuda::std::remove_reference_t<decltype({lhs})>, cuda::thread_scope_device>({lhs}).store({rhs}, cuda::memory_order_release);"
        ),
    })
}

/// A statement's text on one line (runs of whitespace collapsed).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The CUDA statement for a fence scope.
pub fn fence_text(scope: FenceScope) -> &'static str {
    scope.cuda()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b/c.cu")), "c.cu");
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/k/c.cu")),
            "../k/c.cu"
        );
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b")), ".");
        assert_eq!(
            common_ancestor(&[PathBuf::from("/a/b/c"), PathBuf::from("/a/k/d")]),
            PathBuf::from("/a")
        );
    }

    /// A source outside the campaign's folder: the patch names the folder to apply it from
    /// and paths relative to that folder, with no `..` (which `git apply` refuses).
    #[test]
    fn patch_paths_for_a_source_outside_the_campaign_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonical(tmp.path());
        std::fs::create_dir_all(root.join("campaigns")).unwrap();
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::write(root.join("kernels/k.cu"), "a;\nb;\n").unwrap();
        let toml = root.join("campaigns/k.toml");
        let text = "source = \"../kernels/k.cu\"\nbuffers = [\"x:i32[1] zero\"]\n[[launch]]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\nargs = [\"x\"]\n[[oracle]]\ntype = \"golden\"\nbuffers = [\"x\"]\n";
        let c = Campaign::from_text(&toml, text.into()).unwrap();
        let e = SourceEdit {
            file: root.join("kernels/k.cu"),
            edits: vec![TextEdit {
                start: 2,
                end: 2,
                text: " __threadfence();".into(),
            }],
            site: SourceSite::default(),
        };
        let p = build_patch(&c, &[e]).unwrap();
        assert_eq!(p.apply_from, "..");
        assert_eq!(p.files[0].path, "kernels/k.cu");
        assert!(
            p.diff
                .starts_with("--- a/kernels/k.cu\n+++ b/kernels/k.cu\n"),
            "{}",
            p.diff
        );
        assert_eq!(p.files[0].new, "a; __threadfence();\nb;\n");
    }

    #[test]
    fn release_rewrite_of_a_plain_store() {
        let src = "__global__ void k(int *f) {\n    f[1] = 1;\n    int x = 2;\n}\n";
        let sf = SourceFile::parse(src);
        let p = sf.stmts_on_line(2);
        let te = release_store_rewrite(&sf, sf.get(&p[0]).unwrap()).unwrap();
        assert_eq!(
            te.text,
            "cuda::atomic_ref<cuda::std::remove_reference_t<decltype(f[1])>, cuda::thread_scope_device>(f[1]).store(1, cuda::memory_order_release);"
        );
        let p = sf.stmts_on_line(3);
        assert!(release_store_rewrite(&sf, sf.get(&p[0]).unwrap()).is_none());
    }
}
