use super::*;
use crate::model::profile_of_paths;

fn run(p: &Profile, q: &str) -> Result<DataFrame, SqlError> {
    let members = [Member::of("p", p)];
    Tables::default().query(&members, &Categories::builtin(), q)
}

fn text(df: &DataFrame) -> String {
    let mut out = Vec::new();
    write::csv(&mut out, df).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn nodes_have_paths_and_both_metric_columns() {
    let p = profile_of_paths(&[("main/a", 3.0), ("main/b", 1.5), ("main/a", 1.0)], "s");
    let df = run(
        &p,
        r#"select path, depth, time, "time (inc)" from nodes order by id"#,
    )
    .unwrap();
    assert_eq!(
        text(&df),
        "path,depth,time,time (inc)\nmain,0,0,5.5\nmain/a,1,4,4\nmain/b,1,1.5,1.5\n"
    );
}

#[test]
fn only_the_tables_a_query_names_are_built() {
    let p = profile_of_paths(&[("main/a", 3.0)], "s");
    let members = [Member::of("p", &p)];
    let mut t = Tables::default();
    let cats = Categories::builtin();
    t.query(&members, &cats, "select count(*) from nodes")
        .unwrap();
    assert_eq!(t.built(), ["nodes"]);
    // A profile without events has empty event tables, not an error.
    let df = t
        .query(&members, &cats, "select count(*) as n from events")
        .unwrap();
    assert_eq!(text(&df), "n\n0\n");
    assert_eq!(t.built(), ["events", "nodes"]);
}

#[test]
fn bad_queries_are_one_line_with_a_position() {
    let p = profile_of_paths(&[("main/a", 3.0)], "s");
    let e = run(&p, "select name frm nodes").unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    assert!(e.column.is_some(), "{e:?}");
    let e = run(&p, "select nope from nodes").unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    assert!(e.to_string().contains("nope"), "{e}");
    let e = run(&p, "select * from nowhere").unwrap_err();
    assert!(e.to_string().contains("nowhere"), "{e}");
}

#[test]
fn functions_merge_call_sites() {
    let p = profile_of_paths(&[("main/f", 1.0), ("main/g/f", 2.0)], "s");
    let df = run(&p, "select name, time from functions where name = 'f'").unwrap();
    assert_eq!(text(&df), "name,time\nf,3\n");
}
