//! Kernel names and chart labels (generated names alike at their start) keep a short
//! head; headers and members use `present::distinct`, which elides the middle first.
//!
//! Sibling labels cut to one width so that labels which differ in full still differ on
//! screen. A plain cut keeps the start (`sm90_xmma_gemm_bf16bf16_b…`), which is where
//! generated names (cuBLAS/CUTLASS kernels, ensemble members, paths) are alike; the
//! labels whose plain cuts collide instead show a short head, then the part where each
//! first differs from its nearest sibling, the shared part elided with `…`:
//! `sm90_…tilesize128x128x64_w…` beside `sm90_…tilesize128x64x64_wa…`.

/// Characters that end a name's token: a window onto the differing part starts after
/// one of these when it can, so the token that differs is shown whole.
fn is_sep(c: char) -> bool {
    matches!(
        c,
        '_' | ':' | '<' | '>' | '(' | ')' | ',' | ' ' | '/' | '.' | '-' | '@' | '[' | '…'
    )
}

/// Each label cut to at most `width` characters; labels that fit stay whole. Whenever
/// two full labels differ, their cuts differ too (for widths of at least 8; below that
/// a plain cut is all there is room for).
pub fn distinct_heads(labels: &[&str], width: usize, ellipsis: &str) -> Vec<String> {
    let chars: Vec<Vec<char>> = labels.iter().map(|l| l.chars().collect()).collect();
    let mut out: Vec<String> = chars.iter().map(|c| plain(c, width, ellipsis)).collect();
    if width < 8 {
        return out;
    }
    // Labels whose plain cuts collide, by cut; sorted, so a label's nearest sibling (the
    // one sharing the longest prefix with it) is a neighbour.
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| chars[a].cmp(&chars[b]));
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && out[order[j]] == out[order[i]] {
            j += 1;
        }
        let group = &order[i..j];
        if group.len() > 1 && group.iter().any(|&k| chars[k] != chars[group[0]]) {
            for (n, &k) in group.iter().enumerate() {
                // Where this label first differs from its neighbours in sorted order.
                let lcp = |o: usize| common_prefix(&chars[k], &chars[o]);
                let before = n.checked_sub(1).map(|m| lcp(group[m]));
                let after = group.get(n + 1).map(|&o| lcp(o));
                let p = before.into_iter().chain(after).max().unwrap_or(0);
                if p >= chars[k].len() {
                    // A duplicate, or a label that is the start of another: the plain
                    // cut of the shorter one is already different or equal by rights.
                    continue;
                }
                out[k] = window(&chars[k], p, width, ellipsis);
            }
        }
        i = j;
    }
    // Rare leftovers (windows that happen to read alike): the end of the label.
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    let mut clash = Vec::new();
    for (k, s) in out.iter().enumerate() {
        if let Some(&o) = seen.get(s.as_str()) {
            if chars[o] != chars[k] {
                clash.push(k);
            }
        } else {
            seen.insert(s, k);
        }
    }
    for k in clash {
        out[k] = super::distinct::keep_end(labels[k], width, ellipsis);
    }
    out
}

fn common_prefix(a: &[char], b: &[char]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The start of `c` in `w` characters, the last one the ellipsis when cut.
fn plain(c: &[char], w: usize, ellipsis: &str) -> String {
    if c.len() <= w {
        return c.iter().collect();
    }
    if w == 0 {
        return String::new();
    }
    let mut s: String = c[..w - 1].iter().collect();
    s.push_str(ellipsis);
    s
}

/// `c` in `w` characters showing position `p` (where it differs from a sibling): a head
/// of up to a third of the width (cut after a separator when there is one), `…`, then
/// from the start of the token holding `p` on, with `…` at the end when cut.
fn window(c: &[char], p: usize, w: usize, ellipsis: &str) -> String {
    let third = w / 3;
    // The head: up to a third of the width, ending after a separator when one is there.
    let mut h = third.min(p);
    if let Some(s) = (3..=h).rev().find(|&i| is_sep(c[i - 1])) {
        h = s;
    }
    // Room after the head and its ellipsis; the window's own end keeps one for `…`.
    let room = w - h - 1;
    let a_min = p.saturating_sub(room.saturating_sub(8)).max(h);
    // Start at the token that holds p, else as far back as room allows.
    let a = (a_min..=p)
        .rev()
        .find(|&i| i == 0 || is_sep(c[i - 1]))
        .unwrap_or(a_min);
    // A start right after the head, or at an ellipsis the label holds (short kernel
    // names fold arguments to `…`), needs no ellipsis of its own.
    let (head, gap) = if a == h || c[a..].iter().collect::<String>().starts_with(ellipsis) {
        (&c[..h], "")
    } else {
        (&c[..h], ellipsis)
    };
    let room = w - h - gap.chars().count();
    let mut s: String = head.iter().collect();
    s.push_str(gap);
    let rest = &c[a..];
    if rest.len() <= room {
        s.extend(rest);
    } else {
        s.extend(&rest[..room - 1]);
        s.push_str(ellipsis);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEMMS: [&str; 4] = [
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas",
    ];

    fn all_distinct(v: &[String]) -> bool {
        let mut s = v.to_vec();
        s.sort();
        s.dedup();
        s.len() == v.len()
    }

    #[test]
    fn colliding_cuts_show_what_differs() {
        let cut = distinct_heads(&GEMMS, 26, "…");
        for c in &cut {
            assert!(c.chars().count() <= 26, "{c}");
        }
        assert!(all_distinct(&cut), "{cut:?}");
        assert_eq!(cut[1], "sm90_…tilesize128x64x64_w…");
        assert_eq!(cut[2], "sm90_…nn_n_tilesize64x64x…");
        // Differing only near the end: the window reaches it.
        assert!(cut[3].contains("on_"), "{cut:?}");
    }

    #[test]
    fn labels_that_fit_or_do_not_collide_are_cut_plainly() {
        let cut = distinct_heads(&["short", "a_very_long_label_indeed", "other"], 10, "…");
        assert_eq!(cut, ["short", "a_very_lo…", "other"]);
        // Duplicates stay equal.
        let cut = distinct_heads(&[GEMMS[0], GEMMS[0]], 20, "~");
        assert_eq!(cut[0], cut[1]);
        assert!(cut[0].ends_with('~'));
    }

    #[test]
    fn every_width_keeps_labels_apart() {
        for w in 8..120 {
            let cut = distinct_heads(&GEMMS, w, "…");
            assert!(all_distinct(&cut), "width {w}: {cut:?}");
            assert!(cut.iter().all(|c| c.chars().count() <= w), "width {w}");
        }
        // A label that is the start of another, and labels differing in the last char.
        let labels = ["abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnor"];
        for w in 8..20 {
            let cut = distinct_heads(&labels, w, "…");
            assert!(all_distinct(&cut), "width {w}: {cut:?}");
        }
    }

    #[test]
    fn narrow_widths_are_plain() {
        assert_eq!(distinct_heads(&GEMMS[..2], 5, "…"), ["sm90…", "sm90…"]);
        assert_eq!(distinct_heads(&["abc"], 0, "…"), [""]);
    }
}
