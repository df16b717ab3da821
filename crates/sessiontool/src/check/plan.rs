//! The fixes fsck found for a JSONL file, as edits to records: what `repair` applies in its
//! second pass over the file. Records not named here are copied byte for byte.

use std::collections::BTreeMap;

use super::ident::QuickMap;
use super::scan::Link;

#[derive(Debug, Default)]
pub struct Plan {
    /// New parent for every record with this id (the key), spliced into the record.
    pub relink: QuickMap<u32, Link>,
    /// Records to add right after the record with this index, in order.
    pub inserts: BTreeMap<u32, Vec<Insert>>,
    /// From this record on, give each record whose sequence number is not above the one
    /// before the next number up.
    pub renumber_from: Option<u32>,
}

/// A synthetic tool result.
#[derive(Debug, Clone)]
pub struct Insert {
    /// Index of the record that made the call.
    pub call_record: u32,
    pub call_id: u32,
    pub new_id: u32,
    /// The record it hangs under (`None` for formats without parent links).
    pub parent: Option<u32>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.relink.is_empty() && self.inserts.is_empty() && self.renumber_from.is_none()
    }
}
