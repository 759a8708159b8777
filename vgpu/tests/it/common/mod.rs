//! Shared test harness: compiles CUDA with the real NVRTC (tests fail, never skip, when it
//! is missing: `scripts/setup-cuda.sh` installs it), loads the PTX into a fresh [`Device`],
//! and runs corpus kernels with the launch and arguments their headers state.
#![allow(dead_code)]

use fencehound_argspec::{self as argspec, ArgSpec, BoundArgs, HostBuffer};
use fencehound_toolchain::{compile, expand_nvrtc_flags, CompileRequest};
use fencehound_vgpu::*;
use std::path::PathBuf;

pub fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// Compiles CUDA source to PTX with `-lineinfo` for compute_80 (panics with NVRTC's log).
pub fn nvrtc(source: &str, file_name: &str, defines: &[&str], extra: &[String]) -> String {
    let mut req = CompileRequest::new(source, file_name);
    req.defines = defines.iter().map(|d| (d.to_string(), None)).collect();
    req.extra_options = extra.to_vec();
    match compile(&req) {
        Ok(c) => c.ptx,
        Err(e) => panic!("NVRTC failed for {file_name}: {e}"),
    }
}

/// Parses and loads PTX; a load error is returned as text (e.g. an unsupported ALU op).
pub fn load(dev: &mut Device, name: &str, ptx: &str) -> Result<ModuleId, String> {
    let m = fencehound_ptx::parse(name, ptx).map_err(|e| format!("parse: {e}"))?;
    dev.load_module(&m).map_err(|e| format!("load: {e}"))
}

/// The header of the hand-written PTX kernels of these tests.
pub const PTX_HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// A fresh device with the PTX `body` (after [`PTX_HEADER`]) loaded, panicking on any
/// error.
pub fn ptx_device(body: &str) -> (Device, ModuleId) {
    let mut dev = Device::new();
    let m = load(&mut dev, "k", &format!("{PTX_HEADER}{body}")).unwrap_or_else(|e| panic!("{e}"));
    (dev, m)
}

/// An allocation of `n` 32-bit words, the first holding `vals`, the rest zero.
pub fn words_in(dev: &mut Device, n: usize, vals: &[u32]) -> u64 {
    let p = dev.alloc(4 * n as u64).expect("alloc");
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    dev.copy_to(p, &bytes).expect("copy");
    p
}

/// `n` 32-bit words at `p`.
pub fn read_words(dev: &Device, p: u64, n: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; 4 * n];
    dev.copy_from(p, &mut bytes).expect("copy");
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Compiles inline CUDA and loads it, panicking on any error.
pub fn cuda_module(dev: &mut Device, file_name: &str, source: &str) -> ModuleId {
    let ptx = nvrtc(source, file_name, &[], &[]);
    load(dev, file_name, &ptx).unwrap_or_else(|e| panic!("{file_name}: {e}"))
}

/// The machine-readable header of a corpus kernel.
#[derive(Debug, Clone)]
pub struct Header {
    pub stem: String,
    pub source: String,
    pub flags: String,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
    pub args: Vec<ArgSpec>,
    pub categories: Vec<String>,
}

fn header_value<'a>(src: &'a str, key: &str) -> &'a str {
    let prefix = format!("// {key}:");
    src.lines()
        .take(6)
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{key}` header"))
        .trim()
}

pub fn header(stem: &str) -> Header {
    let path = kernels_dir().join(format!("{stem}.cu"));
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let launch = header_value(&source, "launch");
    let mut grid = None;
    let mut block = None;
    let mut dynamic_shared = 0;
    for kv in launch.split_whitespace() {
        match kv.split_once('=') {
            Some(("grid", v)) => grid = argspec::parse_dim3(v),
            Some(("block", v)) => block = argspec::parse_dim3(v),
            Some(("dynamic_shared", v)) => dynamic_shared = v.parse().expect("dynamic_shared"),
            _ => panic!("{stem}: bad launch header `{launch}`"),
        }
    }
    let args = argspec::parse_args(header_value(&source, "args"))
        .unwrap_or_else(|e| panic!("{stem}: args header: {e}"));
    Header {
        stem: stem.to_string(),
        flags: header_value(&source, "nvrtc-flags").to_string(),
        categories: header_value(&source, "categories")
            .split(',')
            .map(|c| c.trim().to_string())
            .collect(),
        grid: grid.expect("grid"),
        block: block.expect("block"),
        dynamic_shared,
        args,
        source,
    }
}

/// All corpus kernel stems, sorted.
pub fn corpus_stems() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(kernels_dir())
        .expect("kernels/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "cu" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

/// A corpus kernel, compiled and loaded on its own device.
pub struct Corpus {
    pub header: Header,
    pub dev: Device,
    pub module: ModuleId,
}

/// A finished run of a corpus kernel.
pub struct Run {
    pub result: LaunchResult,
    pub inputs: Vec<HostBuffer>,
    pub outputs: Vec<HostBuffer>,
}

impl Run {
    pub fn out(&self, name: &str) -> &HostBuffer {
        self.outputs
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("no buffer `{name}`"))
    }
    pub fn input(&self, name: &str) -> &HostBuffer {
        self.inputs
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("no buffer `{name}`"))
    }
    pub fn u32s(&self, name: &str) -> Vec<u32> {
        self.out(name).values::<u32>().expect("u32 buffer")
    }
    pub fn in_u32s(&self, name: &str) -> Vec<u32> {
        self.input(name).values::<u32>().expect("u32 buffer")
    }
    pub fn f32s(&self, name: &str) -> Vec<f32> {
        self.out(name).values::<f32>().expect("f32 buffer")
    }
    pub fn in_f32s(&self, name: &str) -> Vec<f32> {
        self.input(name).values::<f32>().expect("f32 buffer")
    }
    #[track_caller]
    pub fn assert_completed(&self) {
        assert!(
            self.result.outcome.is_completed(),
            "{:?}\nstdout:\n{}",
            self.result.outcome,
            self.result.stdout
        );
    }
}

impl Corpus {
    /// Compiles (with `defines`) and loads a corpus kernel; `Err` is a load error text.
    pub fn try_new(stem: &str, defines: &[&str]) -> Result<Corpus, String> {
        let header = header(stem);
        let extra = expand_nvrtc_flags(&header.flags).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let ptx = nvrtc(&header.source, &format!("{stem}.cu"), defines, &extra);
        let mut dev = Device::new();
        let module = load(&mut dev, stem, &ptx)?;
        Ok(Corpus {
            header,
            dev,
            module,
        })
    }

    #[track_caller]
    pub fn new(stem: &str) -> Corpus {
        Corpus::try_new(stem, &[]).unwrap_or_else(|e| panic!("{stem}: {e}"))
    }

    /// Replaces the header's argument `name` (e.g. `"bad:u32=1000"`).
    pub fn set_arg(&mut self, spec: &str) {
        let a = argspec::parse_arg(spec).expect("spec");
        let slot = self
            .header
            .args
            .iter_mut()
            .find(|x| x.name() == a.name())
            .expect("argument exists");
        *slot = a;
    }

    /// Runs with the header's launch and arguments (fresh buffers each time).
    pub fn run(&mut self) -> Run {
        self.run_with(
            LaunchOptions::default(),
            &mut NoHooks,
            &mut RoundRobin::new(1),
        )
    }

    pub fn run_with<H: Hooks, S: Scheduler>(
        &mut self,
        opts: LaunchOptions,
        hooks: &mut H,
        sched: &mut S,
    ) -> Run {
        let h = &self.header;
        let bound: BoundArgs =
            argspec::bind(&mut self.dev, &h.args).unwrap_or_else(|e| panic!("{}: {e}", h.stem));
        let inputs = bound.read_all(&self.dev).expect("read inputs");
        let result = self
            .dev
            .launch_with(
                self.module,
                &h.stem,
                h.grid,
                h.block,
                h.dynamic_shared,
                &bound.args,
                opts,
                hooks,
                sched,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", h.stem));
        let outputs = bound.read_all(&self.dev).expect("read outputs");
        Run {
            result,
            inputs,
            outputs,
        }
    }
}

/// The CUDA line of a fault/trap site, if any.
pub fn cuda_line(site: &SiteInfo) -> Option<u32> {
    site.cuda.as_ref().map(|c| c.line)
}

/// The 1-based line of the first line of `source` containing `marker`.
pub fn line_of(source: &str, marker: &str) -> u32 {
    source
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("marker `{marker}` not in source")) as u32
        + 1
}
