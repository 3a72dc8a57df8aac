//! Reading a SentencePiece `.model` (a protobuf `ModelProto`) fast, for
//! bpe_studio/engine/formats/sentencepiece.py (`load_sentencepiece`), whose Python wire-format reader stays
//! the reference and names any error. Read here, as there: each piece's text (UTF-8), score (`float`,
//! field 2) and type (field 3); the trainer spec's varint fields and every field of the normalizer spec, in
//! file order (the caller keeps the last of a number). Any fault (a cut field, an unknown wire type, field
//! number 0, a text that is not UTF-8) gives None, and the Python reader reads the file instead, so that
//! both paths fail with the same message. Varints are read as Python reads them: up to ten bytes (shift
//! at most 63), so into a `u128`. [`pairs`] then derives the merges' ranks and the pairs the views show.

use rustc_hash::FxHashMap;

/// A field's value: a varint, or the bytes of a fixed-size or length-delimited field.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Int(u128),
    Bytes(&'a [u8]),
}

/// What the Python loader uses of a `ModelProto`.
#[derive(Debug, Default, PartialEq)]
pub struct Model<'a> {
    /// Each piece's text, score and type, in file order (a piece without a field keeps "", 0.0 and 1).
    pub pieces: Vec<(&'a str, f32, u128)>,
    /// The trainer specs' varint fields (number, value), in file order.
    pub trainer: Vec<(u128, u128)>,
    /// The normalizer specs' fields (number, value), in file order.
    pub normalizer: Vec<(u128, Value<'a>)>,
}

/// Iterates over a message's fields as (number, wire type, value); None ends it at a fault.
struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(data: &'a [u8]) -> Self {
        Fields { data, pos: 0 }
    }

    fn varint(&mut self) -> Option<u128> {
        let (mut value, mut shift) = (0u128, 0u32);
        loop {
            let &byte = self.data.get(self.pos)?;
            if shift > 63 {
                return None;
            }
            self.pos += 1;
            value |= u128::from(byte & 0x7F) << shift;
            shift += 7;
            if byte < 0x80 {
                return Some(value);
            }
        }
    }

    fn take(&mut self, size: u128) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(usize::try_from(size).ok()?)?;
        let found = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(found)
    }

    /// The next field: Some(Some(..)), the end: Some(None), a fault: None.
    fn next_field(&mut self) -> Option<Option<(u128, u8, Value<'a>)>> {
        if self.pos >= self.data.len() {
            return Some(None);
        }
        let key = self.varint()?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let value = match wire {
            0 => Value::Int(self.varint()?),
            1 => Value::Bytes(self.take(8)?),
            2 => {
                let size = self.varint()?;
                Value::Bytes(self.take(size)?)
            }
            5 => Value::Bytes(self.take(4)?),
            _ => return None,
        };
        if number == 0 {
            return None;
        }
        Some(Some((number, wire, value)))
    }

    /// Every field, or None at a fault.
    fn all(mut self) -> Option<Vec<(u128, u8, Value<'a>)>> {
        let mut out = Vec::new();
        while let Some(field) = self.next_field()? {
            out.push(field);
        }
        Some(out)
    }
}

fn piece(data: &[u8]) -> Option<(&str, f32, u128)> {
    let (mut text, mut score, mut kind) = ("", 0.0f32, 1u128);
    let mut fields = Fields::new(data);
    while let Some((number, wire, value)) = fields.next_field()? {
        match (number, wire, value) {
            (1, 2, Value::Bytes(raw)) => text = std::str::from_utf8(raw).ok()?,
            (2, 5, Value::Bytes(raw)) => score = f32::from_le_bytes(raw.try_into().ok()?),
            (3, 0, Value::Int(v)) => kind = v,
            _ => {}
        }
    }
    Some((text, score, kind))
}

/// The pieces and specs of a `.model`, or None at any fault (see the module's docs).
pub fn parse(data: &[u8]) -> Option<Model<'_>> {
    let mut model = Model::default();
    let mut fields = Fields::new(data);
    while let Some((number, wire, value)) = fields.next_field()? {
        let Value::Bytes(raw) = value else { continue };
        match (number, wire) {
            (1, 2) => model.pieces.push(piece(raw)?),
            (2, 2) => {
                model.trainer.extend(Fields::new(raw).all()?.into_iter().filter_map(|(n, _, v)| match v {
                    Value::Int(v) => Some((n, v)),
                    Value::Bytes(_) => None,
                }))
            }
            (3, 2) => model.normalizer.extend(Fields::new(raw).all()?.into_iter().map(|(n, _, v)| (n, v))),
            _ => {}
        }
    }
    Some(model)
}

/// The piece types that text can become: `NORMAL` (merges make them) and `USER_DEFINED` (matched whole);
/// sentencepiece.py's constants.
pub const NORMAL: u128 = 1;
pub const USER_DEFINED: u128 = 4;
/// A byte piece, `<0xNN>`.
pub const BYTE: u128 = 6;

/// The byte of a byte piece's text `<0xNN>` (two hex digits, either case), as sentencepiece.py's `_byte_of`
/// reads it; None for any other text.
pub fn byte_of(text: &str) -> Option<u8> {
    let raw = text.as_bytes();
    if raw.len() != 6 || &raw[..3] != b"<0x" || raw[5] != b'>' {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    Some((digit(raw[3])? * 16 + digit(raw[4])?) as u8)
}

/// What the Python loader derives from a `.model`'s pieces (sentencepiece.py's `load_sentencepiece` and
/// `PieceModel._find_piece_merges`, the reference).
#[derive(Debug, Default, PartialEq)]
pub struct Pairs<'a> {
    /// Every split of a normal piece into two symbols (pieces, or single characters) with the piece's rank
    /// (the order of the scores, highest first, equal scores sharing one), in the Python table's order.
    pub ranks: Vec<(&'a str, &'a str, u32)>,
    /// For each piece made, in rank order (stable), the pair of two pieces the views show: the first of
    /// its rank whose two parts are made by then (or single characters or user-defined), else the first.
    pub merges: Vec<(&'a str, &'a str)>,
    /// For each of `merges`, the index in `pieces` of its left text, right text and the text they make,
    /// each the last piece with that text (as the loader's text -> id dict keeps it): a merge's ids
    /// without a lookup by text.
    pub merge_ids: Vec<(u32, u32, u32)>,
}

/// The rank of each of `scores` (none NaN): how many distinct values are higher (the order of the scores,
/// highest first, equal scores sharing a rank, -0.0 and 0.0 one value as in a Python set). One sort of the
/// scores with their places, then a walk: no binary search per score (32k of them in Mistral 7B's).
fn score_ranks(scores: impl ExactSizeIterator<Item = f32>) -> Vec<u32> {
    let mut by_score: Vec<(f32, u32)> = scores.zip(0u32..).collect();
    // (Descending; `total_cmp` puts 0.0 right before -0.0, which `!=` below keeps in one rank.)
    by_score.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    let mut ranks = vec![0u32; by_score.len()];
    let mut rank = 0u32;
    for (k, &(score, at)) in by_score.iter().enumerate() {
        if k > 0 && score != by_score[k - 1].0 {
            rank += 1;
        }
        ranks[at as usize] = rank;
    }
    ranks
}

/// True for a text of one character.
fn single(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some() && chars.next().is_none()
}

/// The pairs of `pieces` (text, score, type), or None when a piece that merges has a NaN score (ranks
/// then follow Python's sort of NaNs: the Python loader derives those).
pub fn pairs<'a>(pieces: &[(&'a str, f32, u128)]) -> Option<Pairs<'a>> {
    derive(pieces, true)
}

/// [`Pairs::merge_ids`] alone (`ranks` and `merges` left empty), for `inspect`'s figures: the same
/// derivation without the list of every split's texts.
pub fn merge_ids(pieces: &[(&str, f32, u128)]) -> Option<Vec<(u32, u32, u32)>> {
    derive(pieces, false).map(|found| found.merge_ids)
}

/// [`pairs`], with `ranks` and `merges` when `texts`.
fn derive<'a>(pieces: &[(&'a str, f32, u128)], texts: bool) -> Option<Pairs<'a>> {
    // The normal and user-defined texts by index, in the order they first appear: each one's last score,
    // and whether it is user-defined (frozen). A text is hashed once here and once per split below; what
    // follows works on the indices (a third of the time went to looking the same texts up again).
    let mut index: FxHashMap<&str, usize> = FxHashMap::default();
    index.reserve(pieces.len());
    let mut order: Vec<&str> = Vec::new();
    let mut score_of: Vec<f32> = Vec::new();
    let mut frozen: Vec<bool> = Vec::new();
    let mut last_id: Vec<u32> = Vec::new();
    for (id, &(text, score, kind)) in pieces.iter().enumerate() {
        if kind != NORMAL && kind != USER_DEFINED {
            continue;
        }
        let i = *index.entry(text).or_insert_with(|| {
            order.push(text);
            score_of.push(score);
            frozen.push(false);
            last_id.push(0);
            order.len() - 1
        });
        score_of[i] = score;
        frozen[i] |= kind == USER_DEFINED;
        last_id[i] = u32::try_from(id).ok()?;
    }
    if score_of.iter().any(|s| s.is_nan()) {
        return None;
    }
    let rank_of = score_ranks(score_of.iter().copied());

    // (where the piece is cut, rank, the piece they make, left's and right's indices when they are pieces,
    // else NONE), in the order the Python loop writes its dict; each piece's splits one after the other
    // (`ranges`). Five u32s, not the two texts and three words: a quarter of the memory to fill and read.
    const NONE: u32 = u32::MAX;
    type Split = (u32, u32, u32, u32, u32);
    let index_of = |at: Option<usize>| at.map_or(Some(NONE), |i| u32::try_from(i).ok());
    let mut splits: Vec<Split> = Vec::with_capacity(order.len() * 2);
    let mut ranges: Vec<(u32, u32, u32)> = Vec::with_capacity(order.len()); // (rank, start, end)
    for (made, &text) in order.iter().enumerate() {
        if frozen[made] {
            continue;
        }
        let rank = rank_of[made];
        let start = splits.len();
        for (cut, _) in text.char_indices().skip(1) {
            let (left, right) = text.split_at(cut);
            let left_at = index.get(left).copied();
            if !(left_at.is_some() || single(left)) {
                continue; // (the right part is not looked up: most cuts of a long piece end here)
            }
            let right_at = index.get(right).copied();
            if right_at.is_some() || single(right) {
                let (cut, made) = (u32::try_from(cut).ok()?, u32::try_from(made).ok()?);
                splits.push((cut, rank, made, index_of(left_at)?, index_of(right_at)?));
            }
        }
        if splits.len() > start {
            ranges.push((rank, u32::try_from(start).ok()?, u32::try_from(splits.len()).ok()?));
        }
    }

    // PieceModel._find_piece_merges: by rank (stable), the pairs of two pieces grouped by the piece made.
    // A piece's splits share its rank and lie together, so a stable sort of the pieces by rank orders the
    // groups as a stable sort of every split would (without a list per piece: 28k for Mistral 7B).
    ranges.sort_by_key(|&(rank, ..)| rank);
    let mut made_yet: Vec<bool> = vec![false; order.len()];
    let mut merges = Vec::with_capacity(ranges.len());
    let mut merge_ids = Vec::with_capacity(ranges.len());
    for &(_, start, end) in &ranges {
        let (start, end) = (start as usize, end as usize);
        let made = splits[start].2 as usize;
        let text = order[made];
        // (left, right, left's index, right's index) of the splits into two pieces.
        let pairs = || {
            splits[start..end].iter().filter(|&&(.., li, ri)| li != NONE && ri != NONE).map(
                |&(cut, .., li, ri)| {
                    let (left, right) = text.split_at(cut as usize);
                    (left, right, li as usize, ri as usize)
                },
            )
        };
        let Some(first) = pairs().next() else { continue }; // (no split of two pieces: no group)
        let ready = |part: &str, at: usize| made_yet[at] || single(part) || frozen[at];
        let chosen = pairs().find(|&(l, r, li, ri)| ready(l, li) && ready(r, ri)).unwrap_or(first);
        if texts {
            merges.push((chosen.0, chosen.1));
        }
        merge_ids.push((last_id[chosen.2], last_id[chosen.3], last_id[made]));
        made_yet[made] = true;
    }
    let ranks = if texts {
        let text_of = |(cut, rank, made, ..): Split| {
            let (left, right) = order[made as usize].split_at(cut as usize);
            (left, right, rank)
        };
        splits.into_iter().map(text_of).collect()
    } else {
        Vec::new()
    };
    Some(Pairs { ranks, merges, merge_ids })
}

/// A `.model`'s BPE over characters, as `PieceModel.encode` runs it (bpe_studio/engine/encoding/pieces.py,
/// the reference) with the ranks `load_sentencepiece` derives, but without deriving them: during BPE every
/// symbol is a single character, a user-defined piece (which never merges) or a piece made by merging, so
/// two adjacent symbols have a rank exactly when their concatenation is a normal piece that is not
/// user-defined -- that piece's rank. One hash map from the pieces replaces the table of every split
/// (60k-250k entries that the first encode of a fresh process built).
#[derive(Debug)]
pub struct PieceEncoder {
    /// Each normal or user-defined text -> (its last id, its rank; None for a user-defined text).
    pieces: PieceTable,
    /// The longest user-defined text, in characters (0: none).
    longest_frozen: usize,
    /// The id of each byte 0..255 (byte fallback).
    byte_ids: [u32; 256],
}

/// Text -> (id, rank) over one arena of the texts, open addressing with linear probing: no allocation per
/// text (32k `Box<str>` of Mistral 7B's pieces made and freed took a fifth of a fresh process's opening).
#[derive(Debug, Default)]
struct PieceTable {
    /// The distinct texts, one after another.
    arena: String,
    /// Each distinct text's (start, end) in `arena`, and its value.
    entries: Vec<(u32, u32, (u32, Option<u32>))>,
    /// 1 + an index into `entries`, or 0 for an empty slot; a power of two long, at most half full.
    slots: Vec<u32>,
}

impl PieceTable {
    /// A table for at most `count` texts of `bytes` bytes in all.
    fn with_capacity(count: usize, bytes: usize) -> Self {
        PieceTable {
            arena: String::with_capacity(bytes),
            entries: Vec::with_capacity(count),
            slots: vec![0; (count.max(1) * 2).next_power_of_two()],
        }
    }

    fn hash(text: &str) -> usize {
        use std::hash::Hasher;
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write(text.as_bytes());
        // (FxHasher's high bits mix best: the slot is taken from them.)
        (hasher.finish() >> 20) as usize
    }

    /// The slot of `text`: its entry's, or the empty one where it would go.
    fn slot(&self, text: &str) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = Self::hash(text) & mask;
        loop {
            let entry = self.slots[at];
            if entry == 0 {
                return at;
            }
            let (start, end, _) = self.entries[entry as usize - 1];
            if &self.arena[start as usize..end as usize] == text {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    fn get(&self, text: &str) -> Option<&(u32, Option<u32>)> {
        let entry = self.slots[self.slot(text)];
        (entry != 0).then(|| &self.entries[entry as usize - 1].2)
    }

    /// The value of `text`, inserted as `value` when absent (the bool: whether it was there).
    fn entry(&mut self, text: &str, value: (u32, Option<u32>)) -> Option<(&mut (u32, Option<u32>), bool)> {
        let at = self.slot(text);
        if self.slots[at] == 0 {
            let start = u32::try_from(self.arena.len()).ok()?;
            self.arena.push_str(text);
            let end = u32::try_from(self.arena.len()).ok()?;
            self.entries.push((start, end, value));
            self.slots[at] = u32::try_from(self.entries.len()).ok()?;
            return Some((&mut self.entries.last_mut()?.2, false));
        }
        let index = self.slots[at] as usize - 1;
        Some((&mut self.entries[index].2, true))
    }
}

impl PieceEncoder {
    /// The encoder of `pieces` (text, score, type) with the byte ids `byte_ids`, or None when a normal or
    /// user-defined piece has a NaN score (as [`pairs`]: the Python loader derives those ranks).
    pub fn new(pieces: &[(&str, f32, u128)], byte_ids: [u32; 256]) -> Option<Self> {
        // Each text's last id, last score and whether any of its entries is user-defined, as the loader
        // keeps them, in the one table the encoder keeps (its value's rank set below from the score).
        let merging = |kind: u128| kind == NORMAL || kind == USER_DEFINED;
        let (count, bytes) =
            pieces.iter().filter(|p| merging(p.2)).fold((0, 0), |(n, b), p| (n + 1, b + p.0.len()));
        let mut found = PieceTable::with_capacity(count, bytes);
        let mut scores: Vec<(f32, bool)> = Vec::with_capacity(count);
        for (i, &(text, score, kind)) in pieces.iter().enumerate() {
            if !merging(kind) {
                continue;
            }
            let id = u32::try_from(i).ok()?;
            let frozen = kind == USER_DEFINED;
            // (The rank slot holds the index into `scores` until the ranks are known.)
            let (slot, was_there) = found.entry(text, (id, Some(u32::try_from(scores.len()).ok()?)))?;
            if was_there {
                slot.0 = id;
                let at = slot.1? as usize;
                scores[at] = (score, scores[at].1 | frozen);
            } else {
                scores.push((score, frozen));
            }
        }
        if scores.iter().any(|v| v.0.is_nan()) {
            return None;
        }
        let rank_of = score_ranks(scores.iter().map(|v| v.0));
        let mut longest_frozen = 0;
        let PieceTable { arena, entries, .. } = &mut found;
        for (start, end, slot) in entries.iter_mut() {
            let at = slot.1? as usize;
            slot.1 = if scores[at].1 {
                longest_frozen = longest_frozen.max(arena[*start as usize..*end as usize].chars().count());
                None
            } else {
                Some(rank_of[at])
            };
        }
        Some(PieceEncoder { pieces: found, longest_frozen, byte_ids })
    }

    /// The ids of one normalized piece (`"▁Hello▁world"`), as `PieceModel.encode`: its symbols (characters,
    /// a user-defined piece longest first as one frozen symbol), then the adjacent pair of lowest rank
    /// merged, leftmost first (a heap of (rank, position): positions never change), a stale entry skipped;
    /// each symbol that is a piece its id, any other its UTF-8 bytes' ids.
    pub fn encode(&self, piece: &str, out: &mut Vec<u32>) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut bounds: Vec<usize> = piece.char_indices().map(|(at, _)| at).collect();
        bounds.push(piece.len());
        let chars = bounds.len() - 1;
        // Each symbol as the bytes start..end of `piece` (merging joins neighbours), frozen or not.
        let (mut start, mut end, mut frozen) = (Vec::new(), Vec::new(), Vec::new());
        let mut at = 0;
        while at < chars {
            let mut size = 1;
            let mut is_frozen = false;
            if self.longest_frozen > 0 {
                for try_size in (1..=self.longest_frozen.min(chars - at)).rev() {
                    let text = &piece[bounds[at]..bounds[at + try_size]];
                    if matches!(self.pieces.get(text), Some(&(_, None))) {
                        size = try_size;
                        is_frozen = true;
                        break;
                    }
                }
            }
            start.push(bounds[at]);
            end.push(bounds[at + size]);
            frozen.push(is_frozen);
            at += size;
        }
        let n = start.len();
        let mut following: Vec<usize> = (1..=n).collect(); // (n: none)
        let mut previous: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect(); // (usize::MAX: none)
        let rank_at = |start: &[usize], end: &[usize], i: usize, j: usize| -> Option<u32> {
            if frozen[i] || frozen[j] {
                return None;
            }
            self.pieces.get(&piece[start[i]..end[j]]).and_then(|&(_, rank)| rank)
        };
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = (0..n.saturating_sub(1))
            .filter_map(|i| rank_at(&start, &end, i, i + 1).map(|r| Reverse((r, i))))
            .collect();
        while let Some(Reverse((rank, i))) = heap.pop() {
            let j = if start[i] < end[i] { following[i] } else { n };
            if j >= n || rank_at(&start, &end, i, j) != Some(rank) {
                continue;
            }
            end[i] = end[j];
            end[j] = start[j]; // (merged away: empty)
            let k = following[j];
            following[i] = k;
            if k < n {
                previous[k] = i;
                if let Some(r) = rank_at(&start, &end, i, k) {
                    heap.push(Reverse((r, i)));
                }
            }
            let h = previous[i];
            if h < n {
                if let Some(r) = rank_at(&start, &end, h, i) {
                    heap.push(Reverse((r, h)));
                }
            }
        }
        for (&s, &e) in start.iter().zip(&end) {
            if s == e {
                continue;
            }
            let text = &piece[s..e];
            match self.pieces.get(text) {
                Some(&(id, _)) => out.push(id),
                None => out.extend(text.bytes().map(|b| self.byte_ids[usize::from(b)])),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u128, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7F) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn field(number: u128, wire: u8, body: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | u128::from(wire), out);
        if wire == 2 {
            varint(body.len() as u128, out);
        }
        out.extend_from_slice(body);
    }

    fn piece_message(text: &[u8], score: f32, kind: u128) -> Vec<u8> {
        let mut out = Vec::new();
        field(1, 2, text, &mut out);
        field(2, 5, &score.to_le_bytes(), &mut out);
        let mut k = Vec::new();
        varint(kind, &mut k);
        field(3, 0, &k, &mut out);
        out
    }

    #[test]
    fn reads_pieces_and_specs() {
        let mut data = Vec::new();
        field(1, 2, &piece_message("▁the".as_bytes(), -1.5, 1), &mut data);
        field(1, 2, &piece_message(b"<0x41>", 0.0, 6), &mut data);
        field(1, 2, &[], &mut data); // a piece with no fields
        let mut trainer = Vec::new();
        field(3, 0, &[2], &mut trainer);
        field(35, 0, &[1], &mut trainer);
        field(4, 2, b"skipped", &mut trainer);
        field(2, 2, &trainer, &mut data);
        let mut normalizer = Vec::new();
        field(1, 2, b"identity", &mut normalizer);
        field(4, 0, &[0], &mut normalizer);
        field(3, 2, &normalizer, &mut data);
        field(9, 1, &[0; 8], &mut data); // an unknown field of another wire type: skipped
        let model = parse(&data).unwrap();
        assert_eq!(model.pieces, vec![("▁the", -1.5, 1), ("<0x41>", 0.0, 6), ("", 0.0, 1)]);
        assert_eq!(model.trainer, vec![(3, 2), (35, 1)]);
        assert_eq!(model.normalizer, vec![(1, Value::Bytes(b"identity")), (4, Value::Int(0))]);
    }

    #[test]
    fn faults_give_none() {
        let mut good = Vec::new();
        field(1, 2, &piece_message(b"a", 0.0, 1), &mut good);
        assert!(parse(&good).is_some());
        for cut in 1..good.len() {
            assert!(parse(&good[..cut]).is_none(), "cut at {cut}");
        }
        let mut bad_text = Vec::new();
        field(1, 2, &piece_message(b"\xff", 0.0, 1), &mut bad_text);
        assert!(parse(&bad_text).is_none());
        assert!(parse(&[0x0b]).is_none()); // wire type 3
        assert!(parse(&[0x00, 0x00]).is_none()); // field number 0
        assert!(parse(&[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).is_none());
        // Ten bytes of varint are read (as Python reads them), beyond 64 bits.
        let ten = [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
        assert!(parse(&ten).is_some());
        let mut big_kind = Vec::new();
        field(1, 2, &piece_message(b"a", 0.0, u128::from(u64::MAX) << 6), &mut big_kind);
        assert_eq!(parse(&big_kind).unwrap().pieces[0].2, u128::from(u64::MAX) << 6);
    }

    #[test]
    fn pairs_rank_every_split_and_choose_made_parts() {
        // "abc" (score -1, rank 2 as "ab") splits as a+bc and ab+c, both of pieces; "bc" (-0.5, rank 1) is
        // made first, and a+bc, listed first, has both parts ready, so it is the pair abc shows.
        let pieces =
            [("a", 0.0, 1), ("b", 0.0, 1), ("c", 0.0, 1), ("bc", -0.5, 1), ("ab", -1.0, 1), ("abc", -1.0, 1)];
        let found = pairs(&pieces).unwrap();
        assert_eq!(found.ranks, vec![("b", "c", 1), ("a", "b", 2), ("a", "bc", 2), ("ab", "c", 2)]);
        assert_eq!(found.merges, vec![("b", "c"), ("a", "b"), ("a", "bc")]);
        assert_eq!(found.merge_ids, vec![(1, 2, 3), (0, 1, 4), (0, 3, 5)]);
        assert_eq!(merge_ids(&pieces), Some(found.merge_ids));
        // A user-defined piece is not split; a NaN score leaves the ranks to Python.
        assert!(pairs(&[("ab", 0.0, 4), ("a", 0.0, 1)]).unwrap().ranks.is_empty());
        assert!(pairs(&[("ab", f32::NAN, 1)]).is_none());
        assert_eq!(pairs(&[("ab", f32::NAN, 6)]).unwrap(), Pairs::default());
    }

    #[test]
    fn byte_pieces_are_two_hex_digits_of_either_case() {
        assert_eq!(
            (byte_of("<0x0A>"), byte_of("<0xff>"), byte_of("<0xfF>")),
            (Some(10), Some(255), Some(255))
        );
        for text in ["<0X0A>", "<0x0A", "<0x+1>", "<0x 1>", "<0x0G>", "<0x0A>>", "<0x0é>", "0x0A"] {
            assert_eq!(byte_of(text), None, "{text}");
        }
    }

    #[test]
    fn an_empty_file_has_no_pieces() {
        assert_eq!(parse(b"").unwrap(), Model::default());
    }

    #[test]
    fn score_ranks_count_the_distinct_higher_scores() {
        let scores = [-1.0, 0.0, -0.0, 2.5, -1.0, -7.0, 0.0];
        let mut distinct: Vec<f32> = scores.to_vec();
        distinct.sort_by(|a, b| b.total_cmp(a));
        distinct.dedup();
        let plain: Vec<u32> = scores.iter().map(|&s| distinct.partition_point(|&d| d > s) as u32).collect();
        assert_eq!(score_ranks(scores.iter().copied()), plain);
        assert_eq!(plain, vec![2, 1, 1, 0, 2, 3, 1]);
        assert!(score_ranks(std::iter::empty()).is_empty());
    }

    #[test]
    fn piece_table_finds_every_text_and_no_other() {
        let texts: Vec<String> = (0..5000).map(|i| format!("\u{2581}{i:x}")).collect();
        let mut table = PieceTable::with_capacity(texts.len(), texts.iter().map(String::len).sum());
        for (i, text) in texts.iter().enumerate() {
            let (_, was_there) = table.entry(text, (i as u32, None)).unwrap();
            assert!(!was_there);
        }
        let (slot, was_there) = table.entry(&texts[7], (0, None)).unwrap();
        assert!(was_there && *slot == (7, None));
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(table.get(text), Some(&(i as u32, None)));
        }
        assert_eq!(table.get("\u{2581}"), None);
        assert_eq!(table.get("1388"), None); // (0x1388 = 5000, and without its '▁')
        assert_eq!(table.get(""), None);
    }

    fn encoded(encoder: &PieceEncoder, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        encoder.encode(text, &mut out);
        out
    }

    #[test]
    fn piece_encoder_merges_by_score_and_falls_back_to_bytes() {
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = 100 + b as u32;
        }
        // a b c ab bc abc, "ab" and "bc" of equal score (leftmost first), "<x>" user-defined.
        let pieces = [
            ("a", 0.0, NORMAL),
            ("b", 0.0, NORMAL),
            ("c", 0.0, NORMAL),
            ("ab", -1.0, NORMAL),
            ("bc", -1.0, NORMAL),
            ("abc", -2.0, NORMAL),
            ("<x>", 0.0, USER_DEFINED),
            ("x", 0.0, NORMAL),
            ("<x", -0.5, NORMAL),
        ];
        let encoder = PieceEncoder::new(&pieces, byte_ids).unwrap();
        assert_eq!(encoded(&encoder, "abc"), vec![5]);
        assert_eq!(encoded(&encoder, "bcab"), vec![4, 3]);
        assert_eq!(encoded(&encoder, "a<x>b"), vec![0, 6, 1]);
        assert_eq!(encoded(&encoder, "<xé"), vec![8, 100 + 0xC3, 100 + 0xA9]);
        assert_eq!(encoded(&encoder, ""), Vec::<u32>::new());
        assert!(PieceEncoder::new(&[("a", f32::NAN, NORMAL)], byte_ids).is_none());
    }
}
