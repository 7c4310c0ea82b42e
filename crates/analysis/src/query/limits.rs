//! Documented limits of the query languages (docs/testing.md lists them). Parsers and
//! evaluators recurse over expressions, so a hostile `((((…` or `- - - …` would
//! overflow the stack; a count quantifier repeats a pattern element, so
//! `MATCH (999999999, p)` would allocate without bound. Each limit turns into a
//! one-line error that names it.

use regex::{Regex, RegexBuilder};

/// Tokens in one filter, derive or Hatchet query expression.
pub const MAX_TOKENS: usize = 4096;
/// Nesting of parentheses, `not` and unary minus.
pub const MAX_DEPTH: u32 = 128;
/// A count quantifier (`MATCH (5, p)`, `[5, {...}]`).
pub const MAX_QUANTIFIER: u64 = 256;
/// Elements of one path pattern after quantifiers are expanded.
pub const MAX_PATH_LEN: usize = 256;
/// Compiled size of one regular expression.
pub const MAX_REGEX_BYTES: usize = 1 << 20;

/// A regex within the size and nesting limits; the error is one line.
pub fn regex(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_BYTES)
        .nest_limit(MAX_DEPTH)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => format!(
                "regular expression too large (limit: {} KiB compiled)",
                MAX_REGEX_BYTES >> 10
            ),
            other => {
                // regex's message draws the pattern with a caret over several lines;
                // its last line says what is wrong.
                let text = other.to_string();
                let last = text.lines().rev().find(|l| !l.trim().is_empty());
                format!("invalid regular expression: {}", last.unwrap_or("").trim())
            }
        })
}

/// Checks an expression's token count.
pub fn check_tokens(n: usize, text_len: usize) -> Result<(), super::QueryError> {
    if n > MAX_TOKENS {
        return Err(super::QueryError::new(
            0,
            text_len,
            format!("expression too long: {n} tokens (limit: {MAX_TOKENS})"),
        ));
    }
    Ok(())
}

/// Pattern elements a quantifier expands to (`+` is one then a star).
pub fn quantifier_len(quant: &str) -> usize {
    match quant {
        "." | "*" => 1,
        "+" => 2,
        k => k.parse().unwrap_or(usize::MAX),
    }
}

/// Checks one count quantifier and the expanded length of a whole path.
pub fn check_path<'a>(quants: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut len = 0usize;
    for q in quants {
        if !matches!(q, "." | "*" | "+") {
            match q.parse::<u64>() {
                Ok(k) if k <= MAX_QUANTIFIER => {}
                _ => {
                    return Err(format!(
                        "count quantifier {q} is too large (limit: {MAX_QUANTIFIER})"
                    ))
                }
            }
        }
        len = len.saturating_add(quantifier_len(q));
    }
    if len > MAX_PATH_LEN {
        return Err(format!(
            "path pattern too long: {len} elements after quantifiers (limit: {MAX_PATH_LEN})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_errors_are_one_line() {
        let e = regex("a(b").unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("invalid regular expression"), "{e}");
        let e = regex("(a{1000}){1000}").unwrap_err();
        assert!(e.contains("too large"), "{e}");
    }
}
