//! One execution of a prepared variant under a model, `p_w`, seed and scheduler, judged by
//! the campaign's oracles; and the one place that knows what kinds of subject a campaign
//! can have ([`Subject`]).
//!
//! | subject | prepared by | one execution |
//! |---|---|---|
//! | kernels and buffers | [`crate::kernel_campaign`]: NVRTC (or the `.ptx`), a template device, the `sc` reference run | the launches on a clone of the template under the model's hooks; oracles over the output buffers |
//! | a whole program | [`crate::program_campaign`]: the `build` command, the `sc` reference run | one process under fencehound's runtime ([`crate::program`]); oracles over its exit status, output and files |
//!
//! Everything else — the runner, the backends, the minimizer, the command line — holds a
//! [`Prepared`] and asks it (or its [`Subject`]) what it needs; none of it branches on
//! the kind. A third kind of subject is a module of its own plus a variant of [`Subject`]
//! and its arms here.

use crate::campaign::Campaign;
use crate::kernel_campaign::{self, PreparedKernels};
use crate::program_campaign::{self, PreparedProgram};
use crate::types::{sha256_hex, ExecResult, ExecSpec, Observer, PrepareError, Raw};
use fencehound_oracle::Outputs;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// A variant ready to run: its exact PTX, parsed, and the reference outputs.
#[derive(Debug)]
pub struct Prepared {
    pub campaign: Arc<Campaign>,
    pub variant: String,
    pub ptx: String,
    pub ptx_sha256: String,
    pub module: fencehound_ptx::Module,
    /// The campaign's buffers as initialised (none for a program).
    pub inputs: Outputs,
    /// Outputs of the `sc` reference run (for `golden` oracles and reports; no buffers for
    /// a program, whose reference is [`Prepared::program_golden`]).
    pub golden: Outputs,
    subject: Subject,
}

/// What a prepared variant runs, and so how it is executed.
#[derive(Debug)]
pub enum Subject {
    /// A kernel campaign: its launches on the vgpu, over the campaign's buffers.
    Kernels(Box<PreparedKernels>),
    /// A whole program, one process per execution.
    Program(Box<PreparedProgram>),
}

impl Subject {
    /// The PTX entry name of launch `i` of a kernel campaign (`None` for a program, or
    /// past the last launch).
    pub fn launch_kernel(&self, i: usize) -> Option<&str> {
        match self {
            Subject::Kernels(k) => k.kernel_names().get(i).map(String::as_str),
            Subject::Program(_) => None,
        }
    }

    /// The kernels this variant launches (PTX names): the campaign's launches, or for a
    /// program those its reference run launched.
    pub fn kernels(&self) -> Vec<String> {
        match self {
            Subject::Program(p) => p.kernels.clone(),
            Subject::Kernels(k) => {
                let mut out: Vec<String> = Vec::new();
                for name in k.kernel_names() {
                    if !out.contains(name) {
                        out.push(name.clone());
                    }
                }
                out
            }
        }
    }

    /// The `sc` reference run of a program variant (`None` for kernel campaigns).
    pub fn program_golden(&self) -> Option<&fencehound_oracle::process::ProcessOutputs> {
        match self {
            Subject::Program(p) => Some(&p.golden),
            Subject::Kernels(_) => None,
        }
    }

    /// `None` when every backend can run this subject; else what it is, in the plural
    /// (`whole programs`), for saying that only the vgpu backend with its native hooks
    /// runs it: the instrumented backends rewrite a kernel campaign's PTX and launch its
    /// kernels themselves.
    pub fn vgpu_only(&self) -> Option<&'static str> {
        match self {
            Subject::Kernels(_) => None,
            Subject::Program(_) => Some("whole programs"),
        }
    }

    /// Runs one execution on the vgpu and judges it.
    fn execute(
        &self,
        prep: &Prepared,
        spec: &ExecSpec,
        cancel: Option<&AtomicBool>,
        obs: Option<&mut dyn Observer>,
    ) -> ExecResult {
        let start = Instant::now();
        match self {
            Subject::Kernels(k) => {
                let c = &prep.campaign;
                let raw = kernel_campaign::execute_raw(c, k, &prep.inputs, spec, cancel, obs);
                kernel_campaign::judge(c, &prep.inputs, &prep.golden, raw, start)
            }
            Subject::Program(p) => program_campaign::execute(&prep.campaign, p, spec, cancel, obs),
        }
    }
}

impl Prepared {
    /// What this variant runs.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// The PTX entry name of launch `i` of a kernel campaign (see [`Subject::launch_kernel`]).
    pub fn launch_kernel(&self, i: usize) -> Option<&str> {
        self.subject.launch_kernel(i)
    }

    /// The kernels this variant launches (see [`Subject::kernels`]).
    pub fn kernels(&self) -> Vec<String> {
        self.subject.kernels()
    }

    /// The `sc` reference run of a program variant (`None` for kernel campaigns).
    pub fn program_golden(&self) -> Option<&fencehound_oracle::process::ProcessOutputs> {
        self.subject.program_golden()
    }

    /// Whether only the vgpu backend runs this variant (see [`Subject::vgpu_only`]).
    pub fn vgpu_only(&self) -> Option<&'static str> {
        self.subject.vgpu_only()
    }

    /// What decides an execution's result besides its spec: the PTX (its SHA-256), and
    /// for a program also the executable that runs it (a patched program's own build
    /// and the original program running the same PTX are different subjects).
    pub fn identity(&self) -> String {
        match &self.subject {
            Subject::Kernels(_) => self.ptx_sha256.clone(),
            Subject::Program(p) => format!("{}@{}", self.ptx_sha256, p.exe().display()),
        }
    }
}

/// Compiles (or reads) the variant's PTX and runs the reference. For a program campaign:
/// builds the program and runs it once under `sc`.
pub fn prepare(campaign: Arc<Campaign>, variant: &str) -> Result<Prepared, PrepareError> {
    prepare_subject(campaign, variant, None)
}

/// Like [`prepare`], with the PTX given (replay uses the PTX recorded in the report).
pub fn prepare_with_ptx(
    campaign: Arc<Campaign>,
    variant: &str,
    ptx: String,
) -> Result<Prepared, PrepareError> {
    prepare_subject(campaign, variant, Some(ptx))
}

/// The one place that decides which kind of subject a campaign is.
fn prepare_subject(
    campaign: Arc<Campaign>,
    variant: &str,
    ptx: Option<String>,
) -> Result<Prepared, PrepareError> {
    if campaign.is_program() {
        let p = program_campaign::prepare(&campaign, variant, ptx)?;
        let no_buffers = || Outputs {
            buffers: Vec::new(),
        };
        return Ok(Prepared {
            ptx_sha256: sha256_hex(p.ptx.as_bytes()),
            campaign,
            variant: variant.to_string(),
            ptx: p.ptx,
            module: p.module,
            inputs: no_buffers(),
            golden: no_buffers(),
            subject: Subject::Program(Box::new(p.program)),
        });
    }
    let ptx = match ptx {
        Some(ptx) => ptx,
        None => kernel_campaign::compile(&campaign, variant)?,
    };
    let k = kernel_campaign::prepare(&campaign, variant, &ptx)?;
    Ok(Prepared {
        ptx_sha256: sha256_hex(ptx.as_bytes()),
        campaign,
        variant: variant.to_string(),
        ptx,
        module: k.module,
        inputs: k.inputs,
        golden: k.golden,
        subject: Subject::Kernels(Box::new(k.kernels)),
    })
}

/// Runs one execution and judges it.
pub fn execute(prep: &Prepared, spec: &ExecSpec, cancel: Option<&AtomicBool>) -> ExecResult {
    prep.subject.execute(prep, spec, cancel, None)
}

/// Like [`execute`], showing every memory access, fence and barrier to `obs` (kernel
/// campaigns; a program's executions run in another process and are not shown).
pub fn execute_observed(
    prep: &Prepared,
    spec: &ExecSpec,
    cancel: Option<&AtomicBool>,
    obs: &mut dyn Observer,
) -> ExecResult {
    prep.subject.execute(prep, spec, cancel, Some(obs))
}

/// Judges what a kernel backend produced (an `Err` is a run that could not happen: a
/// fault) by the campaign's oracles over the output buffers.
pub(crate) fn judge_raw(prep: &Prepared, raw: Result<Raw, String>, start: Instant) -> ExecResult {
    kernel_campaign::judge(&prep.campaign, &prep.inputs, &prep.golden, raw, start)
}
