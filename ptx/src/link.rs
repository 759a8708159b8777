//! Linking the PTX of several compilation units into one module, as `nvlink` links their
//! machine code for relocatable device code (`nvcc -rdc=true`, CMake's separable
//! compilation): a kernel in one unit calls a `__device__` function or uses a
//! `__device__` variable that another defines (`.extern` in the first, `.visible` in the
//! second).
//!
//! - Symbols with external linkage (`.visible`, `.weak`, `.common`) share one namespace:
//!   a `.visible` definition wins over `.weak`/`.common` ones, otherwise the first
//!   definition is kept; `.extern` declarations of a defined symbol go, and of the
//!   undefined ones (`vprintf`, `malloc`) one remains. Two `.visible` definitions of one
//!   name are an error, as for `nvlink`.
//! - Symbols without linkage (`$str` string constants, `static` functions and variables,
//!   debug-section labels) are the unit's own: a name that more than one unit defines is
//!   renamed in each later unit (`name$u1`), before parsing, on identifier boundaries
//!   outside string literals.
//! - `.file` indices (and the `.loc` lines that use them) are renumbered so that the
//!   units' files stay apart.
//!
//! The result is one module's text, which the rest of fencehound reads as if one unit
//! had produced it.

use crate::ast::{FuncKind, Item, Linkage, Module, SectionEntry, Space, Statement};
use std::collections::{HashMap, HashSet};

/// Links units `(name, text)`; the error names the unit or the symbol.
pub fn link(units: &[(String, String)]) -> Result<String, String> {
    if units.len() == 1 {
        return Ok(units[0].1.clone());
    }
    let parsed: Vec<Module> = units
        .iter()
        .map(|(n, t)| crate::parse(n, t).map_err(|e| format!("{n}: {e}")))
        .collect::<Result<_, _>>()?;
    // Internal names defined by more than one unit: renamed in every unit but the first.
    let mut owners: HashMap<String, usize> = HashMap::new();
    let mut rename: Vec<HashSet<String>> = vec![HashSet::new(); units.len()];
    for (u, m) in parsed.iter().enumerate() {
        for name in internal_names(m) {
            match owners.get(&name) {
                Some(&first) if first != u => {
                    rename[u].insert(name);
                }
                Some(_) => {}
                None => {
                    owners.insert(name, u);
                }
            }
        }
    }
    let mut file_base = 0u32;
    let mut modules = Vec::with_capacity(units.len());
    for (u, (n, t)) in units.iter().enumerate() {
        let max_file = parsed[u]
            .items
            .iter()
            .filter_map(|i| match i {
                Item::File(f) => Some(f.index),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let text = rewrite(t, &rename[u], u, file_base);
        file_base += max_file;
        modules.push(crate::parse(n, &text).map_err(|e| format!("{n} (linked): {e}"))?);
    }
    Ok(crate::print(&merge(modules)?))
}

/// Module-level names a unit defines without linkage.
fn internal_names(m: &Module) -> Vec<String> {
    let mut out = Vec::new();
    for item in &m.items {
        match item {
            Item::Var(v) if v.linkage.is_none() => out.push(v.name.clone()),
            Item::Func(f) if f.linkage.is_none() && f.kind != FuncKind::Entry => {
                out.push(f.name.clone())
            }
            Item::Section(s) => {
                for e in &s.entries {
                    if let SectionEntry::Label(l) = e {
                        out.push(l.clone());
                    }
                }
            }
            _ => {}
        }
    }
    // Demoted function-scope `.shared`/`.global` variables are module-wide too.
    for item in &m.items {
        if let Item::Func(f) = item {
            fn walk(s: &[Statement], out: &mut Vec<String>) {
                for st in s {
                    match st {
                        Statement::Var(v)
                            if matches!(v.space, Space::Shared | Space::Global | Space::Const) =>
                        {
                            out.push(v.name.clone())
                        }
                        Statement::Block(b) => walk(b, out),
                        _ => {}
                    }
                }
            }
            if let Some(b) = &f.body {
                walk(b, &mut out);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// `text` with the names in `names` suffixed `$u{unit}` and `.file`/`.loc` indices moved
/// up by `file_base`.
fn rewrite(text: &str, names: &HashSet<String>, unit: usize, file_base: u32) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let line = renumber_files(line, file_base);
        if names.is_empty() {
            out.push_str(&line);
            continue;
        }
        let mut in_str = false;
        let mut word = String::new();
        let mut prev = ' ';
        let flush = |word: &mut String, out: &mut String| {
            if names.contains(word.as_str()) {
                out.push_str(word);
                out.push_str(&format!("$u{unit}"));
            } else {
                out.push_str(word);
            }
            word.clear();
        };
        for c in line.chars() {
            if in_str {
                out.push(c);
                if c == '"' {
                    in_str = false;
                }
            } else if ident_char(c) && (!word.is_empty() || !(prev == '%' || prev == '.')) {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                if c == '"' {
                    in_str = true;
                }
                out.push(c);
            }
            prev = c;
        }
        flush(&mut word, &mut out);
    }
    out
}

/// `.file N`, `.loc N` and `inlined_at N` with `N + base`.
fn renumber_files(line: &str, base: u32) -> String {
    let t = line.trim_start();
    if base == 0 || !(t.starts_with(".file") || t.starts_with(".loc")) {
        return line.to_string();
    }
    let mut out = line.to_string();
    for key in [".file", ".loc", "inlined_at"] {
        out = bump_after(&out, key, base);
    }
    out
}

/// `s` with the number after each `key` (and blanks) raised by `base`.
fn bump_after(s: &str, key: &str, base: u32) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut rest = s;
    while let Some(i) = rest.find(key) {
        let (head, tail) = rest.split_at(i + key.len());
        out.push_str(head);
        let blanks = tail.len() - tail.trim_start().len();
        let digits = tail[blanks..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        match tail[blanks..blanks + digits].parse::<u32>() {
            Ok(n) if blanks > 0 => {
                out.push_str(&tail[..blanks]);
                out.push_str(&(n + base).to_string());
                rest = &tail[blanks + digits..];
            }
            _ => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// One module of the units' items (renamed already): external symbols resolved.
fn merge(modules: Vec<Module>) -> Result<Module, String> {
    // Which external names have a definition, and which unit's wins.
    let mut defined: HashMap<String, (usize, Linkage)> = HashMap::new();
    for (u, m) in modules.iter().enumerate() {
        for item in &m.items {
            let (name, linkage, is_def) = match item {
                Item::Var(v) => (&v.name, v.linkage, v.linkage != Some(Linkage::Extern)),
                Item::Func(f) => (&f.name, f.linkage, f.body.is_some()),
                _ => continue,
            };
            let Some(l) = linkage.filter(|_| is_def) else {
                continue;
            };
            match defined.get(name) {
                Some((_, Linkage::Visible)) if l == Linkage::Visible => {
                    return Err(format!("`{name}` is defined in two compilation units"));
                }
                Some((_, Linkage::Visible)) => {}
                Some(_) if l == Linkage::Visible => {
                    defined.insert(name.clone(), (u, l));
                }
                Some(_) => {}
                None => {
                    defined.insert(name.clone(), (u, l));
                }
            }
        }
    }
    let mut items = Vec::new();
    let mut declared: HashSet<String> = HashSet::new();
    for (u, m) in modules.into_iter().enumerate() {
        for item in m.items {
            let keep = match &item {
                // One compiler made every unit: the first unit's header stands for all.
                Item::Version { .. } | Item::Target(_) | Item::AddressSize(_) => u == 0,
                Item::Var(v) => match (v.linkage, defined.get(&v.name)) {
                    (None, _) => true,
                    (Some(Linkage::Extern), Some(_)) => false,
                    (Some(Linkage::Extern), None) => declared.insert(v.name.clone()),
                    (Some(_), Some(&(w, _))) => w == u,
                    (Some(_), None) => true,
                },
                Item::Func(f) => match (f.body.is_some(), f.linkage, defined.get(&f.name)) {
                    (true, None, _) => true,
                    (true, Some(_), Some(&(w, _))) => w == u,
                    (true, Some(_), None) => true,
                    // Declarations: of an internal function (a forward declaration in its
                    // own unit), kept; of a defined external one, dropped; else one.
                    (false, None, _) => true,
                    (false, Some(_), Some(_)) => false,
                    (false, Some(_), None) => declared.insert(f.name.clone()),
                },
                _ => true,
            };
            if keep {
                items.push(item);
            }
        }
    }
    Ok(Module { items })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

    fn unit(body: &str) -> String {
        format!("{HEAD}{body}")
    }

    #[test]
    fn externs_resolve_and_internal_names_stay_apart() {
        let a = unit(
            r#".file 1 "a.cu"
.extern .func (.param .b32 r) helper (.param .b32 x);
.extern .global .align 4 .u32 counter;
.global .align 1 .b8 $str[3] = {97, 0, 0};
.func (.param .b32 r) twice (.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	add.s32 %r2, %r1, %r1;
	st.param.b32 [r], %r2;
	ret;
}
.visible .entry k(.param .u64 p)
{
	.reg .b32 %r<2>;
	.loc 1 7 3
	ld.global.u32 %r1, [counter];
	mov.u32 %r1, $str;
	ret;
}
"#,
        );
        let b = unit(
            r#".file 1 "b.cu"
.file 2 "b.h"
.visible .global .align 4 .u32 counter;
.global .align 1 .b8 $str[3] = {98, 0, 0};
.func (.param .b32 r) twice (.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	mul.lo.s32 %r2, %r1, 3;
	st.param.b32 [r], %r2;
	ret;
}
.visible .func (.param .b32 r) helper (.param .b32 x)
{
	.reg .b32 %r<2>;
	.loc 2 4 1
	ld.param.u32 %r1, [x];
	st.param.b32 [r], %r1;
	ret;
}
"#,
        );
        let linked = link(&[("a".into(), a), ("b".into(), b)]).unwrap();
        let m = crate::parse("linked", &linked).unwrap();
        let names: Vec<String> = m
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Var(v) => Some(format!("var {:?} {}", v.linkage, v.name)),
                Item::Func(f) => Some(format!(
                    "func {:?} {} {}",
                    f.linkage,
                    f.name,
                    f.body.is_some()
                )),
                Item::File(f) => Some(format!("file {} {}", f.index, f.path)),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                "file 1 a.cu",
                "var None $str",
                "func None twice true",
                "func Some(Visible) k true",
                "file 2 b.cu",
                "file 3 b.h",
                "var Some(Visible) counter",
                "var None $str$u1",
                "func None twice$u1 true",
                "func Some(Visible) helper true",
            ],
            "{linked}"
        );
        // Unit b's `.loc 2` is file 3 now; unit a's is untouched.
        assert!(
            linked.contains(".loc\t3 4 1") && linked.contains(".loc\t1 7 3"),
            "{linked}"
        );
        // Unit a's use of `$str` is still its own.
        assert!(linked.contains("mov.u32\t%r1, $str;"), "{linked}");
    }

    #[test]
    fn two_definitions_of_one_visible_name_are_an_error() {
        let def = unit(".visible .global .align 4 .u32 counter;\n");
        let e = link(&[("a".into(), def.clone()), ("b".into(), def)]).unwrap_err();
        assert!(
            e.contains("`counter` is defined in two compilation units"),
            "{e}"
        );
    }

    #[test]
    fn a_visible_definition_wins_over_weak_ones() {
        let weak = unit(".weak .global .align 4 .u32 w = 1;\n");
        let strong = unit(".visible .global .align 4 .u32 w = 2;\n");
        let linked = link(&[("a".into(), weak), ("b".into(), strong)]).unwrap();
        assert!(
            linked.contains(".visible .global .align 4 .u32 w = 2"),
            "{linked}"
        );
        assert!(!linked.contains(".weak"), "{linked}");
    }
}
