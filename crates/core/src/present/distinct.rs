//! Labels cut to a width so that siblings stay apart (issue 28): two labels that differ
//! never show the same text. A label is cut where its siblings agree (a shared prefix
//! or suffix is elided), so what tells it apart stays on screen: six RAJAPerf members
//! read `…1048576/1/Base…`, `…2097152/1/Base…`, not six `…e_CUDA-block_128`.

use std::collections::HashMap;

const ELLIPSIS: &str = "…";

/// Every label in at most `width` characters, cut so that labels which differ in full
/// differ on screen too whenever `width` allows it. Tried in order, the first way that
/// keeps them apart wins: the middle elided (the headless tree's cut), the end kept,
/// the start kept, then for each label a window on where it first differs from the
/// others (the shared prefix elided in front, the rest after it).
pub fn distinct_cuts(labels: &[&str], width: usize) -> Vec<String> {
    distinct_cuts_with(labels, width, ELLIPSIS)
}

/// [`distinct_cuts`] with the ellipsis of the glyph set (`~` in ASCII).
pub fn distinct_cuts_with(labels: &[&str], width: usize, ellipsis: &str) -> Vec<String> {
    if labels.iter().all(|l| l.chars().count() <= width) {
        return labels.iter().map(|l| l.to_string()).collect();
    }
    let ways: [&dyn Fn(&str) -> String; 3] = [
        &|l| cut_middle(l, width, ellipsis),
        &|l| keep_end(l, width, ellipsis),
        &|l| keep_start(l, width, ellipsis),
    ];
    for way in ways {
        let cuts: Vec<String> = labels.iter().map(|l| way(l)).collect();
        if apart(labels, &cuts) {
            return cuts;
        }
    }
    // Where each label first differs from the others: sorted, its nearest sibling is a
    // neighbour (the latest difference) and the farthest is at an end (the earliest),
    // so 10,000 members cost a sort, not 10,000² comparisons.
    let mut sorted: Vec<&str> = labels.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut cuts: Vec<String> = labels
        .iter()
        .map(|l| {
            let i = sorted.binary_search(l).unwrap_or(0);
            let others = [
                sorted.first(),
                i.checked_sub(1).and_then(|j| sorted.get(j)),
                sorted.get(i + 1),
                sorted.last(),
            ];
            // A sibling that differs from the first character on is told apart by any
            // window that starts at the others' differences: only shared starts count.
            let firsts: Vec<usize> = others
                .into_iter()
                .flatten()
                .filter(|o| *o != l)
                .map(|o| common_prefix(l, o))
                .filter(|&p| p > 0)
                .collect();
            window(l, &firsts, width, ellipsis)
        })
        .collect();
    // Rare leftovers (windows that read alike): those labels by their end.
    for i in clashing(labels, &cuts) {
        cuts[i] = keep_end(labels[i], width, ellipsis);
    }
    cuts
}

/// How many characters `a` and `b` share at their start.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// `cuts` (one per label, made by a view's own rule) kept where they already tell
/// their labels apart; where two differing labels read the same, the labels are cut
/// again by [`distinct_cuts_with`]: first the clashing ones only, all of them if that
/// is not enough.
pub fn keep_apart(labels: &[&str], cuts: Vec<String>, width: usize, ellipsis: &str) -> Vec<String> {
    if apart(labels, &cuts) {
        return cuts;
    }
    let clash = clashing(labels, &cuts);
    let sub: Vec<&str> = clash.iter().map(|&i| labels[i]).collect();
    let again = distinct_cuts_with(&sub, width, ellipsis);
    let mut mended = cuts;
    for (&i, c) in clash.iter().zip(again) {
        mended[i] = c;
    }
    if apart(labels, &mended) {
        return mended;
    }
    distinct_cuts_with(labels, width, ellipsis)
}

/// Whether no two labels that differ read the same once cut.
pub fn apart(labels: &[&str], cuts: &[String]) -> bool {
    clashing(labels, cuts).is_empty()
}

/// Indices of the labels whose cut equals the cut of a different label.
fn clashing(labels: &[&str], cuts: &[String]) -> Vec<usize> {
    let mut by_cut: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in cuts.iter().enumerate() {
        by_cut.entry(c.as_str()).or_default().push(i);
    }
    let mut out: Vec<usize> = by_cut
        .values()
        .filter(|ix| ix.iter().any(|&i| labels[i] != labels[ix[0]]))
        .flatten()
        .copied()
        .collect();
    out.sort_unstable();
    out
}

/// `s` with its middle elided: the first half and the last half of `w` characters.
pub fn cut_middle(s: &str, w: usize, ellipsis: &str) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let e = ellipsis.chars().count();
    if w <= e {
        return s.chars().take(w).collect();
    }
    let room = w - e;
    let head = room.div_ceil(2);
    let tail = room - head;
    let h: String = s.chars().take(head).collect();
    let t: String = s.chars().skip(n - tail).collect();
    format!("{h}{ellipsis}{t}")
}

/// The last characters of `s` after an ellipsis.
pub(crate) fn keep_end(s: &str, w: usize, ellipsis: &str) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let e = ellipsis.chars().count();
    if w <= e {
        return s.chars().skip(n - w).collect();
    }
    let t: String = s.chars().skip(n - (w - e)).collect();
    format!("{ellipsis}{t}")
}

/// The first characters of `s` and an ellipsis.
fn keep_start(s: &str, w: usize, ellipsis: &str) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let e = ellipsis.chars().count();
    if w <= e {
        return s.chars().take(w).collect();
    }
    let h: String = s.chars().take(w - e).collect();
    format!("{h}{ellipsis}")
}

/// `label` seen through a window that starts where it first differs from the other
/// labels (what they share in front elided) and reaches as far as the width allows,
/// so the characters that differ from its nearest sibling are in it.
fn window(label: &str, firsts: &[usize], w: usize, ellipsis: &str) -> String {
    let chars: Vec<char> = label.chars().collect();
    let n = chars.len();
    if n <= w {
        return label.to_string();
    }
    let e = ellipsis.chars().count();
    if w <= 2 * e {
        return keep_end(label, w, ellipsis);
    }
    let lo = firsts.iter().copied().min().unwrap_or(0).min(n - 1);
    let hi = firsts.iter().copied().max().unwrap_or(0).min(n - 1);
    if lo == 0 {
        return keep_start(label, w, ellipsis);
    }
    let room = w - e;
    if n - lo <= room {
        // The rest from `lo` fits after one ellipsis: show as much before it as fits.
        let tail: String = chars[n - room..].iter().collect();
        return format!("{ellipsis}{tail}");
    }
    let room = w - 2 * e;
    // Start at `lo` unless the latest difference would fall outside the window.
    let start = if hi >= lo + room { hi + 1 - room } else { lo };
    let mid: String = chars[start..start + room].iter().collect();
    format!("{ellipsis}{mid}{ellipsis}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distinct(cuts: &[String]) -> bool {
        let mut seen = std::collections::HashSet::new();
        cuts.iter().all(|c| seen.insert(c))
    }

    #[test]
    fn rajaperf_members_differ_in_their_middle() {
        let labels = [
            "clang10.0.1_nvcc10.2.89_1048576/1/Base_CUDA-block_128",
            "clang10.0.1_nvcc10.2.89_1048576/10/Base_CUDA-block_128",
            "clang10.0.1_nvcc10.2.89_1048576/2/Base_CUDA-block_128",
            "clang10.0.1_nvcc10.2.89_2097152/1/Base_CUDA-block_128",
            "clang10.0.1_nvcc10.2.89_2097152/2/Base_CUDA-block_128",
            "clang10.0.1_nvcc10.2.89_1048576/1/Base_CUDA-block_256",
        ];
        for w in [8, 11, 17, 30] {
            let cuts = distinct_cuts(&labels, w);
            assert!(distinct(&cuts), "{w}: {cuts:?}");
            assert!(cuts.iter().all(|c| c.chars().count() <= w), "{cuts:?}");
        }
        // Where the run differs from its siblings is on screen.
        let cuts = distinct_cuts(&labels, 17);
        assert_eq!(cuts[1], "…1048576/10/Base…");
        assert!(cuts[3].contains("2097152/1"), "{cuts:?}");
    }

    #[test]
    fn a_statistic_of_two_metrics_keeps_the_metric_apart() {
        let labels = ["GPUOP (sec) (inc)@mean", "GPUOP (sec) (exc)@mean"];
        let cuts = distinct_cuts(&labels, 14);
        assert!(distinct(&cuts), "{cuts:?}");
        assert_eq!(cuts[0], "…c) (inc)@mean");
        // A view's own cut is kept when it already tells them apart.
        let own = vec!["a…".to_string(), "b…".to_string()];
        assert_eq!(keep_apart(&["ax", "bx"], own.clone(), 2, "…"), own);
        let same = vec!["GPUOP (se…@mean".to_string(), "GPUOP (se…@mean".to_string()];
        assert!(distinct(&keep_apart(&labels, same, 15, "…")));
    }

    #[test]
    fn equal_labels_may_read_alike_and_short_ones_stay_whole() {
        assert_eq!(distinct_cuts(&["ab", "ab"], 5), ["ab", "ab"]);
        assert_eq!(
            cut_middle("autograd::engine::evaluate_function: MmBackward0", 21, "…"),
            "autograd::…mBackward0"
        );
        assert_eq!(distinct_cuts(&["abcdef"], 0), [""]);
        assert_eq!(distinct_cuts(&["abcdef", "abcdeg"], 1).len(), 2);
    }

    /// Generated kernel names that share a long start, beside others that share
    /// nothing with them: the shared start is elided, the differing tile shown.
    #[test]
    fn kernels_sharing_a_long_start() {
        let labels = [
            "Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>",
            "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>",
        ];
        for w in 12..60 {
            let cuts = distinct_cuts(&labels, w);
            assert!(distinct(&cuts), "{w}: {cuts:?}");
        }
    }
}
