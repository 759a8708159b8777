//! Integer arithmetic conformance tables.

use proptest::prelude::*;

use crate::arith::int::*;
use crate::arith::CarryFlag;

#[test]
fn add_sub_sat_s32() {
    let cases = [
        (i32::MAX, 1, i32::MAX, i32::MAX - 1),
        (i32::MIN, -1, i32::MIN, i32::MIN + 1),
        (5, -7, -2, 12),
        (i32::MIN, i32::MIN, i32::MIN, 0),
    ];
    for (a, b, add, sub) in cases {
        assert_eq!(add_sat_s32(a, b), add, "{a}+{b}");
        assert_eq!(sub_sat_s32(a, b), sub, "{a}-{b}");
    }
    assert_eq!(sub_sat_s32(0, i32::MIN), i32::MAX);
}

#[test]
fn mul_hi_lo_wide() {
    assert_eq!(mul_lo_32(0x8000_0001, 2), 2);
    assert_eq!(mul_lo_16(0xffff, 0xffff), 1);
    assert_eq!(mul_lo_64(u64::MAX, u64::MAX), 1);
    assert_eq!(mul_hi_u32(0xffff_ffff, 0xffff_ffff), 0xffff_fffe);
    assert_eq!(mul_hi_s32(-1, -1), 0);
    assert_eq!(mul_hi_s32(-1, 1), -1);
    assert_eq!(mul_hi_s32(i32::MIN, i32::MIN), 0x4000_0000);
    assert_eq!(mul_hi_u16(0xffff, 0xffff), 0xfffe);
    assert_eq!(mul_hi_s16(i16::MIN, 2), -1);
    assert_eq!(mul_hi_u64(u64::MAX, u64::MAX), u64::MAX - 1);
    assert_eq!(mul_hi_s64(i64::MIN, -1), 0);
    assert_eq!(mul_hi_s64(i64::MIN, 2), -1);
    assert_eq!(mul_wide_u32(u32::MAX, u32::MAX), 0xffff_fffe_0000_0001);
    assert_eq!(mul_wide_s32(i32::MIN, i32::MIN), 1i64 << 62);
    assert_eq!(mul_wide_s32(-3, 7), -21);
    assert_eq!(mul_wide_u16(0xffff, 0xffff), 0xfffe_0001);
    assert_eq!(mul_wide_s16(-32768, 32767), -1_073_709_056);
    assert_eq!(mad_lo_32(3, 4, u32::MAX), 11);
    assert_eq!(mad_hi_u32(0xffff_ffff, 0xffff_ffff, 3), 1);
    assert_eq!(mad_hi_s16(-1, 1, 5), 4);
    assert_eq!(mad_wide_s32(-2, 3, 10), 4);
    assert_eq!(mad_wide_u32(u32::MAX, 2, u64::MAX), 0x1_ffff_fffd);
    assert_eq!(mad_hi_sat_s32(i32::MAX, i32::MAX, i32::MAX), i32::MAX);
    assert_eq!(mad_hi_sat_s32(i32::MIN, i32::MAX, i32::MIN), i32::MIN);
    assert_eq!(mad_hi_sat_s32(0x10000, 0x10000, 5), 6);
}

#[test]
fn mul24_mad24() {
    // Only the low 24 bits take part; bits 31..24 are ignored.
    assert_eq!(mul24_lo_u32(0xff00_0002, 3), 6);
    assert_eq!(mul24_lo_u32(0x00ff_ffff, 0x00ff_ffff), 0xfe00_0001);
    assert_eq!(mul24_hi_u32(0x00ff_ffff, 0x00ff_ffff), 0xffff_fe00);
    // 0x800000 as s24 is -2^23.
    assert_eq!(mul24_lo_s32(0x0080_0000, 2), -(1 << 24));
    assert_eq!(mul24_hi_s32(0x0080_0000, 0x0080_0000), 0x4000_0000); // 2^46 >> 16
    assert_eq!(mul24_hi_s32(-1, 1), -1);
    assert_eq!(mad24_lo_s32(2, 3, -6), 0);
    assert_eq!(mad24_hi_u32(0x00ff_ffff, 0x00ff_ffff, 0x200), 0);
    assert_eq!(mad24_lo_u32(2, 3, 1), 7);
    assert_eq!(mad24_hi_s32(-1, 1, 1), 0);
    assert_eq!(
        mad24_hi_sat_s32(0x0080_0000, 0x0080_0000, i32::MAX),
        i32::MAX
    );
}

#[test]
fn sad_all_widths() {
    assert_eq!(sad_u32(3, 10, 100), 107);
    assert_eq!(sad_u32(10, 3, u32::MAX), 6);
    assert_eq!(sad_s32(-5, 5, 1), 11);
    assert_eq!(sad_s32(i32::MIN, i32::MAX, 0), -1); // |diff| = 2^32-1 wraps
    assert_eq!(sad_s16(-1, 1, 0), 2);
    assert_eq!(sad_u16(0, 0xffff, 1), 0);
    assert_eq!(sad_s64(-1, i64::MAX, 0), i64::MIN);
    assert_eq!(sad_u64(1, 5, 1), 5);
}

#[test]
fn div_rem_edge_cases() {
    // Division by zero (our hardware-matching choice, see int.rs).
    assert_eq!(div_u32(7, 0), u32::MAX);
    assert_eq!(rem_u32(7, 0), 7);
    assert_eq!(div_u16(7, 0), u16::MAX);
    assert_eq!(div_u64(7, 0), u64::MAX);
    assert_eq!(div_s32(7, 0), -1);
    assert_eq!(div_s32(0, 0), -1);
    assert_eq!(div_s32(-7, 0), 1);
    assert_eq!(rem_s32(-7, 0), -7);
    assert_eq!(div_s64(i64::MIN, 0), 1);
    assert_eq!(rem_s16(5, 0), 5);
    // INT_MIN / -1.
    assert_eq!(div_s32(i32::MIN, -1), i32::MIN);
    assert_eq!(rem_s32(i32::MIN, -1), 0);
    assert_eq!(div_s16(i16::MIN, -1), i16::MIN);
    assert_eq!(div_s64(i64::MIN, -1), i64::MIN);
    assert_eq!(rem_s64(i64::MIN, -1), 0);
    // Truncation toward zero, remainder has the dividend's sign.
    assert_eq!(div_s32(-7, 2), -3);
    assert_eq!(rem_s32(-7, 2), -1);
    assert_eq!(rem_s32(7, -2), 1);
    assert_eq!(div_u32(u32::MAX, 2), 0x7fff_ffff);
    assert_eq!(rem_u64(u64::MAX, 10), 5);
}

#[test]
fn abs_neg_min_max() {
    assert_eq!(abs_s32(i32::MIN), i32::MIN);
    assert_eq!(abs_s16(-5), 5);
    assert_eq!(abs_s64(i64::MIN), i64::MIN);
    assert_eq!(neg_s32(i32::MIN), i32::MIN);
    assert_eq!(neg_s16(1), -1);
    assert_eq!(neg_s64(-3), 3);
    assert_eq!(min_relu_s32(-3, 5), 0);
    assert_eq!(max_relu_s32(-3, -5), 0);
    assert_eq!(max_relu_s32(-3, 5), 5);
    assert_eq!(min_s16x2(0x0001_fffe, 0xffff_0003, false), 0xffff_fffe);
    assert_eq!(min_s16x2(0x0001_fffe, 0xffff_0003, true), 0);
    assert_eq!(max_s16x2(0x8000_0002, 0x7fff_0001, true), 0x7fff_0002);
    assert_eq!(min_u16x2(0x0001_fffe, 0xffff_0003), 0x0001_0003);
    assert_eq!(max_u16x2(0x0001_fffe, 0xffff_0003), 0xffff_fffe);
    assert_eq!(add_16x2(0xffff_0001, 0x0001_ffff), 0);
    assert_eq!(sub_16x2(0, 0x0001_0001), 0xffff_ffff);
}

#[test]
fn carry_chains() {
    // 64-bit add out of two 32-bit halves.
    let (lo, c) = add_cc_32(0xffff_ffff, 1);
    assert_eq!((lo, c), (0, CarryFlag(true)));
    let (hi, c2) = addc_32(1, 2, c);
    assert_eq!((hi, c2), (4, CarryFlag(false)));
    assert_eq!(
        addc_32(u32::MAX, u32::MAX, CarryFlag(true)),
        (u32::MAX, CarryFlag(true))
    );
    assert_eq!(addc_32(u32::MAX, 0, CarryFlag(true)), (0, CarryFlag(true)));
    // Subtraction: CC.CF is the carry-out of `a + !b + 1` (1 = no borrow), as on GPUs.
    assert_eq!(sub_cc_32(0, 1), (u32::MAX, CarryFlag(false)));
    assert_eq!(sub_cc_32(5, 3), (2, CarryFlag(true)));
    assert_eq!(sub_cc_32(7, 7), (0, CarryFlag(true)));
    assert_eq!(sub_cc_32(0x627a_df75, 0x864c_cef5).1, CarryFlag(false));
    assert_eq!(
        subc_32(5, 5, CarryFlag(false)),
        (u32::MAX, CarryFlag(false))
    );
    assert_eq!(subc_32(5, 5, CarryFlag(true)), (0, CarryFlag(true)));
    assert_eq!(
        subc_32(0, u32::MAX, CarryFlag(false)),
        (0, CarryFlag(false))
    );
    assert_eq!(subc_32(7, 3, CarryFlag(false)), (3, CarryFlag(true)));
    assert_eq!(add_cc_64(u64::MAX, 2), (1, CarryFlag(true)));
    assert_eq!(
        subc_64(0, 0, CarryFlag(false)),
        (u64::MAX, CarryFlag(false))
    );
    // madc: lo/hi of a product plus c plus carry.
    assert_eq!(mad_lo_cc_32(0x8000_0000, 2, 1), (1, CarryFlag(false)));
    assert_eq!(mad_lo_cc_32(0xffff_ffff, 1, 1), (0, CarryFlag(true)));
    assert_eq!(
        madc_lo_32(2, 3, u32::MAX - 6, CarryFlag(true)),
        (0, CarryFlag(true))
    );
    assert_eq!(
        mad_hi_cc_u32(0xffff_ffff, 0xffff_ffff, 2),
        (0, CarryFlag(true))
    );
    assert_eq!(
        madc_hi_u32(0x10000, 0x10000, 0, CarryFlag(true)),
        (2, CarryFlag(false))
    );
    // Signed hi: (-1 * 1) >> 32 = -1 = 0xffffffff, plus 1 carries out.
    assert_eq!(mad_hi_cc_s32(u32::MAX, 1, 1), (0, CarryFlag(true)));
    assert_eq!(
        madc_hi_s32(u32::MAX, 1, 0, CarryFlag(true)),
        (0, CarryFlag(true))
    );
    assert_eq!(
        madc_hi_u64(u64::MAX, u64::MAX, 1, CarryFlag(true)),
        (0, CarryFlag(true))
    );
    assert_eq!(mad_hi_cc_s64(u64::MAX, 1, 0), (u64::MAX, CarryFlag(false)));
    assert_eq!(madc_lo_64(3, 3, 0, CarryFlag(false)), (9, CarryFlag(false)));
    assert_eq!(mad_lo_cc_64(1, 1, u64::MAX), (0, CarryFlag(true)));
}

#[test]
fn dp4a_dp2a() {
    let a = 0x01_02_03_04;
    let b = 0x05_06_07_08;
    assert_eq!(dp4a(a, b, 10, false, false), 10 + 4 * 8 + 3 * 7 + 2 * 6 + 5);
    // 0xff is -1 signed, 255 unsigned.
    assert_eq!(dp4a(0xff, 0x02, 0, true, false), (-2i32) as u32);
    assert_eq!(dp4a(0xff, 0x02, 0, false, false), 510);
    assert_eq!(dp4a(0xffff_ffff, 0xffff_ffff, 0, true, true), 4);
    assert_eq!(
        dp4a(0xffff_ffff, 0xffff_ffff, 0, false, true),
        (-1020i32) as u32
    );
    assert_eq!(dp4a(0x8080_8080, 0x8080_8080, 0, true, true), 65536);
    assert_eq!(dp4a(0, 0, u32::MAX, true, true), u32::MAX);
    // dp2a: a halves (h0=3, h1=-1) with b bytes 0,1 (lo) or 2,3 (hi).
    let a = 0xffff_0003;
    let b = 0x04_05_06_07;
    assert_eq!(dp2a(a, b, 0, true, false, false), (3 * 7 - 6) as u32);
    assert_eq!(dp2a(a, b, 0, true, false, true), (3 * 5 - 4) as u32);
    assert_eq!(dp2a(a, b, 0, false, false, false), 3 * 7 + 65535 * 6);
    assert_eq!(
        dp2a(0x0001_0001, 0x0000_ff80, 1, false, true, false),
        (1 - 128 - 1) as u32
    );
}

proptest! {
    #[test]
    fn prop_carry_chain_is_u64_add(a in any::<u64>(), b in any::<u64>()) {
        let (lo, c) = add_cc_32(a as u32, b as u32);
        let (hi, c_out) = addc_32((a >> 32) as u32, (b >> 32) as u32, c);
        let (sum, overflow) = a.overflowing_add(b);
        prop_assert_eq!((hi as u64) << 32 | lo as u64, sum);
        prop_assert_eq!(c_out.0, overflow);
        let (lo, c) = sub_cc_32(a as u32, b as u32);
        let (hi, c_out) = subc_32((a >> 32) as u32, (b >> 32) as u32, c);
        let (diff, borrow) = a.overflowing_sub(b);
        prop_assert_eq!((hi as u64) << 32 | lo as u64, diff);
        prop_assert_eq!(c_out.0, !borrow);
    }

    #[test]
    fn prop_mul_hi_wide_agree(a in any::<i32>(), b in any::<i32>()) {
        let w = mul_wide_s32(a, b);
        prop_assert_eq!(mul_hi_s32(a, b), (w >> 32) as i32);
        prop_assert_eq!(mul_lo_32(a as u32, b as u32), w as u32);
        let wu = mul_wide_u32(a as u32, b as u32);
        prop_assert_eq!(mul_hi_u32(a as u32, b as u32), (wu >> 32) as u32);
    }

    #[test]
    fn prop_div_rem_identity(a in any::<i32>(), b in any::<i32>()) {
        prop_assume!(b != 0);
        prop_assert_eq!(div_s32(a, b).wrapping_mul(b).wrapping_add(rem_s32(a, b)), a);
    }
}
