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
}

/// True for a text of one character.
fn single(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some() && chars.next().is_none()
}

/// The pairs of `pieces` (text, score, type), or None when a piece that merges has a NaN score (ranks
/// then follow Python's sort of NaNs: the Python loader derives those).
pub fn pairs<'a>(pieces: &[(&'a str, f32, u128)]) -> Option<Pairs<'a>> {
    // The normal and user-defined texts by index, in the order they first appear: each one's last score,
    // and whether it is user-defined (frozen). A text is hashed once here and once per split below; what
    // follows works on the indices (a third of the time went to looking the same texts up again).
    let mut index: FxHashMap<&str, usize> = FxHashMap::default();
    let mut order: Vec<&str> = Vec::new();
    let mut score_of: Vec<f32> = Vec::new();
    let mut frozen: Vec<bool> = Vec::new();
    for &(text, score, kind) in pieces {
        if kind != NORMAL && kind != USER_DEFINED {
            continue;
        }
        let i = *index.entry(text).or_insert_with(|| {
            order.push(text);
            score_of.push(score);
            frozen.push(false);
            order.len() - 1
        });
        score_of[i] = score;
        frozen[i] |= kind == USER_DEFINED;
    }
    if score_of.iter().any(|s| s.is_nan()) {
        return None;
    }
    let mut distinct: Vec<f32> = score_of.clone();
    distinct.sort_by(|a, b| b.total_cmp(a));
    distinct.dedup(); // (-0.0 == 0.0, one value as in a Python set)
    let rank_of = |score: f32| distinct.partition_point(|&s| s > score) as u32;

    // (left, right, rank, the piece they make, left's and right's indices when they are pieces), in the
    // order the Python loop writes its dict.
    type Split<'a> = (&'a str, &'a str, u32, usize, Option<usize>, Option<usize>);
    let mut splits: Vec<Split<'a>> = Vec::new();
    for (made, &text) in order.iter().enumerate() {
        if frozen[made] {
            continue;
        }
        let rank = rank_of(score_of[made]);
        for (cut, _) in text.char_indices().skip(1) {
            let (left, right) = text.split_at(cut);
            let (left_at, right_at) = (index.get(left).copied(), index.get(right).copied());
            if (single(left) || left_at.is_some()) && (single(right) || right_at.is_some()) {
                splits.push((left, right, rank, made, left_at, right_at));
            }
        }
    }

    // PieceModel._find_piece_merges: by rank (stable), the pairs of two pieces grouped by the piece made.
    let mut sorted: Vec<usize> = (0..splits.len()).collect();
    sorted.sort_by_key(|&n| splits[n].2);
    // (left, right, their indices) of the pairs making each piece, by the piece's index.
    type Group<'a> = (usize, Vec<(&'a str, &'a str, usize, usize)>);
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut group_of: Vec<usize> = vec![usize::MAX; order.len()];
    for n in sorted {
        let (left, right, _, made, left_at, right_at) = splits[n];
        if let (Some(l), Some(r)) = (left_at, right_at) {
            if group_of[made] == usize::MAX {
                group_of[made] = groups.len();
                groups.push((made, Vec::new()));
            }
            groups[group_of[made]].1.push((left, right, l, r));
        }
    }
    let mut made_yet: Vec<bool> = vec![false; order.len()];
    let mut merges = Vec::with_capacity(groups.len());
    for (made, pairs) in &groups {
        let ready = |part: &str, at: usize| made_yet[at] || single(part) || frozen[at];
        let chosen = pairs.iter().find(|&&(l, r, li, ri)| ready(l, li) && ready(r, ri)).unwrap_or(&pairs[0]);
        merges.push((chosen.0, chosen.1));
        made_yet[*made] = true;
    }
    let ranks = splits.into_iter().map(|(left, right, rank, ..)| (left, right, rank)).collect();
    Some(Pairs { ranks, merges })
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
}
