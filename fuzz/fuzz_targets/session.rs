//! Session and command files.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = grove::session::parse(&String::from_utf8_lossy(data));
});
