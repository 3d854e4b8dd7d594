//! Text from models, tools, task files and records made safe to write to a terminal.
//!
//! A record can hold anything a model wrote: escape sequences that set the window title or
//! draw hyperlinks, clear the screen, move the cursor back (carriage return, backspace) and
//! so overwrite what was printed, or reorder text (bidirectional overrides). [`printable`]
//! shows each such character as `�` (U+FFFD), so what a reader sees is what the record holds;
//! it is what `tb tui` draws and what the console commands print.

use std::borrow::Cow;

/// The character a neutralised control character is shown as.
pub const REPLACEMENT: char = '\u{fffd}';

/// Whether `c` changes how a terminal shows other text: C0 and C1 controls (ESC, CSI, OSC's
/// BEL, CR, backspace, ...), DEL, and the bidirectional embedding, override and isolate
/// characters.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe`] character but `\n` and `\t` shown as `�`; `\r\n` becomes
/// `\n`. Borrowed when nothing needed replacing.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\t' => out.push(c),
            c if is_unsafe(c) => out.push(REPLACEMENT),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`printable`] for text shown on one line (a table cell, a name): line breaks and tabs are
/// shown as `�` too.
pub fn printable_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if is_unsafe(c) { REPLACEMENT } else { c })
            .collect(),
    )
}

/// JSON text safe for a terminal without changing what it holds: characters a terminal acts
/// on that JSON writers leave raw (DEL, C1 controls, bidirectional overrides; they can only
/// stand inside strings) become `\uXXXX` escapes. C0 controls are escaped by every JSON
/// writer already.
pub fn printable_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_unsafe_in_json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe_in_json(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn is_unsafe_in_json(c: char) -> bool {
    is_unsafe(c) && !matches!(c, '\n' | '\t' | '\r' | ' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_and_layout_kept() {
        assert_eq!(printable("a\u{1b}[2Jb\tc\r\nd"), "a\u{fffd}[2Jb\tc\nd");
        assert_eq!(
            printable("\u{1b}]0;pwned\u{7}x\rY\u{8}\u{9b}31m\u{202e}z"),
            "\u{fffd}]0;pwned\u{fffd}x\u{fffd}Y\u{fffd}\u{fffd}31m\u{fffd}z"
        );
        assert!(matches!(printable("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(printable_line("a\nb\tc"), "a\u{fffd}b\u{fffd}c");
    }

    #[test]
    fn json_keeps_its_value() {
        let v = serde_json::json!({"m": "a\u{1b}]8;;http://x\u{7}\u{9b}2J\u{202e}\u{7f}b"});
        let text = serde_json::to_string(&v).unwrap();
        let safe = printable_json(&text);
        assert!(!safe.chars().any(is_unsafe));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), v);
    }
}
