//! Finds or makes the node for an event under a parent, keyed by frame slots so the
//! hot loop neither hashes nor allocates text; frames share one string per name.
//!
//! Most parents have a handful of children (a runtime call and its kernel, an op and
//! the ops it calls), so a child is found by walking the parent's child list and
//! comparing ids: no hashing, and no map entry per node. Parents with many children
//! (lane roots, loops that call many different ops) and nodes made elsewhere (roots,
//! group nodes) go through a map instead, so a wide parent costs one lookup too.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::cct::{FrameId, Grow};
use crate::model::events::EventTable;
use crate::model::intern::FxBuild;
use crate::model::{Attrs, Frame};

/// The key of a node not made here (roots, group nodes): never equal to a real key, a
/// frame slot id (below 2^31).
const OTHER: u32 = u32::MAX;

/// No block (a name not seen yet).
const END: u32 = u32::MAX;

/// Cats that get a place in every name's block of frames; a name's frames with later
/// cats go to the map. Traces have a few categories (Kineto's 7, the Perfetto SDK
/// benchmark's 7), and most names come with one of them.
const CATS: usize = 8;

/// A cat without a place (not seen yet, or past CATS).
const NO_PLACE: u8 = u8::MAX;

/// Two ids as one map key.
#[inline]
fn pair(a: u32, b: u32) -> u64 {
    u64::from(a) << 32 | u64::from(b)
}

/// Children made under one parent before its children move to the map: a walk of up to
/// this many short links is cheaper than hashing, and a longer one is not.
const WIDE: u8 = 8;

pub struct NodeIndex {
    /// A node's key is the plain frame slot of its (name, cat), one slot per pair: by
    /// its frame slot, the plain one itself or the one a GPU node's attrs frame was
    /// made from (`set_attrs`); OTHER for slots made elsewhere. Frames are far fewer
    /// than nodes: no array per node.
    key_of_slot: Vec<u32>,
    /// Children made here under each node, counted up to WIDE; WIDE for a node made
    /// elsewhere (its children are in the map), so one load tells the two paths apart.
    kids: Vec<u8>,
    /// Whether a node's frame was replaced by one with attrs (`set_attrs`): until then
    /// a node made here has its key as its frame slot, compared without `key_of_slot`.
    attrs_set: bool,
    /// (parent, key) -> child, for parents at WIDE children and parents not made here.
    /// Keyed by both in one word (`pair`): one hashing step, not eight.
    wide: HashMap<u64, u32, FxBuild>,
    text: Vec<Option<Arc<str>>>,
    function: Arc<str>,
    /// Frames repeat across nodes (every `cudaLaunchKernel`, a kernel under each of its
    /// launches): one shared slot per (name, cat). Each cat seen gets a place (up to
    /// CATS), each name a block of CATS frames (`block_of`, by name id, into
    /// `blocks`): a frame is two loads away, no hashing and no list walk per event
    /// (a list of a name's cats, walked per event, missed the cache at every link).
    /// The frames of cats past CATS go to the map.
    place_of_cat: Vec<u8>,
    places: usize,
    block_of: Vec<u32>,
    blocks: Vec<Option<FrameId>>,
    plain: HashMap<u64, FrameId, FxBuild>,
    /// One shared slot per (key, attrs list) of GPU activity nodes.
    with_attrs: HashMap<u64, FrameId, FxBuild>,
}

impl NodeIndex {
    /// `nodes`: about how many nodes the tree will have (room is made for them).
    pub fn new(ev: &EventTable, nodes: usize) -> NodeIndex {
        NodeIndex {
            key_of_slot: Vec::new(),
            kids: Vec::with_capacity(nodes),
            attrs_set: false,
            wide: HashMap::default(),
            text: vec![None; ev.strings.len()],
            function: Arc::from("function"),
            place_of_cat: vec![NO_PLACE; ev.strings.len()],
            places: 0,
            block_of: vec![END; ev.strings.len()],
            blocks: Vec::new(),
            plain: HashMap::default(),
            with_attrs: HashMap::default(),
        }
    }

    fn text(&mut self, ev: &EventTable, id: u32) -> Arc<str> {
        self.text[id as usize]
            .get_or_insert_with(|| Arc::from(ev.strings.resolve(id)))
            .clone()
    }

    /// The shared frame of (name, cat): found in the name's block inline, else (a cat
    /// past CATS, a new pair) out of line.
    #[inline(always)]
    fn plain_frame(&mut self, cct: &mut Grow, ev: &EventTable, name: u32, cat: u32) -> FrameId {
        let place = self.place_of_cat[cat as usize];
        let block = self.block_of[name as usize];
        if place != NO_PLACE && block != END {
            if let Some(f) = self.blocks[block as usize + usize::from(place)] {
                return f;
            }
        }
        self.other_frame(cct, ev, name, cat)
    }

    /// `plain_frame` past the name's block: the map, or a new frame.
    #[inline(never)]
    fn other_frame(&mut self, cct: &mut Grow, ev: &EventTable, name: u32, cat: u32) -> FrameId {
        let mut place = self.place_of_cat[cat as usize];
        if place == NO_PLACE && self.places < CATS {
            place = self.places as u8;
            self.place_of_cat[cat as usize] = place;
            self.places += 1;
        }
        if place == NO_PLACE {
            if let Some(&f) = self.plain.get(&pair(name, cat)) {
                return f;
            }
        }
        let name_text = self.text(ev, name);
        let kind = if ev.strings.resolve(cat).is_empty() {
            self.function.clone()
        } else {
            self.text(ev, cat)
        };
        let f = cct.shared_frame(Frame {
            name: name_text,
            kind,
            attrs: Attrs::new(),
        });
        self.set_key(f, f.id());
        if place == NO_PLACE {
            self.plain.insert(pair(name, cat), f);
        } else {
            let mut block = self.block_of[name as usize];
            if block == END {
                block = self.blocks.len() as u32;
                self.block_of[name as usize] = block;
                self.blocks.resize(self.blocks.len() + CATS, None);
            }
            self.blocks[block as usize + usize::from(place)] = Some(f);
        }
        f
    }

    /// A node's key (OTHER for nodes made elsewhere).
    fn key(&self, cct: &Grow, node: u32) -> u32 {
        let slot = cct.frame_slot(node);
        self.key_of_slot
            .get(slot as usize)
            .copied()
            .unwrap_or(OTHER)
    }

    fn set_key(&mut self, frame: FrameId, key: u32) {
        let at = frame.id() as usize;
        if self.key_of_slot.len() <= at {
            self.key_of_slot.resize(at + 1, OTHER);
        }
        self.key_of_slot[at] = key;
    }

    /// The child of `parent` for row `i`, found inline (the sweep calls this for
    /// every row), made out of line (`add_child`).
    #[inline(always)]
    pub fn child(&mut self, cct: &mut Grow, parent: u32, ev: &EventTable, i: usize) -> u32 {
        let (name, cat) = (ev.name[i], ev.cat[i]);
        // Made first when the pair is new, where no child can have it and the node is
        // made next anyway: frame slots come in the same order.
        let frame = self.plain_frame(cct, ev, name, cat);
        let key = frame.id();
        let p = parent as usize;
        // A parent made here has only children made here: nodes made elsewhere hang
        // under roots and group nodes alone.
        let narrow = self.kids.get(p).is_some_and(|&k| k < WIDE);
        if narrow {
            if self.attrs_set {
                for c in cct.children(parent) {
                    if self.key(cct, c) == key {
                        return c;
                    }
                }
            } else {
                for c in cct.children(parent) {
                    if cct.frame_slot(c) == key {
                        return c;
                    }
                }
            }
        } else if let Some(&c) = self.wide.get(&pair(parent, key)) {
            return c;
        }
        self.add_child(cct, parent, frame, narrow)
    }

    /// A new child of `parent` with `frame`; a narrow parent's children move to the
    /// map when it reaches WIDE.
    #[inline(never)]
    fn add_child(&mut self, cct: &mut Grow, parent: u32, frame: FrameId, narrow: bool) -> u32 {
        let (p, key) = (parent as usize, frame.id());
        let n = cct.add_shared(Some(parent), frame);
        // Nodes made elsewhere since the last one made here: their children are mapped.
        self.kids.resize(n as usize, WIDE);
        self.kids.push(0);
        if narrow {
            self.kids[p] += 1;
            if self.kids[p] == WIDE {
                for c in cct.children(parent) {
                    let k = self.key(cct, c);
                    self.wide.insert(pair(parent, k), c);
                }
            }
        } else {
            self.wide.insert(pair(parent, key), n);
        }
        n
    }

    /// Gives a new GPU activity node (its frame is the plain one of its name and cat)
    /// the shared frame with its launch configuration: with this list it is the same
    /// for every kernel launched with this configuration.
    pub fn set_attrs(&mut self, cct: &mut Grow, node: u32, list: u32, attrs: &Attrs) {
        self.attrs_set = true;
        let plain = self.key(cct, node);
        let key = pair(plain, list);
        let f = match self.with_attrs.get(&key) {
            Some(&f) => f,
            None => {
                let mut frame = cct.frame(node).clone();
                frame.attrs = attrs.clone();
                let f = cct.shared_frame(frame);
                self.with_attrs.insert(key, f);
                self.set_key(f, plain);
                f
            }
        };
        cct.set_frame(node, f);
    }
}
