//! Every stream reader (Chrome/Kineto, Hatchet literal, folded, Caliper JSON),
//! format sniffed from the bytes as `grove FILE` does.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = grove::readers::load_reader(
        Box::new(std::io::Cursor::new(data.to_vec())),
        None,
        data.len() as u64,
        "fuzz",
    );
});
