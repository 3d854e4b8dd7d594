//! The input box: a small multi-line editor (a char buffer and a cursor) with a history of
//! what was submitted.

/// The input buffer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    text: Vec<char>,
    cursor: usize,
    history: Vec<String>,
    /// Position in the history while browsing (`None`: editing the current text).
    browsing: Option<usize>,
    /// The text being edited when browsing started.
    stash: String,
}

impl Input {
    /// The text.
    pub fn text(&self) -> String {
        self.text.iter().collect()
    }

    /// The cursor, in chars from the start.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether the box is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text, cursor at the end.
    pub fn set(&mut self, s: &str) {
        self.text = s.chars().collect();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Inserts text at the cursor (a paste keeps its line breaks; `\r\n` and `\r` become `\n`).
    pub fn insert_str(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        for c in s.chars() {
            self.insert(c);
        }
    }

    /// Inserts a char at the cursor.
    pub fn insert(&mut self, c: char) {
        if c.is_control() && c != '\n' && c != '\t' {
            return;
        }
        let c = if c == '\t' { ' ' } else { c };
        self.text.insert(self.cursor, c);
        self.cursor += 1;
        self.browsing = None;
    }

    /// Deletes the char before the cursor.
    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the char under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    /// Moves left.
    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves right.
    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.text.len());
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Start of the line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// End of the line.
    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Deletes from the line start to the cursor.
    pub fn kill_to_start(&mut self) {
        let s = self.line_start();
        self.text.drain(s..self.cursor);
        self.cursor = s;
    }

    /// Deletes the word before the cursor.
    pub fn kill_word(&mut self) {
        let mut i = self.cursor;
        while i > 0 && self.text[i - 1].is_whitespace() {
            i -= 1;
        }
        while i > 0 && !self.text[i - 1].is_whitespace() {
            i -= 1;
        }
        self.text.drain(i..self.cursor);
        self.cursor = i;
    }

    /// Whether the cursor is on the first line.
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains(&'\n')
    }

    /// Whether the cursor is on the last line.
    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains(&'\n')
    }

    /// Moves up a line (same column where it can).
    pub fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            return;
        }
        let col = self.cursor - start;
        let prev_end = start - 1;
        let prev_start = self.text[..prev_end]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |i| i + 1);
        self.cursor = (prev_start + col).min(prev_end);
    }

    /// Moves down a line.
    pub fn down(&mut self) {
        let end = self.line_end();
        if end == self.text.len() {
            return;
        }
        let col = self.cursor - self.line_start();
        let next_start = end + 1;
        let next_end = self.text[next_start..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = (next_start + col).min(next_end);
    }

    /// Takes the text out (submitting it), remembering it in the history.
    pub fn take(&mut self) -> String {
        let s = self.text();
        if !s.trim().is_empty() && self.history.last() != Some(&s) {
            self.history.push(s.clone());
        }
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
        s
    }

    /// The previous history entry.
    pub fn history_prev(&mut self) {
        if self.history.is_empty() {
            return;
        }
        let i = match self.browsing {
            None => {
                self.stash = self.text();
                self.history.len() - 1
            }
            Some(0) => 0,
            Some(i) => i - 1,
        };
        let s = self.history[i].clone();
        self.set(&s);
        self.browsing = Some(i);
    }

    /// The next history entry (past the last: the text being edited before).
    pub fn history_next(&mut self) {
        let Some(i) = self.browsing else {
            return;
        };
        if i + 1 < self.history.len() {
            let s = self.history[i + 1].clone();
            self.set(&s);
            self.browsing = Some(i + 1);
        } else {
            let s = std::mem::take(&mut self.stash);
            self.set(&s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_and_history() {
        let mut i = Input::default();
        i.insert_str("ab\r\ncd");
        assert_eq!(i.text(), "ab\ncd");
        i.up();
        assert_eq!(i.cursor(), 2);
        i.home();
        i.insert('x');
        assert_eq!(i.text(), "xab\ncd");
        i.down();
        i.end();
        i.backspace();
        assert_eq!(i.text(), "xab\nc");
        i.kill_word();
        assert_eq!(i.text(), "xab\n");
        assert_eq!(i.take(), "xab\n");
        i.insert_str("two");
        i.take();
        i.insert_str("draft");
        i.history_prev();
        assert_eq!(i.text(), "two");
        i.history_prev();
        assert_eq!(i.text(), "xab\n");
        i.history_next();
        i.history_next();
        assert_eq!(i.text(), "draft");
        i.insert('\u{7}');
        assert_eq!(i.text(), "draft");
    }
}
