use super::*;
use crate::model::events::{EventTable, NONE_U32};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn fixture(name: &str) -> PathBuf {
    root().join("testdata/nsys").join(name)
}

fn load(path: &Path) -> Profile {
    let mut all = read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(all.len(), 1);
    let p = all.remove(0);
    assert!(p.cct.check(), "{}", path.display());
    let ev = p.events.as_ref().unwrap();
    assert_eq!((ev.node.len(), ev.launch.len()), (ev.len(), ev.len()));
    p
}

fn count(ev: &EventTable, k: EventKind) -> usize {
    ev.kind.iter().filter(|&&x| x == k).count()
}

fn find(ev: &EventTable, name: &str) -> usize {
    (0..ev.len())
        .find(|&i| ev.name_of(i) == name)
        .unwrap_or_else(|| panic!("no event {name}"))
}

fn args(ev: &EventTable, i: usize) -> serde_json::Value {
    ev.args_of(i).expect("GPU rows have args").to_json()
}

/// Every GPU activity with a launch hangs under its runtime call's node.
fn check_launches(p: &Profile) -> usize {
    let ev = p.events.as_ref().unwrap();
    let mut linked = 0;
    for i in 0..ev.len() {
        if !ev.kind[i].is_gpu_activity() || ev.launch[i] == NONE_U32 {
            continue;
        }
        let l = ev.launch[i] as usize;
        assert_eq!(ev.kind[l], EventKind::Runtime);
        assert_eq!(ev.correlation[l], ev.correlation[i]);
        assert_eq!(p.cct.parent(ev.node[i]), Some(ev.node[l]));
        linked += 1;
    }
    linked
}

fn root_named(p: &Profile, name: &str) -> u32 {
    p.cct
        .root_ids()
        .into_iter()
        // Lane roots are named by thread role, maybe with " (main thread)" or " #2".
        .find(|&r| {
            let n = p.cct.name(r);
            n == name || n.strip_prefix(name).is_some_and(|x| x.starts_with(' '))
        })
        .unwrap_or_else(|| {
            let names: Vec<&str> = p.cct.root_ids().iter().map(|&r| p.cct.name(r)).collect();
            panic!("no root {name} among {names:?}")
        })
}

#[test]
fn fuser_report() {
    let path = root().join("../shared/corpus/Fuser/report1.sqlite");
    if !path.exists() {
        crate::corpus_skip!()
    }
    let head = std::fs::read(&path).unwrap();
    assert!(sniff(&path, &head[..4096]));
    let p = load(&path);
    assert_eq!(p.source.format, Format::NsightSqlite);
    let ev = p.events.as_ref().unwrap();
    assert_eq!(count(ev, EventKind::Kernel), 19);
    assert_eq!(count(ev, EventKind::Memcpy), 1);
    assert_eq!(count(ev, EventKind::Memset), 1);
    assert_eq!(count(ev, EventKind::Runtime), 967);
    // All 639 NVTX rows are push/pop ranges; there is no OSRT_API table.
    assert_eq!(count(ev, EventKind::Cpu), 639);
    assert_eq!(ev.len(), 19 + 1 + 1 + 967 + 639);

    // Every GPU activity is attached under the runtime call that launched it.
    assert_eq!(check_launches(&p), 21);
    for i in 0..ev.len() {
        if ev.kind[i] == EventKind::Kernel {
            let l = ev.launch[i] as usize;
            assert!(
                ["cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx"].contains(&ev.name_of(l)),
                "{}",
                ev.name_of(l)
            );
            assert_eq!((ev.device[i], ev.stream[i]), (0, 7));
        }
    }
    assert!(!p.warnings.iter().any(|w| w.contains("unattributed")));

    // GPU time equals the tables' own sum of end - start.
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let sql: i64 = conn
        .query_row(
            "SELECT (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL)
                  + (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY)
                  + (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMSET)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let gpu: i64 = (0..ev.len())
        .filter(|&i| ev.kind[i].is_gpu_activity())
        .map(|i| ev.dur[i])
        .sum();
    assert_eq!(gpu, sql);
    let inc = p.metrics.values("gpu_time (inc)").unwrap();
    let roots: f64 = p.cct.root_ids().iter().map(|&r| inc[r as usize]).sum();
    assert_eq!(roots, sql as f64);
    let kernel_sql: i64 = conn
        .query_row(
            "SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let kernel: i64 = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Kernel)
        .map(|i| ev.dur[i])
        .sum();
    assert_eq!(kernel, kernel_sql);

    // Names, args and metadata.
    let m = find(ev, "Memcpy DtoH (Device -> Pinned)");
    assert_eq!(ev.kind[m], EventKind::Memcpy);
    assert_eq!(args(ev, m)["bytes"], 1);
    assert_eq!(ev.kind[find(ev, "Memset (Device)")], EventKind::Memset);
    let k = (0..ev.len())
        .find(|&i| ev.kind[i] == EventKind::Kernel)
        .unwrap();
    let a = args(ev, k);
    assert_eq!(a["grid"], serde_json::json!([1056, 1, 1]));
    assert_eq!(a["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(a["registers per thread"], 40);
    assert_eq!(a["correlation"], 1019);
    assert!(ev.name_of(k).starts_with("void at::native::"));
    assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.16.1"));
    assert_eq!(p.meta_value("device 0"), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(
        p.meta_value("session start (UTC epoch ns)"),
        Some("1733860139400912216")
    );
    assert_eq!(
        p.dialect,
        "Nsight Systems 2024.6.2.25, export schema 3.16.1"
    );
    // The main thread's root is named after the thread.
    let main = root_named(&p, "test_matmul");
    assert!(p.metrics.get("gpu_time (inc)", main) > 0.0);
}

#[test]
fn schema_3_4_0_without_enums_or_metadata() {
    let p = load(&fixture("schema_3_4_0.sqlite"));
    let ev = p.events.as_ref().unwrap();
    assert_eq!(count(ev, EventKind::Kernel), 3);
    assert_eq!(count(ev, EventKind::Memcpy), 1);
    assert_eq!(count(ev, EventKind::Memset), 1);
    assert_eq!(count(ev, EventKind::Runtime), 4);
    // 4 NVTX ranges and 1 OS runtime call; the mark is an instant, the domain skipped.
    assert_eq!(count(ev, EventKind::Cpu), 5);
    assert_eq!(count(ev, EventKind::Instant), 1);
    assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), None);
    assert!(p.dialect.contains("older export"), "{}", p.dialect);
    assert_eq!(p.meta_value("device 0"), Some("NVIDIA A100-SXM4-40GB"));

    // Copy and memory kinds by number; Kineto's names and bandwidth.
    let m = find(ev, "Memcpy HtoD (Pageable -> Device)");
    let a = args(ev, m);
    assert_eq!(a["bytes"], 4000);
    assert_eq!(a["memory bandwidth (GB/s)"], 2.0);
    assert_eq!(ev.correlation[m], 11);
    assert_eq!(ev.kind[find(ev, "Memset (Device)")], EventKind::Memset);

    let g = find(ev, "void gemm_kernel<float>(float *)");
    let a = args(ev, g);
    assert_eq!(a["grid"], serde_json::json!([4, 2, 1]));
    assert_eq!(a["shared memory"], 3072);
    assert_eq!(a["registers per thread"], 40);
    assert_eq!((ev.device[g], ev.stream[g], ev.dur[g]), (0, 7, 2000));
    let launch = ev.launch[g] as usize;
    assert_eq!(ev.name_of(launch), "cudaLaunchKernel");
    assert_eq!(ev.strings.resolve(ev.cat[launch]), "cuda_runtime");
    // The launch sits inside the NVTX ranges step > forward on the main thread.
    let c = &p.cct;
    let path: Vec<&str> = c.path(ev.node[g]).iter().map(|&n| c.name(n)).collect();
    assert_eq!(
        path,
        [
            c.name(root_named(&p, "python")),
            "step",
            "forward",
            "cudaLaunchKernel",
            "void gemm_kernel<float>(float *)"
        ]
    );
    // Short name when there is no demangled name; driver calls are cuda_driver.
    let r = find(ev, "relu_kernel");
    let l = ev.launch[r] as usize;
    assert_eq!(ev.name_of(l), "cuLaunchKernel");
    assert_eq!(ev.strings.resolve(ev.cat[l]), "cuda_driver");
    assert_eq!(check_launches(&p), 4);

    // The orphan kernel has its own root; GPU time is preserved.
    let o = find(ev, "orphan_kernel");
    assert_eq!(ev.launch[o], NONE_U32);
    let u = root_named(&p, "<unattributed> stream 9");
    assert_eq!(c.parent(ev.node[o]), Some(u));
    let inc = p.metrics.values("gpu_time (inc)").unwrap();
    let total: f64 = c.root_ids().iter().map(|&r| inc[r as usize]).sum();
    assert_eq!(total, (2000 + 500 + 1000 + 2000 + 100) as f64);

    // The unclosed range ends with the trace; the worker's rows are on its lane.
    let e = find(ev, "epilogue");
    assert_eq!(ev.ts[e] + ev.dur[e], 12000);
    assert!(p.warnings.iter().any(|w| w.contains("never ended")));
    let io = find(ev, "io");
    let wait = find(ev, "pthread_cond_wait");
    assert_eq!(ev.strings.resolve(ev.cat[wait]), "osrt");
    assert_eq!(ev.strings.resolve(ev.tid[io]), "1001");
    assert_eq!(ev.strings.resolve(ev.pid[io]), "1000");
    assert_eq!(ev.tid[io], ev.tid[wait]);
    let w = root_named(&p, "worker");
    assert_eq!(c.parent(ev.node[io]), Some(w));
    assert_eq!(ev.kind[find(ev, "checkpoint")], EventKind::Instant);
}

#[test]
fn schema_3_16_by_name_with_processes_and_peers() {
    let p = load(&fixture("schema_3_16.sqlite"));
    let ev = p.events.as_ref().unwrap();
    assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.16.1"));
    assert_eq!(
        p.dialect,
        "Nsight Systems 2024.6.1.90, export schema 3.16.1"
    );
    assert_eq!(p.meta_value("device 1"), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(count(ev, EventKind::Kernel), 2);
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL dropped")));
    // Shuffled columns read by name.
    let a = find(ev, "kernel_a");
    assert_eq!(
        (ev.ts[a], ev.dur[a], ev.device[a], ev.stream[a]),
        (1000, 400, 0, 7)
    );
    // Correlation 1 in both processes: each kernel under its own process's launch.
    let b = find(ev, "kernel_b");
    assert_eq!(ev.name_of(ev.launch[a] as usize), "cudaLaunchKernel");
    assert_eq!(ev.name_of(ev.launch[b] as usize), "cudaLaunchKernelExC");
    assert_eq!(args(ev, b)["correlation"], 1);
    assert_ne!(ev.correlation[a], ev.correlation[b]);
    assert_eq!(check_launches(&p), 4);
    assert!(p
        .meta_value("correlation ids")
        .is_some_and(|v| v.contains("2 processes")));
    // Peer copy with Kineto's peer args; labels from the ENUM tables.
    let peer = find(ev, "Memcpy PtoP (Device -> Device)");
    let pa = args(ev, peer);
    assert_eq!(pa["memory bandwidth (GB/s)"], 1000.0);
    assert_eq!(
        (pa["fromDevice"].clone(), pa["toDevice"].clone()),
        (0.into(), 1.into())
    );
    assert_eq!(pa["copy kind"], "Peer-to-Peer");
    assert_eq!(ev.name_of(ev.launch[peer] as usize), "cudaMemcpyPeerAsync");
    let d = find(ev, "Memcpy DtoH (Device -> Pinned)");
    assert_eq!(ev.name_of(ev.launch[d] as usize), "cudaMemcpyAsync");
    // Runtime ABI suffixes go, real `_v2` names stay.
    find(ev, "cudaGetDeviceProperties_v2");
    // Thread names by priority; NVTX text by textId or text.
    let r0 = root_named(&p, "rank0");
    let r1 = root_named(&p, "rank1");
    assert_eq!(p.metrics.get("gpu_time (inc)", r0), (400 + 1000) as f64);
    assert_eq!(p.metrics.get("gpu_time (inc)", r1), (600 + 100) as f64);
    assert_eq!(count(ev, EventKind::Cpu), 2);
    assert!((0..ev.len()).all(|i| ev.kind[i] != EventKind::Cpu || ev.name_of(i) == "iteration"));
}

#[test]
fn export_without_kernel_table() {
    let p = load(&fixture("no_kernel.sqlite"));
    let ev = p.events.as_ref().unwrap();
    assert_eq!(count(ev, EventKind::Kernel), 0);
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("no CUPTI_ACTIVITY_KIND_KERNEL table")));
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("no column srcKind, dstKind")));
    let m = find(ev, "Memcpy HtoD (Unknown -> Unknown)");
    assert_eq!(ev.name_of(ev.launch[m] as usize), "cudaMemcpy");
    assert_eq!(check_launches(&p), 1);
    assert_eq!(ev.kind[find(ev, "copy phase")], EventKind::Cpu);
    // Without ThreadNames or PROCESSES the lane still has a root.
    let c = ev.node[find(ev, "copy phase")];
    assert!(p.cct.parent(c).is_some_and(|r| p.cct.parent(r).is_none()));
    assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.13.2"));
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grove-nsys-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn corrupt_and_foreign_databases_are_errors() {
    let good = std::fs::read(fixture("schema_3_4_0.sqlite")).unwrap();
    // The header and the first pages only.
    let cut = temp("truncated.sqlite");
    std::fs::write(&cut, &good[..8192]).unwrap();
    let e = read(&cut).unwrap_err();
    assert!(!e.contains('\n'), "{e}");
    // The magic, then garbage.
    let bad = temp("garbage.sqlite");
    let mut bytes = SQLITE_MAGIC.to_vec();
    bytes.extend((0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
    std::fs::write(&bad, &bytes).unwrap();
    let e = read(&bad).unwrap_err();
    assert!(!e.contains('\n'), "{e}");
    // A damaged page inside a table.
    let mut damaged = good.clone();
    for b in &mut damaged[4096..good.len().min(4096 * 6)] {
        *b = 0xA5;
    }
    let dmg = temp("damaged.sqlite");
    std::fs::write(&dmg, &damaged).unwrap();
    assert!(read(&dmg).is_err());
    // An SQLite database of another tool.
    let other = temp("other.sqlite");
    let _ = std::fs::remove_file(&other);
    let c = Connection::open(&other).unwrap();
    c.execute_batch("CREATE TABLE rocpd_op (id INTEGER); INSERT INTO rocpd_op VALUES (1);")
        .unwrap();
    drop(c);
    let head = std::fs::read(&other).unwrap();
    assert!(!sniff(&other, &head));
    let e = read(&other).unwrap_err();
    assert!(e.contains("not an Nsight Systems export"), "{e}");
    assert!(e.contains("rocpd_op"), "{e}");
    // Through the loader the message names the file.
    let e = crate::readers::load_all(&other).unwrap_err().to_string();
    assert!(e.starts_with(&other.display().to_string()), "{e}");
    assert!(!sniff(&other, b"{\"traceEvents\": []}"));
    let _ = std::fs::remove_dir_all(cut.parent().unwrap());
}

#[test]
fn fixtures_sniff() {
    for f in [
        "schema_3_4_0.sqlite",
        "schema_3_16.sqlite",
        "no_kernel.sqlite",
    ] {
        let path = fixture(f);
        let head = std::fs::read(&path).unwrap();
        assert!(sniff(&path, &head), "{f}");
    }
}

#[test]
fn names() {
    assert_eq!(runtime_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
    assert_eq!(
        runtime_name("cudaOccupancyMaxActiveClusters_v11070"),
        "cudaOccupancyMaxActiveClusters"
    );
    assert_eq!(
        runtime_name("cudaGetDeviceProperties_v2_v12000"),
        "cudaGetDeviceProperties_v2"
    );
    assert_eq!(runtime_name("cuGetProcAddress_v2"), "cuGetProcAddress_v2");
    assert_eq!(runtime_name("cudaFoo_v"), "cudaFoo_v");
    assert_eq!(
        copy_kind_from_enum("CUDA_MEMCPY_KIND_HTOD").as_deref(),
        Some("HtoD")
    );
    assert_eq!(
        copy_kind_from_enum("CUDA_MEMCPY_KIND_UVM_DTOH").as_deref(),
        Some("UVM DtoH")
    );
    assert_eq!(copy_kind_from_enum("CUDA_MEMCPY_KIND_UNKNOWN"), None);
    assert_eq!(decode_global(285298772900428), (227916, 227916));
}

/// A copy of a fixture changed by `sql` (run with the schema writable).
fn damaged_copy(name: &str, sql: &str) -> PathBuf {
    let path = temp(name);
    std::fs::copy(fixture("schema_3_16.sqlite"), &path).unwrap();
    let c = Connection::open(&path).unwrap();
    c.execute_batch(&format!("PRAGMA writable_schema=ON; {sql}"))
        .unwrap();
    drop(c);
    path
}

fn warnings_of(path: &Path) -> Vec<String> {
    read(path).unwrap().remove(0).warnings
}

/// Issue 14 item 9: damage that used to load silently now warns.
#[test]
fn emptied_string_ids_and_renamed_columns_warn() {
    let clean = warnings_of(&fixture("schema_3_16.sqlite"));
    assert!(
        !clean
            .iter()
            .any(|w| w.contains("StringIds lacks") || w.contains("has no column")),
        "{clean:?}"
    );
    // StringIds emptied: every kernel shows as <unknown kernel>, and says why.
    let p = damaged_copy("no_strings.sqlite", "DELETE FROM StringIds;");
    let w = warnings_of(&p);
    let kernels = w
        .iter()
        .find(|w| w.contains("CUPTI_ACTIVITY_KIND_KERNEL name a string id that StringIds lacks"))
        .unwrap_or_else(|| panic!("{w:?}"));
    assert!(
        kernels.contains("<unknown kernel>") && kernels.contains("0 strings"),
        "{kernels}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("CUPTI_ACTIVITY_KIND_RUNTIME name a string id")),
        "{w:?}"
    );
    // shortName renamed: demangledName still names kernels, but the table is not the
    // schema it claims to be.
    let p = damaged_copy(
        "renamed_short.sqlite",
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN shortName TO short_name;",
    );
    let w = warnings_of(&p);
    assert!(
        w.iter()
            .any(|w| w.contains("CUPTI_ACTIVITY_KIND_KERNEL has no column shortName")),
        "{w:?}"
    );
    let p = damaged_copy(
        "renamed_text.sqlite",
        "ALTER TABLE NVTX_EVENTS RENAME COLUMN text TO label;",
    );
    let w = warnings_of(&p);
    assert!(
        w.iter()
            .any(|w| w.contains("NVTX_EVENTS has no column text")),
        "{w:?}"
    );
}

/// Issue 14 item 8: a malformed schema whose message would quote the rest of the
/// CREATE TABLE statement (an unterminated string) is one short line.
#[test]
fn malformed_schema_is_one_line() {
    let c = Connection::open(fixture("schema_3_16.sqlite")).unwrap();
    let sql: String = c
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(c);
    let broken = sql
        .replacen('(', "(\n  ", 1)
        .replace(", ", ",\n  ")
        .replacen("\"start\" INTEGER", "\"start\" INTEGER DEFAULT 'a\nb", 1);
    assert!(broken.lines().count() > 10);
    let p = damaged_copy(
        "malformed.sqlite",
        &format!(
            "UPDATE sqlite_master SET sql = '{}' WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL';",
            broken.replace('\'', "''")
        ),
    );
    let e = crate::readers::load_all(&p).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("malformed database schema"), "{e}");
    assert!(e.len() < 400, "{e}");
}
