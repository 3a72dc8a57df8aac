//! Reading a Hugging Face `tokenizer.json` fast, for bpe_studio/engine/formats/hf.py (`read_hf_json`), whose
//! `json.load` reading stays the reference: the 50k-250k entries of `model.vocab` and `model.merges` are
//! read here (serde_json, in one pass over the bytes) into flat buffers, and the rest of the document is
//! handed back as JSON text, with those two values written as `null`, for Python's `json.loads` to parse
//! (a few kB), so every other key is read exactly as the reference reads it.
//!
//! Anything this reader does not take as it is gives None, and the Python side reads the whole file with
//! `json.load` instead, so that both paths accept the same files and fail with the same messages: a
//! document that is not an object, a key listed twice (Python keeps the last), no `model` object with a
//! `vocab` object of ids (integers 0..2^32) and a `merges` list (of strs, or of lists of two strs), and any
//! JSON that serde_json refuses (which is stricter than Python's: `NaN`, lone surrogates, nesting deeper
//! than 128).

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// One merge as the file writes it: `"left right"` (`pair` false: the text is `text[start..end]`) or
/// `["left", "right"]` (`pair` true: `text[start..cut]` and `text[cut..end]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Merge {
    pub start: usize,
    pub cut: usize,
    pub end: usize,
    pub pair: bool,
}

/// A `tokenizer.json` read by [`parse`].
#[derive(Debug, Default, PartialEq)]
pub struct Document {
    /// The document as JSON text, `model.vocab` and `model.merges` written as `null`.
    pub rest: String,
    /// The vocab's keys (decoded), one after the other, in file order; `key_ends[n]` ends the n-th.
    pub keys: String,
    pub key_ends: Vec<usize>,
    /// Each key's id.
    pub ids: Vec<u32>,
    /// The merges' texts (decoded), one after the other; `merges` cuts them.
    pub merge_text: String,
    pub merges: Vec<Merge>,
}

impl Document {
    /// The n-th vocab key.
    pub fn key(&self, n: usize) -> &str {
        let start = if n == 0 { 0 } else { self.key_ends[n - 1] };
        &self.keys[start..self.key_ends[n]]
    }
}

/// The document of `text`, or None when the Python reader must read it (see the module's docs).
pub fn parse(text: &str) -> Option<Document> {
    let mut document = Document::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(Top(&mut document)).ok()?;
    deserializer.end().ok()?;
    Some(document)
}

/// A str, borrowed from the input when it has no escapes.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Appends `key` (a JSON string) and a colon to `rest`, after a comma unless it is the object's first.
fn write_key(rest: &mut String, key: &str, first: bool) -> Result<(), serde_json::Error> {
    if !first {
        rest.push(',');
    }
    rest.push_str(&serde_json::to_string(key)?);
    rest.push(':');
    Ok(())
}

/// The top-level object.
struct Top<'d>(&'d mut Document);

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: FxHashSet<Cow<'de, str>> = FxHashSet::default();
        let mut model = false;
        self.0.rest.push('{');
        while let Some(key) = map.next_key_seed(Text)? {
            write_key(&mut self.0.rest, &key, seen.is_empty()).map_err(de::Error::custom)?;
            if key == "model" {
                map.next_value_seed(Model(&mut *self.0))?;
                model = true;
            } else {
                let raw: &RawValue = map.next_value()?;
                self.0.rest.push_str(raw.get());
            }
            if !seen.insert(key) {
                return Err(de::Error::custom("a key listed twice"));
            }
        }
        if !model {
            return Err(de::Error::custom("no model"));
        }
        self.0.rest.push('}');
        Ok(())
    }
}

/// The `model` object: its vocab and merges into the document's buffers, the rest into its text.
struct Model<'d>(&'d mut Document);

impl<'de> DeserializeSeed<'de> for Model<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Model<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a model object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: FxHashSet<Cow<'de, str>> = FxHashSet::default();
        let document = self.0;
        document.rest.push('{');
        while let Some(key) = map.next_key_seed(Text)? {
            write_key(&mut document.rest, &key, seen.is_empty()).map_err(de::Error::custom)?;
            match key.as_ref() {
                "vocab" => {
                    map.next_value_seed(Vocab(&mut *document))?;
                    document.rest.push_str("null");
                }
                "merges" => {
                    map.next_value_seed(Merges(&mut *document))?;
                    document.rest.push_str("null");
                }
                _ => {
                    let raw: &RawValue = map.next_value()?;
                    document.rest.push_str(raw.get());
                }
            }
            if !seen.insert(key) {
                return Err(de::Error::custom("a key listed twice"));
            }
        }
        if !seen.contains("vocab") || !seen.contains("merges") {
            return Err(de::Error::custom("no vocab or merges"));
        }
        document.rest.push('}');
        Ok(())
    }
}

/// `model.vocab`: an object of token -> id.
struct Vocab<'d>(&'d mut Document);

impl<'de> DeserializeSeed<'de> for Vocab<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Vocab<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of token -> id")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let document = self.0;
        let mut seen: FxHashSet<Cow<'de, str>> = FxHashSet::default();
        while let Some(key) = map.next_key_seed(Text)? {
            let id = map.next_value_seed(Id)?;
            document.keys.push_str(&key);
            document.key_ends.push(document.keys.len());
            document.ids.push(id);
            if !seen.insert(key) {
                return Err(de::Error::custom("a key listed twice"));
            }
        }
        Ok(())
    }
}

/// An id: an integer in 0..2^32 (anything else is left to the Python reader, which names it).
struct Id;

impl<'de> DeserializeSeed<'de> for Id {
    type Value = u32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u32, D::Error> {
        deserializer.deserialize_u64(self)
    }
}

impl<'de> Visitor<'de> for Id {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an id")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
        u32::try_from(v).map_err(|_| E::custom("an id beyond 2^32"))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
        u32::try_from(v).map_err(|_| E::custom("a negative id"))
    }
}

/// `model.merges`: a list of merges.
struct Merges<'d>(&'d mut Document);

impl<'de> DeserializeSeed<'de> for Merges<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Merges<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let document = self.0;
        while seq.next_element_seed(OneMerge(&mut *document))?.is_some() {}
        Ok(())
    }
}

/// One merge: `"left right"` or `["left", "right"]`.
struct OneMerge<'d>(&'d mut Document);

impl<'de> DeserializeSeed<'de> for OneMerge<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OneMerge<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let document = self.0;
        let start = document.merge_text.len();
        document.merge_text.push_str(v);
        let end = document.merge_text.len();
        document.merges.push(Merge { start, cut: end, end, pair: false });
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let document = self.0;
        let (Some(left), Some(right)) = (seq.next_element_seed(Text)?, seq.next_element_seed(Text)?) else {
            return Err(de::Error::custom("a merge of fewer than two parts"));
        };
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("a merge of more than two parts"));
        }
        let start = document.merge_text.len();
        document.merge_text.push_str(&left);
        let cut = document.merge_text.len();
        document.merge_text.push_str(&right);
        document.merges.push(Merge { start, cut, end: document.merge_text.len(), pair: true });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vocab_and_merges_and_keeps_the_rest_as_text() {
        let text = r#"{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b\u0021": 1},
            "merges": ["a b!", ["a", "b"]], "dropout": null}, "added_tokens": [{"id": 2}]}"#;
        let found = parse(text).unwrap();
        assert_eq!(
            found.rest,
            r#"{"version":"1.0","model":{"type":"BPE","vocab":null,"merges":null,"dropout":null},"added_tokens":[{"id": 2}]}"#
        );
        assert_eq!((found.key(0), found.key(1), found.ids.clone()), ("a", "b!", vec![0, 1]));
        assert_eq!(found.merge_text, "a b!ab");
        assert_eq!(
            found.merges,
            vec![
                Merge { start: 0, cut: 4, end: 4, pair: false },
                Merge { start: 4, cut: 5, end: 6, pair: true }
            ]
        );
    }

    #[test]
    fn leaves_what_it_does_not_take_to_python() {
        let good = r#"{"model": {"vocab": {"a": 0}, "merges": []}}"#;
        assert!(parse(good).is_some());
        for bad in [
            "[]",
            r#"{"model": []}"#,
            r#"{"model": {"vocab": {"a": 0}}}"#,
            r#"{"model": {"merges": []}}"#,
            r#"{"model": {"vocab": {"a": 0, "a": 1}, "merges": []}}"#,
            r#"{"model": {"vocab": {"a": -1}, "merges": []}}"#,
            r#"{"model": {"vocab": {"a": 1.0}, "merges": []}}"#,
            r#"{"model": {"vocab": {"a": 4294967296}, "merges": []}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [1]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [["a"]]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [["a", "b", "c"]]}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": []}, "model": {}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": [], "vocab": {}}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": []}, "x": NaN}"#,
            r#"{"model": {"vocab": {"\ud800": 0}, "merges": []}}"#,
            r#"{"model": {"vocab": {"a": 0}, "merges": []}} x"#,
            "\u{feff}{\"model\": {\"vocab\": {}, \"merges\": []}}",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}
