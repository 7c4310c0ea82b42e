//! Short kernel names that stay distinct. `short_name` folds template arguments and
//! parameter lists, which turns every `vectorized_elementwise_kernel<4, F, A>(…)` into
//! the same text; here the names that collide get back the arguments that tell them
//! apart (the common ones stay elided): `vectorized_elementwise_kernel<…,
//! CUDAFunctor_add<float>, …>(…)` beside `vectorized_elementwise_kernel<…,
//! FillFunctor<float>, …>(…)`.

use std::collections::HashMap;

use super::short_name;

/// One short name per input name, distinct wherever the inputs are.
pub fn distinct_short_names(names: &[&str], ellipsis: &str) -> Vec<String> {
    let mut out: Vec<String> = names.iter().map(|n| short_name(n, ellipsis)).collect();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, s) in out.iter().enumerate() {
        groups.entry(s.as_str()).or_default().push(i);
    }
    let clashes: Vec<Vec<usize>> = groups
        .into_values()
        .filter(|g| g.len() > 1 && g.iter().any(|&i| names[i] != names[g[0]]))
        .collect();
    for group in clashes {
        let parts: Vec<Parts> = group.iter().map(|&i| Parts::of(names[i])).collect();
        let args: Vec<&[String]> = parts.iter().map(|p| p.args.as_slice()).collect();
        let params: Vec<&[String]> = parts.iter().map(|p| p.params.as_slice()).collect();
        let targs = keep_differing(&args, ellipsis);
        // Parameters only when the template arguments leave members alike (they
        // mostly repeat the template's types).
        let distinct = {
            let mut t = targs.clone();
            t.sort();
            t.dedup();
            t.len() == targs.len()
        };
        let tparams = if distinct {
            params
                .iter()
                .map(|p| {
                    if p.is_empty() {
                        String::new()
                    } else {
                        ellipsis.to_string()
                    }
                })
                .collect()
        } else {
            keep_differing(&params, ellipsis)
        };
        for (k, &i) in group.iter().enumerate() {
            let p = &parts[k];
            let mut s = p.base.clone();
            if p.templated {
                s.push('<');
                s.push_str(&targs[k]);
                s.push('>');
            }
            if p.called {
                s.push('(');
                s.push_str(&tparams[k]);
                s.push(')');
            }
            out[i] = s;
        }
    }
    // Whatever still collides (names that differ outside their arguments) is shown
    // whole rather than twice the same.
    let mut seen: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, s) in out.iter().enumerate() {
        seen.entry(s.clone()).or_default().push(i);
    }
    for g in seen.into_values().filter(|g| g.len() > 1) {
        if g.iter().any(|&i| names[i] != names[g[0]]) {
            for i in g {
                out[i] = strip_return(names[i]).to_string();
            }
        }
    }
    out
}

/// A kernel name taken apart: the function's last path segment, its top-level
/// template arguments and its parameters.
struct Parts {
    base: String,
    templated: bool,
    args: Vec<String>,
    called: bool,
    params: Vec<String>,
}

impl Parts {
    fn of(name: &str) -> Parts {
        let s = strip_return(name);
        let open = s.find(['<', '(']).unwrap_or(s.len());
        let head = &s[..open];
        let base = last_segment(head).to_string();
        let mut p = Parts {
            base,
            templated: false,
            args: Vec::new(),
            called: false,
            params: Vec::new(),
        };
        let mut rest = &s[open..];
        if rest.starts_with('<') {
            let (inner, after) = bracketed(rest, '<', '>');
            p.templated = true;
            p.args = split_top(inner);
            rest = after;
        }
        if rest.starts_with('(') {
            let (inner, _) = bracketed(rest, '(', ')');
            p.called = true;
            p.params = split_top(inner);
        }
        p
    }
}

fn strip_return(name: &str) -> &str {
    let mut s = name.trim();
    for ret in ["__global__ void ", "void "] {
        if let Some(r) = s.strip_prefix(ret) {
            s = r;
        }
    }
    s
}

/// `at::native::CUDAFunctor_add<float>` -> `CUDAFunctor_add<float>`: the part after
/// the last `::` outside brackets.
fn last_segment(s: &str) -> &str {
    let mut depth = 0i32;
    let mut cut = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                cut = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    s[cut..].trim()
}

/// The text inside the bracket `s` starts with, and what follows its match.
fn bracketed(s: &str, open: char, close: char) -> (&str, &str) {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return (&s[1..i], &s[i + 1..]);
            }
        }
    }
    (&s[1..], "")
}

/// An argument without its namespaces; a lambda is named by the function that holds
/// it (`at::native::GeluCUDAKernelImpl(…)::{lambda()#2}::operator()() const::
/// {lambda(c10::Half)#1}` -> `GeluCUDAKernelImpl::{lambda}`), since `{lambda(…)#1}`
/// alone tells nothing apart.
fn arg_name(s: &str) -> String {
    let last = last_segment(s);
    if !(last.starts_with('{') || last.starts_with("operator")) {
        return last.to_string();
    }
    let mut depth = 0i32;
    let mut segments = Vec::new();
    let mut start = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' | b'(' | b'{' => depth += 1,
            b'>' | b')' | b'}' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                segments.push(&s[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    segments.push(&s[start..]);
    let named = segments
        .iter()
        .rev()
        .map(|seg| seg.trim())
        .find(|seg| !seg.starts_with('{') && !seg.starts_with("operator"));
    match named {
        Some(n) => {
            let n = n.split(['(', '<']).next().unwrap_or(n);
            format!("{n}::{{lambda}}")
        }
        None => last.to_string(),
    }
}

/// Top-level comma-separated items, trimmed, without their namespaces.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(arg_name(&s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s.trim().is_empty() {
        out.push(arg_name(&s[start..]));
    }
    out
}

/// Each member's list with the items every member shares at that position elided
/// (a run of elided items is one ellipsis); a list the members all share is one
/// ellipsis.
fn keep_differing(lists: &[&[String]], ellipsis: &str) -> Vec<String> {
    let n = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    let same = |j: usize| {
        let first = lists[0].get(j);
        lists.iter().all(|l| l.get(j) == first)
    };
    let keep: Vec<bool> = (0..n).map(|j| !same(j)).collect();
    lists
        .iter()
        .map(|l| {
            if l.is_empty() {
                return String::new();
            }
            let mut items: Vec<&str> = Vec::new();
            for (j, item) in l.iter().enumerate() {
                if keep[j] {
                    items.push(item);
                } else if items.last() != Some(&ellipsis) {
                    items.push(ellipsis);
                }
            }
            items.join(", ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colliding_kernels_keep_what_differs() {
        let names = [
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
            "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)",
            "sm90_xmma_gemm_f16f16",
            "void at::native::reduce_kernel<512, 1>(int)",
        ];
        let s = distinct_short_names(&names, "…");
        assert_eq!(
            s[0],
            "vectorized_elementwise_kernel<…, CUDAFunctor_add<float>, Array<char*, 3>>(…)"
        );
        assert_eq!(
            s[1],
            "vectorized_elementwise_kernel<…, FillFunctor<float>, Array<char*, 1>>(…)"
        );
        assert_eq!(
            s[2],
            "vectorized_elementwise_kernel<…, MulFunctor<float>, Array<char*, 3>>(…)"
        );
        assert_eq!(s[3], "sm90_xmma_gemm_f16f16");
        // No clash: the short form as before.
        assert_eq!(s[4], "at::native::reduce_kernel<…>(…)");
        let mut all = s.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), names.len());
    }

    #[test]
    fn lambdas_are_named_by_their_function() {
        let gelu = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)";
        let add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)";
        let s = distinct_short_names(&[gelu, add], "…");
        assert_eq!(
            s[0],
            "vectorized_elementwise_kernel<…, GeluCUDAKernelImpl::{lambda}, Array<char*, 2>>(…)"
        );
        assert_eq!(
            s[1],
            "vectorized_elementwise_kernel<…, CUDAFunctor_add<c10::Half>, Array<char*, 3>>(…)"
        );
    }

    #[test]
    fn parameters_tell_apart_when_templates_do_not() {
        let s = distinct_short_names(&["k<1>(float, int)", "k<1>(double, int)"], "…");
        assert_eq!(s, ["k<…>(float, …)", "k<…>(double, …)"]);
        // Same name twice is one kernel: no change.
        let s = distinct_short_names(&["k<1>(int)", "k<1>(int)"], "…");
        assert_eq!(s, ["k<…>(…)", "k<…>(…)"]);
    }
}
