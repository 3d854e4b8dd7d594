//! `tb validate`: load a test list and everything it needs, print a per-scenario summary.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `tb validate` arguments.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Data root (the folder holding `dataset/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Test list (YAML list of `file.py:function`).
    #[arg(long)]
    pub test_list: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The tool surface a run would show the model: `reference`, `own`, `auto` or a surface
    /// file (see `tb infer --help`); it must resolve, and the summary names it.
    #[arg(long, default_value = "auto", value_parser = crate::common::parse_surface)]
    pub surface: tb_eval::surface::SurfaceMode,
    #[command(flatten)]
    pub servers: crate::common::ServerArgs,
}

/// Runs `tb validate`.
pub fn run(a: &ValidateArgs) -> Result<ExitCode> {
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let list = ds.resolve_test_list(&a.test_list);
    let pin_warning = crate::common::release_pin_warning(ds.root(), &list);
    let tasks = ds.load_test_list(&list)?;
    let summary = tb_dataset::summarize(&ds, &tasks)?;
    // Every task's session must open (its data patch must apply) and its golden calls must
    // name tools that exist.
    let mut problems = Vec::new();
    let mut warnings: Vec<String> = pin_warning
        .map(|w| w.trim_start_matches("warning: ").to_string())
        .into_iter()
        .collect();
    // --servers: the file itself, then which side runs each task's servers
    let servers = match a.servers.config() {
        Ok(c) => c,
        Err(e) => {
            problems.push(crate::error_text(&e));
            None
        }
    };
    let prefer = a.servers.options()?.prefer;
    if let Some(cfg) = &servers {
        for spec in &cfg.servers {
            if !tasks.iter().any(|t| t.world_state.contains_key(&spec.name)) {
                warnings.push(format!(
                    "{}:{}: server `{}`: no task of the list names it",
                    cfg.file.display(),
                    spec.line,
                    spec.name
                ));
            }
        }
    }
    // Builtin tools of the dataset's agent configs may also be listed by a scenario.
    let mut builtins = std::collections::BTreeSet::new();
    for name in agent_names(ds.root()) {
        if let Ok(agent) = ds.agent(&name) {
            builtins.extend(agent.builtin_tools.iter().map(|t| t.name.clone()));
            warnings.extend(agent.warnings.iter().cloned());
        }
    }
    let mut checked_scenarios = std::collections::BTreeSet::new();
    for t in &tasks {
        if let Some(cfg) = &servers {
            let mut external = false;
            let mut unknown = false;
            for s in t.world_state.keys() {
                match tb_external::session::route(cfg, prefer, sandbox.serves(s), s) {
                    tb_external::Route::External => external = true,
                    tb_external::Route::Native => {}
                    tb_external::Route::Unknown => {
                        unknown = true;
                        problems.push(format!(
                            "{} ({}:{}): server `{s}` is neither a native domain nor in {}",
                            t.uid,
                            t.source.path,
                            t.source.line,
                            cfg.file.display()
                        ));
                    }
                }
            }
            if external || unknown {
                // its external servers are checked when they run
                continue;
            }
        }
        match sandbox.session(t, tb_sandbox::Clock::default()) {
            Ok(s) => {
                // The scenario's `tools:` must name tools its servers provide.
                if checked_scenarios.insert(t.scenario.clone())
                    && let Ok(scenario) = ds.scenario(&t.scenario)
                {
                    warnings.extend(scenario.warnings.iter().cloned());
                    problems.extend(unknown_scenario_tools(&scenario, &s, &builtins));
                }
                for server in s.server_names() {
                    for (tool, _) in t.golden_calls(&server) {
                        if s.server(&server)
                            .is_some_and(|x| x.domain.tool(&tool).is_none())
                        {
                            problems
                                .push(format!("{}: golden call to unknown tool `{tool}`", t.uid));
                        }
                    }
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    // Every test file's Python must be within what the test-body evaluator runs.
    problems.extend(tb_eval::pybody::check_test_files(&root, &tasks));
    let surface = match tb_eval::surface::Surface::resolve(&a.surface, &root) {
        Ok(s) => Some(s),
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "tasks": tasks.len(),
                "scenarios": summary,
                "surface": surface.as_ref().map(tb_eval::surface::Surface::provenance),
                "problems": problems,
                "warnings": warnings,
            }))?
        );
    } else {
        println!(
            "{:<32} {:>6} {:>7} {:>6} {:>9} {:>8}",
            "scenario", "tasks", "golden", "tools", "db-check", "rubrics"
        );
        for s in &summary {
            println!(
                "{:<32} {:>6} {:>7} {:>6} {:>9} {:>8}",
                s.scenario,
                s.tasks,
                s.golden_calls,
                s.tools,
                s.validate_database,
                s.validate_rubrics_yesno
            );
        }
        println!(
            "{} tasks loaded from {}",
            tasks.len(),
            a.test_list.display()
        );
        if let Some(s) = &surface {
            println!("{}", s.describe());
        }
        for w in &warnings {
            println!("warning: {w}");
        }
        for p in &problems {
            println!("problem: {p}");
        }
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Stems of `dataset/agent/*.yaml`.
fn agent_names(root: &std::path::Path) -> Vec<String> {
    tb_dataset::yaml_stems(&root.join("dataset/agent")).unwrap_or_default()
}

/// `file:line: ...` for each scenario `tools:` entry that no server of the session (nor an
/// agent builtin) provides, with a "did you mean" when one is close.
fn unknown_scenario_tools(
    scenario: &tb_dataset::Scenario,
    session: &tb_eval::root::TaskSession,
    builtins: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    let provided: Vec<String> = session
        .tool_list()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .chain(builtins.iter().cloned())
        .collect();
    let known: Vec<&str> = provided.iter().map(String::as_str).collect();
    scenario
        .tools
        .iter()
        .filter(|t| !known.contains(&t.name.as_str()))
        .map(|t| {
            let hint = tb_dataset::keys::did_you_mean(&t.name, &known)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            format!(
                "{}:{}: scenario `{}` lists tool `{}`, which none of its servers ({}) provides{hint}",
                scenario.path.display(),
                t.line,
                scenario.name,
                t.name,
                session.server_names().join(", ")
            )
        })
        .collect()
}
