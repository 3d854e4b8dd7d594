//! The reader on small Python servers of our own (`tests/fixtures/mini`): the surface equals
//! what pydantic 2.14.4 itself builds for them (`expected.json`, made by `gen_expected.py`),
//! constructs the reader does not know are errors naming file and line, and a changed request
//! model is a mismatch naming tool and parameter.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tb_pysurface::{SurfaceError, check_against_declarations, read_server_surface};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mini")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

/// A copy of the fixture with `old` replaced by `new` in one file; returns the root and the
/// 1-based line where `new` starts.
fn changed(file: &str, old: &str, new: &str) -> (tempfile::TempDir, usize) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let p = dir.path().join("servers/minisrv/minisrv").join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text.matches(old).count(),
        1,
        "{old:?} must occur once in {file}"
    );
    let at = text.find(old).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    std::fs::write(&p, text.replacen(old, new, 1)).unwrap();
    (dir, line)
}

fn source_error(root: &Path) -> (String, usize, String) {
    match read_server_surface(root, "mini") {
        Err(SurfaceError::Source {
            file,
            line,
            message,
        }) => (file, line, message),
        Err(other) => panic!("expected a source error, got {other}"),
        Ok(_) => panic!("expected an error, the reader accepted the change"),
    }
}

#[test]
fn mini_server_equals_pydantic() {
    let s = read_server_surface(&fixture(), "mini").unwrap();
    assert_eq!(s.module, "minisrv.mcp_mini");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let ours: Vec<Value> = s
        .tools
        .iter()
        .map(|t| serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    // Byte-identical, key order included.
    assert_eq!(
        serde_json::to_string_pretty(&Value::Array(ours)).unwrap(),
        serde_json::to_string_pretty(&expected).unwrap()
    );
    // Toolsets in the server's order; modules by file name, classes by name; abstract skipped.
    let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["other_ping", "kit_create", "kit_find", "kit_lookup"]
    );
    assert_eq!(
        s.tools[3].description,
        "Looks things up. Implicit concatenation."
    );
    assert_eq!(s.toolsets[1].db_namespace.as_deref(), Some("kit_db"));
}

#[test]
fn client_transform_drops_top_level_titles_only() {
    let s = read_server_surface(&fixture(), "mini").unwrap();
    let t = s.tools.iter().find(|t| t.name == "kit_lookup").unwrap();
    let a = &t.agent_input_schema;
    assert!(a.get("title").is_none());
    assert!(
        a["properties"]
            .as_object()
            .unwrap()
            .values()
            .all(|p| p.get("title").is_none())
    );
    // Nested titles stay.
    assert_eq!(a["properties"]["part"]["anyOf"][0]["title"], "Part");
    assert_eq!(a["properties"]["colour"]["description"], "Colour wanted");
    assert_eq!(
        a["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        t.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
}

#[test]
fn unknown_constructs_name_file_and_line() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "kit/tools/b_lookup.py",
            "return \"Finds a thing.\"",
            "return f\"Finds {PREFIX}\"",
            "f-string",
        ),
        (
            "kit/tools/b_lookup.py",
            "mode: Literal[\"fast\", \"slow\"] = \"fast\"",
            "mode: str = Field(\"fast\", json_schema_extra={\"x\": 1})",
            "json_schema_extra",
        ),
        (
            "kit/tools/a_create.py",
            "name: str = Field(..., max_length=20)",
            "name: set[str]",
            "set",
        ),
        (
            "kit/tools/a_create.py",
            "class CreateTool(Tool):",
            "if True:\n    X = 1\n\n\nclass CreateTool(Tool):",
            "top-level statement",
        ),
        (
            "kit/models.py",
            "    note: Optional[str] = None",
            "    note: Optional[str] = None\n\n    @computed_field\n    def total(self) -> int:\n        return 1",
            "computed_field",
        ),
        (
            "kit/models.py",
            "    GREEN = \"green\"",
            "    GREEN = str(1)",
            "calling",
        ),
        (
            "kit/tools/b_lookup.py",
            "        return \"lookup\"",
            "        for x in []:\n            pass\n        return \"lookup\"",
            "unsupported statement",
        ),
    ];
    let mut messages = Vec::new();
    for (file, old, new, what) in cases {
        let (dir, line) = changed(file, old, new);
        let (efile, eline, msg) = source_error(dir.path());
        assert!(
            efile.ends_with(&format!("minisrv/{file}")),
            "{what}: file {efile}"
        );
        // The error is at the changed line or inside the changed text.
        let span = new.matches('\n').count();
        assert!(
            eline >= line && eline <= line + span,
            "{what}: line {eline}, changed at {line}: {msg}"
        );
        let shown = read_server_surface(dir.path(), "mini")
            .unwrap_err()
            .to_string();
        assert!(shown.starts_with(&format!("{efile}:{eline}: ")), "{shown}");
        messages.push(format!(
            "{what}: {}",
            tb_test_support::redact(&shown, &[(dir.path(), "[TMP]")])
        ));
    }
    // The whole message of each case (the construct it names), one a line.
    insta::assert_snapshot!(messages.join("\n"));
}

#[test]
fn syntax_error_names_file_and_line() {
    let (dir, line) = changed(
        "kit/tools/a_create.py",
        "class CreateTool(Tool):",
        "class CreateTool(Tool)",
    );
    let (file, eline, msg) = source_error(dir.path());
    assert!(file.ends_with("kit/tools/a_create.py"), "{file}");
    assert_eq!(eline, line, "{msg}");
    insta::assert_snapshot!(msg, @"Python syntax error: Expected `:`, found newline");
}

#[test]
fn unknown_server_and_missing_module_are_errors() {
    let e = read_server_surface(&fixture(), "nope").unwrap_err();
    let fx = fixture();
    let shown = |e: &SurfaceError, root: &Path| {
        tb_test_support::redact(&e.to_string(), &[(root, "[ROOT]")])
    };
    insta::assert_snapshot!(shown(&e, &fx), @"servers/servers.yaml: no server `nope`");
    let (dir, _) = changed(
        "mcp_mini.py",
        "ToolSet(path=\"minisrv.other\"",
        "ToolSet(path=\"minisrv.missing\"",
    );
    let e = read_server_surface(dir.path(), "mini").unwrap_err();
    insta::assert_snapshot!(shown(&e, dir.path()), @"servers/*/minisrv/missing: toolset package `minisrv.missing` not found");
}

/// Our declarations of the mini server, in the `.tools` form of tb-sandbox.
const MINI_TOOLS: &str = r#"
model Part class=Part
  label str{min=2} : Label.
  count int{ge=0,le=99} = 1 : Count.
  colour enum["red","green","red"] = "green" : Colour.
  tags list<str> = [] : Tags.

tool other_ping class=PingInput
  | Replies.

tool kit_create class=CreateInput forbid
  | Creates.
  parts list<Part> : Parts.
  name str{max=20} : Name.
"#;

fn nop(_: &mut tb_sandbox::Session, _: &tb_sandbox::Args) -> Result<Value, tb_sandbox::ToolError> {
    Ok(Value::Null)
}

fn mini_domain() -> tb_sandbox::Domain {
    tb_sandbox::Domain::new("mini", &[("mini.tools", MINI_TOOLS)], {
        let mut t = tb_sandbox::Tools::new();
        t.add("other_ping", nop).add("kit_create", nop);
        t
    })
    .unwrap()
}

/// A surface of the two tools our declarations cover.
fn covered(root: &Path) -> tb_pysurface::ServerSurface {
    let mut s = read_server_surface(root, "mini").unwrap();
    s.tools
        .retain(|t| t.name == "other_ping" || t.name == "kit_create");
    s
}

#[test]
fn declarations_match_the_mini_server() {
    check_against_declarations(&covered(&fixture()), &mini_domain()).unwrap();
}

#[test]
fn changed_python_model_is_a_mismatch_naming_tool_and_parameter() {
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        (
            "kit/tools/a_create.py",
            "name: str = Field(..., max_length=20)",
            "name: int = Field(...)",
            "name",
            "type",
        ),
        (
            "kit/tools/a_create.py",
            "name: str = Field(..., max_length=20)",
            "name: str = Field(..., max_length=30)",
            "name",
            "constraints",
        ),
        (
            "kit/tools/a_create.py",
            "name: str = Field(..., max_length=20)",
            "name: str = Field(\"w\", max_length=20)",
            "name",
            "required",
        ),
        (
            "kit/models.py",
            "    count: int = Field(1, ge=0, le=99)",
            "    count: int = Field(2, ge=0, le=99)",
            "parts[].count",
            "default",
        ),
        (
            "kit/models.py",
            "    GREEN = \"green\"",
            "    GREEN = \"verde\"",
            "parts[].colour",
            "enum",
        ),
        (
            "kit/models.py",
            "    label: str = Field(..., min_length=2, examples=[\"bolt\"])",
            "    title: str = Field(...)",
            "parts[].label",
            "not in the reference",
        ),
    ];
    let mut texts = Vec::new();
    for (file, old, new, param, what) in cases {
        let (dir, _) = changed(file, old, new);
        let Err(SurfaceError::Mismatch(ms)) =
            check_against_declarations(&covered(dir.path()), &mini_domain())
        else {
            panic!("{param}: expected a mismatch");
        };
        let m = ms
            .iter()
            .find(|m| m.param.as_deref() == Some(*param) && m.message.contains(what))
            .unwrap_or_else(|| panic!("{param}: no `{what}` mismatch for it in {ms:?}"));
        assert_eq!(m.tool, "kit_create");
        texts.push(m.to_string());
    }
    // The whole text of each mismatch (tool, parameter, what differs), one a line.
    insta::assert_snapshot!(texts.join("\n"));
    // A tool the reference lists and we do not declare.
    let s = read_server_surface(&fixture(), "mini").unwrap();
    let Err(SurfaceError::Mismatch(ms)) = check_against_declarations(&s, &mini_domain()) else {
        panic!()
    };
    assert!(
        ms.iter()
            .any(|m| m.tool == "kit_lookup" && m.param.is_none()),
        "{ms:?}"
    );
}
