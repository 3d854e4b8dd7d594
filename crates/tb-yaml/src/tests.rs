use super::{ScalarKind, load, resolve_plain};
use serde_json::json;

#[test]
fn yaml11_scalars_resolve_like_pyyaml() {
    let v = load(
        "a: yes\nb: on\nc: 017\nd: 1_000\ne: 1e3\nf: 0x1F\ng: ~\nh: 'yes'\ni: \"017\"\nj: 1.0e+3\nk: Off\nl: 0b101\nm: 1:30\nn:\no: .inf_\np: 1_000.5\n",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({
            "a": true, "b": true, "c": 15, "d": 1000, "e": "1e3", "f": 31, "g": null,
            "h": "yes", "i": "017", "j": 1000.0, "k": false, "l": 5, "m": 90, "n": null,
            "o": ".inf_", "p": 1000.5
        })
    );
}

#[test]
fn resolver_table() {
    for (s, k) in [
        ("yes", ScalarKind::Bool),
        ("Y", ScalarKind::Str),
        ("NO", ScalarKind::Bool),
        ("017", ScalarKind::Int),
        ("08", ScalarKind::Str),
        ("0o17", ScalarKind::Str),
        ("-0x_1f", ScalarKind::Int),
        ("1e3", ScalarKind::Str),
        ("1.5e3", ScalarKind::Str),
        ("1.5e+3", ScalarKind::Float),
        ("-.5", ScalarKind::Str),
        (".5", ScalarKind::Float),
        ("-.INF", ScalarKind::Float),
        ("1:60", ScalarKind::Str),
        ("1:30:00.5", ScalarKind::Float),
        ("2025-10-01", ScalarKind::Timestamp),
        ("<<", ScalarKind::Merge),
        ("=", ScalarKind::ValueKey),
        ("~", ScalarKind::Null),
        ("", ScalarKind::Null),
        ("nULL", ScalarKind::Str),
    ] {
        assert_eq!(resolve_plain(s), k, "{s:?}");
    }
}

#[test]
fn quoted_and_block_scalars() {
    let v = load("a: 'it''s'\nb: \"x\\ty\\u00e9\"\nc: |\n  l1\n   l2\nd: >-\n  f1\n  f2\n\n  f3\n")
        .unwrap();
    assert_eq!(
        v,
        json!({"a": "it's", "b": "x\ty\u{e9}", "c": "l1\n l2\n", "d": "f1 f2\nf3"})
    );
}

#[test]
fn quoted_scalar_continuation_at_column_zero_is_accepted() {
    // A Python "\n" escape inside a docstring puts continuation lines at column 0.
    let v = load("    q: \"Rules: \nDo not\n\n  x\"\n    r: 1\n").unwrap();
    assert_eq!(v, json!({"q": "Rules: Do not\nx", "r": 1}));
}

#[test]
fn merge_keys_and_order() {
    let v = load("b: &b {x: 1, y: 2}\nm:\n  z: 0\n  <<: *b\n  y: 5\n").unwrap();
    assert_eq!(v["m"], json!({"x": 1, "y": 5, "z": 0}));
    let keys: Vec<_> = v["m"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["x", "y", "z"]);
}

#[test]
fn dates_become_iso_strings() {
    assert_eq!(
        load("d: 2025-10-01\nt: 2025-10-01T13:00:00Z\n").unwrap(),
        json!({"d": "2025-10-01", "t": "2025-10-01T13:00:00+00:00"})
    );
}

#[test]
fn errors_carry_lines() {
    let e = load("a: 1\nb: [1, 2\n").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let e = load("a: 1\n  b: 2\n").unwrap_err();
    assert_eq!(e.line, 2);
    let e = load("a: 99999999999999999999\n").unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.message.contains("64 bits"));
    assert!(load("a: .nan").is_err());
    assert!(load("a: 1\n---\nb: 2\n").is_err());
}

#[test]
fn hostile_inputs_do_not_panic() {
    let deep = "[".repeat(5000);
    assert!(load(&deep).is_err());
    let laughs = "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n";
    assert!(load(laughs).is_err());
    for s in [
        "\"", "'", "? ", "- - -", "{", "]", "&", "*", "!", "%", "|9", ">\n x", "a: !<x", "\u{feff}",
    ] {
        let _ = load(s);
    }
}

/// One large scalar aliased many times: the alias budget counts bytes of text, so the copy
/// is refused at the alias that crosses it, before anything is expanded.
#[test]
fn aliases_of_a_large_scalar_are_bounded_in_bytes() {
    let big = "x".repeat(10 << 20);
    let mut doc = format!("a: &big {big}\nl:\n");
    for _ in 0..400 {
        doc.push_str("- *big\n");
    }
    let e = load(&doc).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "aliases expand to more than the alias budget ({} nodes, {} MiB of text)",
            super::MAX_ALIAS_NODES,
            super::MAX_ALIAS_BYTES >> 20
        )
    );
    // 10 MiB copied three times fits in 32 MiB; the fourth copy does not: line 2 is `l:`,
    // the aliases start on line 3.
    assert_eq!((e.line, e.column), (6, 3));
    // Under the budget, the copies are made.
    let small = "y".repeat(1 << 20);
    let v = load(&format!("a: &s {small}\nl: [*s, *s, *s]\n")).unwrap();
    assert_eq!(v["l"].as_array().unwrap().len(), 3);
    assert!(
        v["l"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x.as_str() == Some(&small[..]))
    );
}

/// Anchors nested in anchors share their nodes: a large scalar under 100 nested anchors is
/// held once, not once per anchor.
#[test]
fn nested_anchors_share_their_nodes() {
    let big = "z".repeat(1 << 20);
    let mut doc = String::new();
    for i in 0..100 {
        doc.push_str(&format!("&a{i} ["));
    }
    doc.push_str(&big);
    doc.push_str(&"]".repeat(100));
    let v = load(&doc).unwrap();
    let mut x = &v;
    for _ in 0..100 {
        x = &x[0];
    }
    assert_eq!(x.as_str().map(str::len), Some(1 << 20));
}

mod prop {
    use super::super::load;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Arbitrary text never panics the loader.
        #[test]
        fn never_panics(s in "[ \\-:?,\\[\\]{}#&*!|>'\"%@`a-z0-9.\\n\\t~<=_\\\\]{0,60}") {
            let _ = load(&s);
        }

        /// Any Unicode text (not only YAML's punctuation) never panics the scanner or loader.
        #[test]
        fn never_panics_on_any_text(s in any::<String>()) {
            let _ = load(&s);
        }

        /// Any plain scalar, implicit or with an explicit tag, goes through the resolver and
        /// the constructors without a panic.
        #[test]
        fn resolver_never_panics(
            s in "[-+0-9._:a-fA-FxXoObB \\tTtZz\u{e9}\u{660}]{0,30}",
            tag in prop::sample::select(vec!["", "!!int ", "!!float ", "!!timestamp ", "!!bool "]),
        ) {
            let _ = load(&format!("k: {tag}{s}\n"));
        }

        /// A double-quoted scalar round-trips any printable text.
        #[test]
        fn double_quoted_roundtrip(s in "[ -~\u{a0}-\u{2ff}]{0,40}") {
            let esc = s.replace('\\', "\\\\").replace('"', "\\\"");
            let v = load(&format!("k: \"{esc}\"\n")).unwrap();
            prop_assert_eq!(v["k"].as_str(), Some(s.as_str()));
        }
    }
}

#[test]
fn very_deep_nesting_is_refused_at_its_place() {
    // 100k-deep flow nesting used to scan quadratically (about a minute) before failing.
    for (open, close) in [("[", "]"), ("{a: ", "}"), ("[{a: ", "}]")] {
        let text = format!("x: {}1{}\n", open.repeat(100_000), close.repeat(100_000));
        let e = load(&text).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{e:?}");
        assert_eq!(e.line, 1, "{e:?}");
        assert!(e.column < 700, "{e:?}");
    }
    // Block nesting on one line, and nesting just inside the limit, still load.
    let e = load(&format!("{}x\n", "- ".repeat(100_000))).unwrap_err();
    assert!(e.message.contains("nested too deeply"), "{e:?}");
    assert!(load(&format!("{}1{}", "[".repeat(100), "]".repeat(100))).is_ok());
}

/// Fuzz target (stable toolchain, bounded): YAML token soup, a small grammar of nested
/// collections, and deep shapes, loaded on a 2 MiB stack. Never a panic or overflow; an
/// error always names a line and column inside the text.
#[test]
fn fuzz_yaml_soup_and_deep_shapes() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let cases: u32 = std::env::var("TB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let stats = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            const PIECES: &[&str] = &[
                "- ",
                ": ",
                "\n",
                "  ",
                "    ",
                "[",
                "]",
                "{",
                "}",
                ",",
                "&a ",
                "*a",
                "!!str ",
                "!!int ",
                "!!binary ",
                "|",
                "|-",
                ">",
                "'x'",
                "\"x\\u00e9\"",
                "\"\\",
                "#c",
                "? ",
                "---",
                "...",
                "\u{e9}",
                "\u{65e5}",
                "1.5",
                "yes",
                "~",
                "2025-01-01",
                "2025-01-01 10:00:00",
                "<<: *a",
                "<<: ",
                "%YAML 1.1\n",
                "\t",
                "\\",
                "key",
                "0x1F",
                "1_000",
                ".inf",
                "=",
                "!",
                "@",
                "`",
                "\r",
                "\u{feff}",
                "\u{85}",
            ];
            let soup =
                prop::collection::vec(prop::sample::select(PIECES), 0..80).prop_map(|v| v.concat());
            let scalar =
                prop::sample::select(vec!["a", "1", "'q'", "\"d\"", "yes", "~", "&x v", "*x"])
                    .prop_map(str::to_string);
            let grammar = scalar
                .prop_recursive(5, 40, 3, |e| {
                    prop_oneof![
                        prop::collection::vec(e.clone(), 0..3)
                            .prop_map(|v| format!("[{}]", v.join(", "))),
                        prop::collection::vec(e.clone(), 0..3).prop_map(|v| format!(
                            "{{{}}}",
                            v.iter()
                                .enumerate()
                                .map(|(i, x)| format!("k{i}: {x}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                        e.prop_map(|x| format!("- {x}")),
                    ]
                })
                .prop_map(|s| format!("root: {s}\n"));
            let deep = (0usize..4, 0usize..3000).prop_map(|(shape, n)| match shape {
                0 => format!("{}1{}", "[".repeat(n), "]".repeat(n)),
                1 => format!("{}1{}", "{a: ".repeat(n), "}".repeat(n)),
                2 => format!("{}x", "- ".repeat(n)),
                _ => (0..n.min(400))
                    .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                    .collect(),
            });
            let input = prop_oneof![3 => soup, 2 => grammar, 1 => deep, 1 => "\\PC{0,60}"];
            let mut runner = TestRunner::new(Config {
                cases,
                failure_persistence: None,
                ..Config::default()
            });
            let counts = std::sync::Mutex::new([0usize; 3]);
            let result = runner.run(&input, |text| {
                let got = load(&text);
                let mut c = counts
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                c[0] += 1;
                c[if got.is_ok() { 1 } else { 2 }] += 1;
                drop(c);
                if let Err(e) = got {
                    let lines = text
                        .split(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
                        .count();
                    prop_assert!(e.line >= 1 && e.line <= lines + 1, "{e:?} for {text:?}");
                    prop_assert!(e.column >= 1, "{e:?}");
                    prop_assert!(!e.message.is_empty());
                }
                Ok(())
            });
            (
                result.map_err(|e| e.to_string()),
                counts.into_inner().unwrap_or_default(),
            )
        })
        .expect("thread")
        .join()
        .expect("no stack overflow or panic");
    let (result, [n, ok, err]) = stats;
    eprintln!("yaml fuzz: {n} documents, {ok} loaded, {err} errors");
    result.unwrap();
}
