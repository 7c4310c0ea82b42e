//! The `:` command language on the demo profile.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cmd = String::from_utf8_lossy(data);
    let first = cmd
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    // Commands that write or read files stay out.
    if [
        "export", "save", "source", "write", "w", "o", "open", "theme",
    ]
    .contains(&first.as_str())
    {
        return;
    }
    let mut app = grove::app::App::new(
        grove::readers::load_demo(),
        grove::app::keymap::Keymap::default_map(),
    );
    for line in cmd.lines().take(8) {
        let _ = app.run(line);
    }
});
