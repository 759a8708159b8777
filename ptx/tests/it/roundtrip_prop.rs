//! Property: for generated PTX text x that parses, `parse(print(parse(x))) == parse(x)`,
//! and printing is idempotent. The generator draws opcodes, modifiers and operand counts
//! from the instruction table itself, so every table entry is exercised.

use fencehound_ptx::*;
use proptest::prelude::*;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "%r[0-9]{1,3}",
        "%rd[0-9]{1,2}",
        "%p[0-9]",
        "\\$L__BB[0-9]_[0-9]",
        "[a-z_][a-z0-9_]{0,8}",
    ]
    .prop_filter("not a special register or sink", |s| {
        Special::parse(s).is_none() && s != "_" && Opcode::parse(s).is_none()
    })
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        name(),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u32>().prop_map(|b| format!("0f{b:08X}")),
        any::<u64>().prop_map(|b| format!("0d{b:016X}")),
        Just("%tid.x".to_string()),
        Just("%laneid".to_string()),
        Just("%clock64".to_string()),
        Just("_".to_string()),
        (name(), -4096i64..4096).prop_map(|(n, o)| format!("[{n}+{o}]")),
        (name(), -4096i64..4096).prop_map(|(n, o)| format!("{n}+{o}")),
        name().prop_map(|n| format!("[{n}]")),
        any::<u32>().prop_map(|a| format!("[{a}]")),
        name().prop_map(|n| format!("!{n}")),
        (name(), name()).prop_map(|(a, b)| format!("{a}|{b}")),
        (name(), "[xyzwrgba]|b[0-3]|h[01]|b[0-7]{4}|h[0-3]{2}")
            .prop_map(|(n, s)| format!("{n}.{s}")),
    ]
}

fn operand() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => leaf(),
        1 => prop::collection::vec(leaf(), 1..5).prop_map(|v| format!("{{{}}}", v.join(", "))),
        1 => prop::collection::vec(leaf(), 0..4).prop_map(|v| format!("({})", v.join(", "))),
    ]
}

fn instruction() -> impl Strategy<Value = String> {
    (
        0..OPCODES.len(),
        any::<u64>(),
        prop::collection::vec(operand(), 0..6),
        any::<(bool, bool)>(),
    )
        .prop_map(|(k, bits, ops, (guarded, neg))| {
            let info = &OPCODES[k];
            let allowed: Vec<Mod> = Mod::ALL
                .iter()
                .copied()
                .filter(|m| info.op.accepts(m.class()))
                .collect();
            let mut s = String::new();
            if guarded {
                s.push_str(if neg { "@!%p1 " } else { "@%p1 " });
            }
            s.push_str(info.name);
            for (i, m) in allowed.iter().enumerate().take(64) {
                if bits.rotate_right(i as u32) & 1 == 1 && bits.rotate_right(i as u32 + 7) & 3 == 0
                {
                    s.push('.');
                    s.push_str(m.as_str());
                }
            }
            let n = (info.min_operands as usize
                + ops.len() % (1 + (info.max_operands - info.min_operands) as usize))
                .min(info.max_operands as usize);
            let mut ops = ops;
            while ops.len() < n {
                ops.push("%r1".to_string());
            }
            ops.truncate(n);
            if !ops.is_empty() {
                s.push(' ');
                s.push_str(&ops.join(", "));
            }
            s.push(';');
            s
        })
}

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => instruction(),
        1 => name().prop_map(|n| format!("{}:", n.replace('%', "L"))),
        1 => (1u32..3, 1u32..500, 0u32..80).prop_map(|(f, l, c)| format!(".loc {f} {l} {c}")),
        1 => (1u32..500, 1u32..500).prop_map(|(l, m)| format!(".loc 1 {l} 3, function_name $L__info_string0, inlined_at 1 {m} 5")),
        1 => (1u32..64).prop_map(|n| format!(".reg .b32 %q<{n}>;")),
        1 => (1u64..64).prop_map(|n| format!(".local .align 8 .b8 __local_depot{n}[{n}];")),
        1 => prop::collection::vec(instruction(), 0..3).prop_map(|v| format!("{{\n.param .b32 param0;\n{}\n}}", v.join("\n"))),
    ]
}

fn module() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(statement(), 0..30),
        prop::collection::vec(any::<u8>(), 0..12),
        any::<bool>(),
    )
        .prop_map(|(body, bytes, entry)| {
            let data: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
            format!(
                ".version 8.5\n.target sm_80\n.address_size 64\n\
                 .global .align 4 .b8 tbl[{}] = {{{}}};\n\
                 .extern .shared .align 16 .b8 dyn[];\n\
                 .{} {}(\n.param .u64 .ptr .global .align 8 p0,\n.param .align 8 .b8 p1[16]\n)\n\
                 .maxntid 128, 1, 1\n{{\n{}\n}}\n.file 1 \"k.cu\"\n",
                bytes.len().max(1),
                if data.is_empty() {
                    "0".to_string()
                } else {
                    data.join(", ")
                },
                if entry { "visible .entry" } else { "func" },
                "kern",
                body.join("\n"),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn print_then_parse_is_identity(src in module()) {
        let m = match parse("gen.ptx", &src) {
            Ok(m) => m,
            Err(e) => return Err(TestCaseError::fail(format!("generated text did not parse: {e}\n{src}"))),
        };
        let printed = print(&m);
        let again = parse("printed.ptx", &printed)
            .map_err(|e| TestCaseError::fail(format!("printed text did not parse: {e}\n{printed}")))?;
        prop_assert_eq!(&again, &m);
        prop_assert_eq!(print(&again), printed);
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,300}") {
        let _ = parse("any.ptx", &src);
    }

    #[test]
    fn mutated_modules_never_panic(src in module(), cut in any::<prop::sample::Index>(), junk in "[ -~]{0,8}") {
        let at = cut.index(src.len() + 1);
        let at = (0..=at).rev().find(|i| src.is_char_boundary(*i)).unwrap_or(0);
        let mutated = format!("{}{}{}", &src[..at], junk, &src[at..]);
        let _ = parse("mut.ptx", &mutated);
    }
}
