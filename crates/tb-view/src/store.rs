//! The run files, read as they grow.
//!
//! Each file is read once up to its last complete line; later reads start where the previous
//! one stopped and parse only the new lines, so a file that `tb infer` is still writing shows
//! its new attempts on the next request. The text after the last newline is the line being
//! written: it is shown once it parses as a whole record (a run written without a final
//! newline), and otherwise only counted as pending, never reported as an error. A complete line
//! that does not parse is kept as a bad line with its number and the reason. A file that shrank
//! (rewritten with `--overwrite`) is read again from the start.

use crate::ViewError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use tb_metrics::Run;

/// A line of a run file that is not a record.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// Why it is not a record.
    pub message: String,
}

/// One run file and what has been read of it.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    stem: String,
    /// Bytes of complete lines consumed.
    offset: u64,
    /// Number of complete lines consumed.
    lines: usize,
    /// Length and modification time at the last read.
    seen: Option<(u64, Option<SystemTime>)>,
    /// The attempts of complete lines in file order, then the last line without its newline
    /// when it parses as a record (`tail`). Shared with the pages' view of the run: appending
    /// copies it only while a request still holds an older view.
    run: Arc<Run>,
    /// The last attempt of `run` is the line being written.
    tail: bool,
    /// Bytes after the last newline (the line being written).
    pub pending_bytes: u64,
    /// Lines that are not records.
    pub bad: Vec<BadLine>,
    /// Why the file could not be read at the last attempt, if it could not.
    pub unreadable: Option<String>,
    /// Grows by one whenever what is shown changes.
    pub generation: u64,
}

impl RunFile {
    /// A file not read yet.
    pub fn new(path: &Path) -> RunFile {
        let stem = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let run = Arc::new(tb_metrics::run_of(
            &path.display().to_string(),
            &stem,
            Vec::new(),
        ));
        RunFile {
            path: path.to_path_buf(),
            stem,
            offset: 0,
            lines: 0,
            seen: None,
            run,
            tail: false,
            pending_bytes: 0,
            bad: Vec::new(),
            unreadable: None,
            generation: 0,
        }
    }

    /// The file as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads what was appended since the last call. Returns whether anything shown changed.
    pub fn refresh(&mut self) -> bool {
        match self.read_new() {
            Ok(changed) => {
                if self.unreadable.take().is_some() || changed {
                    self.generation += 1;
                    return true;
                }
                false
            }
            Err(e) => {
                let msg = e.to_string();
                if self.unreadable.as_deref() == Some(msg.as_str()) {
                    return false;
                }
                self.unreadable = Some(msg);
                self.generation += 1;
                true
            }
        }
    }

    fn read_new(&mut self) -> Result<bool, ViewError> {
        let path = self.path.display().to_string();
        let io = |e: std::io::Error| ViewError::Io {
            path: path.clone(),
            message: e.to_string(),
        };
        let mut f = File::open(&self.path).map_err(io)?;
        let meta = f.metadata().map_err(io)?;
        let stamp = (meta.len(), meta.modified().ok());
        if self.seen == Some(stamp) {
            return Ok(false);
        }
        let mut changed = false;
        if meta.len() < self.offset {
            // Rewritten: start again.
            *self = RunFile {
                generation: self.generation,
                ..RunFile::new(&self.path)
            };
            changed = true;
        }
        self.seen = Some(stamp);
        f.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let mut buf = Vec::new();
        f.take(meta.len() - self.offset)
            .read_to_end(&mut buf)
            .map_err(io)?;
        let file = self.path.display().to_string();
        let run = Arc::make_mut(&mut self.run);
        let mut attempts = std::mem::take(&mut run.attempts);
        if std::mem::take(&mut self.tail) {
            attempts.pop();
            changed = true;
        }
        let complete_len = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let body = &buf[..complete_len.saturating_sub(1)];
        for raw in body.split(|b| *b == b'\n').take_while(|_| complete_len > 0) {
            self.lines += 1;
            let line = self.lines;
            let Ok(text) = std::str::from_utf8(raw) else {
                self.bad.push(BadLine {
                    line,
                    message: "not UTF-8 text".into(),
                });
                changed = true;
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            changed = true;
            match tb_metrics::parse_line(text, line) {
                Ok(a) => attempts.push(a),
                Err(message) => self.bad.push(BadLine { line, message }),
            }
        }
        self.offset += complete_len as u64;
        let rest = &buf[complete_len..];
        let old_pending = self.pending_bytes;
        self.pending_bytes = rest.len() as u64;
        let tail = std::str::from_utf8(rest)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .and_then(|t| tb_metrics::parse_line(t, self.lines + 1).ok());
        if tail.is_some() || old_pending != self.pending_bytes {
            changed = true;
        }
        if let Some(t) = tail {
            attempts.push(t);
            self.tail = true;
        }
        *run = tb_metrics::run_of(&file, &self.stem, attempts);
        Ok(changed)
    }

    /// The attempts read so far, as a run (the model named from the records, else the stem).
    pub fn run(&self) -> Arc<Run> {
        self.run.clone()
    }

    /// Whether the next [`RunFile::refresh`] has anything to read: the file's length or
    /// modification time changed, or it cannot be read for the first time.
    pub fn stale(&self) -> bool {
        match std::fs::metadata(&self.path) {
            Ok(m) => self.seen != Some((m.len(), m.modified().ok())) || self.unreadable.is_some(),
            Err(_) => self.unreadable.is_none(),
        }
    }

    /// Whether the last line is still being written (text after the last newline that is not
    /// a whole record yet).
    pub fn writing(&self) -> bool {
        self.pending_bytes > 0 && !self.tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    const REC: &str = r#"{"uid":"a.py:t","messages":[],"test_result":{"result":true}}"#;

    #[test]
    fn lines_are_numbered_across_reads_and_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        std::fs::write(&p, format!("{REC}\n\n{{oops\n")).unwrap();
        let mut f = RunFile::new(&p);
        assert!(f.refresh());
        assert!(!f.refresh(), "nothing new");
        assert_eq!(f.run().attempts.len(), 1);
        assert_eq!(f.bad.len(), 1);
        assert_eq!(f.bad[0].line, 3);
        let mut w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        writeln!(w, "{REC}").unwrap();
        w.write_all(b"\xff\n").unwrap();
        write!(w, "{}", &REC[..10]).unwrap();
        drop(w);
        assert!(f.refresh());
        let run = f.run();
        assert_eq!(
            run.attempts.iter().map(|a| a.line).collect::<Vec<_>>(),
            [1, 4]
        );
        assert_eq!(f.bad[1].line, 5);
        assert!(f.bad[1].message.contains("UTF-8"));
        assert!(f.writing(), "the half line is pending, not bad");
        assert_eq!(f.bad.len(), 2);
    }

    #[test]
    fn a_missing_file_is_unreadable_then_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("later.jsonl");
        let mut f = RunFile::new(&p);
        assert!(f.refresh());
        assert!(f.unreadable.as_deref().unwrap().contains("later.jsonl"));
        assert!(!f.refresh(), "the same error is not a change");
        std::fs::write(&p, format!("{REC}\n")).unwrap();
        assert!(f.refresh());
        assert!(f.unreadable.is_none());
        assert_eq!(f.run().attempts.len(), 1);
    }
}
