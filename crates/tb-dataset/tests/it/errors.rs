//! Loader behaviour on small hand-made datasets: file lookup, merge rules, and error messages
//! that name the file and the line.

use serde_json::json;
use std::path::{Path, PathBuf};
use tb_dataset::{Check, Dataset, DatasetError};

const SCENARIO: &str = "world_state:\n  srv:\n    sources: [a]\n    nested: {x: 1}\n  other: null\ntools:\n  - name: t1\n  - name: t2\n    is_end_turn: yes\nbot_instructions: hi\n";

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(&p, text).expect("write");
    p
}

/// `e`'s text with the temporary data root shown as `[ROOT]`, for a snapshot of the whole message.
fn shown(root: &Path, e: &impl std::fmt::Display) -> String {
    let root = root.to_str().expect("utf-8 temp dir");
    e.to_string().replace(root, "[ROOT]")
}

fn dataset(files: &[(&str, &str)]) -> (tempfile::TempDir, Dataset) {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "dataset/scenario/sc.yaml", SCENARIO);
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    let ds = Dataset::open(dir.path()).expect("open");
    (dir, ds)
}

const GOOD: &str = r#"import x

"""!
scenario: sc
tags: [a]
"""


def test_one(x, judge):
    """!
    query: q1
    user_context: 'yes'
    tags: [b]
    init:
      srv:
        sources: [b]
        nested: {y: 2}
        data_patch: {t: [1]}
      extra_server: {k: v}
    """
    validate_database(x)
    validate_rubrics_yesno(x, judge)


def helper():
    return 1


def test_two(x):
    """!
    query: yes
    max_user_sim_turns: 3
    """
"#;

#[test]
fn loads_and_merges() {
    let (d, ds) = dataset(&[("dataset/test_case/grp/grp_file_a.py", GOOD)]);
    let t = ds.load_task("grp_file_a.py:test_one").expect("task");
    assert_eq!(t.uid, "grp_file_a.py:test_one");
    assert_eq!(t.query.as_deref(), Some("q1"));
    assert_eq!(t.user_context.as_deref(), Some("yes"));
    assert_eq!(t.raw["tags"], json!(["a", "b"]));
    assert_eq!(
        t.checks,
        vec![Check::ValidateDatabase, Check::ValidateRubricsYesno]
    );
    assert_eq!(t.source.line, 9);
    assert_eq!(t.source.path, "dataset/test_case/grp/grp_file_a.py");
    assert_eq!(
        serde_json::Value::Object(t.world_state.clone()),
        json!({
            "srv": {"sources": ["a", "b"], "nested": {"x": 1, "y": 2}, "data_patch": {"t": [1]}},
            "other": null,
            "extra_server": {"k": "v"}
        })
    );
    // `query: yes` is a YAML 1.1 boolean: the reference's pydantic model rejects it too.
    let e = ds.load_task("grp_file_a.py:test_two").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/dataset/test_case/grp/grp_file_a.py:29: `query` of `test_two` must be a string, found a boolean");
    let sc = ds.scenario("sc").expect("scenario");
    assert!(sc.tools[1].is_end_turn);
    assert_eq!(sc.servers(), ["srv", "other"]);
}

#[test]
fn file_lookup_uses_underscore_prefixes_longest_first() {
    let (_d, ds) = dataset(&[
        ("dataset/test_case/a_b/a_b_c.py", GOOD),
        ("dataset/test_case/a/a_b_c.py", GOOD),
        ("dataset/test_case/top.py", GOOD),
        ("dataset/test_case/x/y/x_y_z.py", GOOD),
    ]);
    let root = ds.dataset_dir().join("test_case");
    assert_eq!(
        ds.find_test_file("a_b_c.py"),
        Some(root.join("a_b/a_b_c.py"))
    );
    assert_eq!(ds.find_test_file("top.py"), Some(root.join("top.py")));
    // only one directory level
    assert_eq!(ds.find_test_file("x_y_z.py"), None);
    assert_eq!(
        ds.test_file_candidates("x_y_z.py"),
        vec![
            root.join("x_y_z.py"),
            root.join("x_y/x_y_z.py"),
            root.join("x/x_y_z.py")
        ]
    );
}

#[test]
fn test_list_errors_name_the_list_line() {
    let (d, ds) = dataset(&[
        ("dataset/test_case/f.py", GOOD),
        (
            "list.yaml",
            "- f.py:test_one\n# comment\n- f.py:test_missing\n",
        ),
        ("list2.yaml", "- f.py:test_one\n- nofile.py:test_x\n"),
        ("list3.yaml", "- f.py:test_one\n- not-an-id\n"),
    ]);
    let e = ds.load_test_list(&d.path().join("list.yaml")).unwrap_err();
    assert!(
        matches!(e, DatasetError::UnknownTest { line: 3, .. }),
        "{e:?}"
    );
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/list.yaml:3: no test function "test_missing" in [ROOT]/dataset/test_case/f.py (a test function is a module-level `def` whose first statement is a string starting with '!')"#);

    // relative to the data root
    let e = ds.load_test_list(Path::new("list2.yaml")).unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/list2.yaml:2: test-case file "nofile.py" not found (looked for [ROOT]/dataset/test_case/nofile.py)"#);

    let e = ds.load_test_list(Path::new("list3.yaml")).unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/list3.yaml:2: invalid test id "not-an-id": expected `file.py:function`"#);

    let e = ds
        .load_test_list(Path::new("missing-list.yaml"))
        .unwrap_err();
    assert!(matches!(e, DatasetError::Io { .. }), "{e:?}");
    insta::assert_snapshot!(shown(d.path(), &e), @"missing-list.yaml: cannot read");

    // a direct id naming a missing function names the test file
    let e = ds.load_task("f.py:nope").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/dataset/test_case/f.py: no test function "nope" in [ROOT]/dataset/test_case/f.py (a test function is a module-level `def` whose first statement is a string starting with '!')"#);
}

#[test]
fn malformed_docstring_yaml_names_file_and_line() {
    let src = "\"\"\"!\nscenario: sc\n\"\"\"\n\n\ndef test_bad(x):\n    \"\"\"!\n    query: ok\n    init:\n      srv: [1, 2\n    \"\"\"\n    validate_database(x)\n";
    let (d, ds) = dataset(&[("dataset/test_case/bad.py", src)]);
    let e = ds.load_task("bad.py:test_bad").unwrap_err();
    let DatasetError::Yaml { line, ref path, .. } = e else {
        panic!("{e:?}")
    };
    // The flow sequence opened on line 10 is still open at the closing quotes (line 11).
    assert!((10..=11).contains(&line), "{e}");
    assert!(path.ends_with("bad.py"));
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/dataset/test_case/bad.py:11: invalid YAML in the docstring of test_bad: while parsing a flow sequence: expected ',' or ']', but found <stream end>");
}

#[test]
fn invalid_keys_types_and_scenarios_are_reported() {
    let src = "def test_k(x):\n    \"\"\"!\n    scenario: sc\n    query: q\n    qeury: typo\n    \"\"\"\n";
    let (d, ds) = dataset(&[
        ("dataset/test_case/k.py", src),
        (
            "dataset/test_case/s.py",
            "def test_s(x):\n    '''!\n    scenario: nope\n    query: q\n    '''\n",
        ),
        (
            "dataset/test_case/t.py",
            "def test_t(x):\n    '''!\n    scenario: sc\n    query: q\n    init: {srv: [1]}\n    '''\n",
        ),
        (
            "dataset/scenario/broken.yaml",
            "world_state: {}\ntools:\n  - name: a\n  - override_description: x\n",
        ),
        (
            "dataset/test_case/p.py",
            "def test_p(x):\n    '''!\n    query: q\n'''\n    y = (\n",
        ),
    ]);
    let e = ds.load_task("k.py:test_k").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/dataset/test_case/k.py:1: the docstring of test_k: invalid key "qeury" (allowed: scenario, query, user_context, max_user_sim_turns, max_agent_sim_turns, bot_instructions, history, init, format_query, tags)"#);
    let e = ds.load_task("s.py:test_s").unwrap_err();
    assert!(
        matches!(e, DatasetError::UnknownScenario { line: 1, .. }),
        "{e:?}"
    );
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/dataset/test_case/s.py:1: unknown scenario "nope" (no [ROOT]/dataset/scenario/nope.yaml)"#);
    let e = ds.load_task("t.py:test_t").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/dataset/test_case/t.py:1: test_t: `init.srv` must be a mapping, found a list");
    let e = ds.scenario("broken").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/dataset/scenario/broken.yaml:4: `tools[1].name` is required");
    let e = ds.load_task("p.py:test_p").unwrap_err();
    assert!(matches!(e, DatasetError::Python { .. }), "{e:?}");
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/dataset/test_case/p.py:6: invalid Python: unexpected end of file inside brackets");
}

#[test]
fn open_accepts_the_dataset_dir_and_rejects_others() {
    let (d, _ds) = dataset(&[]);
    let ds = Dataset::open(&d.path().join("dataset")).expect("dataset dir");
    assert_eq!(ds.root(), d.path());
    let e = Dataset::open(&d.path().join("nowhere")).unwrap_err();
    assert!(matches!(e, DatasetError::NotADataset { .. }));
    insta::assert_snapshot!(shown(d.path(), &e), @"[ROOT]/nowhere: not a ThinkingBox data root (expected [ROOT]/nowhere/dataset/{scenario,test_case} or a dataset dir itself)");
}

#[test]
fn test_tags_are_hydrated_as_the_reference_does() {
    // no tags anywhere (every v1 task): empty labels, null domain
    let (_d, ds) = dataset(&[("dataset/test_case/grp/grp_file_a.py", GOOD)]);
    let t = ds.load_task("grp_file_a.py:test_one").expect("task");
    assert_eq!(
        serde_json::to_value(&t.test_tags).unwrap(),
        json!({"labels": ["a", "b"], "category": [], "domain": null, "eval_type": null, "skip": false})
    );
    // scenario tags are the defaults; the test's domain wins, categories are the test's
    let tagged = format!(
        "{SCENARIO}tags: [domain:customer-service, eval:knowledge-qa:text, s, category:user]\n"
    );
    let test = "import x\n\n\"\"\"!\nscenario: sc\n\"\"\"\n\ndef test_t(x):\n    \"\"\"!\n    query: q\n    tags: [Domain:HR, t, category:refusal, skip]\n    \"\"\"\n\ndef test_u(x):\n    \"\"\"!\n    query: q\n    \"\"\"\n";
    let (_d, ds) = dataset(&[
        ("dataset/scenario/tagged.yaml", &tagged),
        (
            "dataset/test_case/tg.py",
            &test.replace("scenario: sc\n", "scenario: tagged\n"),
        ),
    ]);
    let t = ds.load_task("tg.py:test_t").expect("task");
    assert_eq!(
        serde_json::to_value(&t.test_tags).unwrap(),
        json!({"labels": ["s", "t"], "category": ["refusal"], "domain": "hr", "eval_type": null, "skip": true})
    );
    let u = ds.load_task("tg.py:test_u").expect("task");
    assert_eq!(u.test_tags.domain.as_deref(), Some("customer-service"));
    assert!(u.test_tags.category.is_empty() && !u.test_tags.skip);
    // a domain outside the taxonomy: an error naming the file and the line
    let bad = format!("{SCENARIO}tags: [domain:retail]\n");
    let (d, ds) = dataset(&[
        ("dataset/scenario/bad.yaml", &bad),
        (
            "dataset/test_case/b.py",
            &test.replace("scenario: sc\n", "scenario: bad\n"),
        ),
    ]);
    let e = ds.load_task("b.py:test_u").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/dataset/scenario/bad.yaml:11: domain "retail" is not in the tag taxonomy (expected one of: customer-service, hr, misc)"#);
    let test_bad = test.replace("Domain:HR", "category:bogus");
    let (d, ds) = dataset(&[("dataset/test_case/c.py", &test_bad)]);
    let e = ds.load_task("c.py:test_t").unwrap_err();
    insta::assert_snapshot!(shown(d.path(), &e), @r#"[ROOT]/dataset/test_case/c.py:7: test_t: category "bogus" is not in the tag taxonomy (expected one of: user, xpia, direct-msg, refusal)"#);
}

/// A scenario with an unknown key in each of 5,000 tool entries and 3,000 at its root: the
/// warnings are a bounded list (the first ones, then a count), each naming file and line.
#[test]
fn many_unknown_keys_give_capped_warnings() {
    let mut text = String::from("world_state:\n  srv: {}\n");
    for i in 0..3000 {
        text.push_str(&format!("zz{i}: 1\n"));
    }
    text.push_str("tools:\n");
    for i in 0..5000 {
        text.push_str(&format!("  - name: t{i}\n    nmae: x\n"));
    }
    let (dir, ds) = dataset(&[("dataset/scenario/many.yaml", &text)]);
    let sc = ds.scenario("many").expect("scenario");
    let w: Vec<String> = sc.warnings.iter().map(|w| shown(dir.path(), w)).collect();
    assert_eq!(w.len(), tb_dataset::keys::MAX_WARNINGS + 1, "{w:?}");
    assert_eq!(
        w[0],
        "[ROOT]/dataset/scenario/many.yaml:3: unknown key `zz0`; it is ignored"
    );
    assert_eq!(
        w[19],
        "[ROOT]/dataset/scenario/many.yaml:22: unknown key `zz19`; it is ignored"
    );
    // The root's own closing count, the first tool entry's warning, and the other 4,999
    // entries': 2 + 4,999 warnings counted in the last line.
    assert_eq!(w[20], "and 5001 more warning(s)");
}
