//! Demangling of C++ (Itanium ABI, `_Z...`) and Rust (legacy `_ZN...17h<hash>E` and v0
//! `_R...`) symbols, shared by the readers. Readers show the demangled name and keep the
//! raw one as the `raw name` attribute, so exports and the details pane still have it.

/// The attribute that keeps a frame's name as the file wrote it.
pub const RAW_NAME: &str = "raw name";

/// The demangled form of `raw`, or None when it is not a mangled symbol (or is already
/// readable). A `+0x1f` offset or `@plt`-style suffix after the symbol is kept.
pub fn demangle(raw: &str) -> Option<String> {
    let (sym, suffix) = split_suffix(raw);
    if !(sym.starts_with("_Z") || sym.starts_with("__Z") || sym.starts_with("_R")) {
        return None;
    }
    // Rust first: legacy Rust symbols are valid Itanium symbols too, but only
    // rustc-demangle drops the hash and decodes `$LT$`-style escapes.
    if let Ok(d) = rustc_demangle::try_demangle(sym) {
        return Some(format!("{d:#}{suffix}"));
    }
    let sym_c = sym
        .strip_prefix('_')
        .filter(|s| s.starts_with("_Z"))
        .unwrap_or(sym);
    let parsed = cpp_demangle::Symbol::new(sym_c).ok()?;
    let d = parsed
        .demangle(&cpp_demangle::DemangleOptions::default())
        .ok()?;
    (d != sym).then(|| format!("{d}{suffix}"))
}

/// `_ZN3foo3barEv@plt` -> (`_ZN3foo3barEv`, `@plt`); `sym+0x10` likewise.
fn split_suffix(raw: &str) -> (&str, &str) {
    let cut = raw
        .find(['@', ' '])
        .or_else(|| raw.rfind("+0x"))
        .unwrap_or(raw.len());
    raw.split_at(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_and_rust() {
        assert_eq!(
            demangle("_ZN9wikipedia7article6formatEv").as_deref(),
            Some("wikipedia::article::format()")
        );
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE").as_deref(),
            Some("core::ptr::drop_in_place")
        );
        assert_eq!(
            demangle("_ZN3foo3barEv@plt").as_deref(),
            Some("foo::bar()@plt")
        );
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("_Zgarbage"), None);
        assert_eq!(
            demangle("_RNvC7mycrate3foo").as_deref(),
            Some("mycrate::foo")
        );
    }
}
