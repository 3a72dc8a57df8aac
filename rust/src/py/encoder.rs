//! `Encoder`: the core's encoder (src/encode.rs) for Python, the native half of `Tokenizer`
//! (bpe_studio/engine/encoding/tokenizer.py).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};
use rustc_hash::FxHashMap;

use super::{or_code_point, scanner, strings, without_gil};
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
}

#[pymethods]
impl Encoder {
    #[new]
    #[pyo3(signature = (byte_ids, merges, whole, decoder, *, cache_size))]
    fn new(
        byte_ids: Vec<u32>,
        merges: Vec<(u32, u32, u32)>,
        whole: Option<FxHashMap<Vec<u8>, u32>>,
        decoder: Vec<Option<Vec<u8>>>,
        cache_size: usize,
    ) -> PyResult<Self> {
        let byte_ids: [u32; 256] = byte_ids.try_into().map_err(|v: Vec<u32>| {
            PyValueError::new_err(format!("byte_ids: need 256 ids, got {}", v.len()))
        })?;
        Ok(Encoder { inner: encode::Encoder::new(byte_ids, &merges, whole, &decoder, cache_size) })
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
        // Each bytes object's buffer is copied as it is (extracting Vec<u8> would go through the sequence
        // protocol, one int at a time: most of the time of a 200k-token rank file's load).
        let decoder: Vec<Option<Vec<u8>>> = decoder
            .iter()
            .map(|item| {
                if item.is_none() {
                    Ok(None)
                } else {
                    Ok(Some(item.downcast::<PyBytes>()?.as_bytes().to_vec()))
                }
            })
            .collect::<PyResult<_>>()?;
        let inner = without_gil(py, || {
            encode::Encoder::with_ranks(byte_ids, decoder, &special_ids, ignore_merges, cache_size)
        })?;
        Ok(Encoder { inner })
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
    fn encode(&self, py: Python<'_>, pieces: &Bound<'_, PyList>) -> PyResult<Vec<u32>> {
        let owned = strings(pieces)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        without_gil(py, || self.inner.encode(&strs))
    }

    /// The ids of the pre-tokens and how many ids each pre-token has: (ids, counts).
    fn encode_counts(&self, py: Python<'_>, pieces: &Bound<'_, PyList>) -> PyResult<(Vec<u32>, Vec<usize>)> {
        let owned = strings(pieces)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        without_gil(py, || self.inner.encode_counts(&strs))
    }

    /// The ids of a whole text under a preset pattern (`gpt2`, `cl100k`, `o200k`): the native scanner
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
        or_code_point(py, found, |ids| Ok(PyList::new(py, ids)?.into_any().unbind()))
    }

    /// The ids of each text (as `encode_text`), the texts shared out among up to `threads` native threads
    /// (in contiguous runs of about equal size, each thread with its own cache): a list of lists in the
    /// texts' order, or the first code point beyond the table as an int.
    #[pyo3(signature = (preset, texts, classes, *, threads))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        preset: &str,
        texts: &Bound<'_, PyList>,
        classes: &[u8],
        threads: usize,
    ) -> PyResult<PyObject> {
        let scan = scanner(preset)?;
        let owned = strings(texts)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let found = without_gil(py, || self.inner.encode_batch(scan, &strs, classes, threads))?;
        or_code_point(py, found, |all| {
            let lists = PyList::empty(py);
            for ids in all {
                lists.append(PyList::new(py, ids)?)?;
            }
            Ok(lists.into_any().unbind())
        })
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
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
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
    fn decode_bytes(&self, py: Python<'_>, ids: Vec<i64>) -> PyResult<PyObject> {
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
