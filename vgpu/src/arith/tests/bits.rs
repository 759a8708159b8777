//! Bit, logic, shift and permute conformance tables.

use proptest::prelude::*;

use crate::arith::bits::*;

#[test]
fn popc_clz_brev() {
    assert_eq!(popc_b32(0), 0);
    assert_eq!(popc_b32(u32::MAX), 32);
    assert_eq!(popc_b64(u64::MAX), 64);
    assert_eq!(popc_b64(0x8000_0000_0000_0001), 2);
    assert_eq!(clz_b32(0), 32);
    assert_eq!(clz_b32(1), 31);
    assert_eq!(clz_b32(0x8000_0000), 0);
    assert_eq!(clz_b64(0), 64);
    assert_eq!(clz_b64(1 << 40), 23);
    assert_eq!(brev_b32(1), 0x8000_0000);
    assert_eq!(brev_b32(0x0000_00f0), 0x0f00_0000);
    assert_eq!(brev_b64(1), 1 << 63);
}

#[test]
fn bfind_forms() {
    assert_eq!(bfind_u32(0, false), u32::MAX);
    assert_eq!(bfind_u32(0, true), u32::MAX);
    assert_eq!(bfind_u32(1, false), 0);
    assert_eq!(bfind_u32(1, true), 31);
    assert_eq!(bfind_u32(0x8000_0000, false), 31);
    assert_eq!(bfind_u32(0x8000_0000, true), 0);
    assert_eq!(bfind_s32(-1, false), u32::MAX);
    assert_eq!(bfind_s32(0, false), u32::MAX);
    assert_eq!(bfind_s32(-2, false), 0);
    assert_eq!(bfind_s32(i32::MIN, false), 30);
    assert_eq!(bfind_s32(i32::MAX, false), 30);
    assert_eq!(bfind_s32(i32::MAX, true), 1);
    assert_eq!(bfind_u64(1 << 63, false), 63);
    assert_eq!(bfind_u64(1 << 63, true), 0);
    assert_eq!(bfind_u64(0, true), u32::MAX);
    assert_eq!(bfind_s64(-1, false), u32::MAX);
    assert_eq!(bfind_s64(i64::MIN, false), 62);
    assert_eq!(bfind_s64(5, true), 61);
}

#[test]
fn bfe_table() {
    let a = 0xf0f0_1234u32;
    // (pos, len, u32 result, s32 result)
    let cases: [(u32, u32, u32, i32); 12] = [
        (0, 8, 0x34, 0x34),
        (4, 8, 0x23, 0x23),
        (28, 4, 0xf, -1),
        (28, 8, 0xf, -1), // runs past msb: sign bit = a[31]
        (24, 4, 0x0, 0),
        (0, 0, 0, 0),   // len 0 → 0
        (32, 8, 0, -1), // pos beyond msb: fill with a[31]
        (200, 8, 0, -1),
        (0, 32, a, a as i32),
        (0, 255, a, a as i32),
        (0x100 | 4, 0x100 | 8, 0x23, 0x23), // only the low 8 bits of pos/len count
        (12, 1, 0x1, -1),
    ];
    for (pos, len, u, s) in cases {
        assert_eq!(bfe_u32(a, pos, len), u, "u pos {pos} len {len}");
        assert_eq!(bfe_s32(a as i32, pos, len), s, "s pos {pos} len {len}");
    }
    assert_eq!(bfe_s32(0x7fff_ffff, 40, 3), 0);
    assert_eq!(bfe_u64(u64::MAX, 60, 10), 0xf);
    assert_eq!(bfe_s64(i64::MIN, 60, 10), -8);
    assert_eq!(bfe_s64(0x0000_0000_8000_0000, 31, 1), -1);
    assert_eq!(bfe_s64(0x0000_0000_8000_0000, 31, 2), 1);
    assert_eq!(bfe_u64(0x1234, 64, 4), 0);
    assert_eq!(bfe_s64(-1, 64, 0), 0);
}

#[test]
fn bfi_table() {
    assert_eq!(bfi_b32(0xff, 0, 8, 4), 0xf00);
    assert_eq!(bfi_b32(0xff, 0xffff_ffff, 8, 0), 0xffff_ffff);
    assert_eq!(bfi_b32(0xff, 0x1234_5678, 32, 8), 0x1234_5678);
    assert_eq!(bfi_b32(0xffff_ffff, 0, 28, 8), 0xf000_0000);
    assert_eq!(bfi_b32(0xabcd, 0x1111_1111, 0, 255), 0xabcd);
    assert_eq!(bfi_b32(1, 0, 0x100 | 31, 1), 0x8000_0000);
    assert_eq!(bfi_b64(0xf, 0, 62, 4), 0xc000_0000_0000_0000);
    assert_eq!(bfi_b64(0xf, 5, 64, 4), 5);
}

#[test]
fn prmt_default_mode() {
    let a = 0x4433_2211;
    let b = 0x8877_6655;
    assert_eq!(prmt(a, b, 0x3210, PrmtMode::Default), a);
    assert_eq!(prmt(a, b, 0x7654, PrmtMode::Default), b);
    assert_eq!(prmt(a, b, 0x0123, PrmtMode::Default), 0x1122_3344);
    assert_eq!(prmt(a, b, 0x4444, PrmtMode::Default), 0x5555_5555);
    // Sign replication: byte 7 is 0x88 (msb set) → 0xff; byte 0 0x11 → 0x00.
    assert_eq!(prmt(a, b, 0xf8f0, PrmtMode::Default), 0xff00_ff11);
    assert_eq!(prmt(a, b, 0x8fff, PrmtMode::Default), 0x00ff_ffff);
    // Upper bits of c are ignored in the default mode.
    assert_eq!(prmt(a, b, 0xffff_3210, PrmtMode::Default), a);
}

#[test]
fn prmt_special_modes() {
    let a = 0x4433_2211; // bytes 0..3 = 11 22 33 44
    let b = 0x8877_6655; // bytes 4..7 = 55 66 77 88
    use PrmtMode::*;
    let table = [
        (F4e, [0x4433_2211, 0x5544_3322, 0x6655_4433, 0x7766_5544]),
        (B4e, [0x6677_8811, 0x7788_1122, 0x8811_2233, 0x1122_3344]),
        (Rc8, [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]),
        (Ecl, [0x4433_2211, 0x4433_2222, 0x4433_3333, 0x4444_4444]),
        (Ecr, [0x1111_1111, 0x2222_2211, 0x3333_2211, 0x4433_2211]),
        (Rc16, [0x2211_2211, 0x4433_4433, 0x2211_2211, 0x4433_4433]),
    ];
    for (mode, want) in table {
        for (sel, w) in want.iter().enumerate() {
            // Only c[1:0] selects in the special modes.
            let c = sel as u32 | 0xfff0;
            assert_eq!(prmt(a, b, c, mode), *w, "{mode:?} {sel}");
        }
    }
}

#[test]
fn shf_wrap_clamp() {
    let (a, b) = (0x8765_4321u32, 0x1234_5678u32);
    assert_eq!(shf_l(a, b, 0, false), b);
    assert_eq!(shf_l(a, b, 4, false), 0x2345_6788);
    assert_eq!(shf_l(a, b, 36, false), 0x2345_6788); // wrap: 36 & 31 = 4
    assert_eq!(shf_l(a, b, 36, true), a); // clamp: 32 → all of a
    assert_eq!(shf_l(a, b, 32, true), a);
    assert_eq!(shf_r(a, b, 4, false), 0x8876_5432);
    assert_eq!(shf_r(a, b, 36, false), 0x8876_5432);
    assert_eq!(shf_r(a, b, 36, true), b);
    assert_eq!(shf_r(a, b, u32::MAX, true), b);
    assert_eq!(shf_r(a, b, 0, true), a);
}

#[test]
fn shifts_clamp_at_width() {
    assert_eq!(shl_b32(1, 31), 0x8000_0000);
    assert_eq!(shl_b32(1, 32), 0);
    assert_eq!(shl_b32(1, u32::MAX), 0);
    assert_eq!(shl_b16(1, 16), 0);
    assert_eq!(shl_b16(3, 15), 0x8000);
    assert_eq!(shl_b64(1, 63), 1 << 63);
    assert_eq!(shl_b64(1, 64), 0);
    assert_eq!(shr_u32(0x8000_0000, 31), 1);
    assert_eq!(shr_u32(0x8000_0000, 32), 0);
    assert_eq!(shr_u16(0x8000, 100), 0);
    assert_eq!(shr_u64(u64::MAX, 64), 0);
    assert_eq!(shr_s32(i32::MIN, 31), -1);
    assert_eq!(shr_s32(i32::MIN, 32), -1);
    assert_eq!(shr_s32(i32::MIN, 1000), -1);
    assert_eq!(shr_s32(i32::MAX, 1000), 0);
    assert_eq!(shr_s16(-4, 1), -2);
    assert_eq!(shr_s16(-4, 16), -1);
    assert_eq!(shr_s64(i64::MIN, 64), -1);
    assert_eq!(shr_s64(64, 3), 8);
}

#[test]
fn logic_ops() {
    let (a, b, c) = (0xf0f0_f0f0u32, 0xcccc_ccccu32, 0xaaaa_aaaau32);
    assert_eq!(lop3_b32(a, b, c, 0xf0), a);
    assert_eq!(lop3_b32(a, b, c, 0xcc), b);
    assert_eq!(lop3_b32(a, b, c, 0xaa), c);
    assert_eq!(lop3_b32(a, b, c, 0x00), 0);
    assert_eq!(lop3_b32(a, b, c, 0xff), u32::MAX);
    assert_eq!(lop3_b32(a, b, c, 0xf0 & 0xcc), a & b);
    assert_eq!(lop3_b32(a, b, c, 0xf0 ^ 0xcc ^ 0xaa), a ^ b ^ c);
    assert_eq!(lop3_b32(a, b, c, !0xf0u8), !a);
    assert_eq!(and_b(6, 3), 2);
    assert_eq!(or_b(6, 3), 7);
    assert_eq!(xor_b(6, 3), 5);
    assert_eq!(not_b(0) as u32, u32::MAX);
    assert_eq!(cnot_b32(0), 1);
    assert_eq!(cnot_b32(5), 0);
    assert_eq!(cnot_b16(0), 1);
    assert_eq!(cnot_b64(1 << 40), 0);
}

proptest! {
    #[test]
    fn prop_lop3_matches_formula(a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), lut in any::<u8>()) {
        // Bitwise evaluation of the truth table, one bit at a time.
        let mut want = 0u32;
        for i in 0..32 {
            let idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1);
            want |= (((lut >> idx) & 1) as u32) << i;
        }
        prop_assert_eq!(lop3_b32(a, b, c, lut), want);
    }

    #[test]
    fn prop_bfe_bitwise(a in any::<u32>(), pos in 0u32..300, len in 0u32..300) {
        // The ISA's per-bit loop, literally.
        let (p, l) = (pos & 0xff, len & 0xff);
        let sbit = if l == 0 { 0 } else { (a >> (p + l - 1).min(31)) & 1 };
        let mut want_s = 0u32;
        let mut want_u = 0u32;
        for i in 0..32u32 {
            let inside = i < l && p + i <= 31;
            let bit = if inside { (a >> (p + i)) & 1 } else { 0 };
            want_u |= bit << i;
            want_s |= (if inside { bit } else { sbit }) << i;
        }
        prop_assert_eq!(bfe_u32(a, pos, len), want_u);
        prop_assert_eq!(bfe_s32(a as i32, pos, len) as u32, want_s);
    }

    #[test]
    fn prop_bfi_bitwise(a in any::<u32>(), b in any::<u32>(), pos in 0u32..300, len in 0u32..300) {
        let (p, l) = (pos & 0xff, len & 0xff);
        let mut want = b;
        let mut i = 0;
        while i < l && p + i <= 31 {
            want = (want & !(1 << (p + i))) | (((a >> i) & 1) << (p + i));
            i += 1;
        }
        prop_assert_eq!(bfi_b32(a, b, pos, len), want);
    }

    #[test]
    fn prop_shf_vs_u64(a in any::<u32>(), b in any::<u32>(), n in 0u32..64) {
        let v = (b as u64) << 32 | a as u64;
        let k = n & 31;
        prop_assert_eq!(shf_l(a, b, n, false), ((v << k) >> 32) as u32);
        prop_assert_eq!(shf_r(a, b, n, false), (v >> k) as u32);
    }
}
