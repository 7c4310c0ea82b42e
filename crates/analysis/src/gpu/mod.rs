//! GPU analyses over a trace's event table: the kernel table (nsys' cuda_gpu_kern_sum),
//! categories, HTA's breakdowns, and the per-stream timeline. Everything reads the event
//! table built by the reader; nothing re-parses.

pub mod breakdown;
pub mod charts;
pub mod classify;
pub mod counters;
pub mod gaps;
pub mod intervals;
pub mod kernels;
pub mod lod;
pub mod marks;
pub mod report;
pub mod short_names;
pub mod spans;
pub mod stack_chart;
pub mod timeline;

use std::collections::HashMap;

use crate::model::events::{NONE_I64, NONE_U32};
use crate::model::sparse::Sparse;
use crate::model::{EventKind, EventTable};
use classify::{Categories, HtaClassifier, HtaType};

/// One GPU lane: a (device, stream) pair with its activities in start order.
#[derive(Debug, Clone)]
pub struct Lane {
    pub device: i64,
    pub stream: i64,
    /// Event indices of the lane's GPU activities, sorted by start.
    pub events: Vec<u32>,
    /// In an ensemble's events, the member (`EventTable::member`) and its label,
    /// which the label starts with; 0 and empty otherwise.
    pub member: u16,
    pub group: String,
}

impl Lane {
    pub fn label(&self) -> String {
        let d = if self.device == NONE_I64 {
            "?".into()
        } else {
            self.device.to_string()
        };
        let s = if self.stream == NONE_I64 {
            "?".into()
        } else {
            self.stream.to_string()
        };
        if self.group.is_empty() {
            format!("GPU{d} s{s}")
        } else {
            format!("{} GPU{d} s{s}", self.group)
        }
    }
}

/// Per-trace GPU facts computed once: lanes, the HTA type and grove category of every
/// GPU activity.
pub struct GpuModel {
    pub lanes: Vec<Lane>,
    /// Event index -> HTA type and category index of a GPU activity ([`Class`]; other
    /// rows have none). Sparse: about 1.1 bytes an event on a Kineto trace, where two
    /// dense columns took 3 (8 MB of a 1 GB trace's TUI) and a map of the activities ~13.
    class: Sparse<u32>,
    pub categories: Categories,
    /// Category names that some activity of this trace falls in, in rule order: the
    /// legend lists these, not every rule of the file.
    pub present: Vec<String>,
    /// GPU activity event indices in start order.
    pub activities: Vec<u32>,
}

impl GpuModel {
    pub fn new(ev: &EventTable, categories: Categories) -> GpuModel {
        let hta_c = HtaClassifier::default();
        let mut by_name_hta: HashMap<u32, HtaType> = HashMap::new();
        let mut by_name_cat: HashMap<(u32, EventKind), u16> = HashMap::new();
        // Row order: the sparse column takes its values in row order.
        let mut class = Sparse::new();
        let mut activities: Vec<u32> = Vec::new();
        for i in 0..ev.len() {
            let kind = ev.kind[i];
            if !kind.is_gpu_activity() {
                class.push(NONE_U32);
                continue;
            }
            let name = ev.name[i];
            let h = *by_name_hta
                .entry(name)
                .or_insert_with(|| hta_c.classify(ev.strings.resolve(name)));
            let c = *by_name_cat
                .entry((name, kind))
                .or_insert_with(|| categories.classify(ev.strings.resolve(name), kind) as u16);
            class.push(Class::pack(h, c));
            activities.push(i as u32);
        }
        class.shrink_to_fit();
        activities.sort_by_key(|&i| (ev.ts[i as usize], i));
        let mut lanes_map: HashMap<(u16, i64, i64), Vec<u32>> = HashMap::new();
        for &i in &activities {
            let iu = i as usize;
            lanes_map
                .entry((ev.member_of(iu), ev.device[iu], ev.stream[iu]))
                .or_default()
                .push(i);
        }
        let mut lanes: Vec<Lane> = lanes_map
            .into_iter()
            .map(|((member, device, stream), events)| Lane {
                device,
                stream,
                events,
                member,
                group: ev.members.get(member as usize).cloned().unwrap_or_default(),
            })
            .collect();
        lanes.sort_by_key(|l| (l.member, l.device, l.stream));
        let mut used = vec![false; categories.rules.len()];
        for &c in by_name_cat.values() {
            if let Some(u) = used.get_mut(c as usize) {
                *u = true;
            }
        }
        let mut present: Vec<String> = Vec::new();
        for (rule, _) in categories.rules.iter().zip(&used).filter(|(_, &u)| u) {
            if !present.contains(&rule.name) {
                present.push(rule.name.clone());
            }
        }
        GpuModel {
            lanes,
            class,
            categories,
            activities,
            present,
        }
    }

    pub fn hta_of(&self, i: u32) -> HtaType {
        self.class_of(i).map_or(HtaType::Other, Class::hta)
    }

    /// The index of event `i`'s category rule (None: not an activity, or no rule).
    pub fn category_of(&self, i: u32) -> Option<u16> {
        self.class_of(i).and_then(Class::category)
    }

    pub fn category_name(&self, i: u32) -> &str {
        match self.category_of(i) {
            Some(c) => &self.categories.rules[c as usize].name,
            None => "other",
        }
    }

    pub fn category_color(&self, i: u32) -> u8 {
        match self.category_of(i) {
            Some(c) => self.categories.rules[c as usize].color,
            None => 0,
        }
    }

    fn class_of(&self, i: u32) -> Option<Class> {
        let v = *self.class.get(i as usize)?;
        (v != NONE_U32).then_some(Class(v))
    }
}

/// An activity's HTA type (high half) and category rule (low half, u16::MAX for none)
/// in one sparse value.
#[derive(Clone, Copy)]
struct Class(u32);

impl Class {
    fn pack(h: HtaType, c: u16) -> u32 {
        (h as u32) << 16 | c as u32
    }

    fn hta(self) -> HtaType {
        match self.0 >> 16 {
            0 => HtaType::Computation,
            1 => HtaType::Communication,
            2 => HtaType::Memory,
            _ => HtaType::Other,
        }
    }

    fn category(self) -> Option<u16> {
        let c = self.0 as u16;
        (c != u16::MAX).then_some(c)
    }
}

/// Shortens a kernel name for bars: drops the return type, folds template arguments and
/// parameter lists (`void at::native::kernel<4, F>(int, F)` -> `at::native::kernel<…>(…)`).
pub fn short_name(name: &str, ellipsis: &str) -> String {
    let mut s = name.trim();
    for ret in ["void ", "__global__ void "] {
        if let Some(r) = s.strip_prefix(ret) {
            s = r;
        }
    }
    // Placeholders such as HPCToolkit's `<gpu kernel>` are names, not templates.
    if s.starts_with('<') && s.ends_with('>') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut depth_angle = 0;
    let mut depth_paren = 0;
    for c in s.chars() {
        match c {
            '<' => {
                if depth_angle == 0 && depth_paren == 0 {
                    out.push('<');
                    out.push_str(ellipsis);
                }
                depth_angle += 1;
            }
            '>' if depth_angle > 0 => {
                depth_angle -= 1;
                if depth_angle == 0 && depth_paren == 0 {
                    out.push('>');
                }
            }
            '(' => {
                if depth_angle == 0 && depth_paren == 0 {
                    out.push('(');
                    out.push_str(ellipsis);
                }
                depth_paren += 1;
            }
            ')' if depth_paren > 0 => {
                depth_paren -= 1;
                if depth_angle == 0 && depth_paren == 0 {
                    out.push(')');
                }
            }
            c if depth_angle == 0 && depth_paren == 0 => out.push(c),
            _ => {}
        }
    }
    // "(anonymous namespace)" folds to "(…)" in the middle of a name; keep it readable.
    out.replace("(…)::", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names() {
        assert_eq!(
            short_name("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", "…"),
            "at::native::vectorized_elementwise_kernel<…>(…)"
        );
        assert_eq!(
            short_name("sm90_xmma_gemm_f16f16", "…"),
            "sm90_xmma_gemm_f16f16"
        );
        assert_eq!(
            short_name("Memcpy HtoD (Pinned -> Device)", "~"),
            "Memcpy HtoD (~)"
        );
        assert_eq!(
            short_name("void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::Half, long>(int)", "…"),
            "at::native::indexSelectLargeIndex<…>(…)"
        );
    }

    #[test]
    fn activities_keep_their_type_and_category_other_rows_have_none() {
        let mut t = EventTable::default();
        let rows = [
            ("op", EventKind::Cpu, 0),
            ("ncclKernel_AllReduce", EventKind::Kernel, 5),
            ("Memcpy HtoD (Pinned -> Device)", EventKind::Memcpy, 1),
            ("cudaLaunchKernel", EventKind::Runtime, 2),
            ("gemm", EventKind::Kernel, 3),
        ];
        // 70 CPU rows first: the activities sit in a later 64-row block.
        for k in 0..70 {
            let n = t.strings.intern("pad");
            t.push(n, n, EventKind::Cpu, k, 1, 0, 0);
        }
        for (name, kind, ts) in rows {
            let n = t.strings.intern(name);
            let i = t.push(n, n, kind, 100 + ts, 1, 0, 0);
            if kind.is_gpu_activity() {
                t.device[i] = 0;
                t.stream[i] = 7;
            }
        }
        let m = GpuModel::new(&t, Categories::builtin());
        assert_eq!(m.activities, vec![72, 74, 71]);
        assert_eq!(m.hta_of(71), HtaType::Communication);
        assert_eq!(m.hta_of(72), HtaType::Memory);
        assert_eq!(m.hta_of(74), HtaType::Computation);
        for i in [0, 70, 73, 1000] {
            assert_eq!(m.hta_of(i), HtaType::Other, "{i}");
            assert_eq!(m.category_of(i), None, "{i}");
            assert_eq!(m.category_name(i), "other", "{i}");
        }
        for i in [71, 72, 74] {
            let c = m.category_of(i).expect("an activity has a category");
            assert_eq!(m.category_name(i), m.categories.rules[c as usize].name);
        }
    }
}
