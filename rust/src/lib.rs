//! `bpe_studio._native`: BPE Studio's native kernel. Python drives it through
//! `bpe_studio/engine/merge.py` (`NativeMergeLoop`), which keeps the loop's API, events, cancelling and
//! replay in Python and calls in here for the index, the choice of the next pair and the merge itself.

mod merge;
mod count;
mod encode;
mod pretok;
mod pretok_cl100k;
mod pretok_o200k;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

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
        let inner = py
            .allow_threads(|| {
                let symbols: Vec<u32> = if width == 1 {
                    raw.iter().map(|&b| b as u32).collect()
                } else {
                    raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
                };
                merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
            })
            .map_err(PyValueError::new_err)?;
        Ok(MergeKernel { inner })
    }

    /// The pair the next merge makes and its count, as (left id, right id, count); None when no pair is
    /// left that may be merged.
    fn best(&mut self) -> Option<(u32, u32, i64)> {
        self.inner.best()
    }

    /// Makes the merge `best()` names: returns (token id, True if the id is new).
    fn merge_top(&mut self, py: Python<'_>) -> PyResult<(u32, bool)> {
        let inner = &mut self.inner;
        py.allow_threads(|| inner.merge_top())
            .ok_or_else(|| PyRuntimeError::new_err("merge_top() called with no pair left; call best() first"))
    }

    /// Number of token ids, existing and made.
    fn __len__(&self) -> usize {
        self.inner.vocab_len()
    }
}

/// Pre-tokenizes `texts` with the gpt2 preset's pattern and counts the pre-tokens; see `count_pretokens`.
#[pyfunction]
fn count_gpt2<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
    classes: &Bound<'py, PyBytes>,
) -> PyResult<PyObject> {
    count_pretokens(py, "gpt2", texts, classes)
}

/// Pre-tokenizes `texts` with a preset's pattern (`gpt2`, `cl100k`, `o200k`) and counts the pre-tokens.
///
/// `classes` gives each code point's class (see rust/src/pretok.rs and bpe_studio/engine/_native.py).
/// Returns (pre-token -> count, number of pre-tokens), or the first code point beyond the table as an
/// int, so that the caller extends the table and calls again.
#[pyfunction]
fn count_pretokens<'py>(
    py: Python<'py>,
    preset: &str,
    texts: &Bound<'py, PyList>,
    classes: &Bound<'py, PyBytes>,
) -> PyResult<PyObject> {
    let scan = pretok::scanner(preset).ok_or_else(|| {
        PyValueError::new_err(format!("no native pre-tokenizer for {preset:?}; use gpt2, cl100k or o200k"))
    })?;
    let owned: Vec<Bound<'py, PyString>> =
        texts.iter().map(|t| t.downcast_into::<PyString>().map_err(PyErr::from)).collect::<PyResult<_>>()?;
    // UTF-8 views of the str objects (no copy for ASCII ones); a str holding a lone surrogate raises.
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    let table = classes.as_bytes();
    match py.allow_threads(|| pretok::count(&strs, table, scan)) {
        Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        Ok((counts, total)) => {
            let dict = PyDict::new(py);
            for (token, n) in counts {
                dict.set_item(token, n)?;
            }
            Ok((dict, total).into_pyobject(py)?.into_any().unbind())
        }
    }
}

/// The pre-tokens of `text` under a preset's native scanner and how many characters the scanner read to
/// find them: (pre-tokens, characters read), or the first code point beyond the class table as an int.
/// For tests: the scanners read each character a bounded number of times, whatever the text.
#[pyfunction]
fn pretokens_with_work<'py>(
    py: Python<'py>,
    preset: &str,
    text: &Bound<'py, PyString>,
    classes: &Bound<'py, PyBytes>,
) -> PyResult<PyObject> {
    if pretok::scanner(preset).is_none() {
        return Err(PyValueError::new_err(format!("no native pre-tokenizer for {preset:?}; use gpt2, cl100k or o200k")));
    }
    let text = text.to_str()?;
    match pretok::pretokens_with_work(preset, text, classes.as_bytes()) {
        Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        Ok((pieces, steps)) => Ok((PyList::new(py, pieces)?, steps).into_pyobject(py)?.into_any().unbind()),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MergeKernel>()?;
    m.add_class::<encode::Encoder>()?;
    m.add_class::<count::CountTable>()?;
    m.add_function(wrap_pyfunction!(count_gpt2, m)?)?;
    m.add_function(wrap_pyfunction!(count_pretokens, m)?)?;
    m.add_function(wrap_pyfunction!(pretokens_with_work, m)?)?;
    Ok(())
}
