"""A small corpus counted by several workers is cut into several chunks per worker (issue 22): with the
default 4 MiB chunks a 2.3 MB corpus was one chunk, counted by one of two threads while the other waited."""

from __future__ import annotations

from pathlib import Path

from bpe_studio.engine import CountProgress, TrainConfig, iter_train, train

ENDOFTEXT = "<|endoftext|>"


def _corpus(tmp_path: Path, size: int) -> Path:
    words = [f"w{i} x{i % 97} lorem ipsum" for i in range(size // 20)]
    text = ENDOFTEXT.join(" ".join(words[i : i + 50]) for i in range(0, len(words), 50))
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path


def _chunks_counted(config: TrainConfig) -> int:
    progress = [e for e in iter_train(config) if isinstance(e, CountProgress)]
    return len({e.bytes_done for e in progress if e.bytes_done < e.bytes_total}) + 1


def test_two_workers_get_several_chunks_each_of_a_small_corpus(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, 3_000_000)
    config = TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), workers=2)
    assert corpus.stat().st_size < config.chunk_size  # one chunk, were chunk_size the only rule
    assert _chunks_counted(config) >= 8
    # The cut changes nothing of the result: one worker reads the corpus in one chunk.
    alone = train(config.replace(workers=1))
    assert _chunks_counted(config.replace(workers=1)) == 1
    assert train(config).merges == alone.merges


def test_chunk_size_stays_an_upper_bound(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, 400_000)
    config = TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), workers=2)
    assert _chunks_counted(config.replace(chunk_size=50_000)) >= 8
