//! The buffer/scalar spec grammar: parsing, printing, initial contents (the random
//! generator is pinned), typed errors, binding on a device, reading back and formatting.

use fencehound_argspec::*;
use fencehound_vgpu::{Arg, Device};

fn buffer(s: &str) -> BufferSpec {
    match parse_arg(s) {
        Ok(ArgSpec::Buffer(b)) => b,
        other => panic!("{s}: {other:?}"),
    }
}

fn u32s(s: &str) -> Vec<u32> {
    buffer(s).initial().unwrap().values::<u32>().unwrap()
}

#[test]
fn parses_every_corpus_args_header() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "cu") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let line = src
            .lines()
            .find_map(|l| l.strip_prefix("// args:"))
            .unwrap();
        let args = parse_args(line).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(!args.is_empty(), "{}", p.display());
        for a in &args {
            // Printing and re-parsing gives the same spec.
            assert_eq!(parse_arg(&a.to_string()).as_ref(), Ok(a), "{a}");
            if let ArgSpec::Buffer(b) = a {
                assert_eq!(b.initial_bytes().unwrap().len(), b.bytes());
            }
        }
        n += 1;
    }
    assert!(n >= 50, "only {n} kernels");
}

#[test]
fn initializers() {
    assert_eq!(u32s("a:u32[4]"), vec![0, 0, 0, 0]);
    assert_eq!(u32s("a:u32[4] zero"), vec![0, 0, 0, 0]);
    assert_eq!(u32s("a:u32[3] fill(7)"), vec![7, 7, 7]);
    assert_eq!(u32s("a:u32[3] fill(-1)"), vec![u32::MAX; 3]);
    assert_eq!(u32s("a:u32[4] iota"), vec![0, 1, 2, 3]);
    assert_eq!(u32s("a:u32[3] iota(10, 5)"), vec![10, 15, 20]);
    assert_eq!(u32s("a:u32[3] iota_from(1)"), vec![1, 2, 3]);
    assert_eq!(u32s("a:u32[3] iota(1,-1)"), vec![1, 0, u32::MAX]);
    assert_eq!(u32s("a:u32[3] values(1, 0x10, 0b11)"), vec![1, 16, 3]);
    let b = buffer("a:u8[300] iota").initial().unwrap();
    assert_eq!(
        b.values::<u8>().unwrap()[257],
        1,
        "integers wrap to the width"
    );
    let f = buffer("f:f32[4] iota(0.5, 0.25)").initial().unwrap();
    assert_eq!(f.values::<f32>().unwrap(), vec![0.5, 0.75, 1.0, 1.25]);
    let h = buffer("h:f16[2] values(1.5, 0x3c00)").initial().unwrap();
    let h: Vec<f32> = h
        .values::<half::f16>()
        .unwrap()
        .iter()
        .map(|x| x.to_f32())
        .collect();
    assert_eq!(h, vec![1.5, 1.0], "a hex value is a bit pattern for floats");
    let s = buffer("s:f32[12] special").initial().unwrap();
    let s = s.values::<f32>().unwrap();
    assert!(s[0].is_nan() && s[1].is_nan() && s[1].is_sign_negative());
    assert_eq!(
        &s[2..10],
        &[
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            -1e-40,
            f32::MAX,
            -f32::MIN_POSITIVE
        ]
    );
    assert!(s[5].is_sign_negative());
    assert!((0.0..1.0).contains(&s[10]));
}

#[test]
fn random_generator_is_pinned() {
    // SplitMix64's first output for seed 0 (the reference implementation's test vector).
    assert_eq!(mix64(0x9E37_79B9_7F4A_7C15), 0xE220_A839_7B1D_CDAF);
    // bits(s, i) = mix(mix(s) + (i + 1) * golden): pinned so results are reproducible.
    let expect =
        |s: u64, i: u64| mix64(mix64(s).wrapping_add((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    for (s, i) in [(0, 0), (44, 3), (u64::MAX, 1000)] {
        assert_eq!(random_bits(s, i), expect(s, i));
    }
    let all = buffer("r:u64[3] random(44)").initial().unwrap();
    let all = all.values::<u64>().unwrap();
    assert_eq!(all, (0..3).map(|i| random_bits(44, i)).collect::<Vec<_>>());
    // Counter-based: element i does not depend on the length.
    assert_eq!(
        u32s("r:u32[5] random(9)")[..3],
        u32s("r:u32[3] random(9)")[..]
    );
    // Integer ranges: LO + ((bits * (HI - LO)) >> 64).
    let r = u32s("r:u32[1000] random(44,0,1000)");
    for (i, v) in r.iter().enumerate() {
        assert_eq!(*v as u128, (random_bits(44, i as u64) as u128 * 1000) >> 64);
    }
    let r = buffer("r:i32[1000] random(1,-5,5)").initial().unwrap();
    let r = r.values::<i32>().unwrap();
    assert!(r.iter().all(|v| (-5..5).contains(v)));
    assert!(r.contains(&-5) && r.contains(&4));
    // Floats: the top 24 bits for f32, so exactly representable and < 1.
    let f = buffer("f:f32[1000] random(3)").initial().unwrap();
    let f = f.values::<f32>().unwrap();
    for (i, v) in f.iter().enumerate() {
        assert_eq!(
            *v,
            (random_bits(3, i as u64) >> 40) as f32 / (1u32 << 24) as f32
        );
    }
    let f = buffer("f:f32[1000] random(46,-1,1)").initial().unwrap();
    assert!(f
        .values::<f32>()
        .unwrap()
        .iter()
        .all(|v| (-1.0..1.0).contains(v)));
    // A range so narrow that rounding lands on HI gives the value below HI.
    let f = buffer("f:f32[64] random(5,1,1.0000001)").initial().unwrap();
    assert!(f.values::<f32>().unwrap().iter().all(|v| *v == 1.0));
}

#[test]
fn scalars() {
    let arg = |s: &str| match parse_arg(s).unwrap() {
        ArgSpec::Scalar(sc) => sc.arg(),
        other => panic!("{other:?}"),
    };
    assert_eq!(arg("n:u32=5"), Arg::U32(5));
    assert_eq!(arg("n:u32=-1"), Arg::U32(u32::MAX));
    assert_eq!(arg("n:i32=-7"), Arg::I32(-7));
    assert_eq!(arg("n:u64=0x1_0000_0000"), Arg::U64(1 << 32));
    assert_eq!(arg("x:f32=1.5"), Arg::F32(1.5));
    assert_eq!(arg("x:f32=2"), Arg::F32(2.0));
    assert_eq!(arg("x:f64=-inf"), Arg::F64(f64::NEG_INFINITY));
    assert_eq!(arg("x:f32=0x3f800000"), Arg::F32(1.0));
    assert_eq!(arg("c:u8=200"), Arg::Bytes(vec![200]));
    assert_eq!(arg("h:f16=1"), Arg::Bytes(vec![0x00, 0x3c]));
    assert_eq!(arg("b:bf16=1"), Arg::Bytes(vec![0x80, 0x3f]));
    // Just above a tie, one correct rounding on every host: 8133.99988 → 8132 (not 8136
    // as through f32), 1 + 2^-8 + 2^-40 → 1 + 2^-7 (not 1, as with the low bits dropped).
    assert_eq!(
        arg("h:f16=8133.9998779296875"),
        Arg::Bytes(vec![0xf1, 0x6f])
    );
    assert_eq!(
        arg("b:bf16=1.0039062500009095"),
        Arg::Bytes(vec![0x81, 0x3f])
    );
}

#[test]
fn errors_name_the_offending_text() {
    let err = |s: &str| parse_args(s).unwrap_err();
    assert_eq!(err("x"), SpecError::Syntax("x".into()));
    assert_eq!(err("x:u32"), SpecError::Syntax("x:u32".into()));
    assert_eq!(err("1x:u32=1"), SpecError::BadName("1x".into()));
    assert_eq!(err("x:u31=1"), SpecError::UnknownType("u31".into()));
    assert_eq!(err("x:u32[0] zero"), SpecError::BadLength("0".into()));
    assert_eq!(err("x:u32[-3] zero"), SpecError::BadLength("-3".into()));
    assert_eq!(
        err("x:u32[4 zero"),
        SpecError::Unbalanced("x:u32[4 zero".into())
    );
    assert_eq!(err("x:u32[4] ones"), SpecError::UnknownInit("ones".into()));
    assert_eq!(
        err("x:u8=256"),
        SpecError::BadValue {
            text: "256".into(),
            ty: ElemType::U8
        }
    );
    assert_eq!(
        err("x:u32[2] fill(1.5)"),
        SpecError::BadValue {
            text: "1.5".into(),
            ty: ElemType::U32
        }
    );
    assert!(matches!(
        err("x:u32[2] values(1,2,3)"),
        SpecError::BadInit { .. }
    ));
    assert!(matches!(
        err("x:u32[2] random(1,5,5)"),
        SpecError::BadInit { .. }
    ));
    assert!(matches!(
        err("x:u32[2] random(1,5)"),
        SpecError::BadInit { .. }
    ));
    assert!(matches!(err("x:u32[2] special"), SpecError::BadInit { .. }));
    assert_eq!(
        err("a:u32=1, a:u32=2"),
        SpecError::DuplicateName("a".into())
    );
    let e = err("x:f32[2] fill(abc)");
    assert!(e.to_string().contains("`abc`"), "{e}");
    // Nothing panics on junk.
    for junk in [
        "",
        ",",
        ":",
        "a:[",
        "a:u32[",
        "a:u32[]",
        "a:u32[9999999999999999999999]",
        "a:u32[2] random(",
        "a:f32=",
        "(",
        "a:u32[1] file()",
        "a:u32=0x",
        "a:f32=nanx",
        "é:u32=1",
    ] {
        let _ = parse_args(junk);
    }
}

#[test]
fn file_initializer() {
    let dir = std::env::temp_dir().join(format!("fencehound-argspec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("in.bin");
    let data: Vec<u8> = [1u32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&p, &data).unwrap();
    assert_eq!(
        u32s(&format!("a:u32[3] file({})", p.display())),
        vec![1, 2, 3]
    );
    let e = buffer(&format!("a:u32[4] file({})", p.display()))
        .initial_bytes()
        .unwrap_err();
    assert!(matches!(e, SpecError::File { .. }), "{e}");
    let e = buffer("a:u32[4] file(/nonexistent/x.bin)")
        .initial_bytes()
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.bin"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bind_read_back_and_format() {
    let mut dev = Device::new();
    let specs =
        parse_args("in:i32[4] values(-1,2,-3,4), n:u32=4, f:f32[3] values(nan,-0.0,1.5)").unwrap();
    let bound = bind(&mut dev, &specs).unwrap();
    assert_eq!(bound.args.len(), 3);
    assert_eq!(bound.args[1], Arg::U32(4));
    assert_eq!(bound.buffers.len(), 2);
    let b = bound.buffer("in").unwrap();
    assert_eq!(bound.args[0], Arg::Ptr(b.ptr));
    let host = b.read(&dev).unwrap();
    assert_eq!(host.values::<i32>(), Some(vec![-1, 2, -3, 4]));
    assert_eq!(host.values::<u32>(), None, "wrong type");
    assert_eq!(host.format(None), "in: i32[4] = [-1, 2, -3, 4]");
    assert_eq!(host.format(Some(2)), "in: i32[4] = [-1, ... (2 more), 4]");
    assert_eq!(
        host.to_json(),
        r#"{"name":"in","type":"i32","len":4,"values":[-1,2,-3,4]}"#
    );
    let f = bound.buffer("f").unwrap().read(&dev).unwrap();
    assert_eq!(f.format(None), "f: f32[3] = [NaN, -0.0, 1.5]");
    assert_eq!(
        f.to_json(),
        r#"{"name":"f","type":"f32","len":3,"values":["NaN",-0.0,1.5]}"#
    );
    // Allocations are named after the spec, so faults can name them.
    let names: Vec<&str> = dev
        .memory()
        .global
        .allocations()
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, vec!["in", "f"]);
    // Longer than MAX_LEN: refused before anything is allocated.
    let e = parse_args(&format!("h:u64[{}] zero", MAX_LEN + 1)).unwrap_err();
    assert_eq!(e, SpecError::BadLength((MAX_LEN + 1).to_string()));
}

#[test]
fn dim3() {
    use fencehound_vgpu::Dim3;
    assert_eq!(parse_dim3("4"), Some(Dim3::new(4, 1, 1)));
    assert_eq!(parse_dim3("16,16"), Some(Dim3::new(16, 16, 1)));
    assert_eq!(parse_dim3("2, 3, 4"), Some(Dim3::new(2, 3, 4)));
    for bad in ["", "0", "1,2,3,4", "x", "-1", "4294967296"] {
        assert_eq!(parse_dim3(bad), None, "{bad}");
    }
}
