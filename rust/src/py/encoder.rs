//! `Encoder`: the core's encoder (src/encode.rs) for Python, the native half of `Tokenizer`
//! (bpe_studio/engine/encoding/tokenizer.py).

use std::sync::OnceLock;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyType};
use rustc_hash::FxHashMap;

use super::count_table::{CountTable, PartedChunks};
use super::{or_code_point, scanner, strings, without_gil, MergeTable};
use crate::encode;

/// Native BPE encoder and decoder of one `Tokenizer`, built once from its tables.
///
/// Args:
///     byte_ids: the token id of each byte 0-255.
///     merges: (left id, right id, merged id) in rank order.
///     whole: for `ignore_merges`, ordinary token bytes -> id; None otherwise.
///     decoder: each id's token bytes, None for an unused id.
///     cache_size: how many pre-tokens' ids to remember.
#[pyclass(module = "bpe_studio._native", frozen)]
pub struct Encoder {
    inner: encode::Encoder,
    /// A Python int for every id, made on first use: a list of ids is then built with reference counts
    /// alone. Making an int object per id was most of the time the GIL is held after a batch was encoded
    /// (a third of a 2-thread batch's wall time, which no second thread shortens: issue 22).
    ints: OnceLock<Vec<Py<PyAny>>>,
}

/// Each id's bytes from a list of bytes objects (None for an unused id). Each buffer is copied as it is:
/// extracting Vec<u8> would go through the sequence protocol, one int at a time (most of the time of a
/// 200k-token rank file's load).
fn decoder_bytes(decoder: &Bound<'_, PyList>) -> PyResult<Vec<Option<Vec<u8>>>> {
    decoder
        .iter()
        .map(|item| {
            if item.is_none() {
                Ok(None)
            } else {
                Ok(Some(item.downcast::<PyBytes>()?.as_bytes().to_vec()))
            }
        })
        .collect()
}

/// A batch's texts as `&str` for the native threads (a lone surrogate raises UnicodeEncodeError), after
/// checking that `threads` is at least 1.
fn batch_strs<'a>(owned: &'a [Bound<'_, PyString>], threads: usize) -> PyResult<Vec<&'a str>> {
    let strs = owned.iter().map(|s| s.to_str()).collect::<PyResult<Vec<&str>>>()?;
    if threads == 0 {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    Ok(strs)
}

impl Encoder {
    fn wrap(inner: encode::Encoder) -> Encoder {
        Encoder { inner, ints: OnceLock::new() }
    }

    /// `ids` as a Python list of ints, through the shared int objects.
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let ints = match self.ints.get() {
            Some(ints) => ints,
            None => {
                let made = (0..self.inner.vocab_len() as u32)
                    .map(|i| Ok(i.into_pyobject(py)?.into_any().unbind()))
                    .collect::<PyResult<Vec<_>>>()?;
                self.ints.get_or_init(|| made)
            }
        };
        if ids.iter().all(|&i| (i as usize) < ints.len()) {
            return PyList::new(py, ids.iter().map(|&i| ints[i as usize].bind(py)));
        }
        PyList::new(py, ids) // an id beyond the table (none is): ints made one by one
    }
}

/// Python's cyclic garbage collector switched off while it lives, then back on if it was on (it is made and
/// dropped with the GIL held). Making a batch's lists (of ints only, which hold no cycle) set off a
/// collection every 700 of them, each later one going over the earlier lists again, and a full one most
/// batches: a sixth of a 2-thread batch's wall time on English documents, on the one thread that holds the
/// GIL (issue 22). Paused for the whole batch, the lists are looked at once, by the next collection. Other
/// Python threads that run while the batch's threads encode (the GIL is released) find the collector off
/// until the batch ends, as after `gc.disable()`; nothing is lost, a collection comes later.
struct GcPause(bool);

impl GcPause {
    fn new(_py: Python<'_>) -> GcPause {
        // SAFETY: called with the GIL held (the token proves it); PyGC_Disable only sets a flag.
        GcPause(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: dropped where it was made, with the GIL still held.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

#[pymethods]
impl Encoder {
    #[new]
    #[pyo3(signature = (byte_ids, merges, whole, decoder, *, cache_size))]
    fn new(
        byte_ids: Vec<u32>,
        merges: &Bound<'_, PyAny>,
        whole: Option<FxHashMap<Vec<u8>, u32>>,
        decoder: &Bound<'_, PyList>,
        cache_size: usize,
    ) -> PyResult<Self> {
        let byte_ids: [u32; 256] = byte_ids.try_into().map_err(|v: Vec<u32>| {
            PyValueError::new_err(format!("byte_ids: need 256 ids, got {}", v.len()))
        })?;
        let decoder = decoder_bytes(decoder)?;
        // A MergeTable's ids as they are (a loader's, read natively), else a list of triples.
        let inner = if let Ok(table) = merges.downcast::<MergeTable>() {
            let ids = table
                .get()
                .id_triples(merges.py())?
                .ok_or_else(|| PyValueError::new_err("merges: a MergeTable without ids; give its ids()"))?;
            encode::Encoder::new(byte_ids, ids, whole, &decoder, cache_size)
        } else {
            let ids: Vec<(u32, u32, u32)> = merges.extract()?;
            encode::Encoder::new(byte_ids, &ids, whole, &decoder, cache_size)
        };
        Ok(Encoder::wrap(inner))
    }

    /// The encoder of tiktoken's rule: any two adjacent parts whose concatenation is an ordinary token merge,
    /// the token of lowest id first (see src/encode.rs).
    ///
    /// Args:
    ///     byte_ids: the token id of each byte 0-255.
    ///     decoder: each id's token bytes, None for an unused id.
    ///     special_ids: the ids of the special tokens (never merged into).
    ///     ignore_merges: a pre-token whose bytes are an ordinary token is taken whole.
    ///     cache_size: how many pre-tokens' ids to remember.
    #[classmethod]
    #[pyo3(signature = (byte_ids, decoder, special_ids, *, ignore_merges, cache_size))]
    fn with_ranks(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        byte_ids: Vec<u32>,
        decoder: &Bound<'_, PyList>,
        special_ids: Vec<u32>,
        ignore_merges: bool,
        cache_size: usize,
    ) -> PyResult<Self> {
        let byte_ids: [u32; 256] = byte_ids.try_into().map_err(|v: Vec<u32>| {
            PyValueError::new_err(format!("byte_ids: need 256 ids, got {}", v.len()))
        })?;
        // Each bytes object straight into one arena (no buffer per token: a rank file has 100k-200k).
        let mut arena = encode::TokenArena::with_capacity(decoder.len(), 0);
        for item in decoder.iter() {
            if item.is_none() {
                arena.push(None);
            } else {
                arena.push(Some(item.downcast::<PyBytes>()?.as_bytes()));
            }
        }
        let inner = without_gil(py, || {
            encode::Encoder::with_ranks_arena(byte_ids, arena, &special_ids, ignore_merges, cache_size)
        })?;
        Ok(Encoder::wrap(inner))
    }

    /// Under tiktoken's rule, each multi-byte token's merge as (left id, right id, id) by rank: the two
    /// parts tiktoken's BPE ends with on the token's bytes with only lower ranks (none when it ends with
    /// more). Empty for an encoder of merges.
    fn derive_merges(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32, u32)>> {
        without_gil(py, || self.inner.derive_merges())
    }

    /// Under tiktoken's rule, (merges, deepest id, its height) of the merges `derive_merges` gives, without
    /// making them Python objects (what `bpe-studio inspect` prints); None for an encoder of merges.
    fn merge_summary(&self, py: Python<'_>) -> PyResult<Option<(usize, u32, u32)>> {
        without_gil(py, || self.inner.merge_summary())
    }

    /// The ids of the pre-tokens, one after the other.
    fn encode<'py>(&self, py: Python<'py>, pieces: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
        let owned = strings(pieces)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        let ids = without_gil(py, || self.inner.encode(&strs))?;
        self.id_list(py, &ids)
    }

    /// The ids of the pre-tokens and how many ids each pre-token has: (ids, counts).
    fn encode_counts(&self, py: Python<'_>, pieces: &Bound<'_, PyList>) -> PyResult<(Vec<u32>, Vec<usize>)> {
        let owned = strings(pieces)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        without_gil(py, || self.inner.encode_counts(&strs))
    }

    /// Each word's ids, the word merged whole as one pre-token (`words`: bytes spelled as latin-1 str, one
    /// code point per byte, as the counting phase keys them), cut where no token can span and the parts
    /// encoded through the cache (src/encode_cut.rs): (the ids one after the other as native-endian 32-bit
    /// integers, for `array("I").frombytes`; each word's number of ids). A code point above 255 raises
    /// ValueError.
    fn encode_words<'py>(
        &self,
        py: Python<'py>,
        words: &Bound<'py, PyList>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<u32>)> {
        let owned = strings(words)?;
        let mut latin: Vec<Vec<u8>> = Vec::new();
        let mut which: Vec<(bool, usize)> = Vec::with_capacity(owned.len());
        let texts: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        for text in &texts {
            if text.is_ascii() {
                which.push((true, 0));
            } else {
                let bytes = text.chars().map(u8::try_from).collect::<Result<Vec<u8>, _>>().map_err(|_| {
                    PyValueError::new_err("encode_words: a word holds a code point above 255")
                })?;
                which.push((false, latin.len()));
                latin.push(bytes);
            }
        }
        let raw: Vec<&[u8]> = texts
            .iter()
            .zip(&which)
            .map(|(text, &(ascii, at))| if ascii { text.as_bytes() } else { latin[at].as_slice() })
            .collect();
        let (ids, lengths) = without_gil(py, || self.inner.encode_words(&raw))?;
        Ok((ne_bytes(py, &ids)?, lengths))
    }

    /// `encode_words` over the keys of count tables, one after the other, each emptied (and its memory
    /// given back once its keys are encoded): (ids as in `encode_words`, each key's number of ids, each
    /// key's count). A key in two tables comes twice. A superword run's stage 2 goes from its counting
    /// threads' tables to the merge loop's flat words this way, with no Python object per chunk and
    /// without merging the tables first (src/encode_cut.rs, `encode_tables`).
    fn encode_tables<'py>(
        &self,
        py: Python<'py>,
        tables: Vec<PyRefMut<'py, CountTable>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<u32>, Vec<i64>)> {
        let taken: Vec<_> = tables.into_iter().map(|mut t| std::mem::take(&mut t.inner)).collect();
        // The tables are encoded at the same time, one thread each; their ids are laid end to end here.
        let parts = without_gil(py, move || self.inner.encode_tables_apart(taken))?;
        flat_words(py, parts)
    }

    /// `encode_tables` of the tables that `parted` holds split (`split_chunks`), which takes them: the
    /// same (ids, lengths, counts); each distinct part is encoded once, on `threads` threads
    /// (src/encode_cut.rs, `encode_parted`).
    fn encode_parted<'py>(
        &self,
        py: Python<'py>,
        mut parted: PyRefMut<'py, PartedChunks>,
        threads: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<u32>, Vec<i64>)> {
        let Some(taken) = parted.inner.take() else {
            return Err(PyValueError::new_err("the chunks were already taken"));
        };
        let parts = without_gil(py, move || self.inner.encode_parted(taken, threads))?;
        flat_words(py, parts)
    }

    /// The ids of a whole text under a native scanner (`gpt2`, `cl100k`, `llama3`, ...): the native scanner
    /// splits it and each pre-token goes through the cache, all without the GIL.
    ///
    /// `classes` is the class table of bpe_studio/engine/native.py. Returns the ids, or the first code
    /// point beyond the table as an int (the caller extends the table and calls again). A str with a lone
    /// surrogate raises UnicodeEncodeError.
    fn encode_text(
        &self,
        py: Python<'_>,
        preset: &str,
        text: &Bound<'_, PyString>,
        classes: &[u8],
    ) -> PyResult<PyObject> {
        let scan = scanner(preset)?;
        let text = text.to_str()?;
        let found = without_gil(py, || self.inner.encode_text(scan, text, classes))?;
        or_code_point(py, found, |ids| Ok(self.id_list(py, &ids)?.into_any().unbind()))
    }

    /// The ids of each text (as `encode_text`), the texts shared out among up to `threads` native threads
    /// (in chunks, all reading one cache): a list of lists in the texts' order, or the first code
    /// point beyond the table as an int. The calling thread encodes chunks too, and between two of its
    /// own makes the lists (with the GIL) of those the other threads finished (see
    /// `encode::Encoder::encode_batch_chunks`).
    #[pyo3(signature = (preset, texts, classes, *, threads))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        preset: &str,
        texts: &Bound<'_, PyList>,
        classes: &[u8],
        threads: usize,
    ) -> PyResult<PyObject> {
        let (scan, owned) = (scanner(preset)?, strings(texts)?);
        let strs = batch_strs(&owned, threads)?;
        // Each text's list, put in its place when its chunk comes (the chunks come in any order).
        let mut lists: Vec<Option<Py<PyList>>> = (0..strs.len()).map(|_| None).collect();
        let _paused = GcPause::new(py);
        let found = without_gil(py, || {
            self.inner.encode_batch_chunks(scan, &strs, classes, threads, &mut |chunk| {
                Python::with_gil(|py| {
                    for (slot, ids) in lists[chunk.first..].iter_mut().zip(chunk.texts()) {
                        *slot = Some(self.id_list(py, ids)?.unbind());
                    }
                    Ok::<(), PyErr>(())
                })
            })
        })?;
        match found {
            Ok(()) => {
                let lists = lists.into_iter().map(|list| list.expect("every chunk is handed over"));
                Ok(PyList::new(py, lists)?.into_any().unbind())
            }
            Err(encode::BatchStop::CodePoint(code_point)) => {
                Ok(code_point.into_pyobject(py)?.into_any().unbind())
            }
            Err(encode::BatchStop::Taken(err)) => Err(err),
        }
    }

    /// `encode_batch` as two flat arrays instead of a list per text: the ids of all the texts one after the
    /// other (u32, native byte order) and `len(texts) + 1` offsets (i64, native byte order; text i's ids
    /// are `ids[offsets[i]:offsets[i + 1]]`), both as bytearrays (numpy views them without a copy, writable),
    /// or the first code point beyond the table as an int. No Python object per id or per text: the threads
    /// (the calling one among them) encode without the GIL, and the chunks' ids are copied once, straight
    /// into the bytearray, at the end (see `encode::Encoder::encode_batch_chunks`).
    #[pyo3(signature = (preset, texts, classes, *, threads))]
    fn encode_batch_flat(
        &self,
        py: Python<'_>,
        preset: &str,
        texts: &Bound<'_, PyList>,
        classes: &[u8],
        threads: usize,
    ) -> PyResult<PyObject> {
        let (scan, owned) = (scanner(preset)?, strings(texts)?);
        let strs = batch_strs(&owned, threads)?;
        let found = without_gil(py, || self.inner.encode_batch_all(scan, &strs, classes, threads))?;
        match found {
            Ok(chunks) => {
                let total: usize = chunks.iter().map(|chunk| chunk.ids.len()).sum();
                let ids = filled_bytearray(py, total * 4, |buf| {
                    // (Nothing but this function sees the new bytearray: its bytes are written without the GIL.)
                    py.allow_threads(|| encode::lay_out(buf, &chunks, threads, LAY_OUT_ALONE_BELOW));
                })?;
                let offsets = filled_bytearray(py, (strs.len() + 1) * 8, |buf| {
                    let mut slots = buf.chunks_exact_mut(8);
                    let mut put = |offset: usize| {
                        let slot = slots.next().expect("one slot per text and one more");
                        slot.copy_from_slice(&(offset as i64).to_ne_bytes());
                    };
                    put(0);
                    let mut base = 0;
                    for chunk in &chunks {
                        chunk.ends.iter().for_each(|&end| put(base + end));
                        base += chunk.ids.len();
                    }
                })?;
                Ok((ids, offsets).into_pyobject(py)?.into_any().unbind())
            }
            Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        }
    }

    /// The ids of the texts one after the other, `separator` (an id, if given) between two texts, as
    /// little-endian integers of `width` bytes (2 or 4) — the `.npy`/`.bin` rows of encode-corpus — or the
    /// first code point beyond the table as an int. One thread; the GIL is released, so Python threads can
    /// call it side by side.
    #[pyo3(signature = (preset, texts, classes, *, separator, width))]
    fn encode_join(
        &self,
        py: Python<'_>,
        preset: &str,
        texts: &Bound<'_, PyList>,
        classes: &[u8],
        separator: Option<u32>,
        width: usize,
    ) -> PyResult<PyObject> {
        let scan = scanner(preset)?;
        if width != 2 && width != 4 {
            return Err(PyValueError::new_err(format!("width must be 2 or 4 bytes, not {width}")));
        }
        let owned = strings(texts)?;
        let strs = batch_strs(&owned, 1)?;
        let found = without_gil(py, || self.inner.encode_join(scan, &strs, classes, separator, width))?;
        or_code_point(py, found, |raw| Ok(PyBytes::new(py, &raw).into_any().unbind()))
    }

    /// The number of pre-tokens in the fullest of the encoder's caches (one unless threads encoded at
    /// the same time).
    fn __len__(&self) -> usize {
        self.inner.cache_len()
    }

    /// Forgets the cached pre-token encodings.
    fn clear_cache(&self) {
        self.inner.clear_cache();
    }

    /// The concatenated bytes of the tokens, or the first id that is not in the vocabulary (an int).
    fn decode_bytes(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        // A list (what Tokenizer passes) is read item by item as it is decoded: one pass, no Vec of the
        // ids, no pass to size the output first (together 30% of decoding, issue 22). Anything else, or
        // an item that is not an int of 64 bits, takes the general path below, which raises as before.
        if let Ok(list) = ids.downcast::<PyList>() {
            let mut out = vec![0u8; list.len() * 4 + 16];
            let mut len = 0usize;
            let mut complete = true;
            for item in list.iter() {
                let Ok(id) = item.extract::<i64>() else {
                    complete = false;
                    break;
                };
                if !self.inner.append_token(id, &mut out, &mut len) {
                    return Ok(id.into_pyobject(py)?.into_any().unbind());
                }
            }
            if complete {
                return Ok(PyBytes::new(py, &out[..len]).into_any().unbind());
            }
        }
        let ids: Vec<i64> = ids.extract()?;
        let total = match without_gil(py, || self.inner.decoded_len(&ids))? {
            Ok(total) => total,
            Err(bad) => return Ok(bad.into_pyobject(py)?.into_any().unbind()),
        };
        let out = PyBytes::new_with(py, total, |buf| {
            self.inner.decode_into(&ids, buf);
            Ok(())
        })?;
        Ok(out.into_any().unbind())
    }
}

/// `ids` as native-endian 32-bit integers (for `array("I").frombytes`).
fn ne_bytes<'py>(py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, ids.len() * 4, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(4).zip(ids) {
            chunk.copy_from_slice(&id.to_ne_bytes());
        }
        Ok(())
    })
}

/// A batch of fewer ids is laid out by one thread (4 MB: less is copied before another thread would start).
const LAY_OUT_ALONE_BELOW: usize = 1 << 20;

/// A new bytearray of `len` bytes, every one of which `fill` writes. Unlike `PyByteArray::new_with`, the
/// bytes are not zeroed first: a flat batch's ids are tens of MB, and zeroing them was a pass over memory
/// with the GIL held on one thread, while the other threads had ended (issue 22).
fn filled_bytearray<'py>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> PyResult<Bound<'py, PyByteArray>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err("a batch's ids do not fit in a bytearray"))?;
    // SAFETY: with the GIL (the token proves it), PyByteArray_FromStringAndSize(NULL, n) makes a bytearray
    // of n bytes, not initialised, or returns NULL with an exception set (which from_owned_ptr_or_err
    // takes). Its buffer holds len bytes (plus the trailing NUL bytearray keeps), nothing else refers to
    // it yet, and `fill` writes all of them before Python can see it.
    unsafe {
        let made = pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), size);
        let array = Bound::from_owned_ptr_or_err(py, made)?.downcast_into_unchecked::<PyByteArray>();
        if len > 0 {
            let data = pyo3::ffi::PyByteArray_AsString(array.as_ptr()) as *mut u8;
            fill(std::slice::from_raw_parts_mut(data, len));
        }
        Ok(array)
    }
}

/// Flat words laid out in parts, end to end: (the ids as native 32-bit bytes, the lengths, the counts).
fn flat_words(
    py: Python<'_>,
    parts: Vec<(Vec<u32>, Vec<u32>, Vec<i64>)>,
) -> PyResult<(Bound<'_, PyBytes>, Vec<u32>, Vec<i64>)> {
    let total: usize = parts.iter().map(|(ids, _, _)| ids.len()).sum();
    let out = PyBytes::new_with(py, total * 4, |buf| {
        let mut chunks = buf.chunks_exact_mut(4);
        for id in parts.iter().flat_map(|(ids, _, _)| ids) {
            if let Some(chunk) = chunks.next() {
                chunk.copy_from_slice(&id.to_ne_bytes());
            }
        }
        Ok(())
    })?;
    let mut lengths = Vec::with_capacity(parts.iter().map(|(_, l, _)| l.len()).sum());
    let mut counts = Vec::with_capacity(lengths.capacity());
    for (ids, part_lengths, part_counts) in parts {
        drop(ids);
        lengths.extend(part_lengths);
        counts.extend(part_counts);
    }
    Ok((out, lengths, counts))
}
