//! Campaigns: many attempts (task x repetition) run concurrently into one keyed output that
//! survives endpoint failures, kills and restarts, and can be split into shards.
//!
//! - Every attempt has a key, `<uid>::repeat::<n>` ([`tb_core::attempt_key`]).
//! - A finished attempt is written as soon as it ends (completion order, no head-of-line
//!   blocking), one line per record, and synced to disk. Attempts with a verdict go to the
//!   output; attempts that ended in a system or test error go to the errors sidecar, never
//!   to the output (so the output holds model outcomes only).
//! - [`Mode::Resume`] reopens an output: a torn last line (a kill during a write) is cut,
//!   keys that already have a verdict are skipped, everything else is run again.
//! - [`Shard`] partitions keys by a hash of the key, so shards are independent jobs.
//! - The output is locked while a run writes it: two runs cannot interleave.
//!
//! `docs/campaigns.md` has the rules; [`crate::store`] reads the files back.

use crate::schedule::{self, StartOrder};
use crate::store::{Outcome, RecordInfo, Scan, StoreError};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tb_core::{Task, TrialRecord, attempt_key};
use tb_eval::attempt::attempt_with;
use tb_eval::record::system_error_record;
use tb_eval::run::{AgentChoice, Models, RunEnv};

/// Errors of a campaign.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// A record file could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file operation failed.
    #[error("{}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `--shard` is not `i/n` with `i < n`.
    #[error("--shard `{0}`: expected i/n with 0 <= i < n (e.g. 0/3)")]
    BadShard(String),
    /// The output (or its errors sidecar) already holds records and neither resume nor
    /// overwrite was asked for.
    #[error(
        "{path} (with its errors sidecar) already holds {records} record(s): pass --resume to continue that run, or --overwrite to start over"
    )]
    Exists {
        /// The output.
        path: PathBuf,
        /// Records in it.
        records: usize,
    },
    /// Another process is writing the output.
    #[error("{0} is being written by another run (it is locked)")]
    Locked(PathBuf),
    /// The output was produced from other data or another config.
    #[error(
        "{path}: {count} record(s) were produced with another {what} ({theirs}; this run: {ours}); resuming would mix results: use another output"
    )]
    Mismatch {
        /// The output.
        path: PathBuf,
        /// `bundle hash` or `config hash`.
        what: &'static str,
        /// Records that differ.
        count: usize,
        /// One of theirs.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// The output holds more than one verdict record for a key: which one counts is unclear.
    #[error(
        "{path}: key {key} has {} verdict records (lines {}); a resumed run would count one of them arbitrarily: remove the extra lines (or `tb verify` the file) and resume again",
        .lines.len(),
        .lines.iter().map(std::string::ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Duplicate {
        /// The output.
        path: PathBuf,
        /// The key.
        key: String,
        /// Its lines (1-based).
        lines: Vec<usize>,
    },
    /// The run manifest exists but cannot be read as one.
    #[error(
        "{path}: the run manifest is not valid ({why}); it is kept as it is: repair or remove it (a run without a manifest starts a new one) and resume again"
    )]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// The `sessions` of an existing run manifest (resume): none when the file does not exist;
/// a manifest that does not parse, is not an object, or whose `sessions` is not a list is
/// refused (never replaced silently).
pub fn manifest_sessions(path: &Path) -> Result<Vec<serde_json::Value>, CampaignError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(path)(e)),
    };
    let bad = |why: String| CampaignError::BadManifest {
        path: path.to_path_buf(),
        why,
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let serde_json::Value::Object(m) = v else {
        return Err(bad("not a JSON object".into()));
    };
    match m.get("sessions") {
        None => Ok(Vec::new()),
        Some(serde_json::Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(bad("`sessions` is not a list".into())),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CampaignError + '_ {
    move |source| CampaignError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One shard of a campaign: the keys `k` with `shard_of(k, count) == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u32,
    /// Number of shards, at least 1.
    pub count: u32,
}

impl Shard {
    /// Parses `i/n`.
    pub fn parse(s: &str) -> Result<Shard, CampaignError> {
        let bad = || CampaignError::BadShard(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard runs `key`.
    pub fn owns(&self, key: &str) -> bool {
        shard_of(key, self.count) == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard of a key among `count`: the first 8 bytes of sha256(key), big-endian, modulo
/// `count`. It depends on the key alone (not on list order or on the other keys).
pub fn shard_of(key: &str, count: u32) -> u32 {
    let d = Sha256::digest(key.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    // The remainder is below `count`, a u32.
    u32::try_from(u64::from_be_bytes(b) % u64::from(count.max(1))).unwrap_or(0)
}

/// One planned attempt.
#[derive(Debug, Clone)]
pub struct Planned {
    /// `<uid>::repeat::<n>`.
    pub key: String,
    /// The task.
    pub task: Arc<Task>,
    /// The repetition, from 0.
    pub repetition: u32,
}

/// The attempts of a campaign (or of one shard), repetition-major: every task's repetition
/// 0, then every task's repetition 1, ... (so early results cover every task).
pub fn plan(tasks: &[Arc<Task>], repeat: u32, shard: Option<Shard>) -> Vec<Planned> {
    let mut out = Vec::new();
    for r in 0..repeat {
        for t in tasks {
            let key = attempt_key(&t.uid, r);
            if shard.is_none_or(|s| s.owns(&key)) {
                out.push(Planned {
                    key,
                    task: t.clone(),
                    repetition: r,
                });
            }
        }
    }
    out
}

/// The files of a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignFiles {
    /// Records with a verdict (JSONL).
    pub output: PathBuf,
    /// Records of attempts that ended in a system or test error (JSONL).
    pub errors: PathBuf,
    /// The run manifest (JSON).
    pub manifest: PathBuf,
}

impl CampaignFiles {
    /// The files of `output`: the errors sidecar `errors` or `<stem>_errors.jsonl`, the
    /// manifest `<stem>_run_metadata.json` (`<stem>` is the output without its extension).
    pub fn new(output: &Path, errors: Option<&Path>) -> CampaignFiles {
        let stem = output.with_extension("");
        let side = |suffix: &str| PathBuf::from(format!("{}{suffix}", stem.display()));
        CampaignFiles {
            output: output.to_path_buf(),
            errors: errors.map_or_else(|| side("_errors.jsonl"), Path::to_path_buf),
            manifest: side("_run_metadata.json"),
        }
    }
}

/// How to treat an existing output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Start a new output; refused when it already holds records.
    Fresh,
    /// Continue an output: skip keys with a verdict, rerun the rest.
    Resume,
    /// Empty the output and its errors sidecar, then start.
    Overwrite,
}

/// An output opened for a run: locked, repaired, with what is left to do.
#[derive(Debug)]
pub struct Opened {
    /// The files.
    pub files: CampaignFiles,
    out: std::fs::File,
    errs: std::fs::File,
    /// Attempts to run.
    pub todo: Vec<Planned>,
    /// Verdict records already in the output for planned keys (resume).
    pub prior: Vec<RecordInfo>,
    /// What opening repaired or noticed (torn lines cut, corrupt lines), for the log.
    pub notes: Vec<String>,
}

/// Opens (creates, or reopens with `Mode::Resume`) the output of a campaign and decides
/// what is left to run. `bundle_hash` and `config_hash` are this run's: resuming an output
/// whose verdict records carry others is refused.
pub fn open(
    files: CampaignFiles,
    planned: Vec<Planned>,
    mode: Mode,
    bundle_hash: &str,
    config_hash: &str,
) -> Result<Opened, CampaignError> {
    for p in [&files.output, &files.errors, &files.manifest] {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
    }
    let open_append = |p: &Path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(io(p))
    };
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    if mode == Mode::Fresh && size(&files.output) + size(&files.errors) > 0 {
        let records =
            Scan::read(&files.output)?.records.len() + Scan::read(&files.errors)?.records.len();
        return Err(CampaignError::Exists {
            path: files.output.clone(),
            records,
        });
    }
    let out = open_append(&files.output)?;
    match out.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(CampaignError::Locked(files.output.clone()));
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(&files.output)(e)),
    }
    let errs = open_append(&files.errors)?;
    let mut notes = Vec::new();
    if mode != Mode::Resume {
        out.set_len(0).map_err(io(&files.output))?;
        errs.set_len(0).map_err(io(&files.errors))?;
        return Ok(Opened {
            files,
            out,
            errs,
            todo: planned,
            prior: Vec::new(),
            notes,
        });
    }
    let scan = Scan::read(&files.output)?;
    for (path, s, f) in [
        (&files.output, &scan, &out),
        (&files.errors, &Scan::read(&files.errors)?, &errs),
    ] {
        if let Some(t) = &s.torn_tail {
            f.set_len(t.offset).map_err(io(path))?;
            f.sync_all().map_err(io(path))?;
            notes.push(format!(
                "{}: cut a torn last line (line {}, {} bytes): its attempt runs again",
                path.display(),
                t.line,
                t.len
            ));
        }
        for (line, why) in &s.corrupt {
            notes.push(format!(
                "{} line {line}: not a record ({why}); left in place, `tb verify` will report it",
                path.display()
            ));
        }
    }
    let planned_keys: BTreeSet<&str> = planned.iter().map(|p| p.key.as_str()).collect();
    for (what, ours, get) in [
        (
            "bundle hash",
            bundle_hash,
            (|r: &RecordInfo| r.bundle_hash.clone()) as fn(&RecordInfo) -> Option<String>,
        ),
        ("config hash", config_hash, |r: &RecordInfo| {
            r.config_hash.clone()
        }),
    ] {
        let differ: Vec<String> = scan
            .records
            .iter()
            .filter(|r| r.outcome.is_verdict())
            .map(|r| get(r).unwrap_or_else(|| "none".into()))
            .filter(|h| h != ours)
            .collect();
        if let Some(theirs) = differ.first() {
            return Err(CampaignError::Mismatch {
                path: files.output.clone(),
                what,
                count: differ.len(),
                theirs: theirs.clone(),
                ours: ours.to_string(),
            });
        }
    }
    let mut lines_of = std::collections::BTreeMap::<&str, Vec<usize>>::new();
    for r in scan.records.iter().filter(|r| r.outcome.is_verdict()) {
        if let Some(k) = &r.key {
            lines_of.entry(k.as_str()).or_default().push(r.line);
        }
    }
    if let Some((key, lines)) = lines_of.into_iter().find(|(_, l)| l.len() > 1) {
        return Err(CampaignError::Duplicate {
            path: files.output.clone(),
            key: key.to_string(),
            lines,
        });
    }
    let mut done = BTreeSet::new();
    let mut prior = Vec::new();
    for r in scan.records {
        if let Some(k) = &r.key
            && r.outcome.is_verdict()
            && planned_keys.contains(k.as_str())
            && done.insert(k.clone())
        {
            prior.push(r);
        }
    }
    let todo = planned
        .into_iter()
        .filter(|p| !done.contains(&p.key))
        .collect();
    Ok(Opened {
        files,
        out,
        errs,
        todo,
        prior,
        notes,
    })
}

/// What a run reports as it goes.
pub trait Observer: Send {
    /// An attempt started.
    fn started(&mut self, _key: &str) {}
    /// An attempt ended and its record is on disk.
    fn finished(&mut self, _record: &TrialRecord, _outcome: Outcome) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Attempts run.
    pub attempted: usize,
    /// Of those, verdicts written to the output.
    pub verdicts: usize,
    /// Of those, passed.
    pub passed: usize,
    /// Attempts written to the errors sidecar (system and test errors).
    pub errors: usize,
}

/// Per-role limits on model requests in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleLimits {
    /// Agent model requests.
    pub agent: Option<usize>,
    /// Simulated-user requests.
    pub user: Option<usize>,
    /// Judge requests.
    pub judge: Option<usize>,
}

/// The models with each role's limit as a gate shared by all its requests.
pub fn gate_models(models: Models, limits: RoleLimits) -> Models {
    let gate = |c: Option<tb_llm::LlmClient>, n: Option<usize>| match (c, n) {
        (Some(c), Some(n)) => Some(c.with_gate(Arc::new(tokio::sync::Semaphore::new(n.max(1))))),
        (c, _) => c,
    };
    Models {
        agent: gate(models.agent, limits.agent),
        user: gate(models.user, limits.user),
        judge: gate(models.judge, limits.judge),
        prompts: models.prompts,
    }
}

enum Event {
    Started(String),
    Done(Box<TrialRecord>),
}

/// Writes records to a new file (refusing one that exists), one JSON line each, synced: a
/// file `tb show`, `tb run-test` and `tb agg` read as they read a campaign's output.
pub fn write_new(path: &Path, records: &[TrialRecord]) -> Result<(), CampaignError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io(path))?;
    for r in records {
        append(&mut f, path, r)?;
    }
    f.sync_data().map_err(io(path))
}

/// Appends one record line, with every registered secret redacted (see [`tb_llm::redact`]:
/// an endpoint that echoes the API key in its error body never puts it in a record).
fn append(f: &mut std::fs::File, path: &Path, rec: &TrialRecord) -> Result<(), CampaignError> {
    let mut line = Vec::new();
    record_line(&mut line, path, rec)?;
    f.write_all(&line).map_err(io(path))
}

/// One record's line (redacted, see [`append`]), appended to `buf`.
fn record_line(buf: &mut Vec<u8>, path: &Path, rec: &TrialRecord) -> Result<(), CampaignError> {
    let text = serde_json::to_string(rec).map_err(|e| io(path)(e.into()))?;
    buf.extend_from_slice(tb_llm::redact::redact(&text).as_bytes());
    buf.push(b'\n');
    Ok(())
}

/// Writes and syncs a batch of lines to both files on the blocking pool: a `sync_data` takes
/// milliseconds, which would hold a runtime worker (one of two, on a small machine) while the
/// attempts in flight wait for it. Records that end meanwhile wait in the channel and go in
/// the next batch (group commit).
async fn write_batch(
    files: &CampaignFiles,
    out: &std::fs::File,
    errs: &std::fs::File,
    out_lines: Vec<u8>,
    err_lines: Vec<u8>,
) -> Result<(), CampaignError> {
    if out_lines.is_empty() && err_lines.is_empty() {
        return Ok(());
    }
    let (out, errs) = (
        out.try_clone().map_err(io(&files.output))?,
        errs.try_clone().map_err(io(&files.errors))?,
    );
    let output = files.output.clone();
    let files = files.clone();
    let write = move || -> Result<(), CampaignError> {
        for (mut f, path, lines) in [
            (&out, &files.output, out_lines),
            (&errs, &files.errors, err_lines),
        ] {
            if !lines.is_empty() {
                f.write_all(&lines).map_err(io(path))?;
                f.sync_data().map_err(io(path))?;
            }
        }
        Ok(())
    };
    match tokio::task::spawn_blocking(write).await {
        Ok(r) => r,
        Err(e) => Err(CampaignError::Io {
            path: output,
            source: std::io::Error::other(format!("the record writer failed: {e}")),
        }),
    }
}

/// Runs the attempts left in `opened`, at most `concurrency` at a time, writing each record
/// as it ends: verdicts to the output, system and test errors to the errors sidecar. Records
/// that end together are synced together. An attempt that panics becomes a system error
/// (`Panic`); no key is dropped. With `remote`, each attempt runs in a session of that
/// remote tool backend ([`tb_eval::attempt::attempt_with`]). Attempts start in the plan's order
/// ([`StartOrder::Plan`]); [`run_ordered`] takes another.
pub async fn run(
    env: Arc<RunEnv>,
    remote: Option<Arc<dyn tb_eval::tools::RemoteTools>>,
    choice: AgentChoice,
    opened: &mut Opened,
    concurrency: usize,
    observer: &mut dyn Observer,
) -> Result<RunStats, CampaignError> {
    run_ordered(
        env,
        remote,
        choice,
        opened,
        concurrency,
        StartOrder::Plan,
        observer,
    )
    .await
}

/// [`run`] with the attempts started in `order` ([`crate::schedule`]): `concurrency`
/// slots each take the next attempt of that order when they free, so every attempt left in
/// `opened` is started exactly once.
pub async fn run_ordered(
    env: Arc<RunEnv>,
    remote: Option<Arc<dyn tb_eval::tools::RemoteTools>>,
    choice: AgentChoice,
    opened: &mut Opened,
    concurrency: usize,
    order: StartOrder,
    observer: &mut dyn Observer,
) -> Result<RunStats, CampaignError> {
    let todo = std::mem::take(&mut opened.todo);
    let slots = concurrency.max(1).min(todo.len());
    let weights: Vec<u64> = todo
        .iter()
        .map(|p| schedule::expected_turns(&p.task))
        .collect();
    let order = Arc::new(schedule::start_order(&weights, slots, order));
    let todo = Arc::new(todo);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let mut handles = Vec::new();
    for _ in 0..slots {
        let (env, tx, remote) = (env.clone(), tx.clone(), remote.clone());
        let (order, todo, next) = (order.clone(), todo.clone(), next.clone());
        handles.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = order.get(i).and_then(|&j| todo.get(j)) else {
                    return;
                };
                let _ = tx.send(Event::Started(job.key.clone()));
                let (e2, t2, rep) = (env.clone(), job.task.clone(), job.repetition);
                let remote = remote.clone();
                let inner = tokio::spawn(async move {
                    attempt_with(&e2, remote.as_deref(), choice, &t2, rep).await
                });
                let rec = match inner.await {
                    Ok(r) => r,
                    Err(e) => {
                        let why = if e.is_panic() {
                            "the attempt panicked"
                        } else {
                            "the attempt was cancelled"
                        };
                        system_error_record(&env, &job.task, rep, "Panic", why)
                    }
                };
                let _ = tx.send(Event::Done(Box::new(rec)));
            }
        }));
    }
    drop(tx);
    let mut stats = RunStats::default();
    let files = opened.files.clone();
    let result = async {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while let Ok(more) = rx.try_recv() {
                batch.push(more);
            }
            let (mut out_lines, mut err_lines) = (Vec::new(), Vec::new());
            for ev in &batch {
                if let Event::Done(rec) = ev {
                    if Outcome::of_record(rec).is_verdict() {
                        record_line(&mut out_lines, &files.output, rec)?;
                    } else {
                        record_line(&mut err_lines, &files.errors, rec)?;
                    }
                }
            }
            write_batch(&files, &opened.out, &opened.errs, out_lines, err_lines).await?;
            for ev in batch {
                match ev {
                    Event::Started(k) => observer.started(&k),
                    Event::Done(rec) => {
                        let outcome = Outcome::of_record(&rec);
                        stats.attempted += 1;
                        if outcome.is_verdict() {
                            stats.verdicts += 1;
                        } else {
                            stats.errors += 1;
                        }
                        if outcome == Outcome::Passed {
                            stats.passed += 1;
                        }
                        observer.finished(&rec, outcome);
                    }
                }
            }
        }
        Ok::<(), CampaignError>(())
    }
    .await;
    if result.is_err() {
        for h in &handles {
            h.abort();
        }
    }
    result.map(|()| stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_keys() {
        let keys: Vec<String> = (0..300)
            .map(|i| attempt_key(&format!("f.py:t{}", i / 5), i % 5))
            .collect();
        let mut counts = [0usize; 3];
        for k in &keys {
            let owners: Vec<u32> = (0..3)
                .filter(|&i| Shard { index: i, count: 3 }.owns(k))
                .collect();
            assert_eq!(owners.len(), 1, "{k}");
            counts[owners[0] as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 60), "{counts:?}");
        assert!(Shard { index: 0, count: 1 }.owns("x"));
        assert_eq!(
            shard_of("a.py:t::repeat::0", 7),
            shard_of("a.py:t::repeat::0", 7)
        );
    }

    #[test]
    fn shard_parse_rejects_bad_specs() {
        assert_eq!(Shard::parse("1/3").unwrap(), Shard { index: 1, count: 3 });
        for bad in ["3/3", "0/0", "1", "a/b", "-1/2", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 2, count: 5 }.to_string(), "2/5");
    }

    #[test]
    fn files_sit_beside_the_output() {
        let f = CampaignFiles::new(Path::new("runs/x.jsonl"), None);
        assert_eq!(f.errors, PathBuf::from("runs/x_errors.jsonl"));
        assert_eq!(f.manifest, PathBuf::from("runs/x_run_metadata.json"));
        let f = CampaignFiles::new(Path::new("x.jsonl"), Some(Path::new("e.jsonl")));
        assert_eq!(f.errors, PathBuf::from("e.jsonl"));
    }

    #[test]
    fn resume_refuses_a_duplicate_record_and_a_corrupt_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.jsonl");
        let rec = |key: &str, result: bool| {
            serde_json::json!({"uid": key.split("::").next().unwrap(), "key": key, "is_system_error": false,
                "test_result": {"result": result, "reward": if result { 1.0 } else { 0.0 }, "is_system_error": false},
                "provenance": {"bundle_hash": "b", "config_hash": "c"}})
            .to_string()
                + "\n"
        };
        std::fs::write(
            &out,
            rec("a.py:t::repeat::0", true)
                + &rec("a.py:u::repeat::0", false)
                + &rec("a.py:t::repeat::0", false),
        )
        .unwrap();
        let files = CampaignFiles::new(&out, None);
        let Err(e) = open(files.clone(), Vec::new(), Mode::Resume, "b", "c") else {
            panic!("a duplicate must be refused");
        };
        let msg = e.to_string();
        assert!(
            matches!(&e, CampaignError::Duplicate { key, lines, .. } if key == "a.py:t::repeat::0" && lines == &vec![1, 3]),
            "{msg}"
        );
        assert!(msg.contains("lines 1, 3"), "{msg}");
        // Without the duplicate, the same output resumes.
        std::fs::write(&out, rec("a.py:t::repeat::0", true)).unwrap();
        assert!(open(files.clone(), Vec::new(), Mode::Resume, "b", "c").is_ok());

        // The manifest: missing is a new one; corrupt or the wrong shape is refused and kept.
        assert!(manifest_sessions(&files.manifest).unwrap().is_empty());
        std::fs::write(&files.manifest, r#"{"sessions": [{"started": "x"}]}"#).unwrap();
        assert_eq!(manifest_sessions(&files.manifest).unwrap().len(), 1);
        for bad in ["{\"sessions\": [", "[1]", r#"{"sessions": 3}"#] {
            std::fs::write(&files.manifest, bad).unwrap();
            let e = manifest_sessions(&files.manifest).unwrap_err();
            assert!(matches!(e, CampaignError::BadManifest { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("_run_metadata.json"), "{e}");
            assert_eq!(std::fs::read_to_string(&files.manifest).unwrap(), bad);
        }
    }
}
