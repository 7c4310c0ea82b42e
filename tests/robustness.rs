//! Bad input never panics or hangs: truncations and byte flips of real inputs either load
//! (with warnings) or fail with an error that has a position.

use std::path::Path;

use grove::readers::load_reader;

mod common;
use common::Rng;

fn load(bytes: Vec<u8>) -> Result<(), String> {
    let n = bytes.len() as u64;
    load_reader(Box::new(std::io::Cursor::new(bytes)), None, n, "fuzz").map(|_| ())
}

fn inputs() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![std::fs::read(dir.join("testdata/small.trace.json")).unwrap()];
    let lit = dir.join("../shared/corpus/hatchet-exports/graph-literal.literal.json");
    if let Ok(b) = std::fs::read(lit) {
        v.push(b);
    }
    v.push(b"main;a;b 3\nmain;a 2\nmain;c 1\n".to_vec());
    v
}

#[test]
fn truncations_never_panic() {
    for input in inputs() {
        let step = (input.len() / 300).max(1);
        for cut in (0..input.len()).step_by(step) {
            let r = load(input[..cut].to_vec());
            if let Err(e) = r {
                assert!(!e.is_empty());
            }
        }
    }
}

#[test]
fn byte_flips_never_panic() {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let specials = b"{}[],:\"\\0123456789.-eE \n\x00\x1f";
    for input in inputs() {
        for _ in 0..300 {
            let mut b = input.clone();
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() as usize) % b.len();
                b[i] = specials[(rng.next() as usize) % specials.len()];
            }
            let _ = load(b);
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let mut s =
        String::from("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":");
    s.push_str(&"[".repeat(200_000));
    s.push_str(&"]".repeat(200_000));
    s.push_str("}]}");
    load(s.into_bytes()).unwrap();
    let mut lit = String::new();
    for _ in 0..20_000 {
        lit.push_str("[{\"frame\":{\"name\":\"f\"},\"metrics\":{\"time\":1},\"children\":");
    }
    lit.push_str("[]");
    for _ in 0..20_000 {
        lit.push_str("}]");
    }
    load(lit.into_bytes()).unwrap();
}
