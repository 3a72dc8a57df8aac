"""``bpe-studio compare A B --text/--file`` and ``inspect --text/--file``: the figures of engine/analysis,
checked against slow recomputations and walked through the usual user mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, TrainConfig, load, save, train
from bpe_studio.engine.encoding.analysis import compare, cut_to_merges

SPECIAL = "<|endoftext|>"
# Characters of 1 to 4 UTF-8 bytes; the small tokenizers below split the long ones into byte tokens.
TEXT = "The cat sat on the café mat: 日本語 🙃🙃!\r\n" + SPECIAL + " naïve words, the end."


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two tokenizers with different merges: one trained on prose, one on the same prose upper-cased."""
    folder = tmp_path_factory.mktemp("compare")
    prose = "the cat sat on the mat; the café is naïve. 日本 and 語. " * 200
    paths = []
    for name, corpus in (("a", prose), ("b", prose.upper())):
        source = folder / f"{name}.txt"
        source.write_text(SPECIAL.join([corpus] * 3), encoding="utf-8")
        config = TrainConfig(inputs=(source,), vocab_size=300, special_tokens=(SPECIAL,), workers=1)
        paths.append(save(Tokenizer.from_result(train(config)), folder / f"{name}.json"))
    return paths[0], paths[1]


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _slow_shared(a: Tokenizer, b: Tokenizer, text: str) -> int:
    """A's tokens whose bytes are exactly one of B's tokens' bytes at the same place in the text."""

    def spans(tok: Tokenizer) -> set[tuple[int, int]]:
        ids = tok.encode(text, allowed_special="all")
        found, start = set(), 0
        for i in ids:
            end = start + len(tok.decode_bytes([i]))
            found.add((start, end))
            start = end
        return found

    return len(spans(a) & spans(b))


def test_the_same_tokenizer_twice_shares_every_token(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = files
    tok = load(a)
    spans = tok.encode_with_offsets(TEXT, allowed_special="all")
    assert any(s.partial for s in spans)  # tokens holding part of a character are in the count
    n = len(spans)
    code, out, err = _run(capsys, "compare", a, a, "--text", TEXT)
    assert code == 0, err
    assert f"Both use {n:,} tokens. {n:,} of A's {n:,} tokens cover the same bytes as one of B's" in out
    assert "(all: the same split)" in out
    assert (
        f"A and B are the same tokenizer. The merge lists are identical ({len(tok.merges):,} merges)." in out
    )


def test_two_tokenizers_print_the_compare_tab_figures(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_path, b_path = files
    a, b = load(a_path), load(b_path)
    source = tmp_path / "text.txt"
    source.write_bytes(TEXT.encode("utf-8"))  # read as it is ("\r\n" kept)
    code, out, err = _run(capsys, "compare", a_path, b_path, "--file", source)
    assert code == 0, err
    na, nb = len(a.encode(TEXT)), len(b.encode(TEXT))
    assert na != nb
    fewer, more = ("A", "B") if na < nb else ("B", "A")
    assert f"{fewer} uses {abs(na - nb):,} fewer tokens than {more}" in out
    assert f"{_slow_shared(a, b, TEXT):,} of A's {na:,} tokens cover the same bytes" in out
    first = next(i for i, (x, y) in enumerate(zip(a.merges, b.merges, strict=False)) if x != y)
    assert f"First difference at merge {first + 1:,}" in out  # merges are numbered from 1
    assert "same tokenizer" not in out
    # The lines the app's Compare tab shows (there in rich text) come from the same engine function.
    assert compare(a, b, TEXT).describe_counts() in out

    code, out, err = _run(capsys, "compare", a_path, b_path, "--text", TEXT, "--json")
    found = json.loads(out)
    assert code == 0, err
    assert (found["a"]["tokens"], found["b"]["tokens"]) == (na, nb)
    assert found["shared_tokens"] == _slow_shared(a, b, TEXT)
    assert found["merges"]["first_difference"] == first
    assert found["a"]["bytes_per_token"] == len(TEXT.encode("utf-8")) / na
    assert found["text"] == {
        "characters": len(TEXT),
        "bytes": len(TEXT.encode("utf-8")),
        "words": len(TEXT.split()),
    }
    assert not found["same_split"] and not found["same_tokenizer"] and found["same_pattern"]


def test_compare_reads_standard_input(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    a, b = files
    monkeypatch.setattr("sys.stdin", io.StringIO(TEXT))
    code, out, _ = _run(capsys, "compare", a, b, "--file", "-", "--json")
    assert code == 0 and json.loads(out)["a"]["tokens"] == len(load(a).encode(TEXT))


def test_compare_mistakes_are_one_line_errors(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = files
    with pytest.raises(SystemExit) as stopped:
        main(["compare", str(a), str(b)])
    assert stopped.value.code == 2 and "--text" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["compare", str(a), str(b), "--text", "x", "--file", str(a)])
    assert stopped.value.code == 2 and "not allowed with" in capsys.readouterr().err
    missing = tmp_path / "missing.json"
    code, _, err = _run(capsys, "compare", a, missing, "--text", "x")
    assert (
        code == 2
        and err.startswith(f"bpe-studio: error: B: {missing} does not exist; give a tokenizer file or folder")
        and err.count("\n") == 1
    )
    code, _, err = _run(capsys, "compare", a, b, "--file", tmp_path / "nope.txt")
    assert code == 2 and err == f"bpe-studio: error: --file: {tmp_path / 'nope.txt'} does not exist\n"
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café".encode("latin-1"))
    code, _, err = _run(capsys, "compare", a, b, "--file", latin)
    assert code == 2 and "not valid UTF-8" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "compare", a, b, "--file", tmp_path)
    assert code == 2 and err.startswith("bpe-studio: error: --file: ") and "Traceback" not in err


def test_inspect_with_a_text_counts_tokens_at_smaller_vocab_sizes(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a_path, _ = files
    tok = load(a_path)
    code, out, err = _run(capsys, "inspect", a_path, "--json", "--text", TEXT)
    assert code == 0, err
    info = json.loads(out)
    assert info["learned_tokens"] == len({x + y for x, y in tok.merges})
    sample = info["text"]
    assert sample["tokens"] == len(tok.encode(TEXT))
    points = sample["by_vocab_size"]
    assert points[0]["merges"] == 0 and points[-1]["merges"] == len(tok.merges)
    for point in points:
        cut = cut_to_merges(tok, point["merges"])
        assert (point["vocab_size"], point["tokens"]) == (cut.vocab_size, len(cut.encode(TEXT)))
    deepest = info["deepest_token"]
    assert deepest["depth"] >= 2 and tok.token_id(deepest["text"]) == deepest["id"]
    code, out, _ = _run(capsys, "inspect", a_path, "--text", TEXT)
    assert (
        code == 0
        and f"{len(tok.encode(TEXT)):,} tokens" in out
        and f"vocab {cut_to_merges(tok, 0).vocab_size:>8,}" in out
    )


def test_help_lists_compare(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "compare two tokenizers on a text" in capsys.readouterr().out
