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

/// A small Kineto trace: a CPU op, its launch, two kernels with args, a counter.
fn trace() -> Profile {
    let json = r#"{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10, "dur": 20},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 12, "dur": 3,
  "args": {"correlation": 7}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 16, "dur": 3,
  "args": {"correlation": 8}},
 {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7, "ts": 20, "dur": 5,
  "args": {"correlation": 7, "device": 0, "stream": 7, "grid": [1, 2, 1], "registers per thread": 32, "occupancy": 0.5}},
 {"ph": "X", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 30, "dur": 4,
  "args": {"correlation": 8, "device": 0, "stream": 7, "grid": [2, 2, 1], "registers per thread": 64, "occupancy": 1}},
 {"ph": "C", "name": "queue", "pid": 1, "ts": 11, "args": {"length": 3}},
 {"ph": "C", "name": "queue", "pid": 1, "ts": 21, "args": {"length": 1}}
]}"#;
    // One directory per test thread (tests run in parallel), removed with its file.
    let thread = format!("{:?}", std::thread::current().id()).replace(['(', ')'], "");
    let dir = std::env::temp_dir().join(format!("grove-sql-test-{}-{thread}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("t.json");
    std::fs::write(&f, json).unwrap();
    let p = crate::load::load_path(&f).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    p
}

#[test]
fn wide_tables_build_only_the_columns_named() {
    let p = trace();
    let members = [Member::of("p", &p)];
    let cats = Categories::builtin();
    let mut t = Tables::default();
    let df = t
        .query(&members, &cats, "select name, count(*) as n, sum(duration) as d from events group by name order by name")
        .unwrap();
    assert_eq!(
        text(&df),
        "name,n,d\naten::mm,1,20000\ncudaLaunchKernel,2,6000\ngemm_a,1,5000\ngemm_b,1,4000\n"
    );
    // `duration` was lent for the query, not built; only `name` was.
    assert_eq!(t.columns("events"), ["name"]);
    t.query(&members, &cats, "select count(*) from kernels")
        .unwrap();
    assert_eq!(t.columns("kernels"), Vec::<String>::new());
    let df = t
        .query(&members, &cats, "select k.name, r.start from kernels k join events r on k.launch = r.id order by k.start")
        .unwrap();
    assert_eq!(text(&df), "name,start\ngemm_a,12000\ngemm_b,16000\n");
    // An answer that holds a lent column is answered again from owned columns.
    let df = t
        .query(
            &members,
            &cats,
            "select start, duration from events where kind = 'kernel'",
        )
        .unwrap();
    assert_eq!(text(&df), "start,duration\n20000,5000\n30000,4000\n");
    assert!(t.columns("events").contains(&"start".to_string()));
    let df = t.query(&members, &cats, "select * from events").unwrap();
    assert_eq!(df.height(), 5);
    assert_eq!(
        df.get_column_names()[..4],
        ["id", "kind", "name", "category"]
    );
}

#[test]
fn typed_args_are_columns() {
    let p = trace();
    let df = run(
        &p,
        r#"select name, "args.grid", "args.registers per thread" as regs, "args.occupancy" from kernels order by start"#,
    )
    .unwrap();
    assert_eq!(
        text(&df),
        "name,args.grid,regs,args.occupancy\ngemm_a,\"[1,2,1]\",32,0.5\ngemm_b,\"[2,2,1]\",64,1\n"
    );
    let types: Vec<DataType> = df.dtypes();
    assert_eq!(
        types[1..],
        [DataType::String, DataType::Int64, DataType::Float64]
    );
}

#[test]
fn counters_are_a_table() {
    let p = trace();
    let df = run(
        &p,
        "select name, series, track, process, time, value from counters order by time",
    )
    .unwrap();
    assert_eq!(
        text(&df),
        "name,series,track,process,time,value\nqueue,length,queue.length,1,11000,3\nqueue,length,queue.length,1,21000,1\n"
    );
}

#[test]
fn several_members_have_a_profile_column() {
    let (a, b) = (trace(), trace());
    let members = [Member::of("a", &a), Member::of("b", &b)];
    let df = Tables::default()
        .query(
            &members,
            &Categories::builtin(),
            r#"select profile, count(*) as n, sum("args.registers per thread") as r from kernels group by profile order by profile"#,
        )
        .unwrap();
    assert_eq!(text(&df), "profile,n,r\na,2,96\nb,2,96\n");
}
