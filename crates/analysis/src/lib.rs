//! grove's analyses over the model: GPU breakdowns (`gpu`), tree transforms and derived
//! columns (`transform`), the query languages (`query`), ensembles of runs and ranks
//! (`ensemble`), comparisons (`diff`), summaries and the warm-reopen cache (`summary`),
//! SQL over the event table (`sql`), writers (`export`) and the loading of any input
//! into a profile (`load`). Built on `grove-core`; knows nothing of the application.

// The layer below, under the names its modules have always used (`crate::model::Cct`).
use grove_core::{config, memory, model, present, readers};

pub mod diff;
pub mod ensemble;
pub mod export;
pub mod gpu;
pub mod load;
pub mod query;
pub mod sql;
pub mod summary;
pub mod transform;

/// grove's version: the crate version, the commit and the build date (build.rs), as
/// `grove --version` prints it and the summaries and the cache record it. In the lowest
/// layer that records it, so that a new commit rebuilds neither the model nor the readers.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("GROVE_COMMIT"),
    " ",
    env!("GROVE_BUILD_DATE"),
    ")"
);
