//! The surface read from the checkout's Python sources equals the reference's own
//! `list_tools()` output (`tb-bench-v1/tools/<server>.json`) for the five v1 servers: names,
//! order, descriptions and input schemas with their key order; and its structure equals our
//! `.tools` declarations.
//!
//! The servers' sources come from a checkout of the data repository
//! (`tb_test_support::reference_data()`): tests on the reference's code, ignored with the
//! reason where it is not found. The recorded lists come from `tb-bench-v1` in the shared
//! folder.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn data_root() -> PathBuf {
    let root = tb_test_support::reference_data();
    assert!(
        tb_pysurface::has_server_sources(&root),
        "no server sources under {}",
        root.display()
    );
    root
}

fn tools_dir() -> PathBuf {
    let d = tb_test_support::shared().join("tb-bench-v1/tools");
    assert!(
        d.join("sandbox_consulting.json").is_file(),
        "reference tool lists not found at {}",
        d.display()
    );
    d
}

/// The first differing path between two JSON values, key order included.
fn first_diff(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let ky: Vec<&String> = y.keys().collect();
            if kx != ky {
                return Some(format!("{path}: keys ours {kx:?}\n  reference {ky:?}"));
            }
            x.iter()
                .find_map(|(k, v)| first_diff(v, &y[k], &format!("{path}/{k}")))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items, reference {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (a, b))| first_diff(a, b, &format!("{path}/{i}")))
        }
        _ => (a != b).then(|| format!("{path}: ours {a}, reference {b}")),
    }
}

#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[test]
fn surface_equals_reference_list_tools() {
    let (root, dir) = (data_root(), tools_dir());
    let mut total = 0;
    for server in tb_domains::SERVERS {
        let text = std::fs::read_to_string(dir.join(format!("{server}.json"))).unwrap();
        let reference: Value = serde_json::from_str(&text).unwrap();
        let surface = tb_pysurface::read_server_surface(&root, server)
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        assert_eq!(
            surface.module,
            reference["server_module"].as_str().unwrap(),
            "{server}: module"
        );
        let ref_toolsets: Vec<(String, Option<String>, Option<String>)> = reference["toolsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let s = |k: &str| t[k].as_str().map(str::to_string);
                (s("path").unwrap(), s("namespace"), s("db_namespace"))
            })
            .collect();
        let ours_toolsets: Vec<(String, Option<String>, Option<String>)> = surface
            .toolsets
            .iter()
            .map(|t| (t.path.clone(), t.namespace.clone(), t.db_namespace.clone()))
            .collect();
        assert_eq!(ours_toolsets, ref_toolsets, "{server}: toolsets");
        let ref_tools = reference["tools"].as_array().unwrap();
        let ref_names: Vec<&str> = ref_tools
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let names: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ref_names, "{server}: tool names and order");
        for (ours, theirs) in surface.tools.iter().zip(ref_tools) {
            assert_eq!(
                ours.description,
                theirs["description"].as_str().unwrap(),
                "{server}/{}: description",
                ours.name
            );
            if let Some(d) = first_diff(&ours.input_schema, &theirs["input_schema"], "") {
                panic!("{server}/{}: input schema differs at {d}", ours.name);
            }
            // Byte-identical, key order included.
            assert_eq!(
                serde_json::to_string(&ours.input_schema).unwrap(),
                serde_json::to_string(&theirs["input_schema"]).unwrap(),
                "{server}/{}",
                ours.name
            );
            total += 1;
        }
    }
    assert_eq!(total, 163);
}

#[tb_test_support::reference_test]
#[test]
fn surface_structure_equals_our_declarations() {
    let root = data_root();
    for server in tb_domains::SERVERS {
        let surface = tb_pysurface::read_server_surface(&root, server)
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        let domain = tb_domains::by_name(server).unwrap().unwrap();
        if let Err(e) = tb_pysurface::check_against_declarations(&surface, &domain) {
            panic!("{server}:\n{e}");
        }
    }
}

/// Copies `servers.yaml` and every `.py` file under `servers/` (no data files).
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let name = e.file_name();
        let t = to.join(&name);
        if p.is_dir() {
            if name != "build" && name != "initial_data" && name != "__pycache__" {
                copy_sources(&p, &t);
            }
        } else if p.extension().is_some_and(|x| x == "py") || name == "servers.yaml" {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

#[tb_test_support::reference_test]
#[test]
fn changed_reference_model_is_a_mismatch_naming_tool_and_parameter() {
    let root = data_root();
    let tmp = tempfile::tempdir().unwrap();
    copy_sources(&root.join("servers"), &tmp.path().join("servers"));
    // The copy reads as the original does.
    let server = "sandbox_consulting";
    let domain = tb_domains::by_name(server).unwrap().unwrap();
    let s = tb_pysurface::read_server_surface(tmp.path(), server).unwrap();
    tb_pysurface::check_against_declarations(&s, &domain).unwrap();
    // Make the workday tool's optional `email` required.
    let file = tmp
        .path()
        .join("servers/tb_business_ops_servers_202606/tb_business_ops_servers_202606/toolslib/sandbox_consulting/workday/tools/api.py");
    let text = std::fs::read_to_string(&file).unwrap();
    let old = "    email: Optional[str] = Field(\n        None,\n";
    assert_eq!(
        text.matches(old).count(),
        1,
        "the workday input model changed upstream"
    );
    std::fs::write(
        &file,
        text.replacen(old, "    email: str = Field(\n        ...,\n", 1),
    )
    .unwrap();
    let s = tb_pysurface::read_server_surface(tmp.path(), server).unwrap();
    let err = tb_pysurface::check_against_declarations(&s, &domain).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("tool `workday_api`, parameter `email`")
            && text.contains("workday/tools/api.py"),
        "{text}"
    );
    let tb_pysurface::SurfaceError::Mismatch(ms) = err else {
        panic!()
    };
    assert!(
        ms.iter()
            .all(|m| m.tool == "workday_api" && m.param.as_deref() == Some("email")),
        "{ms:?}"
    );
}

#[tb_test_support::reference_test]
#[test]
fn reading_servers_together_equals_reading_them_one_by_one() {
    let root = data_root();
    let together = tb_pysurface::read_server_surfaces(&root, &tb_domains::SERVERS).unwrap();
    assert_eq!(together.len(), 5);
    for (server, t) in tb_domains::SERVERS.iter().zip(&together) {
        let alone = tb_pysurface::read_server_surface(&root, server).unwrap();
        assert_eq!(&alone, t, "{server}");
    }
}

/// The four `thinkingbox_tools` servers (decorated functions on the MCP SDK's FastMCP or
/// fastmcp 3) against their recorded surfaces (`tb-bench-v1/tools-servers/surface`): the
/// listed schema and the one the agent gets, reserved tools left out.
#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[test]
fn function_servers_equal_reference_list_tools() {
    let root = data_root();
    let dir = tb_test_support::shared().join("tb-bench-v1/tools-servers/surface");
    assert!(
        dir.join("online_banking.json").is_file(),
        "recorded surfaces not found at {}",
        dir.display()
    );
    for server in [
        "airline_tau_bench",
        "email_system",
        "ms_store",
        "online_banking",
    ] {
        let reference: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{server}.json"))).unwrap(),
        )
        .unwrap();
        let surface = tb_pysurface::read_server_surface(&root, server)
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        assert_eq!(surface.module, reference["module"].as_str().unwrap());
        let ref_tools: Vec<&Value> = reference["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["reserved"] != Value::Bool(true))
            .collect();
        let names: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
        let ref_names: Vec<&str> = ref_tools
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ref_names, "{server}: tool names and order");
        for (ours, theirs) in surface.tools.iter().zip(&ref_tools) {
            assert_eq!(
                ours.description,
                theirs["description"].as_str().unwrap(),
                "{server}/{}",
                ours.name
            );
            assert_eq!(
                ours.description,
                theirs["agent_description"].as_str().unwrap(),
                "{server}/{}",
                ours.name
            );
            for (a, b, what) in [
                (&ours.input_schema, &theirs["input_schema"], "input schema"),
                (
                    &ours.agent_input_schema,
                    &theirs["agent_input_schema"],
                    "agent input schema",
                ),
            ] {
                if let Some(d) = first_diff(a, b, "") {
                    panic!("{server}/{}: {what} differs at {d}", ours.name);
                }
                assert_eq!(
                    serde_json::to_string(a).unwrap(),
                    serde_json::to_string(b).unwrap()
                );
            }
        }
    }
}

/// The agent's schemas of the v1 servers, as the framework client transforms the listed ones:
/// the recorded requests' `parameters` start from these (checked in full by the request-body
/// test); here, the transform keeps every key but the top-level titles.
#[tb_test_support::reference_test]
#[test]
fn agent_schemas_drop_only_top_level_titles() {
    let root = data_root();
    for server in tb_domains::SERVERS {
        for t in tb_pysurface::read_server_surface(&root, server)
            .unwrap()
            .tools
        {
            let mut expected = t.input_schema.clone();
            let o = expected.as_object_mut().unwrap();
            o.shift_remove("title");
            for (_, p) in o
                .get_mut("properties")
                .unwrap()
                .as_object_mut()
                .unwrap()
                .iter_mut()
            {
                p.as_object_mut().unwrap().shift_remove("title");
            }
            assert_eq!(
                serde_json::to_string(&t.agent_input_schema).unwrap(),
                serde_json::to_string(&expected).unwrap(),
                "{server}/{}",
                t.name
            );
        }
    }
}

/// The agent's schemas and descriptions equal what the reference actually sent the model in
/// its captured chat requests (`tb-bench-v1/requests/<task file>.agent.json`), once the chat
/// encoder's own step is applied: `"additionalProperties": false` appended when missing.
#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[test]
fn agent_schemas_equal_the_captured_chat_requests() {
    let root = data_root();
    let dir = tb_test_support::shared().join("tb-bench-v1/requests");
    assert!(
        dir.join("sandbox_consulting_group1.agent.json").is_file(),
        "captured requests not found at {}",
        dir.display()
    );
    let surfaces = tb_pysurface::read_server_surfaces(&root, &tb_domains::SERVERS).unwrap();
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".agent.json") else {
            continue;
        };
        let surface = surfaces
            .iter()
            .find(|s| stem.starts_with(&s.server))
            .expect("server of the task file");
        let body: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        for t in body["tools"].as_array().unwrap() {
            let f = &t["function"];
            let Some(ours) = surface.tools.iter().find(|x| x.name == f["name"]) else {
                continue;
            };
            let mut expected = ours.agent_input_schema.clone();
            let o = expected.as_object_mut().unwrap();
            if !o.contains_key("additionalProperties") {
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            assert_eq!(
                serde_json::to_string(&expected).unwrap(),
                serde_json::to_string(&f["parameters"]).unwrap(),
                "{stem}/{}",
                ours.name
            );
            assert_eq!(
                ours.description,
                f["description"].as_str().unwrap(),
                "{stem}/{}",
                ours.name
            );
            checked += 1;
        }
    }
    // 7 task files: retail 33, booking 38 x2, auto 33, neobank 32 x2, consulting 27.
    assert_eq!(checked, 233);
}
