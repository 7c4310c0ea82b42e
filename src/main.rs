use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use grove::app::command::ExportFormat;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::cli::{
    Cli, ColorArg, KernelBy, Look, OutFormat, PrintFormat, ReplayOpts, Sub, SummaryTable,
    TreeFormat,
};
use grove::export;
use grove::gpu::{self, report};
use grove::model::{EventKind, Profile};
use grove::readers;
use grove::session;
use grove::ui::glyphs::Glyphs;
use grove::ui::theme::{ColorDepth, Theme};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grove: {e}");
            ExitCode::from(2)
        }
    }
}

fn load(path: Option<&std::path::Path>) -> Result<Profile, String> {
    match path {
        Some(p) => readers::load_path(p).map_err(|e| e.to_string()),
        None => Ok(readers::load_demo()),
    }
}

/// `a=gcc,b=llvm` -> {a: gcc, b: llvm}.
fn parse_labels(spec: Option<&str>) -> Result<std::collections::HashMap<String, String>, String> {
    let mut out = std::collections::HashMap::new();
    for part in spec
        .unwrap_or("")
        .split(',')
        .filter(|p| !p.trim().is_empty())
    {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--label {part:?}: write STEM=LABEL"))?;
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

/// One file, or an ensemble of several (files, or the files of a directory).
fn load_inputs(files: &[std::path::PathBuf], labels: Option<&str>) -> Result<Profile, String> {
    let given = parse_labels(labels)?;
    let expanded = grove::ensemble::expand_inputs(files).map_err(|e| e.to_string())?;
    if expanded.len() == 1 && given.is_empty() {
        return load(Some(&expanded[0]));
    }
    if expanded.is_empty() {
        return load(None);
    }
    grove::ensemble::load_ensemble(&expanded, &given).map_err(|e| e.to_string())
}

fn depth_of(look: &Look) -> ColorDepth {
    match look.color {
        ColorArg::Auto => ColorDepth::detect(),
        ColorArg::Never => ColorDepth::Never,
        ColorArg::C16 => ColorDepth::Ansi16,
        ColorArg::C256 => ColorDepth::Ansi256,
        ColorArg::Truecolor => ColorDepth::TrueColor,
    }
}

fn theme_of(look: &Look) -> Result<Theme, String> {
    let depth = depth_of(look);
    let name = match (&look.theme, depth) {
        (Some(t), _) => t.clone(),
        (None, ColorDepth::Never) => "mono".to_string(),
        (None, _) => "default".to_string(),
    };
    Theme::load(&name, depth).map_err(|e| e.to_string())
}

fn glyphs_of(look: &Look) -> Glyphs {
    Glyphs::pick(look.ascii || !Glyphs::locale_is_utf8())
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Some(Sub::Info { file }) => {
            // A directory or a quoted glob is an ensemble here as everywhere.
            let p = load_inputs(std::slice::from_ref(&file), None)?;
            print!("{}", info_text(&p));
            Ok(())
        }
        Some(Sub::Tree {
            files,
            metric,
            depth,
            format,
            precision,
            no_legend,
            expand_names,
            cmds,
        }) => {
            let file = files[0].clone();
            let p = load_inputs(&files, cli.label.as_deref())?;
            let mut app = App::with_categories(p, Keymap::default_map(), user_categories());
            // Hatchet prints children in data order; --cmd may re-sort.
            app.use_data_order();
            for c in &cmds {
                app.run(c)?;
            }
            let metrics: Vec<String> = match metric {
                Some(m) => m.split(',').map(|s| s.trim().to_string()).collect(),
                None => vec![app.profile.default_metric.clone()],
            };
            for m in &metrics {
                if !app.profile.metrics.has(m) {
                    return Err(format!(
                        "{}: unknown metric {m:?} (metrics: {})",
                        file.display(),
                        app.profile.metrics.names().join(", ")
                    ));
                }
            }
            let po = &app.tree.po;
            let positions = app.export_positions_to(depth);
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            let res = match format {
                TreeFormat::Text => {
                    let color =
                        io::stdout().is_terminal() && depth_of(&cli.look) != ColorDepth::Never;
                    let opts = export::text::TextOptions {
                        metrics: &metrics,
                        precision,
                        legend: !no_legend,
                        color,
                        expand_names,
                        glyphs: glyphs_of(&cli.look),
                    };
                    out.write_all(
                        export::text::render(
                            &app.profile.cct,
                            &app.profile.metrics,
                            po,
                            &positions,
                            &opts,
                        )
                        .as_bytes(),
                    )
                }
                TreeFormat::Json => app.export_to_depth(ExportFormat::Json, &mut out, depth),
                TreeFormat::Csv => app.export_to_depth(ExportFormat::Csv, &mut out, depth),
                TreeFormat::Hatchet => app.export_to_depth(ExportFormat::Hatchet, &mut out, depth),
                TreeFormat::Parquet => {
                    binary_to_pipe()?;
                    app.export_to_depth(ExportFormat::Parquet, &mut out, depth)
                }
            };
            match res.and_then(|_| out.flush()) {
                Ok(()) => Ok(()),
                // A closed pipe (`grove tree x | head`) is not an error.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(e.to_string()),
            }
        }
        Some(Sub::Kernels {
            files,
            top,
            by,
            format,
            all,
            by_category,
            categories,
        }) => {
            let cats = gpu::classify::Categories::load(categories.as_deref())?;
            let sort = match by {
                KernelBy::Total => gpu::kernels::KernelSort::Total,
                KernelBy::Mean => gpu::kernels::KernelSort::Mean,
                KernelBy::Count => gpu::kernels::KernelSort::Count,
            };
            let opt = gpu::kernels::TableOptions {
                all,
                by_category,
                sort,
            };
            // Instances from every file, aggregated by name.
            let mut per_file = Vec::new();
            for f in &files {
                let p = load(Some(f))?;
                let Some(ev) = p.events.as_ref() else {
                    return Err(format!(
                        "{}: not a trace: it has no GPU events",
                        f.display()
                    ));
                };
                let model = gpu::GpuModel::new(ev, cats.clone());
                let rows = gpu::kernels::table(ev, &model, &opt);
                let durs = gpu::kernels::durations(ev, &rows);
                per_file.push((rows, durs));
            }
            let rows = gpu::kernels::merge(per_file, sort);
            let text =
                report::kernels_report(&rows, top, out_format(format), glyphs_of(&cli.look).block);
            write_out(&text)
        }
        Some(Sub::Summary {
            files,
            table,
            format,
            hta_rounding,
            kernel_wait,
        }) => {
            // A plain number is µs, as HTA's parameter.
            let kw = kernel_wait
                .trim()
                .parse::<f64>()
                .ok()
                .map(|us| (us * 1000.0).round() as i64)
                .or_else(|| parse_duration(&kernel_wait))
                .ok_or_else(|| {
                    format!("--kernel-wait {kernel_wait:?}: give a time such as 30us")
                })?;
            let opt = gpu::breakdown::Options {
                hta_rounding,
                kernel_wait_ns: kw,
                ..Default::default()
            };
            let tables: Vec<report::Table> = match table {
                SummaryTable::All => report::Table::ALL.to_vec(),
                SummaryTable::Temporal => vec![report::Table::Temporal],
                SummaryTable::Idle => vec![report::Table::Idle],
                SummaryTable::Overlap => vec![report::Table::Overlap],
                SummaryTable::Launch => vec![report::Table::Launch],
                SummaryTable::Queue => vec![report::Table::Queue],
                SummaryTable::Memory => vec![report::Table::Memory],
                SummaryTable::Overhead => vec![report::Table::Overhead],
            };
            // The breakdowns use HTA's types, not grove's categories: a broken user
            // categories file must not stop them.
            let cats = gpu::classify::Categories::load(None).unwrap_or_else(|e| {
                eprintln!("grove: warning: {e}; using the built-in categories");
                gpu::classify::Categories::builtin()
            });
            let mut rows: Vec<Vec<Vec<String>>> = vec![Vec::new(); tables.len()];
            for (i, f) in files.iter().enumerate() {
                let p = load(Some(f))?;
                let Some(ev) = p.events.as_ref() else {
                    return Err(format!("{}: not a trace: it has no events", f.display()));
                };
                let model = gpu::GpuModel::new(ev, cats.clone());
                let rank = report::rank_of(&p, i);
                let opt = gpu::breakdown::Options {
                    hta_base_ns: p
                        .meta_value("baseTimeNanoseconds")
                        .and_then(|b| b.parse().ok())
                        .unwrap_or(0),
                    ..opt
                };
                for (t, table) in tables.iter().enumerate() {
                    rows[t].extend(report::table_rows(&p, &model, rank, *table, &opt));
                }
            }
            let mut text = String::new();
            if format == OutFormat::Json && tables.len() > 1 {
                // One JSON document: {"temporal": [...], "idle": [...], ...}.
                let mut obj = serde_json::Map::new();
                for (t, table) in tables.iter().enumerate() {
                    let one = report::render(table.header(), &rows[t], report::Format::Json, "");
                    let v: serde_json::Value = serde_json::from_str(&one).unwrap_or_default();
                    obj.insert(table.name().to_string(), v);
                }
                let doc = serde_json::Value::Object(obj);
                return write_out(&(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"));
            }
            for (t, table) in tables.iter().enumerate() {
                let title = if tables.len() > 1 { table.name() } else { "" };
                text.push_str(&report::render(
                    table.header(),
                    &rows[t],
                    out_format(format),
                    title,
                ));
                if tables.len() > 1 && format == OutFormat::Text {
                    text.push('\n');
                }
            }
            write_out(&text)
        }
        Some(Sub::Replay {
            session: path,
            print,
            input,
            opts,
            cmds,
            depth,
        }) => {
            let script = session::read(&path)?;
            let mut app = open_for_replay(
                &path,
                &script,
                input.as_deref(),
                &opts,
                Keymap::default_map(),
            )?;
            replay_into(&mut app, &path, &script, &opts)?;
            for c in &cmds {
                app.run(c)?;
            }
            print_view(&app, print, depth, &cli.look)
        }
        None => {
            let theme = theme_of(&cli.look)?;
            // crossterm silently drops every colour under NO_COLOR; an explicit --color
            // overrides that, as the user asked for colour.
            if !matches!(cli.look.color, ColorArg::Auto | ColorArg::Never) {
                ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
            }
            let glyphs = glyphs_of(&cli.look);
            let keymap = Keymap::load(cli.keymap.as_deref())?;
            // Load and validate before touching the terminal, so errors print normally.
            let replay = match &cli.replay {
                Some(p) => Some((p.clone(), session::read(p)?)),
                None => None,
            };
            let mut app = match &replay {
                Some((path, script)) => open_for_replay(
                    path,
                    script,
                    cli.files.first().map(|f| f.as_path()),
                    &cli.replay_opts,
                    keymap,
                )?,
                None => App::with_categories(
                    load_inputs(&cli.files, cli.label.as_deref())?,
                    keymap,
                    user_categories(),
                ),
            };
            if !io::stdout().is_terminal() {
                return Err("the TUI needs a terminal; use `grove tree FILE` or `grove replay` for text output".into());
            }
            if let Ok((cols, rows)) = ratatui::crossterm::terminal::size() {
                app.term = (cols, rows);
            }
            app.log_nav = cli.log_nav;
            if !cli.no_session {
                let path = match &cli.session {
                    Some(p) => Some(p.clone()),
                    None => session::default_path(&app.profile.source.label),
                };
                if let Some(path) = path {
                    let w = session::Writer::create(&path, &app.session_header())
                        .map_err(|e| format!("session file {}: {e}", path.display()))?;
                    app.session = Some(w);
                }
            }
            if let Some((path, script)) = &replay {
                replay_into(&mut app, path, script, &cli.replay_opts)?;
            }
            for c in &cli.cmds {
                app.run(c)?;
            }
            let opts = grove::tui::Options {
                sync_output: !cli.no_sync,
            };
            grove::tui::run(&mut app, &theme, &glyphs, &opts).map_err(|e| {
                grove::tui::emergency_restore();
                e.to_string()
            })
        }
    }
}

fn out_format(f: OutFormat) -> report::Format {
    match f {
        OutFormat::Text => report::Format::Text,
        OutFormat::Csv => report::Format::Csv,
        OutFormat::Json => report::Format::Json,
    }
}

/// `30us`, `1.5ms`, `200ns`, `2s` -> ns.
fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = s[..split].parse().ok()?;
    grove::query::convert_unit(v, &s[split..], "ns").map(|x| x.round() as i64)
}

fn write_out(text: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Opens the input a session names (or `input`), warning when it changed since.
fn open_for_replay(
    path: &std::path::Path,
    script: &session::Script,
    input: Option<&std::path::Path>,
    opts: &ReplayOpts,
    keymap: Keymap,
) -> Result<App, String> {
    let all: Vec<session::Input> = script
        .header
        .as_ref()
        .map(|h| h.inputs.clone())
        .unwrap_or_default();
    if input.is_none() && all.len() > 1 {
        return open_ensemble_for_replay(path, &all, opts, keymap);
    }
    let recorded = all.first().cloned();
    let file: Option<std::path::PathBuf> = match (input, &recorded) {
        (Some(i), _) => Some(i.to_path_buf()),
        (None, Some(r)) => Some(std::path::PathBuf::from(&r.path)),
        (None, None) => None,
    };
    let Some(file) = file else {
        // Sessions recorded on the embedded demo name no input.
        let mut app = App::with_categories(readers::load_demo(), keymap, user_categories());
        if let Some(h) = &script.header {
            app.term = (h.term.cols, h.term.rows);
        }
        return Ok(app);
    };
    let mut warnings = Vec::new();
    if let Some(r) = &recorded {
        if let Ok(now) = session::input_of(&file) {
            if now.hash != r.hash {
                let msg = format!(
                    "{}: {} changed since the session was recorded (hash {} now {})",
                    path.display(),
                    file.display(),
                    r.hash,
                    now.hash
                );
                if opts.strict {
                    return Err(msg);
                }
                warnings.push(msg);
            }
        }
    }
    let p = readers::load_path(&file).map_err(|e| e.to_string())?;
    let mut app = App::with_categories(p, keymap, user_categories());
    for w in warnings {
        eprintln!("grove: warning: {w}");
        app.message = Some(grove::app::Message {
            level: grove::app::Level::Warning,
            text: w.clone(),
            caret: None,
        });
        app.profile.warnings.push(w);
    }
    Ok(app)
}

/// Re-opens the several inputs a comparison session names, with their labels.
fn open_ensemble_for_replay(
    path: &std::path::Path,
    inputs: &[session::Input],
    opts: &ReplayOpts,
    keymap: Keymap,
) -> Result<App, String> {
    let mut warnings = Vec::new();
    for r in inputs {
        if let Ok(now) = session::input_of(std::path::Path::new(&r.path)) {
            if now.hash != r.hash {
                let msg = format!(
                    "{}: {} changed since the session was recorded (hash {} now {})",
                    path.display(),
                    r.path,
                    r.hash,
                    now.hash
                );
                if opts.strict {
                    return Err(msg);
                }
                warnings.push(msg);
            }
        }
    }
    let files: Vec<std::path::PathBuf> = inputs.iter().map(|i| (&i.path).into()).collect();
    // Labels go by position; a file of several profiles shifts the positions after
    // it, so then they go by file stem.
    let by_position = inputs.iter().all(|i| i.label.is_some());
    let given: std::collections::HashMap<String, String> = inputs
        .iter()
        .enumerate()
        .filter_map(|(k, i)| {
            let key = if by_position {
                k.to_string()
            } else {
                let name = std::path::Path::new(&i.path).file_name()?.to_string_lossy();
                name.split('.').next().unwrap_or(&name).to_string()
            };
            Some((key, i.label.clone()?))
        })
        .collect();
    let p = grove::ensemble::load_ensemble(&files, &given).map_err(|e| e.to_string())?;
    let mut app = App::with_categories(p, keymap, user_categories());
    for w in warnings {
        eprintln!("grove: warning: {w}");
        app.profile.warnings.push(w);
    }
    Ok(app)
}

fn replay_into(
    app: &mut App,
    path: &std::path::Path,
    script: &session::Script,
    opts: &ReplayOpts,
) -> Result<(), String> {
    for w in &script.warnings {
        eprintln!("grove: warning: {}: {w}", path.display());
    }
    app.run_script(script, &path.display().to_string(), opts.until)
        .map_err(|e| e.msg)
}

/// Prints the current view of an app (headless replay).
fn print_view(
    app: &App,
    print: PrintFormat,
    depth: Option<usize>,
    look: &Look,
) -> Result<(), String> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let res = match print {
        PrintFormat::Tree => {
            let po = &app.tree.po;
            let positions = app.export_positions_to(depth);
            let inc = app.inclusive_column();
            let mut metrics = vec![inc.clone()];
            if inc != app.metric {
                metrics.push(app.metric.clone());
            }
            let opts = export::text::TextOptions {
                metrics: &metrics,
                precision: 3,
                legend: false,
                color: false,
                expand_names: false,
                glyphs: glyphs_of(look),
            };
            let text = export::text::render(
                &app.profile.cct,
                &app.profile.metrics,
                po,
                &positions,
                &opts,
            );
            out.write_all(text.as_bytes())
        }
        PrintFormat::Json => app.export_to_depth(ExportFormat::Json, &mut out, depth),
        PrintFormat::Hatchet => app.export_to_depth(ExportFormat::Hatchet, &mut out, depth),
        PrintFormat::Csv => app.export_to_depth(ExportFormat::Csv, &mut out, depth),
        PrintFormat::Folded => app.export_to_depth(ExportFormat::Folded, &mut out, depth),
        PrintFormat::Parquet => {
            binary_to_pipe()?;
            app.export_to_depth(ExportFormat::Parquet, &mut out, depth)
        }
    };
    match res.and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

fn info_text(p: &Profile) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let src = &p.source;
    let _ = writeln!(
        s,
        "file:     {}",
        src.path
            .as_ref()
            .map(|x| x.display().to_string())
            .unwrap_or("demo".into())
    );
    let _ = writeln!(
        s,
        "format:   {}{} ({})",
        src.format.label(),
        if src.gzip { ", gzip" } else { "" },
        p.dialect
    );
    let _ = writeln!(s, "size:     {} bytes", src.size);
    let _ = writeln!(s, "nodes:    {}", p.cct.len());
    let _ = writeln!(s, "roots:    {}", p.cct.roots.len());
    if let Some(ev) = &p.events {
        let gpu: Vec<usize> = (0..ev.len())
            .filter(|&i| ev.kind[i].is_gpu_activity())
            .collect();
        let streams: std::collections::BTreeSet<(i64, i64)> =
            gpu.iter().map(|&i| (ev.device[i], ev.stream[i])).collect();
        let devices: std::collections::BTreeSet<i64> = streams.iter().map(|x| x.0).collect();
        let threads: std::collections::BTreeSet<(u32, u32)> = (0..ev.len())
            .filter(|&i| matches!(ev.kind[i], EventKind::Cpu | EventKind::Runtime))
            .map(|i| (ev.pid[i], ev.tid[i]))
            .collect();
        let count = |k: EventKind| ev.kind.iter().filter(|&&x| x == k).count();
        let gpu_ns: i64 = gpu.iter().map(|&i| ev.dur[i]).sum();
        let _ = writeln!(s, "events:   {}", ev.len());
        let _ = writeln!(
            s,
            "          cpu {} · runtime {} · kernel {} · memcpy {} · memset {} · instant {}",
            count(EventKind::Cpu),
            count(EventKind::Runtime),
            count(EventKind::Kernel),
            count(EventKind::Memcpy),
            count(EventKind::Memset),
            count(EventKind::Instant)
        );
        let _ = writeln!(s, "gpu time: {gpu_ns} ns");
        if let Some(r) = p.meta_value("rank") {
            let world = p.meta_value("distributedInfo.world_size").unwrap_or("?");
            let _ = writeln!(s, "rank:     {r} of {world}");
        }
        let _ = writeln!(s, "devices:  {}", devices.len());
        let _ = writeln!(s, "streams:  {}", streams.len());
        let _ = writeln!(s, "threads:  {}", threads.len());
    }
    let _ = writeln!(s, "metrics:");
    for m in p.metrics.names() {
        let u = p.metrics.unit(&m);
        let _ = writeln!(
            s,
            "  {m}{}",
            if u.is_empty() {
                String::new()
            } else {
                format!(" [{u}]")
            }
        );
    }
    if !p.meta.is_empty() {
        let _ = writeln!(s, "metadata:");
        for (k, v) in &p.meta {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    for w in &p.warnings {
        let _ = writeln!(s, "warning:  {w}");
    }
    s
}

/// Binary output goes to a file or a pipe, never onto the terminal.
fn binary_to_pipe() -> Result<(), String> {
    if io::stdout().is_terminal() {
        return Err("parquet is binary: redirect it to a file (> out.parquet)".into());
    }
    Ok(())
}

/// The user's kernel categories (config folder) in front of the built-in rules; a
/// broken file falls back to the built-in rules, as the TUI always did.
fn user_categories() -> gpu::classify::Categories {
    gpu::classify::Categories::load(None).unwrap_or_else(|_| gpu::classify::Categories::builtin())
}
