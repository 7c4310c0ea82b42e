//! "Did you mean …?" for a mistyped name: the closest candidate by edit distance, so a
//! typo (`difff`, `gpu_tme`) gets the name it almost was instead of only "unknown".

/// Edit distance over characters, a swap of two neighbours counting as one edit
/// (`sotr` is one from `sort`): optimal string alignment. Names are short, O(a·b).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
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
        assert_eq!(edit_distance("sotr", "sort"), 1);
        assert_eq!(closest("difff", ["down", "diff", "filter"]), Some("diff"));
        assert_eq!(closest("gpu_tme", ["time", "gpu_time"]), Some("gpu_time"));
        assert_eq!(closest("Time", ["time"]), Some("time"));
        assert_eq!(closest("zzzzzz", ["diff", "filter"]), None);
        // One edit on a short word is a typo; two are a different word.
        assert_eq!(closest("dwn", ["down"]), Some("down"));
        assert_eq!(closest("ab", ["top"]), None);
        assert_eq!(did_you_mean("difff", ["diff"]), "; did you mean \"diff\"?");
        assert_eq!(did_you_mean("qqqq", ["diff"]), "");
    }
}
