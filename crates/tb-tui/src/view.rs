//! Drawing the app: a title line, the conversation (left) and the effects (right; below it
//! on narrow terminals), a hint line, the input box and a key line. Pure: it reads the app
//! and writes a ratatui frame, so tests render it into a `TestBackend`.

use crate::app::{App, Entry, NoteKind, Play};
use crate::effects::LineKind;
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use tb_core::Message;
use unicode_width::UnicodeWidthChar;

/// Colours, or none (`NO_COLOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Use colours.
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    fn agent(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }
    fn call(self) -> Style {
        self.fg(Color::Magenta)
    }
    fn result(self) -> Style {
        self.fg(Color::Gray)
    }
    fn dim(self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }
    fn info(self) -> Style {
        self.fg(Color::Yellow)
    }
    fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    fn pass(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }
    fn fail(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    fn title(self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
    fn border(self) -> Style {
        self.dim()
    }
}

/// Width of a string in terminal cells.
fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Text from models, tools and files made safe to draw: control characters (escape
/// sequences included) become `�` ([`tb_core::text::printable`], as the console commands
/// print them), tabs spaces, `\r\n` a line break.
pub fn printable(text: &str) -> String {
    tb_core::text::printable(text).replace('\t', " ")
}

/// Wraps text to `w` cells: at spaces where it can, else hard; `indent` on every line but
/// the first (which has `first` already taken). Control characters are replaced
/// ([`printable`]).
pub fn wrap(text: &str, w: usize, first: usize, indent: usize) -> Vec<String> {
    let text = printable(text);
    let text = text.as_str();
    let w = w.max(indent + 8);
    let mut out = Vec::new();
    let mut avail = w.saturating_sub(first).max(1);
    for raw in text.split('\n') {
        let mut line = String::new();
        let mut lw = 0;
        let mut last_space: Option<(usize, usize)> = None; // (byte index in line, width up to it)
        for c in raw.chars() {
            let cw = c.width().unwrap_or(0);
            if lw + cw > avail {
                if let Some((bi, sw)) = last_space.filter(|&(_, sw)| sw > avail / 2) {
                    let rest = line[bi + 1..].to_string();
                    line.truncate(bi);
                    out.push(std::mem::take(&mut line));
                    line = rest;
                    lw -= sw + 1;
                } else {
                    out.push(std::mem::take(&mut line));
                    lw = 0;
                }
                avail = w.saturating_sub(indent).max(1);
                last_space = None;
            }
            if c == ' ' {
                last_space = Some((line.len(), lw));
            }
            line.push(c);
            lw += cw;
        }
        out.push(line);
        avail = w.saturating_sub(indent).max(1);
    }
    out
}

/// Styled lines of a block of text under a label: `label text`, continuation lines indented.
fn labelled(
    out: &mut Vec<Line<'static>>,
    label: &str,
    label_style: Style,
    text: &str,
    style: Style,
    w: usize,
    max_lines: Option<usize>,
) {
    let first = width(label) + 1;
    let mut lines = wrap(text, w, first, 2);
    let mut clipped = 0;
    if let Some(m) = max_lines
        && lines.len() > m
    {
        clipped = lines.len() - m;
        lines.truncate(m);
    }
    for (i, l) in lines.into_iter().enumerate() {
        if i == 0 {
            out.push(Line::from(vec![
                Span::styled(printable(label), label_style),
                Span::raw(" "),
                Span::styled(l, style),
            ]));
        } else {
            out.push(Line::from(vec![Span::raw("  "), Span::styled(l, style)]));
        }
    }
    if clipped > 0 {
        out.push(Line::from(Span::styled(
            format!("  … {clipped} more line(s); Ctrl-O unfolds"),
            Style::default().add_modifier(Modifier::DIM),
        )));
    }
}

fn meta_str<'a>(m: &'a serde_json::Map<String, serde_json::Value>, k: &str) -> &'a str {
    m.get(k).and_then(|v| v.as_str()).unwrap_or("")
}

fn message_lines(app: &App, t: Theme, m: &Message, w: usize, out: &mut Vec<Line<'static>>) {
    let (you_user, you_agent) = match app.play() {
        Play::User => ("you (user)", "agent"),
        Play::Agent => ("user", "you (agent)"),
        Play::Watch => ("user", "agent"),
    };
    let fold = app.fold;
    match m {
        Message::Text {
            metadata,
            role,
            content,
        } if role == "user" => {
            let label = if metadata.get("is_user_llm").is_some() {
                format!(
                    "{} [simulated] ›",
                    you_user.trim_start_matches("you (").trim_end_matches(')')
                )
            } else {
                format!("{you_user} ›")
            };
            labelled(out, &label, t.user(), content, Style::default(), w, None);
        }
        Message::Text {
            metadata,
            role,
            content,
        } if role == "assistant" => {
            let (label, style, body, fold_at) = match meta_str(metadata, "tag") {
                "think" => ("(thinking) ›", t.dim(), t.dim(), fold.then_some(2)),
                "direct" => ("(direct response) ›", t.agent(), Style::default(), None),
                _ => ("›", t.agent(), Style::default(), None),
            };
            let label = format!("{you_agent} {label}");
            labelled(out, &label, style, content, body, w, fold_at);
        }
        Message::Text { content, .. } => {
            labelled(out, "system ›", t.dim(), content, t.dim(), w, Some(1));
        }
        Message::ParallelToolCall { tool_calls, .. } => {
            for tc in tool_calls {
                let args = tc.arguments.to_string();
                labelled(
                    out,
                    &format!("  → {}", tc.name),
                    t.call().add_modifier(Modifier::BOLD),
                    &args,
                    t.call(),
                    w,
                    fold.then_some(3),
                );
            }
        }
        Message::ToolResponse { name, content, .. } => {
            let is_err = content.starts_with("{\"error\"") || content.starts_with("Error");
            let style = if is_err { t.error() } else { t.result() };
            let label = format!("  ← {name}{}", if is_err { " [error]" } else { "" });
            if fold {
                let flat: String = printable(content)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let avail = w.saturating_sub(width(&label) + 1);
                let n = content.chars().count();
                let mut shown: String = String::new();
                let mut sw = 0;
                for c in flat.chars() {
                    let cw = c.width().unwrap_or(0);
                    if sw + cw + 14 > avail {
                        break;
                    }
                    shown.push(c);
                    sw += cw;
                }
                if shown.chars().count() < flat.chars().count() {
                    shown.push_str(&format!(" … ({n} chars)"));
                }
                out.push(Line::from(vec![
                    Span::styled(label, style.add_modifier(Modifier::BOLD)),
                    Span::raw(" "),
                    Span::styled(shown, style),
                ]));
            } else {
                labelled(out, &label, style, content, style, w, None);
            }
        }
    }
}

/// The conversation pane's lines at width `w`.
pub fn conversation_lines(app: &App, t: Theme, w: usize) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let msgs = app.messages();
    let mut prev_note = false;
    for e in app.entries() {
        match e {
            Entry::Msg(i) => {
                if let Some(m) = msgs.get(*i) {
                    if !out.is_empty() && !matches!(m, Message::ToolResponse { .. }) {
                        out.push(Line::default());
                    }
                    message_lines(app, t, m, w, &mut out);
                }
                prev_note = false;
            }
            Entry::Note(kind, text) => {
                if !prev_note && !out.is_empty() {
                    out.push(Line::default());
                }
                let (style, mark) = match kind {
                    NoteKind::Info => (t.info(), "· "),
                    NoteKind::Error => (t.error(), "! "),
                    NoteKind::Pass => (t.pass(), ""),
                    NoteKind::Fail => (t.fail(), ""),
                    NoteKind::Detail => (Style::default(), ""),
                };
                for (i, l) in wrap(text, w, width(mark), 4).into_iter().enumerate() {
                    let lead = if i == 0 {
                        mark.to_string()
                    } else {
                        "    ".to_string()
                    };
                    out.push(Line::from(vec![
                        Span::styled(lead, style),
                        Span::styled(l, style),
                    ]));
                }
                prev_note = true;
            }
        }
    }
    if !app.live().is_empty() {
        for m in app.live() {
            if !matches!(m, Message::ToolResponse { .. }) {
                out.push(Line::default());
            }
            message_lines(app, t, m, w, &mut out);
        }
    }
    if let Some(b) = app.busy() {
        out.push(Line::default());
        let paused = if app.play() == Play::Watch && app.paused() {
            " (paused: Ctrl-P resumes, Ctrl-N steps)"
        } else {
            ""
        };
        out.push(Line::from(Span::styled(
            format!("… {b}{paused}"),
            t.info().add_modifier(Modifier::ITALIC),
        )));
    }
    out
}

/// The effects pane's lines at width `w`.
pub fn effects_lines(app: &App, t: Theme, w: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (k, l) in app.effects().lines() {
        let style = match k {
            LineKind::Head => Style::default().add_modifier(Modifier::BOLD),
            LineKind::Place => t.call(),
            LineKind::Plain => Style::default(),
            LineKind::Good => t.pass(),
            LineKind::Bad => t.fail(),
            LineKind::Dim => t.dim(),
        };
        let lead = l.len() - l.trim_start().len();
        for (i, piece) in wrap(l.trim_start(), w, lead, lead + 2)
            .into_iter()
            .enumerate()
        {
            let pad = if i == 0 { lead } else { lead + 2 };
            out.push(Line::from(vec![
                Span::raw(" ".repeat(pad)),
                Span::styled(piece, style),
            ]));
        }
    }
    if !app.is_task() {
        out.push(Line::default());
        out.push(Line::from(Span::styled(
            "(a scenario: no golden state to compare with)",
            t.dim(),
        )));
    }
    out
}

/// Cursor rows and columns of the input text wrapped hard at `w`: the lines, and the
/// cursor's (row, col).
fn input_layout(text: &str, cursor: usize, w: usize) -> (Vec<String>, (usize, usize)) {
    let w = w.max(2);
    let mut lines = vec![String::new()];
    let mut col = 0;
    let mut pos = (0, 0);
    for (i, c) in text.chars().enumerate() {
        if i == cursor {
            pos = (lines.len() - 1, col);
        }
        if c == '\n' {
            lines.push(String::new());
            col = 0;
            continue;
        }
        let cw = c.width().unwrap_or(0);
        if col + cw > w - 1 {
            lines.push(String::new());
            col = 0;
            if i == cursor {
                pos = (lines.len() - 1, 0);
            }
        }
        if let Some(l) = lines.last_mut() {
            l.push(c);
        }
        col += cw;
    }
    if cursor >= text.chars().count() {
        if col >= w - 1 {
            lines.push(String::new());
            col = 0;
        }
        pos = (lines.len() - 1, col);
    }
    (lines, pos)
}

/// Draws the app.
pub fn draw(f: &mut Frame, app: &App, t: Theme) {
    let area = f.area();
    let inner_w = area.width.saturating_sub(2) as usize;
    let (input_lines, (crow, ccol)) = input_layout(&app.input.text(), app.input.cursor(), inner_w);
    let input_h = u16::try_from(input_lines.len())
        .unwrap_or(u16::MAX)
        .clamp(1, 6)
        + 2;
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(1),
            Constraint::Length(input_h),
            Constraint::Length(1),
        ])
        .split(area);

    // Title.
    let status = match (app.busy(), app.finished()) {
        (Some(b), _) => {
            if app.play() == Play::Watch && app.paused() {
                "paused".to_string()
            } else {
                b.to_string()
            }
        }
        (None, Some(r)) => format!(
            "ended: {}",
            serde_json::to_value(r)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
        (None, None) => "ready".into(),
    };
    let status = match app.system_error() {
        Some(_) if app.busy().is_none() => format!("SYSTEM ERROR (tool server) │ {status}"),
        _ => status,
    };
    let title = format!(
        " tb tui │ {} │ play: {} │ {status} ",
        app.title(),
        app.play().name()
    );
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            format!("{title:<w$}", w = area.width as usize),
            t.title(),
        ))),
        rows[0],
    );

    // Body.
    let wide = rows[1].width >= 100;
    let panes = Layout::default()
        .direction(if wide {
            Direction::Horizontal
        } else {
            Direction::Vertical
        })
        .constraints(if wide {
            [Constraint::Percentage(62), Constraint::Percentage(38)]
        } else {
            [Constraint::Percentage(65), Constraint::Percentage(35)]
        })
        .split(rows[1]);
    draw_conversation(f, app, t, panes[0]);
    draw_effects(f, app, t, panes[1]);

    // Hint.
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            format!(" {}", app.hint()),
            t.dim(),
        ))),
        rows[2],
    );

    // Input.
    let who = match app.play() {
        Play::User => " you (user) ",
        Play::Agent => " you (agent) ",
        Play::Watch => " commands ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border())
        .title(Span::styled(
            who,
            Style::default().add_modifier(Modifier::BOLD),
        ));
    let visible_rows = (input_h - 2) as usize;
    let first = crow.saturating_sub(visible_rows.saturating_sub(1));
    let shown: Vec<Line> = input_lines
        .iter()
        .skip(first)
        .take(visible_rows)
        .map(|l| Line::from(l.clone()))
        .collect();
    f.render_widget(Paragraph::new(shown).block(block), rows[3]);
    #[allow(
        clippy::cast_possible_truncation,
        reason = "within the terminal's u16 area"
    )]
    f.set_cursor_position(Position::new(
        rows[3].x + 1 + ccol as u16,
        rows[3].y + 1 + (crow - first) as u16,
    ));

    // Keys.
    let keys = match app.play() {
        Play::Watch => {
            " Ctrl-P pause/resume · Ctrl-N step · PgUp/PgDn scroll · Ctrl-O fold · /help · Ctrl-C quit"
        }
        _ => {
            " Enter: send /command · Esc+Enter or Alt+Enter: send text · Tab complete · PgUp/PgDn scroll · Ctrl-O fold · Ctrl-C quit"
        }
    };
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(keys, t.dim()))),
        rows[4],
    );
}

fn draw_conversation(f: &mut Frame, app: &App, t: Theme, area: Rect) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border())
        .title(Span::styled(
            " conversation ",
            Style::default().add_modifier(Modifier::BOLD),
        ));
    let inner = block.inner(area);
    let lines = conversation_lines(app, t, inner.width.saturating_sub(1) as usize);
    let h = inner.height as usize;
    let max_scroll = lines.len().saturating_sub(h);
    let scroll = app.scroll.min(max_scroll);
    let start = lines.len().saturating_sub(h + scroll);
    let shown: Vec<Line> = lines.into_iter().skip(start).take(h).collect();
    let block = if scroll > 0 {
        block.title_bottom(Span::styled(
            format!(" ↑ {scroll} line(s) up · PgDn "),
            t.dim(),
        ))
    } else {
        block
    };
    f.render_widget(Paragraph::new(shown).block(block), area);
}

fn draw_effects(f: &mut Frame, app: &App, t: Theme, area: Rect) {
    let badge = match app.effects().all_fixed() {
        Some(true) => Span::styled(" ✓ matches the golden state ", t.pass()),
        Some(false) => Span::styled(" ✗ differs from the golden state ", t.fail()),
        None => Span::raw(""),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border())
        .title(Span::styled(
            if app.is_remote() {
                " effects (from the tool servers) "
            } else {
                " effects "
            },
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .title(badge);
    let inner = block.inner(area);
    let lines = effects_lines(app, t, inner.width.saturating_sub(1) as usize);
    let h = inner.height as usize;
    let scroll = app.effects_scroll.min(lines.len().saturating_sub(h));
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(h).collect();
    f.render_widget(Paragraph::new(shown).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping() {
        assert_eq!(wrap("hello world", 20, 0, 2), vec!["hello world"]);
        assert_eq!(
            wrap("aaaa bbbb cccc dddd", 10, 0, 0),
            vec!["aaaa bbbb", "cccc dddd"]
        );
        assert_eq!(wrap("x\ny", 10, 0, 0), vec!["x", "y"]);
        let long = "a".repeat(25);
        assert_eq!(wrap(&long, 10, 0, 0).len(), 3);
        assert_eq!(printable("a\u{1b}[2Jb\tc\r\nd"), "a\u{fffd}[2Jb c\nd");
        assert!(
            wrap("x\u{7}y", 10, 0, 0)[0]
                .chars()
                .all(|c| !c.is_control())
        );
        let (lines, pos) = input_layout("abc\nde", 6, 10);
        assert_eq!(lines, vec!["abc", "de"]);
        assert_eq!(pos, (1, 2));
        let (lines, pos) = input_layout("abcdefghij", 10, 5);
        assert_eq!(lines, vec!["abcd", "efgh", "ij"]);
        assert_eq!(pos, (2, 2));
    }
}
