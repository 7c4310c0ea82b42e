//! grove's application state: the one `App` that commands change (`app`: the command
//! table and its handlers, the panels' state, undo, background loading) and the session
//! file that records and replays them (`session`). Views are a layer above (`grove-ui`):
//! nothing here draws.

use grove_analysis::{diff, ensemble, export, gpu, load, query, sql, transform};
use grove_core::{config, memory, model, present, readers};

pub mod app;
pub mod session;
