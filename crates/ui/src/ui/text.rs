//! Text cut to a width: an ellipsis marks where it was cut, so a clipped name never
//! passes for a whole one (`torch::autograd::Accumul…`, not `torch::autograd::Accumul`).

use crate::present::glyphs::Glyphs;

/// `s` in at most `w` characters; when cut, the last one is the ellipsis.
pub fn fit(s: &str, w: usize, g: &Glyphs) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(w - 1).collect();
    out.push_str(g.ellipsis);
    out
}

/// A short kernel name in `w` characters. When its template arguments were kept to
/// tell it from its neighbours (`gpu::short_names`), the function name is cut first so
/// that what differs stays on screen: `vectori…<…, CUDAFunctor_a…`, not two rows of
/// `vectorized_elementwise_ke…`.
pub fn fit_name(name: &str, w: usize, g: &Glyphs) -> String {
    if name.chars().count() <= w {
        return name.to_string();
    }
    let Some(i) = name.find('<') else {
        return fit(name, w, g);
    };
    let (base, rest) = name.split_at(i);
    if matches!(rest, "<…>" | "<…>(…)") || i == 0 {
        return fit(name, w, g);
    }
    let base_n = base.chars().count();
    let rest_n = rest.chars().count();
    let base_w = base_n.min(w.saturating_sub(rest_n).max(8));
    fit(&format!("{}{rest}", fit(base, base_w, g)), w, g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::glyphs::{ASCII, UNICODE};

    #[test]
    fn cut_text_ends_in_an_ellipsis() {
        assert_eq!(
            fit("torch::autograd::AccumulateGrad", 20, &UNICODE),
            "torch::autograd::Ac…"
        );
        assert_eq!(
            fit("torch::autograd::AccumulateGrad", 20, &ASCII),
            "torch::autograd::Ac~"
        );
        assert_eq!(fit("short", 20, &UNICODE), "short");
        assert_eq!(fit("abc", 0, &UNICODE), "");
        assert_eq!(fit("abc", 1, &UNICODE), "…");
    }

    #[test]
    fn kept_arguments_stay_in_view() {
        let a = "vectorized_elementwise_kernel<…, CUDAFunctor_add<float>, Array<char*, 3>>(…)";
        let b = "vectorized_elementwise_kernel<…, FillFunctor<float>, Array<char*, 1>>(…)";
        assert_eq!(fit_name(a, 26, &UNICODE), "vectori…<…, CUDAFunctor_a…");
        assert_ne!(fit_name(a, 26, &UNICODE), fit_name(b, 26, &UNICODE));
        // Plain folded names are cut at the end as before.
        assert_eq!(
            fit_name("at::native::cunn_SoftMaxForward<…>(…)", 26, &UNICODE),
            "at::native::cunn_SoftMaxF…"
        );
        assert_eq!(fit_name("short<…>", 26, &UNICODE), "short<…>");
    }
}
