//! For the readers' unit tests that need ../shared/corpus: a test that cannot run
//! without it says so past the test harness's capture (so a green run shows what did
//! not run), as tests/common's `skip!` does for the integration tests.

use std::io::Write;

/// `SKIPPED: readers::caliper::tests::json_split: ../shared/corpus missing`.
pub fn skipped(test: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: ../shared/corpus missing"
    );
}

/// Ends a unit test that needs ../shared/corpus, saying it is skipped:
/// `let Some(root) = corpus() else { corpus_skip!() };`.
#[macro_export]
macro_rules! corpus_skip {
    () => {{
        fn here() {}
        let name = std::any::type_name_of_val(&here);
        let name = name.strip_suffix("::here").unwrap_or(name);
        $crate::readers::test_corpus::skipped(name.strip_prefix("grove_core::").unwrap_or(name));
        return;
    }};
}
