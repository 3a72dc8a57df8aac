//! `bpe_studio._native`: BPE Studio's native kernel. Python drives it through
//! `bpe_studio/engine/training/merge.py` (`NativeMergeLoop`), which keeps the loop's API, events, cancelling and
//! replay in Python and calls in here for the index, the choice of the next pair and the merge itself.

mod merge;
mod count;
mod encode;
mod pretok;
mod pretok_cl100k;
mod pretok_o200k;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

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
        let inner = without_gil(py, || {
            let symbols: Vec<u32> = if width == 1 {
                raw.iter().map(|&b| b as u32).collect()
            } else {
                raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
            };
            merge::Kernel::new(symbols, &lengths, &freqs, token_bytes, max_token_length)
        })?
        .map_err(PyValueError::new_err)?;
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

    /// Number of token ids, existing and made.
    fn __len__(&self) -> usize {
        self.inner.vocab_len()
    }
}

/// Where and why the last panic happened, as the panic hook saw it (the payload alone has no place).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Runs `f`, turning a panic (a bug of the kernel) into a RuntimeError that names its cause and place.
///
/// Without this PyO3 raises `PanicException`, a BaseException that `except Exception` misses (and the
/// default hook prints a backtrace on stderr), so a kernel bug took down a command or the app with a
/// traceback instead of its one-line error. Every entry point that does work goes through here.
pub fn unpanic<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let place = std::mem::take(&mut *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()));
        let cause = if !place.is_empty() {
            place
        } else if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_string()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "a panic".to_string()
        };
        PyRuntimeError::new_err(format!(
            "the native kernel failed ({cause}); this is a bug: please report it, and set BPE_STUDIO_PURE=1 to use the Python engine meanwhile"
        ))
    })
}

/// `py.allow_threads(f)` through `unpanic`: `f` runs without the GIL, and a panic is a RuntimeError.
pub fn without_gil<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    unpanic(|| py.allow_threads(f))
}

/// Panics on purpose, for the tests that check a panic reaches Python as a RuntimeError (no kernel input
/// is known to panic).
#[pyfunction]
fn panic_for_tests(message: &str) -> PyResult<()> {
    unpanic(|| panic!("{message}"))
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
    let scan = pretok::scanner(preset).ok_or_else(|| {
        PyValueError::new_err(format!("no native pre-tokenizer for {preset:?}; use gpt2, cl100k or o200k"))
    })?;
    let owned: Vec<Bound<'py, PyString>> =
        texts.iter().map(|t| t.downcast_into::<PyString>().map_err(PyErr::from)).collect::<PyResult<_>>()?;
    // UTF-8 views of the str objects (no copy for ASCII ones); a str holding a lone surrogate raises.
    let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
    let table = classes.as_bytes();
    match without_gil(py, || pretok::count(&strs, table, scan))? {
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
    match unpanic(|| pretok::pretokens_with_work(preset, text, classes.as_bytes()))? {
        Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        Ok((pieces, steps)) => Ok((PyList::new(py, pieces)?, steps).into_pyobject(py)?.into_any().unbind()),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The panic's place for `unpanic`, instead of a backtrace on stderr (a panic is a RuntimeError).
    std::panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string().replace(":\n", ": ").replace('\n', " ");
    }));
    m.add_class::<MergeKernel>()?;
    m.add_class::<encode::Encoder>()?;
    m.add_class::<count::CountTable>()?;
    m.add_function(wrap_pyfunction!(count_gpt2, m)?)?;
    m.add_function(wrap_pyfunction!(count_pretokens, m)?)?;
    m.add_function(wrap_pyfunction!(pretokens_with_work, m)?)?;
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    Ok(())
}
