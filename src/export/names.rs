//! A dummy export format (scratch, reverted): one node name per line.

use std::io::{self, Write};

pub fn write_tree(t: &super::formats::Tree<'_>, out: &mut dyn Write) -> io::Result<()> {
    for &p in t.positions {
        writeln!(out, "{}", t.profile.cct.name(t.po.node[p as usize]))?;
    }
    Ok(())
}
