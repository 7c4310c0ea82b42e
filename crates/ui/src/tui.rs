//! The terminal: raw mode and the alternate screen around an event loop that renders at
//! most once per batch of input, with synchronized output so frames never tear. The
//! terminal is restored on every exit path, panics included.

use std::io::{self, Write};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::DefaultTerminal;

use crate::app::keys::Key;
use crate::app::App;
use crate::ui::glyphs::Glyphs;
use crate::ui::layout::tree_rows;
use crate::ui::theme::Theme;

const BEGIN_SYNC: &[u8] = b"\x1b[?2026h";
const END_SYNC: &[u8] = b"\x1b[?2026l";

/// Ends synchronized output even when drawing fails.
struct SyncGuard(bool);

impl SyncGuard {
    fn begin(enabled: bool) -> SyncGuard {
        if enabled {
            let _ = io::stdout().write_all(BEGIN_SYNC);
        }
        SyncGuard(enabled)
    }
}

impl Drop for SyncGuard {
    fn drop(&mut self) {
        if self.0 {
            let mut out = io::stdout();
            let _ = out.write_all(END_SYNC);
            let _ = out.flush();
        }
    }
}

pub struct Options {
    pub sync_output: bool,
    /// Keys typed on the loading screen (`Waited::Done`'s), run in order before the
    /// first frame waits for a key: nothing typed while the input loaded is lost.
    pub typed: Vec<KeyEvent>,
}

pub fn run(app: &mut App, theme: &Theme, glyphs: &Glyphs, opts: &Options) -> io::Result<()> {
    // ratatui::init installs a panic hook that restores the terminal before the report;
    // the guard covers signals, aborts and Ctrl-Z.
    crate::terminal_guard::enter();
    let mut terminal = ratatui::try_init()?;
    let result = event_loop(&mut terminal, app, theme, glyphs, opts);
    crate::terminal_guard::leave();
    ratatui::try_restore()?;
    result
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    theme: &Theme,
    glyphs: &Glyphs,
    opts: &Options,
) -> io::Result<()> {
    let size = terminal.size()?;
    app.page = tree_rows(size.width, size.height);
    // A hidden switch for tests/pty.rs: a panic inside the running TUI must leave the
    // terminal restored, and no ordinary input panics any more. Only someone who sets
    // this variable can reach it.
    let panic_key = std::env::var("GROVE_TEST_PANIC_KEY")
        .ok()
        .and_then(|v| v.chars().next());
    for k in &opts.typed {
        if app.quit {
            break;
        }
        app.on_key(Key::from_event(*k));
    }
    let mut dirty = true;
    while !app.quit {
        if crate::terminal_guard::take_resumed() {
            // Back from Ctrl-Z: the shell had the terminal; take it again and redraw.
            // crossterm still believes raw mode is on (the guard restored the modes
            // itself), so reset its record before entering raw mode again.
            let _ = terminal::disable_raw_mode();
            terminal::enable_raw_mode()?;
            execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
            crate::terminal_guard::enter();
            // ratatui's clear() asks the terminal for the cursor position, which a
            // terminal that just came back may not answer; clear by hand and blank
            // the previous buffer so the next frame repaints every cell.
            execute!(io::stdout(), terminal::Clear(terminal::ClearType::All))?;
            terminal.swap_buffers();
            dirty = true;
        }
        if dirty {
            let _sync = SyncGuard::begin(opts.sync_output);
            terminal.draw(|f| crate::ui::draw(f, app, theme, glyphs))?;
            dirty = false;
        }
        // Block for the next event, then drain whatever else is queued: one render
        // per batch, however fast keys arrive (held keys over a slow link).
        // The wait is bounded so a resume (SIGCONT after an outside SIGTSTP) is
        // noticed without a key press.
        if !event::poll(Duration::from_millis(250))? {
            // Events of a tree opened from the cache arrive between keys.
            dirty |= app.poll_background();
            continue;
        }
        dirty |= app.poll_background();
        let mut ev = Some(event::read()?);
        while let Some(e) = ev.take() {
            match e {
                // Raw mode turns off the tty's own Ctrl-Z, so grove does what it would.
                Event::Key(k)
                    if k.kind != KeyEventKind::Release
                        && k.code == KeyCode::Char('z')
                        && k.modifiers.contains(KeyModifiers::CONTROL) =>
                {
                    crate::terminal_guard::suspend();
                }
                Event::Key(k)
                    if k.kind != KeyEventKind::Release
                        && panic_key.is_some_and(|c| k.code == KeyCode::Char(c)) =>
                {
                    panic!("GROVE_TEST_PANIC_KEY: a deliberate panic for the terminal tests");
                }
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    app.on_key(Key::from_event(k));
                    dirty = true;
                }
                Event::Resize(w, h) => {
                    app.page = tree_rows(w, h);
                    dirty = true;
                }
                _ => {}
            }
            if app.quit {
                break;
            }
            if event::poll(Duration::ZERO)? {
                ev = Some(event::read()?);
            }
        }
    }
    Ok(())
}

/// Leaves raw mode if something failed before the normal restore (defensive).
pub fn emergency_restore() {
    crate::terminal_guard::restore();
    let _ = terminal::disable_raw_mode();
    let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen);
}

/// How a wait for a load ended.
pub enum Waited<T> {
    /// The load's result, and the keys typed meanwhile (for `Options::typed`).
    Done(T, Vec<KeyEvent>),
    /// The user cancelled: `q` or Esc (`interrupt` false), or Ctrl-C (true).
    Cancelled { interrupt: bool },
}

/// Waits for a load running on another thread (its result arrives on `rx`), showing
/// the loading screen (`ui::loading`) when it takes longer than a glance, with the
/// terminal restored before returning. `q`, Esc and Ctrl-C cancel: the load is asked to
/// stop (`progress.cancel()`) and not waited for.
pub fn wait_for_load<T>(
    rx: &std::sync::mpsc::Receiver<T>,
    progress: &crate::readers::progress::Progress,
    file: &str,
    theme: &Theme,
    opts: &Options,
) -> io::Result<Waited<T>> {
    use std::sync::mpsc::RecvTimeoutError;
    let start = std::time::Instant::now();
    // A load that ends at once never shows the screen (no flash of it before the tree).
    match rx.recv_timeout(Duration::from_millis(150)) {
        Ok(v) => return Ok(Waited::Done(v, Vec::new())),
        Err(RecvTimeoutError::Timeout) => {}
        Err(RecvTimeoutError::Disconnected) => {
            return Err(io::Error::other("the loading thread stopped"))
        }
    }
    crate::terminal_guard::enter();
    let mut terminal = ratatui::try_init()?;
    let result = loading_loop(&mut terminal, rx, progress, file, theme, opts, start);
    crate::terminal_guard::leave();
    ratatui::try_restore()?;
    result
}

fn loading_loop<T>(
    terminal: &mut DefaultTerminal,
    rx: &std::sync::mpsc::Receiver<T>,
    progress: &crate::readers::progress::Progress,
    file: &str,
    theme: &Theme,
    opts: &Options,
    start: std::time::Instant,
) -> io::Result<Waited<T>> {
    use crate::readers::progress::Snapshot;
    use std::sync::mpsc::TryRecvError;
    let mut typed = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(v) => return Ok(Waited::Done(v, typed)),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                return Err(io::Error::other("the loading thread stopped"))
            }
        }
        let elapsed = start.elapsed();
        let view = crate::ui::loading::Loading {
            file,
            snap: Snapshot::of(progress, elapsed),
            elapsed: elapsed.as_secs_f64(),
        };
        {
            let _sync = SyncGuard::begin(opts.sync_output);
            terminal.draw(|f| {
                let area = f.area();
                crate::ui::loading::render(&view, theme, area, f.buffer_mut())
            })?;
        }
        // Keys are read while the reader works: redraw every 100 ms or on a key.
        if event::poll(Duration::from_millis(100))? {
            if let Event::Key(k) = event::read()? {
                if k.kind == KeyEventKind::Release {
                    continue;
                }
                let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
                let interrupt = ctrl && k.code == KeyCode::Char('c');
                if interrupt || (!ctrl && matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)) {
                    progress.cancel();
                    return Ok(Waited::Cancelled { interrupt });
                }
                if ctrl && k.code == KeyCode::Char('z') {
                    crate::terminal_guard::suspend();
                } else {
                    typed.push(k);
                }
            }
        }
        if crate::terminal_guard::take_resumed() {
            let _ = terminal::disable_raw_mode();
            terminal::enable_raw_mode()?;
            execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
            crate::terminal_guard::enter();
            execute!(io::stdout(), terminal::Clear(terminal::ClearType::All))?;
            terminal.swap_buffers();
        }
    }
}
