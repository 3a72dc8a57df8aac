//! The PyO3 bindings: the `bpe_studio._native` module (typed in bpe_studio/_native.pyi, which a test holds
//! to this module). Compiled only with the `python` feature. Each entry point converts its arguments,
//! runs the core (`crate::*`) without the GIL through `without_gil`, and turns the core's errors into
//! Python exceptions; no kernel logic lives here.

mod count_table;
mod encoder;
mod huge_pages;

#[global_allocator]
static ALLOCATOR: huge_pages::HugePages = huge_pages::HugePages;

use std::sync::OnceLock;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyStringData, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{bytelevel, cut_words, guard, hfjson, merge, pretok, rankfile, spmodel};

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
                huge_pages::advised(|| {
                    merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
                })
            } else {
                let symbols = raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                huge_pages::advised(|| {
                    merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
                })
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
            huge_pages::advised(|| {
                merge::Kernel::new(flat.iter().copied(), &lengths, &freqs, token_bytes, max_token_length)
            })
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
        without_gil(py, || huge_pages::advised(|| inner.merge_top()))?
            .ok_or_else(|| PyRuntimeError::new_err("merge_top() called with no pair left; call best() first"))
    }

    /// Pairs counting fewer than `n` are left out of the choice of the next merge from now on: `best()`
    /// then answers None, or a pair counting fewer, where it would have answered a pair counting fewer
    /// (src/merge.rs, `Kernel::set_heap_min`).
    fn set_heap_min(&mut self, n: i64) {
        self.inner.set_heap_min(n);
    }

    /// Makes merges as `best()` and `merge_top()` called in turn would, until `new_tokens` new ids exist,
    /// no pair is left, the next pair counts fewer than `min_frequency`, or `max_merges` merges were made or
    /// they visited `budget` positions. Returns the merges as (left id, right id, token id, True if the id
    /// is new, count) and why it stopped: "no_pairs", "min_frequency", or None (a limit: call again).
    #[pyo3(signature = (new_tokens, min_frequency, *, max_merges, budget))]
    #[allow(clippy::type_complexity)]
    fn merge_batch(
        &mut self,
        py: Python<'_>,
        new_tokens: u64,
        min_frequency: i64,
        max_merges: usize,
        budget: usize,
    ) -> PyResult<(Vec<(u32, u32, u32, bool, i64)>, Option<&'static str>)> {
        let inner = &mut self.inner;
        let (made, end) = without_gil(py, || {
            let mut made = Vec::new();
            let end = huge_pages::advised(|| {
                inner.merge_batch(new_tokens, min_frequency, max_merges, budget, &mut made)
            });
            (made, end)
        })?;
        let end = end.map(|e| match e {
            merge::BatchEnd::NoPair => "no_pairs",
            merge::BatchEnd::Rare => "min_frequency",
        });
        Ok((made.into_iter().map(|m| (m.left, m.right, m.id, m.new, m.count)).collect(), end))
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
/// The ids (u32) in 16 bits each, native byte order, when every one is below 2**16 and there is at least
/// one; else None. A superword run keeps its stage-2 words aside so (numpy did it: its import and its
/// threads were 0.1-0.2 s of CPU of a run that uses it for nothing else).
#[pyfunction]
fn narrow_ids<'py>(py: Python<'py>, ids: PyBuffer<u32>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    if !ids.is_c_contiguous() {
        return Err(PyValueError::new_err("ids: need a contiguous buffer"));
    }
    // SAFETY: as in cut_rare_pairs: PyBuffer::get checked the item type and alignment, the buffer is
    // contiguous with item_count() items, and `ids` holds the export while the slice is read.
    let flat: &[u32] = unsafe { std::slice::from_raw_parts(ids.buf_ptr() as *const u32, ids.item_count()) };
    if flat.is_empty() || flat.iter().any(|&id| id > u16::MAX as u32) {
        return Ok(None);
    }
    let out = PyBytes::new_with(py, flat.len() * 2, |buf| {
        for (chunk, &id) in buf.chunks_exact_mut(2).zip(flat) {
            chunk.copy_from_slice(&(id as u16).to_ne_bytes());
        }
        Ok(())
    })?;
    Ok(Some(out))
}

/// `narrow_ids`' 16-bit ids (native byte order) as u32 again, native byte order.
#[pyfunction]
fn widen_ids<'py>(py: Python<'py>, ids: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    if !ids.len().is_multiple_of(2) {
        return Err(PyValueError::new_err("ids: need a whole number of 16-bit ids"));
    }
    PyBytes::new_with(py, ids.len() * 2, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(4).zip(ids.chunks_exact(2)) {
            chunk.copy_from_slice(&(u16::from_ne_bytes([id[0], id[1]]) as u32).to_ne_bytes());
        }
        Ok(())
    })
}

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
    // Sized for all the tokens at once: growing a dict to 200k entries rehashes it a dozen times.
    // SAFETY: _PyDict_NewPresized returns a new reference to an empty dict, or NULL with an exception set
    // (from_owned_ptr_or_err takes either).
    let dict = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::_PyDict_NewPresized(found.ranks.len() as pyo3::ffi::Py_ssize_t),
        )?
    };
    let dict = dict.downcast_into::<PyDict>()?;
    for (i, &rank) in found.ranks.iter().enumerate() {
        dict.set_item(rank, PyBytes::new(py, found.token(i)))?;
    }
    Ok(Some(dict))
}

/// Whether `vocab` is plain: every key an `int` in `0..limit` and every value a `bytes` (exact types; a
/// subclass, a bool or anything else gives false, and the caller checks it item by item, naming the first
/// fault). One pass over the dict without making an object, where Python's `set(map(type, ...))`, `min`
/// and `max` were four passes (9 ms of a 128k-token rank file's load, issue 20).
#[pyfunction]
fn plain_vocab(vocab: &Bound<'_, PyDict>, limit: u64) -> bool {
    vocab.iter().all(|(key, value)| {
        key.is_exact_instance_of::<PyInt>()
            && value.is_exact_instance_of::<PyBytes>()
            && key.extract::<u64>().is_ok_and(|id| id < limit)
    })
}

/// How many of `tokens` (bytes objects) have each length, as {length: count} in ascending order of length.
/// A pass over the list without an int object per token (`inspect`'s lengths of 200k tokens, issue 20).
#[pyfunction]
fn length_counts<'py>(py: Python<'py>, tokens: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyDict>> {
    let mut counts: Vec<usize> = Vec::new();
    for item in tokens.iter() {
        let n = item.downcast::<PyBytes>()?.as_bytes().len();
        if n >= counts.len() {
            counts.resize(n + 1, 0);
        }
        counts[n] += 1;
    }
    let dict = PyDict::new(py);
    for (n, &count) in counts.iter().enumerate().filter(|&(_, &c)| c > 0) {
        dict.set_item(n, count)?;
    }
    Ok(dict)
}

/// The positions in `tokens` (bytes objects) of those at least `shortest` bytes long, in order.
#[pyfunction]
fn positions_at_least(tokens: &Bound<'_, PyList>, shortest: usize) -> PyResult<Vec<usize>> {
    let mut found = Vec::new();
    for (i, item) in tokens.iter().enumerate() {
        if item.downcast::<PyBytes>()?.as_bytes().len() >= shortest {
            found.push(i);
        }
    }
    Ok(found)
}

/// A parsed `.model`'s trainer settings and normalizer fields, as Python lists: `(field number, int or
/// bytes)` for the normalizer.
fn trainer_and_normalizer<'py>(
    py: Python<'py>,
    model: &spmodel::Model<'_>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let trainer = PyList::new(py, model.trainer.iter().copied())?;
    let normalizer = PyList::empty(py);
    for (number, value) in &model.normalizer {
        let value = match value {
            spmodel::Value::Int(v) => v.into_pyobject(py)?.into_any(),
            spmodel::Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        };
        normalizer.append((number, value))?;
    }
    Ok((trainer, normalizer))
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
    let (trainer, normalizer) = trainer_and_normalizer(py, &model)?;
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

/// A `tokenizer.json`'s vocab and merges read natively (src/hfjson.rs), kept until the loader asks for them
/// as it needs them: in the byte-level alphabet (`byte_level`), or as `json.load` gives them (`raw_vocab`,
/// `raw_merges`) when it reads them one by one. Not in the module: only `read_hf_json` makes one.
#[pyclass(module = "bpe_studio._native", frozen)]
struct HfJson {
    document: hfjson::Document,
}

#[pymethods]
impl HfJson {
    /// `model.vocab` as `json.load` gives it: {token: id}, in file order.
    fn raw_vocab<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (n, &id) in self.document.ids.iter().enumerate() {
            dict.set_item(self.document.key(n), id)?;
        }
        Ok(dict)
    }

    /// `model.merges` as `json.load` gives it: each a str `"left right"` or a list `[left, right]`.
    fn raw_merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let text = &self.document.merge_text;
        let out = PyList::empty(py);
        for m in &self.document.merges {
            if m.pair {
                out.append(PyList::new(py, [&text[m.start..m.cut], &text[m.cut..m.end]])?)?;
            } else {
                out.append(&text[m.start..m.end])?;
            }
        }
        Ok(out)
    }

    /// ({id: bytes} in file order, the merges as a `MergeTable`) read in GPT-2's byte-level alphabet, a
    /// vocab key that `specials` ({text: id}) gives the same id read as its UTF-8 (hf.py's
    /// `_byte_level_vocab` and `_byte_level_merges`); None when an id is listed twice or a text holds a
    /// character outside the alphabet (the loader then reads them one by one to name it).
    fn byte_level<'py>(
        &self,
        py: Python<'py>,
        specials: &Bound<'py, PyDict>,
    ) -> PyResult<Option<(Bound<'py, PyDict>, MergeTable)>> {
        let mut special_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut specials_fit = true; // every special's id a u32 (else no ids are made: Tokenizer names it)
        for (key, value) in specials.iter() {
            match (key.extract::<String>(), value.extract::<u32>()) {
                (Ok(key), Ok(id)) => {
                    special_ids.insert(key, id);
                }
                _ => specials_fit = false,
            }
        }
        let document = &self.document;
        let vocab = PyDict::new(py);
        // Every token's bytes, one after the other, and (id, end) of each, for the ids of the merges.
        let mut spelled: Vec<u8> = Vec::new();
        let mut ends: Vec<(u32, usize)> = Vec::with_capacity(document.ids.len());
        for (n, &id) in document.ids.iter().enumerate() {
            let key = document.key(n);
            let start = spelled.len();
            if special_ids.get(key) == Some(&id) {
                spelled.extend_from_slice(key.as_bytes());
            } else if !bytelevel::decode_into(key.chars().map(u32::from), &mut spelled) {
                return Ok(None);
            }
            vocab.set_item(id, PyBytes::new(py, &spelled[start..]))?;
            ends.push((id, spelled.len()));
        }
        if vocab.len() != document.ids.len() {
            return Ok(None); // an id listed twice
        }
        let mut bytes = Vec::new();
        let mut cuts = Vec::with_capacity(document.merges.len());
        let text = &document.merge_text;
        for m in &document.merges {
            let start = bytes.len();
            let cut = if m.pair {
                let ok = bytelevel::decode_into(text[m.start..m.cut].chars().map(u32::from), &mut bytes);
                let cut = bytes.len();
                if !ok || !bytelevel::decode_into(text[m.cut..m.end].chars().map(u32::from), &mut bytes) {
                    return Ok(None);
                }
                cut
            } else {
                let mut one = Vec::new();
                let Some(cut) = bytelevel::decode_pair(text[m.start..m.end].chars().map(u32::from), &mut one)
                else {
                    return Ok(None);
                };
                bytes.extend_from_slice(&one);
                start + cut
            };
            cuts.push((start, cut, bytes.len()));
        }
        // The ids as Tokenizer.__init__ finds them (its `ids_of`): bytes -> the smallest id of an ordinary
        // token with them, else a special token's id; a merge whose bytes have none gets no ids here.
        let ids = specials_fit
            .then(|| {
                let special_set: FxHashSet<u32> = special_ids.values().copied().collect();
                let mut ids_of: FxHashMap<&[u8], u32> = FxHashMap::default();
                let mut start = 0;
                for &(id, end) in &ends {
                    if !special_set.contains(&id) {
                        let slot = ids_of.entry(&spelled[start..end]).or_insert(id);
                        *slot = (*slot).min(id);
                    }
                    start = end;
                }
                for (key, &id) in &special_ids {
                    ids_of.entry(key.as_bytes()).or_insert(id);
                }
                cuts.iter()
                    .map(|&(start, cut, end)| {
                        Some((
                            *ids_of.get(&bytes[start..cut])?,
                            *ids_of.get(&bytes[cut..end])?,
                            *ids_of.get(&bytes[start..end])?,
                        ))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .flatten();
        Ok(Some((vocab, MergeTable::eager(MergeData { bytes, cuts, ids }))))
    }
}

/// A token's (id, height) in the merge trees.
type Deepest = (u32, u32);

/// A tokenizer's merges read natively (`HfJson.byte_level`), kept until asked for: each merge's bytes
/// (`pairs`), and, when every merge's parts and result are tokens, its ids as the Tokenizer finds them
/// (`ids`), which an `Encoder` takes as they are, without a Python object per merge. Not in the module:
/// only `HfJson.byte_level` and `sentencepiece_pairs` make one (the latter's made when first asked for).
#[pyclass(module = "bpe_studio._native", frozen)]
pub struct MergeTable {
    data: OnceLock<MergeData>,
    /// A `.model`'s pieces, which make `data` when it is first asked for (`sentencepiece_pairs`).
    source: Option<Py<PieceSource>>,
}

/// A merge by id: (left, right, merged).
type Triple = (u32, u32, u32);

/// A `MergeTable`'s content.
struct MergeData {
    /// The merges' bytes, one after the other, and (start, cut, end) of each.
    bytes: Vec<u8>,
    cuts: Vec<(usize, usize, usize)>,
    ids: Option<Vec<(u32, u32, u32)>>,
}

impl MergeTable {
    fn eager(data: MergeData) -> Self {
        MergeTable { data: OnceLock::from(data), source: None }
    }

    fn data(&self, py: Python<'_>) -> PyResult<&MergeData> {
        if let Some(data) = self.data.get() {
            return Ok(data);
        }
        let source = self.source.as_ref().ok_or_else(|| PyRuntimeError::new_err("an empty MergeTable"))?;
        Ok(&source.get().derived(py)?.1)
    }

    /// The merges by id, when every merge has them.
    pub fn id_triples(&self, py: Python<'_>) -> PyResult<Option<&[Triple]>> {
        Ok(self.data(py)?.ids.as_deref())
    }
}

#[pymethods]
impl MergeTable {
    /// [(left bytes, right bytes)] in rank order.
    fn pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let data = self.data(py)?;
        let bytes = &data.bytes;
        PyList::new(
            py,
            data.cuts.iter().map(|&(start, cut, end)| {
                (PyBytes::new(py, &bytes[start..cut]), PyBytes::new(py, &bytes[cut..end]))
            }),
        )
    }

    /// [(left id, right id, merged id)] in rank order, or None when a merge's bytes are not all tokens.
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        self.data(py)?.ids.as_ref().map(|ids| PyList::new(py, ids.iter().copied())).transpose()
    }

    /// What `inspect` says of the merges (analysis.py's `merge_summary`, the reference), from the ids
    /// without a Python object per merge: (merges, tokens they make that are not one of `byte_ids`, the
    /// deepest token's (id, height) or None), only the first merge making a token counting; the smallest
    /// id among the deepest. None without ids.
    fn summary(
        &self,
        py: Python<'_>,
        byte_ids: Vec<u32>,
    ) -> PyResult<Option<(usize, usize, Option<Deepest>)>> {
        // A .model's merges not derived yet: their ids alone (inspect asks for nothing else).
        let only;
        let ids = match (&self.source, self.data.get()) {
            (Some(source), None) if source.get().derived.get().is_none() => {
                only = source.get().merge_ids_only(py)?;
                only.as_ref()
            }
            _ => None,
        };
        let ids = match ids {
            Some(ids) => ids,
            None => {
                let Some(ids) = self.data(py)?.ids.as_ref() else { return Ok(None) };
                ids
            }
        };
        let size = ids.iter().map(|&(l, r, m)| l.max(r).max(m) as usize + 1).max().unwrap_or(0);
        let mut is_byte = vec![false; size];
        for b in byte_ids {
            if let Some(slot) = is_byte.get_mut(b as usize) {
                *slot = true;
            }
        }
        let mut height = vec![0u32; size];
        let mut made_before = vec![false; size];
        let (mut learned, mut best): (usize, Option<Deepest>) = (0, None);
        for &(left, right, made) in ids {
            let m = made as usize;
            if made_before[m] {
                continue;
            }
            made_before[m] = true;
            learned += usize::from(!is_byte[m]);
            let h = 1 + height[left as usize].max(height[right as usize]);
            height[m] = h;
            if best.is_none_or(|(id, top)| h > top || (h == top && made < id)) {
                best = Some((made, h));
            }
        }
        Ok(Some((ids.len(), learned, best)))
    }

    /// Whether `ids` gives the ids (without making them).
    fn has_ids(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.data(py)?.ids.is_some())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.data(py)?.cuts.len())
    }
}

/// A `tokenizer.json`'s bytes read natively (src/hfjson.rs): (the rest of the document as JSON text, with
/// `model.vocab` and `model.merges` as null, for `json.loads`; an `HfJson` holding those two), or None when
/// the Python reader must read the file (not UTF-8, not such a document, or JSON serde_json refuses).
#[pyfunction]
fn read_hf_json<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Option<(String, HfJson)>> {
    let raw = data.as_bytes();
    let found = without_gil(py, || std::str::from_utf8(raw).ok().and_then(hfjson::parse))?;
    Ok(found.map(|mut document| (std::mem::take(&mut document.rest), HfJson { document })))
}

/// The str of `text`, made once per distinct text.
fn interned<'a, 'py>(
    py: Python<'py>,
    made: &mut FxHashMap<&'a str, Bound<'py, PyString>>,
    text: &'a str,
) -> Bound<'py, PyString> {
    made.entry(text).or_insert_with(|| PyString::new(py, text)).clone()
}

/// A `.model`'s ranks (src/spmodel.rs, `pairs`), for a `PieceSource`, until asked for (`table`): each
/// split's left and right texts, one after the other in one buffer, and (start, cut, end, rank) into it, in
/// the Python loop's order; and the pairs the views show (`merges`), kept until a view asks for them, the
/// same way.
struct PieceRanks {
    text: String,
    splits: Vec<(usize, usize, usize, u32)>,
    merges: Vec<(usize, usize, usize)>,
}

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

    /// [(left, right)]: the pairs the views show, as `sentencepiece_pairs(..., with_ranks=True)` gives them.
    fn merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut made = FxHashMap::default();
        let text = &self.text;
        PyList::new(
            py,
            self.merges.iter().map(|&(start, cut, end)| {
                (interned(py, &mut made, &text[start..cut]), interned(py, &mut made, &text[cut..end]))
            }),
        )
    }
}

/// A `.model`'s tables from its pieces' texts and types, as `load_sentencepiece`'s loop makes them
/// (bpe_studio/engine/formats/sentencepiece.py, the reference): ({id: bytes}: a byte piece `<0xNN>`'s byte,
/// any other piece's text with `▁` read as a space; {text: id} of the normal and user-defined pieces, a text
/// listed twice under its last id; the user-defined texts; the id of each byte 0..255, a byte listed twice
/// under its last id); None when a byte piece is not `<0xNN>` or a byte has no piece (the loop then runs,
/// naming the fault).
#[pyfunction]
fn sentencepiece_tables<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
    kinds: Vec<u128>,
) -> PyResult<Option<SentencepieceTables<'py>>> {
    let owned = strings(texts)?;
    if owned.len() != kinds.len() {
        return Err(PyValueError::new_err("texts and kinds must have one item per piece"));
    }
    let vocab = PyDict::new(py);
    let normal = PyDict::new(py);
    let frozen = PyList::empty(py);
    let mut byte_ids: [Option<usize>; 256] = [None; 256];
    let mut spelled = Vec::new();
    for (i, (text, &kind)) in owned.iter().zip(&kinds).enumerate() {
        let utf8 = text.to_str()?;
        if kind == spmodel::BYTE {
            let Some(byte) = spmodel::byte_of(utf8) else { return Ok(None) };
            vocab.set_item(i, PyBytes::new(py, &[byte]))?;
            byte_ids[usize::from(byte)] = Some(i);
            continue;
        }
        spelled.clear();
        spelled.extend_from_slice(utf8.replace('\u{2581}', " ").as_bytes());
        vocab.set_item(i, PyBytes::new(py, &spelled))?;
        if kind == spmodel::NORMAL || kind == spmodel::USER_DEFINED {
            normal.set_item(text, i)?;
            if kind == spmodel::USER_DEFINED {
                frozen.append(text)?;
            }
        }
    }
    let Some(byte_ids) = byte_ids.into_iter().collect::<Option<Vec<usize>>>() else { return Ok(None) };
    Ok(Some((vocab, normal, frozen, byte_ids)))
}

/// What `sentencepiece_tables` gives.
type SentencepieceTables<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyList>, Vec<usize>);

/// A `.model`'s pieces (texts, scores, types), which derive its pairs (src/spmodel.rs, `pairs`) when they are
/// first asked for, once: opening the file and encoding need none of them (25 ms of Mistral 7B's 32k
/// pieces), only the views.
#[pyclass(module = "bpe_studio._native", frozen)]
struct PieceSource {
    texts: Py<PyList>,
    scores: Vec<f64>,
    kinds: Vec<u128>,
    /// The `.model`'s bytes, when it was read in one call (`sentencepiece_model`; then `texts` is empty and
    /// `spans` holds where each piece's text lies in them).
    data: Option<Py<PyBytes>>,
    /// Each piece's text as (start, end) in `data`, kept from the one parse (`inspect` asks for the merges
    /// at once: parsing the file a second time cost as much as deriving them).
    spans: Vec<(u32, u32)>,
    derived: OnceLock<(PieceRanks, MergeData)>,
}

impl PieceSource {
    /// Runs `f` with the pieces as (text, score, kind): parsed again from the `.model`'s bytes when it was
    /// read in one call (without a Python str per piece: sentencepiece_model parsed them once), else from
    /// the lists the source was made with.
    fn with_pieces<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&[(&str, f32, u128)]) -> PyResult<R>,
    ) -> PyResult<R> {
        if let Some(bytes) = &self.data {
            let raw = bytes.bind(py).as_bytes();
            let mut pieces = Vec::with_capacity(self.spans.len());
            for ((&(start, end), &score), &kind) in self.spans.iter().zip(&self.scores).zip(&self.kinds) {
                let text = raw
                    .get(start as usize..end as usize)
                    .ok_or_else(|| PyRuntimeError::new_err("a piece's place in the .model is lost"))?;
                // SAFETY: `spans` were taken, in `sentencepiece_model`, from a parse of these very bytes (a
                // `bytes` object cannot change) that read each of them as UTF-8 (`spmodel::piece`).
                pieces.push((unsafe { std::str::from_utf8_unchecked(text) }, score as f32, kind));
            }
            return f(&pieces);
        }
        let owned = strings(self.texts.bind(py))?;
        let strs = owned.iter().map(|s| s.to_str()).collect::<PyResult<Vec<&str>>>()?;
        let pieces: Vec<(&str, f32, u128)> =
            strs.iter().zip(&self.scores).zip(&self.kinds).map(|((&t, &s), &k)| (t, s as f32, k)).collect();
        f(&pieces)
    }

    /// The merges' ids alone, for `inspect`'s figures (`MergeTable.summary`) before anything else is
    /// derived: the same ids as `derived` gives, without the tables of every split's and merge's text and
    /// bytes; None when a piece's text holds a space (then `derived` looks the texts' bytes up).
    fn merge_ids_only(&self, py: Python<'_>) -> PyResult<Option<Vec<Triple>>> {
        self.with_pieces(py, |pieces| {
            let merging = |kind: u128| kind == spmodel::NORMAL || kind == spmodel::USER_DEFINED;
            if pieces.iter().any(|&(text, _, kind)| merging(kind) && text.as_bytes().contains(&b' ')) {
                return Ok(None);
            }
            let Some(found) = unpanic(|| spmodel::merge_ids(pieces))? else {
                return Err(PyRuntimeError::new_err("a piece's score is NaN"));
            };
            Ok(Some(found))
        })
    }

    /// The ranks and pairs, and the pairs' bytes and ids, derived on the first call.
    fn derived(&self, py: Python<'_>) -> PyResult<&(PieceRanks, MergeData)> {
        if let Some(found) = self.derived.get() {
            return Ok(found);
        }
        let made = self.with_pieces(py, |pieces| {
            let Some(found) = unpanic(|| spmodel::pairs(pieces))? else {
                // (sentencepiece_pairs checked the scores for NaN before making this source.)
                return Err(PyRuntimeError::new_err("a piece's score is NaN"));
            };
            let mut text = String::new();
            let mut splits = Vec::with_capacity(found.ranks.len());
            for &(left, right, rank) in &found.ranks {
                let start = text.len();
                text.push_str(left);
                let cut = text.len();
                text.push_str(right);
                splits.push((start, cut, text.len(), rank));
            }
            // A piece's bytes: its text with `▁` read as a space (most pieces of a Llama-style model have one).
            fn spell(text: &str, out: &mut Vec<u8>) {
                for (n, part) in text.split('\u{2581}').enumerate() {
                    if n > 0 {
                        out.push(b' ');
                    }
                    out.extend_from_slice(part.as_bytes());
                }
            }
            let (mut merges, mut bytes, mut cuts) = (Vec::new(), Vec::new(), Vec::new());
            for &(left, right) in &found.merges {
                let start = text.len();
                text.push_str(left);
                let cut = text.len();
                text.push_str(right);
                merges.push((start, cut, text.len()));
                let byte_start = bytes.len();
                spell(left, &mut bytes);
                let byte_cut = bytes.len();
                spell(right, &mut bytes);
                cuts.push((byte_start, byte_cut, bytes.len()));
            }
            // Each pair's ids as Tokenizer._piece_merge_ids looks them up: a piece's bytes (`▁` read as a space)
            // -> the smallest id of a normal or user-defined piece with them (each text under its last id, as
            // the loader's dict keeps it). Each text's id found once, then the pairs' texts looked up.
            // Two texts spell the same bytes only when one holds a space where the other holds `▁`: with no
            // space in any text (a SentencePiece model's pieces write spaces `▁`), each text's id is its own,
            // the last piece's with it, which `pairs` gives with each merge.
            let merging = |kind: u128| kind == spmodel::NORMAL || kind == spmodel::USER_DEFINED;
            if !pieces.iter().any(|&(text, _, kind)| merging(kind) && text.as_bytes().contains(&b' ')) {
                let ids = Some(found.merge_ids.clone());
                let made = (PieceRanks { text, splits, merges }, MergeData { bytes, cuts, ids });
                return Ok(made);
            }
            let mut last: FxHashMap<&str, u32> = FxHashMap::default();
            for (i, &(text, _, kind)) in pieces.iter().enumerate() {
                if merging(kind) {
                    last.insert(text, i as u32);
                }
            }
            let built;
            let id_of: &FxHashMap<&str, u32> = if last.keys().any(|piece| piece.contains(' ')) {
                let mut by_bytes: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
                let mut spelled = Vec::new();
                for (&piece, &i) in &last {
                    spelled.clear();
                    spell(piece, &mut spelled);
                    let slot = by_bytes.entry(spelled.clone()).or_insert(i);
                    *slot = (*slot).min(i);
                }
                let mut id_of: FxHashMap<&str, u32> = FxHashMap::default();
                id_of.reserve(last.len());
                for &piece in last.keys() {
                    spelled.clear();
                    spell(piece, &mut spelled);
                    id_of.insert(piece, by_bytes[&spelled]);
                }
                built = id_of;
                &built
            } else {
                &last
            };
            let mut both = String::new();
            let ids = found
                .merges
                .iter()
                .map(|&(l, r)| {
                    both.clear();
                    both.push_str(l);
                    both.push_str(r);
                    Some((*id_of.get(l)?, *id_of.get(r)?, *id_of.get(both.as_str())?))
                })
                .collect::<Option<Vec<_>>>();
            Ok((PieceRanks { text, splits, merges }, MergeData { bytes, cuts, ids }))
        })?;
        Ok(self.derived.get_or_init(|| made))
    }
}

#[pymethods]
impl PieceSource {
    /// {(left, right): rank}, as `sentencepiece_pairs(..., with_ranks=True)` gives it.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.derived(py)?.0.table(py)
    }

    /// [(left, right)]: the pairs the views show, as `sentencepiece_pairs(..., with_ranks=True)` gives them.
    fn merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.derived(py)?.0.merges(py)
    }

    /// {text: id} of the normal and user-defined pieces (a text listed twice under its last id), as
    /// `sentencepiece_tables` gives it: made from the `.model`'s bytes when first asked for (`PieceModel`'s
    /// `pieces`; opening and encoding natively need none of the 32k strs).
    fn pieces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let normal = PyDict::new(py);
        if let Some(bytes) = &self.data {
            let data = bytes.bind(py);
            let parsed = unpanic(|| spmodel::parse(data.as_bytes()))?;
            let model =
                parsed.ok_or_else(|| PyRuntimeError::new_err("the .model's bytes no longer parse"))?;
            for (i, &(text, _, kind)) in model.pieces.iter().enumerate() {
                if kind == spmodel::NORMAL || kind == spmodel::USER_DEFINED {
                    normal.set_item(text, i)?;
                }
            }
        }
        Ok(normal)
    }

    /// Whether the pairs are derived yet (for the tests that opening and encoding derive none).
    fn derived_yet(&self) -> bool {
        self.derived.get().is_some()
    }
}

/// A `.model`'s derived pairs (src/spmodel.rs, `pairs`) from its pieces' texts, scores and types:
/// if `with_ranks`, (ranks as {(left, right): rank} in the Python loop's order; the pairs the views show as
/// (left, right) strs; the same pairs' bytes with `▁` read as a space), else functions that make the first
/// two when called and the third as a `MergeTable` (with the pieces' ids), all derived once, when one is
/// first used; None when the Python loader must derive them (a normal or user-defined piece's score is
/// NaN).
#[pyfunction]
#[pyo3(signature = (texts, scores, kinds, *, with_ranks))]
fn sentencepiece_pairs<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
    scores: Vec<f64>,
    kinds: Vec<u128>,
    with_ranks: bool,
) -> PyResult<PyObject> {
    if texts.len() != scores.len() || texts.len() != kinds.len() {
        return Err(PyValueError::new_err("texts, scores and kinds must have one item per piece"));
    }
    if !with_ranks {
        // As spmodel::pairs refuses them (on the f32 score, as it reads it).
        let merging = |k: &u128| *k == spmodel::NORMAL || *k == spmodel::USER_DEFINED;
        if scores.iter().zip(&kinds).any(|(&s, k)| merging(k) && (s as f32).is_nan()) {
            return Ok(py.None());
        }
        // (A copy of the list: the source derives from the texts as they are now.)
        let texts = PyList::new(py, texts.iter())?.unbind();
        let source = Bound::new(
            py,
            PieceSource { texts, scores, kinds, data: None, spans: Vec::new(), derived: OnceLock::new() },
        )?;
        let table = MergeTable { data: OnceLock::new(), source: Some(source.clone().unbind()) };
        return Ok((source.getattr("table")?, source.getattr("merges")?, table)
            .into_pyobject(py)?
            .into_any()
            .unbind());
    }
    let owned = strings(texts)?;
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    let pieces: Vec<(&str, f32, u128)> =
        strs.iter().zip(&scores).zip(&kinds).map(|((&t, &s), &k)| (t, s as f32, k)).collect();
    let Some(found) = unpanic(|| spmodel::pairs(&pieces))? else {
        return Ok(py.None());
    };
    // One str object per distinct text (a piece's parts recur across splits).
    let mut made = FxHashMap::default();
    let ranks = PyDict::new(py);
    for &(left, right, rank) in &found.ranks {
        ranks.set_item((interned(py, &mut made, left), interned(py, &mut made, right)), rank)?;
    }
    let merges = PyList::new(
        py,
        found.merges.iter().map(|&(l, r)| (interned(py, &mut made, l), interned(py, &mut made, r))),
    )?;
    let spelled = |t: &str| PyBytes::new(py, t.replace('\u{2581}', " ").as_bytes());
    let merge_bytes = PyList::new(py, found.merges.iter().map(|&(l, r)| (spelled(l), spelled(r))))?;
    Ok((ranks, merges, merge_bytes).into_pyobject(py)?.into_any().unbind())
}

/// A `.model`'s BPE over characters (src/spmodel.rs, `PieceEncoder`): `PieceModel.encode` without the
/// table of every split's rank, which the Python reference builds at its first encode. Not in the module:
/// only `sentencepiece_encoder` and `sentencepiece_model` make one; the latter's is made at its first
/// encode, from the pieces its source keeps (`inspect` encodes nothing: a fifth of its load was this table).
#[pyclass(module = "bpe_studio._native", frozen)]
struct PieceEncoder {
    inner: OnceLock<spmodel::PieceEncoder>,
    /// Where a lazy encoder's pieces are, and the id of each byte.
    source: Option<(Py<PieceSource>, [u32; 256])>,
}

impl PieceEncoder {
    fn made(inner: spmodel::PieceEncoder) -> Self {
        PieceEncoder { inner: OnceLock::from(inner), source: None }
    }

    fn inner(&self, py: Python<'_>) -> PyResult<&spmodel::PieceEncoder> {
        if let Some(made) = self.inner.get() {
            return Ok(made);
        }
        let Some((source, byte_ids)) = &self.source else {
            return Err(PyRuntimeError::new_err("a piece encoder without pieces"));
        };
        // (`sentencepiece_model` checked what `new` refuses: no NaN score, ids and places that fit a u32.)
        let made = source
            .get()
            .with_pieces(py, |pieces| unpanic(|| spmodel::PieceEncoder::new(pieces, *byte_ids)))?;
        let made =
            made.ok_or_else(|| PyRuntimeError::new_err("the .model's pieces no longer make an encoder"))?;
        Ok(self.inner.get_or_init(|| made))
    }
}

#[pymethods]
impl PieceEncoder {
    /// The ids of one normalized piece, as `PieceModel.encode` gives them (a tuple).
    fn encode<'py>(&self, py: Python<'py>, piece: &str) -> PyResult<Bound<'py, PyTuple>> {
        let mut out = Vec::new();
        self.inner(py)?.encode(piece, &mut out);
        PyTuple::new(py, out)
    }
}

/// A `.model`'s `PieceEncoder` from its pieces' texts, scores and types and the id of each byte; None when
/// a normal or user-defined piece has a NaN score (the Python encoder then derives the ranks).
#[pyfunction]
fn sentencepiece_encoder(
    texts: &Bound<'_, PyList>,
    scores: Vec<f64>,
    kinds: Vec<u128>,
    byte_ids: Vec<u32>,
) -> PyResult<Option<PieceEncoder>> {
    let owned = strings(texts)?;
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    if strs.len() != scores.len() || strs.len() != kinds.len() {
        return Err(PyValueError::new_err("texts, scores and kinds must have one item per piece"));
    }
    let Ok(byte_ids) = <[u32; 256]>::try_from(byte_ids) else {
        return Err(PyValueError::new_err("byte_ids: expected 256 ids"));
    };
    let pieces: Vec<(&str, f32, u128)> =
        strs.iter().zip(&scores).zip(&kinds).map(|((&t, &s), &k)| (t, s as f32, k)).collect();
    Ok(unpanic(|| spmodel::PieceEncoder::new(&pieces, byte_ids))?.map(PieceEncoder::made))
}

/// A SentencePiece `.model` read and made ready in one call, for `load_sentencepiece`
/// (bpe_studio/engine/formats/sentencepiece.py): what `parse_sentencepiece`, `sentencepiece_tables`,
/// `sentencepiece_pairs(..., with_ranks=False)` and `sentencepiece_encoder` give together, without making
/// the pieces' texts, scores and types Python lists that each of them reads again (most of a fresh
/// process's load of Mistral 7B's 32k pieces): (trainer fields, normalizer fields, {id: bytes}, the
/// user-defined texts, the id of each byte, the encoder, (ranks, pairs, `MergeTable`, {text: id} of the
/// normal and user-defined pieces), the last four made when first asked for, from the file's bytes kept
/// and parsed again: opening and encoding make no `str` per piece). None wherever
/// one of those calls gives None (a fault, a byte piece that is not `<0xNN>`, a byte without a piece, a
/// NaN score of a piece that merges): the Python loader then reads the file as before, naming the fault.
#[pyfunction]
fn sentencepiece_model<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<PyObject> {
    let raw = data.as_bytes();
    let Some(model) = unpanic(|| spmodel::parse(raw))? else {
        return Ok(py.None());
    };
    let merging = |kind: u128| kind == spmodel::NORMAL || kind == spmodel::USER_DEFINED;
    if model.pieces.iter().any(|&(_, score, kind)| merging(kind) && score.is_nan()) {
        return Ok(py.None());
    }
    // Sized for every piece at once (growing a dict to 32k-256k entries rehashes it a dozen times).
    // SAFETY: _PyDict_NewPresized returns a new reference to an empty dict, or NULL with an exception set
    // (from_owned_ptr_or_err takes either).
    let vocab = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::_PyDict_NewPresized(model.pieces.len() as pyo3::ffi::Py_ssize_t),
        )?
    };
    let vocab = vocab.downcast_into::<PyDict>()?;
    let frozen = PyList::empty(py);
    let mut byte_ids: [Option<u32>; 256] = [None; 256];
    let mut spelled = Vec::new();
    for (i, &(text, _, kind)) in model.pieces.iter().enumerate() {
        let Ok(id) = u32::try_from(i) else { return Ok(py.None()) };
        if kind == spmodel::BYTE {
            let Some(byte) = spmodel::byte_of(text) else { return Ok(py.None()) };
            vocab.set_item(id, PyBytes::new(py, &[byte]))?;
            byte_ids[usize::from(byte)] = Some(id);
        } else {
            // A piece's bytes: its text with `▁` read as a space (as sentencepiece_tables spells them), in
            // one pass over its bytes: in UTF-8, E2 96 81 is that character wherever it occurs.
            let raw = text.as_bytes();
            spelled.clear();
            let mut at = 0;
            while at < raw.len() {
                if raw[at] == 0xE2 && raw.get(at + 1..at + 3) == Some(&[0x96, 0x81]) {
                    spelled.push(b' ');
                    at += 3;
                } else {
                    spelled.push(raw[at]);
                    at += 1;
                }
            }
            vocab.set_item(id, PyBytes::new(py, &spelled))?;
            if kind == spmodel::USER_DEFINED {
                frozen.append(text)?;
            }
        }
    }
    let Some(byte_ids) = byte_ids.into_iter().collect::<Option<Vec<u32>>>() else { return Ok(py.None()) };
    let Ok(each_byte) = <[u32; 256]>::try_from(byte_ids.as_slice()) else { return Ok(py.None()) };
    let texts = PyList::empty(py).unbind();
    let (mut scores, mut kinds, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    for &(text, score, kind) in &model.pieces {
        // (The texts are slices of `raw`: their places in it, which fit u32 as the file is read whole.)
        let start = text.as_ptr() as usize - raw.as_ptr() as usize;
        let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(start + text.len())) else {
            return Ok(py.None());
        };
        spans.push((start, end));
        scores.push(f64::from(score));
        kinds.push(kind);
    }
    let data = Some(data.clone().unbind());
    let source = Bound::new(py, PieceSource { texts, scores, kinds, data, spans, derived: OnceLock::new() })?;
    let table = MergeTable { data: OnceLock::new(), source: Some(source.clone().unbind()) };
    let derived = (source.getattr("table")?, source.getattr("merges")?, table, source.getattr("pieces")?);
    let (trainer, normalizer) = trainer_and_normalizer(py, &model)?;
    let encoder = PieceEncoder { inner: OnceLock::new(), source: Some((source.clone().unbind(), each_byte)) };
    let encoder = Bound::new(py, encoder)?;
    Ok((trainer, normalizer, vocab, frozen, byte_ids, encoder, derived)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The panic's place for `unpanic`, instead of a backtrace on stderr (a panic is a RuntimeError).
    guard::install_hook();
    m.add_class::<MergeKernel>()?;
    m.add_class::<encoder::Encoder>()?;
    m.add_class::<count_table::CountTable>()?;
    m.add_function(wrap_pyfunction!(count_table::compact_tables, m)?)?;
    m.add_class::<count_table::PartedChunks>()?;
    m.add_function(wrap_pyfunction!(count_table::held_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(count_table::split_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(count_pretokens, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(plain_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(length_counts, m)?)?;
    m.add_function(wrap_pyfunction!(positions_at_least, m)?)?;
    m.add_function(wrap_pyfunction!(cut_rare_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(narrow_ids, m)?)?;
    m.add_function(wrap_pyfunction!(widen_ids, m)?)?;
    m.add_function(wrap_pyfunction!(release_free_memory, m)?)?;
    m.add_function(wrap_pyfunction!(map_large_allocations, m)?)?;
    m.add_function(wrap_pyfunction!(parse_sentencepiece, m)?)?;
    m.add_function(wrap_pyfunction!(merge_ids, m)?)?;
    m.add_function(wrap_pyfunction!(sentencepiece_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(byte_level_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(byte_level_merges, m)?)?;
    m.add_function(wrap_pyfunction!(read_hf_json, m)?)?;
    m.add_function(wrap_pyfunction!(sentencepiece_tables, m)?)?;
    m.add_function(wrap_pyfunction!(sentencepiece_encoder, m)?)?;
    m.add_function(wrap_pyfunction!(sentencepiece_model, m)?)?;
    Ok(())
}
