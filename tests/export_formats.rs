//! The export formats' one table (`grove::export::formats::FORMATS`) against what derives
//! from it and what is written by hand: every subcommand's `--format`, `:export`, and the
//! lists in docs/guide.md and docs/commands.md.

mod common;

use clap::CommandFactory;
use grove::export::formats::{self, Format, Writes, FORMATS};

fn doc(name: &str) -> String {
    std::fs::read_to_string(common::repo(name)).unwrap()
}

/// The cells of a markdown table row, without the outer pipes.
fn cells(row: &str) -> Vec<String> {
    // `\|` is a pipe inside a cell.
    let row = row.trim().replace("\\|", "\u{0}");
    row.trim_matches('|')
        .split('|')
        .map(|c| c.trim().replace('\u{0}', "\\|"))
        .collect()
}

/// The first `code` span of a cell: `` `csv` (default) `` -> csv.
fn code(cell: &str) -> &str {
    cell.split('`').nth(1).unwrap_or("")
}

#[test]
fn every_format_has_one_entry() {
    for s in FORMATS {
        assert_eq!(
            s.format.spec().name,
            s.name,
            "{:?} has two entries",
            s.format
        );
        assert_eq!(Format::named(s.name), Some(s.format));
        assert!(!s.writes.is_empty(), "{} writes nothing", s.name);
    }
}

/// guide.md's "Headless commands" table: one row per format in the table's order, a
/// column per kind of output, a cell where the format writes it.
#[test]
fn the_guides_table_is_the_format_table() {
    let guide = doc("docs/guide.md");
    let start = guide
        .find("| `--format` | a tree:")
        .expect("the formats table in guide.md");
    let rows: Vec<Vec<String>> = guide[start..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .map(cells)
        .collect();
    let kinds = [
        Writes::Tree,
        Writes::Tables,
        Writes::Query,
        Writes::Events,
        Writes::Info,
    ];
    assert_eq!(rows[0].len(), 1 + kinds.len(), "{:?}", rows[0]);
    let body = &rows[2..];
    let names: Vec<&str> = body.iter().map(|r| code(&r[0])).collect();
    let want: Vec<&str> = FORMATS.iter().map(|s| s.name).collect();
    assert_eq!(names, want, "guide.md's formats are not FORMATS");
    for (row, spec) in body.iter().zip(FORMATS) {
        for (k, w) in kinds.iter().enumerate() {
            assert_eq!(
                !row[k + 1].is_empty(),
                spec.can_write(*w),
                "guide.md: {} under {:?}",
                spec.name,
                rows[0][k + 1]
            );
        }
    }
    // The subcommands a column names take exactly its formats.
    let cli = grove::cli::Cli::command();
    for (k, w) in kinds.iter().enumerate() {
        let subs: Vec<&str> = rows[0][k + 1]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| !s.starts_with(':'))
            .collect();
        assert!(!subs.is_empty(), "{:?}", rows[0][k + 1]);
        for sub in subs {
            let cmd = cli
                .find_subcommand(sub)
                .unwrap_or_else(|| panic!("no subcommand {sub}"));
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_id() == "format")
                .unwrap();
            let took: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let want: Vec<&str> = formats::writing(*w).map(|s| s.name).collect();
            assert_eq!(took, want, "grove {sub} --format");
        }
    }
}

/// commands.md's `export` row and its table of formats: the formats with a tree writer.
#[test]
fn commands_md_lists_what_export_writes() {
    let md = doc("docs/commands.md");
    let want: Vec<&str> = formats::exportable().map(|s| s.name).collect();
    let row = md
        .lines()
        .find(|l| l.starts_with("| `export` |"))
        .expect("the export row of commands.md");
    let args = code(&cells(row)[1]).replace("\\|", "|");
    assert_eq!(args, format!("{} FILE", want.join("|")));
    assert_eq!(formats::EXPORT_NAMES, want.join("|"));
    let start = md.find("| format | content |").unwrap();
    let listed: Vec<&str> = md[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('`').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(listed, want, "commands.md's export formats");
}

/// `:export` takes the tree writers and refuses anything else in one line naming them.
#[test]
fn export_refuses_what_it_cannot_write() {
    let mut app = common::open_app("testdata/small.trace.json");
    let dir = std::env::temp_dir().join(format!("grove-export-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for s in formats::exportable() {
        let path = dir.join(format!("out.{}", s.name));
        app.run(&format!("export {} {}", s.name, path.display()))
            .unwrap_or_else(|e| panic!("export {}: {e}", s.name));
        assert!(std::fs::metadata(&path).unwrap().len() > 0, "{}", s.name);
    }
    let err = app
        .run(&format!("export text {}", dir.join("t").display()))
        .unwrap_err();
    let names = formats::list(formats::exportable().map(|s| s.name));
    assert!(err.contains(&format!("expected {names}")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A subcommand refuses a format it cannot write, naming those it can.
#[test]
fn a_subcommand_refuses_a_format_it_cannot_write() {
    let f = common::repo("testdata/small.trace.json");
    let f = f.to_str().unwrap();
    let (code, out, err) = common::grove(&["kernels", f, "--format", "svg"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("[possible values: text, csv, json]"), "{err}");
    let (code, _, err) = common::grove(&["timeline", f, "--format", "json"]);
    assert_eq!(code, 2);
    assert!(err.contains("[possible values: text, csv]"), "{err}");
}

/// Tab after `:export ` offers the formats `:export` writes, in the table's order.
#[test]
fn tab_offers_the_export_formats() {
    let mut app = common::open_app("testdata/small.trace.json");
    for k in grove::app::keys::Key::parse_seq(":export <Tab>").unwrap() {
        app.on_key(k);
    }
    let want: Vec<&str> = formats::exportable().map(|s| s.name).collect();
    assert_eq!(app.completions, want);
}
