//! Record files of a campaign, read back: scanning (with torn-line detection), the outcome
//! of a record, `verify` (is a result complete and consistent?) and `merge` (shards into
//! one result). The rules are in `docs/campaigns.md`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use tb_core::attempt_key;

/// Errors of record files.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing a file failed.
    #[error("{}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The inputs of a merge cannot be combined.
    #[error("cannot merge: {0}")]
    Merge(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How an attempt ended, as far as a campaign is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Graded, and every check held.
    Passed,
    /// Graded, and a check failed (a model failure).
    Failed,
    /// An operational failure before or during the episode (`is_system_error`).
    SystemError,
    /// The grading itself failed (`test_result` missing or `test_result.is_system_error`,
    /// e.g. the judge model was down).
    TestError,
}

impl Outcome {
    /// The outcome of one record (a JSON object of ours or of the reference).
    pub fn of(v: &Value) -> Outcome {
        if v.get("is_system_error").and_then(Value::as_bool) != Some(false) {
            return Outcome::SystemError;
        }
        match v.get("test_result") {
            Some(t) if t.is_object() => {
                if t.get("is_system_error").and_then(Value::as_bool) != Some(false) {
                    Outcome::TestError
                } else if t.get("result").and_then(Value::as_bool) == Some(true) {
                    Outcome::Passed
                } else {
                    Outcome::Failed
                }
            }
            _ => Outcome::TestError,
        }
    }

    /// The outcome of a record of ours (the same rule as [`Outcome::of`]).
    pub fn of_record(r: &tb_core::TrialRecord) -> Outcome {
        if r.is_system_error {
            return Outcome::SystemError;
        }
        match &r.test_result {
            None => Outcome::TestError,
            Some(t) if t.is_system_error => Outcome::TestError,
            Some(t) if t.result => Outcome::Passed,
            Some(_) => Outcome::Failed,
        }
    }

    /// A verdict (passed or failed): the attempt is done and is never rerun.
    pub fn is_verdict(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Failed)
    }
}

/// The key of a record: `key`, else `uid` + `repetition` (or `metadata.repetition`).
pub fn record_key(v: &Value) -> Option<String> {
    if let Some(k) = v.get("key").and_then(Value::as_str) {
        return Some(k.to_string());
    }
    let uid = v.get("uid").and_then(Value::as_str)?;
    let rep = v
        .get("repetition")
        .or_else(|| v.pointer("/metadata/repetition"))
        .and_then(Value::as_u64)?;
    Some(attempt_key(uid, u32::try_from(rep).ok()?))
}

/// What a scan keeps of one record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordInfo {
    /// 1-based line.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: u64,
    /// Its key, if it has one.
    pub key: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// `metadata.scenario`.
    pub scenario: Option<String>,
    /// `provenance.bundle_hash`.
    pub bundle_hash: Option<String>,
    /// `provenance.config_hash`.
    pub config_hash: Option<String>,
    /// `metadata.error.type` (or `metadata.test_error.type`).
    pub error: Option<String>,
}

impl RecordInfo {
    fn of(line: usize, offset: u64, v: &Value) -> RecordInfo {
        let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
        RecordInfo {
            line,
            offset,
            key: record_key(v),
            outcome: Outcome::of(v),
            scenario: s("/metadata/scenario"),
            bundle_hash: s("/provenance/bundle_hash"),
            config_hash: s("/provenance/config_hash"),
            error: s("/metadata/error/type").or_else(|| s("/metadata/test_error/type")),
        }
    }
}

/// A last line without its newline: what a kill during a write leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line.
    pub line: usize,
    /// Where it starts (the length the file should be cut to).
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// A record file read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Complete lines that parsed as JSON objects, in file order.
    pub records: Vec<RecordInfo>,
    /// Complete lines that did not parse: (line, why).
    pub corrupt: Vec<(usize, String)>,
    /// A last line without a newline.
    pub torn_tail: Option<TornTail>,
}

impl Scan {
    /// Reads `path`; a missing file is an empty scan.
    pub fn read(path: &Path) -> Result<Scan, StoreError> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Scan::default()),
            Err(e) => return Err(io(path)(e)),
        };
        let mut r = std::io::BufReader::new(file);
        let mut scan = Scan::default();
        let mut buf = Vec::new();
        let (mut offset, mut line) = (0u64, 0usize);
        loop {
            buf.clear();
            let n = r.read_until(b'\n', &mut buf).map_err(io(path))?;
            if n == 0 {
                break;
            }
            line += 1;
            if buf.last() != Some(&b'\n') {
                scan.torn_tail = Some(TornTail {
                    line,
                    offset,
                    len: n as u64,
                });
                break;
            }
            let text = &buf[..n - 1];
            if !text.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<Value>(text) {
                    Ok(v) if v.is_object() => scan.records.push(RecordInfo::of(line, offset, &v)),
                    Ok(_) => scan.corrupt.push((line, "not a JSON object".into())),
                    Err(e) => scan.corrupt.push((line, e.to_string())),
                }
            }
            offset += n as u64;
        }
        Ok(scan)
    }

    /// Keys with a verdict record.
    pub fn verdict_keys(&self) -> BTreeSet<&str> {
        self.records
            .iter()
            .filter(|r| r.outcome.is_verdict())
            .filter_map(|r| r.key.as_deref())
            .collect()
    }
}

/// Cuts a torn last line off `path` (see [`TornTail`]); returns what was cut.
pub fn repair_torn_tail(path: &Path, scan: &Scan) -> Result<Option<TornTail>, StoreError> {
    let Some(t) = scan.torn_tail.clone() else {
        return Ok(None);
    };
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io(path))?;
    f.set_len(t.offset).map_err(io(path))?;
    f.sync_all().map_err(io(path))?;
    Ok(Some(t))
}

/// What `tb verify` found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifyReport {
    /// Keys expected.
    pub expected: usize,
    /// Expected keys with exactly one verdict record.
    pub complete: usize,
    /// Expected keys with no verdict record and no system-error record anywhere.
    pub missing: Vec<String>,
    /// Keys with more than one verdict record: (key, lines).
    pub duplicated: Vec<(String, Vec<usize>)>,
    /// Keys whose only records are system or test errors (in the output or the sidecar),
    /// with the error types: rerun with `--resume`.
    pub unresolved_errors: Vec<(String, Vec<String>)>,
    /// System-error or test-error records in the output itself (the output must hold
    /// verdicts only; `tb agg` would count them): (key, line).
    pub errors_in_output: Vec<(Option<String>, usize)>,
    /// Error records in the sidecar superseded by a verdict (accounted for).
    pub resolved_errors: usize,
    /// Records whose key is not expected: (key, line).
    pub unexpected: Vec<(String, usize)>,
    /// Lines that are not records (corrupt, torn, no key).
    pub unreadable: Vec<String>,
    /// Bundle hashes seen, with the number of records carrying each (`none` = missing).
    pub bundle_hashes: BTreeMap<String, usize>,
    /// Config hashes seen, likewise.
    pub config_hashes: BTreeMap<String, usize>,
    /// Hash disagreements with the run manifest.
    pub manifest_mismatch: Vec<String>,
}

impl VerifyReport {
    /// Every check held.
    pub fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.duplicated.is_empty()
            && self.unresolved_errors.is_empty()
            && self.errors_in_output.is_empty()
            && self.unexpected.is_empty()
            && self.unreadable.is_empty()
            && self.bundle_hashes.len() == 1
            && self.config_hashes.len() == 1
            && !self.bundle_hashes.contains_key("none")
            && !self.config_hashes.contains_key("none")
            && self.manifest_mismatch.is_empty()
    }
}

/// Checks a campaign's output (and its errors sidecar) against the expected keys: every
/// expected key has exactly one verdict record, no system error is left without a verdict
/// for its key, the output holds no error records, nothing unexpected or unreadable, and
/// every record carries the same bundle hash and config hash (those of `manifest`, when
/// given: its `provenance.bundle_hash` and `provenance.config_hash`).
pub fn verify(
    output: &Scan,
    errors: &Scan,
    expected: &BTreeSet<String>,
    manifest: Option<&Value>,
) -> VerifyReport {
    let mut rep = VerifyReport {
        expected: expected.len(),
        ..VerifyReport::default()
    };
    let mut verdict_lines: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut error_types: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (line, why) in &output.corrupt {
        rep.unreadable.push(format!("output line {line}: {why}"));
    }
    if let Some(t) = &output.torn_tail {
        rep.unreadable.push(format!(
            "output line {}: torn last line ({} bytes without a newline; `tb infer --resume` cuts it)",
            t.line, t.len
        ));
    }
    for r in &output.records {
        *rep.bundle_hashes
            .entry(r.bundle_hash.clone().unwrap_or_else(|| "none".into()))
            .or_default() += 1;
        *rep.config_hashes
            .entry(r.config_hash.clone().unwrap_or_else(|| "none".into()))
            .or_default() += 1;
        let Some(key) = r.key.as_deref() else {
            rep.unreadable
                .push(format!("output line {}: a record without a key", r.line));
            continue;
        };
        if !expected.contains(key) {
            rep.unexpected.push((key.to_string(), r.line));
            continue;
        }
        if r.outcome.is_verdict() {
            verdict_lines.entry(key).or_default().push(r.line);
        } else {
            rep.errors_in_output.push((Some(key.to_string()), r.line));
            error_types.entry(key).or_default().push(
                r.error
                    .clone()
                    .unwrap_or_else(|| format!("{:?}", r.outcome)),
            );
        }
    }
    for r in &errors.records {
        let Some(key) = r.key.as_deref() else {
            continue;
        };
        if verdict_lines.contains_key(key) {
            rep.resolved_errors += 1;
        } else if expected.contains(key) {
            error_types.entry(key).or_default().push(
                r.error
                    .clone()
                    .unwrap_or_else(|| format!("{:?}", r.outcome)),
            );
        }
    }
    for key in expected {
        match verdict_lines.get(key.as_str()) {
            Some(lines) if lines.len() == 1 => rep.complete += 1,
            Some(lines) => rep.duplicated.push((key.clone(), lines.clone())),
            None => match error_types.get(key.as_str()) {
                Some(types) => rep.unresolved_errors.push((key.clone(), types.clone())),
                None => rep.missing.push(key.clone()),
            },
        }
    }
    if let Some(m) = manifest {
        for (what, seen) in [
            ("bundle_hash", &rep.bundle_hashes),
            ("config_hash", &rep.config_hashes),
        ] {
            let want = m
                .pointer(&format!("/provenance/{what}"))
                .and_then(Value::as_str);
            match want {
                None => rep
                    .manifest_mismatch
                    .push(format!("the run manifest has no provenance.{what}")),
                Some(w) => {
                    for h in seen.keys().filter(|h| h.as_str() != w) {
                        rep.manifest_mismatch.push(format!(
                            "{} record(s) carry {what} {h}, the run manifest {w}",
                            seen[h]
                        ));
                    }
                }
            }
        }
    }
    rep
}

/// The absolute, symlink-free form of `p` (of its folder when the file does not exist yet), so
/// that `s0.jsonl`, `./s0.jsonl` and a link to it are seen as one file.
fn file_identity(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(parent), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

/// What a merge wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    /// Verdict records written to the output.
    pub records: usize,
    /// Error records written to the errors sidecar.
    pub errors: usize,
}

/// Merges shard outputs (and their errors sidecars, `(output, errors)` pairs) into one
/// output and one sidecar. Refused, writing nothing, when an input has a torn or corrupt
/// line or a record without a key, when a key has a verdict in more than one place
/// (duplicate, identical or not), or when the inputs disagree on the bundle or config hash.
/// Error records are kept (for audit) unless their key has a verdict. Files are written to
/// a temporary name and renamed.
pub fn merge(
    inputs: &[(PathBuf, PathBuf)],
    output: &Path,
    errors_output: &Path,
) -> Result<MergeReport, StoreError> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut hashes: BTreeSet<(Option<String>, Option<String>)> = BTreeSet::new();
    let mut scans = Vec::new();
    let mut given: Vec<(PathBuf, &Path)> = Vec::new();
    let (out_id, errs_id) = (file_identity(output), file_identity(errors_output));
    for (out, errs) in inputs {
        let id = file_identity(out);
        if out == output || errs == errors_output || id == out_id || file_identity(errs) == errs_id
        {
            return Err(StoreError::Merge(format!(
                "{} is both an input and the output",
                out.display()
            )));
        }
        if !out.is_file() {
            return Err(StoreError::Merge(format!(
                "{}: no such file",
                out.display()
            )));
        }
        if let Some((_, first)) = given.iter().find(|(g, _)| *g == id) {
            return Err(StoreError::Merge(format!(
                "{} is given twice (as {} and {})",
                id.display(),
                first.display(),
                out.display()
            )));
        }
        given.push((id, out));
        let so = Scan::read(out)?;
        let se = Scan::read(errs)?;
        for (p, s) in [(out, &so), (errs, &se)] {
            if let Some(t) = &s.torn_tail {
                problems.push(format!(
                    "{} line {}: torn last line (resume that shard first)",
                    p.display(),
                    t.line
                ));
            }
            for (l, why) in &s.corrupt {
                problems.push(format!("{} line {l}: {why}", p.display()));
            }
            for r in s.records.iter().filter(|r| r.key.is_none()) {
                problems.push(format!("{} line {}: no key", p.display(), r.line));
            }
        }
        for r in &so.records {
            hashes.insert((r.bundle_hash.clone(), r.config_hash.clone()));
            let Some(k) = &r.key else { continue };
            if !r.outcome.is_verdict() {
                continue;
            }
            let here = format!("{} line {}", out.display(), r.line);
            if let Some(first) = seen.insert(k.clone(), here.clone()) {
                problems.push(format!("duplicate key {k}: {first} and {here}"));
            }
        }
        scans.push((so, se));
    }
    if hashes.len() > 1 {
        let list: Vec<String> = hashes
            .iter()
            .map(|(b, c)| {
                format!(
                    "bundle {} config {}",
                    b.as_deref().unwrap_or("none"),
                    c.as_deref().unwrap_or("none")
                )
            })
            .collect();
        problems.push(format!(
            "the inputs were run on different data or configs: {}",
            list.join("; ")
        ));
    }
    if !problems.is_empty() {
        let n = problems.len();
        problems.truncate(20);
        return Err(StoreError::Merge(format!(
            "{n} problem(s):\n  {}",
            problems.join("\n  ")
        )));
    }
    let mut report = MergeReport::default();
    let write = |dest: &Path,
                 pick: &dyn Fn(&RecordInfo, &Scan, &Scan) -> bool,
                 which: usize|
     -> Result<usize, StoreError> {
        let tmp = tmp_name(dest);
        if let Some(dir) = dest.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io(&tmp))?);
        let mut n = 0;
        for ((out, errs), (so, se)) in inputs.iter().zip(&scans) {
            let (path, scan) = if which == 0 { (out, so) } else { (errs, se) };
            let wanted: BTreeSet<usize> = scan
                .records
                .iter()
                .filter(|r| pick(r, so, se))
                .map(|r| r.line)
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let f = std::fs::File::open(path).map_err(io(path))?;
            for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
                let line = line.map_err(io(path))?;
                if wanted.contains(&(i + 1)) {
                    w.write_all(line.as_bytes()).map_err(io(&tmp))?;
                    w.write_all(b"\n").map_err(io(&tmp))?;
                    n += 1;
                }
            }
        }
        let f = w.into_inner().map_err(|e| io(&tmp)(e.into_error()))?;
        f.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, dest).map_err(io(dest))?;
        Ok(n)
    };
    report.records = write(output, &|r, _, _| r.outcome.is_verdict(), 0)?;
    report.errors = write(
        errors_output,
        &|r, _, _| r.key.as_ref().is_none_or(|k| !seen.contains_key(k)),
        1,
    )?;
    Ok(report)
}

/// `<path>.tmp` beside `path`.
pub fn tmp_name(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Writes JSON to `path` atomically (temporary file, sync, rename), with every registered
/// secret and URL userinfo redacted ([`tb_llm::redact`]).
pub fn write_json_atomic(path: &Path, v: &Value) -> Result<(), StoreError> {
    let tmp = tmp_name(path);
    let text = serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let text = tb_llm::redact::redact(&text);
    {
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(text.as_bytes()).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(key: &str, outcome: Outcome, bundle: &str) -> String {
        let (sys, tr) = match outcome {
            Outcome::Passed => (
                false,
                json!({"result": true, "reward": 1.0, "is_system_error": false}),
            ),
            Outcome::Failed => (
                false,
                json!({"result": false, "reward": 0.0, "is_system_error": false}),
            ),
            Outcome::SystemError => (true, Value::Null),
            Outcome::TestError => (
                false,
                json!({"result": false, "reward": 0.0, "is_system_error": true}),
            ),
        };
        json!({"uid": key.split("::").next().unwrap(), "key": key, "is_system_error": sys, "test_result": tr,
               "metadata": {"scenario": "s", "error": if sys { json!({"type": "HttpError"}) } else { Value::Null }},
               "provenance": {"bundle_hash": bundle, "config_hash": "c"}})
        .to_string()
            + "\n"
    }

    fn expected(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(std::string::ToString::to_string).collect()
    }

    #[test]
    fn outcomes_follow_the_canonical_validator() {
        assert_eq!(
            Outcome::of(&json!({"is_system_error": true})),
            Outcome::SystemError
        );
        assert_eq!(Outcome::of(&json!({})), Outcome::SystemError);
        assert_eq!(
            Outcome::of(&json!({"is_system_error": false, "test_result": null})),
            Outcome::TestError
        );
        assert_eq!(
            Outcome::of(
                &json!({"is_system_error": false, "test_result": {"result": true, "is_system_error": true}})
            ),
            Outcome::TestError
        );
        assert_eq!(
            Outcome::of(
                &json!({"is_system_error": false, "test_result": {"result": true, "is_system_error": false}})
            ),
            Outcome::Passed
        );
        assert_eq!(
            record_key(&json!({"uid": "a.py:t", "metadata": {"repetition": 3}})).as_deref(),
            Some("a.py:t::repeat::3")
        );
        assert_eq!(record_key(&json!({"uid": "a.py:t"})), None);
    }

    #[test]
    fn scan_finds_torn_tails_and_corrupt_lines_and_repair_cuts_the_tail() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("o.jsonl");
        let good = rec("a::repeat::0", Outcome::Passed, "b");
        std::fs::write(&p, format!("{good}not json\n\n{}", &good[..20])).unwrap();
        let s = Scan::read(&p).unwrap();
        assert_eq!(s.records.len(), 1);
        assert_eq!(s.corrupt.len(), 1);
        assert_eq!(s.corrupt[0].0, 2);
        let t = s.torn_tail.clone().unwrap();
        assert_eq!((t.line, t.len), (4, 20));
        assert_eq!(repair_torn_tail(&p, &s).unwrap(), Some(t));
        let s2 = Scan::read(&p).unwrap();
        assert!(s2.torn_tail.is_none());
        assert_eq!(s2.records, s.records);
        assert_eq!(Scan::read(&d.path().join("none")).unwrap(), Scan::default());
    }

    #[test]
    fn verify_accepts_only_one_verdict_per_expected_key_and_resolved_errors() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o.jsonl"), d.path().join("e.jsonl"));
        let keys = expected(&["a::repeat::0", "a::repeat::1", "b::repeat::0"]);
        std::fs::write(
            &o,
            [
                rec("a::repeat::0", Outcome::Passed, "b"),
                rec("a::repeat::1", Outcome::Failed, "b"),
            ]
            .concat(),
        )
        .unwrap();
        std::fs::write(&e, rec("b::repeat::0", Outcome::SystemError, "b")).unwrap();
        // The output and errors files as they are now, against the expected keys.
        let verify_files = |manifest: Option<&serde_json::Value>| {
            verify(
                &Scan::read(&o).unwrap(),
                &Scan::read(&e).unwrap(),
                &keys,
                manifest,
            )
        };
        let r = verify_files(None);
        assert!(!r.ok());
        assert_eq!(
            r.unresolved_errors,
            vec![("b::repeat::0".to_string(), vec!["HttpError".to_string()])]
        );
        assert!(r.missing.is_empty());
        // the rerun lands a verdict: the error is resolved
        let mut f = std::fs::OpenOptions::new().append(true).open(&o).unwrap();
        f.write_all(rec("b::repeat::0", Outcome::Passed, "b").as_bytes())
            .unwrap();
        let r = verify_files(None);
        assert!(r.ok(), "{r:?}");
        assert_eq!((r.complete, r.resolved_errors), (3, 1));
        let manifest = json!({"provenance": {"bundle_hash": "b", "config_hash": "c"}});
        assert!(verify_files(Some(&manifest)).ok());
        let other = json!({"provenance": {"bundle_hash": "x", "config_hash": "c"}});
        let r = verify_files(Some(&other));
        assert!(!r.ok() && r.manifest_mismatch.len() == 1);
        // a duplicate, an error in the output, an unexpected key and another bundle hash
        f.write_all(rec("a::repeat::0", Outcome::Failed, "b").as_bytes())
            .unwrap();
        f.write_all(rec("a::repeat::1", Outcome::TestError, "b").as_bytes())
            .unwrap();
        f.write_all(rec("z::repeat::0", Outcome::Passed, "other").as_bytes())
            .unwrap();
        let r = verify_files(None);
        assert_eq!(r.duplicated, vec![("a::repeat::0".to_string(), vec![1, 4])]);
        assert_eq!(
            r.errors_in_output,
            vec![(Some("a::repeat::1".to_string()), 5)]
        );
        assert_eq!(r.unexpected, vec![("z::repeat::0".to_string(), 6)]);
        assert_eq!(r.bundle_hashes.len(), 2);
        assert!(!r.ok());
        // a missing key
        let r = verify(&Scan::default(), &Scan::default(), &keys, None);
        assert_eq!(r.missing.len(), 3);
        assert!(!r.ok());
    }

    #[test]
    fn merge_rejects_duplicates_and_mixed_hashes_and_keeps_unresolved_errors() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::write(p("s0.jsonl"), rec("a::repeat::0", Outcome::Passed, "b")).unwrap();
        std::fs::write(
            p("s0_errors.jsonl"),
            rec("a::repeat::0", Outcome::SystemError, "b"),
        )
        .unwrap();
        std::fs::write(p("s1.jsonl"), rec("b::repeat::0", Outcome::Failed, "b")).unwrap();
        std::fs::write(
            p("s1_errors.jsonl"),
            rec("c::repeat::0", Outcome::SystemError, "b"),
        )
        .unwrap();
        let pair = |n: &str| (p(&format!("{n}.jsonl")), p(&format!("{n}_errors.jsonl")));
        let r = merge(
            &[pair("s0"), pair("s1")],
            &p("m.jsonl"),
            &p("m_errors.jsonl"),
        )
        .unwrap();
        assert_eq!(
            r,
            MergeReport {
                records: 2,
                errors: 1
            }
        );
        let errs = std::fs::read_to_string(p("m_errors.jsonl")).unwrap();
        assert!(errs.contains("c::repeat::0") && !errs.contains("a::repeat::0"));
        // refused merges into x.jsonl: the error
        let refused = |inputs: &[(PathBuf, PathBuf)]| {
            merge(inputs, &p("x.jsonl"), &p("x_errors.jsonl")).unwrap_err()
        };
        // the same shard twice, under two spellings: refused before reading
        let dotted = (d.path().join(".").join("s0.jsonl"), p("s0_errors.jsonl"));
        let e = refused(&[pair("s0"), dotted]);
        let s0 = std::fs::canonicalize(p("s0.jsonl")).unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "cannot merge: {} is given twice (as {} and {})",
                s0.display(),
                p("s0.jsonl").display(),
                d.path().join(".").join("s0.jsonl").display()
            )
        );
        // an input named as the output under another spelling
        let e = merge(
            &[pair("s1")],
            &d.path().join(".").join("s1.jsonl"),
            &p("x_errors.jsonl"),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("both an input and the output"),
            "{e}"
        );
        // a copy of a shard: duplicate keys
        std::fs::copy(p("s0.jsonl"), p("s0b.jsonl")).unwrap();
        std::fs::copy(p("s0_errors.jsonl"), p("s0b_errors.jsonl")).unwrap();
        let e = refused(&[pair("s0"), pair("s0b")]);
        assert!(e.to_string().contains("duplicate key a::repeat::0"), "{e}");
        assert!(!p("x.jsonl").exists());
        // a shard on another bundle
        std::fs::write(p("s2.jsonl"), rec("d::repeat::0", Outcome::Passed, "other")).unwrap();
        let e = refused(&[pair("s0"), pair("s2")]);
        assert!(e.to_string().contains("different data or configs"), "{e}");
        // a torn shard
        std::fs::write(p("s3.jsonl"), "{\"key\":").unwrap();
        let e = refused(&[pair("s3")]);
        assert!(e.to_string().contains("torn"), "{e}");
    }
}
