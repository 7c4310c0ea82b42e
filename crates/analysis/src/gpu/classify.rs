//! Kernel categories: HTA's four types (same rules, same order, anchored like Python's
//! `re.match`) and grove's finer set from `categories.toml`, which users can override.

use regex::Regex;

use crate::model::EventKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HtaType {
    Computation,
    Communication,
    Memory,
    Other,
}

impl HtaType {
    pub fn label(self) -> &'static str {
        match self {
            HtaType::Computation => "COMPUTATION",
            HtaType::Communication => "COMMUNICATION",
            HtaType::Memory => "MEMORY",
            HtaType::Other => "OTHER",
        }
    }
}

/// HTA's kernel-type classifier, in rule order. Two rule sets exist: the one of the
/// released HolisticTraceAnalysis 0.5.0 on PyPI (what users run, and grove's default)
/// and the repository's HEAD (hta/common/types.py), which adds ROCm/HCCL/MTIA names.
pub struct HtaClassifier {
    comm: Regex,
    memory: Regex,
    not_compute: Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HtaRules {
    #[default]
    Release05,
    Head,
}

impl Default for HtaClassifier {
    fn default() -> Self {
        HtaClassifier::new(HtaRules::default())
    }
}

impl HtaClassifier {
    pub fn new(rules: HtaRules) -> HtaClassifier {
        // `^(?:...)` is Python's re.match: anchored at the start only.
        let (comm, memory, not_compute) = match rules {
            HtaRules::Release05 => (
                r"^(?:^nccl.*Kernel)",
                r"^(?:(^Memcpy)|(^Memset)|(^dma))",
                r"^(?:(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync))",
            ),
            HtaRules::Head => (
                r"^(?:(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*))",
                r"^(?:(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma))",
                r"^(?:(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution))",
            ),
        };
        HtaClassifier {
            comm: Regex::new(comm).unwrap(),
            memory: Regex::new(memory).unwrap(),
            not_compute: Regex::new(not_compute).unwrap(),
        }
    }
}

impl HtaClassifier {
    pub fn classify(&self, name: &str) -> HtaType {
        if self.comm.is_match(name) {
            HtaType::Communication
        } else if self.memory.is_match(name) {
            HtaType::Memory
        } else if !self.not_compute.is_match(name) {
            HtaType::Computation
        } else {
            HtaType::Other
        }
    }
}

#[derive(Debug, Clone)]
pub struct Category {
    pub name: String,
    pub pattern: Option<Regex>,
    pub kind: Option<EventKind>,
    /// Slot in the theme's categorical palette.
    pub color: u8,
}

/// grove's finer categories: the first matching rule wins.
#[derive(Debug, Clone)]
pub struct Categories {
    pub rules: Vec<Category>,
}

pub const DEFAULT: &str = include_str!("categories.toml");

impl Categories {
    pub fn builtin() -> Categories {
        Categories::parse(DEFAULT, "built-in categories")
            .expect("the built-in categories are valid")
    }

    /// Built-in rules, with a user's file (XDG config) and an explicit file in front.
    pub fn load(explicit: Option<&std::path::Path>) -> Result<Categories, String> {
        let mut rules = Vec::new();
        if let Some(p) = explicit {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            rules.extend(Categories::parse(&text, &p.display().to_string())?.rules);
        }
        if let Some(dir) = crate::config::config_dir() {
            let user = dir.join("grove").join("categories.toml");
            if let Ok(text) = std::fs::read_to_string(&user) {
                rules.extend(Categories::parse(&text, &user.display().to_string())?.rules);
            }
        }
        rules.extend(Categories::builtin().rules);
        Ok(Categories { rules })
    }

    pub fn parse(text: &str, origin: &str) -> Result<Categories, String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!(
                "{origin}: {}",
                e.to_string().lines().next().unwrap_or("invalid TOML")
            )
        })?;
        let list = doc
            .get("category")
            .and_then(|v| v.as_array())
            .ok_or_else(|| format!("{origin}: expected [[category]] tables"))?;
        let mut rules = Vec::new();
        for (i, c) in list.iter().enumerate() {
            let at = format!("{origin}: category {}", i + 1);
            let t = c.as_table().ok_or_else(|| format!("{at}: not a table"))?;
            let name = t
                .get("name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| format!("{at}: missing name"))?
                .to_string();
            let pattern = match t.get("match").and_then(|v| v.as_str()) {
                Some(m) => Some(
                    Regex::new(&format!("(?i){m}")).map_err(|e| format!("{at}: bad regex: {e}"))?,
                ),
                None => None,
            };
            let kind = match t.get("kind").and_then(|v| v.as_str()) {
                None => None,
                Some("kernel") => Some(EventKind::Kernel),
                Some("memcpy") => Some(EventKind::Memcpy),
                Some("memset") => Some(EventKind::Memset),
                Some(k) => {
                    return Err(format!(
                        "{at}: kind must be kernel, memcpy or memset, not {k:?}"
                    ))
                }
            };
            if pattern.is_none() && kind.is_none() {
                return Err(format!("{at}: give match = \"regex\" or kind"));
            }
            let color = t
                .get("color")
                .and_then(|v| v.as_integer())
                .unwrap_or(0)
                .clamp(0, 9) as u8;
            rules.push(Category {
                name,
                pattern,
                kind,
                color,
            });
        }
        Ok(Categories { rules })
    }

    /// Index of the first rule that matches the name without its parameter list
    /// (argument types like `fbgemm_gpu::...` say nothing about what a kernel does).
    pub fn classify(&self, name: &str, kind: EventKind) -> usize {
        let name = without_parameters(name);
        self.rules
            .iter()
            .position(|c| {
                c.kind.is_none_or(|k| k == kind)
                    && c.pattern.as_ref().is_none_or(|p| p.is_match(name))
            })
            .unwrap_or(self.rules.len().saturating_sub(1))
    }
}

/// `void f<A, B>(int, float)` -> `void f<A, B>`: cuts at the first `(` outside `<>`.
fn without_parameters(name: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 && i > 0 => {
                // "(anonymous namespace)" inside a qualified name is not a parameter list.
                if name[i..].starts_with("(anonymous namespace)") {
                    continue;
                }
                return &name[..i];
            }
            _ => {}
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hta_release_rules() {
        let c = HtaClassifier::new(HtaRules::Release05);
        assert_eq!(
            c.classify("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
            HtaType::Communication
        );
        assert_eq!(
            c.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"),
            HtaType::Communication
        );
        assert_eq!(
            c.classify("Memcpy HtoD (Pinned -> Device)"),
            HtaType::Memory
        );
        assert_eq!(c.classify("Stream Wait Event"), HtaType::Computation);
        assert_eq!(c.classify("Stream Sync"), HtaType::Other);
        assert_eq!(c.classify("hipMemcpyAsync"), HtaType::Other);
    }

    #[test]
    fn hta_rules() {
        let c = HtaClassifier::new(HtaRules::Head);
        assert_eq!(
            c.classify("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
            HtaType::Communication
        );
        assert_eq!(
            c.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"),
            HtaType::Communication
        );
        assert_eq!(c.classify("void foo<ncclKernel>()"), HtaType::Communication);
        assert_eq!(c.classify("hipMemcpyAsync"), HtaType::Communication);
        assert_eq!(
            c.classify("Memcpy HtoD (Pinned -> Device)"),
            HtaType::Memory
        );
        assert_eq!(c.classify("Memset (Device)"), HtaType::Memory);
        assert_eq!(
            c.classify("void at::native::vectorized_elementwise_kernel<4>"),
            HtaType::Computation
        );
        assert_eq!(c.classify("Stream Sync"), HtaType::Other);
        assert_eq!(c.classify("cudaLaunchKernel"), HtaType::Other);
    }

    #[test]
    fn fine_categories() {
        let c = Categories::builtin();
        let cat = |n: &str, k| c.rules[c.classify(n, k)].name.clone();
        assert_eq!(
            cat("Memcpy HtoD (Pinned -> Device)", EventKind::Memcpy),
            "memcpy"
        );
        assert_eq!(
            cat("sm90_xmma_gemm_f16f16_f16f32", EventKind::Kernel),
            "gemm"
        );
        assert_eq!(
            cat("void pytorch_flash::flash_fwd_kernel<>", EventKind::Kernel),
            "attention"
        );
        assert_eq!(
            cat("ncclDevKernel_AllReduce_Sum_f32_RING_LL", EventKind::Kernel),
            "nccl"
        );
        assert_eq!(cat("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", EventKind::Kernel), "elementwise");
        assert_eq!(cat("mystery_kernel_9", EventKind::Kernel), "other");
        assert_eq!(
            cat(
                "void split_embedding_backward_kernel<float>(fbgemm_gpu::FixedDivisor, int)",
                EventKind::Kernel
            ),
            "elementwise"
        );
        assert_eq!(
            cat("void at::native::multi_tensor_apply_kernel<at::native::FusedAdamMathFunctor<float> >(int)", EventKind::Kernel),
            "optimizer"
        );
        let user = Categories::parse(
            "[[category]]\nname = \"mine\"\nmatch = \"mystery\"\ncolor = 3\n",
            "u",
        )
        .unwrap();
        let mut rules = user.rules;
        rules.extend(c.rules.clone());
        let c2 = Categories { rules };
        assert_eq!(
            c2.rules[c2.classify("mystery_kernel_9", EventKind::Kernel)].name,
            "mine"
        );
        assert!(Categories::parse("[[category]]\nname = \"x\"\n", "u").is_err());
    }
}
