//! Filter expressions, derive arithmetic and both Hatchet query dialects.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let profile = grove::readers::load_demo();
    let tree = grove::query::Tree {
        cct: &profile.cct,
        metrics: &profile.metrics,
    };
    let text = String::from_utf8_lossy(data);
    if let Ok(e) = grove::query::expr::parse(&text) {
        let _ = grove::query::expr::select(&e, &tree);
    }
    let _ = grove::transform::derive::parse_definition(&text);
    let _ = grove::query::cypher::select(&text, &tree);
});
