//! The older single-file CUBE format (`.cube`, CUBE 3 XML; Cube 4 still writes it on
//! request): the same metrics, program and system elements as a CUBE4 `anchor.xml`
//! (threads as `machine`/`node`/`process`/`thread`), followed by `<severity>`: per
//! metric a `<matrix metricId>` of `<row cnodeId>` elements, each the metric's
//! exclusive value on that call path for every thread in thread-id order, as text.
//! Rows left out are 0 (the writers omit all-zero rows).

use std::collections::HashMap;

use crate::model::{Format, Profile, Source};

use super::anchor::{self, Kind};
use super::{metric, values, xml};

pub struct Cube3;

/// An XML document whose root is `<cube version="…">` (in the first block).
pub fn claims_text(text: &[u8]) -> bool {
    let head = &text[..text.len().min(1024)];
    memchr::memmem::find(head, b"<cube version=").is_some()
        && head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

impl super::super::Reader for Cube3 {
    fn name(&self) -> &'static str {
        "CUBE 3 XML (.cube)"
    }

    fn format(&self) -> Format {
        Format::Cube
    }

    fn claims(&self, probe: &super::super::Probe) -> bool {
        !probe.is_dir && probe.text().is_some_and(claims_text)
    }

    fn read(&self, input: super::super::Input) -> Result<Vec<Profile>, String> {
        let (bytes, source) = input.into_bytes()?;
        read_xml(&bytes, source)
    }
}

/// One matrix's rows as planes of one field; an error names what does not parse.
fn matrix(
    doc: &xml::Doc,
    mat: usize,
    a: &anchor::Anchor,
    node_of: &HashMap<i64, usize>,
) -> Result<(Vec<f64>, usize), String> {
    let nloc = a.locations.len();
    let mut plane = vec![0.0; a.cnodes.len() * nloc];
    let mut unknown = 0;
    for row in doc.kids(mat, "row") {
        let id: Option<i64> = doc.nodes[row]
            .attr("cnodeId")
            .and_then(|v| v.trim().parse().ok());
        let Some(&n) = id.and_then(|id| node_of.get(&id)) else {
            unknown += 1;
            continue;
        };
        let text = &doc.nodes[row].text;
        let vals: Vec<f64> = text
            .split_whitespace()
            .map(|w| w.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                let w: String = text
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(24)
                    .collect();
                format!("cnode {} holds {w:?}, not numbers", id.unwrap_or(-1))
            })?;
        if vals.len() != nloc {
            return Err(format!(
                "cnode {} holds {} value(s) for {nloc} thread(s)",
                id.unwrap_or(-1),
                vals.len()
            ));
        }
        plane[n * nloc..(n + 1) * nloc].copy_from_slice(&vals);
    }
    Ok((plane, unknown))
}

pub fn read_xml(bytes: &[u8], source: Source) -> Result<Vec<Profile>, String> {
    let doc = xml::parse(bytes)?;
    let mut a = anchor::parse(&doc)?;
    let Some(sev) = doc.kid(0, "severity") else {
        return Err(if a.version.starts_with('4') {
            "a CUBE4 anchor.xml alone holds no values: open the .cubex archive it came from".into()
        } else {
            "a CUBE XML file without <severity> (no values)".into()
        });
    };
    let mut warnings = Vec::new();
    let cct = super::prepare(&mut a, &mut warnings)?;
    let node_of: HashMap<i64, usize> = a
        .cnodes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let matrices: HashMap<i64, usize> = doc
        .kids(sev, "matrix")
        .filter_map(|m| Some((doc.nodes[m].attr("metricId")?.trim().parse().ok()?, m)))
        .collect();
    let mut read = Vec::new();
    let mut without = Vec::new();
    for m in &a.metrics {
        let Some(&mat) = matrices.get(&m.id) else {
            without.push(m.uniq_name.as_str());
            continue;
        };
        // Text rows hold one number per thread: the types that are one number.
        let layout = values::layout(&m.dtype)
            .ok()
            .filter(|l| l.shape == values::Shape::Scalar)
            .or_else(|| values::layout("DOUBLE").ok());
        let Some(layout) = layout else { continue };
        match matrix(&doc, mat, &a, &node_of) {
            Ok((plane, unknown)) => {
                if unknown > 0 {
                    warnings.push(format!(
                        "metric {}: {unknown} row(s) name a cnode the file does not define: skipped",
                        m.uniq_name
                    ));
                }
                let nan = plane.iter().filter(|x| x.is_nan()).count();
                // The rows are exclusive values whatever the metric's type says.
                let mut p = metric::from_stored(&a, Kind::Exclusive, layout, vec![plane]);
                p.nan = nan;
                super::accept(m, p, &mut warnings, &mut read);
            }
            Err(e) => warnings.push(format!("metric {}: {e}: skipped", m.uniq_name)),
        }
    }
    if !without.is_empty() {
        warnings.push(format!(
            "{} metric(s) have no <matrix> (no value anywhere): {}: skipped",
            without.len(),
            without.join(", ")
        ));
    }
    Ok(super::profiles(&a, cct, &read, source, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUBE3: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<cube version="3.0">
  <attr key="CUBE_CT_AGGR" value="SUM"/>
  <metrics>
    <metric id="0"><disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>FLOAT</dtype><uom>sec</uom>
      <metric id="1"><disp_name>MPI</disp_name><uniq_name>mpi</uniq_name><dtype>FLOAT</dtype><uom>sec</uom></metric>
    </metric>
    <metric id="2"><disp_name>Visits</disp_name><uniq_name>visits</uniq_name><dtype>INTEGER</dtype><uom>occ</uom></metric>
  </metrics>
  <program>
    <region id="0" mod="a.c" begin="1" end="9"><name>main</name><url></url><descr></descr></region>
    <region id="1" mod="mpi" begin="-1" end="-1"><name>MPI_Send</name><url></url><descr></descr></region>
    <csite id="0" line="3" mod="a.c" callee="0"/>
    <csite id="1" line="5" mod="a.c" callee="1"/>
    <cnode id="0" csiteId="0">
      <cnode id="1" csiteId="1"/>
    </cnode>
  </program>
  <system>
    <machine id="0"><name>m</name>
      <node id="0"><name>n</name>
        <process id="0"><name>Process 0</name><rank>0</rank>
          <thread id="0"><name>Thread 0</name><rank>0</rank></thread>
          <thread id="1"><name>Thread 1</name><rank>1</rank></thread>
        </process>
      </node>
    </machine>
    <topologies></topologies>
  </system>
  <severity>
    <matrix metricId="0">
      <row cnodeId="0">
1.5
2.5
      </row>
      <row cnodeId="1">
0.25 0.75
      </row>
    </matrix>
    <matrix metricId="1">
      <row cnodeId="1">
1 2
      </row>
    </matrix>
  </severity>
</cube>
"#;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Cube,
            size: 0,
            gzip: false,
            label: "t.cube".into(),
        }
    }

    #[test]
    fn reads_severity_rows_as_exclusive_values() {
        assert!(claims_text(CUBE3.as_bytes()));
        let ps = read_xml(CUBE3.as_bytes(), src()).unwrap();
        assert_eq!(ps.len(), 3);
        let s = &ps[0];
        assert_eq!(s.cct.name(0), "main");
        assert_eq!(s.cct.name(1), "MPI_Send");
        assert_eq!(s.cct.frame(1).attr("line"), Some("5"));
        assert_eq!(s.metrics.values("time").unwrap(), &[4.0, 1.0]);
        assert_eq!(s.metrics.values("time (inc)").unwrap(), &[5.0, 1.0]);
        assert_eq!(s.metrics.values("mpi (inc)").unwrap(), &[3.0, 3.0]);
        assert_eq!(ps[2].source.label, "rank 0 thread 1");
        assert_eq!(ps[2].metrics.values("time").unwrap(), &[2.5, 0.75]);
        assert!(
            s.warnings.iter().any(|w| w.contains("visits")),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn bad_rows_and_anchors_alone() {
        let bad = CUBE3.replace("0.25 0.75", "0.25 x");
        let ps = read_xml(bad.as_bytes(), src()).unwrap();
        assert!(ps[0].warnings.iter().any(|w| w.contains("not numbers")));
        let short = CUBE3.replace("0.25 0.75", "0.25");
        let ps = read_xml(short.as_bytes(), src()).unwrap();
        assert!(ps[0]
            .warnings
            .iter()
            .any(|w| w.contains("1 value(s) for 2")));
        let anchor = r#"<cube version="4.4"><program/><system/></cube>"#;
        assert!(read_xml(anchor.as_bytes(), src())
            .unwrap_err()
            .contains(".cubex"));
    }
}
