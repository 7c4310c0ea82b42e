//! Readers that need a file on disk: Nsight SQLite exports, Caliper .cali and TAU
//! profiles (the first byte picks which; the rest is the file). The file goes to
//! /dev/shm where there is one: rewriting a file in place on a disk-backed ext4 /tmp
//! flushes it on every close, which holds a target to a few hundred executions a second.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = match pick % 3 {
        0 => "fuzz.sqlite",
        1 => "fuzz.cali",
        _ => "profile.0.0.0",
    };
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("grove-fuzz-{}", std::process::id()));
    let path = dir.join(name);
    if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&path, rest).is_ok() {
        let _ = grove::readers::load_all(&path);
    }
});
