//! The device runtime the rewrite injects: `runtime.cu`, compiled by NVRTC into
//! `runtime.ptx` (committed, so instrumenting needs no NVRTC; the example `gen_runtime`
//! regenerates it and a test checks it is current).

/// The CUDA source of the runtime.
pub const SOURCE: &str = include_str!("runtime.cu");
/// The committed PTX of the runtime.
pub const PTX: &str = include_str!("runtime.ptx");
/// The virtual architecture it is compiled for: the oldest CUDA 13's NVRTC accepts, so the
/// runtime links into modules for any newer target.
pub const ARCH: &str = "compute_75";
/// Relocatable device code keeps every `extern "C"` function and variable, used or not.
pub const NVRTC_OPTIONS: &[&str] = &["-rdc=true"];

/// NVRTC's output with the debug information removed (`.file`, `.loc`, DWARF sections):
/// the runtime's own lines mean nothing to a user, and faults inside it are reported at
/// the instrumented instruction instead.
pub fn normalize(nvrtc_ptx: &str) -> Result<String, fencehound_ptx::ParseError> {
    let mut m = fencehound_ptx::parse("runtime.ptx", nvrtc_ptx)?;
    m.items.retain(|i| {
        !matches!(
            i,
            fencehound_ptx::Item::File(_) | fencehound_ptx::Item::Section(_)
        )
    });
    for item in &mut m.items {
        if let fencehound_ptx::Item::Func(f) = item {
            if let Some(body) = &mut f.body {
                strip_locs(body);
            }
        }
    }
    Ok(fencehound_ptx::print(&m))
}

fn strip_locs(body: &mut Vec<fencehound_ptx::Statement>) {
    body.retain(|s| !matches!(s, fencehound_ptx::Statement::Loc(_)));
    for s in body.iter_mut() {
        match s {
            fencehound_ptx::Statement::Inst(i) => i.loc = None,
            fencehound_ptx::Statement::Block(b) => strip_locs(b),
            _ => {}
        }
    }
}
