//! Readers that need a file on disk: Nsight SQLite exports and Caliper .cali (the
//! first byte picks which; the rest is the file).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let ext = if pick % 2 == 0 { "sqlite" } else { "cali" };
    let path = std::env::temp_dir().join(format!("grove-fuzz-{}.{ext}", std::process::id()));
    if std::fs::write(&path, rest).is_ok() {
        let _ = grove::readers::load_all(&path);
    }
});
