//! The XSpace messages of tensorflow/tsl's `tsl/profiler/protobuf/xplane.proto`
//! (package `tensorflow.profiler`), declared by hand with prost's derive as the pprof
//! reader does: no build script, no protoc. Field numbers as in xplane.proto; XLine's
//! 5..8 are reserved there.

use std::collections::HashMap;

#[derive(Clone, PartialEq, prost::Message)]
pub struct XSpace {
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XPlane {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    #[prost(map = "int64, message", tag = "4")]
    pub event_metadata: HashMap<i64, XEventMetadata>,
    #[prost(map = "int64, message", tag = "5")]
    pub stat_metadata: HashMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XLine {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    #[prost(string, tag = "11")]
    pub display_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XEvent {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// `oneof data { offset_ps = 2; num_occurrences = 5; }`: an aggregated event has
    /// the count and no time.
    #[prost(int64, optional, tag = "2")]
    pub offset_ps: Option<i64>,
    #[prost(int64, optional, tag = "5")]
    pub num_occurrences: Option<i64>,
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XStat {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "Value", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<Value>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "2")]
    Double(f64),
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(string, tag = "5")]
    Str(String),
    #[prost(bytes, tag = "6")]
    Bytes(Vec<u8>),
    /// The id of an XStatMetadata whose name is the value (a shared string).
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XEventMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(bytes, tag = "3")]
    pub metadata: Vec<u8>,
    #[prost(string, tag = "4")]
    pub display_name: String,
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct XStatMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub description: String,
}
