//! A campaign on a real Slurm cluster: a one-node cluster on localhost (munged, slurmctld,
//! slurmd, all in a temporary folder, on free ports, stopped at the end), the array script of
//! `tb campaign plan --scheduler slurm` submitted with `sbatch`, one array task killed
//! mid-run with `scancel` and requeued with `scontrol requeue`; then `tb campaign status`,
//! `tb campaign merge` (merge + verify: every key exactly once) and the verdicts equal to a
//! single-machine `tb infer` of the same campaign.
//!
//! The agent is `tb-llm`'s scripted mock model (golden calls for half the bundled example's
//! tasks, none for the others), slowed to 250 ms a reply so the kill lands mid-run.
//!
//! Needs `slurm-wlm` and `munge` (`#[needs(slurm)]`; `.ci/run` installs them). Slow: CI runs
//! it after the README's test command, with `--ignored`.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tb_mock_model::{Fault, MockServer};

const SHARDS: u32 = 3;
const REPEAT: u32 = 3;

struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    bins: HashMap<&'static str, PathBuf>,
    daemons: Vec<Child>,
}

impl Cluster {
    fn cmd(&self, bin: &'static str) -> Command {
        let mut c = Command::new(&self.bins[bin]);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn run(&self, bin: &'static str, args: &[&str]) -> (bool, String) {
        let out = self
            .cmd(bin)
            .args(args)
            .output()
            .expect("slurm command runs");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    fn logs(&self) -> String {
        let mut s = String::new();
        for f in ["munged.log", "slurmctld.log", "slurmd.log"] {
            let text = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s.push_str(&format!("--- {f}\n"));
            for l in tail.iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    /// Brings up munged, slurmctld and slurmd (call from a `#[needs(slurm)]` test only).
    fn start() -> Cluster {
        tb_test_support::need(tb_test_support::Need::Slurm);
        let mut bins = HashMap::new();
        for b in tb_test_support::SLURM_PROGRAMS {
            let p = tb_test_support::program(None, &[b]);
            bins.insert(b, p.unwrap_or_else(|| panic!("`{b}` not found")));
        }
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let d = base.as_path();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|i| {
                (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0]
                    ^ std::process::id().to_le_bytes()[0]
            })
            .collect();
        std::fs::write(d.join("munge.key"), key).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(d.join("munge.key"), std::fs::Permissions::from_mode(0o600))
                .unwrap();
        }
        let p = |n: &str| d.join(n).display().to_string();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_else(|_| "localhost".into())
            .trim()
            .to_string();
        let port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        };
        let (ctld_port, d_port) = (port(), port());
        let conf = format!(
            "ClusterName=tbtest\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmUser={user}\nSlurmdUser={user}\n\
             SlurmctldPort={ctld_port}\nSlurmdPort={d_port}\n\
             AuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={sock},cred_expire=10\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={cpid}\nSlurmdPidFile={dpid}\n\
             SlurmctldLogFile={clog}\nSlurmdLogFile={dlog}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SchedulerType=sched/builtin\nSchedulerParameters=sched_interval=2\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             ReturnToService=2\nMpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n\
             JobRequeue=1\nKillWait=2\nMailProg=/bin/true\n\
             NodeName=tbnode NodeAddr=127.0.0.1 NodeHostname={host} CPUs=2 State=UNKNOWN\n\
             PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            sock = p("munge.sock"),
            state = p("state"),
            spool = p("spool"),
            cpid = p("slurmctld.pid"),
            dpid = p("slurmd.pid"),
            clog = p("slurmctld.log"),
            dlog = p("slurmd.log"),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        let mut c = Cluster {
            conf: d.join("slurm.conf"),
            dir,
            bins,
            daemons: Vec::new(),
        };
        let quiet = |mut cmd: Command| {
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("daemon starts")
        };
        let mut munged = Command::new(&c.bins["munged"]);
        munged.args([
            "--foreground",
            "--force",
            &format!("--socket={}", p("munge.sock")),
            &format!("--key-file={}", p("munge.key")),
            &format!("--log-file={}", p("munged.log")),
            &format!("--pid-file={}", p("munged.pid")),
            &format!("--seed-file={}", p("munged.seed")),
        ]);
        c.daemons.push(quiet(munged));
        wait_for(Duration::from_secs(20), || d.join("munge.sock").exists())
            .unwrap_or_else(|| panic!("munged did not start\n{}", c.logs()));
        let mut ctld = c.cmd("slurmctld");
        ctld.args(["-D", "-f", &p("slurm.conf")]);
        c.daemons.push(quiet(ctld));
        let mut slurmd = c.cmd("slurmd");
        slurmd.args(["-D", "-f", &p("slurm.conf"), "-N", "tbnode"]);
        c.daemons.push(quiet(slurmd));
        wait_for(Duration::from_mins(1), || {
            let (ok, out) = c.run("sinfo", &["-h", "-o", "%t"]);
            ok && out.trim() == "idle"
        })
        .unwrap_or_else(|| panic!("the node did not come up\n{}", c.logs()));
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .cmd("scancel")
            .args(["--user", &whoami()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = wait_for(Duration::from_secs(15), || {
            self.run("squeue", &["-h"]).1.trim().is_empty()
        });
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn whoami() -> String {
    String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string()
}

fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> Option<()> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

fn tb(args: &[&str]) -> (i32, String) {
    tb_test_support::tb(super::TB, args, &[("MOCK_KEY", "sk-mock-not-a-secret")])
}

fn status_json(camp: &Path) -> Value {
    let (_, text) = tb(&["campaign", "status", camp.to_str().unwrap(), "--json"]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// key -> (passed, result hashes).
fn outcomes(path: &Path) -> BTreeMap<String, (Value, Vec<Value>)> {
    let mut out = BTreeMap::new();
    for r in lines(path) {
        let hashes = r["verdict"]["state"]
            .as_array()
            .map(|a| a.iter().map(|s| s["result_hash"].clone()).collect())
            .unwrap_or_default();
        let k = r["key"].as_str().unwrap().to_string();
        assert!(
            out.insert(k.clone(), (r["test_result"]["result"].clone(), hashes))
                .is_none(),
            "{k} twice in {}",
            path.display()
        );
    }
    out
}

#[tb_test_support::needs(slurm)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: a one-node Slurm cluster runs a sharded campaign with a kill and a requeue"]
async fn a_slurm_array_with_a_killed_and_requeued_task_gives_every_key_once() {
    let t0 = Instant::now();
    let cluster = tokio::task::spawn_blocking(Cluster::start).await.unwrap();
    eprintln!("[{:.1}s] one-node cluster up", t0.elapsed().as_secs_f64());
    let example = super::common::example();
    let ds = tb_dataset::Dataset::open(&example).unwrap();
    let tasks = ds.load_test_list(Path::new("testlist.yaml")).unwrap();
    let mut by_query: HashMap<String, Vec<(String, Value)>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        let calls = if i % 2 == 0 {
            t.servers().iter().flat_map(|s| t.golden_calls(s)).collect()
        } else {
            Vec::new()
        };
        by_query.insert(t.query.clone().unwrap_or_default(), calls);
    }
    let server = MockServer::start().await.unwrap();
    super::common::script_roles(&server, by_query);
    for _ in 0..80 {
        server.push_fault("agent", Fault::Delay(Duration::from_millis(250)));
    }
    let work = tempfile::tempdir().unwrap();
    let config = super::common::mock_models_config(
        &server,
        &[
            "timeout: 20",
            "credential:",
            "  type: api-key",
            "  api_key: ${MOCK_KEY}",
        ],
    );
    let cfg = work.path().join("config.yaml");
    std::fs::write(&cfg, config).unwrap();
    let camp = work.path().join("camp");
    let ex = example.to_str().unwrap().to_string();
    let list = example.join("testlist.yaml").to_str().unwrap().to_string();
    let infer_opts = [
        "--data",
        &ex,
        "--test-list",
        &list,
        "--agent",
        "think",
        "-c",
        cfg.to_str().unwrap(),
        "--repeat",
        &REPEAT.to_string(),
    ]
    .map(str::to_string);
    let mut plan: Vec<String> = [
        "campaign",
        "plan",
        "--scheduler",
        "slurm",
        "--shards",
        &SHARDS.to_string(),
        "--cpus",
        "1",
        "--tb",
        env!("CARGO_BIN_EXE_tb"),
        "--output",
        camp.to_str().unwrap(),
        "--",
    ]
    .map(str::to_string)
    .to_vec();
    plan.extend(infer_opts.iter().cloned());
    plan.extend(["--concurrency".into(), "1".into()]);
    let (code, text) = tb(&plan.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{text}");
    // The whole script (an array over the shards, each task `tb campaign run --shard
    // "$SLURM_ARRAY_TASK_ID"`); the campaign's id is random.
    let script = std::fs::read_to_string(camp.join("slurm.sbatch")).unwrap();
    let planned: Value =
        serde_json::from_str(&std::fs::read_to_string(camp.join("campaign.json")).unwrap())
            .unwrap();
    let shown = tb_test_support::redact(
        &script,
        &[
            (work.path(), "[TMP]"),
            (Path::new(env!("CARGO_BIN_EXE_tb")), "[TB]"),
            (&tb_test_support::workspace_root(), "[WS]"),
        ],
    )
    .replace(planned["id"].as_str().unwrap(), "[ID]");
    insta::assert_snapshot!("cluster_slurm_sbatch", shown);
    // the biggest shard is the one to kill
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(camp.join("campaign.json")).unwrap())
            .unwrap();
    let id = m["id"].as_str().unwrap().to_string();
    let st = status_json(&camp);
    let victim = (0..SHARDS as usize)
        .max_by_key(|&i| st["shards"][i]["keys"].as_u64().unwrap())
        .unwrap();
    let victim_keys = usize::try_from(st["shards"][victim]["keys"].as_u64().unwrap()).unwrap();

    // submit
    let mut sbatch = cluster.cmd("sbatch");
    sbatch
        .args(["--parsable", camp.join("slurm.sbatch").to_str().unwrap()])
        .env("MOCK_KEY", "sk-mock-not-a-secret");
    let out = sbatch.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let task = format!("{job}_{victim}");
    let victim_out = camp.join(format!("shards/shard-{victim}.jsonl"));
    // kill it once it has written a record and is still running
    let t = tokio::task::spawn_blocking({
        let victim_out = victim_out.clone();
        move || {
            wait_for(Duration::from_mins(2), || {
                let n = lines(&victim_out).len();
                n >= 1 && n < victim_keys
            })
        }
    })
    .await
    .unwrap();
    assert!(
        t.is_some(),
        "shard {victim} never ran\n{}\n{}",
        std::fs::read_to_string(camp.join(format!("logs/shard-{victim}.log"))).unwrap_or_default(),
        cluster.logs()
    );
    let (ok, text) = cluster.run("scancel", &[&task]);
    assert!(ok, "{text}");
    let stopped = wait_for(Duration::from_secs(30), || {
        let (_, t) = cluster.run("squeue", &["-h", "-j", &task, "-o", "%T"]);
        !t.contains("RUNNING")
    });
    assert!(stopped.is_some(), "{}", cluster.logs());
    let before = lines(&victim_out).len();
    assert!(
        before < victim_keys,
        "killed mid-run: {before} of {victim_keys}"
    );
    eprintln!(
        "[{:.1}s] array task {task} killed with {before} of its {victim_keys} records written",
        t0.elapsed().as_secs_f64()
    );
    // the status, from the outputs alone, says the shard stopped (once the killed process
    // has let go of its output lock) with keys missing
    let st = tokio::task::spawn_blocking({
        let camp = camp.clone();
        move || {
            let mut st = Value::Null;
            wait_for(Duration::from_secs(30), || {
                st = status_json(&camp);
                st["shards"][victim]["state"] != "running"
            });
            st
        }
    })
    .await
    .unwrap();
    assert_eq!(st["shards"][victim]["state"], "stopped", "{st}");
    assert!(
        st["shards"][victim]["missing"].as_u64().unwrap() > 0,
        "{st}"
    );
    assert_eq!(st["complete"], false);
    // requeue it (a requeued job waits cred_expire; start it now)
    let (ok, text) = cluster.run("scontrol", &["requeue", &task]);
    assert!(ok, "{text}");
    let (_, upd) = cluster.run(
        "scontrol",
        &["update", &format!("JobId={task}"), "StartTime=now"],
    );
    eprintln!("[{:.1}s] requeued {task} {upd}", t0.elapsed().as_secs_f64());
    let finished = tokio::task::spawn_blocking({
        let job = job.clone();
        let conf = cluster.conf.clone();
        let squeue = cluster.bins["squeue"].clone();
        move || {
            wait_for(Duration::from_mins(3), || {
                let out = Command::new(&squeue)
                    .env("SLURM_CONF", &conf)
                    .args(["-h", "-j", &job])
                    .output()
                    .unwrap();
                out.status.success() && String::from_utf8_lossy(&out.stdout).trim().is_empty()
            })
        }
    })
    .await
    .unwrap();
    assert!(
        finished.is_some(),
        "the array did not finish\n{}",
        cluster.logs()
    );
    eprintln!("[{:.1}s] array finished", t0.elapsed().as_secs_f64());
    let log =
        std::fs::read_to_string(camp.join(format!("logs/shard-{victim}.log"))).unwrap_or_default();
    assert!(
        log.contains("CANCELLED")
            && log
                .matches(&format!("campaign {}", m["campaign"].as_str().unwrap()))
                .count()
                >= 2,
        "the task ran twice: {log}"
    );

    // every shard done, every key once
    let st = status_json(&camp);
    assert_eq!(st["complete"], true, "{st}\n{}", cluster.logs());
    let (code, text) = tb(&["campaign", "merge", camp.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    // The whole report; the hashes change with the example's files and the tools' texts.
    insta::with_settings!({filters => vec![(r"sha256:[0-9a-f]{64}", "sha256:[HASH]")]}, {
        insta::assert_snapshot!(
            "cluster_campaign_merge_output",
            tb_test_support::redact(&text, &[(work.path(), "[TMP]")])
        );
    });
    let merged = outcomes(&camp.join("merged.jsonl"));
    assert_eq!(merged.len(), (8 * REPEAT) as usize);
    assert!(
        lines(&camp.join("merged.jsonl"))
            .iter()
            .all(|r| r["provenance"]["campaign"]["id"] == id.as_str())
    );

    // a shard run again by mistake: nothing doubled
    let n0 = lines(&victim_out).len();
    let (code, text) = tb(&[
        "campaign",
        "run",
        camp.to_str().unwrap(),
        "--shard",
        &victim.to_string(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(lines(&victim_out).len(), n0);

    eprintln!("[{:.1}s] merged and verified", t0.elapsed().as_secs_f64());
    // the same campaign on one machine: the same verdicts
    let single = work.path().join("single.jsonl");
    let mut args: Vec<String> = vec!["infer".into()];
    args.extend(infer_opts.iter().cloned());
    args.extend(["--output".into(), single.to_str().unwrap().to_string()]);
    args.extend(["--concurrency".into(), "8".into()]);
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(&args)
        .env("TB_LOG", "error")
        .env("MOCK_KEY", "sk-mock-not-a-secret")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let single = outcomes(&single);
    assert_eq!(merged, single);
    let passed = single
        .values()
        .filter(|(p, _)| *p == Value::Bool(true))
        .count();
    assert!(
        passed > 0 && passed < single.len(),
        "mixed verdicts: {passed}"
    );
    eprintln!(
        "[{:.1}s] {} keys once each after the requeue, {passed} passed; verdicts equal a single-machine run",
        t0.elapsed().as_secs_f64(),
        merged.len()
    );
    drop(cluster);
}
