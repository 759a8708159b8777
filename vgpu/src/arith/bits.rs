//! Bit manipulation, logic and shifts: PTX ISA §9.7.1 (`popc`, `clz`, `bfind`, `brev`,
//! `bfe`, `bfi`), §9.7.8 ("Logic and Shift Instructions": `and`, `or`, `xor`, `not`,
//! `cnot`, `lop3`, `shf`, `shl`, `shr`) and §9.7.9.7 `prmt`.
//!
//! Everything here is fully specified by the ISA; the points worth knowing:
//! - `shl`/`shr` take an unsigned 32-bit shift amount; amounts ≥ the width give 0 for
//!   `shl`/`shr.u` and sign fill for `shr.s` (not Rust's masked shift).
//! - `bfe`/`bfi` use only the low 8 bits of position and length (0..255).
//! - `bfind` returns `0xffffffff` when no bit is found, also with `.shiftamt`.
//! - `shf.wrap` uses the amount mod 32, `shf.clamp` clamps it to 32.

/// `popc.b32`
#[inline]
pub fn popc_b32(x: u32) -> u32 {
    x.count_ones()
}

/// `popc.b64` (the result is `.u32`).
#[inline]
pub fn popc_b64(x: u64) -> u32 {
    x.count_ones()
}

/// `clz.b32`
#[inline]
pub fn clz_b32(x: u32) -> u32 {
    x.leading_zeros()
}

/// `clz.b64` (the result is `.u32`).
#[inline]
pub fn clz_b64(x: u64) -> u32 {
    x.leading_zeros()
}

/// `brev.b32`
#[inline]
pub fn brev_b32(x: u32) -> u32 {
    x.reverse_bits()
}

/// `brev.b64`
#[inline]
pub fn brev_b64(x: u64) -> u64 {
    x.reverse_bits()
}

#[inline]
fn bfind_bits(x: u64, width: u32, shiftamt: bool) -> u32 {
    if x == 0 {
        return u32::MAX;
    }
    let pos = 63 - x.leading_zeros();
    if shiftamt {
        width - 1 - pos
    } else {
        pos
    }
}

/// `bfind{.shiftamt}.u32`: position of the most significant set bit.
#[inline]
pub fn bfind_u32(x: u32, shiftamt: bool) -> u32 {
    bfind_bits(x as u64, 32, shiftamt)
}

/// `bfind{.shiftamt}.s32`: position of the most significant bit that differs from the
/// sign bit (for negative inputs, the most significant clear bit).
#[inline]
pub fn bfind_s32(x: i32, shiftamt: bool) -> u32 {
    let v = if x < 0 { !x } else { x };
    bfind_bits(v as u32 as u64, 32, shiftamt)
}

/// `bfind{.shiftamt}.u64` (the result is `.u32`).
#[inline]
pub fn bfind_u64(x: u64, shiftamt: bool) -> u32 {
    bfind_bits(x, 64, shiftamt)
}

/// `bfind{.shiftamt}.s64`
#[inline]
pub fn bfind_s64(x: i64, shiftamt: bool) -> u32 {
    let v = if x < 0 { !x } else { x };
    bfind_bits(v as u64, 64, shiftamt)
}

#[inline]
fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Shared `bfe` body on a `width`-bit value held in a `u64`.
#[inline]
fn bfe_bits(a: u64, pos: u32, len: u32, width: u32, signed: bool) -> u64 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let msb = width - 1;
    let width_mask = low_mask(width);
    let sbit = signed && len != 0 && (a >> (pos + len - 1).min(msb)) & 1 != 0;
    let n = if pos > msb { 0 } else { len.min(width - pos) };
    let field = if n == 0 { 0 } else { (a >> pos) & low_mask(n) };
    let fill = if sbit { !low_mask(n) } else { 0 };
    (field | fill) & width_mask
}

/// `bfe.u32 d, a, pos, len`
#[inline]
pub fn bfe_u32(a: u32, pos: u32, len: u32) -> u32 {
    bfe_bits(a as u64, pos, len, 32, false) as u32
}

/// `bfe.s32 d, a, pos, len`: the field is sign-extended from its top bit (or from bit 31
/// if the field runs past it).
#[inline]
pub fn bfe_s32(a: i32, pos: u32, len: u32) -> i32 {
    bfe_bits(a as u32 as u64, pos, len, 32, true) as u32 as i32
}

/// `bfe.u64`
#[inline]
pub fn bfe_u64(a: u64, pos: u32, len: u32) -> u64 {
    bfe_bits(a, pos, len, 64, false)
}

/// `bfe.s64`
#[inline]
pub fn bfe_s64(a: i64, pos: u32, len: u32) -> i64 {
    bfe_bits(a as u64, pos, len, 64, true) as i64
}

#[inline]
fn bfi_bits(a: u64, b: u64, pos: u32, len: u32, width: u32) -> u64 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    if pos >= width {
        return b;
    }
    let n = len.min(width - pos);
    let mask = (low_mask(n) << pos) & low_mask(width);
    (b & !mask) | ((a << pos) & mask)
}

/// `bfi.b32 f, a, b, pos, len`: `b` with `len` low bits of `a` inserted at `pos`.
#[inline]
pub fn bfi_b32(a: u32, b: u32, pos: u32, len: u32) -> u32 {
    bfi_bits(a as u64, b as u64, pos, len, 32) as u32
}

/// `bfi.b64`
#[inline]
pub fn bfi_b64(a: u64, b: u64, pos: u32, len: u32) -> u64 {
    bfi_bits(a, b, pos, len, 64)
}

/// The mode of `prmt.b32{.mode}`; `Default` is the general byte permute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PrmtMode {
    #[default]
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// Source byte of `d.b0..d.b3` for each special mode and selector `c[1:0]` (PTX ISA
/// §9.7.9.7 table, read from `d.b0` up).
const PRMT_TABLE: [[[u8; 4]; 4]; 6] = [
    // f4e: forward 4 extract
    [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    // b4e: backward 4 extract
    [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    // rc8: replicate 8
    [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    // ecl: edge clamp left
    [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    // ecr: edge clamp right
    [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    // rc16: replicate 16
    [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
];

/// `prmt.b32{.mode} d, a, b, c`: picks bytes of the 8-byte value `{b, a}` (`a` is bytes
/// 0–3). In the default mode each nibble of `c[15:0]` selects one byte; a selector with
/// bit 3 set replicates the sign (bit 7) of the selected byte instead.
#[inline]
pub fn prmt(a: u32, b: u32, c: u32, mode: PrmtMode) -> u32 {
    let src = (b as u64) << 32 | a as u64;
    let byte = |i: u32| ((src >> (8 * (i & 7))) & 0xff) as u32;
    let mut d = 0;
    if mode == PrmtMode::Default {
        for i in 0..4 {
            let sel = (c >> (4 * i)) & 0xf;
            let mut v = byte(sel);
            if sel & 8 != 0 {
                v = if v & 0x80 != 0 { 0xff } else { 0 };
            }
            d |= v << (8 * i);
        }
    } else {
        let row = &PRMT_TABLE[mode as usize - 1][(c & 3) as usize];
        for (i, &s) in row.iter().enumerate() {
            d |= byte(s as u32) << (8 * i);
        }
    }
    d
}

/// `shf.l{.wrap,.clamp}.b32 d, a, b, c`: the upper 32 bits of `{b, a} << n`.
#[inline]
pub fn shf_l(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 31 };
    let v = (b as u64) << 32 | a as u64;
    ((v << n) >> 32) as u32
}

/// `shf.r{.wrap,.clamp}.b32 d, a, b, c`: the lower 32 bits of `{b, a} >> n`.
#[inline]
pub fn shf_r(a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 31 };
    let v = (b as u64) << 32 | a as u64;
    (v >> n) as u32
}

macro_rules! shifts {
    ($($u:ty, $s:ty => $shl:ident, $shr_u:ident, $shr_s:ident;)*) => {$(
        #[doc = concat!("`shl` on ", stringify!($u), ": amounts ≥ width give 0")]
        #[inline]
        pub fn $shl(a: $u, n: u32) -> $u {
            a.checked_shl(n).unwrap_or(0)
        }
        #[doc = concat!("`shr.u` on ", stringify!($u), ": amounts ≥ width give 0")]
        #[inline]
        pub fn $shr_u(a: $u, n: u32) -> $u {
            a.checked_shr(n).unwrap_or(0)
        }
        #[doc = concat!("`shr.s` on ", stringify!($s), ": amounts ≥ width fill with the sign")]
        #[inline]
        pub fn $shr_s(a: $s, n: u32) -> $s {
            a >> n.min(<$s>::BITS - 1)
        }
    )*};
}

shifts! {
    u16, i16 => shl_b16, shr_u16, shr_s16;
    u32, i32 => shl_b32, shr_u32, shr_s32;
    u64, i64 => shl_b64, shr_u64, shr_s64;
}

/// `lop3.b32 d, a, b, c, immLut`: bit i of `d` is bit `(a_i << 2 | b_i << 1 | c_i)` of
/// `immLut` (so `0xF0` is `a`, `0xCC` is `b`, `0xAA` is `c`).
#[inline]
pub fn lop3_b32(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    lop3_b64(a as u64, b as u64, c as u64, lut) as u32
}

/// `lop3` on 64 bits (two `.b32` halves give the same bits).
#[inline]
pub fn lop3_b64(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut d = 0;
    for i in 0..8 {
        if (lut >> i) & 1 != 0 {
            let ta = if i & 4 != 0 { a } else { !a };
            let tb = if i & 2 != 0 { b } else { !b };
            let tc = if i & 1 != 0 { c } else { !c };
            d |= ta & tb & tc;
        }
    }
    d
}

/// `and.bN` on any width held in a `u64` (also `and.pred` on `0`/`1`).
#[inline]
pub fn and_b(a: u64, b: u64) -> u64 {
    a & b
}

/// `or.bN`
#[inline]
pub fn or_b(a: u64, b: u64) -> u64 {
    a | b
}

/// `xor.bN`
#[inline]
pub fn xor_b(a: u64, b: u64) -> u64 {
    a ^ b
}

/// `not.bN`; callers keep only the low N bits.
#[inline]
pub fn not_b(a: u64) -> u64 {
    !a
}

/// `cnot.b16`: 1 if `a` is zero, else 0.
#[inline]
pub fn cnot_b16(a: u16) -> u16 {
    (a == 0) as u16
}

/// `cnot.b32`
#[inline]
pub fn cnot_b32(a: u32) -> u32 {
    (a == 0) as u32
}

/// `cnot.b64`
#[inline]
pub fn cnot_b64(a: u64) -> u64 {
    (a == 0) as u64
}
