//! The litmus test as written: threads, instructions, initial state and final condition.

use serde::Serialize;
use std::fmt;

/// A position in the litmus file (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Memory-ordering semantics as the dialect spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mo {
    Weak,
    /// `ld.volatile` / `st.volatile`: PTX treats them as `.relaxed.sys` (no scope written).
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

impl Mo {
    pub fn parse(s: &str) -> Option<Mo> {
        Some(match s {
            "weak" => Mo::Weak,
            "volatile" => Mo::Volatile,
            "relaxed" => Mo::Relaxed,
            "acquire" => Mo::Acquire,
            "release" => Mo::Release,
            "acq_rel" => Mo::AcqRel,
            "sc" => Mo::Sc,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Mo::Weak => "weak",
            Mo::Volatile => "volatile",
            Mo::Relaxed => "relaxed",
            Mo::Acquire => "acquire",
            Mo::Release => "release",
            Mo::AcqRel => "acq_rel",
            Mo::Sc => "sc",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "cta" => Scope::Cta,
            "gpu" => Scope::Gpu,
            "sys" => Scope::Sys,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// A register or a constant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Value {
    Reg(String),
    Const(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RmwOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
    Inc,
    Dec,
    Exch,
}

impl RmwOp {
    pub fn parse(s: &str) -> Option<RmwOp> {
        Some(match s {
            "add" => RmwOp::Add,
            "sub" => RmwOp::Sub,
            "and" => RmwOp::And,
            "or" => RmwOp::Or,
            "xor" => RmwOp::Xor,
            "min" => RmwOp::Min,
            "max" => RmwOp::Max,
            "inc" => RmwOp::Inc,
            "dec" => RmwOp::Dec,
            "exch" => RmwOp::Exch,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
    Xor,
}

impl ArithOp {
    pub fn parse(s: &str) -> Option<ArithOp> {
        Some(match s {
            "add" => ArithOp::Add,
            "sub" => ArithOp::Sub,
            "mul" => ArithOp::Mul,
            "div" => ArithOp::Div,
            "and" => ArithOp::And,
            "or" => ArithOp::Or,
            "xor" => ArithOp::Xor,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BarKind {
    Sync,
    Arrive,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "instr", rename_all = "snake_case")]
pub enum Instr {
    Load {
        mo: Mo,
        scope: Option<Scope>,
        dst: String,
        loc: String,
    },
    Store {
        mo: Mo,
        scope: Option<Scope>,
        loc: String,
        val: Value,
    },
    /// `atom` (returns the old value into `dst`) or `red` (`dst` is None).
    Rmw {
        mo: Mo,
        scope: Option<Scope>,
        op: RmwOp,
        dst: Option<String>,
        loc: String,
        val: Value,
    },
    Cas {
        mo: Mo,
        scope: Option<Scope>,
        dst: String,
        loc: String,
        expected: Value,
        new: Value,
    },
    Fence {
        mo: Mo,
        scope: Scope,
    },
    /// `bar.cta.sync C [, ID [, QUORUM]]`: `instance` is Dat3M's constant `C`.
    Barrier {
        kind: BarKind,
        instance: i64,
        id: Option<Value>,
        quorum: Option<Value>,
    },
    /// `ld REG, VALUE` (a register move).
    Move {
        dst: String,
        val: Value,
    },
    Arith {
        op: ArithOp,
        dst: String,
        a: Value,
        b: Value,
    },
    /// `beq`/`bne A, B, LABEL`.
    Branch {
        eq: bool,
        a: Value,
        b: Value,
        label: String,
    },
    Goto {
        label: String,
    },
    /// `bar.warp.sync [G]` (a fencehound extension of the dialect): the member mask is
    /// every litmus thread of the same warp (`@…,warp N`) that has a `bar.warp.sync` of
    /// the same group `G` (0 when not given). Groups let one warp hold several sub-warp
    /// barriers with disjoint masks at once, as cooperative-groups tiles do.
    WarpSync {
        group: u32,
    },
    Label {
        name: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spanned<T> {
    pub pos: Pos,
    pub node: T,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thread {
    /// The `N` of `PN`.
    pub id: u32,
    pub cta: u32,
    pub gpu: u32,
    /// `@cta C,warp W,gpu G` (a fencehound extension): threads of one CTA with the same
    /// `W` are lanes of one warp. Without it a thread has a warp of its own.
    pub warp: Option<u32>,
    pub pos: Pos,
    pub instrs: Vec<Spanned<Instr>>,
}

/// A register of a thread or a memory location, in a condition or an initial state.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Var {
    Reg { thread: u32, name: String },
    Loc(String),
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Var::Reg { thread, name } => write!(f, "{thread}:{name}"),
            Var::Loc(l) => write!(f, "{l}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Operand {
    Var(Var),
    Const(i64),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Cond {
    True,
    False,
    Eq(Operand, Operand),
    Ne(Operand, Operand),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

impl Cond {
    /// Evaluates against `get`, which returns the final value of a variable.
    pub fn eval(&self, get: &dyn Fn(&Var) -> i64) -> bool {
        let val = |o: &Operand| match o {
            Operand::Var(v) => get(v),
            Operand::Const(c) => *c,
        };
        match self {
            Cond::True => true,
            Cond::False => false,
            Cond::Eq(a, b) => val(a) == val(b),
            Cond::Ne(a, b) => val(a) != val(b),
            Cond::Not(c) => !c.eval(get),
            Cond::And(a, b) => a.eval(get) && b.eval(get),
            Cond::Or(a, b) => a.eval(get) || b.eval(get),
        }
    }

    /// Variables mentioned, in order of first mention.
    pub fn vars(&self, out: &mut Vec<Var>) {
        let mut add = |o: &Operand| {
            if let Operand::Var(v) = o {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
        };
        match self {
            Cond::True | Cond::False => {}
            Cond::Eq(a, b) | Cond::Ne(a, b) => {
                add(a);
                add(b);
            }
            Cond::Not(c) => c.vars(out),
            Cond::And(a, b) | Cond::Or(a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantifier {
    Exists,
    NotExists,
    Forall,
}

impl Quantifier {
    pub fn name(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub cond: Cond,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LitmusTest {
    pub name: String,
    /// Initial memory, in order of declaration (locations not listed start at 0).
    pub init_mem: Vec<(String, i64)>,
    /// Initial registers `(thread, register, value)` (registers not listed start at 0).
    pub init_regs: Vec<(u32, String, i64)>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
}

impl LitmusTest {
    /// Every memory location: initialised, accessed or named in the condition.
    pub fn locations(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |l: &str| {
            if !out.iter().any(|x| x == l) {
                out.push(l.to_string());
            }
        };
        for (l, _) in &self.init_mem {
            add(l);
        }
        for t in &self.threads {
            for i in &t.instrs {
                match &i.node {
                    Instr::Load { loc, .. }
                    | Instr::Store { loc, .. }
                    | Instr::Rmw { loc, .. }
                    | Instr::Cas { loc, .. } => add(loc),
                    _ => {}
                }
            }
        }
        let mut vars = Vec::new();
        self.condition.cond.vars(&mut vars);
        for v in vars {
            if let Var::Loc(l) = v {
                add(&l);
            }
        }
        out
    }

    /// The variables a final state shows: those the condition names.
    pub fn observed(&self) -> Vec<Var> {
        let mut vars = Vec::new();
        self.condition.cond.vars(&mut vars);
        vars
    }
}
