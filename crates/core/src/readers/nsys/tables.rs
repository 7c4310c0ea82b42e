//! Reading each table (kernels, copies, runtime calls, NVTX, OS runtime) into events.

use super::*;

impl TableReader {
    pub(super) fn new(db: Db) -> TableReader {
        TableReader {
            db,
            s: State {
                max_end: i64::MIN,
                ..State::default()
            },
        }
    }

    pub(super) fn load(&mut self) -> Result<(), String> {
        self.read_meta()?;
        self.read_strings()?;
        self.read_runtime()?;
        self.read_nvtx()?;
        self.read_osrt()?;
        self.read_kernels()?;
        self.read_copies()?;
        self.read_sets()?;
        self.s.key_correlations();
        self.close_unclosed();
        self.read_names()?;
        let dropped = std::mem::take(&mut self.s.dropped);
        for (table, why, n) in dropped {
            self.s.warn(format!("{n} row(s) of {table} dropped: {why}"));
        }
        let dangling = std::mem::take(&mut self.s.dangling);
        let known = self.s.strings.len();
        for (table, placeholder, n) in dangling {
            self.s.warn(format!(
                "{n} row(s) of {table} name a string id that StringIds lacks (it has {known} strings; damaged or cut export): shown as {placeholder}"
            ));
        }
        Ok(())
    }

    pub(super) fn read_meta(&mut self) -> Result<(), String> {
        let mut export = Vec::new();
        self.db.scan("META_DATA_EXPORT", &["name", "value"], |r| {
            if let (Some(k), Some(v)) = (r.text(0), r.text(1)) {
                export.push((k, v));
            }
        })?;
        let s = &mut self.s;
        for (k, v) in export {
            match k.as_str() {
                "EXPORT_PRODUCT_VERSION" => s.product = Some(v.clone()),
                "EXPORT_SCHEMA_VERSION" => s.schema = Some(v.clone()),
                _ => continue,
            }
            s.meta.push((k, v));
        }
        let mut start = None;
        self.db.scan(
            "TARGET_INFO_SESSION_START_TIME",
            &["utcEpochNs", "utcTime"],
            |r| start = Some((r.int(0), r.text(1))),
        )?;
        if let Some((ns, utc)) = start {
            if let Some(ns) = ns {
                s.meta
                    .push(("session start (UTC epoch ns)".into(), ns.to_string()));
            }
            if let Some(utc) = utc {
                s.meta.push(("session start (UTC)".into(), utc));
            }
        }
        let mut gpus = Vec::new();
        self.db
            .scan("TARGET_INFO_GPU", &["cuDevice", "id", "name"], |r| {
                if let Some(name) = r.text(2) {
                    gpus.push((r.int(0).or(r.int(1)), name));
                }
            })?;
        gpus.sort_by_key(|g| g.0);
        gpus.dedup();
        for (id, name) in gpus {
            let id = id.map(|i| i.to_string()).unwrap_or("?".into());
            s.meta.push((format!("device {id}"), name));
        }
        Ok(())
    }

    pub(super) fn read_strings(&mut self) -> Result<(), String> {
        let strings = &mut self.s.strings;
        let found = self.db.scan("StringIds", &["id", "value"], |r| {
            if let (Some(id), Some(v)) = (r.int(0), r.text(1)) {
                strings.insert(id, v);
            }
        })?;
        if !found {
            self.s
                .warn("no StringIds table: kernel, call and range names are unknown".into());
        }
        Ok(())
    }

    pub(super) fn read_runtime(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self.db.plan(
            RUNTIME,
            &["start", "end", "globalTid", "correlationId", "nameId"],
        )?
        else {
            s.warn(format!(
                "no {RUNTIME} table: GPU activities cannot be linked to their launches"
            ));
            return Ok(());
        };
        s.warn_missing(
            &plan,
            &["start", "end", "globalTid", "correlationId", "nameId"],
        );
        let (rt, drv) = (s.cat("cuda_runtime"), s.cat("cuda_driver"));
        let unknown = s.intern("<unknown CUDA call>");
        self.db.run(&plan, |r| {
            let (name, cat) = match r.int(4) {
                Some(id) => match s.runtime_names.get(&id) {
                    Some(&x) => x,
                    None => {
                        let x = match s.strings.get(&id).filter(|n| !n.is_empty()) {
                            Some(n) => {
                                let clean = runtime_name(n);
                                let cat = if clean.starts_with("cu") && !clean.starts_with("cuda") {
                                    drv
                                } else {
                                    rt
                                };
                                (s.tr.events.strings.intern(clean), cat)
                            }
                            None => (unknown, rt),
                        };
                        s.runtime_names.insert(id, x);
                        x
                    }
                },
                None => (unknown, rt),
            };
            if name == unknown && r.int(4).is_some() {
                s.count_dangling(RUNTIME, "<unknown CUDA call>");
            }
            let gtid = r.int(2);
            let lane = s.cpu_lane(gtid);
            if let Some(i) = s.push(
                RUNTIME,
                name,
                cat,
                EventKind::Runtime,
                r.int(0),
                r.int(1),
                lane,
            ) {
                s.correlate(i, gtid.map(|g| decode_global(g).0), r.int(3));
            }
        })
    }

    pub(super) fn read_nvtx(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self.db.plan(
            NVTX,
            &["start", "end", "eventType", "text", "textId", "globalTid"],
        )?
        else {
            return Ok(());
        };
        s.warn_missing(&plan, &["start", "end", "eventType", "text", "globalTid"]);
        let no_type = plan.missing.contains(&"eventType");
        let cat = s.cat("nvtx");
        self.db.run(&plan, |r| {
            let (start, end) = (r.int(0), r.int(1));
            let kind = match r.int(2) {
                Some(t) if NVTX_PUSH_POP.contains(&t) || NVTX_START_END.contains(&t) => {
                    EventKind::Cpu
                }
                Some(t) if NVTX_MARK.contains(&t) => EventKind::Instant,
                // Without eventType, rows with a time span are taken as ranges.
                None if no_type && end.is_some() => EventKind::Cpu,
                // Domain and category definitions and the like are not events.
                _ => return,
            };
            let name = s.name_or(r, &[3, 4], NVTX, "<unnamed NVTX range>");
            let lane = s.cpu_lane(r.int(5));
            // A range still open when the capture stopped has no end: closed later.
            let open = kind == EventKind::Cpu && end.is_none() && start.is_some();
            let end = if open { start } else { end };
            if let Some(i) = s.push(NVTX, name, cat, kind, start, end, lane) {
                if open {
                    s.unclosed.push(i);
                }
            }
        })
    }

    pub(super) fn read_osrt(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self
            .db
            .plan(OSRT, &["start", "end", "globalTid", "nameId"])?
        else {
            return Ok(());
        };
        s.warn_missing(&plan, &["start", "end", "globalTid", "nameId"]);
        let cat = s.cat("osrt");
        self.db.run(&plan, |r| {
            let name = s.name_or(r, &[3], OSRT, "<unknown OS call>");
            let lane = s.cpu_lane(r.int(2));
            s.push(OSRT, name, cat, EventKind::Cpu, r.int(0), r.int(1), lane);
        })
    }

    pub(super) fn read_kernels(&mut self) -> Result<(), String> {
        const COLS: [&str; 20] = [
            "start",                // 0
            "end",                  // 1
            "deviceId",             // 2
            "contextId",            // 3
            "streamId",             // 4
            "correlationId",        // 5
            "globalPid",            // 6
            "demangledName",        // 7
            "shortName",            // 8
            "mangledName",          // 9
            "registersPerThread",   // 10
            "gridX",                // 11
            "gridY",                // 12
            "gridZ",                // 13
            "blockX",               // 14
            "blockY",               // 15
            "blockZ",               // 16
            "staticSharedMemory",   // 17
            "dynamicSharedMemory",  // 18
            "localMemoryPerThread", // 19
        ];
        let s = &mut self.s;
        let Some(plan) = self.db.plan(KERNEL, &COLS)? else {
            s.warn(format!(
                "no {KERNEL} table: the export has no kernels (CUDA trace off, or none ran)"
            ));
            return Ok(());
        };
        // Every known schema has demangledName and shortName: one of them missing
        // means a renamed or damaged table, even while the other still names kernels.
        s.warn_missing(
            &plan,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "demangledName",
                "shortName",
            ],
        );
        if ["demangledName", "shortName", "mangledName"]
            .iter()
            .all(|c| plan.missing.contains(c))
        {
            s.warn(format!("{KERNEL} has no name column: kernels are unnamed"));
        }
        let cat = s.cat("kernel");
        self.db.run(&plan, |r| {
            let name = s.name_or(r, &[7, 8, 9], KERNEL, "<unknown kernel>");
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(
                KERNEL,
                name,
                cat,
                EventKind::Kernel,
                r.int(0),
                r.int(1),
                lane,
            ) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("registers per thread", r.int(10));
            let (st, dy) = (r.int(17), r.int(18));
            if st.is_some() || dy.is_some() {
                a.int("shared memory", Some(st.unwrap_or(0) + dy.unwrap_or(0)));
            }
            a.triple("grid", [r.int(11), r.int(12), r.int(13)]);
            a.triple("block", [r.int(14), r.int(15), r.int(16)]);
            a.int("static shared memory", st);
            a.int("dynamic shared memory", dy);
            a.int("local memory per thread", r.int(19));
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    /// An `ENUM_*` table as id -> (name, label).
    pub(super) fn read_enum(&self, table: &str) -> Result<HashMap<i64, (String, String)>, String> {
        let mut m = HashMap::new();
        self.db.scan(table, &["id", "name", "label"], |r| {
            if let Some(id) = r.int(0) {
                m.insert(
                    id,
                    (r.text(1).unwrap_or_default(), r.text(2).unwrap_or_default()),
                );
            }
        })?;
        Ok(m)
    }

    pub(super) fn mem_kind(kinds: &HashMap<i64, (String, String)>, k: Option<i64>) -> String {
        match k {
            None => "Unknown".into(),
            Some(k) => match kinds.get(&k) {
                Some((_, label)) if !label.is_empty() => label.clone(),
                _ => mem_kind_fallback(k),
            },
        }
    }

    pub(super) fn read_copies(&mut self) -> Result<(), String> {
        const COLS: [&str; 15] = [
            "start",         // 0
            "end",           // 1
            "deviceId",      // 2
            "contextId",     // 3
            "streamId",      // 4
            "correlationId", // 5
            "globalPid",     // 6
            "bytes",         // 7
            "copyKind",      // 8
            "srcKind",       // 9
            "dstKind",       // 10
            "srcDeviceId",   // 11
            "dstDeviceId",   // 12
            "srcContextId",  // 13
            "dstContextId",  // 14
        ];
        let Some(plan) = self.db.plan(MEMCPY, &COLS)? else {
            return Ok(());
        };
        let opers = self.read_enum("ENUM_CUDA_MEMCPY_OPER")?;
        let kinds = self.read_enum("ENUM_CUDA_MEM_KIND")?;
        let s = &mut self.s;
        s.warn_missing(
            &plan,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "bytes",
                "copyKind",
                "srcKind",
                "dstKind",
            ],
        );
        let cat = s.cat("gpu_memcpy");
        // (copyKind, srcKind, dstKind) -> interned name.
        let mut names: HashMap<[Option<i64>; 3], u32> = HashMap::new();
        self.db.run(&plan, |r| {
            let copy = r.int(8);
            let key = [copy, r.int(9), r.int(10)];
            let name = *names.entry(key).or_insert_with(|| {
                let short = match copy {
                    Some(k) => match opers.get(&k) {
                        Some((name, label)) => copy_kind_from_enum(name)
                            .or_else(|| (!label.is_empty()).then(|| label.clone()))
                            .unwrap_or_else(|| copy_kind_fallback(k)),
                        None => copy_kind_fallback(k),
                    },
                    None => "Unknown".into(),
                };
                s.intern(&format!(
                    "Memcpy {short} ({} -> {})",
                    Self::mem_kind(&kinds, key[1]),
                    Self::mem_kind(&kinds, key[2])
                ))
            });
            let (start, end, bytes) = (r.int(0), r.int(1), r.int(7));
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(MEMCPY, name, cat, EventKind::Memcpy, start, end, lane) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("bytes", bytes);
            a.float("memory bandwidth (GB/s)", bandwidth(bytes, start, end));
            if copy == Some(10) {
                a.int("fromDevice", r.int(11));
                a.int("toDevice", r.int(12));
                a.int("fromContext", r.int(13));
                a.int("toContext", r.int(14));
            }
            if let Some((_, label)) = copy.and_then(|k| opers.get(&k)) {
                if !label.is_empty() {
                    a.text("copy kind", label);
                }
            }
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    pub(super) fn read_sets(&mut self) -> Result<(), String> {
        const COLS: [&str; 10] = [
            "start",         // 0
            "end",           // 1
            "deviceId",      // 2
            "contextId",     // 3
            "streamId",      // 4
            "correlationId", // 5
            "globalPid",     // 6
            "bytes",         // 7
            "value",         // 8
            "memKind",       // 9
        ];
        let Some(plan) = self.db.plan(MEMSET, &COLS)? else {
            return Ok(());
        };
        let kinds = self.read_enum("ENUM_CUDA_MEM_KIND")?;
        let s = &mut self.s;
        s.warn_missing(
            &plan,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "bytes",
            ],
        );
        let cat = s.cat("gpu_memset");
        let mut names: HashMap<Option<i64>, u32> = HashMap::new();
        self.db.run(&plan, |r| {
            // Kineto names every set after its memory kind: "Memset (Device)".
            let kind = r.int(9);
            let name = *names
                .entry(kind)
                .or_insert_with(|| s.intern(&format!("Memset ({})", Self::mem_kind(&kinds, kind))));
            let (start, end, bytes) = (r.int(0), r.int(1), r.int(7));
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(MEMSET, name, cat, EventKind::Memset, start, end, lane) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("bytes", bytes);
            a.float("memory bandwidth (GB/s)", bandwidth(bytes, start, end));
            a.int("value", r.int(8));
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    /// NVTX ranges still open when the capture stopped end with the last event.
    pub(super) fn close_unclosed(&mut self) {
        let s = &mut self.s;
        if s.unclosed.is_empty() {
            return;
        }
        let ev = &mut s.tr.events;
        for &i in &s.unclosed {
            ev.dur[i] = (s.max_end - ev.ts[i]).max(0);
            s.tr.unended.push(ev.seq.get(i));
        }
        let n = s.unclosed.len();
        s.warn(format!(
            "{n} NVTX range(s) never ended: each holds what ran after it but counts no time of its own"
        ));
    }

    /// Thread names (ThreadNames) and process names (PROCESSES) of the lanes in use.
    pub(super) fn read_names(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let mut threads: HashMap<(i64, i64), (i64, String)> = HashMap::new();
        self.db
            .scan("ThreadNames", &["nameId", "priority", "globalTid"], |r| {
                let Some(g) = r.int(2) else { return };
                let key = decode_global(g);
                if !s.lanes.contains(&key) {
                    return;
                }
                let Some(name) = r.name_text(0, &s.strings) else {
                    return;
                };
                let prio = r.int(1).unwrap_or(0);
                match threads.get(&key) {
                    Some((p, _)) if *p > prio => {}
                    _ => {
                        threads.insert(key, (prio, name));
                    }
                }
            })?;
        let pids: HashSet<i64> = s.lanes.iter().map(|l| l.0).collect();
        let mut procs: HashMap<i64, String> = HashMap::new();
        self.db
            .scan("PROCESSES", &["globalPid", "pid", "name"], |r| {
                let pid = r.int(0).map(|g| decode_global(g).0).or(r.int(1));
                if let (Some(pid), Some(name)) = (pid, r.text(2)) {
                    if pids.contains(&pid) && !name.is_empty() {
                        procs.insert(pid, name);
                    }
                }
            })?;
        for ((p, t), (_, name)) in threads {
            let (pk, tk) = (s.intern(&p.to_string()), s.intern(&t.to_string()));
            s.tr.thread_names.insert((pk, tk), name);
        }
        for (p, name) in procs {
            let pk = s.intern(&p.to_string());
            s.tr.process_names.insert(pk, name);
        }
        Ok(())
    }

    pub(super) fn finish(self, source: Source) -> Profile {
        let State {
            mut tr,
            mut meta,
            product,
            schema,
            ..
        } = self.s;
        let tree = trace_cct::build(&tr);
        tr.events.node = tree.node_of_event;
        tr.events.launch = tree.launch_of_event;
        let mut cct = tree.cct;
        cct.finish();
        let mut warnings = tr.warnings;
        warnings.extend(tree.warnings);
        meta.extend(tr.meta);
        let dialect = match (product, schema) {
            (Some(p), Some(s)) => format!("Nsight Systems {p}, export schema {s}"),
            (None, Some(s)) => format!("Nsight Systems, export schema {s}"),
            (Some(p), None) => format!("Nsight Systems {p}"),
            (None, None) => "Nsight Systems, an older export without META_DATA_EXPORT".into(),
        };
        Profile {
            call_graph: None,
            source,
            dialect,
            cct,
            metrics: tree.metrics,
            events: Some(tr.events),
            counters: Some(CounterTable::default()),
            meta,
            warnings,
            default_metric: "time".into(),
        }
    }
}

/// Kineto's bandwidth: bytes per ns, i.e. GB/s (0 for a zero-length copy).
pub(super) fn bandwidth(bytes: Option<i64>, start: Option<i64>, end: Option<i64>) -> f64 {
    match (bytes, start, end) {
        (Some(b), Some(s), Some(e)) if e > s => b as f64 / (e - s) as f64,
        _ => 0.0,
    }
}
