//! The PyO3 bindings: the `bpe_studio._native` module (typed in bpe_studio/_native.pyi, which a test holds
//! to this module). Compiled only with the `python` feature. Each entry point converts its arguments,
//! runs the core (`crate::*`) without the GIL through `without_gil`, and turns the core's errors into
//! Python exceptions; no kernel logic lives here.

mod count_table;
mod encoder;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyStringData, PyTuple};
use rustc_hash::FxHashMap;

use crate::{bytelevel, cut_words, guard, merge, pretok, rankfile, spmodel};

/// Runs `f`, turning a panic (a bug of the kernel) into a RuntimeError that names its cause and place
/// (src/guard.rs). Every entry point that does work goes through here.
pub fn unpanic<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    guard::catch(f).map_err(PyRuntimeError::new_err)
}

/// `py.allow_threads(f)` through `unpanic`: `f` runs without the GIL, and a panic is a RuntimeError.
pub fn without_gil<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    unpanic(|| py.allow_threads(f))
}

/// The native scanner of a name (`pretok::SCANNERS`), or a ValueError naming them.
pub fn scanner(preset: &str) -> PyResult<pretok::Scanner> {
    pretok::scanner(preset).ok_or_else(|| {
        PyValueError::new_err(format!(
            "no native pre-tokenizer for {preset:?}; use one of {}",
            pretok::SCANNERS.join(", ")
        ))
    })
}

/// The list's items as str objects, whose UTF-8 views (`to_str`, no copy for ASCII ones) the caller
/// takes; a str with a lone surrogate raises UnicodeEncodeError there, which the Python side handles as
/// its own path does.
pub fn strings<'py>(list: &Bound<'py, PyList>) -> PyResult<Vec<Bound<'py, PyString>>> {
    list.iter().map(|t| t.downcast_into::<PyString>().map_err(PyErr::from)).collect()
}

/// `found` as a Python object: `ok`'s conversion, or the code point beyond the class table as an int (the
/// caller extends the table and calls again).
pub fn or_code_point<T>(
    py: Python<'_>,
    found: Result<T, u32>,
    ok: impl FnOnce(T) -> PyResult<PyObject>,
) -> PyResult<PyObject> {
    match found {
        Ok(value) => ok(value),
        Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
    }
}

/// The merge loop's state; see rust/src/merge.rs.
///
/// Args:
///     data: every pre-token's symbols one after the other: one byte each (`width` 1, token ids 0-255)
///         or four little-endian bytes each (`width` 4).
///     lengths: each pre-token's number of symbols.
///     freqs: each pre-token's count.
///     token_bytes: the bytes of every existing token id.
///     max_token_length: pairs whose merged token would be longer are never merged.
#[pyclass(module = "bpe_studio._native")]
struct MergeKernel {
    inner: merge::Kernel,
}

#[pymethods]
impl MergeKernel {
    #[new]
    #[pyo3(signature = (data, width, lengths, freqs, token_bytes, *, max_token_length=None))]
    fn new(
        py: Python<'_>,
        data: &Bound<'_, PyBytes>,
        width: usize,
        lengths: Vec<u64>,
        freqs: Vec<i64>,
        token_bytes: Vec<Vec<u8>>,
        max_token_length: Option<usize>,
    ) -> PyResult<Self> {
        let raw = data.as_bytes();
        if width != 1 && width != 4 || raw.len() % width != 0 {
            return Err(PyValueError::new_err(format!(
                "width must be 1 or 4 and divide the data's {} bytes, not {width}",
                raw.len()
            )));
        }
        // The index takes about a second on 100 MB of text: other Python threads (a GUI) run meanwhile.
        // The symbols are read from the bytes as the positions are built: no Vec of them beside.
        let inner = without_gil(py, || {
            if width == 1 {
                let symbols = raw.iter().map(|&b| b as u32);
                merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
            } else {
                let symbols = raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
            }
        })?
        .map_err(PyValueError::new_err)?;
        Ok(MergeKernel { inner })
    }

    /// The same kernel over `ids`, any buffer of native 32-bit unsigned integers (an `array("I")`) read
    /// in place: no bytes copy of them and no Vec (a superword run's stage 2 holds millions).
    #[staticmethod]
    #[pyo3(signature = (ids, lengths, freqs, token_bytes, *, max_token_length=None))]
    fn from_ids(
        py: Python<'_>,
        ids: PyBuffer<u32>,
        lengths: Vec<u64>,
        freqs: Vec<i64>,
        token_bytes: Vec<Vec<u8>>,
        max_token_length: Option<usize>,
    ) -> PyResult<Self> {
        if !ids.is_c_contiguous() {
            return Err(PyValueError::new_err("ids: need a contiguous buffer"));
        }
        // SAFETY: as in `cut_rare_pairs`: PyBuffer::get checked the item type and alignment, the buffer is
        // contiguous with item_count() items, and `ids` holds the export until the end of this function.
        let flat: &[u32] =
            unsafe { std::slice::from_raw_parts(ids.buf_ptr() as *const u32, ids.item_count()) };
        let inner = without_gil(py, || {
            merge::Kernel::new(flat.iter().copied(), &lengths, &freqs, token_bytes, max_token_length)
        })?
        .map_err(PyValueError::new_err)?;
        drop(ids);
        Ok(MergeKernel { inner })
    }

    /// The pair the next merge makes and its count, as (left id, right id, count); None when no pair is
    /// left that may be merged.
    fn best(&mut self) -> PyResult<Option<(u32, u32, i64)>> {
        unpanic(|| self.inner.best())
    }

    /// Makes the merge `best()` names: returns (token id, True if the id is new).
    fn merge_top(&mut self, py: Python<'_>) -> PyResult<(u32, bool)> {
        let inner = &mut self.inner;
        without_gil(py, || inner.merge_top())?
            .ok_or_else(|| PyRuntimeError::new_err("merge_top() called with no pair left; call best() first"))
    }

    /// Pairs counting fewer than `n` are left out of the choice of the next merge from now on: `best()`
    /// then answers None, or a pair counting fewer, where it would have answered a pair counting fewer
    /// (src/merge.rs, `Kernel::set_heap_min`).
    fn set_heap_min(&mut self, n: i64) {
        self.inner.set_heap_min(n);
    }

    /// Number of token ids, existing and made.
    fn __len__(&self) -> usize {
        self.inner.vocab_len()
    }
}

/// Pre-tokenizes `texts` with a native scanner (`gpt2`, `cl100k`, `llama3`, ...) and counts the pre-tokens.
///
/// `classes` gives each code point's class (see rust/src/pretok.rs and bpe_studio/engine/native.py).
/// Returns (pre-token -> count, number of pre-tokens), or the first code point beyond the table as an
/// int, so that the caller extends the table and calls again.
#[pyfunction]
fn count_pretokens<'py>(
    py: Python<'py>,
    preset: &str,
    texts: &Bound<'py, PyList>,
    classes: &Bound<'py, PyBytes>,
) -> PyResult<PyObject> {
    let scan = scanner(preset)?;
    let owned = strings(texts)?;
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    let table = classes.as_bytes();
    let found = without_gil(py, || pretok::count(&strs, table, scan))?;
    or_code_point(py, found, |(counts, total)| {
        let dict = PyDict::new(py);
        for (token, n) in counts {
            dict.set_item(token, n)?;
        }
        Ok((dict, total).into_pyobject(py)?.into_any().unbind())
    })
}

/// Words as flat ids (`ids`: any buffer of native 32-bit unsigned integers, an `array("I")`, read in
/// place) cut between two ids whose pair counts fewer than `below` in all the words, equal pieces added
/// up, pieces of one id left out (src/cut_words.rs): (ids as native-endian bytes, each piece's number of
/// ids, each piece's count).
///
/// The ids are not copied (a superword run's stage 2 holds 20M on 100 MB: the two copies, as bytes and
/// as a Vec, were its peak memory).
#[pyfunction]
#[pyo3(signature = (ids, lengths, freqs, below, *, threads = 1))]
fn cut_rare_pairs<'py>(
    py: Python<'py>,
    ids: PyBuffer<u32>,
    lengths: Vec<u32>,
    freqs: Vec<i64>,
    below: i64,
    threads: usize,
) -> PyResult<(Bound<'py, PyBytes>, Vec<u32>, Vec<i64>)> {
    if !ids.is_c_contiguous() {
        return Err(PyValueError::new_err("ids: need a contiguous buffer"));
    }
    // SAFETY: PyBuffer::get checked the item type (size and format) and the alignment of u32, the buffer
    // is contiguous with item_count() items, and `ids` holds the export (the exporter, an array, refuses
    // to be resized meanwhile) until the end of this function. Read only.
    let flat: &[u32] = unsafe { std::slice::from_raw_parts(ids.buf_ptr() as *const u32, ids.item_count()) };
    let cut = without_gil(py, || cut_words::cut_rare_pairs(flat, &lengths, &freqs, below, threads))?
        .map_err(PyValueError::new_err)?;
    drop(ids);
    let out = PyBytes::new_with(py, cut.ids.len() * 4, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(4).zip(&cut.ids) {
            chunk.copy_from_slice(&id.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok((out, cut.lengths, cut.freqs))
}

/// Gives the C allocator's free memory back to the system (glibc's `malloc_trim`; elsewhere nothing):
/// True when some was given back. A superword run calls it between its stages: stage 1's freed tables
/// stay in the main thread's heap, which stage 2's counting threads (each allocating from an arena of
/// its own) would not reuse; 80 MB on 100 MB of text, there at stage 2's peak.
#[pyfunction]
fn release_free_memory(py: Python<'_>) -> PyResult<bool> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and is thread-safe (it locks each arena in turn).
        without_gil(py, || unsafe { malloc_trim(0) } != 0)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = py;
        Ok(false)
    }
}

/// Makes the C allocator give every block of at least `min_bytes` a mapping of its own, unmapped when it
/// is freed (glibc's `mallopt(M_MMAP_THRESHOLD)`; elsewhere nothing): True when it was set. For the rest
/// of the process: glibc then no longer raises the threshold by itself.
///
/// Why a superword run's stage 2 sets it: glibc raises the threshold (up to 32 MB) each time a mapped
/// block is freed, so that the stage's large buffers (the counting threads' tables, the encoded ids) come
/// from the heaps instead; freed, they stay resident, and in the counting threads' heaps `malloc_trim`
/// does not give back the free space at the top (it trims only the main heap's). That was 70-90 MB of
/// the run's peak on 50-100 MB of text.
#[pyfunction]
fn map_large_allocations(py: Python<'_>, min_bytes: usize) -> PyResult<bool> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: std::os::raw::c_int, value: std::os::raw::c_int) -> std::os::raw::c_int;
        }
        /// glibc's malloc.h.
        const M_MMAP_THRESHOLD: std::os::raw::c_int = -3;
        let Ok(value) = std::os::raw::c_int::try_from(min_bytes) else {
            return Err(PyValueError::new_err(format!("min_bytes: {min_bytes} is more than a C int holds")));
        };
        // SAFETY: mallopt takes no pointer; it locks the allocator while it sets the parameter.
        without_gil(py, || unsafe { mallopt(M_MMAP_THRESHOLD, value) } == 1)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (py, min_bytes);
        Ok(false)
    }
}

/// A tiktoken rank file's lines as rank -> token bytes, when the file is in canonical form (padded base64,
/// decimal ranks, no rank or token twice); None otherwise (the Python parser then reads it and names the
/// line of any error). See src/rankfile.rs.
#[pyfunction]
fn parse_ranks<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let raw = data.as_bytes();
    let Some(found) = without_gil(py, || rankfile::parse(raw))? else {
        return Ok(None);
    };
    let dict = PyDict::new(py);
    for (i, &rank) in found.ranks.iter().enumerate() {
        dict.set_item(rank, PyBytes::new(py, found.token(i)))?;
    }
    Ok(Some(dict))
}

/// A SentencePiece `.model`'s pieces and specs, read as bpe_studio/engine/formats/sentencepiece.py reads
/// them: (texts, scores, types, trainer fields, normalizer fields), the fields as (number, int or bytes) in
/// file order; None at any fault (the Python reader then names it). See src/spmodel.rs.
#[pyfunction]
fn parse_sentencepiece<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<PyObject> {
    let raw = data.as_bytes();
    let Some(model) = unpanic(|| spmodel::parse(raw))? else {
        return Ok(py.None());
    };
    let texts = PyList::new(py, model.pieces.iter().map(|p| PyString::new(py, p.0)))?;
    let scores = PyList::new(py, model.pieces.iter().map(|p| f64::from(p.1)))?;
    let kinds = PyList::new(py, model.pieces.iter().map(|p| p.2))?;
    let trainer = PyList::new(py, model.trainer.iter().copied())?;
    let normalizer = PyList::empty(py);
    for (number, value) in &model.normalizer {
        let value = match value {
            spmodel::Value::Int(v) => v.into_pyobject(py)?.into_any(),
            spmodel::Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        };
        normalizer.append((number, value))?;
    }
    Ok((texts, scores, kinds, trainer, normalizer).into_pyobject(py)?.into_any().unbind())
}

/// Appends the bytes of a byte-level text (GPT-2's alphabet, src/bytelevel.rs) to `out`, read from the
/// str's own code points (no UTF-8 copy); false at a character outside the alphabet.
fn byte_level_into(text: &Bound<'_, PyString>, out: &mut Vec<u8>) -> PyResult<bool> {
    // SAFETY: the data is read while `text` (a str, immutable) is borrowed, under the GIL.
    Ok(match unsafe { text.data()? } {
        PyStringData::Ucs1(units) => bytelevel::decode_into(units.iter().map(|&c| u32::from(c)), out),
        PyStringData::Ucs2(units) => bytelevel::decode_into(units.iter().map(|&c| u32::from(c)), out),
        PyStringData::Ucs4(units) => bytelevel::decode_into(units.iter().copied(), out),
    })
}

/// Each byte-level text's bytes (GPT-2's alphabet: a `tokenizer.json`'s vocab keys or merge parts), or
/// None when one is not a str or holds a character outside the alphabet.
#[pyfunction]
fn byte_level_bytes<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let out = PyList::empty(py);
    let mut buffer = Vec::new();
    for item in texts.iter() {
        let Ok(text) = item.downcast::<PyString>() else { return Ok(None) };
        buffer.clear();
        if !byte_level_into(text, &mut buffer)? {
            return Ok(None);
        }
        out.append(PyBytes::new(py, &buffer))?;
    }
    Ok(Some(out))
}

/// A `tokenizer.json`'s merges written as `"left right"` (one space each) as pairs of bytes, or None when
/// one is not such a str or a part holds a character outside the alphabet.
#[pyfunction]
fn byte_level_merges<'py>(
    py: Python<'py>,
    merges: &Bound<'py, PyList>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let out = PyList::empty(py);
    let mut buffer = Vec::new();
    for item in merges.iter() {
        let Ok(text) = item.downcast::<PyString>() else { return Ok(None) };
        buffer.clear();
        // SAFETY: as in byte_level_into.
        let found = match unsafe { text.data()? } {
            PyStringData::Ucs1(units) => {
                bytelevel::decode_pair(units.iter().map(|&c| u32::from(c)), &mut buffer)
            }
            PyStringData::Ucs2(units) => {
                bytelevel::decode_pair(units.iter().map(|&c| u32::from(c)), &mut buffer)
            }
            PyStringData::Ucs4(units) => bytelevel::decode_pair(units.iter().copied(), &mut buffer),
        };
        let Some(cut) = found else { return Ok(None) };
        out.append((PyBytes::new(py, &buffer[..cut]), PyBytes::new(py, &buffer[cut..])))?;
    }
    Ok(Some(out))
}

/// Each merge (a sequence of (left bytes, right bytes)) as (left id, right id, merged id) through `ids_of`
/// (bytes -> id), or None when a merge is not two bytes objects or uses or makes bytes without an id (the
/// Python loop then names it). Tokenizer._rank_merges in bpe_studio/engine/encoding/tokenizer.py.
#[pyfunction]
fn merge_ids<'py>(
    py: Python<'py>,
    merges: &Bound<'py, PyAny>,
    ids_of: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let mut keys: Vec<(Bound<'py, PyBytes>, u32)> = Vec::with_capacity(ids_of.len());
    for (key, value) in ids_of.iter() {
        let (Ok(key), Ok(id)) = (key.downcast_into::<PyBytes>(), value.extract::<u32>()) else {
            return Ok(None);
        };
        keys.push((key, id));
    }
    let table: FxHashMap<&[u8], u32> = keys.iter().map(|(key, id)| (key.as_bytes(), *id)).collect();
    let out = PyList::empty(py);
    let mut joined = Vec::new();
    for item in merges.try_iter()? {
        let item = item?;
        let Ok(pair) = item.downcast::<PyTuple>() else { return Ok(None) };
        if pair.len() != 2 {
            return Ok(None);
        }
        let (left, right) = (pair.get_item(0)?, pair.get_item(1)?);
        let (Ok(left), Ok(right)) = (left.downcast::<PyBytes>(), right.downcast::<PyBytes>()) else {
            return Ok(None);
        };
        let (left, right) = (left.as_bytes(), right.as_bytes());
        joined.clear();
        joined.extend_from_slice(left);
        joined.extend_from_slice(right);
        let (Some(&l), Some(&r), Some(&m)) =
            (table.get(left), table.get(right), table.get(joined.as_slice()))
        else {
            return Ok(None);
        };
        out.append((l, r, m))?;
    }
    Ok(Some(out))
}

/// The str of `text`, made once per distinct text.
fn interned<'a, 'py>(
    py: Python<'py>,
    made: &mut FxHashMap<&'a str, Bound<'py, PyString>>,
    text: &'a str,
) -> Bound<'py, PyString> {
    made.entry(text).or_insert_with(|| PyString::new(py, text)).clone()
}

/// A `.model`'s ranks (src/spmodel.rs, `pairs`) kept from opening it until its first encode asks for them
/// (`table`), so that the pairs are derived once: each split's left and right texts, one after the other in
/// one buffer, and (start, cut, end, rank) into it, in the Python loop's order. Not in the module: only
/// `sentencepiece_pairs` makes one.
#[pyclass(module = "bpe_studio._native", frozen)]
struct PieceRanks {
    text: String,
    splits: Vec<(usize, usize, usize, u32)>,
}

#[pymethods]
impl PieceRanks {
    /// {(left, right): rank}, as `sentencepiece_pairs(..., with_ranks=True)` gives it.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut made = FxHashMap::default();
        let dict = PyDict::new(py);
        for &(start, cut, end, rank) in &self.splits {
            let (left, right) = (&self.text[start..cut], &self.text[cut..end]);
            dict.set_item((interned(py, &mut made, left), interned(py, &mut made, right)), rank)?;
        }
        Ok(dict)
    }
}

/// A `.model`'s derived pairs (src/spmodel.rs, `pairs`) from its pieces' texts, scores and types:
/// (ranks as {(left, right): rank} in the Python loop's order if `with_ranks`, else a `PieceRanks`'s
/// `table`, which makes them when called; the pairs the views show as (left, right) strs; the same pairs' bytes with `▁`
/// read as a space); None when the Python loader must derive them.
#[pyfunction]
#[pyo3(signature = (texts, scores, kinds, *, with_ranks))]
fn sentencepiece_pairs<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
    scores: Vec<f64>,
    kinds: Vec<u128>,
    with_ranks: bool,
) -> PyResult<PyObject> {
    let owned = strings(texts)?;
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    if strs.len() != scores.len() || strs.len() != kinds.len() {
        return Err(PyValueError::new_err("texts, scores and kinds must have one item per piece"));
    }
    let pieces: Vec<(&str, f32, u128)> =
        strs.iter().zip(&scores).zip(&kinds).map(|((&t, &s), &k)| (t, s as f32, k)).collect();
    let Some(found) = unpanic(|| spmodel::pairs(&pieces))? else {
        return Ok(py.None());
    };
    // One str object per distinct text (a piece's parts recur across splits).
    let mut made = FxHashMap::default();
    let ranks = if with_ranks {
        let dict = PyDict::new(py);
        for &(left, right, rank) in &found.ranks {
            dict.set_item((interned(py, &mut made, left), interned(py, &mut made, right)), rank)?;
        }
        dict.into_any()
    } else {
        let mut text = String::new();
        let mut splits = Vec::with_capacity(found.ranks.len());
        for &(left, right, rank) in &found.ranks {
            let start = text.len();
            text.push_str(left);
            let cut = text.len();
            text.push_str(right);
            splits.push((start, cut, text.len(), rank));
        }
        Bound::new(py, PieceRanks { text, splits })?.getattr("table")?
    };
    let merges = PyList::new(
        py,
        found.merges.iter().map(|&(l, r)| (interned(py, &mut made, l), interned(py, &mut made, r))),
    )?;
    let spelled = |t: &str| PyBytes::new(py, t.replace('\u{2581}', " ").as_bytes());
    let merge_bytes = PyList::new(py, found.merges.iter().map(|&(l, r)| (spelled(l), spelled(r))))?;
    Ok((ranks, merges, merge_bytes).into_pyobject(py)?.into_any().unbind())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The panic's place for `unpanic`, instead of a backtrace on stderr (a panic is a RuntimeError).
    guard::install_hook();
    m.add_class::<MergeKernel>()?;
    m.add_class::<encoder::Encoder>()?;
    m.add_class::<count_table::CountTable>()?;
    m.add_function(wrap_pyfunction!(count_pretokens, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(cut_rare_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(release_free_memory, m)?)?;
    m.add_function(wrap_pyfunction!(map_large_allocations, m)?)?;
    m.add_function(wrap_pyfunction!(parse_sentencepiece, m)?)?;
    m.add_function(wrap_pyfunction!(merge_ids, m)?)?;
    m.add_function(wrap_pyfunction!(sentencepiece_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(byte_level_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(byte_level_merges, m)?)?;
    Ok(())
}
