//! The streaming path of the Chrome reader: one event object read through the
//! streaming `JsonReader`, for the elements the fast path (`scan`) leaves to it —
//! repairs, odd forms, sampled-profile events — and turned into the fast path's `Ev`,
//! so both paths feed the same event handling.

use std::io::Read;

use super::scan::{Ev, Num, Part};
use super::{int_of, Parser};
use crate::json::{parse_decimal_scaled, JsonError, JsonReader, Kind};
use crate::model::events::EventKind;

/// A reusable text slot: events reuse their buffers instead of allocating per field.
#[derive(Default)]
pub(super) struct Field {
    buf: Vec<u8>,
    set: bool,
}

impl Field {
    pub(super) fn get(&self) -> Option<&[u8]> {
        self.set.then_some(&self.buf[..])
    }

    pub(super) fn clear(&mut self) {
        self.set = false;
    }
}

#[derive(Default)]
pub(super) struct RawEvent {
    pub(super) name: Vec<u8>,
    pub(super) cat: Vec<u8>,
    pub(super) ph: u8,
    pub(super) ts: Field,
    pub(super) dur: Field,
    pub(super) pid: Vec<u8>,
    pub(super) tid: Vec<u8>,
    pub(super) id: Field,
    pub(super) scope: u8,
    pub(super) bp_e: bool,
    pub(super) args: Vec<u8>,
    pub(super) has_args: bool,
    // Selected args, extracted while streaming.
    pub(super) correlation: Field,
    pub(super) external_id: Field,
    pub(super) record_function_id: Field,
    pub(super) device: Field,
    pub(super) stream: Field,
}

impl RawEvent {
    pub(super) fn clear(&mut self) {
        self.name.clear();
        self.cat.clear();
        self.ph = 0;
        self.ts.clear();
        self.dur.clear();
        self.pid.clear();
        self.tid.clear();
        self.id.clear();
        self.scope = 0;
        self.bp_e = false;
        self.args.clear();
        self.has_args = false;
        self.correlation.clear();
        self.external_id.clear();
        self.record_function_id.clear();
        self.device.clear();
        self.stream.clear();
    }
}
impl Parser {
    /// The streaming reader's event in the fast path's form.
    pub(super) fn raw_to_ev(&self, part: &mut Part) -> Ev {
        let raw = &self.raw;
        let s = &mut part.strings;
        let mut ev = Ev::new(0);
        ev.ph = raw.ph;
        ev.has_args = raw.has_args;
        ev.name = s.intern_bytes(&raw.name);
        ev.cat = s.intern_bytes(&raw.cat);
        ev.pid = s.intern_bytes(&raw.pid);
        ev.tid = s.intern_bytes(&raw.tid);
        ev.put(Num::Ts, Self::time_of(&raw.ts));
        ev.put(Num::Dur, Self::time_of(&raw.dur));
        ev.put(Num::Id, raw.id.get().and_then(int_of));
        ev.put(Num::Correlation, raw.correlation.get().and_then(int_of));
        ev.put(Num::ExternalId, raw.external_id.get().and_then(int_of));
        ev.put(
            Num::RecordFunctionId,
            raw.record_function_id.get().and_then(int_of),
        );
        ev.put(Num::Device, raw.device.get().and_then(int_of));
        ev.put(Num::Stream, raw.stream.get().and_then(int_of));
        if raw.has_args || !raw.args.is_empty() {
            part.keep_args_of(&mut ev, &raw.args);
        }
        ev
    }

    pub(super) fn read_event<R: Read>(&mut self, r: &mut JsonReader<R>) -> Result<(), JsonError> {
        let ev = &mut self.raw;
        ev.clear();
        r.begin_object()?;
        let mut first = true;
        while r.next_key(first, &mut self.key)? {
            first = false;
            match &self.key[..] {
                b"name" => {
                    r.read_scalar(&mut ev.name)?;
                }
                b"cat" => {
                    r.read_scalar(&mut ev.cat)?;
                }
                b"ph" => {
                    r.read_scalar(&mut self.val)?;
                    ev.ph = self.val.first().copied().unwrap_or(0);
                }
                b"ts" => {
                    r.read_scalar(&mut ev.ts.buf)?;
                    ev.ts.set = true;
                }
                b"dur" => {
                    r.read_scalar(&mut ev.dur.buf)?;
                    ev.dur.set = true;
                }
                b"pid" => {
                    r.read_scalar(&mut ev.pid)?;
                }
                b"tid" => {
                    r.read_scalar(&mut ev.tid)?;
                }
                b"id" => {
                    r.read_scalar(&mut ev.id.buf)?;
                    ev.id.set = true;
                }
                b"s" => {
                    r.read_scalar(&mut self.val)?;
                    ev.scope = self.val.first().copied().unwrap_or(0);
                }
                b"bp" => {
                    r.read_scalar(&mut self.val)?;
                    ev.bp_e = self.val == b"e";
                }
                b"args" if r.peek_kind()? == Kind::Object => {
                    ev.has_args = true;
                    // The raw text is kept only for GPU rows, metadata and counters; when
                    // ph and cat came first (Kineto writes args last) CPU rows skip the copy.
                    let keep_text = ev.ph == 0
                        || matches!(ev.ph, b'M' | b'C' | b'P')
                        || ev.cat.is_empty()
                        || std::str::from_utf8(&ev.cat)
                            .ok()
                            .and_then(EventKind::from_category)
                            .is_none_or(|k| k.on_gpu_lane() || k == EventKind::Sync);
                    if keep_text {
                        r.start_capture(std::mem::take(&mut ev.args));
                        let res = read_args(r, ev, &mut self.val);
                        ev.args = r.end_capture();
                        res?;
                    } else {
                        read_args(r, ev, &mut self.val)?;
                    }
                }
                _ => r.skip_value()?,
            }
        }
        Ok(())
    }

    fn time_of(text: &Field) -> Option<i64> {
        text.get().and_then(|t| parse_decimal_scaled(t, 3))
    }
}

fn read_args<R: Read>(
    r: &mut JsonReader<R>,
    ev: &mut RawEvent,
    key: &mut Vec<u8>,
) -> Result<(), JsonError> {
    r.begin_object()?;
    let mut first = true;
    while r.next_key(first, key)? {
        first = false;
        let slot = match &key[..] {
            b"correlation" => &mut ev.correlation,
            b"External id" | b"external id" => &mut ev.external_id,
            // The profiler's record-function id: what an execution trace's `rf_id` names.
            b"Record function id" => &mut ev.record_function_id,
            b"device" => &mut ev.device,
            b"stream" => &mut ev.stream,
            _ => {
                r.skip_value()?;
                continue;
            }
        };
        slot.set = matches!(r.read_scalar(&mut slot.buf)?, Kind::Num | Kind::Str);
    }
    Ok(())
}
