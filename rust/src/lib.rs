//! BPE Studio's native kernel, built into `bpe_studio._native`. Python drives it through
//! `bpe_studio/engine/native.py` and `bpe_studio/engine/training/merge.py` (`NativeMergeLoop`), which keep
//! the APIs, events, cancelling and replay in Python and call in here for the heavy loops.
//!
//! The crate is two layers, as tiktoken's is:
//!
//! * the core, plain Rust with no Python in it, each module with its unit tests (`cargo test`):
//!   [`merge`] (the training merge loop) with [`merge_heap`] (its priority queue) and [`pair_table`] (its pair counts), [`count`] (the table of pre-token counts), [`chunk_parts`] (a superword run's
//!   stage-2 chunks split into their distinct parts before stage 1's merges are known), [`encode`] (the BPE
//!   of an encoder's rank table and the safe cut of long texts) with [`piece_map`] (its pre-token cache's
//!   packed table), [`pretok`] with [`pretok_cl100k`] and
//!   [`pretok_o200k`] (the presets' scanners, and with other parameters those of Llama 3, Qwen and Mistral
//!   Nemo's patterns), [`pretok_superbpe`] (the superword split), [`rankfile`] (reading tiktoken rank files),
//!   [`spmodel`] (reading SentencePiece `.model` files), [`hfjson`] (reading a `tokenizer.json`'s vocab and
//!   merges), [`bytelevel`] (GPT-2's byte-level alphabet read
//!   back into bytes) and [`guard`] (a panic as an error message);
//! * the PyO3 bindings (`src/py/`), compiled only with the `python` feature that setuptools-rust switches
//!   on: they convert arguments, release the GIL and turn errors into Python exceptions, nothing more.

pub mod bytelevel;
pub mod chunk_parts;
pub mod count;
pub mod cut_words;
pub mod encode;
pub mod guard;
pub mod hfjson;
pub mod merge;
pub mod merge_heap;
pub mod pair_table;
pub mod piece_map;
pub mod pretok;
pub mod pretok_cl100k;
pub mod pretok_o200k;
pub mod pretok_superbpe;
pub mod rankfile;
pub mod spmodel;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod testing;
