//! Work in progress: this reader is being written (see the issue on HPC inputs).

use std::path::Path;

use crate::model::Profile;

/// True when the file (or directory) is in this reader's format.
pub fn sniff(_path: &Path, _head: &[u8]) -> bool {
    false
}

/// Reads every profile the input holds (one per rank or thread where it has several).
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    Err(format!(
        "{}: this format is not supported yet",
        path.display()
    ))
}
