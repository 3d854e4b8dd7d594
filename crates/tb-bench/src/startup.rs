//! `startup_tools_ms`, `startup_run_test_ms`: start-up of `tb` commands that need one task,
//! each run as a fresh process of this executable (what a user runs).
//!
//! - `tb tools --task <first task>`: dataset opened, the task and its scenario loaded, the
//!   tool surface resolved (`--surface auto`: the reference's texts, from the surface cache
//!   when it is warm; `startup_tools_uncached_ms` with the cache off), the agent view printed.
//! - `tb run-test <one record> --line 1`: the first task's golden attempt re-graded (its tool
//!   calls replayed in a fresh session, the state judged).
//!
//! Median wall time over `runs` processes each, after one warm-up run (which also fills the
//! surface cache). Wall time includes process start, so it is sensitive to machine load.

use crate::error::{Context, Result};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The target.
pub(crate) const TARGET_MS: f64 = 20.0;

fn time_runs(args: &[&str], env: &[(&str, &str)], runs: usize) -> Result<f64> {
    let exe = std::env::current_exe().context("the tb executable")?;
    let mut times = Vec::new();
    for i in 0..=runs.max(1) {
        let mut c = Command::new(&exe);
        c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let t0 = Instant::now();
        let status = c.status().context("starting tb")?;
        let dt = t0.elapsed().as_secs_f64() * 1e3;
        if !status.success() {
            return Err(crate::BenchError::Msg(format!(
                "tb {} failed ({status})",
                args.join(" ")
            )));
        }
        if i > 0 {
            times.push(dt);
        }
    }
    Ok(crate::median(&mut times))
}

/// The figures' detail object. `record` is one trial record of `task` (JSON).
pub(crate) fn startup_figure(
    root: &Path,
    task: &str,
    record: &Value,
    runs: usize,
) -> Result<Value> {
    let dir = std::env::temp_dir().join(format!("tb-bench-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).context(dir.display().to_string())?;
    let rec_file = dir.join("record.jsonl");
    std::fs::write(&rec_file, format!("{}\n", serde_json::to_string(record)?))
        .context(rec_file.display().to_string())?;
    let root_s = root.display().to_string();
    let rec_s = rec_file.display().to_string();
    let tools = ["tools", "--task", task, "--data", &root_s];
    let run_test = ["run-test", &rec_s, "--line", "1", "--data", &root_s];
    let out = (|| -> Result<Value> {
        let tools_ms = time_runs(&tools, &[], runs)?;
        let tools_uncached_ms = time_runs(&tools, &[("TB_SURFACE_CACHE", "off")], runs)?;
        let mut own = tools.to_vec();
        own.extend(["--surface", "own"]);
        let tools_own_ms = time_runs(&own, &[], runs)?;
        let run_test_ms = time_runs(&run_test, &[], runs)?;
        Ok(json!({
            "task": task,
            "runs": runs,
            "tools_ms": crate::sig(tools_ms),
            "tools_uncached_ms": crate::sig(tools_uncached_ms),
            "tools_own_surface_ms": crate::sig(tools_own_ms),
            "run_test_ms": crate::sig(run_test_ms),
        }))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// One trial record of the golden attempt of `task` (offline golden agent), as `tb infer`
/// writes it.
pub(crate) fn golden_record(
    l: &crate::Loaded,
    ds: &tb_dataset::Dataset,
    task: &tb_core::Task,
) -> Result<Value> {
    let scenario = ds.scenario(&task.scenario)?;
    let mut bot = std::collections::HashMap::new();
    bot.insert(
        task.scenario.clone(),
        scenario.bot_instructions.clone().unwrap_or_default(),
    );
    let agent_cfg = ds.agent("think").ok();
    let provenance = serde_json::Map::new();
    let judge = tb_eval::judge::StateJudge::new();
    let env = tb_eval::run::AttemptEnv {
        sandbox: &l.sandbox,
        judge: &judge,
        clock: tb_sandbox::Clock::default(),
        agent_instructions: agent_cfg.as_ref().map(|c| c.system_instructions.as_str()),
        bot_instructions: &bot,
        provenance: &provenance,
    };
    let rec =
        tb_eval::attempt::attempt_offline(&env, tb_eval::offline::OfflineAgent::Golden, task, 0);
    Ok(serde_json::to_value(&rec)?)
}

/// The start-up figure of the first task (fresh processes, 10 runs each), if there is one.
pub(super) fn startup_of(
    root: &std::path::Path,
    l: &super::Loaded,
    ds: &tb_dataset::Dataset,
) -> Result<Option<Value>> {
    let Some(t) = l.tasks.first() else {
        return Ok(None);
    };
    Ok(Some(startup_figure(
        root,
        &t.uid,
        &golden_record(l, ds, t)?,
        10,
    )?))
}

/// Start-up of the commands that need one task (`startup_tools_ms`, `startup_run_test_ms`).
pub(super) fn figures(b: &super::Bench<'_>) -> Result<super::Measured> {
    use super::Figure;
    b.progress("start-up (fresh processes)");
    let startup = startup_of(b.root, b.l, b.ds)?;
    let startup_fig = |k: &str| startup.as_ref().and_then(|m| m[k].as_f64());
    let figures = vec![
        Figure {
            key: "startup_tools_ms",
            value: startup_fig("tools_ms"),
            unit: "ms",
            reference: None,
            target: Some(TARGET_MS),
            note: startup.as_ref().map_or("skipped (no task)".into(), |m| format!(
                "`tb tools --task {}` as a fresh process, median wall of {} runs after a warm-up (--surface auto, the reference's texts from the warm surface cache); with the cache off {} ms, with --surface own {} ms",
                m["task"].as_str().unwrap_or(""), m["runs"], m["tools_uncached_ms"], m["tools_own_surface_ms"]
            )),
        },
        Figure {
            key: "startup_run_test_ms",
            value: startup_fig("run_test_ms"),
            unit: "ms",
            reference: None,
            target: Some(TARGET_MS),
            note: "`tb run-test` of one golden record of the same task (calls replayed, state judged), fresh process, median wall".into(),
        },
    ];
    Ok(super::Measured {
        figures,
        details: vec![("startup", startup.unwrap_or(Value::Null))],
        lines: Vec::new(),
    })
}
