//! The few PlaidML messages the reader decodes, declared by hand with prost's derive
//! (no build script, no protoc); field numbers as in PlaidML's `.proto` files
//! (`base/eventing/file/eventlog.proto`, `base/context/context.proto`,
//! `tile/hal/opencl/opencl.proto`, `tile/lang/lang.proto`). Fields grove does not show
//! are left out: prost skips unknown fields.

use prost::Message;

/// `eventing.file.proto.Record`: one length-prefixed record of the log.
#[derive(Clone, PartialEq, Message)]
pub struct Record {
    #[prost(message, optional, tag = "1")]
    pub magic: Option<Magic>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<Event>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Magic {
    #[prost(uint64, tag = "1")]
    pub value: u64,
}

/// 'EvtL', little-endian: `Magic.Value.Eventlog`.
pub const EVENTLOG_MAGIC: u64 = 0x4C74_7645;

#[derive(Clone, PartialEq, Message)]
pub struct ActivityId {
    #[prost(uint64, tag = "1")]
    pub index: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub stream_uuid: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ClockId {
    #[prost(uint64, tag = "1")]
    pub index: u64,
}

/// `google.protobuf.Duration`.
#[derive(Clone, PartialEq, Message)]
pub struct Duration {
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

impl Duration {
    pub fn ns(&self) -> i64 {
        self.seconds
            .saturating_mul(1_000_000_000)
            .saturating_add(self.nanos as i64)
    }
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, Message)]
pub struct Any {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `context.proto.Event`.
#[derive(Clone, PartialEq, Message)]
pub struct Event {
    #[prost(message, optional, tag = "1")]
    pub parent_id: Option<ActivityId>,
    #[prost(message, optional, tag = "2")]
    pub activity_id: Option<ActivityId>,
    #[prost(string, tag = "3")]
    pub verb: String,
    #[prost(message, optional, tag = "4")]
    pub clock_id: Option<ClockId>,
    #[prost(message, optional, tag = "5")]
    pub start_time: Option<Duration>,
    #[prost(message, optional, tag = "6")]
    pub end_time: Option<Duration>,
    #[prost(message, repeated, tag = "7")]
    pub metadata: Vec<Any>,
}

/// `hal.opencl.proto.RunInfo`: which kernel a run executes.
#[derive(Clone, PartialEq, Message)]
pub struct RunInfo {
    #[prost(message, optional, tag = "1")]
    pub kernel_id: Option<ActivityId>,
}

/// `hal.opencl.proto.KernelInfo`: on the activity that built the kernel.
#[derive(Clone, PartialEq, Message)]
pub struct KernelInfo {
    #[prost(string, tag = "1")]
    pub kname: String,
    #[prost(message, optional, tag = "3")]
    pub kinfo: Option<LangKernelInfo>,
}

/// `lang.proto.KernelInfo`: the kernel's kind, its ops, flops and bytes.
#[derive(Clone, PartialEq, Message)]
pub struct LangKernelInfo {
    #[prost(message, optional, tag = "1")]
    pub element: Option<ContractionInfo>,
    #[prost(message, optional, tag = "2")]
    pub contraction: Option<ContractionInfo>,
    #[prost(message, optional, tag = "3")]
    pub zero: Option<ZeroInfo>,
    #[prost(message, optional, tag = "4")]
    pub special: Option<SpecialInfo>,
    #[prost(int64, tag = "101")]
    pub flops: i64,
    #[prost(int64, tag = "102")]
    pub bytes: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ContractionInfo {
    #[prost(string, repeated, tag = "1")]
    pub ops: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ZeroInfo {
    #[prost(bool, tag = "1")]
    pub copy: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct SpecialInfo {
    #[prost(string, tag = "1")]
    pub r#fn: String,
}

impl LangKernelInfo {
    /// The kind as PlaidML's kernel_times report names it, and the op text.
    pub fn kind_and_ops(&self) -> (String, Vec<String>) {
        if let Some(c) = &self.contraction {
            ("contraction".into(), c.ops.clone())
        } else if let Some(e) = &self.element {
            ("element".into(), e.ops.clone())
        } else if let Some(z) = &self.zero {
            (if z.copy { "copy" } else { "zero" }.into(), Vec::new())
        } else if let Some(s) = &self.special {
            (s.r#fn.clone(), Vec::new())
        } else {
            ("unknown".into(), Vec::new())
        }
    }
}

/// Decodes a metadatum when its type URL names `name` (`type.vertex.ai/<pkg>.<name>`).
pub fn unpack<M: Message + Default>(any: &Any, name: &str) -> Option<M> {
    let last = any.type_url.rsplit(['/', '.']).next()?;
    if last != name {
        return None;
    }
    M::decode(&any.value[..]).ok()
}
