//! Conformance of the vgpu's ALU instructions, through the real pipeline: each table is a
//! small hand-written PTX kernel (`ptx::parse` → `Device::load_module` → `launch`) in which
//! thread `l` loads row `l`'s operands from global buffers, applies the instruction, and
//! stores the result(s). Expected values are computed on the host or written out from the
//! PTX ISA's rules (NaN canonicalisation, `.ftz`, `.sat`, clamped shifts, division by
//! zero, rounding modes).
//!
//! Every table runs twice: once converged (all lanes execute the instruction together) and
//! once with only the odd lanes executing it after a divergent branch, with the destination
//! preloaded with a sentinel that the even lanes must keep.

use crate::common;

use common::{corpus_stems, header, load, nvrtc, Corpus};
use fencehound_vgpu::{Arg, Device, Dim3};

/// Register classes of an operand, and how the harness loads and stores them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum R {
    /// `.pred` (stored as 0/1)
    P,
    /// `.b16`
    H,
    /// `.b16` loaded with `ld.s16` (the register holds the value sign-extended)
    Hs,
    /// `.b32`
    W,
    /// `.b32` loaded with `ld.s32` (sign-extended to 64 bits in the register file)
    Ws,
    /// `.b64`
    D,
    /// `.f32`
    F,
    /// `.f64`
    Fd,
}

impl R {
    fn prefix(self) -> &'static str {
        match self {
            R::P => "%p",
            R::H | R::Hs => "%h",
            R::W | R::Ws => "%r",
            R::D => "%rd",
            R::F => "%f",
            R::Fd => "%fd",
        }
    }

    fn load(self, reg: &str, addr: &str) -> String {
        match self {
            R::P => format!("ld.global.u32 %t1, [{addr}];\n setp.ne.u32 {reg}, %t1, 0;"),
            R::H => format!("ld.global.b16 {reg}, [{addr}];"),
            R::Hs => format!("ld.global.s16 {reg}, [{addr}];"),
            R::W => format!("ld.global.b32 {reg}, [{addr}];"),
            R::Ws => format!("ld.global.s32 {reg}, [{addr}];"),
            R::D => format!("ld.global.b64 {reg}, [{addr}];"),
            R::F => format!("ld.global.f32 {reg}, [{addr}];"),
            R::Fd => format!("ld.global.f64 {reg}, [{addr}];"),
        }
    }

    fn store(self, reg: &str, addr: &str) -> String {
        match self {
            R::P => format!("selp.u32 %t2, 1, 0, {reg};\n st.global.u32 [{addr}], %t2;"),
            R::H | R::Hs => format!("st.global.b16 [{addr}], {reg};"),
            R::W | R::Ws => format!("st.global.b32 [{addr}], {reg};"),
            R::D => format!("st.global.b64 [{addr}], {reg};"),
            R::F => format!("st.global.f32 [{addr}], {reg};"),
            R::Fd => format!("st.global.f64 [{addr}], {reg};"),
        }
    }

    /// What a stored sentinel reads back as.
    fn sentinel(self) -> u64 {
        match self {
            R::P => 1,
            R::H | R::Hs => SENTINEL & 0xffff,
            R::W | R::Ws | R::F => SENTINEL & 0xffff_ffff,
            R::D | R::Fd => SENTINEL,
        }
    }
}

const SENTINEL: u64 = 0x5a5a_5a5a_5a5a_5a5a;

/// Builds the kernel: `{d}`, `{q}` are the destinations, `{a}` `{b}` `{c}` `{e}` the
/// sources, in `inst` (which may be several `;`-separated instructions).
fn kernel(inst: &str, d: R, q: Option<R>, srcs: &[R], n: usize, divergent: bool) -> String {
    let mut body = String::new();
    let names = ["{a}", "{b}", "{c}", "{e}"];
    let mut text = inst.replace("{d}", &format!("{}0", d.prefix()));
    if let Some(q) = q {
        text = text.replace("{q}", &format!("{}7", q.prefix()));
    }
    for (k, s) in srcs.iter().enumerate() {
        text = text.replace(names[k], &format!("{}{}", s.prefix(), k + 1));
    }
    for (k, s) in srcs.iter().enumerate() {
        body += &format!(
            "ld.param.u64 %a{k}, [in{k}];\n cvta.to.global.u64 %a{k}, %a{k};\n add.s64 %a{k}, %a{k}, %off;\n"
        );
        body += &s.load(&format!("{}{}", s.prefix(), k + 1), &format!("%a{k}"));
        body += "\n";
    }
    body += "ld.param.u64 %o, [out];\n cvta.to.global.u64 %o, %o;\n add.s64 %o, %o, %off;\n";
    body += &format!("add.s64 %o2, %o, {};\n", n * 8);
    if divergent {
        body += &d.load(&format!("{}0", d.prefix()), "%o");
        body += "\n";
        if let Some(q) = q {
            body += &q.load(&format!("{}7", q.prefix()), "%o2");
            body += "\n";
        }
        body += "and.b32 %t3, %t0, 1;\n setp.eq.u32 %pg, %t3, 0;\n @%pg bra SKIP;\n";
    }
    body += &text;
    body += "\n";
    if divergent {
        body += "SKIP:\n";
    }
    body += &d.store(&format!("{}0", d.prefix()), "%o");
    body += "\n";
    if let Some(q) = q {
        body += &q.store(&format!("{}7", q.prefix()), "%o2");
        body += "\n";
    }
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\n\
         .visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2, .param .u64 in3)\n{{\n\
         .reg .pred %p<8>;\n .reg .pred %pg;\n .reg .b16 %h<8>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n\
         .reg .f32 %f<8>;\n .reg .f64 %fd<8>;\n .reg .b32 %t<4>;\n .reg .b64 %a<4>;\n .reg .b64 %o;\n .reg .b64 %o2;\n .reg .b64 %off;\n\
         mov.u32 %t0, %tid.x;\n mul.wide.u32 %off, %t0, 8;\n{body}ret;\n}}\n"
    )
}

fn bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `inst` over the rows and returns (d, q) per row.
fn run(
    inst: &str,
    d: R,
    q: Option<R>,
    srcs: &[R],
    inputs: &[&[u64]],
    divergent: bool,
) -> (Vec<u64>, Vec<u64>) {
    let n = inputs.len();
    let ptx = kernel(inst, d, q, srcs, n, divergent);
    let m = fencehound_ptx::parse("alu.ptx", &ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut dev = Device::new();
    let id = dev
        .load_module(&m)
        .unwrap_or_else(|e| panic!("`{inst}`: {e}"));
    let out = dev.alloc(16 * n as u64).expect("alloc");
    dev.copy_to(out, &bytes(&vec![SENTINEL; 2 * n]))
        .expect("copy");
    let mut args = vec![Arg::Ptr(out)];
    for k in 0..4 {
        let col: Vec<u64> = inputs
            .iter()
            .map(|r| r.get(k).copied().unwrap_or(0))
            .collect();
        let p = dev.alloc(8 * n as u64).expect("alloc");
        dev.copy_to(p, &bytes(&col)).expect("copy");
        args.push(Arg::Ptr(p));
    }
    let r = dev
        .launch(id, "k", Dim3::x(1), Dim3::x(n as u32), 0, &args)
        .unwrap_or_else(|e| panic!("`{inst}`: {e}"));
    assert!(r.outcome.is_completed(), "`{inst}`: {:?}", r.outcome);
    let mut buf = vec![0u8; 16 * n];
    dev.copy_from(out, &mut buf).expect("copy");
    let v: Vec<u64> = buf
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    (v[..n].to_vec(), v[n..].to_vec())
}

/// What a store of class `r` leaves in a sentinel-filled 8-byte slot: the stored low
/// bytes over the sentinel's upper bytes.
fn stored(r: R, v: u64) -> u64 {
    let keep = match r {
        R::P | R::W | R::Ws | R::F => 0xffff_ffff,
        R::H | R::Hs => 0xffff,
        R::D | R::Fd => u64::MAX,
    };
    (v & keep) | (SENTINEL & !keep)
}

fn check_both(inst: &str, d: R, q: Option<R>, srcs: &[R], rows: &[(&[u64], u64, u64)]) {
    let inputs: Vec<&[u64]> = rows.iter().map(|r| r.0).collect();
    for divergent in [false, true] {
        let (gd, gq) = run(inst, d, q, srcs, &inputs, divergent);
        for (l, (ins, wd, wq)) in rows.iter().enumerate() {
            let skipped = divergent && l % 2 == 0;
            let (ed, eq) = if skipped {
                (stored(d, d.sentinel()), q.map(|q| stored(q, q.sentinel())))
            } else {
                (stored(d, *wd), q.map(|q| stored(q, *wq)))
            };
            let mode = if divergent { "divergent" } else { "converged" };
            assert_eq!(
                gd[l], ed,
                "`{inst}` ({mode}) row {l} inputs {ins:#x?}: d = {:#x}, expected {ed:#x}",
                gd[l]
            );
            if let (Some(q), Some(eq)) = (q, eq) {
                assert_eq!(
                    gq[l], eq,
                    "`{inst}` ({mode}) row {l} inputs {ins:#x?}: second result ({q:?}) = {:#x}, expected {eq:#x}",
                    gq[l]
                );
            }
        }
    }
}

fn check(inst: &str, d: R, srcs: &[R], rows: &[(&[u64], u64)]) {
    let rows: Vec<(&[u64], u64, u64)> = rows.iter().map(|(i, e)| (*i, *e, 0)).collect();
    check_both(inst, d, None, srcs, &rows);
}

fn check2(inst: &str, d: R, q: R, srcs: &[R], rows: &[(&[u64], u64, u64)]) {
    check_both(inst, d, Some(q), srcs, rows);
}

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}
fn fd(x: f64) -> u64 {
    x.to_bits()
}
fn s(x: i64) -> u64 {
    x as u64
}
fn s32(x: i32) -> u64 {
    x as u32 as u64
}
fn s16(x: i16) -> u64 {
    x as u16 as u64
}

const NAN32: u64 = 0x7fff_ffff;
const NAN64: u64 = 0x7fff_ffff_ffff_ffff;
const SUB32: f32 = 1e-40; // subnormal
const INF: f32 = f32::INFINITY;

// =======================================================================================
// Integer arithmetic

#[test]
fn add_sub_all_widths() {
    use R::*;
    check(
        "add.s32 {d}, {a}, {b};",
        W,
        &[Ws, W],
        &[
            (&[1, 2], 3),
            (&[0x7fff_ffff, 1], 0x8000_0000),
            (&[s(-1), 1], 0),
            (&[s(-5), 3], s32(-2)),
        ],
    );
    check("add.u32 {d}, {a}, 7;", W, &[W], &[(&[0xffff_fffa], 1)]);
    check(
        "add.u16 {d}, {a}, {b};",
        H,
        &[Hs, H],
        &[(&[0xffff, 1], 0), (&[0x8000, 0x8000], 0), (&[5, 6], 11)],
    );
    check(
        "add.s64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[u64::MAX, 2], 1), (&[i64::MAX as u64, 1], 1 << 63)],
    );
    check(
        "sub.s32 {d}, {a}, {b};",
        W,
        &[W, Ws],
        &[(&[0, 1], 0xffff_ffff), (&[0x8000_0000, 1], 0x7fff_ffff)],
    );
    check("sub.s16 {d}, {a}, {b};", H, &[H, H], &[(&[0, 1], 0xffff)]);
    check("sub.u64 {d}, {a}, {b};", D, &[D, D], &[(&[0, 1], u64::MAX)]);
    check(
        "add.sat.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[
            (&[0x7fff_ffff, 1], 0x7fff_ffff),
            (&[0x8000_0000, s32(-1)], 0x8000_0000),
            (&[s32(-3), 1], s32(-2)),
        ],
    );
    check(
        "sub.sat.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[
            (&[0x8000_0000, 1], 0x8000_0000),
            (&[0x7fff_ffff, s32(-1)], 0x7fff_ffff),
        ],
    );
    check(
        "add.s16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x7fff_ffff, 0x0001_0001], 0x8000_0000)],
    );
    check(
        "sub.u16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x0000_0005, 0x0001_0006], 0xffff_ffff)],
    );
}

#[test]
fn carry_chains() {
    use R::*;
    check2(
        "add.cc.u32 {d}, {a}, {b};\n addc.u32 {q}, 0, 0;",
        W,
        W,
        &[W, W],
        &[
            (&[0xffff_ffff, 1], 0, 1),
            (&[0xffff_fffe, 1], 0xffff_ffff, 0),
            (&[0x8000_0000, 0x8000_0000], 0, 1),
        ],
    );
    // 128-bit addition of (b:a) + (e:c).
    let a = 0xffff_ffff_ffff_ffffu64;
    check2(
        "add.cc.u64 {d}, {a}, {c};\n addc.u64 {q}, {b}, {e};",
        D,
        D,
        &[D, D, D, D],
        &[(&[a, 1, 1, 2], 0, 4), (&[5, 1, 6, 2], 11, 3)],
    );
    // A carry-in that itself overflows: addc.cc with b = 0xffffffff and CF = 1.
    check2(
        "add.cc.u32 {d}, {a}, {b};\n addc.cc.u32 {q}, 0, {c};\n addc.u32 {d}, 0, 0;",
        W,
        W,
        &[W, W, W],
        &[
            (&[0xffff_ffff, 1, 0xffff_ffff], 1, 0),
            (&[0, 0, 0xffff_ffff], 0, 0xffff_ffff),
        ],
    );
    check2(
        "sub.cc.u32 {d}, {a}, {b};\n subc.u32 {q}, 0, 0;",
        W,
        W,
        &[W, W],
        &[(&[0, 1], 0xffff_ffff, 0xffff_ffff), (&[3, 1], 2, 0)],
    );
    check2(
        "sub.cc.s64 {d}, {a}, {c};\n subc.cc.s64 {q}, {b}, {e};",
        D,
        D,
        &[D, D, D, D],
        &[(&[0, 5, 1, 2], u64::MAX, 2)],
    );
    // CC.CF after a subtraction is the carry of `a + !b + 1`: 0 on borrow, 1 otherwise.
    // The first row was recorded on an NVIDIA GPU (issue 17): `addc 0, 0` reads 0.
    check2(
        "sub.cc.s32 {d}, {a}, {b};\n addc.u32 {q}, 0, 0;",
        W,
        W,
        &[W, W],
        &[
            (&[0x627a_df75, 0x864c_cef5], 0xdc2e_1080, 0),
            (&[0x864c_cef5, 0x627a_df75], 0x23d1_ef80, 1),
            (&[5, 5], 0, 1),
        ],
    );
    // ... and `subc` adds it to `a + !b`: after a carrying `add.cc`, `subc` is `a - b`.
    check2(
        "add.cc.u32 {d}, {a}, {b};\n subc.cc.u32 {q}, {c}, {e};\n addc.u32 {d}, 0, 0;",
        W,
        W,
        &[W, W, W, W],
        &[
            (&[0xffff_ffff, 1, 5, 3], 1, 2),
            (&[1, 1, 5, 3], 1, 1),
            (&[1, 1, 3, 5], 0, 0xffff_fffd),
        ],
    );
    // mad.lo.cc / madc.hi: the 64-bit product of two u32 plus a u64, in 32-bit pieces.
    let rows: Vec<(Vec<u64>, u64, u64)> = [
        (0xffff_ffffu32, 0xffff_ffffu32, 0xffff_ffffu32),
        (0x1234_5678, 0x9abc_def0, 0xdead_beef),
        (0x8000_0000, 2, 0x8000_0000),
    ]
    .iter()
    .map(|&(a, b, c)| {
        let p = a as u64 * b as u64 + c as u64;
        (vec![a as u64, b as u64, c as u64], p & 0xffff_ffff, p >> 32)
    })
    .collect();
    let rows: Vec<(&[u64], u64, u64)> = rows.iter().map(|(i, d, q)| (&i[..], *d, *q)).collect();
    check2(
        "mad.lo.cc.u32 {d}, {a}, {b}, {c};\n madc.hi.u32 {q}, {a}, {b}, 0;",
        W,
        W,
        &[W, W, W],
        &rows,
    );
    // madc.hi.cc.s32 with a signed product: hi(-1 * 1) = -1, + 0 + CF(1) = 0, carry out 1.
    check2(
        "add.cc.u32 {d}, {a}, {a};\n madc.hi.cc.s32 {q}, {b}, {c}, 0;\n addc.u32 {d}, 0, 0;",
        W,
        W,
        &[W, W, W],
        &[(&[0x8000_0000, s32(-1), 1], 1, 0)],
    );
}

#[test]
fn mul_mad_forms() {
    use R::*;
    check(
        "mul.lo.s32 {d}, {a}, {b};",
        W,
        &[Ws, W],
        &[(&[0x10000, 0x10000], 0), (&[s(-3), 7], s32(-21))],
    );
    check(
        "mul.hi.s32 {d}, {a}, {b};",
        W,
        &[Ws, Ws],
        &[(&[s(-1), 1], 0xffff_ffff), (&[0x4000_0000, 4], 1)],
    );
    check(
        "mul.hi.u32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0xffff_ffff, 0xffff_ffff], 0xffff_fffe)],
    );
    check(
        "mul.hi.u16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0xffff, 0xffff], 0xfffe)],
    );
    check(
        "mul.hi.s16 {d}, {a}, {b};",
        H,
        &[Hs, H],
        &[(&[s16(-2), 0x7fff], 0xffff)],
    );
    check(
        "mul.hi.u64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[u64::MAX, u64::MAX], u64::MAX - 1)],
    );
    check(
        "mul.hi.s64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[s(-1), 5], u64::MAX), (&[1 << 62, 4], 1)],
    );
    check(
        "mul.wide.s32 {d}, {a}, {b};",
        D,
        &[Ws, W],
        &[(&[s(-2), 3], s(-6)), (&[0x8000_0000, 0x8000_0000], 1 << 62)],
    );
    check(
        "mul.wide.u32 {d}, {a}, {b};",
        D,
        &[Ws, W],
        &[(&[0xffff_ffff, 0xffff_ffff], 0xffff_fffe_0000_0001)],
    );
    check(
        "mul.wide.u16 {d}, {a}, {b};",
        W,
        &[H, H],
        &[(&[0xffff, 0xffff], 0xfffe_0001)],
    );
    check(
        "mul.wide.s16 {d}, {a}, {b};",
        W,
        &[Hs, H],
        &[(&[0xffff, 0x8000], 0x8000)],
    );
    check(
        "mul.lo.u64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[1 << 63, 2], 0)],
    );
    check(
        "mad.lo.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[3, 4, 5], 17), (&[0xffff_ffff, 2, 3], 1)],
    );
    check(
        "mad.hi.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0xffff_ffff, 0xffff_ffff, 2], 0)],
    );
    check(
        "mad.hi.sat.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[0x4000_0000, 4, 0x7fff_ffff], 0x7fff_ffff),
            (&[s32(-1), 1, 0x8000_0000], 0x8000_0000),
            (&[0x4000_0000, 4, 5], 6),
        ],
    );
    check(
        "mad.wide.s32 {d}, {a}, {b}, {c};",
        D,
        &[W, W, D],
        &[
            (&[s32(-1), 1, 1], 0),
            (&[0xffff, 0x10001, 1 << 40], (1 << 40) + 0xffff_ffff),
        ],
    );
    check(
        "mad.wide.u16 {d}, {a}, {b}, {c};",
        W,
        &[H, H, W],
        &[(&[0xffff, 0xffff, 0xffff], 0xffff_0000)],
    );
    check(
        "mul24.lo.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x00ff_ffff, 2], s32(-2)), (&[0x0100_0003, 5], 15)],
    );
    check(
        "mul24.hi.u32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x00ff_ffff, 0x00ff_ffff], 0xffff_fe00)],
    );
    check(
        "mad24.lo.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0xff00_0002, 3, 1], 7)],
    );
    check(
        "sad.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[s32(-5), 3, 1], 9),
            (&[0x8000_0000, 0x7fff_ffff, 0], 0xffff_ffff),
        ],
    );
    check(
        "sad.u16 {d}, {a}, {b}, {c};",
        H,
        &[H, H, H],
        &[(&[1, 0xffff, 1], 0xffff)],
    );
}

#[test]
fn div_rem_abs_neg() {
    use R::*;
    check(
        "div.s32 {d}, {a}, {b};",
        W,
        &[Ws, Ws],
        &[
            (&[s(-7), 2], s32(-3)),
            (&[7, s(-2)], s32(-3)),
            (&[0x8000_0000, s(-1)], 0x8000_0000),
            (&[5, 0], 0xffff_ffff),
            (&[s(-5), 0], 1),
        ],
    );
    check(
        "div.u32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[7, 2], 3), (&[7, 0], 0xffff_ffff)],
    );
    check(
        "div.s16 {d}, {a}, {b};",
        H,
        &[Hs, Hs],
        &[(&[0x8000, 0xffff], 0x8000), (&[s16(-9), 2], s16(-4))],
    );
    check(
        "div.u64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[u64::MAX, 2], u64::MAX / 2), (&[1, 0], u64::MAX)],
    );
    check(
        "div.s64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[1 << 63, s(-1)], 1 << 63)],
    );
    check(
        "rem.s32 {d}, {a}, {b};",
        W,
        &[Ws, Ws],
        &[
            (&[s(-7), 2], s32(-1)),
            (&[7, s(-2)], 1),
            (&[0x8000_0000, s(-1)], 0),
            (&[s(-5), 0], s32(-5)),
        ],
    );
    check(
        "rem.u32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[7, 0], 7), (&[10, 4], 2)],
    );
    check(
        "abs.s32 {d}, {a};",
        W,
        &[Ws],
        &[(&[s(-5)], 5), (&[0x8000_0000], 0x8000_0000), (&[3], 3)],
    );
    check("abs.s16 {d}, {a};", H, &[H], &[(&[0xffff], 1)]);
    check("abs.s64 {d}, {a};", D, &[D], &[(&[1 << 63], 1 << 63)]);
    check(
        "neg.s32 {d}, {a};",
        W,
        &[W],
        &[(&[1], 0xffff_ffff), (&[0x8000_0000], 0x8000_0000)],
    );
    check("neg.s16 {d}, {a};", H, &[H], &[(&[1], 0xffff)]);
    check("neg.s64 {d}, {a};", D, &[D], &[(&[1], u64::MAX)]);
}

#[test]
fn min_max_integer() {
    use R::*;
    check(
        "min.s32 {d}, {a}, {b};",
        W,
        &[Ws, W],
        &[(&[s(-1), 1], 0xffff_ffff), (&[5, 3], 3)],
    );
    check(
        "min.u32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0xffff_ffff, 1], 1)],
    );
    check(
        "max.s16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x8000, 0x7fff], 0x7fff), (&[0xffff, 0xfffe], 0xffff)],
    );
    check(
        "max.u16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x8000, 0x7fff], 0x8000)],
    );
    check(
        "max.s64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[s(-1), 0], 0), (&[u64::MAX, 1 << 63], u64::MAX)],
    );
    check("min.u64 {d}, {a}, {b};", D, &[D, D], &[(&[u64::MAX, 1], 1)]);
    check(
        "max.relu.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[s32(-1), s32(-2)], 0), (&[3, s32(-2)], 3)],
    );
    check(
        "min.relu.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[s32(-1), 5], 0), (&[3, 5], 3)],
    );
    check(
        "min.s16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x8000_0001, 0x7fff_0002], 0x8000_0001)],
    );
    check(
        "max.relu.s16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x8000_0001, 0xffff_0002], 0x0000_0002)],
    );
    check(
        "min.u16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x8000_0001, 0x7fff_0002], 0x7fff_0001)],
    );
    check(
        "max.u16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x8000_0001, 0x7fff_0002], 0x8000_0002)],
    );
}

#[test]
fn dot_products_and_video() {
    use R::*;
    let (a, b, c) = (0x80ff_0201u32, 0x0102_ff7fu32, 10u32);
    let dp4 = |sa: bool, sb: bool| {
        let mut acc = c;
        for k in 0..4 {
            let x = (a >> (8 * k)) as u8;
            let y = (b >> (8 * k)) as u8;
            let x = if sa { x as i8 as i32 } else { x as i32 };
            let y = if sb { y as i8 as i32 } else { y as i32 };
            acc = acc.wrapping_add((x * y) as u32);
        }
        acc as u64
    };
    let row: &[u64] = &[a as u64, b as u64, c as u64];
    check(
        "dp4a.s32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(row, dp4(true, true))],
    );
    check(
        "dp4a.u32.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(row, dp4(false, false))],
    );
    check(
        "dp4a.s32.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(row, dp4(true, false))],
    );
    let dp2 = |hi: bool| {
        let k = if hi { 2 } else { 0 };
        let h0 = (a & 0xffff) as u16 as i16 as i32;
        let h1 = (a >> 16) as u16 as i16 as i32;
        let b0 = (b >> (8 * k)) as u8 as i8 as i32;
        let b1 = (b >> (8 * (k + 1))) as u8 as i8 as i32;
        c.wrapping_add((h0 * b0) as u32)
            .wrapping_add((h1 * b1) as u32) as u64
    };
    check(
        "dp2a.lo.s32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(row, dp2(false))],
    );
    check(
        "dp2a.hi.s32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(row, dp2(true))],
    );

    check(
        "vabsdiff4.u32.u32.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x10ff_0005, 0x2000_ff03, 0xdead_beef], 0x10ff_ff02)],
    );
    check(
        "vabsdiff4.u32.u32.u32.add {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(
            &[0x10ff_0005, 0x2000_ff03, 100],
            100 + 0x10 + 0xff + 0xff + 2,
        )],
    );
    check(
        "vadd4.u32.u32.u32.sat {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0xff80_0102, 0x0180_0102, 0], 0xffff_0204)],
    );
    check(
        "vadd4.s32.s32.s32.sat {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x7f80_0102, 0x0180_ff01, 0], 0x7f80_0003)],
    );
    check(
        "vsub2.s32.s32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x0000_0005, 0x0001_0007, 0], 0xffff_fffe)],
    );
    check(
        "vmax4.s32.s32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x80ff_7f01, 0x0100_8002, 0], 0x0100_7f02)],
    );
    check(
        "vmin2.u32.u32.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x8000_0001, 0x7fff_0002, 0], 0x7fff_0001)],
    );
    check(
        "vavrg4.u32.u32.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x0103_ff00, 0x0204_ff01, 0], 0x0204_ff01)],
    );
    check(
        "vset4.u32.u32.gt {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x0502_0300, 0x0403_0300, 0], 0x0100_0000)],
    );
    check(
        "vset2.s32.s32.lt.add {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0xffff_0001, 0x0001_0000, 5], 6)],
    );
}

// =======================================================================================
// Bits, logic, shifts

#[test]
fn logic_and_predicates() {
    use R::*;
    check(
        "and.b32 {d}, {a}, {b};",
        W,
        &[Ws, Ws],
        &[(&[s(-1), s(-2)], 0xffff_fffe)],
    );
    check(
        "or.b16 {d}, {a}, {b};",
        H,
        &[Hs, H],
        &[(&[0x8000, 1], 0x8001)],
    );
    check(
        "xor.b64 {d}, {a}, {b};",
        D,
        &[D, D],
        &[(&[u64::MAX, 1], u64::MAX - 1)],
    );
    check(
        "not.b32 {d}, {a};",
        W,
        &[Ws],
        &[(&[s(-1)], 0), (&[0], 0xffff_ffff)],
    );
    check("not.b16 {d}, {a};", H, &[H], &[(&[0xff00], 0x00ff)]);
    check("cnot.b32 {d}, {a};", W, &[Ws], &[(&[0], 1), (&[s(-4)], 0)]);
    check("cnot.b64 {d}, {a};", D, &[D], &[(&[1 << 63], 0), (&[0], 1)]);
    check(
        "and.pred {d}, {a}, {b};",
        P,
        &[P, P],
        &[(&[1, 1], 1), (&[1, 0], 0)],
    );
    check(
        "or.pred {d}, {a}, {b};",
        P,
        &[P, P],
        &[(&[0, 0], 0), (&[1, 0], 1)],
    );
    check(
        "xor.pred {d}, {a}, {b};",
        P,
        &[P, P],
        &[(&[1, 1], 0), (&[0, 1], 1)],
    );
    check("not.pred {d}, {a};", P, &[P], &[(&[1], 0), (&[0], 1)]);
    let (a, b, c) = (0xf0f0_1234u64, 0xcccc_5678u64, 0xaaaa_9abcu64);
    for lut in [0x80u32, 0xfe, 0x96, 0xe8, 0xf0, 0x0f, 0x00, 0xff] {
        let mut want = 0u64;
        for bit in 0..32 {
            let idx = ((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((c >> bit) & 1);
            want |= ((lut as u64 >> idx) & 1) << bit;
        }
        check(
            &format!("lop3.b32 {{d}}, {{a}}, {{b}}, {{c}}, {lut};"),
            W,
            &[W, W, W],
            &[(&[a, b, c], want)],
        );
    }
}

#[test]
fn shifts_clamp() {
    use R::*;
    check(
        "shl.b32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[
            (&[1, 31], 0x8000_0000),
            (&[1, 32], 0),
            (&[3, 0xffff_ffff], 0),
            (&[0xffff_ffff, 4], 0xffff_fff0),
        ],
    );
    check("shl.b32 {d}, {a}, 40;", W, &[W], &[(&[1], 0)]);
    check(
        "shl.b16 {d}, {a}, {b};",
        H,
        &[H, W],
        &[(&[0x8001, 1], 2), (&[1, 16], 0)],
    );
    check(
        "shl.b64 {d}, {a}, {b};",
        D,
        &[D, W],
        &[(&[1, 63], 1 << 63), (&[1, 64], 0)],
    );
    check(
        "shr.u32 {d}, {a}, {b};",
        W,
        &[Ws, W],
        &[
            (&[0x8000_0000, 31], 1),
            (&[s(-1), 32], 0),
            (&[s(-1), 4], 0x0fff_ffff),
        ],
    );
    check(
        "shr.s32 {d}, {a}, {b};",
        W,
        &[Ws, W],
        &[
            (&[0x8000_0000, 31], 0xffff_ffff),
            (&[0x8000_0000, 100], 0xffff_ffff),
            (&[0x4000_0000, 100], 0),
        ],
    );
    check(
        "shr.s16 {d}, {a}, {b};",
        H,
        &[H, W],
        &[(&[0x8000, 20], 0xffff), (&[0x8000, 1], 0xc000)],
    );
    check("shr.u16 {d}, {a}, {b};", H, &[Hs, W], &[(&[0x8000, 15], 1)]);
    check(
        "shr.s64 {d}, {a}, {b};",
        D,
        &[D, W],
        &[(&[1 << 63, 64], u64::MAX)],
    );
    check("shr.u64 {d}, {a}, {b};", D, &[D, W], &[(&[1 << 63, 63], 1)]);
    let (lo, hi) = (0x8765_4321u64, 0x1234_5678u64);
    check(
        "shf.l.wrap.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[lo, hi, 4], 0x2345_6788),
            (&[lo, hi, 36], 0x2345_6788),
            (&[lo, hi, 0], hi),
        ],
    );
    check(
        "shf.l.clamp.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[lo, hi, 36], lo), (&[lo, hi, 32], lo)],
    );
    check(
        "shf.r.wrap.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[lo, hi, 8], 0x7887_6543), (&[lo, hi, 40], 0x7887_6543)],
    );
    check(
        "shf.r.clamp.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[lo, hi, 40], hi)],
    );
}

#[test]
fn bit_field_and_counting() {
    use R::*;
    check(
        "bfe.u32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[0xabcd_1234, 8, 8], 0x12),
            (&[0xabcd_1234, 28, 8], 0xa),
            (&[0xabcd_1234, 40, 8], 0),
            (&[0xabcd_1234, 4, 0], 0),
        ],
    );
    check(
        "bfe.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[0x0000_8000, 12, 4], 0xffff_fff8),
            (&[0x8000_0000, 28, 8], 0xffff_fff8),
            (&[0x8000_0000, 40, 8], 0xffff_ffff),
        ],
    );
    check(
        "bfe.s64 {d}, {a}, {b}, {c};",
        D,
        &[D, W, W],
        &[(&[0x8000_0000, 28, 4], u64::MAX - 7)],
    );
    check(
        "bfi.b32 {d}, {a}, {b}, {c}, {e};",
        W,
        &[W, W, W, W],
        &[
            (&[0xff, 0x1234_5678, 8, 4], 0x1234_5f78),
            (&[0xff, 0x1234_5678, 30, 8], 0xd234_5678),
            (&[0xff, 7, 32, 8], 7),
        ],
    );
    check(
        "bfi.b64 {d}, {a}, {b}, {c}, {e};",
        D,
        &[D, D, W, W],
        &[(&[1, 0, 63, 1], 1 << 63)],
    );
    check(
        "bfind.u32 {d}, {a};",
        W,
        &[W],
        &[(&[0], 0xffff_ffff), (&[1], 0), (&[0x8000_0000], 31)],
    );
    check(
        "bfind.s32 {d}, {a};",
        W,
        &[Ws],
        &[(&[s(-1)], 0xffff_ffff), (&[s(-2)], 0), (&[0x4000_0000], 30)],
    );
    check(
        "bfind.shiftamt.u64 {d}, {a};",
        W,
        &[D],
        &[(&[1], 63), (&[0], 0xffff_ffff)],
    );
    check(
        "popc.b32 {d}, {a};",
        W,
        &[Ws],
        &[(&[s(-1)], 32), (&[0x0f0f], 8)],
    );
    check("popc.b64 {d}, {a};", W, &[D], &[(&[u64::MAX], 64)]);
    check(
        "clz.b32 {d}, {a};",
        W,
        &[Ws],
        &[(&[0], 32), (&[1], 31), (&[s(-1)], 0)],
    );
    check("clz.b64 {d}, {a};", W, &[D], &[(&[0], 64), (&[1], 63)]);
    check(
        "brev.b32 {d}, {a};",
        W,
        &[Ws],
        &[(&[1], 0x8000_0000), (&[0x8000_0000], 1)],
    );
    check("brev.b64 {d}, {a};", D, &[D], &[(&[1], 1 << 63)]);
    check(
        "bmsk.wrap.b32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[
            (&[1, 2], 6),
            (&[0, 0], 0),
            (&[33, 2], 6),
            (&[28, 8], 0xf000_0000),
        ],
    );
    check(
        "bmsk.clamp.b32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[
            (&[0, 32], 0xffff_ffff),
            (&[32, 1], 0),
            (&[4, 40], 0xffff_fff0),
        ],
    );
    check(
        "fns.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[0xaaaa_aaaa, 3, 1], 3),
            (&[0xaaaa_aaaa, 3, s32(-1)], 3),
            (&[0xaaaa_aaaa, 2, 1], 3),
            (&[0xaaaa_aaaa, 2, s32(-1)], 1),
            (&[0xaaaa_aaaa, 2, 0], 0xffff_ffff),
            (&[0xaaaa_aaaa, 0, 16], 31),
            (&[0xaaaa_aaaa, 0, 17], 0xffff_ffff),
        ],
    );
    let (a, b) = (0x8877_6655u64, 0x4433_2211u64);
    check(
        "prmt.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[
            (&[a, b, 0x3210], a),
            (&[a, b, 0x7654], b),
            (&[a, b, 0x0123], 0x5566_7788),
            (&[a, b, 0xbbb0], 0xffff_ff55),
            (&[a, b, 0x8880], 0x55),
        ],
    );
    check(
        "prmt.b32.f4e {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 1], 0x1188_7766)],
    );
    check(
        "prmt.b32.b4e {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 0], 0x2233_4455)],
    );
    check(
        "prmt.b32.rc8 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 2], 0x7777_7777)],
    );
    check(
        "prmt.b32.ecl {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 1], 0x8877_6666)],
    );
    check(
        "prmt.b32.ecr {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 1], 0x6666_6655)],
    );
    check(
        "prmt.b32.rc16 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[a, b, 1], 0x8877_8877)],
    );
}

// =======================================================================================
// Comparison and selection

#[test]
fn setp_integer() {
    use R::*;
    let ops = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];
    let pairs: [(i32, i32); 5] = [(-1, 1), (1, -1), (5, 5), (i32::MIN, i32::MAX), (0, 0)];
    for op in ops {
        let rows: Vec<(Vec<u64>, u64)> = pairs
            .iter()
            .map(|&(a, b)| {
                let (ua, ub) = (a as u32, b as u32);
                let t = match op {
                    "eq" => a == b,
                    "ne" => a != b,
                    "lt" => a < b,
                    "le" => a <= b,
                    "gt" => a > b,
                    "ge" => a >= b,
                    "lo" => ua < ub,
                    "ls" => ua <= ub,
                    "hi" => ua > ub,
                    _ => ua >= ub,
                };
                (vec![a as i64 as u64, b as i64 as u64], t as u64)
            })
            .collect();
        let rows: Vec<(&[u64], u64)> = rows.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(
            &format!("setp.{op}.s32 {{d}}, {{a}}, {{b}};"),
            P,
            &[Ws, Ws],
            &rows,
        );
        // The same bits compared as unsigned.
        let rows_u: Vec<(Vec<u64>, u64)> = pairs
            .iter()
            .map(|&(a, b)| {
                let (ua, ub) = (a as u32, b as u32);
                let t = match op {
                    "eq" => ua == ub,
                    "ne" => ua != ub,
                    "lt" | "lo" => ua < ub,
                    "le" | "ls" => ua <= ub,
                    "gt" | "hi" => ua > ub,
                    _ => ua >= ub,
                };
                (vec![ua as u64, ub as u64], t as u64)
            })
            .collect();
        let rows_u: Vec<(&[u64], u64)> = rows_u.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(
            &format!("setp.{op}.u32 {{d}}, {{a}}, {{b}};"),
            P,
            &[W, W],
            &rows_u,
        );
    }
    check(
        "setp.lt.s16 {d}, {a}, {b};",
        P,
        &[H, H],
        &[(&[0x8000, 0x7fff], 1)],
    );
    check(
        "setp.lt.u16 {d}, {a}, {b};",
        P,
        &[H, H],
        &[(&[0x8000, 0x7fff], 0)],
    );
    check(
        "setp.gt.s64 {d}, {a}, {b};",
        P,
        &[D, D],
        &[(&[1, u64::MAX], 1)],
    );
    check(
        "setp.eq.b64 {d}, {a}, 0;",
        P,
        &[D],
        &[(&[1 << 40], 0), (&[0], 1)],
    );
    check(
        "setp.ne.b16 {d}, {a}, {b};",
        P,
        &[Hs, H],
        &[(&[0xffff, 0xffff], 0)],
    );
    // p|q, and the combining forms with a (negated) predicate.
    check2(
        "setp.lt.s32 {d}|{q}, {a}, {b};",
        P,
        P,
        &[W, W],
        &[(&[1, 2], 1, 0), (&[2, 1], 0, 1)],
    );
    check2(
        "setp.lt.and.s32 {d}|{q}, {a}, {b}, {c};",
        P,
        P,
        &[W, W, P],
        &[(&[1, 2, 1], 1, 0), (&[1, 2, 0], 0, 0), (&[2, 1, 1], 0, 1)],
    );
    check(
        "setp.eq.or.u32 {d}, {a}, {b}, !{c};",
        P,
        &[W, W, P],
        &[(&[1, 2, 1], 0), (&[1, 2, 0], 1), (&[2, 2, 1], 1)],
    );
    check(
        "setp.ne.xor.u32 {d}, {a}, {b}, {c};",
        P,
        &[W, W, P],
        &[(&[1, 2, 1], 0), (&[1, 2, 0], 1), (&[2, 2, 1], 1)],
    );
}

#[test]
fn setp_float() {
    use R::*;
    let nan = f32::NAN;
    let vals = [
        (1.0f32, 2.0f32),
        (2.0, 1.0),
        (0.0, -0.0),
        (nan, 1.0),
        (1.0, nan),
        (-INF, INF),
    ];
    for op in [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ] {
        let t = |a: f32, b: f32| {
            let u = a.is_nan() || b.is_nan();
            match op {
                "eq" => a == b,
                "ne" => !u && a != b,
                "lt" => a < b,
                "le" => a <= b,
                "gt" => a > b,
                "ge" => a >= b,
                "equ" => u || a == b,
                "neu" => u || a != b,
                "ltu" => u || a < b,
                "leu" => u || a <= b,
                "gtu" => u || a > b,
                "geu" => u || a >= b,
                "num" => !u,
                _ => u,
            }
        };
        let rows: Vec<(Vec<u64>, u64)> = vals
            .iter()
            .map(|&(a, b)| (vec![f(a), f(b)], t(a, b) as u64))
            .collect();
        let rows: Vec<(&[u64], u64)> = rows.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(
            &format!("setp.{op}.f32 {{d}}, {{a}}, {{b}};"),
            P,
            &[F, F],
            &rows,
        );
        let rows: Vec<(Vec<u64>, u64)> = vals
            .iter()
            .map(|&(a, b)| (vec![fd(a as f64), fd(b as f64)], t(a, b) as u64))
            .collect();
        let rows: Vec<(&[u64], u64)> = rows.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(
            &format!("setp.{op}.f64 {{d}}, {{a}}, {{b}};"),
            P,
            &[Fd, Fd],
            &rows,
        );
    }
    // .ftz: a subnormal compares equal to zero.
    check(
        "setp.eq.ftz.f32 {d}, {a}, 0f00000000;",
        P,
        &[F],
        &[(&[f(SUB32)], 1)],
    );
    check(
        "setp.eq.f32 {d}, {a}, 0f00000000;",
        P,
        &[F],
        &[(&[f(SUB32)], 0)],
    );
    // Half precision: 0x3c00 = 1.0, 0x4000 = 2.0, 0x7e00 = NaN, 0x0001 = subnormal.
    check(
        "setp.lt.f16 {d}, {a}, {b};",
        P,
        &[H, H],
        &[
            (&[0x3c00, 0x4000], 1),
            (&[0x7e00, 0x4000], 0),
            (&[0xbc00, 0x3c00], 1),
        ],
    );
    check(
        "setp.eq.ftz.f16 {d}, {a}, {b};",
        P,
        &[H, H],
        &[(&[0x0001, 0x8000], 1)],
    );
    check(
        "setp.ge.bf16 {d}, {a}, {b};",
        P,
        &[H, H],
        &[(&[0x3f80, 0x3f80], 1), (&[0x3f80, 0x4000], 0)],
    );
    check2(
        "setp.lt.f16x2 {d}|{q}, {a}, {b};",
        P,
        P,
        &[W, W],
        &[
            (&[0x4000_3c00, 0x3c00_4000], 1, 0),
            (&[0x3c00_7e00, 0x4000_4000], 0, 1),
        ],
    );
    check2(
        "setp.gtu.and.bf16x2 {d}|{q}, {a}, {b}, {c};",
        P,
        P,
        &[W, W, P],
        &[
            (&[0x7fc0_4000, 0x3f80_3f80, 1], 1, 1),
            (&[0x7fc0_4000, 0x3f80_3f80, 0], 0, 0),
        ],
    );
}

#[test]
fn set_selp_slct_testp() {
    use R::*;
    check(
        "set.lt.u32.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[s32(-1), 1], 0xffff_ffff), (&[1, 1], 0)],
    );
    check(
        "set.lt.f32.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(1.0), f(2.0)], f(1.0)), (&[f(f32::NAN), f(2.0)], 0)],
    );
    check(
        "set.nan.f32.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(f32::NAN), f(2.0)], f(1.0))],
    );
    check(
        "set.eq.and.u32.f64 {d}, {a}, {b}, {c};",
        W,
        &[Fd, Fd, P],
        &[
            (&[fd(1.0), fd(1.0), 1], 0xffff_ffff),
            (&[fd(1.0), fd(1.0), 0], 0),
        ],
    );
    check(
        "set.nan.f16.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x7e00, 0x3c00], 0x3c00), (&[0x3c00, 0x3c00], 0)],
    );
    check(
        "set.lt.u32.f16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x3c00_4000, 0x4000_3c00], 0xffff_0000)],
    );
    check(
        "set.lt.bf16x2.bf16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x3f80_4000, 0x4000_3f80], 0x3f80_0000)],
    );
    check(
        "selp.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, P],
        &[(&[1, 2, 1], 1), (&[1, 2, 0], 2)],
    );
    check(
        "selp.u16 {d}, {a}, 7, {c};",
        H,
        &[H, H, P],
        &[(&[1, 0, 0], 7), (&[1, 0, 1], 1)],
    );
    check(
        "selp.s32 {d}, -1, 0, {c};",
        W,
        &[W, W, P],
        &[(&[0, 0, 1], 0xffff_ffff)],
    );
    check(
        "selp.f64 {d}, {a}, {b}, {c};",
        Fd,
        &[Fd, Fd, P],
        &[(&[fd(1.5), fd(2.5), 0], fd(2.5))],
    );
    check(
        "selp.f32 {d}, 0f3F800000, {b}, {c};",
        F,
        &[F, F, P],
        &[(&[0, f(2.5), 1], f(1.0))],
    );
    check(
        "slct.b32.s32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[1, 2, 0], 1), (&[1, 2, s32(-1)], 2)],
    );
    check(
        "slct.f32.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[
            (&[f(1.0), f(2.0), f(-0.0)], f(1.0)),
            (&[f(1.0), f(2.0), f(-1.0)], f(2.0)),
            (&[f(1.0), f(2.0), f(f32::NAN)], f(2.0)),
        ],
    );
    check(
        "slct.ftz.s32.f32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, F],
        &[(&[1, 2, f(-SUB32)], 1)],
    );
    for (op, want) in [
        ("finite", [1, 0, 0, 1, 1]),
        ("infinite", [0, 1, 0, 0, 0]),
        ("number", [1, 1, 0, 1, 1]),
        ("notanumber", [0, 0, 1, 0, 0]),
        ("normal", [1, 0, 0, 0, 1]),
        ("subnormal", [0, 0, 0, 1, 0]),
    ] {
        let vals = [1.0f32, -INF, f32::NAN, SUB32, 0.0];
        let rows: Vec<(Vec<u64>, u64)> = vals
            .iter()
            .zip(want)
            .map(|(v, w)| (vec![f(*v)], w))
            .collect();
        let rows: Vec<(&[u64], u64)> = rows.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(&format!("testp.{op}.f32 {{d}}, {{a}};"), P, &[F], &rows);
        let rows: Vec<(Vec<u64>, u64)> = vals
            .iter()
            .zip(want)
            .map(|(v, w)| {
                let x = if *v == SUB32 { 1e-310 } else { *v as f64 };
                (vec![fd(x)], w)
            })
            .collect();
        let rows: Vec<(&[u64], u64)> = rows.iter().map(|(i, e)| (&i[..], *e)).collect();
        check(&format!("testp.{op}.f64 {{d}}, {{a}};"), P, &[Fd], &rows);
    }
}

// =======================================================================================
// Floating point

/// One table row: the operands and the expected result.
type Row = (Vec<u64>, u64);

/// The next representable f32 above.
fn up(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}

#[test]
fn f32_add_sub_mul_rounding() {
    use R::*;
    let eps = 2f32.powi(-30);
    let one_up = up(1.0);
    let r = |a: f32, b: f32, e: f32| -> Row { (vec![f(a), f(b)], f(e)) };
    let cases: Vec<(&str, Vec<Row>)> = vec![
        (
            "add.f32",
            vec![
                r(1.0, eps, 1.0),
                r(1.0, 2.0, 3.0),
                r(INF, -INF, f32::NAN),
                r(0.0, -0.0, 0.0),
                r(SUB32, 0.0, SUB32),
            ],
        ),
        ("add.rn.f32", vec![r(1.0, eps, 1.0), r(-1.0, -eps, -1.0)]),
        ("add.rz.f32", vec![r(1.0, eps, 1.0), r(-1.0, -eps, -1.0)]),
        ("add.rp.f32", vec![r(1.0, eps, one_up), r(-1.0, -eps, -1.0)]),
        (
            "add.rm.f32",
            vec![r(1.0, eps, 1.0), r(-1.0, -eps, -one_up), r(1.0, -1.0, -0.0)],
        ),
        ("add.ftz.f32", vec![r(SUB32, 0.0, 0.0), r(-SUB32, 0.0, 0.0)]),
        (
            "add.sat.f32",
            vec![r(0.75, 0.5, 1.0), r(-1.0, 0.5, 0.0), r(-0.0, -0.0, 0.0)],
        ),
        ("sub.f32", vec![r(1.0, 3.0, -2.0), r(INF, INF, f32::NAN)]),
        ("sub.rp.f32", vec![r(1.0, -eps, one_up)]),
        ("sub.rz.ftz.f32", vec![r(SUB32, 0.0, 0.0)]),
        (
            "mul.f32",
            vec![r(3.0, 0.5, 1.5), r(0.0, INF, f32::NAN), r(-0.0, 5.0, -0.0)],
        ),
        ("mul.rn.f32", vec![r(one_up, one_up, up(one_up))]),
        ("mul.rz.f32", vec![r(one_up, one_up, up(one_up))]),
        ("mul.rp.f32", vec![r(one_up, one_up, up(up(one_up)))]),
        ("mul.rm.f32", vec![r(-one_up, one_up, -up(up(one_up)))]),
        (
            "mul.ftz.f32",
            vec![r(1e-20, 1e-20, 0.0), r(SUB32, 1.0, 0.0)],
        ),
        ("mul.sat.f32", vec![r(4.0, 4.0, 1.0), r(f32::NAN, 1.0, 0.0)]),
    ];
    for (op, rows) in &cases {
        let rows: Vec<(&[u64], u64)> = rows
            .iter()
            .map(|(i, e)| {
                (
                    &i[..],
                    if f32::from_bits(*e as u32).is_nan() {
                        NAN32
                    } else {
                        *e
                    },
                )
            })
            .collect();
        check(&format!("{op} {{d}}, {{a}}, {{b}};"), F, &[F, F], &rows);
    }
    // NaN payloads are not propagated by arithmetic.
    check(
        "add.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[0x7fc0_0001, f(1.0)], NAN32)],
    );
    // 0f literals and decimal literals as operands.
    check(
        "add.f32 {d}, {a}, 0f3F800000;",
        F,
        &[F],
        &[(&[f(2.0)], f(3.0))],
    );
    check("mul.f32 {d}, {a}, 0.5;", F, &[F], &[(&[f(3.0)], f(1.5))]);
}

#[test]
fn f32_fma_div_sqrt() {
    use R::*;
    let (a, b) = (up(1.0), f32::from_bits(0x3f7f_fffe)); // (1+2^-23)(1-2^-23) = 1 - 2^-46
    let tiny = -(2f32.powi(-46));
    check(
        "fma.rn.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[
            (&[f(a), f(b), f(-1.0)], f(tiny)),
            (&[f(INF), f(0.0), f(1.0)], NAN32),
        ],
    );
    check(
        "mad.rn.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[(&[f(a), f(b), f(-1.0)], f(tiny))],
    );
    check(
        "mad.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[(&[f(a), f(b), f(-1.0)], f(tiny))],
    );
    check(
        "fma.rz.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[(&[f(1.0), f(1.0), f(2f32.powi(-30))], f(1.0))],
    );
    check(
        "fma.rp.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[(&[f(1.0), f(1.0), f(2f32.powi(-30))], f(up(1.0)))],
    );
    check(
        "fma.rn.ftz.sat.f32 {d}, {a}, {b}, {c};",
        F,
        &[F, F, F],
        &[
            (&[f(2.0), f(2.0), f(0.0)], f(1.0)),
            (&[f(SUB32), f(1.0), f(0.0)], 0),
        ],
    );
    let third = 0x3eaa_aaab;
    check(
        "div.rn.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[
            (&[f(1.0), f(3.0)], third),
            (&[f(1.0), f(0.0)], f(INF)),
            (&[f(-1.0), f(0.0)], f(-INF)),
            (&[f(0.0), f(0.0)], NAN32),
        ],
    );
    check(
        "div.rz.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(1.0), f(3.0)], third - 1)],
    );
    check(
        "div.rm.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(1.0), f(3.0)], third - 1)],
    );
    check(
        "div.rp.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(1.0), f(3.0)], third)],
    );
    check(
        "div.full.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(1.0), f(4.0)], f(0.25))],
    );
    check(
        "div.approx.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[
            (&[f(1.0), f(4.0)], f(0.25)),
            (&[f(1.0), f(2f32.powi(127))], 0),
        ],
    );
    check(
        "div.approx.ftz.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(SUB32), f(1.0)], 0)],
    );
    check(
        "rcp.rn.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(3.0)], third), (&[f(-0.0)], f(-INF))],
    );
    check("rcp.rz.f32 {d}, {a};", F, &[F], &[(&[f(3.0)], third - 1)]);
    check(
        "rcp.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(SUB32)], f(INF))],
    );
    check("rcp.approx.f32 {d}, {a};", F, &[F], &[(&[f(4.0)], f(0.25))]);
    check(
        "sqrt.rn.f32 {d}, {a};",
        F,
        &[F],
        &[
            (&[f(2.0)], 0x3fb5_04f3),
            (&[f(-1.0)], NAN32),
            (&[f(-0.0)], f(-0.0)),
            (&[f(INF)], f(INF)),
        ],
    );
    check(
        "sqrt.rp.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(2.0)], 0x3fb5_04f4)],
    );
    check("sqrt.approx.f32 {d}, {a};", F, &[F], &[(&[f(4.0)], f(2.0))]);
    check(
        "sqrt.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(SUB32)], 0)],
    );
    check(
        "rsqrt.approx.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(4.0)], f(0.5)), (&[f(0.0)], f(INF))],
    );
    check(
        "rsqrt.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(-SUB32)], f(-INF))],
    );
}

#[test]
fn f32_approx_transcendentals() {
    use R::*;
    check(
        "ex2.approx.f32 {d}, {a};",
        F,
        &[F],
        &[
            (&[f(1.0)], f(2.0)),
            (&[f(-INF)], 0),
            (&[f(INF)], f(INF)),
            (&[f(-1.0)], f(0.5)),
        ],
    );
    check(
        "ex2.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(-130.0)], 0)],
    );
    check(
        "lg2.approx.f32 {d}, {a};",
        F,
        &[F],
        &[
            (&[f(8.0)], f(3.0)),
            (&[f(0.0)], f(-INF)),
            (&[f(-1.0)], NAN32),
        ],
    );
    check(
        "lg2.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(SUB32)], f(-INF))],
    );
    check(
        "sin.approx.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(0.0)], 0), (&[f(INF)], NAN32)],
    );
    check(
        "sin.approx.ftz.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(-0.0)], f(-0.0))],
    );
    check("cos.approx.f32 {d}, {a};", F, &[F], &[(&[f(0.0)], f(1.0))]);
    check(
        "tanh.approx.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(INF)], f(1.0)), (&[f(-INF)], f(-1.0)), (&[f(0.0)], 0)],
    );
}

#[test]
fn f32_min_max_abs_neg_copysign() {
    use R::*;
    let nan = f(f32::NAN);
    check(
        "min.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[
            (&[f(1.0), f(2.0)], f(1.0)),
            (&[nan, f(2.0)], f(2.0)),
            (&[f(2.0), nan], f(2.0)),
            (&[nan, nan], NAN32),
            (&[f(0.0), f(-0.0)], f(-0.0)),
            (&[f(-0.0), f(0.0)], f(-0.0)),
        ],
    );
    check(
        "max.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(-0.0), f(0.0)], f(0.0)), (&[nan, f(-2.0)], f(-2.0))],
    );
    check(
        "min.NaN.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[nan, f(2.0)], NAN32)],
    );
    check(
        "max.ftz.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(SUB32), f(-1.0)], 0)],
    );
    check(
        "min.xorsign.abs.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(-1.0), f(2.0)], f(-1.0)), (&[f(-3.0), f(-2.0)], f(2.0))],
    );
    check(
        "max.xorsign.abs.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(-1.0), f(2.0)], f(-2.0))],
    );
    check(
        "min.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[
            (&[fd(f64::NAN), fd(2.0)], fd(2.0)),
            (&[fd(0.0), fd(-0.0)], fd(-0.0)),
        ],
    );
    check(
        "max.NaN.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(f64::NAN)], NAN64)],
    );
    check(
        "abs.f32 {d}, {a};",
        F,
        &[F],
        &[
            (&[f(-2.0)], f(2.0)),
            (&[0xffc0_0001], 0x7fc0_0001),
            (&[f(-0.0)], 0),
        ],
    );
    check("abs.ftz.f32 {d}, {a};", F, &[F], &[(&[f(-SUB32)], 0)]);
    check(
        "neg.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(2.0)], f(-2.0)), (&[0x7fc0_0001], 0xffc0_0001)],
    );
    check("neg.ftz.f32 {d}, {a};", F, &[F], &[(&[f(SUB32)], f(-0.0))]);
    check("abs.f64 {d}, {a};", Fd, &[Fd], &[(&[fd(-0.0)], 0)]);
    check("neg.f64 {d}, {a};", Fd, &[Fd], &[(&[fd(1.0)], fd(-1.0))]);
    check(
        "copysign.f32 {d}, {a}, {b};",
        F,
        &[F, F],
        &[(&[f(-1.0), f(2.0)], f(-2.0)), (&[f(1.0), f(-2.0)], f(2.0))],
    );
    check(
        "copysign.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(-0.0), fd(3.0)], fd(-3.0))],
    );
}

#[test]
fn f64_arithmetic() {
    use R::*;
    let eps = 2f64.powi(-60);
    let one_up = f64::from_bits(1f64.to_bits() + 1);
    check(
        "add.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[
            (&[fd(1.0), fd(eps)], fd(1.0)),
            (&[fd(f64::INFINITY), fd(f64::NEG_INFINITY)], NAN64),
        ],
    );
    check(
        "add.rp.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(eps)], fd(one_up))],
    );
    check(
        "add.rz.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(eps)], fd(1.0))],
    );
    check(
        "add.rm.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(-1.0)], fd(-0.0))],
    );
    check(
        "sub.rm.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(-1.0), fd(eps)], fd(-one_up))],
    );
    check(
        "mul.rn.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(one_up), fd(one_up)], fd(1.0 + 2f64.powi(-51)))],
    );
    check(
        "mul.rp.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(one_up), fd(one_up)], fd(1.0 + 3.0 * 2f64.powi(-52)))],
    );
    let (a, b) = (one_up, f64::from_bits(0x3fef_ffff_ffff_fffe));
    check(
        "fma.rn.f64 {d}, {a}, {b}, {c};",
        Fd,
        &[Fd, Fd, Fd],
        &[(&[fd(a), fd(b), fd(-1.0)], fd(a.mul_add(b, -1.0)))],
    );
    check(
        "mad.rn.f64 {d}, {a}, {b}, {c};",
        Fd,
        &[Fd, Fd, Fd],
        &[(&[fd(2.0), fd(3.0), fd(1.0)], fd(7.0))],
    );
    check(
        "div.rn.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[
            (&[fd(1.0), fd(3.0)], fd(1.0 / 3.0)),
            (&[fd(0.0), fd(0.0)], NAN64),
        ],
    );
    let third = (1.0f64 / 3.0).to_bits();
    check(
        "div.rz.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(3.0)], third)],
    );
    check(
        "div.rp.f64 {d}, {a}, {b};",
        Fd,
        &[Fd, Fd],
        &[(&[fd(1.0), fd(3.0)], third + 1)],
    );
    check("rcp.rn.f64 {d}, {a};", Fd, &[Fd], &[(&[fd(4.0)], fd(0.25))]);
    check(
        "sqrt.rn.f64 {d}, {a};",
        Fd,
        &[Fd],
        &[(&[fd(2.0)], fd(2f64.sqrt())), (&[fd(-2.0)], NAN64)],
    );
    check(
        "rsqrt.approx.f64 {d}, {a};",
        Fd,
        &[Fd],
        &[(&[fd(4.0)], fd(0.5))],
    );
    check(
        "rcp.approx.ftz.f64 {d}, {a};",
        Fd,
        &[Fd],
        &[(&[fd(4.0)], fd(0.25))],
    );
}

#[test]
fn half_precision() {
    use R::*;
    // f16: 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 0.5 = 0x3800, 65504 = 0x7bff.
    check(
        "add.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[
            (&[0x3c00, 0x4000], 0x4200),
            (&[0x7bff, 0x7bff], 0x7c00),
            (&[0x7c00, 0xfc00], 0x7fff),
        ],
    );
    check(
        "add.rn.sat.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x3c00, 0x4000], 0x3c00)],
    );
    check(
        "add.ftz.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x0001, 0x0000], 0x0000)],
    );
    check(
        "sub.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x3c00, 0x4000], 0xbc00)],
    );
    check(
        "mul.f16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x4000_3c00, 0x3800_4200], 0x3c00_4200)],
    );
    check(
        "add.bf16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x3f80, 0x4000], 0x4040)],
    );
    check(
        "mul.rn.bf16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x4000_3f80, 0x4000_4000], 0x4080_4000)],
    );
    check(
        "fma.rn.bf16 {d}, {a}, {b}, {c};",
        H,
        &[H, H, H],
        &[(&[0x4000, 0x4040, 0x3f80], 0x40e0)],
    );
    check(
        "fma.rn.relu.f16 {d}, {a}, {b}, {c};",
        H,
        &[H, H, H],
        &[
            (&[0x4000, 0xc000, 0x3c00], 0),
            (&[0x4000, 0x4000, 0x3c00], 0x4500),
        ],
    );
    check(
        "fma.rn.bf16x2 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[0x3f80_4000, 0x3f80_4040, 0x3f80_3f80], 0x4000_40e0)],
    );
    check(
        "min.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x7e00, 0x4000], 0x4000), (&[0x0000, 0x8000], 0x8000)],
    );
    check(
        "max.NaN.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0x7e00, 0x4000], 0x7fff)],
    );
    check(
        "min.xorsign.abs.f16 {d}, {a}, {b};",
        H,
        &[H, H],
        &[(&[0xbc00, 0x4000], 0xbc00), (&[0xc200, 0xc000], 0x4000)],
    );
    check(
        "max.bf16x2 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[0x3f80_4000, 0x4000_3f80], 0x4000_4000)],
    );
    check(
        "neg.f16 {d}, {a};",
        H,
        &[H],
        &[(&[0x3c00], 0xbc00), (&[0x7e01], 0xfe01)],
    );
    check(
        "abs.bf16x2 {d}, {a};",
        W,
        &[W],
        &[(&[0xbf80_3f80], 0x3f80_3f80)],
    );
    check(
        "neg.ftz.f16x2 {d}, {a};",
        W,
        &[W],
        &[(&[0x0001_3c00], 0x8000_bc00)],
    );
    check("ex2.approx.f16 {d}, {a};", H, &[H], &[(&[0x3c00], 0x4000)]);
    check(
        "ex2.approx.ftz.bf16x2 {d}, {a};",
        W,
        &[W],
        &[(&[0x3f80_0000], 0x4000_3f80)],
    );
    check(
        "tanh.approx.f16 {d}, {a};",
        H,
        &[H],
        &[(&[0x0000], 0x0000), (&[0x7c00], 0x3c00)],
    );
}

// =======================================================================================
// Conversions

#[test]
fn cvt_integer() {
    use R::*;
    check(
        "cvt.s32.s8 {d}, {a};",
        W,
        &[W],
        &[(&[0x80], 0xffff_ff80), (&[0x17f], 0x7f)],
    );
    check("cvt.u32.u8 {d}, {a};", W, &[W], &[(&[0x180], 0x80)]);
    check(
        "cvt.s32.s16 {d}, {a};",
        W,
        &[H],
        &[(&[0x8000], 0xffff_8000)],
    );
    check("cvt.u32.u16 {d}, {a};", W, &[Hs], &[(&[0x8000], 0x8000)]);
    check("cvt.s16.s8 {d}, {a};", H, &[H], &[(&[0x00ff], 0xffff)]);
    check("cvt.u16.u32 {d}, {a};", H, &[W], &[(&[0x12345], 0x2345)]);
    check(
        "cvt.s64.s32 {d}, {a};",
        D,
        &[W],
        &[(&[0xffff_ffff], u64::MAX), (&[5], 5)],
    );
    check(
        "cvt.u64.u32 {d}, {a};",
        D,
        &[Ws],
        &[(&[0xffff_ffff], 0xffff_ffff)],
    );
    check(
        "cvt.u32.u64 {d}, {a};",
        W,
        &[D],
        &[(&[0x1_2345_6789], 0x2345_6789)],
    );
    check("cvt.s64.s16 {d}, {a};", D, &[H], &[(&[0xffff], u64::MAX)]);
    check(
        "cvt.sat.s8.s32 {d}, {a};",
        H,
        &[W],
        // The `.b16` register is wider than `.s8`: sign-extended (see below).
        &[(&[300], 0x7f), (&[s32(-300)], 0xff80), (&[s32(-5)], 0xfffb)],
    );
    check(
        "cvt.sat.u8.s32 {d}, {a};",
        H,
        &[W],
        &[(&[s32(-5)], 0), (&[300], 0xff)],
    );
    check(
        "cvt.sat.u32.s64 {d}, {a};",
        W,
        &[D],
        &[(&[s(-1)], 0), (&[1 << 40], 0xffff_ffff)],
    );
    check(
        "cvt.sat.s32.u32 {d}, {a};",
        W,
        &[W],
        &[(&[0x8000_0000], 0x7fff_ffff)],
    );
    check("cvt.sat.s16.s16 {d}, {a};", H, &[H], &[(&[0x8000], 0x8000)]);
}

/// A `cvt` whose destination register is wider than its type (ptxas accepts this for
/// `cvt` and `ld` only): a signed result is sign-extended to the register's width, an
/// unsigned or float one zero-extended (PTX ISA "Operand Size Exceeding Instruction-Type
/// Size"). The first row was recorded on an NVIDIA GPU (issue 17).
#[test]
fn cvt_into_a_wider_register() {
    use R::*;
    check(
        "cvt.s16.s8 {d}, {a};",
        W,
        &[W],
        &[(&[0xc2], 0xffff_ffc2), (&[0x42], 0x42)],
    );
    check("cvt.s16.s8 {d}, {a};", D, &[W], &[(&[0xc2], s(-62))]);
    check("cvt.s16.s8 {d}, {a};", W, &[H], &[(&[0x80], 0xffff_ff80)]);
    check("cvt.s16.u8 {d}, {a};", W, &[W], &[(&[0x1c2], 0xc2)]);
    check("cvt.u16.u8 {d}, {a};", W, &[W], &[(&[0xc2], 0xc2)]);
    check("cvt.u16.s8 {d}, {a};", W, &[W], &[(&[0xc2], 0xffc2)]);
    check("cvt.s8.s32 {d}, {a};", W, &[W], &[(&[0x1f0], 0xffff_fff0)]);
    check("cvt.u8.s32 {d}, {a};", W, &[W], &[(&[0x1f0], 0xf0)]);
    check(
        "cvt.s32.s64 {d}, {a};",
        D,
        &[D],
        &[(&[0x1_8000_0000], s(i32::MIN as i64))],
    );
    check("cvt.s32.s8 {d}, {a};", D, &[W], &[(&[0xff], u64::MAX)]);
    check(
        "cvt.sat.s8.s32 {d}, {a};",
        W,
        &[W],
        &[(&[s32(-300)], 0xffff_ff80), (&[300], 0x7f)],
    );
    check(
        "cvt.rzi.s16.f32 {d}, {a};",
        W,
        &[F],
        &[(&[f(-2.5)], 0xffff_fffe), (&[f(1e9)], 0x7fff)],
    );
    check("cvt.rni.u8.f32 {d}, {a};", W, &[F], &[(&[f(-3.0)], 0)]);
    check("cvt.rn.f16.f32 {d}, {a};", W, &[F], &[(&[f(-1.0)], 0xbc00)]);
}

#[test]
fn cvt_float_int() {
    use R::*;
    check(
        "cvt.rni.s32.f32 {d}, {a};",
        W,
        &[F],
        &[
            (&[f(2.5)], 2),
            (&[f(3.5)], 4),
            (&[f(-2.5)], s32(-2)),
            (&[f(f32::NAN)], 0),
            (&[f(1e10)], 0x7fff_ffff),
            (&[f(-1e10)], 0x8000_0000),
        ],
    );
    check(
        "cvt.rzi.s32.f32 {d}, {a};",
        W,
        &[F],
        &[(&[f(-2.7)], s32(-2)), (&[f(2.7)], 2)],
    );
    check(
        "cvt.rmi.s32.f32 {d}, {a};",
        W,
        &[F],
        &[(&[f(-0.5)], s32(-1))],
    );
    check("cvt.rpi.s32.f32 {d}, {a};", W, &[F], &[(&[f(0.1)], 1)]);
    check(
        "cvt.rzi.u32.f32 {d}, {a};",
        W,
        &[F],
        &[(&[f(-1.5)], 0), (&[f(3.9)], 3), (&[f(INF)], 0xffff_ffff)],
    );
    check(
        "cvt.rzi.ftz.s32.f32 {d}, {a};",
        W,
        &[F],
        &[(&[f(SUB32)], 0)],
    );
    check(
        "cvt.rni.s64.f64 {d}, {a};",
        D,
        &[Fd],
        &[(&[fd(-1e300)], 1 << 63), (&[fd(-3.5)], s(-4))],
    );
    check(
        "cvt.rzi.u64.f64 {d}, {a};",
        D,
        &[Fd],
        &[(&[fd(1e300)], u64::MAX)],
    );
    check(
        "cvt.rzi.s16.f32 {d}, {a};",
        H,
        &[F],
        &[(&[f(-40000.0)], 0x8000), (&[f(-3.0)], 0xfffd)],
    );
    check(
        "cvt.rzi.sat.u16.f32 {d}, {a};",
        H,
        &[F],
        &[(&[f(70000.0)], 0xffff)],
    );
    check(
        "cvt.rni.u8.f64 {d}, {a};",
        H,
        &[Fd],
        &[(&[fd(254.5)], 254), (&[fd(1000.0)], 255)],
    );
    check(
        "cvt.rzi.s32.f16 {d}, {a};",
        W,
        &[H],
        &[(&[0xc200], s32(-3))],
    );
    check(
        "cvt.rn.f32.s32 {d}, {a};",
        F,
        &[W],
        &[
            (&[16_777_217], f(16_777_216.0)),
            (&[16_777_219], f(16_777_220.0)),
            (&[s32(-1)], f(-1.0)),
        ],
    );
    check(
        "cvt.rz.f32.s32 {d}, {a};",
        F,
        &[W],
        &[(&[16_777_219], f(16_777_218.0))],
    );
    check(
        "cvt.rm.f32.s32 {d}, {a};",
        F,
        &[W],
        &[(&[s32(-16_777_217)], f(-16_777_218.0))],
    );
    check(
        "cvt.rp.f32.u32 {d}, {a};",
        F,
        &[W],
        &[(&[16_777_217], f(16_777_218.0))],
    );
    check(
        "cvt.rn.f32.u64 {d}, {a};",
        F,
        &[D],
        &[(&[u64::MAX], f(1.8446744e19))],
    );
    check(
        "cvt.rz.f32.u64 {d}, {a};",
        F,
        &[D],
        &[(&[u64::MAX], 0x5f7f_ffff)],
    );
    check(
        "cvt.rn.f64.s64 {d}, {a};",
        Fd,
        &[D],
        &[(&[s(-3)], fd(-3.0))],
    );
    check(
        "cvt.rn.f64.u32 {d}, {a};",
        Fd,
        &[W],
        &[(&[0xffff_ffff], fd(4294967295.0))],
    );
    check(
        "cvt.rn.f64.s16 {d}, {a};",
        Fd,
        &[H],
        &[(&[0x8000], fd(-32768.0))],
    );
    check(
        "cvt.rn.f16.s32 {d}, {a};",
        H,
        &[W],
        &[(&[70000], 0x7c00), (&[2], 0x4000)],
    );
    check("cvt.rz.f16.u32 {d}, {a};", H, &[W], &[(&[70000], 0x7bff)]);
}

#[test]
fn cvt_float_float() {
    use R::*;
    check(
        "cvt.f64.f32 {d}, {a};",
        Fd,
        &[F],
        &[
            (&[f(1.5)], fd(1.5)),
            (&[0x7fc0_0001], NAN64),
            (&[f(SUB32)], fd(SUB32 as f64)),
        ],
    );
    check(
        "cvt.ftz.f64.f32 {d}, {a};",
        Fd,
        &[F],
        &[(&[f(-SUB32)], fd(-0.0))],
    );
    check(
        "cvt.rn.f32.f64 {d}, {a};",
        F,
        &[Fd],
        &[
            (&[fd(1e300)], f(INF)),
            (&[fd(1.0 + 2f64.powi(-30))], f(1.0)),
            (&[fd(f64::NAN)], NAN32),
        ],
    );
    check(
        "cvt.rz.f32.f64 {d}, {a};",
        F,
        &[Fd],
        &[(&[fd(1e300)], f(f32::MAX))],
    );
    check(
        "cvt.rp.f32.f64 {d}, {a};",
        F,
        &[Fd],
        &[(&[fd(1.0 + 2f64.powi(-30))], f(up(1.0)))],
    );
    check(
        "cvt.rn.sat.f32.f64 {d}, {a};",
        F,
        &[Fd],
        &[(&[fd(2.0)], f(1.0)), (&[fd(-2.0)], 0)],
    );
    check(
        "cvt.rn.ftz.f32.f64 {d}, {a};",
        F,
        &[Fd],
        &[(&[fd(1e-40)], 0)],
    );
    check(
        "cvt.rni.f32.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(2.5)], f(2.0)), (&[f(-0.4)], f(-0.0))],
    );
    check(
        "cvt.rzi.f64.f64 {d}, {a};",
        Fd,
        &[Fd],
        &[(&[fd(-2.7)], fd(-2.0))],
    );
    check("cvt.rpi.f32.f32 {d}, {a};", F, &[F], &[(&[f(1.1)], f(2.0))]);
    check(
        "cvt.sat.f32.f32 {d}, {a};",
        F,
        &[F],
        &[(&[f(1.5)], f(1.0)), (&[f(f32::NAN)], 0)],
    );
    check("cvt.ftz.f32.f32 {d}, {a};", F, &[F], &[(&[f(SUB32)], 0)]);
    check(
        "cvt.rn.f16.f32 {d}, {a};",
        H,
        &[F],
        &[
            (&[f(1.0)], 0x3c00),
            (&[f(65520.0)], 0x7c00),
            (&[f(f32::NAN)], 0x7fff),
            (&[f(1e-8)], 0),
        ],
    );
    check(
        "cvt.rz.f16.f32 {d}, {a};",
        H,
        &[F],
        &[(&[f(65520.0)], 0x7bff)],
    );
    check("cvt.rn.relu.f16.f32 {d}, {a};", H, &[F], &[(&[f(-1.0)], 0)]);
    check(
        "cvt.rn.bf16.f32 {d}, {a};",
        H,
        &[F],
        &[
            (&[f(1.0)], 0x3f80),
            (&[0x3f80_8000], 0x3f80),
            (&[0x3f81_8000], 0x3f82),
        ],
    );
    check(
        "cvt.f32.f16 {d}, {a};",
        F,
        &[H],
        &[(&[0x3c00], f(1.0)), (&[0x0001], f(2f32.powi(-24)))],
    );
    check("cvt.f32.bf16 {d}, {a};", F, &[H], &[(&[0xbf80], f(-1.0))]);
    check("cvt.f64.f16 {d}, {a};", Fd, &[H], &[(&[0x4000], fd(2.0))]);
    check(
        "cvt.rn.f16x2.f32 {d}, {a}, {b};",
        W,
        &[F, F],
        &[(&[f(1.0), f(2.0)], 0x3c00_4000)],
    );
    check(
        "cvt.rn.relu.bf16x2.f32 {d}, {a}, {b};",
        W,
        &[F, F],
        &[(&[f(-1.0), f(2.0)], 0x0000_4000)],
    );
    check(
        "cvt.rna.tf32.f32 {d}, {a};",
        W,
        &[F],
        &[(&[0x3f80_1000], 0x3f80_2000), (&[0x3f80_0fff], 0x3f80_0000)],
    );
}

// =======================================================================================
// Errors and bookkeeping

/// Forms the vgpu does not execute must fail at load time with a message naming the
/// instruction, never run with wrong results.
#[test]
fn unsupported_forms_are_load_errors() {
    for (inst, why) in [
        ("vmad.s32.s32.s32 %r0, %r1, %r2, %r3;", "vmad"),
        ("fma.rz.f16 %h0, %h1, %h2, %h3;", "rn"),
        ("div.f32 %f0, %f1, %f2;", "div.f32"),
        ("mul.u32 %r0, %r1, %r2;", "mode"),
        ("add.sat.s16 %h0, %h1, %h2;", ".sat"),
        ("cvt.rs.f16x2.f32 %r0, %f1, %f2;", "rounding"),
        ("cvt.rn.e4m3x2.f32 %h0, %f1, %f2;", "satfinite"),
        ("vadd2.u32.u32.u32 %r0, %r1.h10, %r2, %r3;", "selector"),
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .b16 %h<4>;\n .reg .b32 %r<4>;\n .reg .f32 %f<4>;\n {inst}\n ret;\n}}\n"
        );
        let m = fencehound_ptx::parse("bad.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
        let err = Device::new().load_module(&m).expect_err(inst).to_string();
        assert!(err.contains("unsupported"), "{inst}: {err}");
        assert!(err.contains(why), "{inst}: {err}");
        assert!(
            err.contains("bad.ptx") || err.contains("line"),
            "{inst}: {err}"
        );
    }
}

/// `cvt` to and from the 8-bit float pairs (PTX ISA §9.7.9.21): `a` in the upper byte,
/// `b` in the lower; round to nearest even; `.satfinite` (mandatory) keeps NaN (`0x7f`)
/// and clamps magnitudes beyond the largest finite value (`.e4m3` 448 = `0x7e`, `.e5m2`
/// 57344 = `0x7b`). Values worked out by hand from the formats' bit layouts.
#[test]
fn cvt_fp8_pairs() {
    use R::*;
    let p2 = |e: i32| 2f32.powi(e);
    check(
        "cvt.rn.satfinite.e4m3x2.f32 {d}, {a}, {b};",
        H,
        &[F, F],
        &[
            (&[f(1.0), f(-2.0)], 0x38c0),
            (&[f(448.0), f(500.0)], 0x7e7e),
            (&[f(1e9), f(f32::NEG_INFINITY)], 0x7efe),
            (&[f(f32::NAN), f(0.0)], 0x7f00),
            // ties to even: 1 + 1/16 → 1.0, 1 + 3/16 → 1.25
            (&[f(1.0625), f(1.1875)], 0x383a),
            // subnormals: 2^-9 is the smallest; 2^-10 ties to 0; 3·2^-10 ties to 2·2^-9
            (&[f(p2(-9)), f(p2(-10))], 0x0100),
            (&[f(p2(-6)), f(3.0 * p2(-10))], 0x0802),
        ],
    );
    check(
        "cvt.rn.satfinite.e5m2x2.f32 {d}, {a}, {b};",
        H,
        &[F, F],
        &[
            (&[f(1.0), f(-2.0)], 0x3cc0),
            (&[f(57344.0), f(60000.0)], 0x7b7b),
            (&[f(f32::INFINITY), f(f32::NAN)], 0x7b7f),
            (&[f(1.125), f(1.375)], 0x3c3e),
        ],
    );
    check(
        "cvt.rn.satfinite.relu.e4m3x2.f32 {d}, {a}, {b};",
        H,
        &[F, F],
        &[
            (&[f(-1.0), f(f32::NAN)], 0x007f),
            (&[f(2.0), f(-0.0)], 0x4000),
        ],
    );
    check(
        "cvt.rn.satfinite.e4m3x2.f16x2 {d}, {a};",
        H,
        &[W],
        &[(&[0x3c00_c000], 0x38c0), (&[0x7c00_7e00], 0x7e7f)],
    );
    check(
        "cvt.rn.f16x2.e4m3x2 {d}, {a};",
        W,
        &[H],
        &[
            (&[0x38c0], 0x3c00_c000),
            (&[0x7f01], 0x7fff_1800),
            (&[0x7e08], 0x5f00_2400),
        ],
    );
    check(
        "cvt.rn.f16x2.e5m2x2 {d}, {a};",
        W,
        &[H],
        &[(&[0x3cc0], 0x3c00_c000), (&[0x7f7b], 0x7f00_7b00)],
    );
    check(
        "cvt.rn.relu.f16x2.e4m3x2 {d}, {a};",
        W,
        &[H],
        &[(&[0xc07f], 0x0000_7fff)],
    );
}

/// `cvt.pack.sat` (PTX ISA §9.7.9.22): `b` clamped into the low field, `a` above it, and
/// with a third operand the remaining bits from the low bits of `c`.
#[test]
fn cvt_pack_integers() {
    use R::*;
    check(
        "cvt.pack.sat.u16.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[70000, s32(-5)], 0xffff_0000), (&[5, 300], 0x0005_012c)],
    );
    check(
        "cvt.pack.sat.s16.s32 {d}, {a}, {b};",
        W,
        &[W, W],
        &[(&[s32(-40000), 100], 0x8000_0064)],
    );
    check(
        "cvt.pack.sat.s8.s32.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[200, s32(-200), 0x1234], 0x1234_7f80)],
    );
    check(
        "cvt.pack.sat.u4.s32.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[20, 3, 0x00ab_cdef], 0xabcd_eff3)],
    );
    check(
        "cvt.pack.sat.s2.s32.b32 {d}, {a}, {b}, {c};",
        W,
        &[W, W, W],
        &[(&[s32(-5), 1, 0xffff_ffff], 0xffff_fff9)],
    );
}

/// `.satfinite` on `.f16`/`.bf16` destinations: NaN stays NaN, anything beyond the
/// largest finite value becomes it, signed; and the `.rz` packed forms.
#[test]
fn cvt_satfinite_half_destinations() {
    use R::*;
    check(
        "cvt.rn.satfinite.f16.f32 {d}, {a};",
        H,
        &[F],
        &[
            (&[f(1e6)], 0x7bff),
            (&[f(f32::NEG_INFINITY)], 0xfbff),
            (&[f(f32::NAN)], 0x7fff),
            (&[f(1.0)], 0x3c00),
        ],
    );
    check(
        "cvt.rz.satfinite.f16x2.f32 {d}, {a}, {b};",
        W,
        &[F, F],
        &[(&[f(70000.0), f(3.0)], 0x7bff_4200)],
    );
    check(
        "cvt.rz.f16x2.f32 {d}, {a}, {b};",
        W,
        &[F, F],
        &[(&[f(1e6), f(-1e6)], 0x7bff_fbff)],
    );
    check(
        "cvt.rn.satfinite.bf16x2.f32 {d}, {a}, {b};",
        W,
        &[F, F],
        &[(&[f(f32::MAX), f(1.0)], 0x7f7f_3f80)],
    );
}

/// Scalar video instructions (PTX ISA §9.7.18.1): byte/half selectors extend per the
/// operand type, the intermediate is saturated to the destination (sub)type, then a
/// secondary operation or a merge into `c` at the destination selector.
#[test]
fn scalar_video_instructions() {
    use R::*;
    let w3 = &[W, W, W];
    let w2 = &[W, W];
    check(
        "vadd.s32.s32.s32.sat {d}, {a}, {b};",
        W,
        w2,
        &[(&[0x7fff_ffff, 1], 0x7fff_ffff)],
    );
    check(
        "vadd.s32.s32.s32 {d}, {a}, {b};",
        W,
        w2,
        &[(&[0x7fff_ffff, 1], 0x8000_0000)],
    );
    check(
        "vadd.u32.u32.u32 {d}, {a}.b1, {b}.h0;",
        W,
        w2,
        &[(&[0xff00, 0x0001_0002], 0x101)],
    );
    check(
        "vadd.s32.s32.s32 {d}, {a}.b1, {b};",
        W,
        w2,
        &[(&[0xff00, 5], 4)],
    );
    check(
        "vsub.u32.u32.u32.sat {d}, {a}, {b};",
        W,
        w2,
        &[(&[3, 5], 0)],
    );
    check(
        "vabsdiff.s32.s32.s32 {d}, {a}, {b};",
        W,
        w2,
        &[(&[3, s32(-7)], 10)],
    );
    check(
        "vmin.s32.s32.s32.add {d}, {a}, {b}, {c};",
        W,
        w3,
        &[(&[3, s32(-7), 100], 93)],
    );
    check(
        "vmax.u32.u32.u32.max {d}, {a}, {b}, {c};",
        W,
        w3,
        &[(&[3, 7, 20], 20)],
    );
    check(
        "vshr.u32.u32.u32.clamp {d}, {a}, {b};",
        W,
        w2,
        &[(&[0x8000_0000, 31], 1), (&[0x8000_0000, 40], 0)],
    );
    check(
        "vshr.s32.s32.u32.clamp {d}, {a}, {b};",
        W,
        w2,
        &[(&[0x8000_0000, 40], 0xffff_ffff)],
    );
    check(
        "vshr.u32.u32.u32.wrap {d}, {a}, {b};",
        W,
        w2,
        &[(&[0x8000_0000, 33], 0x4000_0000)],
    );
    check(
        "vshl.u32.u32.u32.wrap {d}, {a}, {b};",
        W,
        w2,
        &[(&[3, 33], 6)],
    );
    check(
        "vshl.u32.u32.u32.clamp.sat {d}, {a}, {b};",
        W,
        w2,
        &[(&[3, 31], 0xffff_ffff)],
    );
    check(
        "vadd.u32.u32.u32.sat {d}.b1, {a}, {b}, {c};",
        W,
        w3,
        &[(&[200, 100, 0x1122_3344], 0x1122_ff44)],
    );
    check(
        "vset.u32.u32.lt {d}, {a}, {b};",
        W,
        w2,
        &[(&[3, 5], 1), (&[5, 3], 0)],
    );
    check(
        "vset.s32.u32.lt {d}, {a}, {b};",
        W,
        w2,
        &[(&[0xffff_ffff, 5], 1)],
    );
    check(
        "vset.u32.u32.ne.add {d}, {a}, {b}, {c};",
        W,
        w3,
        &[(&[3, 5, 10], 11)],
    );
    check(
        "vset.u32.u32.eq {d}.h1, {a}, {b}, {c};",
        W,
        w3,
        &[(&[7, 7, 0xaaaa_bbbb], 0x0001_bbbb)],
    );
}

#[test]
fn alu_inst_size_is_pinned() {
    assert_eq!(std::mem::size_of::<fencehound_vgpu::alu::AluInst>(), 56);
}

// =======================================================================================
// The corpus: NVRTC's own code (libdevice math, 128-bit carries, SIMD intrinsics) run on
// the vgpu and checked against the host.

/// No corpus kernel may fail to load because of an ALU instruction (other reasons, such as
/// function pointers, belong to other parts of the loader).
#[test]
fn corpus_kernels_have_no_unsupported_alu_instruction() {
    const ALU: &[&str] = &[
        "abs",
        "add",
        "addc",
        "and",
        "bfe",
        "bfi",
        "bfind",
        "bmsk",
        "brev",
        "clz",
        "cnot",
        "copysign",
        "cos",
        "cvt",
        "div",
        "dp2a",
        "dp4a",
        "ex2",
        "fma",
        "fns",
        "lg2",
        "lop3",
        "mad",
        "mad24",
        "madc",
        "max",
        "min",
        "mul",
        "mul24",
        "neg",
        "not",
        "or",
        "popc",
        "prmt",
        "rcp",
        "rem",
        "rsqrt",
        "sad",
        "selp",
        "set",
        "setp",
        "shf",
        "shl",
        "shr",
        "sin",
        "slct",
        "sqrt",
        "sub",
        "subc",
        "tanh",
        "testp",
        "xor",
        "vabsdiff4",
        "vadd4",
        "vsub4",
        "vabsdiff2",
        "vadd2",
        "vsub2",
        "vmin4",
        "vmax4",
        "vmin2",
        "vmax2",
        "vavrg4",
        "vavrg2",
        "vset4",
        "vset2",
    ];
    let mut bad = Vec::new();
    for stem in corpus_stems() {
        let h = header(&stem);
        let extra = fencehound_toolchain::expand_nvrtc_flags(&h.flags)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        let ptx = nvrtc(&h.source, &format!("{stem}.cu"), &[], &extra);
        if let Err(e) = load(&mut Device::new(), &stem, &ptx) {
            let inst = e.split('`').nth(1).unwrap_or("");
            let opcode = inst
                .split(|c: char| c == '.' || c.is_whitespace())
                .next()
                .unwrap_or("");
            if ALU.contains(&opcode) {
                bad.push(format!("{stem}: {e}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn corpus_u128_carry_chains_match_the_host() {
    let r = Corpus::new("int_u128_carry").run();
    r.assert_completed();
    let a = r.input("a").values::<u64>().expect("u64");
    let b = r.input("b").values::<u64>().expect("u64");
    let o = r.out("out").values::<u64>().expect("u64");
    for i in 0..32 {
        let x = (a[2 * i + 1] as u128) << 64 | a[2 * i] as u128;
        let y = (b[2 * i + 1] as u128) << 64 | b[2 * i] as u128;
        let p = x.wrapping_mul(b[2 * i] as u128);
        let s = x.wrapping_add(y);
        let want = [p, p, s].map(|v| [v as u64, (v >> 64) as u64]).concat();
        assert_eq!(o[6 * i..6 * i + 6], want[..], "thread {i}");
    }
}

#[test]
fn corpus_simd_video_intrinsics_match_the_host() {
    let r = Corpus::new("int_simd_video").run();
    r.assert_completed();
    let (a, b, c) = (r.in_u32s("a"), r.in_u32s("b"), r.in_u32s("c"));
    let o = r.u32s("out");
    let bytes = |v: u32| v.to_le_bytes();
    for i in 0..64 {
        let (x, y) = (bytes(a[i]), bytes(b[i]));
        let per_byte = |f: &dyn Fn(u8, u8) -> u8| {
            u32::from_le_bytes([f(x[0], y[0]), f(x[1], y[1]), f(x[2], y[2]), f(x[3], y[3])])
        };
        assert_eq!(
            o[10 * i],
            per_byte(&|p, q| p.wrapping_add(q)),
            "__vadd4 {i}"
        );
        assert_eq!(
            o[10 * i + 2],
            per_byte(&|p, q| p.abs_diff(q)),
            "__vabsdiffu4 {i}"
        );
        let sad = c[i].wrapping_add((a[i] as i32).abs_diff(b[i] as i32));
        assert_eq!(o[10 * i + 6], sad, "__sad {i}");
        assert_eq!(
            o[10 * i + 7],
            c[i].wrapping_add(a[i].abs_diff(b[i])),
            "__usad {i}"
        );
        let dp = (0..4).fold(c[i] as i32, |s, k| {
            s.wrapping_add(x[k] as i8 as i32 * y[k] as i8 as i32)
        });
        assert_eq!(o[10 * i + 8], dp as u32, "__dp4a {i}");
    }
}

/// libdevice's `sinf`, `cosf`, `tanf`, `expf`, `logf`, `powf`, `tanhf` and `atan2f` are
/// long integer/float code paths (Payne-Hanek reduction for 1e30); run on the vgpu they
/// must agree with the host's libm to within libdevice's documented few ulps.
#[test]
fn corpus_precise_f32_math_matches_host_libm() {
    let r = Corpus::new("math_precise_f32").run();
    r.assert_completed();
    let (a, b) = (r.in_f32s("a"), r.in_f32s("b"));
    let o = r.f32s("out");
    let ulps = |got: f32, want: f64| -> f64 {
        let w = want as f32;
        if got == w || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        (got as f64 - want).abs()
            / (w.abs() as f64 * f32::EPSILON as f64).max(f32::MIN_POSITIVE as f64)
    };
    for i in 0..32 {
        let x = if i == 0 { 1.0e30f32 } else { a[i] };
        let y = b[i];
        let (xd, yd) = (x as f64, y as f64);
        let want = [
            xd.sin(),
            xd.cos(),
            ((x * 1.0e-3) as f64).tan(),
            ((y * 0.5 - 20.0) as f64).exp(),
            yd.ln(),
            yd.powf((x * 1.0e-4) as f64),
            ((x * 1.0e-3) as f64).tanh(),
            xd.atan2(yd),
        ];
        for (k, w) in want.iter().enumerate() {
            let u = ulps(o[10 * i + k], *w);
            assert!(
                u <= 4.0,
                "thread {i} result {k}: {} vs host {w} ({u:.2} ulp)",
                o[10 * i + k]
            );
        }
    }
}
