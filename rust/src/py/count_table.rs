//! `CountTable`: the core's count table (src/count.rs) for Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::{scanner, strings, without_gil};
use crate::count::Table;

/// Pre-token -> count, kept natively across chunks; see rust/src/count.rs.
///
/// Example (Python):
///     >>> t = CountTable(); t.add("gpt2", ["a b a"], classes)  # None: counted
///     >>> len(t), t.total
///     (2, 3)
#[pyclass(module = "bpe_studio._native")]
#[derive(Default)]
pub struct CountTable {
    pub(crate) inner: Table,
}

#[pymethods]
impl CountTable {
    #[new]
    fn new() -> Self {
        CountTable::default()
    }

    /// Pre-tokenizes `texts` with a native scanner (`gpt2`, `cl100k`, `o200k`, `llama3`, ...) and counts the
    /// pre-tokens into the table, with the GIL released.
    ///
    /// Returns None, or the first code point beyond `classes` (see `count_pretokens`) when the class
    /// table is too small: then nothing was counted, and the caller extends the table and calls again. A
    /// str holding a lone surrogate raises UnicodeEncodeError, also before counting.
    fn add(
        &mut self,
        py: Python<'_>,
        preset: &str,
        texts: &Bound<'_, PyList>,
        classes: &Bound<'_, PyBytes>,
    ) -> PyResult<Option<u32>> {
        let scan = scanner(preset)?;
        let owned = strings(texts)?;
        let strs: Vec<&str> = owned.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        let table = classes.as_bytes();
        let inner = &mut self.inner;
        Ok(without_gil(py, || inner.add(&strs, table, scan))?.err())
    }

    /// Counts a chunk's bytes (see `Table::add_bytes`), with the GIL released: checked to be UTF-8, split on
    /// `specials` (longest first) and counted. None when the bytes are not UTF-8 (nothing counted), else
    /// (non-empty parts, special tokens found), or the first code point beyond `classes` as an int
    /// (nothing counted; the caller extends the table and calls again).
    fn add_bytes(
        &mut self,
        py: Python<'_>,
        preset: &str,
        data: &Bound<'_, PyBytes>,
        specials: Vec<Vec<u8>>,
        classes: &Bound<'_, PyBytes>,
    ) -> PyResult<PyObject> {
        let scan = scanner(preset)?;
        let data = data.as_bytes();
        let table = classes.as_bytes();
        let specials: Vec<&[u8]> = specials.iter().map(|s| s.as_slice()).collect();
        let inner = &mut self.inner;
        match without_gil(py, || inner.add_bytes(data, &specials, table, scan))? {
            Ok(Some(found)) => Ok(found.into_pyobject(py)?.into_any().unbind()),
            Ok(None) => Ok(py.None()),
            Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        }
    }

    /// `add_bytes`, and in the same pass the superword split's pieces of the same text into `superwords`
    /// (see `Table::add_bytes_with_superwords`): a superword run counts both stages' pieces in one read of
    /// the corpus. The same returns as `add_bytes`; on None or a code point, neither table counted anything.
    fn add_bytes_with_superwords(
        &mut self,
        py: Python<'_>,
        mut superwords: PyRefMut<'_, CountTable>,
        preset: &str,
        data: &Bound<'_, PyBytes>,
        specials: Vec<Vec<u8>>,
        classes: &Bound<'_, PyBytes>,
    ) -> PyResult<PyObject> {
        let scan = crate::pretok::chars_scanner(preset).ok_or_else(|| {
            PyValueError::new_err(format!(
                "no native pre-tokenizer for {preset:?}; use one of {}",
                crate::pretok::SCANNERS.join(", ")
            ))
        })?;
        let data = data.as_bytes();
        let table = classes.as_bytes();
        let specials: Vec<&[u8]> = specials.iter().map(|s| s.as_slice()).collect();
        let (inner, words) = (&mut self.inner, &mut superwords.inner);
        match without_gil(py, || inner.add_bytes_with_superwords(words, data, &specials, table, scan))? {
            Ok(Some(found)) => Ok(found.into_pyobject(py)?.into_any().unbind()),
            Ok(None) => Ok(py.None()),
            Err(code_point) => Ok(code_point.into_pyobject(py)?.into_any().unbind()),
        }
    }

    /// Adds every count of `other` into this table (GIL released); `other` is left as it was.
    fn merge(&mut self, py: Python<'_>, other: PyRef<'_, CountTable>) -> PyResult<()> {
        let inner = &mut self.inner;
        let theirs = &other.inner;
        without_gil(py, || inner.merge(theirs))?;
        Ok(())
    }

    /// The table as one frame, byte for byte what `encode_table` gives for the same counts in the same order.
    fn to_frame<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let frame = without_gil(py, || inner.to_frame())?;
        Ok(PyBytes::new(py, &frame))
    }

    /// Adds the counts of a frame (from `to_frame` or `encode_table`, maybe another process's),
    /// checked against its declared sizes first: ValueError, and nothing added, if it does not hold them.
    fn add_frame(&mut self, py: Python<'_>, frame: &[u8]) -> PyResult<()> {
        let inner = &mut self.inner;
        without_gil(py, || inner.add_frame(frame))?.map_err(PyValueError::new_err)
    }

    /// How many keys of this table none of `earlier` holds (summed over tables in turn: the number of
    /// distinct keys of them all, without merging them).
    fn count_new(&self, py: Python<'_>, earlier: Vec<PyRef<'_, CountTable>>) -> PyResult<usize> {
        let inner = &self.inner;
        let tables: Vec<&Table> = earlier.iter().map(|t| &t.inner).collect();
        without_gil(py, || inner.count_new(&tables))
    }

    /// The keys as a merge loop's words over the 256 byte tokens (see `Table::byte_words`): (ids as u32 in
    /// native byte order, lengths, counts). The table is emptied (its memory given back).
    fn byte_words<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Vec<u32>, Vec<i64>)> {
        let table = std::mem::take(&mut self.inner);
        let n = table.key_bytes();
        // Written straight into the bytes object (no Vec of the ids copied into it: 8 MB for 2 MB of text).
        let mut lists = (Vec::new(), Vec::new());
        let raw = PyBytes::new_with(py, n * 4, |buf| {
            lists = without_gil(py, || table.byte_words_into(buf))?;
            Ok(())
        })?;
        without_gil(py, move || drop(table))?;
        Ok((raw, lists.0, lists.1))
    }

    /// Number of pre-tokens counted (the sum of all counts).
    #[getter]
    fn total(&self) -> i64 {
        self.inner.total()
    }

    /// Number of distinct pre-tokens.
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// Compacts each table (see `Table::compact`), one after the other, with the GIL released, and returns the
/// number of distinct keys among them all, found in the same pass (`count::compact_all`): a superword run's
/// counting threads' stage-2 tables, at the end of counting. One at a time, not a thread each: each
/// table's hash table is freed before the next one's flat entries are made (together they raised the run's
/// peak by 25-30 MB on 100 MB of text, for 0.08 s).
#[pyfunction]
pub fn compact_tables(py: Python<'_>, mut tables: Vec<PyRefMut<'_, CountTable>>) -> PyResult<usize> {
    let mut inners: Vec<&mut Table> = tables.iter_mut().map(|t| &mut t.inner).collect();
    without_gil(py, move || crate::count::compact_all(&mut inners))
}

/// Which adjacent byte pairs some key of `table` holds, one byte (0 or 1) per pair `x * 256 + y` (see
/// src/chunk_parts.rs): a superword run's stage-1 pre-tokens, the places its stage-2 chunks may be cut at
/// before stage 1 merges.
#[pyfunction]
pub fn held_pairs<'py>(py: Python<'py>, table: PyRef<'py, CountTable>) -> PyResult<Bound<'py, PyBytes>> {
    let inner = &table.inner;
    let held = without_gil(py, || crate::chunk_parts::held_pairs(inner))?;
    PyBytes::new_with(py, held.len(), |buf| {
        for (b, &h) in buf.iter_mut().zip(&held) {
            *b = u8::from(h);
        }
        Ok(())
    })
}

/// Count tables' keys split into their distinct parts (src/chunk_parts.rs), made by `split_chunks` and
/// encoded by `Encoder.encode_parted`, which takes them.
#[pyclass(module = "bpe_studio._native")]
pub struct PartedChunks {
    pub(crate) inner: Option<crate::chunk_parts::Parted>,
}

#[pymethods]
impl PartedChunks {
    /// An empty one (as once taken); `split_chunks` makes the others.
    #[new]
    fn new() -> Self {
        PartedChunks { inner: None }
    }

    /// The tables as they were split (each key whole again, with its count), which empties this.
    fn tables(&mut self, py: Python<'_>) -> PyResult<Vec<CountTable>> {
        let Some(parted) = self.inner.take() else {
            return Err(PyValueError::new_err("the chunks were already taken"));
        };
        let tables = without_gil(py, move || parted.into_tables())?;
        Ok(tables.into_iter().map(|inner| CountTable { inner }).collect())
    }

    /// The number of distinct parts (0 once taken).
    fn parts(&self) -> usize {
        self.inner.as_ref().map_or(0, |p| p.parts.len())
    }
}

/// The keys of `tables` (emptied) cut between any two bytes whose pair `held` (`held_pairs`) does not hold,
/// as distinct parts, with the GIL released: a superword run's stage-2 chunks, split while stage 1 merges.
#[pyfunction]
pub fn split_chunks(
    py: Python<'_>,
    tables: Vec<PyRefMut<'_, CountTable>>,
    held: &Bound<'_, PyBytes>,
) -> PyResult<PartedChunks> {
    let held: Vec<bool> = held.as_bytes().iter().map(|&b| b != 0).collect();
    if held.len() != crate::chunk_parts::PAIRS {
        return Err(PyValueError::new_err(format!(
            "held: need {} bytes, one per pair of bytes, not {}",
            crate::chunk_parts::PAIRS,
            held.len()
        )));
    }
    let taken: Vec<Table> = tables.into_iter().map(|mut t| std::mem::take(&mut t.inner)).collect();
    let parted = without_gil(py, move || crate::chunk_parts::split(taken, held))?;
    Ok(PartedChunks { inner: Some(parted) })
}
