//! Shown names: C++ (Itanium) and Rust symbols demangled wherever a reader put them in
//! the tree, the raw name kept as the `raw name` attribute (the details pane and the
//! exports show it). One pass after every reader, so HPCToolkit, Nsight, folded stacks
//! and Chrome traces get it without each reader knowing.
//!
//! The demangler itself is `model::demangle`, shared with the readers that demangle
//! as they read (callgrind, perf, pprof, speedscope).

use super::Cct;

pub use super::demangle::{demangle as demangled, RAW_NAME};

/// Demangles every node name of the tree that is a mangled symbol, keeping the raw
/// name as an attribute (nodes a reader already demangled are left as they are).
/// Each frame is rewritten once, however many nodes share it.
pub fn demangle_tree(cct: &mut Cct) {
    // By slot, not by node: a slot no node uses can only make the rewrite run for
    // nothing, never change what a node shows.
    let any = cct
        .frames()
        .any(|f| f.attr(RAW_NAME).is_none() && demangled(&f.name).is_some());
    if !any {
        return;
    }
    cct.rewrite_frames(|f| {
        if f.attr(RAW_NAME).is_some() {
            return;
        }
        if let Some(d) = demangled(&f.name) {
            let raw = f.name.clone();
            f.name = d.as_str().into();
            f.set_attr(RAW_NAME, &raw);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_and_rust_symbols() {
        assert_eq!(
            demangled("_ZN9wikipedia7article6formatEv").as_deref(),
            Some("wikipedia::article::format()")
        );
        assert_eq!(
            demangled("_ZN4core3ptr13drop_in_place17h0123456789abcdefE").as_deref(),
            Some("core::ptr::drop_in_place")
        );
        assert_eq!(
            demangled("_ZN3foo3barEv@plt").as_deref(),
            Some("foo::bar()@plt")
        );
        assert_eq!(demangled("main"), None);
        assert_eq!(demangled("_Zgarbage"), None);
    }

    #[test]
    fn the_tree_keeps_the_raw_name() {
        let mut cct = Cct::default();
        let a = cct.child(None, "main", "function");
        let b = cct.child(Some(a), "_ZN3foo3barEv", "function");
        demangle_tree(&mut cct);
        assert_eq!(cct.name(a), "main");
        assert_eq!(cct.name(b), "foo::bar()");
        assert_eq!(cct.frame(b).attr(RAW_NAME), Some("_ZN3foo3barEv"));
        assert_eq!(cct.frame(a).attr(RAW_NAME), None);
    }
}
