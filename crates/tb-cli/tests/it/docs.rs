//! The documentation is checked like code: README.md, CONTRIBUTING.md, ARCHITECTURE.md and
//! docs/*.md. Every relative link and every repository path in backticks exists; README.md
//! stays at most 10 KB; every `tb ...` line in a shell block parses with the real command line
//! (each subcommand and flag exists, each value parses); every `tb <command>` the README names
//! exists; user text names no issue numbers, work branches or work rounds. The examples in
//! `tb <command> --help` are held to the same rules.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The checked files, as (path relative to the workspace, text).
fn doc_files() -> Vec<(PathBuf, String)> {
    let root = workspace();
    let mut names: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n))
                .unwrap_or_else(|e| panic!("{}: {e}", n.display()));
            (n, text)
        })
        .collect()
}

/// The lines of `text` outside fenced code blocks (and not their fences), with their line
/// numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// Markdown link targets `[text](target)` outside code, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// Relative links of `text` (a file at `file`, relative to `root`) whose target does not exist.
fn broken_links(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let dir = root
        .join(file)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    links(text)
        .into_iter()
        .filter(|(_, target)| {
            !(target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
                || target.starts_with('#'))
        })
        .filter(|(_, target)| {
            let path = target.split('#').next().unwrap_or_default();
            !dir.join(path).exists()
        })
        .map(|(line, target)| format!("{}:{line}: broken link `{target}`", file.display()))
        .collect()
}

/// Where paths into this repository start.
const REPO_PREFIXES: &[&str] = &["crates/", "examples/", "scripts/", "docs/", ".ci/"];

/// Inline code spans of `text` outside fenced blocks, with their line numbers.
fn code_spans(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let mut parts = line.split('`');
        parts.next();
        while let Some(span) = parts.next() {
            out.push((n, span.to_string()));
            if parts.next().is_none() {
                break;
            }
        }
    }
    out
}

/// Repository paths in backticks (`crates/...`, `examples/...`, ...) that do not exist.
fn missing_paths(root: &Path, file: &Path, text: &str) -> Vec<String> {
    code_spans(text)
        .into_iter()
        .filter_map(|(line, span)| {
            let word = span.split_whitespace().next()?.to_string();
            let is_repo_path = REPO_PREFIXES.iter().any(|p| word.starts_with(p));
            // Placeholders and patterns (`crates/<crate>/`, `tables/*.tables`) name no one file.
            let pattern = word.contains(['<', '*', '{', '$', '[']);
            (is_repo_path && !pattern).then_some((line, word))
        })
        .filter(|(_, word)| {
            // `path:line` and `path::item` name a place in a file.
            let path = word.split(':').next().unwrap_or_default();
            !root.join(path).exists()
        })
        .map(|(line, word)| format!("{}:{line}: no such path `{word}`", file.display()))
        .collect()
}

/// The command lines of the shell blocks (```sh, ```bash or no language: every line;
/// ```console: the lines after a `$ ` prompt): line continuations joined, one entry per line.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut block: Option<&str> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => Some(lang.trim()),
            };
            continue;
        }
        let command = match block {
            Some("" | "sh" | "bash" | "shell") => trimmed,
            Some("console") => match (trimmed.strip_prefix("$ "), &pending) {
                (Some(c), _) => c,
                (None, Some(_)) => trimmed,
                (None, None) => continue,
            },
            _ => continue,
        };
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        joined.push_str(command);
        if let Some(cut) = joined.strip_suffix('\\') {
            pending = Some((start, format!("{cut} ")));
        } else {
            out.push((start, joined));
        }
    }
    out
}

/// The words of one shell line, split into simple commands at `&&`, `||`, `;` and `|`, with
/// comments and redirections dropped and quotes removed.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                    started = true;
                }
            }
            (None, '#') if !started => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    let mut out = vec![Vec::new()];
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        match w.as_str() {
            "&&" | "||" | ";" | "|" => out.push(Vec::new()),
            ">" | ">>" | "<" | "2>" => skip_next = true,
            _ if w.starts_with('>') || w.starts_with("2>") => {}
            _ => out.last_mut().expect("one command at least").push(w),
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

/// Every `tb ...` command of `text`'s shell blocks, with its line.
fn tb_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    shell_lines(text)
        .into_iter()
        .flat_map(|(line, l)| commands(&l).into_iter().map(move |c| (line, c)))
        .filter(|(_, c)| c[0] == "tb")
        .collect()
}

/// Runs the built `tb`.
fn tb(args: &[String]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(args)
        .env_remove("TB_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("tb runs");
    let (_, stdout, stderr) = super::common::code_and_streams(&out);
    (out.status.success(), stdout, stderr)
}

/// Whether `tb args...` parses: the command runs with `--help` added after the last checked
/// word, which clap answers with the help text (exit 0) once every word before it parsed; an
/// unknown subcommand or flag, or a value that does not parse, is an error first. Words after a
/// `--` are another program's and are not checked. `Err` holds clap's message.
fn parses(command: &[String]) -> Result<(), String> {
    let mut args: Vec<String> = command[1..].to_vec();
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.insert(at, "--help".to_string());
    let (ok, _, stderr) = tb(&args);
    if ok {
        Ok(())
    } else {
        Err(stderr.trim().to_string())
    }
}

/// The `tb` commands of `text` that do not parse, named by file and line.
fn unparsed(file: &Path, text: &str) -> Vec<String> {
    tb_commands(text)
        .into_iter()
        .filter_map(|(line, c)| {
            parses(&c)
                .err()
                .map(|e| format!("{}:{line}: `{}`: {e}", file.display(), c.join(" ")))
        })
        .collect()
}

/// Words that belong to a work diary, not to user text.
fn history(file: &str, text: &str) -> Vec<String> {
    const PHRASES: &[&str] = &[
        "(issue",
        "issue #",
        "previous stop",
        "first round",
        "second round",
        "third round",
        "round 2",
        "the evening before",
    ];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        let mut hits: Vec<&str> = PHRASES
            .iter()
            .copied()
            .filter(|p| lower.contains(p))
            .collect();
        // `issue 26`, `issues 12`, and branch names `h-26...`.
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "issue" | "issues")
                && pair[1].starts_with(|c: char| c.is_ascii_digit())
            {
                hits.push("issue number");
            }
        }
        if words.iter().any(|w| {
            w.strip_prefix("h-")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        }) {
            hits.push("branch name");
        }
        for hit in hits {
            out.push(format!("{file}:{}: {hit}: {}", i + 1, line.trim()));
        }
    }
    out
}

/// The subcommands `tb --help` lists.
fn subcommands() -> Vec<String> {
    let (ok, help, _) = tb(&["--help".to_string()]);
    assert!(ok, "tb --help");
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn assert_none(what: &str, problems: &[String]) {
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

/// Asserts that `check` (the workspace root, a checked file's path and its text) finds no
/// problem in any checked file.
fn assert_none_in_docs(what: &str, check: fn(&Path, &Path, &str) -> Vec<String>) {
    let root = workspace();
    let problems: Vec<String> = doc_files()
        .iter()
        .flat_map(|(f, t)| check(&root, f, t))
        .collect();
    assert_none(what, &problems);
}

#[test]
fn every_relative_link_resolves() {
    assert_none_in_docs("broken links", broken_links);
}

#[test]
fn every_repository_path_exists() {
    assert_none_in_docs("paths that do not exist", missing_paths);
}

/// ARCHITECTURE.md names files relative to the crate whose section (`### `crates/<crate>``)
/// it is in (`src/policy.rs`, `state/table.rs`, `assets/`): each must be a file or folder of
/// that crate (or of its `src/`), as the whole paths must exist (above). Paths outside the
/// repository (`~/.cache/...`) are not checked.
#[test]
fn every_path_in_architecture_exists() {
    let root = workspace();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut crates: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    let spans = code_spans(&text);
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') {
            crates = if line.starts_with("### ") {
                line.split('`')
                    .filter(|w| w.starts_with("crates/"))
                    .map(str::to_string)
                    .collect()
            } else {
                Vec::new()
            };
        }
        if crates.is_empty() {
            continue;
        }
        for (_, span) in spans.iter().filter(|(l, _)| *l == i + 1) {
            let Some(word) = span.split_whitespace().next() else {
                continue;
            };
            let relative = !REPO_PREFIXES.iter().any(|p| word.starts_with(p))
                && !word.starts_with(['/', '~'])
                && !word.contains(['<', '*', '{', '$', '[', ':'])
                && (Path::new(word)
                    .extension()
                    .is_some_and(|x| x == "rs" || x == "toml")
                    || word.ends_with('/'));
            if !relative {
                continue;
            }
            checked += 1;
            let found = crates.iter().any(|c| {
                root.join(c).join(word).exists() || root.join(c).join("src").join(word).exists()
            });
            if !found {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: `{word}` is in none of {}",
                    i + 1,
                    crates.join(", ")
                ));
            }
        }
    }
    assert!(
        checked >= 5,
        "only {checked} crate-relative paths found: the scan is broken"
    );
    assert_none("crate-relative paths that do not exist", &problems);
}

#[test]
fn readme_is_at_most_10_kb() {
    let len = std::fs::metadata(workspace().join("README.md"))
        .expect("README.md")
        .len();
    assert!(len <= 10 * 1024, "README.md is {len} bytes; at most 10,240");
}

#[test]
fn every_tb_command_line_in_the_docs_parses() {
    let files = doc_files();
    let count: usize = files.iter().map(|(_, t)| tb_commands(t).len()).sum();
    assert!(
        count >= 20,
        "only {count} tb command lines found: the block scan is broken"
    );
    let problems: Vec<String> = files.iter().flat_map(|(f, t)| unparsed(f, t)).collect();
    assert_none("tb command lines that do not parse", &problems);
}

#[test]
fn every_command_the_readme_names_exists() {
    let text = std::fs::read_to_string(workspace().join("README.md")).expect("README.md");
    let known = subcommands();
    let mut named: Vec<(usize, String)> = code_spans(&text)
        .into_iter()
        .filter_map(|(line, span)| {
            let sub = span
                .strip_prefix("tb ")?
                .split_whitespace()
                .next()?
                .to_string();
            sub.chars()
                .all(|c| c.is_ascii_lowercase() || c == '-')
                .then_some((line, sub))
        })
        .collect();
    named.extend(
        tb_commands(&text)
            .into_iter()
            .map(|(line, c)| (line, c.get(1).cloned().unwrap_or_default())),
    );
    named.retain(|(_, sub)| !sub.starts_with('-'));
    assert!(
        named.len() >= 15,
        "only {} commands found in README.md",
        named.len()
    );
    let unknown: Vec<String> = named
        .iter()
        .filter(|(_, sub)| !known.contains(sub))
        .map(|(line, sub)| format!("README.md:{line}: `tb {sub}` is not a command"))
        .collect();
    assert_none("unknown commands", &unknown);
}

#[test]
fn user_text_names_no_issues_branches_or_rounds() {
    let problems: Vec<String> = doc_files()
        .iter()
        .flat_map(|(f, t)| history(&f.display().to_string(), t))
        .collect();
    assert_none("history in user text", &problems);
}

#[test]
fn help_opens_with_what_tb_is_and_every_command_has_a_parsing_example() {
    let (ok, help, _) = tb(&["--help".to_string()]);
    assert!(ok);
    let first = help.lines().next().unwrap_or_default();
    assert!(
        first.contains("agents") && first != "The `tb` binary.",
        "tb --help opens with `{first}`"
    );
    let subs = subcommands();
    assert!(subs.len() >= 20, "tb --help lists {subs:?}");
    let mut problems = Vec::new();
    for sub in &subs {
        let (ok, text, stderr) = tb(&[sub.clone(), "--help".to_string()]);
        assert!(ok, "tb {sub} --help: {stderr}");
        let examples: Vec<Vec<String>> = text
            .lines()
            .skip_while(|l| !l.starts_with("Examples:"))
            .skip(1)
            .flat_map(commands)
            .filter(|c| c[0] == "tb")
            .collect();
        if examples.is_empty() {
            problems.push(format!("tb {sub} --help has no example"));
        }
        for e in &examples {
            if let Err(err) = parses(e) {
                problems.push(format!("tb {sub} --help: `{}`: {err}", e.join(" ")));
            }
        }
        problems.extend(history(&format!("tb {sub} --help"), &text));
    }
    assert_none("help texts", &problems);
}

#[test]
fn completions_and_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (ok, out, err) = tb(&["completions".to_string(), shell.to_string()]);
        assert!(ok, "tb completions {shell}: {err}");
        assert!(
            out.contains("mcp-start"),
            "{shell} completions name the commands"
        );
    }
    let (ok, out, err) = tb(&["man".to_string()]);
    assert!(ok, "tb man: {err}");
    assert!(
        out.starts_with(".ie") || out.starts_with(".TH"),
        "roff: {}",
        &out[..80.min(out.len())]
    );
    assert!(
        out.contains("mcp\\-start"),
        "the man page lists the commands"
    );
}

// The checks themselves fail on planted mistakes.

#[test]
fn a_planted_broken_link_is_found() {
    let text = "See [the guide](docs/index.md) and [gone](docs/no-such-page.md#top).\n\
                ```sh\n[not a link](nowhere.md)\n```\n";
    let found = broken_links(&workspace(), Path::new("README.md"), text);
    assert_eq!(
        found,
        ["README.md:1: broken link `docs/no-such-page.md#top`"]
    );
}

#[test]
fn a_planted_missing_path_is_found() {
    let text = "Code: `crates/tb-cli/src/main.rs`, `crates/tb-cli/src/nosuch.rs:12`, \
                `crates/<crate>/tests/it/`, `../shared/elsewhere.md`.\n";
    let found = missing_paths(&workspace(), Path::new("docs/x.md"), text);
    assert_eq!(
        found,
        ["docs/x.md:1: no such path `crates/tb-cli/src/nosuch.rs:12`"]
    );
}

#[test]
fn a_planted_misspelled_flag_is_found() {
    let text = "```sh\n\
                tb agg out.jsonl   # fine\n\
                tb infer --data examples/brightside --agnet golden \\\n    --repeat 3\n\
                cat x | tb nosuchcommand > y\n\
                tb audit --format pdf\n\
                ```\n";
    let found = unparsed(Path::new("docs/x.md"), text);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with(
            "docs/x.md:3: `tb infer --data examples/brightside --agnet golden --repeat 3`"
        ),
        "{}",
        found[0]
    );
    assert!(found[0].contains("--agnet"), "{}", found[0]);
    assert!(
        found[1].starts_with("docs/x.md:5: `tb nosuchcommand`"),
        "{}",
        found[1]
    );
    assert!(found[2].contains("pdf"), "{}", found[2]);
}

#[test]
fn planted_history_is_found() {
    let found = history(
        "docs/x.md",
        "Faster since issue 26 (h-26start), see the previous stop.\nFine text.\n",
    );
    assert_eq!(found.len(), 3, "{found:#?}");
}

#[test]
fn shell_lines_are_split_into_commands() {
    assert_eq!(
        commands("JOB=$(sbatch x) && tb campaign status runs/m   # progress"),
        [
            vec!["JOB=$(sbatch", "x)"],
            vec!["tb", "campaign", "status", "runs/m"]
        ]
    );
    assert_eq!(
        commands(r#"tb tools --task "a b.py:t" > out.json 2>/dev/null"#),
        [vec!["tb", "tools", "--task", "a b.py:t"]]
    );
}

#[test]
fn console_blocks_check_only_prompted_lines() {
    let text = "```console\n$ tb --version\ntb 0.1.0\n$ tb agg --nosuch\n```\n";
    let found = unparsed(Path::new("docs/x.md"), text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("docs/x.md:4: `tb agg --nosuch`"),
        "{}",
        found[0]
    );
}
