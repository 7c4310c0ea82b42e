//! "Did you mean …?" for a mistyped name: the closest candidate by edit distance, so a
//! typo (`difff`, `gpu_tme`) gets the name it almost was instead of only "unknown".

/// Levenshtein distance over characters (names are short: O(a·b) is nothing).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, when it is close enough to be a typo: at most a
/// third of the word's length in edits (at least 1, at most 3), ties to the first.
/// Case is ignored, so `Time` finds `time`.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    let limit = (w.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(&w, &c.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `; did you mean "diff"?` for the message of an unknown name, or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(word, candidates) {
        Some(c) => format!("; did you mean {c:?}?"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name() {
        assert_eq!(edit_distance("difff", "diff"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("difff", ["down", "diff", "filter"]), Some("diff"));
        assert_eq!(closest("gpu_tme", ["time", "gpu_time"]), Some("gpu_time"));
        assert_eq!(closest("Time", ["time"]), Some("time"));
        assert_eq!(closest("zzzzzz", ["diff", "filter"]), None);
        // One edit on a short word is a typo; two are a different word.
        assert_eq!(closest("up", ["top"]), Some("top"));
        assert_eq!(closest("ab", ["top"]), None);
        assert_eq!(did_you_mean("difff", ["diff"]), "; did you mean \"diff\"?");
        assert_eq!(did_you_mean("qqqq", ["diff"]), "");
    }
}
