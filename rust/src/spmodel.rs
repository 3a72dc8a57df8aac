//! Reading a SentencePiece `.model` (a protobuf `ModelProto`) fast, for
//! bpe_studio/engine/formats/sentencepiece.py (`load_sentencepiece`), whose Python wire-format reader stays
//! the reference and names any error. Read here, as there: each piece's text (UTF-8), score (`float`,
//! field 2) and type (field 3); the trainer spec's varint fields and every field of the normalizer spec, in
//! file order (the caller keeps the last of a number). Any fault (a cut field, an unknown wire type, field
//! number 0, a text that is not UTF-8) gives None, and the Python reader reads the file instead, so that
//! both paths fail with the same message. Varints are read as Python reads them: up to ten bytes (shift
//! at most 63), so into a `u128`. [`pairs`] then derives the merges' ranks and the pairs the views show.

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
    // The layout sentencepiece writes for nearly every piece, read as it lies: the text (field 1, under 128
    // bytes), the score (field 2), then the type (field 3, a one-byte varint) unless it is the default.
    // Any other layout goes through the general reader below, which reads these the same way.
    if let [0x0A, size, rest @ ..] = data {
        let size = usize::from(*size);
        if size < 0x80 && rest.len() >= size + 5 && rest[size] == 0x15 {
            let (text, tail) = rest.split_at(size);
            let kind = match tail[5..] {
                [] => Some(1),
                [0x18, kind] if kind < 0x80 => Some(u128::from(kind)),
                _ => None,
            };
            if let (Some(kind), Ok(score)) = (kind, <[u8; 4]>::try_from(&tail[1..5])) {
                return Some((std::str::from_utf8(text).ok()?, f32::from_le_bytes(score), kind));
            }
        }
    }
    piece_fields(data)
}

/// A piece's (text, score, type) read field by field (the general reader; see [`piece`]).
fn piece_fields(data: &[u8]) -> Option<(&str, f32, u128)> {
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
    score_order(scores).0
}

/// [`score_ranks`], and the places of the scores in rank order (equal ranks in the order of their places).
fn score_order(scores: impl ExactSizeIterator<Item = f32>) -> (Vec<u32>, Vec<u32>) {
    let mut by_score: Vec<(f32, u32)> = scores.zip(0u32..).collect();
    // (Descending, with -0.0 and 0.0 equal: no NaN here.) The stable sort takes runs already in order as
    // they are: most models list their pieces highest score first but for a few (Mistral 7B's: 14 of
    // 31,741), which it sorts in about one pass, where the unstable sort spent a fifth of `inspect`'s merge
    // figures; and it keeps equal scores in the order of their places.
    by_score.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    let mut ranks = vec![0u32; by_score.len()];
    let mut rank = 0u32;
    for (k, &(score, at)) in by_score.iter().enumerate() {
        if k > 0 && score != by_score[k - 1].0 {
            rank += 1;
        }
        ranks[at as usize] = rank;
    }
    (ranks, by_score.into_iter().map(|(_, at)| at).collect())
}

/// True for a text of one character.
fn single(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some() && chars.next().is_none()
}

/// The pairs of `pieces` (text, score, type), or None when a piece that merges has a NaN score (ranks
/// then follow Python's sort of NaNs: the Python loader derives those).
pub fn pairs<'a>(pieces: &[(&'a str, f32, u128)]) -> Option<Pairs<'a>> {
    derive(pieces)
}

/// [`Pairs::merge_ids`] alone (`ranks` and `merges` left empty), for `inspect`'s figures: the same
/// derivation without the list of every split's texts.
pub fn merge_ids(pieces: &[(&str, f32, u128)]) -> Option<Vec<(u32, u32, u32)>> {
    // As `derive` chooses them, taking the pieces in rank order at once: a piece's cuts are looked up
    // only until the first pair of two pieces ready by then (`derive` lists every split, for the views'
    // ranks, then chooses), and no split is stored. Tested against `derive` (merge_ids_are_derive_s).
    let Distinct { index, score_of, frozen, last_id } = Distinct::of(pieces)?;
    // (Equal ranks in the order the texts first appear, as `derive`'s groups.)
    let (_, by_rank) = score_order(score_of.iter().copied());
    let mut made_yet: Vec<bool> = vec![false; index.texts.len()];
    let mut merge_ids = Vec::new();
    let mut suffixes: Vec<u64> = Vec::new();
    for made in by_rank.into_iter().map(|i| i as usize) {
        if frozen[made] {
            continue;
        }
        let text = index.texts[made];
        let ready = |part: &str, at: usize| made_yet[at] || single(part) || frozen[at];
        let (mut first, mut chosen) = (None, None);
        for (cut, prefix, suffix) in TextIndex::cuts(text, &mut suffixes) {
            let (left, right) = text.split_at(cut);
            let Some(left_at) = index.get_prefix(left, prefix) else { continue };
            let Some(right_at) = index.get_suffix(right, suffix) else { continue };
            first = first.or(Some((left_at, right_at)));
            if ready(left, left_at) && ready(right, right_at) {
                chosen = Some((left_at, right_at));
                break;
            }
        }
        if let Some((left_at, right_at)) = chosen.or(first) {
            merge_ids.push((last_id[left_at], last_id[right_at], last_id[made]));
            made_yet[made] = true;
        }
    }
    Some(merge_ids)
}

/// The normal and user-defined texts of a `.model`'s pieces by index, in the order they first appear, with
/// each one's last score, whether any of its entries is user-defined (frozen) and its last id: what
/// [`derive`] and [`merge_ids`] work on (by index: a third of the time went to looking the same texts up
/// again).
struct Distinct<'a> {
    index: TextIndex<'a>,
    score_of: Vec<f32>,
    frozen: Vec<bool>,
    last_id: Vec<u32>,
}

impl<'a> Distinct<'a> {
    /// None when a score is NaN (see [`pairs`]).
    fn of(pieces: &[(&'a str, f32, u128)]) -> Option<Self> {
        u32::try_from(pieces.len()).ok()?; // (an index fits a u32)
        let mut found = Distinct {
            index: TextIndex::with_capacity(pieces.len()),
            score_of: Vec::new(),
            frozen: Vec::new(),
            last_id: Vec::new(),
        };
        for (id, &(text, score, kind)) in pieces.iter().enumerate() {
            if kind != NORMAL && kind != USER_DEFINED {
                continue;
            }
            let (i, new) = found.index.insert(text);
            if new {
                found.score_of.push(score);
                found.frozen.push(false);
                found.last_id.push(0);
            }
            found.score_of[i] = score;
            found.frozen[i] |= kind == USER_DEFINED;
            found.last_id[i] = u32::try_from(id).ok()?;
        }
        if found.score_of.iter().any(|s| s.is_nan()) {
            return None;
        }
        Some(found)
    }
}

/// [`pairs`].
fn derive<'a>(pieces: &[(&'a str, f32, u128)]) -> Option<Pairs<'a>> {
    let Distinct { index, score_of, frozen, last_id } = Distinct::of(pieces)?;
    let rank_of = score_ranks(score_of.iter().copied());

    // (where the piece is cut, rank, the piece they make, left's and right's indices when they are pieces,
    // else NONE), in the order the Python loop writes its dict; each piece's splits one after the other
    // (`ranges`). Five u32s, not the two texts and three words: a quarter of the memory to fill and read.
    const NONE: u32 = u32::MAX;
    type Split = (u32, u32, u32, u32, u32);
    let index_of = |at: Option<usize>| at.map_or(Some(NONE), |i| u32::try_from(i).ok());
    let order = &index.texts;
    let mut splits: Vec<Split> = Vec::with_capacity(order.len() * 2);
    let mut ranges: Vec<(u32, u32, u32)> = Vec::with_capacity(order.len()); // (rank, start, end)
    let mut suffixes: Vec<u64> = Vec::new();
    for (made, &text) in order.iter().enumerate() {
        if frozen[made] {
            continue;
        }
        let rank = rank_of[made];
        let start = splits.len();
        for (cut, prefix, suffix) in TextIndex::cuts(text, &mut suffixes) {
            let (left, right) = text.split_at(cut);
            let left_at = index.get_prefix(left, prefix);
            if !(left_at.is_some() || single(left)) {
                continue; // (the right part is not looked up: most cuts of a long piece end here)
            }
            let right_at = index.get_suffix(right, suffix);
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
        merges.push((chosen.0, chosen.1));
        merge_ids.push((last_id[chosen.2], last_id[chosen.3], last_id[made]));
        made_yet[made] = true;
    }
    let text_of = |(cut, rank, made, ..): Split| {
        let (left, right) = order[made as usize].split_at(cut as usize);
        (left, right, rank)
    };
    let ranks = splits.into_iter().map(text_of).collect();
    Some(Pairs { ranks, merges, merge_ids })
}

/// The distinct normal and user-defined texts of a `.model` by index (in the order they first appear),
/// found by two hashes of their bytes: one taken forwards, one backwards (FNV-1a), each extended a byte at
/// a time. [`derive`] looks up both parts of every cut of every piece, a prefix and a suffix of it: their
/// hashes come one step each from the last cut's, where hashing each part again (and a general-purpose map)
/// was half of `inspect`'s merge figures. A hash only picks the slot: texts are compared whole.
struct TextIndex<'a> {
    texts: Vec<&'a str>,
    /// Each text's (forward, backward) hash.
    hashes: Vec<(u64, u64)>,
    /// 1 + an index into `texts`, or 0 for an empty slot, placed by forward hash; the same by backward
    /// hash. A power of two long, at most half full.
    by_forward: Vec<u32>,
    by_backward: Vec<u32>,
}

impl<'a> TextIndex<'a> {
    const SEED: u64 = 0xcbf2_9ce4_8422_2325;

    fn step(hash: u64, byte: u8) -> u64 {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    }

    /// `out[k]`: the backward hash of `raw[k..]`, for k in 0..=len.
    fn suffix_hashes(raw: &[u8], out: &mut Vec<u64>) {
        out.clear();
        out.resize(raw.len() + 1, Self::SEED);
        for k in (0..raw.len()).rev() {
            out[k] = Self::step(out[k + 1], raw[k]);
        }
    }

    /// Each cut of `text` between two characters: (where, the forward hash of the part before it, the
    /// backward hash of the part after it); `suffixes` is room for the latter.
    fn cuts<'t>(text: &'t str, suffixes: &'t mut Vec<u64>) -> impl Iterator<Item = (usize, u64, u64)> + 't {
        let raw = text.as_bytes();
        Self::suffix_hashes(raw, suffixes);
        let suffixes = &*suffixes;
        let mut prefix = Self::SEED;
        (1..raw.len()).filter_map(move |cut| {
            prefix = Self::step(prefix, raw[cut - 1]);
            // (A byte 10xxxxxx continues a character: no cut before it.)
            (raw[cut] & 0xC0 != 0x80).then_some((cut, prefix, suffixes[cut]))
        })
    }

    fn with_capacity(count: usize) -> Self {
        let slots = (count.max(1) * 2).next_power_of_two();
        TextIndex {
            texts: Vec::with_capacity(count),
            hashes: Vec::with_capacity(count),
            by_forward: vec![0; slots],
            by_backward: vec![0; slots],
        }
    }

    /// The first slot to probe for `hash` (its bits mixed: FNV's low bits alone are weak).
    fn home(&self, hash: u64) -> usize {
        let bits = self.by_forward.len().trailing_zeros();
        (hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits.max(1))) as usize
            & (self.by_forward.len() - 1)
    }

    /// The slot holding `text` (whose hash, forward or backward as `backward` says, is `hash`) in `slots`,
    /// or the empty slot where it would go.
    fn slot(&self, slots: &[u32], hash: u64, backward: bool, text: &str) -> usize {
        let mask = slots.len() - 1;
        let mut at = self.home(hash);
        loop {
            let entry = slots[at];
            if entry == 0 {
                return at;
            }
            let i = entry as usize - 1;
            let (forward_hash, backward_hash) = self.hashes[i];
            if (if backward { backward_hash } else { forward_hash }) == hash && self.texts[i] == text {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    fn found(slots: &[u32], at: usize) -> Option<usize> {
        (slots[at] != 0).then(|| slots[at] as usize - 1)
    }

    /// The index of `text`, whose forward hash is `hash`.
    fn get_prefix(&self, text: &str, hash: u64) -> Option<usize> {
        Self::found(&self.by_forward, self.slot(&self.by_forward, hash, false, text))
    }

    /// The index of `text`, whose backward hash is `hash`.
    fn get_suffix(&self, text: &str, hash: u64) -> Option<usize> {
        Self::found(&self.by_backward, self.slot(&self.by_backward, hash, true, text))
    }

    /// The index of `text`, added when absent (the bool: whether it was added).
    fn insert(&mut self, text: &'a str) -> (usize, bool) {
        let forward = text.bytes().fold(Self::SEED, Self::step);
        let at = self.slot(&self.by_forward, forward, false, text);
        if let Some(i) = Self::found(&self.by_forward, at) {
            return (i, false);
        }
        let backward = text.bytes().rev().fold(Self::SEED, Self::step);
        let back_at = self.slot(&self.by_backward, backward, true, text);
        self.texts.push(text);
        self.hashes.push((forward, backward));
        // (At most one entry per piece, and `derive` checked that a u32 counts the pieces.)
        let entry = self.texts.len() as u32;
        self.by_forward[at] = entry;
        self.by_backward[back_at] = entry;
        (self.texts.len() - 1, true)
    }
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
    fn a_piece_reads_the_same_in_sentencepiece_s_layout_and_any_other() {
        let mut messages = vec![piece_message("▁the".as_bytes(), -1.5, 1), piece_message(b"a", 2.0, 4)];
        let (mut no_type, mut long_type, mut long_text) = (Vec::new(), Vec::new(), Vec::new());
        field(1, 2, b"ab", &mut no_type);
        field(2, 5, &3.5f32.to_le_bytes(), &mut no_type);
        messages.push(no_type.clone());
        field(1, 2, b"ab", &mut long_type);
        field(2, 5, &3.5f32.to_le_bytes(), &mut long_type);
        field(3, 0, &[0x86, 0x01], &mut long_type); // type 134: a two-byte varint
        messages.push(long_type);
        field(1, 2, &[b'x'; 200], &mut long_text); // a text of 200 bytes: a two-byte size
        field(2, 5, &1.0f32.to_le_bytes(), &mut long_text);
        messages.push(long_text);
        let mut extra = no_type.clone();
        field(9, 0, &[1], &mut extra); // an unknown field after the score
        messages.push(extra);
        let mut reordered = Vec::new();
        field(2, 5, &1.0f32.to_le_bytes(), &mut reordered);
        field(1, 2, b"b", &mut reordered);
        messages.push(reordered);
        messages.push(piece_message(&[0xFF, 0xFE], 1.0, 1)); // not UTF-8: None both ways
        messages.push(piece_message(b"cut", 1.0, 1)[..6].to_vec()); // cut short
        for message in &messages {
            assert_eq!(piece(message), piece_fields(message), "{message:?}");
        }
        assert_eq!(piece(&messages[2]), Some(("ab", 3.5, 1)));
        assert_eq!(piece(&messages[3]), Some(("ab", 3.5, 134)));
    }

    #[test]
    fn merge_ids_are_derive_s() {
        // Random pieces over a few characters of 1-3 bytes: duplicates, ties (0.0 and -0.0 among them),
        // user-defined and byte pieces; `merge_ids` (in rank order, stopping early) against `derive`.
        let alphabet = ["a", "b", "\u{2581}", "é", "中"];
        let scores = [0.0f32, -0.0, -1.0, -2.0, -3.5, 1.0];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut compared = 0;
        for _ in 0..1000 {
            let count = 1 + next(40);
            let texts: Vec<String> = (0..count)
                .map(|_| (0..1 + next(4)).map(|_| alphabet[next(alphabet.len())]).collect())
                .collect();
            let pieces: Vec<(&str, f32, u128)> = texts
                .iter()
                .map(|t| {
                    let kind = [NORMAL, NORMAL, NORMAL, NORMAL, USER_DEFINED, BYTE][next(6)];
                    let score = if next(3) == 0 { scores[next(scores.len())] } else { -(next(50) as f32) };
                    (t.as_str(), score, kind)
                })
                .collect();
            let found = merge_ids(&pieces);
            assert_eq!(found, derive(&pieces).map(|found| found.merge_ids), "{pieces:?}");
            compared += found.map_or(0, |ids| ids.len());
        }
        assert!(compared > 2000, "{compared} merges compared");
    }

    #[test]
    fn an_empty_file_has_no_pieces() {
        assert_eq!(parse(b"").unwrap(), Model::default());
    }

    #[test]
    fn score_ranks_count_the_distinct_higher_scores() {
        // (How many distinct scores are higher, counted plainly.)
        let plain = |scores: &[f32]| -> Vec<u32> {
            let mut distinct: Vec<f32> = scores.to_vec();
            distinct.sort_by(|a, b| b.total_cmp(a));
            distinct.dedup();
            scores.iter().map(|&s| distinct.partition_point(|&d| d > s) as u32).collect()
        };
        let scores = [-1.0, 0.0, -0.0, 2.5, -1.0, -7.0, 0.0];
        assert_eq!(score_ranks(scores.iter().copied()), plain(&scores));
        assert_eq!(plain(&scores), vec![2, 1, 1, 0, 2, 3, 1]);
        // Listed highest first (the walk without a sort), with equal scores and both zeros.
        let sorted = [2.5, 0.0, -0.0, 0.0, -1.0, -1.0, -7.0];
        assert_eq!(score_ranks(sorted.iter().copied()), plain(&sorted));
        assert_eq!(plain(&sorted), vec![0, 1, 1, 1, 2, 2, 3]);
        // Highest first but for the last: sorted.
        let almost = [3.0, 2.0, 1.0, 0.5, 4.0];
        assert_eq!(score_ranks(almost.iter().copied()), plain(&almost));
        assert!(score_ranks(std::iter::empty()).is_empty());
        // The places in rank order: a stable sort by rank.
        for scores in [&scores[..], &sorted[..], &almost[..]] {
            let (ranks, order) = score_order(scores.iter().copied());
            let mut stable: Vec<u32> = (0..scores.len() as u32).collect();
            stable.sort_by_key(|&i| ranks[i as usize]);
            assert_eq!(order, stable);
        }
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
