//! Python's `textwrap.dedent`, exactly (the CPython <= 3.13 algorithm).

/// Remove the longest common leading whitespace (spaces and tabs, compared literally) from
/// every line, as `textwrap.dedent` does:
///
/// - lines made only of spaces and tabs are emptied first and do not count for the margin;
/// - the margin is the longest common prefix of the other lines' leading `[ \t]*` runs;
/// - only `\n` separates lines.
///
/// ```
/// assert_eq!(tb_dataset::dedent("\n    a: 1\n      b\n  \n"), "\na: 1\n  b\n\n");
/// ```
pub fn dedent(text: &str) -> String {
    // Pass 1: margin over lines that are not whitespace-only.
    let mut margin: Option<&str> = None;
    for line in text.split('\n') {
        let ws_len = line.len() - line.trim_start_matches([' ', '\t']).len();
        if ws_len == line.len() {
            continue; // whitespace-only (or empty)
        }
        let indent = &line[..ws_len];
        margin = Some(match margin {
            None => indent,
            Some(m) if indent.starts_with(m) => m,
            Some(m) if m.starts_with(indent) => indent,
            Some(m) => {
                let common = m
                    .bytes()
                    .zip(indent.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &m[..common]
            }
        });
    }
    let margin = margin.unwrap_or("");
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let ws_only = line.bytes().all(|b| b == b' ' || b == b'\t');
        if ws_only {
            continue;
        }
        out.push_str(line.strip_prefix(margin).unwrap_or(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::dedent;

    #[test]
    fn basic() {
        assert_eq!(dedent("  a\n  b"), "a\nb");
        assert_eq!(dedent("  a\n    b\n"), "a\n  b\n");
        assert_eq!(dedent("a\n  b"), "a\n  b");
        assert_eq!(dedent(""), "");
    }

    #[test]
    fn whitespace_only_lines_are_emptied_and_ignored() {
        assert_eq!(dedent("    a\n  \n    b"), "a\n\nb");
        assert_eq!(dedent("    a\n\t\n    b\n   "), "a\n\nb\n");
    }

    #[test]
    fn tabs_and_spaces_compare_literally() {
        // "\t" and "    " share no prefix: nothing is removed.
        assert_eq!(dedent("\ta\n    b"), "\ta\n    b");
        // common prefix " " of " \t" and "  ".
        assert_eq!(dedent(" \ta\n  b"), "\ta\n b");
    }

    #[test]
    fn other_whitespace_is_content() {
        // \r and \x0c are not [ \t]: such lines count with an empty margin... unless they
        // start with the margin.
        assert_eq!(dedent("  a\n  \r"), "a\n\r");
        assert_eq!(dedent("  a\n\x0c"), "  a\n\x0c");
    }
}
