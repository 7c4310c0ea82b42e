//! profile.db: the sparse values of each profile.

use super::*;

pub(super) struct ProfInfo {
    pub(super) n_values: u64,
    pub(super) p_values: u64,
    pub(super) n_ctxs: u64,
    pub(super) p_ctx_indices: u64,
    /// (kind, is physical, logical id, physical id)
    pub(super) id_tuple: Option<Vec<(u8, bool, u32, u64)>>,
    pub(super) is_summary: bool,
}

pub(super) struct ProfileDb<'a> {
    pub(super) b: Bytes<'a>,
    pub(super) profiles: Vec<ProfInfo>,
}

pub(super) fn parse_profile_db(d: &[u8]) -> Result<ProfileDb<'_>, String> {
    let b = Bytes {
        name: "profile.db",
        d,
    };
    let (_minor, s) = header(&b, b"prof", b"_prof.db", &["ProfileInfos", "IdTuples"])?;
    let (infos, tuples) = (s[0], s[1]);
    need(&b, infos, 0x0d, "ProfileInfos")?;
    let p_profiles = b.u64(infos.p)?;
    let n_profiles = b.u32(infos.p + 8)? as u64;
    let sz_profile = b.u8(infos.p + 0x0c)? as u64;
    need_size(&b, infos.p + 0x0c, sz_profile, 0x2c, "profile info")?;
    b.check_array(
        p_profiles,
        n_profiles,
        sz_profile,
        infos.p,
        infos.end(),
        "profile infos",
    )?;
    let mut profiles = Vec::new();
    for i in 0..n_profiles {
        let pi = p_profiles + i * sz_profile;
        let n_values = b.u64(pi)?;
        let p_values = b.u64(pi + 8)?;
        let n_ctxs = b.u32(pi + 0x10)? as u64;
        let p_ctx_indices = b.u64(pi + 0x18)?;
        let p_tuple = b.u64(pi + 0x20)?;
        let flags = b.u32(pi + 0x28)?;
        b.check_array(p_values, n_values, 10, 0, b.len(), "profile values")?;
        b.check_array(
            p_ctx_indices,
            n_ctxs,
            12,
            0,
            b.len(),
            "profile context indices",
        )?;
        let id_tuple = if p_tuple != 0 {
            let n_ids = b.u16(p_tuple)? as u64;
            b.check_array(
                p_tuple + 8,
                n_ids,
                16,
                tuples.p,
                tuples.end(),
                "identifier tuple",
            )?;
            let mut ids = Vec::new();
            for k in 0..n_ids {
                let id = p_tuple + 8 + 16 * k;
                ids.push((
                    b.u8(id)?,
                    b.u16(id + 2)? & 1 != 0,
                    b.u32(id + 4)?,
                    b.u64(id + 8)?,
                ));
            }
            Some(ids)
        } else {
            None
        };
        profiles.push(ProfInfo {
            n_values,
            p_values,
            n_ctxs,
            p_ctx_indices,
            id_tuple,
            is_summary: flags & 1 != 0,
        });
    }
    Ok(ProfileDb { b, profiles })
}

impl ProfileDb<'_> {
    /// Calls `f(ctx_id, metric_id, value)` for every value of profile `i`.
    pub(super) fn values(&self, i: usize, mut f: impl FnMut(u32, u16, f64)) -> Result<(), String> {
        let b = &self.b;
        let p = &self.profiles[i];
        let mut prev: Option<(u32, u64)> = None;
        for k in 0..=p.n_ctxs {
            let cur = if k < p.n_ctxs {
                let at = p.p_ctx_indices + 12 * k;
                Some((b.u32(at)?, b.u64(at + 4)?))
            } else {
                None
            };
            if let Some((ctx, start)) = prev {
                let end = cur.map(|c| c.1).unwrap_or(p.n_values);
                if start > end || end > p.n_values {
                    let at = p.p_ctx_indices + 12 * (k - 1) + 4;
                    return Err(b.err(at, format!("value range [{start}, {end}) of context {ctx} is outside the {} values", p.n_values)));
                }
                for v in start..end {
                    let at = p.p_values + 10 * v;
                    f(ctx, b.u16(at)?, b.f64(at + 2)?);
                }
            }
            prev = cur;
        }
        Ok(())
    }
}

/// `rank 0 thread 1`, `GPU context 0 stream 2`, ... for one id tuple.
pub(super) fn tuple_label(ids: &[(u8, bool, u32, u64)], kinds: &[String], with_hw: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut gpu = false;
    for &(kind, physical, logical, phys) in ids {
        let k = kinds.get(kind as usize).map(|s| s.as_str()).unwrap_or("");
        let hw = matches!(k, "NODE" | "CORE");
        if hw && !with_hw {
            continue;
        }
        let value = if physical && k == "NODE" {
            format!("{phys:#x}")
        } else {
            logical.to_string()
        };
        let word = match k {
            "RANK" => "rank".to_string(),
            "THREAD" => "thread".to_string(),
            "NODE" => "node".to_string(),
            "CORE" => "core".to_string(),
            "SUMMARY" => "summary".to_string(),
            "GPUDEVICE" | "GPUCONTEXT" | "GPUSTREAM" => {
                let w = match k {
                    "GPUDEVICE" => "device",
                    "GPUCONTEXT" => "context",
                    _ => "stream",
                };
                let w = if gpu {
                    w.to_string()
                } else {
                    format!("GPU {w}")
                };
                gpu = true;
                w
            }
            "" => format!("kind{kind}"),
            other => other.to_ascii_lowercase(),
        };
        parts.push(format!("{word} {value}"));
    }
    parts.join(" ")
}

pub(super) fn tuple_text(ids: &[(u8, bool, u32, u64)], kinds: &[String]) -> String {
    ids.iter()
        .map(|&(kind, physical, logical, phys)| {
            let k = kinds
                .get(kind as usize)
                .cloned()
                .unwrap_or_else(|| format!("kind{kind}"));
            if physical {
                format!("{k} {logical} [{phys:#x}]")
            } else {
                format!("{k} {logical}")
            }
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

pub(super) fn profile_labels(db: &ProfileDb, kinds: &[String]) -> Vec<String> {
    let make = |with_hw: bool| -> Vec<String> {
        db.profiles
            .iter()
            .enumerate()
            .map(|(i, p)| match (&p.id_tuple, p.is_summary) {
                (None, _) if i == 0 => "summary".to_string(),
                (None, _) => format!("profile {i}"),
                (Some(ids), true) => {
                    let l = tuple_label(ids, kinds, with_hw);
                    if l.is_empty() {
                        "summary".into()
                    } else {
                        format!("summary {l}")
                    }
                }
                (Some(ids), false) => {
                    let l = tuple_label(ids, kinds, with_hw);
                    if l.is_empty() {
                        format!("profile {i}")
                    } else {
                        l
                    }
                }
            })
            .collect()
    };
    let unique = |v: &[String]| {
        let mut s: Vec<&String> = v.iter().collect();
        s.sort();
        s.dedup();
        s.len() == v.len()
    };
    let short = make(false);
    if unique(&short) {
        return short;
    }
    let long = make(true);
    if unique(&long) {
        return long;
    }
    long.into_iter()
        .enumerate()
        .map(|(i, l)| format!("{l} (profile {i})"))
        .collect()
}

/// The order profiles are returned in: profile.db's first (the summary) first, then
/// other summaries, then by id tuple without node and core (rank, thread, GPU context,
/// stream), then by the whole tuple.
pub(super) fn profile_order(db: &ProfileDb, kinds: &[String]) -> Vec<usize> {
    type Key = (bool, Vec<(u8, u32)>, Vec<(u8, u32, u64)>);
    let key = |p: &ProfInfo| -> Key {
        let ids = p.id_tuple.as_deref().unwrap_or(&[]);
        let hw = |k: u8| {
            matches!(
                kinds.get(k as usize).map(|s| s.as_str()),
                Some("NODE" | "CORE")
            )
        };
        (
            !p.is_summary,
            ids.iter()
                .filter(|id| !hw(id.0))
                .map(|id| (id.0, id.2))
                .collect(),
            ids.iter().map(|id| (id.0, id.2, id.3)).collect(),
        )
    };
    let mut order: Vec<usize> = (1..db.profiles.len()).collect();
    order.sort_by_cached_key(|&i| key(&db.profiles[i]));
    if !db.profiles.is_empty() {
        order.insert(0, 0);
    }
    order
}

pub(super) fn dir_size(dir: &Path, files: &[&str]) -> u64 {
    files
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

pub(super) fn read_v4(dir: &Path) -> Result<Vec<Profile>, String> {
    let meta = read_file(&dir.join("meta.db"), "meta.db")?;
    let prof = read_file(&dir.join("profile.db"), "profile.db")?;
    let size = dir_size(dir, &["meta.db", "profile.db", "cct.db", "trace.db"]);
    let mut out = parse_v4(&meta, &prof)?;
    for (i, p) in out.iter_mut().enumerate() {
        p.source.size = if i == 0 { size } else { 0 };
        p.meta
            .insert(0, ("database".into(), dir.display().to_string()));
    }
    Ok(out)
}

/// Builds the profiles from the bytes of meta.db and profile.db.
pub(super) fn parse_v4(meta_bytes: &[u8], prof_bytes: &[u8]) -> Result<Vec<Profile>, String> {
    let meta = parse_meta(meta_bytes)?;
    let db = parse_profile_db(prof_bytes)?;
    let layout = columns(&meta.metrics);
    let rows = meta.cct.len();
    let labels = profile_labels(&db, &meta.id_names);
    let mut out = Vec::with_capacity(db.profiles.len());
    for i in profile_order(&db, &meta.id_names) {
        let info = &db.profiles[i];
        let ids = if info.is_summary {
            &layout.stat
        } else {
            &layout.prop
        };
        let mut data: Vec<Option<Vec<f64>>> = vec![None; layout.cols.len()];
        let mut unlisted = 0usize;
        let mut global: Vec<(usize, f64)> = Vec::new();
        db.values(i, |ctx, metric, v| {
            let Some(&c) = ids.get(&metric) else {
                return;
            };
            if ctx == 0 {
                global.push((c, v));
                return;
            }
            match meta.node_of.get(&ctx) {
                Some(&n) => data[c].get_or_insert_with(|| vec![f64::NAN; rows])[n as usize] = v,
                None => unlisted += 1,
            }
        })?;
        let has: Vec<bool> = data.iter().map(|c| c.is_some()).collect();
        let default = pick_default(&meta.metrics, &layout.cols, &has);
        let mut metrics = MetricTable::new(rows);
        for (c, col) in layout.cols.iter().enumerate() {
            let wanted = default.is_some_and(|d| {
                layout.cols[d].metric == col.metric
                    && (c == d || col.name == inclusive_name(&layout.cols[d].name))
            });
            match data[c].take() {
                Some(v) => metrics.set(&col.name, col.unit, v),
                None if wanted => metrics.set(&col.name, col.unit, vec![f64::NAN; rows]),
                None => {}
            }
        }
        let mut pmeta = vec![
            ("profile".to_string(), labels[i].clone()),
            ("profile index".to_string(), i.to_string()),
        ];
        if let Some(ids) = &info.id_tuple {
            pmeta.push(("id tuple".into(), tuple_text(ids, &meta.id_names)));
        }
        pmeta.push(("title".into(), meta.title.clone()));
        if !meta.description.is_empty() {
            pmeta.push(("description".into(), meta.description.clone()));
        }
        for (c, v) in &global {
            pmeta.push((format!("total {}", layout.cols[*c].name), v.to_string()));
        }
        if unlisted > 0 {
            // hpcprof keeps values of contexts it leaves out of meta.db's tree
            // (instruction-level leaves); their lines and functions hold them already.
            pmeta.push((
                "values on contexts outside the tree".into(),
                unlisted.to_string(),
            ));
        }
        let mut cct = meta.cct.clone();
        cct.finish();
        out.push(Profile {
            call_graph: None,
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label: labels[i].clone(),
            },
            dialect: format!("HPCToolkit database v4.{} (hpcprof)", meta.minor),
            cct,
            metrics,
            events: None,
            counters: None,
            meta: pmeta,
            warnings: Vec::new(),
            default_metric: default
                .map(|d| layout.cols[d].name.clone())
                .unwrap_or_default(),
        });
    }
    if out.is_empty() {
        return Err("profile.db: the database holds no profiles".into());
    }
    Ok(out)
}
