//! A JSON value as the text it was written as, checked once and then read lazily: an object's
//! entries, an array's items, a string decoded, a number as its digits. Nothing is copied that
//! need not be, nothing unknown is ever re-serialised (a field sessiontool does not understand
//! is written back as these very bytes), and every lookup follows `JSON.parse`: of two entries
//! with the same key, the last one's value counts.

use std::borrow::Cow;

use super::scan::{self, NOTED_DEPTH, SyntaxError, skip_valid, skip_ws};
use super::text::{self, Text};

/// One valid JSON value, white space trimmed, borrowed from the text it came from.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Raw<'a>(&'a str);

/// What kind of value a [`Raw`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl std::fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Raw({})", self.0)
    }
}

impl<'a> Raw<'a> {
    /// Checks that `text` is one JSON value (white space around it allowed).
    pub fn parse(text: &'a str) -> Result<Raw<'a>, SyntaxError> {
        scan::validate(text.as_bytes())?;
        Ok(Raw(
            text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
        ))
    }

    /// Text already known to be one JSON value with no white space around it: a record the
    /// records layer gave (it checked the grammar), not checked again. Reading anything else
    /// through it is a bug (debug builds check).
    pub fn valid(text: &'a str) -> Raw<'a> {
        debug_assert!(
            scan::validate(text.as_bytes()).is_ok() && text.trim_matches(scan::is_ws_char) == text,
            "not one JSON value: {text:?}"
        );
        Raw(text)
    }

    /// The value as it is written.
    pub fn text(self) -> &'a str {
        self.0
    }

    pub fn kind(self) -> Kind {
        match self.0.as_bytes()[0] {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b't' | b'f' => Kind::Bool,
            b'n' => Kind::Null,
            _ => Kind::Number,
        }
    }

    pub fn is_null(self) -> bool {
        self.0 == "null"
    }

    pub fn as_bool(self) -> Option<bool> {
        match self.0 {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// A string, decoded (borrowed when it holds no escape). A lone surrogate escape, which
    /// `JSON.parse` keeps, becomes U+FFFD and the text is marked lossy; [`Raw::text`] still
    /// has it as written.
    pub fn as_str(self) -> Option<Text<'a>> {
        (self.kind() == Kind::String).then(|| text::decode(self.0))
    }

    /// [`Raw::as_str`]'s value alone (borrowed when the string holds no escape): for a reader
    /// that copies the text only where it keeps it.
    pub fn str_value(self) -> Option<Cow<'a, str>> {
        self.as_str().map(|t| t.value)
    }

    /// A number as written (`1e400`, `-0` and 30-digit integers stay what they are).
    pub fn as_number(self) -> Option<&'a str> {
        (self.kind() == Kind::Number).then_some(self.0)
    }

    /// A number that is a whole number from 0 to 2^64-1, written as digits only.
    pub fn as_u64(self) -> Option<u64> {
        self.as_number()?.parse().ok()
    }

    /// A number as the nearest f64 (what JavaScript holds), when it is finite.
    pub fn as_f64(self) -> Option<f64> {
        self.as_number()?
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
    }

    /// An object's entries in order, duplicates included.
    pub fn entries(self) -> Option<Entries<'a>> {
        (self.kind() == Kind::Object).then_some(Entries {
            text: self.0,
            at: 1,
        })
    }

    /// The value of `key` in an object: the last entry with that key, as `JSON.parse` keeps.
    pub fn get(self, key: &str) -> Option<Raw<'a>> {
        self.entries()?
            .filter(|(k, _)| k.is(key))
            .last()
            .map(|(_, v)| v)
    }

    /// The values of several keys of an object in one pass, each the last entry with that key
    /// (all `None` when this is not an object).
    pub fn pick<const N: usize>(self, keys: [&str; N]) -> [Option<Raw<'a>>; N] {
        let mut found = [None; N];
        if let Some(entries) = self.entries() {
            for (k, v) in entries {
                if let Some(i) = k.position_in(&keys) {
                    found[i] = Some(v);
                }
            }
        }
        found
    }

    /// An array's items in order.
    pub fn items(self) -> Option<Items<'a>> {
        (self.kind() == Kind::Array).then_some(Items {
            text: self.0,
            at: 1,
        })
    }

    /// [`pick`](Self::pick) of each of an array's items, in order (`None` for an item that
    /// is not an object; nothing when this is not an array): each item read once, where
    /// taking the items and then picking from each would skip every object twice.
    pub fn pick_in_items<'k, const N: usize>(self, keys: [&'k str; N]) -> PickedItems<'a, 'k, N> {
        PickedItems {
            text: self.0,
            // Not an array: at its end at once.
            at: if self.kind() == Kind::Array {
                1
            } else {
                self.0.len()
            },
            keys,
        }
    }
}

/// What [`Raw::pick_in_items`] gives, object by object.
pub struct PickedItems<'a, 'k, const N: usize> {
    text: &'a str,
    at: usize,
    keys: [&'k str; N],
}

impl<'a, const N: usize> Iterator for PickedItems<'a, '_, N> {
    type Item = Option<[Option<Raw<'a>>; N]>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.text.as_bytes();
        {
            let i = skip_ws(b, self.at);
            if i >= b.len() || b[i] == b']' {
                self.at = b.len();
                return None;
            }
            let start = if b[i] == b',' { skip_ws(b, i + 1) } else { i };
            if b[start] != b'{' {
                self.at = skip_valid(b, start);
                return Some(None);
            }
            let mut entries = Entries {
                text: self.text,
                at: start + 1,
            };
            let mut found = [None; N];
            for (k, v) in &mut entries {
                if let Some(i) = k.position_in(&self.keys) {
                    found[i] = Some(v);
                }
            }
            // After the last entry, its object's `}`.
            self.at = skip_ws(b, entries.at) + 1;
            Some(Some(found))
        }
    }
}

/// An object key as written (quotes included).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Key<'a>(&'a str);

impl std::fmt::Debug for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.0)
    }
}

impl<'a> Key<'a> {
    /// Where this key is among `names`.
    fn position_in(self, names: &[&str]) -> Option<usize> {
        // Most keys hold no escape: compared as written first; a key that matches none is
        // looked at for an escape (short keys byte by byte: quicker than a search's set-up),
        // and one that matches is its name only without one.
        let inner = &self.0.as_bytes()[1..self.0.len() - 1];
        let escaped = || has_backslash(inner);
        // Length and first byte before the whole comparison: most names differ in one.
        let written = |name: &&str| {
            let name = name.as_bytes();
            name.len() == inner.len() && name.first() == inner.first() && name == inner
        };
        match names.iter().position(written) {
            Some(i) if !escaped() => Some(i),
            None if !escaped() => None,
            _ => names.iter().position(|name| self.is(name)),
        }
    }

    /// The key as written, quotes included.
    pub fn text(self) -> &'a str {
        self.0
    }

    /// The key decoded.
    pub fn name(self) -> Text<'a> {
        text::decode(self.0)
    }

    /// Whether the key is `name` (compared without decoding when it holds no escape).
    pub fn is(self, name: &str) -> bool {
        let inner = &self.0[1..self.0.len() - 1];
        if !inner.contains('\\') {
            return inner == name;
        }
        let decoded = self.name();
        !decoded.lossy && decoded.value == name
    }

    pub fn to_cow(self) -> Cow<'a, str> {
        self.name().value
    }
}

/// Where the values of an object's text are, down to [`NOTED_DEPTH`] open containers, noted by
/// the check that read it ([`super::facts::checked_outlined`]): each key and each array item
/// in text order, with where its value ends and where the slots inside its value end. Picking
/// from it skips no value again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outline {
    slots: Vec<Slot>,
    /// The slot whose value is open at each depth.
    open: [u32; NOTED_DEPTH],
    /// More than [`MAX_SLOTS`] were to be noted: nothing is read from the outline, every
    /// value from its text.
    full: bool,
}

/// Slots an outline holds at most (2.5 MB): a record's keys and the items of its arrays are
/// far fewer, but a hostile record of one array of ten million numbers would otherwise make
/// one slot each (memory is bounded by the number of records, not by what one holds).
const MAX_SLOTS: usize = 1 << 16;

/// A key and its value, or an array item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    /// An entry's opening key quote; an item's first byte.
    start: usize,
    /// One past an entry's closing key quote (`start` for an item).
    key_end: usize,
    /// One past the value's last byte.
    end: usize,
    /// The depth of the container the slot is in (1: the outermost value).
    depth: u8,
    item: bool,
    /// The slot after the last one inside this one's value.
    after: u32,
}

impl Outline {
    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.full = false;
    }

    fn open(&mut self, depth: usize, start: usize, key_end: usize, item: bool) {
        if self.full || self.slots.len() == MAX_SLOTS {
            self.full = true;
            return;
        }
        self.open[depth - 1] = self.slots.len() as u32;
        self.slots.push(Slot {
            start,
            key_end,
            end: 0,
            depth: depth as u8,
            item,
            after: 0,
        });
    }

    pub(crate) fn key(&mut self, depth: usize, start: usize, end: usize) {
        self.open(depth, start, end, false);
    }

    pub(crate) fn item(&mut self, depth: usize, start: usize) {
        self.open(depth, start, start, true);
    }

    pub(crate) fn value_end(&mut self, depth: usize, end: usize) {
        if self.full {
            return;
        }
        let after = self.slots.len() as u32;
        let slot = &mut self.slots[self.open[depth - 1] as usize];
        slot.end = end;
        slot.after = after;
    }

    /// The slots of the outermost value's (`None`), or of slot `k`'s value when its slots are
    /// noted (`None` when not: it is as deep as notes go).
    fn children(&self, k: Option<usize>) -> Option<Chain<'_>> {
        if self.full {
            return None;
        }
        let (from, to) = match k {
            None => (0, self.slots.len()),
            Some(k) if usize::from(self.slots[k].depth) < NOTED_DEPTH => {
                (k + 1, self.slots[k].after as usize)
            }
            Some(_) => return None,
        };
        Some(Chain {
            slots: &self.slots,
            at: from,
            to,
        })
    }

    /// Where slot `k`'s value starts in `b`.
    fn value_start(&self, b: &[u8], k: usize) -> usize {
        let s = &self.slots[k];
        match s.item {
            true => s.start,
            false => skip_ws(b, skip_ws(b, s.key_end) + 1),
        }
    }

    /// The slot whose value is `value`, a value of `object` (the text this outline was noted
    /// from); `None` when it is the outermost value, not in it, or deeper than notes go.
    fn slot_of(&self, object: Raw, value: Raw) -> Result<Option<usize>, ()> {
        let at = (value.0.as_ptr() as usize).wrapping_sub(object.0.as_ptr() as usize);
        let end = at.wrapping_add(value.0.len());
        if at == 0 && end == object.0.len() {
            return Ok(None);
        }
        let b = object.0.as_bytes();
        let mut within = None;
        loop {
            let mut siblings = self.children(within).ok_or(())?;
            let k = siblings.find(|&k| self.slots[k].start <= at && at < self.slots[k].end);
            let k = k.ok_or(())?;
            if self.slots[k].end == end && self.value_start(b, k) == at {
                return Ok(Some(k));
            }
            within = Some(k);
        }
    }

    /// The slots of `value`'s entries or items, a value in `object` (the text this outline was
    /// noted from), when they are noted.
    fn slots_within(&self, object: Raw, value: Raw) -> Option<Chain<'_>> {
        self.children(self.slot_of(object, value).ok()?)
    }

    /// `keys` picked among the entries `slots` of an object of `text`.
    fn pick_slots<'a, const N: usize>(
        &self,
        text: &'a str,
        slots: Chain,
        keys: [&str; N],
    ) -> [Option<Raw<'a>>; N] {
        let entries = slots.map(|k| &self.slots[k]);
        pick_from(text, entries.map(|s| (s.start, s.key_end, s.end)), keys)
    }

    /// [`Raw::pick`] of `object`, the text this outline was noted from.
    pub fn pick<'a, const N: usize>(
        &self,
        object: Raw<'a>,
        keys: [&str; N],
    ) -> [Option<Raw<'a>>; N] {
        self.pick_within(object, object, keys)
    }

    /// [`Raw::pick`] of `value`, a value in `object` (the text this outline was noted from);
    /// read again when it is deeper than notes go.
    pub fn pick_within<'a, const N: usize>(
        &self,
        object: Raw<'a>,
        value: Raw<'a>,
        keys: [&str; N],
    ) -> [Option<Raw<'a>>; N] {
        if value.kind() != Kind::Object {
            return [None; N];
        }
        let slots = self.slots_within(object, value);
        let Some(slots) = slots else {
            return value.pick(keys);
        };
        self.pick_slots(object.0, slots, keys)
    }

    /// Each of [`Raw::entries`] of `value`, an object in `object` (the text this outline was
    /// noted from), in order: from the outline as far as it goes.
    pub fn each_entry_within<'a>(
        &self,
        object: Raw<'a>,
        value: Raw<'a>,
        f: &mut dyn FnMut(Key<'a>, Raw<'a>),
    ) {
        if value.kind() != Kind::Object {
            return;
        }
        let Some(slots) = self.slots_within(object, value) else {
            return value
                .entries()
                .into_iter()
                .flatten()
                .for_each(|(k, v)| f(k, v));
        };
        let (text, b) = (object.0, object.0.as_bytes());
        for k in slots {
            let s = &self.slots[k];
            let start = self.value_start(b, k);
            f(Key(&text[s.start..s.key_end]), Raw(&text[start..s.end]));
        }
    }

    /// [`Raw::items`] of `value`, a value in `object` (the text this outline was noted from);
    /// nothing when it is not an array.
    pub fn items_within<'o, 'a>(&'o self, object: Raw<'a>, value: Raw<'a>) -> ItemsWithin<'o, 'a> {
        if value.kind() != Kind::Array {
            return ItemsWithin(ItemsFrom::Read(None));
        }
        match self.slots_within(object, value) {
            Some(slots) => ItemsWithin(ItemsFrom::Noted(object.0, &self.slots, slots)),
            None => ItemsWithin(ItemsFrom::Read(value.items())),
        }
    }
}

impl Outline {
    /// [`Raw::pick_in_items`] of `value`, a value in `object` (the text this outline was
    /// noted from), from the outline as far as it goes.
    pub fn pick_in_items_within<'o, 'a, 'k, const N: usize>(
        &'o self,
        object: Raw<'a>,
        value: Raw<'a>,
        keys: [&'k str; N],
    ) -> PickedItemsWithin<'o, 'a, 'k, N> {
        if value.kind() != Kind::Array {
            // Nothing, as `Raw::pick_in_items` gives for what is not an array.
            return PickedItemsWithin(PicksFrom::Read(value.pick_in_items(keys)));
        }
        match self.slots_within(object, value) {
            Some(items) => PickedItemsWithin(PicksFrom::Noted {
                outline: self,
                text: object.0,
                items,
                keys,
            }),
            None => PickedItemsWithin(PicksFrom::Read(value.pick_in_items(keys))),
        }
    }
}

/// What [`Outline::pick_in_items_within`] gives, item by item.
pub struct PickedItemsWithin<'o, 'a, 'k, const N: usize>(PicksFrom<'o, 'a, 'k, N>);

enum PicksFrom<'o, 'a, 'k, const N: usize> {
    Noted {
        outline: &'o Outline,
        text: &'a str,
        items: Chain<'o>,
        keys: [&'k str; N],
    },
    Read(PickedItems<'a, 'k, N>),
}

impl<'a, const N: usize> Iterator for PickedItemsWithin<'_, 'a, '_, N> {
    type Item = Option<[Option<Raw<'a>>; N]>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            PicksFrom::Noted {
                outline,
                text,
                items,
                keys,
            } => {
                let k = items.next()?;
                let s = &outline.slots[k];
                let item = Raw(&text[s.start..s.end]);
                if item.kind() != Kind::Object {
                    return Some(None);
                }
                Some(Some(match outline.children(Some(k)) {
                    Some(entries) => outline.pick_slots(text, entries, *keys),
                    None => item.pick(*keys),
                }))
            }
            PicksFrom::Read(picked) => picked.next(),
        }
    }
}

/// Picks the entries of objects within one text: from their own text ([`Raw`]), or from the
/// outline noted as the whole text was checked ([`Outlined`], a pass-one record).
pub trait Picker<'a> {
    /// [`Raw::pick`] of `object`, an object in the text.
    fn pick_in<const N: usize>(&self, object: Raw<'a>, keys: [&str; N]) -> [Option<Raw<'a>>; N];
    /// Each of [`Raw::entries`] of `object`, an object in the text, in order.
    fn each_entry(&self, object: Raw<'a>, f: &mut dyn FnMut(Key<'a>, Raw<'a>));
}

/// Picking from the text itself.
pub struct FromText;

impl<'a> Picker<'a> for FromText {
    fn pick_in<const N: usize>(&self, object: Raw<'a>, keys: [&str; N]) -> [Option<Raw<'a>>; N] {
        object.pick(keys)
    }

    fn each_entry(&self, object: Raw<'a>, f: &mut dyn FnMut(Key<'a>, Raw<'a>)) {
        object
            .entries()
            .into_iter()
            .flatten()
            .for_each(|(k, v)| f(k, v));
    }
}

impl<'a> Picker<'a> for Outlined<'a> {
    fn pick_in<const N: usize>(&self, object: Raw<'a>, keys: [&str; N]) -> [Option<Raw<'a>>; N] {
        self.pick_within(object, keys)
    }

    fn each_entry(&self, object: Raw<'a>, f: &mut dyn FnMut(Key<'a>, Raw<'a>)) {
        self.outline.each_entry_within(self.raw, object, f);
    }
}

/// Slots one after another at one depth: each the one after the one before's value.
struct Chain<'o> {
    slots: &'o [Slot],
    at: usize,
    to: usize,
}

impl Iterator for Chain<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let k = self.at;
        if k >= self.to {
            return None;
        }
        self.at = self.slots[k].after as usize;
        Some(k)
    }
}

/// What [`Outline::items_within`] gives: an array's items from the outline, or read from its
/// text.
pub struct ItemsWithin<'o, 'a>(ItemsFrom<'o, 'a>);

enum ItemsFrom<'o, 'a> {
    Noted(&'a str, &'o [Slot], Chain<'o>),
    Read(Option<Items<'a>>),
}

impl<'a> ItemsWithin<'static, 'a> {
    /// [`Raw::items`] of `value`, read from its text (no outline at hand).
    pub fn from_text(value: Raw<'a>) -> Self {
        ItemsWithin(ItemsFrom::Read(value.items()))
    }
}

impl<'a> Iterator for ItemsWithin<'_, 'a> {
    type Item = Raw<'a>;

    fn next(&mut self) -> Option<Raw<'a>> {
        match &mut self.0 {
            ItemsFrom::Noted(text, slots, chain) => {
                let s = &slots[chain.next()?];
                Some(Raw(&text[s.start..s.end]))
            }
            ItemsFrom::Read(items) => items.as_mut()?.next(),
        }
    }
}

/// An object read with the places of its entries noted as its text was checked: picking its
/// fields skips no value a second time.
pub struct Outlined<'a> {
    raw: Raw<'a>,
    outline: Outline,
    facts: super::facts::Facts,
}

thread_local! {
    /// The outline the last [`Outlined`] of this thread left, its buffers kept: records are
    /// read one after another, and each would otherwise grow its own from nothing.
    static SPARE: std::cell::Cell<Option<Outline>> = const { std::cell::Cell::new(None) };
}

/// Entries beyond which an outline's buffers are not kept for the next record.
const SPARE_ENTRIES: usize = 4096;

impl Outline {
    /// This thread's spare outline, or a new one.
    fn spare() -> Outline {
        SPARE.with(std::cell::Cell::take).unwrap_or_default()
    }

    /// Kept as this thread's spare, unless it grew large.
    fn keep(self) {
        if self.slots.capacity() <= SPARE_ENTRIES {
            SPARE.with(|spare| spare.set(Some(self)));
        }
    }
}

impl<'a> Outlined<'a> {
    /// `text` when it is one JSON object (white space around it allowed).
    pub fn parse(text: &'a str) -> Option<Outlined<'a>> {
        let text = text.trim_matches(scan::is_ws_char);
        let mut outline = Outline::spare();
        let raw = Raw(text);
        match super::facts::checked_outlined(text.as_bytes(), &mut outline) {
            Some(facts) if raw.kind() == Kind::Object => Some(Outlined {
                raw,
                outline,
                facts,
            }),
            _ => {
                outline.keep();
                None
            }
        }
    }

    /// The object's keys in file order (a repeated key each time it stands), from the
    /// outline: no value is skipped again.
    pub fn keys(&self) -> impl Iterator<Item = Key<'a>> + use<'a> {
        let mut keys = Vec::new();
        self.outline
            .each_entry_within(self.raw, self.raw, &mut |k, _| keys.push(k));
        keys.into_iter()
    }

    /// What the grammar check noted of the text (whether `serde_json` surely reads it).
    pub fn facts(&self) -> super::facts::Facts {
        self.facts
    }

    /// [`Raw::pick`], from the outline.
    pub fn pick<const N: usize>(&self, keys: [&str; N]) -> [Option<Raw<'a>>; N] {
        self.outline.pick(self.raw, keys)
    }

    /// [`Raw::pick`] of `value`, the value of one of the object's entries, from the outline.
    pub fn pick_within<const N: usize>(
        &self,
        value: Raw<'a>,
        keys: [&str; N],
    ) -> [Option<Raw<'a>>; N] {
        self.outline.pick_within(self.raw, value, keys)
    }

    /// [`Raw::pick_in_items`] of `value`, a value in the object, from the outline.
    pub fn pick_in_items_within<'k, const N: usize>(
        &self,
        value: Raw<'a>,
        keys: [&'k str; N],
    ) -> PickedItemsWithin<'_, 'a, 'k, N> {
        self.outline.pick_in_items_within(self.raw, value, keys)
    }

    /// [`Raw::items`] of `value`, a value in the object, from the outline.
    pub fn items_within(&self, value: Raw<'a>) -> ItemsWithin<'_, 'a> {
        self.outline.items_within(self.raw, value)
    }
}

impl Drop for Outlined<'_> {
    fn drop(&mut self) {
        std::mem::take(&mut self.outline).keep();
    }
}

impl<'a> std::ops::Deref for Outlined<'a> {
    type Target = Raw<'a>;

    fn deref(&self) -> &Raw<'a> {
        &self.raw
    }
}

/// The values of `keys` among `entries` (key quotes and value end, in `text`), each the last
/// entry with that key.
fn pick_from<'a, const N: usize>(
    text: &'a str,
    entries: impl Iterator<Item = (usize, usize, usize)>,
    keys: [&str; N],
) -> [Option<Raw<'a>>; N] {
    let mut found = [None; N];
    let b = text.as_bytes();
    for (start, key_end, end) in entries {
        if let Some(i) = Key(&text[start..key_end]).position_in(&keys) {
            let value = skip_ws(b, skip_ws(b, key_end) + 1);
            found[i] = Some(Raw(&text[value..end]));
        }
    }
    found
}

/// Whether `b` holds a backslash: keys of 8 to 16 bytes (most) as two words, at once.
fn has_backslash(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    if !(8..=16).contains(&b.len()) {
        return b.contains(&b'\\');
    }
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("eight bytes"));
    // A byte of `x` is zero where the word had a backslash; any zero byte sets a high bit.
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let backslashes = |w: u64| zero_byte(w ^ (ONES * u64::from(b'\\')));
    backslashes(word(&b[..8])) | backslashes(word(&b[b.len() - 8..])) != 0
}

/// The entries of an object ([`Raw::entries`]).
pub struct Entries<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Key<'a>, Raw<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.text.as_bytes();
        let i = skip_ws(b, self.at);
        if b[i] == b'}' {
            return None;
        }
        let key_start = if b[i] == b',' { skip_ws(b, i + 1) } else { i };
        let key_end = skip_valid(b, key_start);
        let colon = skip_ws(b, key_end);
        let value_start = skip_ws(b, colon + 1);
        let value_end = skip_valid(b, value_start);
        self.at = value_end;
        Some((
            Key(&self.text[key_start..key_end]),
            Raw(&self.text[value_start..value_end]),
        ))
    }
}

/// The items of an array ([`Raw::items`]).
pub struct Items<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Raw<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.text.as_bytes();
        let i = skip_ws(b, self.at);
        if b[i] == b']' {
            return None;
        }
        let start = if b[i] == b',' { skip_ws(b, i + 1) } else { i };
        let end = skip_valid(b, start);
        self.at = end;
        Some(Raw(&self.text[start..end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_items_are_read_lazily_in_order() {
        let r = Raw::parse(r#" { "a" : 1 , "b":[true, null ,"x"], "c" : {"d":"}"} } "#).unwrap();
        assert_eq!(r.kind(), Kind::Object);
        let keys: Vec<String> = r
            .entries()
            .unwrap()
            .map(|(k, _)| k.to_cow().into())
            .collect();
        assert_eq!(keys, ["a", "b", "c"]);
        let b = r.get("b").unwrap();
        let items: Vec<&str> = b.items().unwrap().map(Raw::text).collect();
        assert_eq!(items, ["true", "null", "\"x\""]);
        assert_eq!(
            r.get("c")
                .unwrap()
                .get("d")
                .unwrap()
                .as_str()
                .unwrap()
                .value,
            "}"
        );
        assert_eq!(r.get("z"), None);
        assert_eq!(Raw::parse("{}").unwrap().entries().unwrap().count(), 0);
        assert_eq!(Raw::parse("[ ]").unwrap().items().unwrap().count(), 0);
    }

    #[test]
    fn a_repeated_key_counts_as_its_last_value_as_json_parse_keeps_it() {
        let r = Raw::parse(r#"{"uuid":"a","x":1,"uuid":"b"}"#).unwrap();
        assert_eq!(r.get("uuid").unwrap().as_str().unwrap().value, "b");
        assert_eq!(r.entries().unwrap().count(), 3);
    }

    #[test]
    fn numbers_stay_as_written() {
        let r =
            Raw::parse(r#"[1e5, -0, 1e400, 123456789012345678901234567890, 18446744073709551615]"#)
                .unwrap();
        let n: Vec<&str> = r.items().unwrap().map(|i| i.as_number().unwrap()).collect();
        assert_eq!(
            n,
            [
                "1e5",
                "-0",
                "1e400",
                "123456789012345678901234567890",
                "18446744073709551615"
            ]
        );
        let items: Vec<Raw> = r.items().unwrap().collect();
        assert_eq!(items[4].as_u64(), Some(u64::MAX));
        assert_eq!(items[3].as_u64(), None);
        assert_eq!(items[2].as_f64(), None);
        assert_eq!(items[0].as_f64(), Some(100000.0));
    }

    #[test]
    fn a_key_is_found_among_names_as_its_decoded_name() {
        let names = ["uuid", "type", "a\\b", "é", ""];
        for key in [
            r#""uuid""#,
            r#""u\u0075id""#,
            r#""type""#,
            r#""typ""#,
            r#""a\\b""#,
            r#""a\b""#,
            r#""\u00e9""#,
            r#""é""#,
            r#""""#,
            r#""\"""#,
            r#""\ud800""#,
        ] {
            let key = Key(key);
            let want = names.iter().position(|name| key.is(name));
            assert_eq!(key.position_in(&names), want, "{key:?}");
        }
    }

    #[test]
    fn a_backslash_is_found_at_every_place_of_short_and_long_keys() {
        for len in 0..40 {
            let plain = vec![b'a'; len];
            assert!(!has_backslash(&plain));
            for at in 0..len {
                let mut with = plain.clone();
                with[at] = b'\\';
                assert!(has_backslash(&with), "{len} {at}");
                // Bytes near a backslash's (0x5c) are not one.
                for near in [0x5b, 0x5d, 0xdc, 0x1c, 0x00] {
                    with[at] = near;
                    assert!(!has_backslash(&with), "{len} {at} {near}");
                }
            }
        }
    }

    #[test]
    fn picking_in_items_is_taking_the_objects_and_picking_from_each() {
        let texts = [
            r#"[{"type":"text","text":"a}]\"{","id":1},{"type":"tool_use","id":"t1","input":{"id":2,"x":[{}]}},"s",3,[{"id":9}],{},{ "id" : "x" , "id":"y" },null]"#,
            r#"[ ]"#,
            r#"[{}]"#,
            r#"[ { "type" : "a" } , { } ]"#,
            r#"{"id":1}"#,
            r#""text""#,
            r#"7"#,
        ];
        for text in texts {
            let raw = Raw::parse(text).unwrap();
            let keys = ["type", "id", "tool_use_id"];
            let want: Vec<_> = raw
                .items()
                .into_iter()
                .flatten()
                .map(|v| (v.kind() == Kind::Object).then(|| v.pick(keys)))
                .collect();
            let got: Vec<_> = raw.pick_in_items(keys).collect();
            assert_eq!(got, want, "{text}");
        }
        // Every array value of every fixture and sample line.
        let mut arrays = 0;
        for bytes in fixture_and_sample_texts() {
            for line in bytes.lines() {
                let Ok(raw) = Raw::parse(line) else {
                    continue;
                };
                let mut values = vec![raw];
                while let Some(v) = values.pop() {
                    match v.kind() {
                        Kind::Object => values.extend(v.entries().unwrap().map(|(_, v)| v)),
                        Kind::Array => {
                            arrays += 1;
                            for keys in [["type", "id", "tool_use_id"], ["text", "name", "x"]] {
                                let want: Vec<_> = v
                                    .items()
                                    .unwrap()
                                    .map(|i| (i.kind() == Kind::Object).then(|| i.pick(keys)))
                                    .collect();
                                assert_eq!(v.pick_in_items(keys).collect::<Vec<_>>(), want);
                            }
                            values.extend(v.items().unwrap());
                        }
                        _ => {}
                    }
                }
            }
        }
        assert!(arrays > 100, "only {arrays} arrays");
    }

    /// The text of every fixture and real sample file.
    fn fixture_and_sample_texts() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        let mut stack = vec![root.join("fixtures"), root.join("../../../shared/samples")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    texts.push(text);
                }
            }
        }
        texts
    }

    /// Every object and array in `text`, at any depth, with the outline's picks and items
    /// held to those read from the text.
    fn outline_reads_as_text(text: &str) -> usize {
        let Some(outlined) = Outlined::parse(text) else {
            return 0;
        };
        let root = outlined.raw;
        let keys: Vec<Key> = root.entries().unwrap().map(|(k, _)| k).collect();
        assert_eq!(outlined.keys().collect::<Vec<_>>(), keys, "{text}");
        let mut values = vec![root];
        let mut seen = 0;
        while let Some(v) = values.pop() {
            seen += 1;
            let outline = &outlined.outline;
            match v.kind() {
                Kind::Object => {
                    let names: Vec<String> = v
                        .entries()
                        .unwrap()
                        .map(|(k, _)| k.to_cow().into())
                        .collect();
                    for name in names.iter().map(String::as_str).chain(["nope", "id", ""]) {
                        let keys = [name, "type", "id"];
                        assert_eq!(outline.pick_within(root, v, keys), v.pick(keys), "{text}");
                    }
                    assert!(outline.items_within(root, v).next().is_none());
                    let mut entries = Vec::new();
                    outline.each_entry_within(root, v, &mut |k, v| entries.push((k, v)));
                    assert_eq!(entries, v.entries().unwrap().collect::<Vec<_>>(), "{text}");
                    values.extend(v.entries().unwrap().map(|(_, v)| v));
                }
                Kind::Array => {
                    let items: Vec<Raw> = outline.items_within(root, v).collect();
                    assert_eq!(items, v.items().unwrap().collect::<Vec<_>>(), "{text}");
                    assert_eq!(outline.pick_within(root, v, ["id"]), [None]);
                    let keys = ["type", "id", "functionCall"];
                    assert_eq!(
                        outline
                            .pick_in_items_within(root, v, keys)
                            .collect::<Vec<_>>(),
                        v.pick_in_items(keys).collect::<Vec<_>>(),
                        "{text}"
                    );
                    values.extend(items);
                }
                _ => assert_eq!(outline.pick_within(root, v, ["id"]), [None]),
            }
        }
        seen
    }

    #[test]
    fn an_outline_too_large_to_hold_reads_every_value_from_its_text() {
        let items = vec!["0"; MAX_SLOTS + 5].join(",");
        let text = format!(r#"{{"a":{{"b":[{items}]}},"c":[1,{{"id":"x"}}],"c":{{"id":"y"}}}}"#);
        let outlined = Outlined::parse(&text).unwrap();
        assert!(outlined.outline.full);
        assert!(outlined.outline.slots.len() <= MAX_SLOTS);
        assert!(outline_reads_as_text(&text) > MAX_SLOTS);
        let [c] = outlined.pick(["c"]);
        assert_eq!(c.unwrap().text(), r#"{"id":"y"}"#);
    }

    #[test]
    fn an_outline_reads_every_value_as_its_text_does() {
        for text in [
            r#"{"a":1}"#,
            r#" { "a" : [ 1 , { "b" : [ [ ] , { } , "x" ] } ] , "a" : { "c" : null } } "#,
            r#"{"m":{"parts":[{"text":"}]\"{"},{"functionCall":{"id":"c1","args":{"id":2}},"functionCall":{"id":"c2"}},"s",[{"id":9}]]}}"#,
            r#"{"d1":{"d2":[{"d4":[{"d6":{"d7":[1,{"id":3}]}}]}]},"e":[]}"#,
            r#"{"x":[[[[[[[["deep",{"id":1}]]]]]]]],"y":{"z":{"w":{"v":{"u":{"t":{"id":"s"}}}}}}}"#,
            r#"{}"#,
        ] {
            assert!(outline_reads_as_text(text) > 0, "{text}");
        }
        // Every fixture and sample, whole and line by line.
        let mut values = 0;
        for text in fixture_and_sample_texts() {
            values += outline_reads_as_text(&text);
            values += text.lines().map(outline_reads_as_text).sum::<usize>();
        }
        assert!(values > 10_000, "only {values} values");
    }

    #[test]
    fn escaped_keys_match_their_decoded_name() {
        let r = Raw::parse(r#"{"u\u0075id":"x"}"#).unwrap();
        assert_eq!(r.get("uuid").unwrap().as_str().unwrap().value, "x");
    }
}
