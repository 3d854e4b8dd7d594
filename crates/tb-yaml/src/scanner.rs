//! YAML 1.1 scanner with PyYAML's exact tokenisation rules.
//!
//! The structure (simple keys, indentation stack, scalar folding) follows PyYAML's
//! `scanner.py` (MIT licence) closely, so that what it accepts, rejects and folds is the same.
//! It scans eagerly: the whole input becomes a token vector.

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use super::YamlError;

/// Characters PyYAML treats as line breaks (YAML 1.1 includes NEL, LS and PS).
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// `'\0'` (end of input), blank or break.
fn is_blankz(c: char) -> bool {
    matches!(c, '\0' | ' ' | '\t') || is_break(c)
}

/// `'\0'` or break.
fn is_breakz(c: char) -> bool {
    c == '\0' || is_break(c)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// A position in the input (0-based, as PyYAML's marks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Mark {
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    StreamStart,
    StreamEnd,
    /// `%YAML` or `%TAG` (other directives are ignored, as PyYAML does).
    Directive(Directive),
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowMappingStart,
    FlowSequenceEnd,
    FlowMappingEnd,
    Key,
    Value,
    BlockEntry,
    FlowEntry,
    Alias(String),
    Anchor(String),
    /// (handle, suffix); handle is `None` for verbatim tags and for the bare `!`.
    Tag(Option<String>, String),
    Scalar {
        value: String,
        plain: bool,
        style: char,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Directive {
    Yaml(u64, u64),
    Tag(String, String),
    Other,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: Mark,
}

#[derive(Debug, Clone, Copy)]
struct SimpleKey {
    token_number: usize,
    required: bool,
    index: usize,
    line: usize,
    column: usize,
    mark: Mark,
}

pub(crate) struct Scanner {
    chars: Vec<char>,
    pointer: usize,
    mark: Mark,
    flow_level: usize,
    tokens: Vec<Token>,
    indent: isize,
    indents: Vec<isize>,
    allow_simple_key: bool,
    /// Keyed by flow level; at most one per level.
    possible_simple_keys: Vec<Option<SimpleKey>>,
}

type R<T> = Result<T, YamlError>;

/// A column as an indentation level (the indentation stack uses -1 for "none"). A column is
/// below the input's length, which never exceeds `isize::MAX`, so the saturation cannot happen.
fn col(column: usize) -> isize {
    isize::try_from(column).unwrap_or(isize::MAX)
}

fn err(mark: Mark, context: &str, problem: String) -> YamlError {
    YamlError {
        line: mark.line + 1,
        column: mark.column + 1,
        message: if context.is_empty() {
            problem
        } else {
            format!("{context}: {problem}")
        },
    }
}

impl Scanner {
    /// Scan the whole input.
    pub(crate) fn scan(input: &str) -> R<Vec<Token>> {
        let mut s = Scanner {
            chars: input.chars().collect(),
            pointer: 0,
            mark: Mark::default(),
            flow_level: 0,
            tokens: Vec::new(),
            indent: -1,
            indents: Vec::new(),
            allow_simple_key: true,
            possible_simple_keys: vec![None],
        };
        s.tokens.push(Token {
            tok: Tok::StreamStart,
            start: s.mark,
        });
        loop {
            if s.fetch_more_tokens()? {
                break;
            }
        }
        Ok(s.tokens)
    }

    fn peek(&self, k: usize) -> char {
        self.chars.get(self.pointer + k).copied().unwrap_or('\0')
    }

    fn ch(&self) -> char {
        self.peek(0)
    }

    fn prefix(&self, len: usize) -> String {
        let rest = self.chars.get(self.pointer..).unwrap_or_default();
        rest.iter().take(len).collect()
    }

    fn prefix_is(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek(i) == c)
    }

    fn forward(&mut self, mut len: usize) {
        while len > 0 {
            let c = self.ch();
            if c == '\0' && self.pointer >= self.chars.len() {
                return;
            }
            self.pointer += 1;
            self.mark.index += 1;
            if matches!(c, '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
                || (c == '\r' && self.ch() != '\n')
            {
                self.mark.line += 1;
                self.mark.column = 0;
            } else if c != '\u{FEFF}' {
                self.mark.column += 1;
            }
            len -= 1;
        }
    }

    fn push(&mut self, tok: Tok, start: Mark) {
        self.tokens.push(Token { tok, start });
    }

    /// Returns true when the stream end was produced.
    /// The error `expected <what>, but found <found>` while scanning `context`, at the mark.
    fn expected(&self, context: &str, what: &str, found: char) -> YamlError {
        err(
            self.mark,
            context,
            format!("expected {what}, but found {}", py_repr_char(found)),
        )
    }

    /// Moves past spaces.
    fn skip_spaces(&mut self) {
        while self.ch() == ' ' {
            self.forward(1);
        }
    }

    /// Moves past a comment, up to its line break.
    fn skip_comment(&mut self) {
        if self.ch() == '#' {
            while !is_breakz(self.ch()) {
                self.forward(1);
            }
        }
    }

    /// A one-character indicator token at the mark.
    fn push_indicator(&mut self, tok: Tok) {
        let start = self.mark;
        self.forward(1);
        self.push(tok, start);
    }

    /// A scalar token that started at `start`.
    fn push_scalar(&mut self, value: String, plain: bool, style: char, start: Mark) {
        self.push(
            Tok::Scalar {
                value,
                plain,
                style,
            },
            start,
        );
    }

    /// Before a `-`, `?` or `:` in block context: refused where no simple key may start
    /// (`what`: "sequence entries", ...); where it indents, `start` opens a block collection.
    fn block_indicator(&mut self, what: &str, start: Tok) -> R<()> {
        if self.flow_level == 0 {
            if !self.allow_simple_key {
                return Err(err(self.mark, "", format!("{what} are not allowed here")));
            }
            if self.add_indent(col(self.mark.column)) {
                self.push(start, self.mark);
            }
        }
        Ok(())
    }

    /// Before a directive, a document indicator or the stream end: every block closed, no
    /// simple key pending.
    fn end_block_context(&mut self) -> R<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        Ok(())
    }

    fn fetch_more_tokens(&mut self) -> R<bool> {
        self.scan_to_next_token();
        self.stale_possible_simple_keys()?;
        self.unwind_indent(col(self.mark.column));
        let ch = self.ch();
        if ch == '\0' && self.pointer >= self.chars.len() {
            self.fetch_stream_end()?;
            return Ok(true);
        }
        match ch {
            '%' if self.mark.column == 0 => self.fetch_directive()?,
            '-' if self.check_document_indicator("---") => self.fetch_document_indicator(true)?,
            '.' if self.check_document_indicator("...") => self.fetch_document_indicator(false)?,
            '[' => self.fetch_flow_collection_start(Tok::FlowSequenceStart)?,
            '{' => self.fetch_flow_collection_start(Tok::FlowMappingStart)?,
            ']' => self.fetch_flow_collection_end(Tok::FlowSequenceEnd)?,
            '}' => self.fetch_flow_collection_end(Tok::FlowMappingEnd)?,
            ',' => self.fetch_flow_entry()?,
            '-' if is_blankz(self.peek(1)) => self.fetch_block_entry()?,
            '?' if self.flow_level > 0 || is_blankz(self.peek(1)) => self.fetch_key()?,
            ':' if self.flow_level > 0 || is_blankz(self.peek(1)) => self.fetch_value()?,
            '*' => self.fetch_anchor(true)?,
            '&' => self.fetch_anchor(false)?,
            '!' => self.fetch_tag()?,
            '|' if self.flow_level == 0 => self.fetch_block_scalar(false)?,
            '>' if self.flow_level == 0 => self.fetch_block_scalar(true)?,
            '\'' => self.fetch_flow_scalar(false)?,
            '"' => self.fetch_flow_scalar(true)?,
            _ if self.check_plain() => self.fetch_plain()?,
            _ => {
                return Err(err(
                    self.mark,
                    "while scanning for the next token",
                    format!(
                        "found character {} that cannot start any token",
                        py_repr_char(ch)
                    ),
                ));
            }
        }
        Ok(false)
    }

    fn stale_possible_simple_keys(&mut self) -> R<()> {
        for slot in &mut self.possible_simple_keys {
            if let Some(key) = slot
                && (key.line != self.mark.line || self.mark.index - key.index > 1024)
            {
                if key.required {
                    return Err(err(
                        key.mark,
                        "while scanning a simple key",
                        "could not find expected ':'".into(),
                    ));
                }
                *slot = None;
            }
        }
        Ok(())
    }

    /// Takes the possible simple key of the current flow level.
    fn take_key(&mut self) -> Option<SimpleKey> {
        self.possible_simple_keys
            .get_mut(self.flow_level)
            .and_then(Option::take)
    }

    /// Sets the possible simple key of the current flow level.
    fn set_key(&mut self, key: SimpleKey) {
        let level = self.flow_level;
        if self.possible_simple_keys.len() <= level {
            self.possible_simple_keys.resize(level + 1, None);
        }
        if let Some(slot) = self.possible_simple_keys.get_mut(level) {
            *slot = Some(key);
        }
    }

    fn save_possible_simple_key(&mut self) -> R<()> {
        let required = self.flow_level == 0 && self.indent == col(self.mark.column);
        if self.allow_simple_key {
            self.remove_possible_simple_key()?;
            let key = SimpleKey {
                token_number: self.tokens.len(),
                required,
                index: self.mark.index,
                line: self.mark.line,
                column: self.mark.column,
                mark: self.mark,
            };
            self.set_key(key);
        }
        Ok(())
    }

    fn remove_possible_simple_key(&mut self) -> R<()> {
        if let Some(key) = self.take_key()
            && key.required
        {
            return Err(err(
                key.mark,
                "while scanning a simple key",
                "could not find expected ':'".into(),
            ));
        }
        Ok(())
    }

    fn unwind_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            let mark = self.mark;
            self.indent = self.indents.pop().unwrap_or(-1);
            self.push(Tok::BlockEnd, mark);
        }
    }

    fn add_indent(&mut self, column: isize) -> bool {
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            true
        } else {
            false
        }
    }

    fn fetch_stream_end(&mut self) -> R<()> {
        self.end_block_context()?;
        for s in &mut self.possible_simple_keys {
            *s = None;
        }
        self.push(Tok::StreamEnd, self.mark);
        Ok(())
    }

    fn fetch_directive(&mut self) -> R<()> {
        self.end_block_context()?;
        let start = self.mark;
        let d = self.scan_directive()?;
        self.push(Tok::Directive(d), start);
        Ok(())
    }

    fn check_document_indicator(&self, s: &str) -> bool {
        self.mark.column == 0 && self.prefix_is(s) && is_blankz(self.peek(3))
    }

    fn fetch_document_indicator(&mut self, start_doc: bool) -> R<()> {
        self.end_block_context()?;
        let start = self.mark;
        self.forward(3);
        self.push(
            if start_doc {
                Tok::DocumentStart
            } else {
                Tok::DocumentEnd
            },
            start,
        );
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, tok: Tok) -> R<()> {
        self.save_possible_simple_key()?;
        // Refused here, not after scanning the rest: deeper nesting would make every later
        // token walk all open levels.
        if self.flow_level >= super::MAX_DEPTH {
            return Err(err(self.mark, "", "document nested too deeply".into()));
        }
        self.flow_level += 1;
        self.allow_simple_key = true;
        self.push_indicator(tok);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, tok: Tok) -> R<()> {
        self.remove_possible_simple_key()?;
        self.flow_level = self.flow_level.saturating_sub(1);
        self.allow_simple_key = false;
        self.push_indicator(tok);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> R<()> {
        self.push_separator(true, Tok::FlowEntry)
    }

    fn fetch_block_entry(&mut self) -> R<()> {
        self.block_indicator("sequence entries", Tok::BlockSequenceStart)?;
        self.push_separator(true, Tok::BlockEntry)
    }

    fn fetch_key(&mut self) -> R<()> {
        self.block_indicator("mapping keys", Tok::BlockMappingStart)?;
        self.push_separator(self.flow_level == 0, Tok::Key)
    }

    /// An indicator no pending simple key may span (`,`, `-`, `?`); whether a simple key may
    /// start after it is `allow_simple_key`.
    fn push_separator(&mut self, allow_simple_key: bool, tok: Tok) -> R<()> {
        self.allow_simple_key = allow_simple_key;
        self.remove_possible_simple_key()?;
        self.push_indicator(tok);
        Ok(())
    }

    fn fetch_value(&mut self) -> R<()> {
        if let Some(key) = self.take_key() {
            let pos = key.token_number.min(self.tokens.len());
            self.tokens.insert(
                pos,
                Token {
                    tok: Tok::Key,
                    start: key.mark,
                },
            );
            if self.flow_level == 0 && self.add_indent(col(key.column)) {
                self.tokens.insert(
                    pos,
                    Token {
                        tok: Tok::BlockMappingStart,
                        start: key.mark,
                    },
                );
            }
            self.allow_simple_key = false;
        } else {
            self.block_indicator("mapping values", Tok::BlockMappingStart)?;
            self.allow_simple_key = self.flow_level == 0;
            self.remove_possible_simple_key()?;
        }
        self.push_indicator(Tok::Value);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> R<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let name = if alias { "alias" } else { "anchor" };
        self.forward(1);
        let value = self.scan_word(&format!("while scanning an {name}"))?;
        let c = self.ch();
        if !(is_blankz(c) || "?:,]}%@`".contains(c)) {
            return Err(self.expected(
                &format!("while scanning an {name}"),
                "alphabetic or numeric character",
                c,
            ));
        }
        self.push(
            if alias {
                Tok::Alias(value)
            } else {
                Tok::Anchor(value)
            },
            start,
        );
        Ok(())
    }

    fn fetch_tag(&mut self) -> R<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let c = self.peek(1);
        let (handle, suffix) = if c == '<' {
            self.forward(2);
            let suffix = self.scan_tag_uri("tag", start)?;
            if self.ch() != '>' {
                return Err(self.expected("while parsing a tag", "'>'", self.ch()));
            }
            self.forward(1);
            (None, suffix)
        } else if is_blankz(c) {
            self.forward(1);
            (None, "!".to_string())
        } else {
            let mut len = 1;
            let mut use_handle = false;
            let mut c = c;
            while !(c == '\0' || c == ' ' || is_break(c)) {
                if c == '!' {
                    use_handle = true;
                    break;
                }
                len += 1;
                c = self.peek(len);
            }
            let handle = if use_handle {
                self.scan_tag_handle("tag", start)?
            } else {
                self.forward(1);
                "!".to_string()
            };
            let suffix = self.scan_tag_uri("tag", start)?;
            (Some(handle), suffix)
        };
        let c = self.ch();
        if !(c == '\0' || c == ' ' || is_break(c)) {
            return Err(self.expected("while scanning a tag", "' '", c));
        }
        self.push(Tok::Tag(handle, suffix), start);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, folded: bool) -> R<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        let start = self.mark;
        let value = self.scan_block_scalar(folded)?;
        self.push_scalar(value, false, if folded { '>' } else { '|' }, start);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, double: bool) -> R<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let value = self.scan_flow_scalar(double)?;
        self.push_scalar(value, false, if double { '"' } else { '\'' }, start);
        Ok(())
    }

    fn fetch_plain(&mut self) -> R<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark;
        let value = self.scan_plain()?;
        self.push_scalar(value, true, ' ', start);
        Ok(())
    }

    fn check_plain(&self) -> bool {
        let ch = self.ch();
        let at_end = ch == '\0' && self.pointer >= self.chars.len();
        (!at_end && !is_blankz(ch) && !"-?:,[]{}#&*!|>'\"%@`".contains(ch))
            || (!is_blankz(self.peek(1))
                && (ch == '-' || (self.flow_level == 0 && (ch == '?' || ch == ':'))))
    }

    fn scan_to_next_token(&mut self) {
        if self.mark.index == 0 && self.ch() == '\u{FEFF}' {
            self.forward(1);
        }
        loop {
            self.skip_spaces();
            self.skip_comment();
            if self.scan_line_break().is_empty() {
                break;
            } else if self.flow_level == 0 {
                self.allow_simple_key = true;
            }
        }
    }

    /// The word (letters, digits, `-`, `_`) at the mark, taken; refused when empty.
    fn scan_word(&mut self, context: &str) -> R<String> {
        let mut len = 0;
        while is_word(self.peek(len)) {
            len += 1;
        }
        if len == 0 {
            return Err(self.expected(context, "alphabetic or numeric character", self.peek(len)));
        }
        let word = self.prefix(len);
        self.forward(len);
        Ok(word)
    }

    fn scan_directive(&mut self) -> R<Directive> {
        let start = self.mark;
        self.forward(1);
        let name = self.scan_word("while scanning a directive")?;
        if !is_blankz(self.ch()) || self.ch() == '\t' {
            return Err(self.expected(
                "while scanning a directive",
                "alphabetic or numeric character",
                self.ch(),
            ));
        }
        let value = match name.as_str() {
            "YAML" => {
                self.skip_spaces();
                let major = self.scan_yaml_directive_number()?;
                if self.ch() != '.' {
                    return Err(self.expected(
                        "while scanning a directive",
                        "a digit or '.'",
                        self.ch(),
                    ));
                }
                self.forward(1);
                let minor = self.scan_yaml_directive_number()?;
                if !is_blankz(self.ch()) || self.ch() == '\t' {
                    return Err(self.expected(
                        "while scanning a directive",
                        "a digit or ' '",
                        self.ch(),
                    ));
                }
                Directive::Yaml(major, minor)
            }
            "TAG" => {
                self.skip_spaces();
                let handle = self.scan_tag_handle("directive", start)?;
                if self.ch() != ' ' {
                    return Err(self.expected("while scanning a directive", "' '", self.ch()));
                }
                self.skip_spaces();
                let prefix = self.scan_tag_uri("directive", start)?;
                if !is_blankz(self.ch()) || self.ch() == '\t' {
                    return Err(self.expected("while scanning a directive", "' '", self.ch()));
                }
                Directive::Tag(handle, prefix)
            }
            _ => {
                while !is_breakz(self.ch()) {
                    self.forward(1);
                }
                Directive::Other
            }
        };
        self.skip_spaces();
        self.skip_comment();
        if !is_breakz(self.ch()) {
            return Err(self.expected(
                "while scanning a directive",
                "a comment or a line break",
                self.ch(),
            ));
        }
        self.scan_line_break();
        Ok(value)
    }

    fn scan_yaml_directive_number(&mut self) -> R<u64> {
        if !self.ch().is_ascii_digit() {
            return Err(self.expected("while scanning a directive", "a digit", self.ch()));
        }
        let mut len = 0;
        while self.peek(len).is_ascii_digit() {
            len += 1;
        }
        let s = self.prefix(len);
        self.forward(len);
        s.parse::<u64>().map_err(|_| {
            err(
                self.mark,
                "while scanning a directive",
                "version number too large".into(),
            )
        })
    }

    fn scan_tag_handle(&mut self, name: &str, _start: Mark) -> R<String> {
        let ctx = format!("while scanning a {name}");
        if self.ch() != '!' {
            return Err(self.expected(&ctx, "'!'", self.ch()));
        }
        let mut len = 1;
        let mut c = self.peek(len);
        if c != ' ' {
            while is_word(c) {
                len += 1;
                c = self.peek(len);
            }
            if c != '!' {
                self.forward(len);
                return Err(self.expected(&ctx, "'!'", c));
            }
            len += 1;
        }
        let v = self.prefix(len);
        self.forward(len);
        Ok(v)
    }

    fn scan_tag_uri(&mut self, name: &str, _start: Mark) -> R<String> {
        let mut out = String::new();
        let mut len = 0;
        let mut c = self.peek(len);
        while c.is_ascii_alphanumeric() || "-;/?:@&=+$,_.!~*'()[]%".contains(c) {
            if c == '%' {
                out.push_str(&self.prefix(len));
                self.forward(len);
                len = 0;
                out.push_str(&self.scan_uri_escapes(name)?);
            } else {
                len += 1;
            }
            c = self.peek(len);
        }
        if len > 0 {
            out.push_str(&self.prefix(len));
            self.forward(len);
        }
        if out.is_empty() {
            return Err(self.expected(&format!("while parsing a {name}"), "URI", c));
        }
        Ok(out)
    }

    fn scan_uri_escapes(&mut self, name: &str) -> R<String> {
        let mut bytes = Vec::new();
        while self.ch() == '%' {
            self.forward(1);
            let mut v = 0u32;
            for k in 0..2 {
                let Some(d) = self.peek(k).to_digit(16) else {
                    return Err(self.expected(
                        &format!("while scanning a {name}"),
                        "URI escape sequence of 2 hexadecimal numbers",
                        self.peek(k),
                    ));
                };
                v = v * 16 + d;
            }
            // Two hexadecimal digits: at most 0xFF.
            bytes.push(u8::try_from(v).unwrap_or(u8::MAX));
            self.forward(2);
        }
        String::from_utf8(bytes).map_err(|e| {
            err(
                self.mark,
                &format!("while scanning a {name}"),
                format!("invalid UTF-8 in URI escape: {e}"),
            )
        })
    }

    /// A block scalar's chomping indicator at the mark, taken: `+` (keep) true, `-` (strip)
    /// false.
    fn chomping_indicator(&mut self) -> Option<bool> {
        let c = self.ch();
        (c == '+' || c == '-').then(|| {
            self.forward(1);
            c == '+'
        })
    }

    /// A block scalar's indentation indicator (1 to 9) at the mark, taken.
    fn indentation_indicator(&mut self, ctx: &str) -> R<Option<usize>> {
        let Some(d) = self.ch().to_digit(10) else {
            return Ok(None);
        };
        if d == 0 {
            return Err(err(
                self.mark,
                ctx,
                "expected indentation indicator in the range 1-9, but found 0".into(),
            ));
        }
        self.forward(1);
        Ok(Some(d as usize))
    }

    fn scan_block_scalar(&mut self, folded: bool) -> R<String> {
        let start = self.mark;
        let ctx = "while scanning a block scalar";
        self.forward(1);
        // indicators
        // in either order
        let mut chomping = self.chomping_indicator();
        let increment = self.indentation_indicator(ctx)?;
        if chomping.is_none() && increment.is_some() {
            chomping = self.chomping_indicator();
        }
        let c = self.ch();
        if !(c == '\0' || c == ' ' || is_break(c)) {
            return Err(self.expected(ctx, "chomping or indentation indicators", c));
        }
        // ignored line
        self.skip_spaces();
        self.skip_comment();
        if !is_breakz(self.ch()) {
            return Err(self.expected(ctx, "a comment or a line break", self.ch()));
        }
        self.scan_line_break();
        let _ = start;

        // `indent` is at least -1.
        let min_indent = usize::try_from(self.indent + 1).unwrap_or(0).max(1);
        let (mut breaks, indent) = match increment {
            None => {
                let (breaks, max_indent) = self.scan_block_scalar_indentation();
                (breaks, min_indent.max(max_indent))
            }
            Some(inc) => {
                let indent = min_indent + inc - 1;
                (self.scan_block_scalar_breaks(indent), indent)
            }
        };
        let mut chunks = String::new();
        let mut line_break = String::new();
        while self.mark.column == indent && !self.at_end() {
            for b in &breaks {
                chunks.push_str(b);
            }
            let leading_non_space = !matches!(self.ch(), ' ' | '\t');
            let mut len = 0;
            while !is_breakz(self.peek(len)) {
                len += 1;
            }
            chunks.push_str(&self.prefix(len));
            self.forward(len);
            line_break = self.scan_line_break();
            breaks = self.scan_block_scalar_breaks(indent);
            if self.mark.column == indent && !self.at_end() {
                if folded
                    && line_break == "\n"
                    && leading_non_space
                    && !matches!(self.ch(), ' ' | '\t')
                {
                    if breaks.is_empty() {
                        chunks.push(' ');
                    }
                } else {
                    chunks.push_str(&line_break);
                }
            } else {
                break;
            }
        }
        if chomping != Some(false) {
            chunks.push_str(&line_break);
        }
        if chomping == Some(true) {
            for b in &breaks {
                chunks.push_str(b);
            }
        }
        Ok(chunks)
    }

    /// PyYAML's `peek() != '\0'` test: a real NUL cannot occur (the reader rejects it), so this
    /// is the end of input.
    fn at_end(&self) -> bool {
        self.pointer >= self.chars.len()
    }

    fn scan_block_scalar_indentation(&mut self) -> (Vec<String>, usize) {
        let mut chunks = Vec::new();
        let mut max_indent = 0;
        while self.ch() == ' ' || is_break(self.ch()) {
            if self.ch() == ' ' {
                self.forward(1);
                if self.mark.column > max_indent {
                    max_indent = self.mark.column;
                }
            } else {
                chunks.push(self.scan_line_break());
            }
        }
        (chunks, max_indent)
    }

    fn scan_block_scalar_breaks(&mut self, indent: usize) -> Vec<String> {
        let mut chunks = Vec::new();
        while self.mark.column < indent && self.ch() == ' ' {
            self.forward(1);
        }
        while is_break(self.ch()) {
            chunks.push(self.scan_line_break());
            while self.mark.column < indent && self.ch() == ' ' {
                self.forward(1);
            }
        }
        chunks
    }

    fn scan_flow_scalar(&mut self, double: bool) -> R<String> {
        let start = self.mark;
        let quote = self.ch();
        self.forward(1);
        let mut out = String::new();
        self.scan_flow_scalar_non_spaces(double, start, &mut out)?;
        while self.ch() != quote {
            self.scan_flow_scalar_spaces(double, start, &mut out)?;
            self.scan_flow_scalar_non_spaces(double, start, &mut out)?;
        }
        self.forward(1);
        Ok(out)
    }

    fn scan_flow_scalar_non_spaces(
        &mut self,
        double: bool,
        start: Mark,
        out: &mut String,
    ) -> R<()> {
        loop {
            let mut len = 0;
            while !matches!(self.peek(len), '\'' | '"' | '\\' | '\0' | ' ' | '\t')
                && !is_break(self.peek(len))
            {
                len += 1;
            }
            if len > 0 {
                out.push_str(&self.prefix(len));
                self.forward(len);
            }
            let c = self.ch();
            if !double && c == '\'' && self.peek(1) == '\'' {
                out.push('\'');
                self.forward(2);
            } else if (double && c == '\'') || (!double && (c == '"' || c == '\\')) {
                out.push(c);
                self.forward(1);
            } else if double && c == '\\' {
                self.forward(1);
                let c = self.ch();
                let rep = match c {
                    '0' => Some('\0'),
                    'a' => Some('\x07'),
                    'b' => Some('\x08'),
                    't' | '\t' => Some('\t'),
                    'n' => Some('\n'),
                    'v' => Some('\x0B'),
                    'f' => Some('\x0C'),
                    'r' => Some('\r'),
                    'e' => Some('\x1B'),
                    ' ' => Some(' '),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '/' => Some('/'),
                    'N' => Some('\u{85}'),
                    '_' => Some('\u{A0}'),
                    'L' => Some('\u{2028}'),
                    'P' => Some('\u{2029}'),
                    _ => None,
                };
                if let Some(r) = rep {
                    out.push(r);
                    self.forward(1);
                } else if let Some(n) = match c {
                    'x' => Some(2),
                    'u' => Some(4),
                    'U' => Some(8),
                    _ => None,
                } {
                    self.forward(1);
                    let mut code: u32 = 0;
                    for k in 0..n {
                        let Some(d) = self.peek(k).to_digit(16) else {
                            return Err(self.expected(
                                "while scanning a double-quoted scalar",
                                &format!("escape sequence of {n} hexadecimal numbers"),
                                self.peek(k),
                            ));
                        };
                        code = code.wrapping_mul(16).wrapping_add(d);
                    }
                    let Some(ch) = char::from_u32(code) else {
                        return Err(err(
                            self.mark,
                            "while scanning a double-quoted scalar",
                            format!(
                                "escape \\{c}{} is not a valid Unicode scalar value",
                                self.prefix(n)
                            ),
                        ));
                    };
                    out.push(ch);
                    self.forward(n);
                } else if is_break(c) {
                    self.scan_line_break();
                    self.scan_flow_scalar_breaks(start, out)?;
                } else {
                    return Err(err(
                        self.mark,
                        "while scanning a double-quoted scalar",
                        format!("found unknown escape character {}", py_repr_char(c)),
                    ));
                }
            } else {
                return Ok(());
            }
        }
    }

    fn scan_flow_scalar_spaces(&mut self, _double: bool, start: Mark, out: &mut String) -> R<()> {
        let mut len = 0;
        while matches!(self.peek(len), ' ' | '\t') {
            len += 1;
        }
        let ws = self.prefix(len);
        self.forward(len);
        let c = self.ch();
        if c == '\0' && self.at_end() {
            return Err(err(
                self.mark,
                "while scanning a quoted scalar",
                "found unexpected end of stream".into(),
            ));
        } else if is_break(c) {
            let line_break = self.scan_line_break();
            let mut breaks = String::new();
            let n = self.scan_flow_scalar_breaks(start, &mut breaks)?;
            if line_break != "\n" {
                out.push_str(&line_break);
            } else if n == 0 {
                out.push(' ');
            }
            out.push_str(&breaks);
        } else {
            out.push_str(&ws);
        }
        Ok(())
    }

    /// Appends the breaks to `out`, returns how many there were.
    fn scan_flow_scalar_breaks(&mut self, _start: Mark, out: &mut String) -> R<usize> {
        let mut n = 0;
        loop {
            if (self.prefix_is("---") || self.prefix_is("...")) && is_blankz(self.peek(3)) {
                return Err(err(
                    self.mark,
                    "while scanning a quoted scalar",
                    "found unexpected document separator".into(),
                ));
            }
            while matches!(self.ch(), ' ' | '\t') {
                self.forward(1);
            }
            if is_break(self.ch()) {
                out.push_str(&self.scan_line_break());
                n += 1;
            } else {
                return Ok(n);
            }
        }
    }

    fn scan_plain(&mut self) -> R<String> {
        let mut out = String::new();
        let indent = self.indent + 1;
        let mut spaces: Option<String> = Some(String::new());
        loop {
            let mut len = 0;
            if self.ch() == '#' {
                break;
            }
            loop {
                let c = self.peek(len);
                if is_blankz(c)
                    || (c == ':'
                        && (is_blankz(self.peek(len + 1))
                            || (self.flow_level > 0 && ",[]{}".contains(self.peek(len + 1)))))
                    || (self.flow_level > 0 && ",?[]{}".contains(c))
                {
                    break;
                }
                len += 1;
            }
            if len == 0 {
                break;
            }
            self.allow_simple_key = false;
            if let Some(s) = &spaces {
                out.push_str(s);
            }
            out.push_str(&self.prefix(len));
            self.forward(len);
            spaces = self.scan_plain_spaces();
            match &spaces {
                None => break,
                Some(s) if s.is_empty() => break,
                _ => {}
            }
            if self.ch() == '#' || (self.flow_level == 0 && col(self.mark.column) < indent) {
                break;
            }
        }
        Ok(out)
    }

    /// `None` mirrors PyYAML returning `None` at a document separator.
    fn scan_plain_spaces(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut len = 0;
        while self.peek(len) == ' ' {
            len += 1;
        }
        let ws = self.prefix(len);
        self.forward(len);
        let c = self.ch();
        if is_break(c) {
            let line_break = self.scan_line_break();
            self.allow_simple_key = true;
            if (self.prefix_is("---") || self.prefix_is("...")) && is_blankz(self.peek(3)) {
                return None;
            }
            let mut breaks = String::new();
            let mut n = 0;
            while self.ch() == ' ' || is_break(self.ch()) {
                if self.ch() == ' ' {
                    self.forward(1);
                } else {
                    breaks.push_str(&self.scan_line_break());
                    n += 1;
                    if (self.prefix_is("---") || self.prefix_is("...")) && is_blankz(self.peek(3)) {
                        return None;
                    }
                }
            }
            if line_break != "\n" {
                out.push_str(&line_break);
            } else if n == 0 {
                out.push(' ');
            }
            out.push_str(&breaks);
        } else if !ws.is_empty() {
            out.push_str(&ws);
        }
        Some(out)
    }

    fn scan_line_break(&mut self) -> String {
        let c = self.ch();
        if matches!(c, '\r' | '\n' | '\u{85}') {
            if self.prefix_is("\r\n") {
                self.forward(2);
            } else {
                self.forward(1);
            }
            "\n".to_string()
        } else if matches!(c, '\u{2028}' | '\u{2029}') {
            self.forward(1);
            c.to_string()
        } else {
            String::new()
        }
    }
}

/// Python's `repr` of a one-character string, for messages.
pub(crate) fn py_repr_char(c: char) -> String {
    match c {
        '\0' => "'\\x00'".into(),
        '\'' => "\"'\"".into(),
        '\\' => "'\\\\'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\t' => "'\\t'".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("'\\x{:02x}'", c as u32),
        c => format!("'{c}'"),
    }
}
