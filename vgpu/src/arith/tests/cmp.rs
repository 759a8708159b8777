//! setp/set/selp/slct conformance tables.

use crate::arith::cmp::*;
use crate::arith::CmpOp::{self, *};

const ALL: [CmpOp; 18] = [
    Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan,
];

#[test]
fn float_ordered_and_unordered() {
    let nan = f32::NAN;
    // Expected truth for (1, 2), (2, 2), (NaN, 1), (-0, +0), in ALL order.
    let table: [(f32, f32, [bool; 18]); 4] = [
        (
            1.0,
            2.0,
            [
                false, true, true, true, false, false, true, true, false, false, false, true, true,
                true, false, false, true, false,
            ],
        ),
        (
            2.0,
            2.0,
            [
                true, false, false, true, false, true, false, true, false, true, true, false,
                false, true, false, true, true, false,
            ],
        ),
        (
            nan,
            1.0,
            [
                false, false, false, false, false, false, false, false, false, false, true, true,
                true, true, true, true, false, true,
            ],
        ),
        (
            -0.0,
            0.0,
            [
                true, false, false, true, false, true, false, true, false, true, true, false,
                false, true, false, true, true, false,
            ],
        ),
    ];
    for (a, b, want) in table {
        for (op, w) in ALL.iter().zip(want) {
            assert_eq!(setp_f32(a, b, *op, false), w, "{a} {op:?} {b}");
            assert_eq!(setp_f64(a as f64, b as f64, *op), w, "{a} {op:?} {b} f64");
        }
    }
    // ftz: a subnormal equals zero only with .ftz.
    let s = f32::from_bits(1);
    assert!(!setp_f32(s, 0.0, Eq, false));
    assert!(setp_f32(s, 0.0, Eq, true));
    assert!(setp_f32(-s, 0.0, Lt, false));
    assert!(!setp_f32(-s, 0.0, Lt, true));
    assert!(setp_f32(f32::INFINITY, f32::MAX, Gt, false));
}

#[test]
fn integer_signed_and_unsigned() {
    // -1 vs 1: signed lt, but as unsigned bits -1 is the largest.
    assert!(setp_signed(-1, 1, 32, Lt));
    assert!(setp_signed(-1, 1, 32, Hi));
    assert!(!setp_signed(-1, 1, 32, Lo));
    assert!(setp_signed(-1, 1, 16, Hs));
    assert!(setp_signed(i64::MIN, 0, 64, Hi));
    assert!(setp_signed(5, 5, 32, Le) && setp_signed(5, 5, 32, Ge) && setp_signed(5, 5, 32, Ls));
    assert!(!setp_signed(5, 5, 32, Ne));
    assert!(setp_unsigned(u64::MAX, 0, Gt));
    assert!(setp_unsigned(0, u32::MAX as u64, Lo));
    assert!(setp_unsigned(3, 3, Hs));
    assert!(!setp_unsigned(3, 3, Nan));
    assert!(!setp_signed(3, 3, 32, Equ));
}

#[test]
fn set_selp_slct() {
    assert_eq!(set_int(true) as u32, u32::MAX);
    assert_eq!(set_int(false), 0);
    assert_eq!(set_f32(true), 1.0);
    assert_eq!(set_f32(false), 0.0);
    assert!(combine(true, BoolOp::And, true));
    assert!(!combine(true, BoolOp::And, false));
    assert!(combine(false, BoolOp::Or, true));
    assert!(!combine(true, BoolOp::Xor, true));
    assert_eq!(selp(1u32, 2, true), 1);
    assert_eq!(selp(1u32, 2, false), 2);
    assert_eq!(slct_s32(1u32, 2, 0), 1);
    assert_eq!(slct_s32(1u32, 2, -1), 2);
    assert_eq!(slct_s32(1.5f32, 2.5, i32::MAX), 1.5);
    assert_eq!(slct_f32(1u32, 2, 0.0, false), 1);
    assert_eq!(slct_f32(1u32, 2, -0.0, false), 1);
    assert_eq!(slct_f32(1u32, 2, -1.0, false), 2);
    assert_eq!(slct_f32(1u32, 2, f32::NAN, false), 2);
    let neg_sub = -f32::from_bits(1);
    assert_eq!(slct_f32(1u32, 2, neg_sub, false), 2);
    assert_eq!(slct_f32(1u32, 2, neg_sub, true), 1);
    assert_eq!(slct_f32(1u32, 2, f32::NEG_INFINITY, true), 2);
}
