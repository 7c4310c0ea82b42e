//! The generator's own totals (written beside each file in testdata/) agree with what
//! grove reads back: GPU activities, their exact time, and what has no launch.

use std::path::Path;

use grove::load::load_path;

#[test]
fn generated_traces_match_their_summaries() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".summary.json") else {
            continue;
        };
        let trace = ["json", "json.gz"]
            .iter()
            .map(|ext| dir.join(format!("{stem}.trace.{ext}")))
            .find(|p| p.exists())
            .unwrap();
        let want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let p = load_path(&trace).unwrap();
        let ev = p.events.as_ref().unwrap();
        let gpu: Vec<usize> = (0..ev.len())
            .filter(|&i| ev.kind[i].is_gpu_activity())
            .collect();
        assert_eq!(
            gpu.len() as u64,
            want["gpu_activities"].as_u64().unwrap(),
            "{name}"
        );
        let ns: i64 = gpu.iter().map(|&i| ev.dur[i]).sum();
        assert_eq!(ns as u64, want["gpu_time_ns"].as_u64().unwrap(), "{name}");
        let m = p.metrics.values("gpu_time (inc)").unwrap();
        let roots = p.cct.root_ids();
        let total: f64 = roots.iter().map(|&r| m[r as usize]).sum();
        assert_eq!(total as i64, ns, "{name}: gpu_time over roots");
        let unattributed: f64 = roots
            .iter()
            .filter(|&&r| p.cct.name(r).starts_with("<unattributed>"))
            .map(|&r| m[r as usize])
            .sum();
        assert_eq!(
            unattributed as u64,
            want["unattributed_gpu_time_ns"].as_u64().unwrap(),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 4);
}
