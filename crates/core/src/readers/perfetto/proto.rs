//! The cold messages of Perfetto's `protos/perfetto/trace/` that grove reads, declared by
//! hand with prost's derive as the pprof and XPlane readers do: no build script, no
//! protoc. Field numbers as in perfetto's `trace_packet.proto`, `track_descriptor.proto`,
//! `interned_data.proto` and `clock_snapshot.proto`. The hot messages (`TracePacket`,
//! `TrackEvent`, `DebugAnnotation`) are walked by hand (`wire.rs`).

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "6")]
    pub chrome_process: Option<ChromeProcessDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    #[prost(string, optional, tag = "10")]
    pub static_name: Option<String>,
    #[prost(string, optional, tag = "13")]
    pub atrace_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, repeated, tag = "2")]
    pub cmdline: Vec<String>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
    #[prost(string, repeated, tag = "8")]
    pub process_labels: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
    /// The legacy time base of `TrackEvent.timestamp_delta_us` (before track_uuid).
    #[prost(int64, optional, tag = "6")]
    pub reference_timestamp_us: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ChromeProcessDescriptor {
    /// `ChromeProcessDescriptor.ProcessType`: 1 browser, 2 renderer, 3 utility, 4 zygote,
    /// 5 sandbox helper, 6 GPU, 7 PPAPI plugin, 8 PPAPI broker.
    #[prost(int32, optional, tag = "1")]
    pub process_type: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(string, repeated, tag = "2")]
    pub categories: Vec<String>,
    #[prost(int64, optional, tag = "4")]
    pub unit_multiplier: Option<i64>,
    #[prost(bool, optional, tag = "5")]
    pub is_incremental: Option<bool>,
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<InternedName>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<InternedName>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<InternedName>,
}

/// `EventName`, `EventCategory` and `DebugAnnotationName` share this shape.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedName {
    #[prost(uint64, tag = "1")]
    pub iid: u64,
    #[prost(string, tag = "2")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    #[prost(uint32, optional, tag = "2")]
    pub primary_trace_clock: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    #[prost(uint32, tag = "1")]
    pub clock_id: u32,
    #[prost(uint64, tag = "2")]
    pub timestamp: u64,
    #[prost(bool, tag = "3")]
    pub is_incremental: bool,
    #[prost(uint64, tag = "4")]
    pub unit_multiplier_ns: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(uint64, repeated, tag = "31")]
    pub extra_counter_track_uuids: Vec<u64>,
    #[prost(uint64, repeated, tag = "45")]
    pub extra_double_counter_track_uuids: Vec<u64>,
}

/// `TrackEvent.LegacyEvent`: the phases of the JSON format that Chrome still writes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LegacyEvent {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(int32, optional, tag = "2")]
    pub phase: Option<i32>,
    #[prost(int64, optional, tag = "3")]
    pub duration_us: Option<i64>,
    #[prost(uint64, optional, tag = "6")]
    pub unscoped_id: Option<u64>,
    #[prost(uint64, optional, tag = "10")]
    pub local_id: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub global_id: Option<u64>,
    #[prost(int32, optional, tag = "18")]
    pub pid_override: Option<i32>,
    #[prost(int32, optional, tag = "19")]
    pub tid_override: Option<i32>,
}
