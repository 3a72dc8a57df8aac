"""Damaged tokenizer files: every format, truncated or bit-flipped, loads as it was or raises FormatError.

Also the two format findings of issue 9: deeply nested JSON (a RecursionError escaped) and the empty token of
``.tiktoken`` files (``= RANK``, which tiktoken reads and real files ship, was refused).
"""

from __future__ import annotations

import base64
import functools
import json
import tempfile
import tracemalloc
import warnings
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import FormatError, FormatWarning, Template, Tokenizer, load, save
from bpe_studio.engine.formats.gpt2 import read_sidecar, read_vocab_json
from bpe_studio.engine.formats.hf import load_hf
from bpe_studio.engine.formats.studio import load_studio
from bpe_studio.engine.formats.tiktoken_format import read_tiktoken, sidecar_path

SPECIAL = "<|endoftext|>"


def small_tokenizer() -> Tokenizer:
    """Bytes, a few merges (so tiktoken's rank rule holds: ids follow the merges) and one special token."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b" ", b"w"), (b"o", b"r"), (b" w", b"or")]
    for n, (left, right) in enumerate(merges):
        vocab[256 + n] = left + right
    return Tokenizer(vocab, merges, {SPECIAL: 300}, pattern="cl100k")


# ------------------------------------------------------------------------------------ deeply nested JSON

NESTED = "[" * 100_000


@pytest.mark.parametrize(
    "document",
    [
        '{"format": "bpe-studio-tokenizer", "version": 1, "vocab": ' + NESTED,  # detect + studio
        '{"model": ' + '{"a": ' * 100_000,  # detect + hf (objects)
        '{"format": "bpe-studio-tokenizer", "version": 1, "vocab": {"0": ' + "1" * 5000 + "}}",  # huge int
    ],
)
def test_deeply_nested_json_is_a_format_error_naming_the_file(tmp_path: Path, document: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(document, encoding="utf-8")
    for reader in (load, load_studio, load_hf):
        with pytest.raises(FormatError, match=str(path)):
            reader(path)


def test_deeply_nested_gpt2_and_sidecar_files_are_format_errors(tmp_path: Path) -> None:
    folder = save(small_tokenizer(), tmp_path / "gpt2", format="gpt2")
    for name in ("vocab.json", "bpe_studio.json"):
        path = folder / name
        original = path.read_bytes()
        path.write_text(NESTED, encoding="utf-8")
        with pytest.raises(FormatError, match=str(path)):
            load(folder)
        with pytest.raises(FormatError, match=str(path)):
            (read_vocab_json if name == "vocab.json" else read_sidecar)(path)
        path.write_bytes(original)
    written = save(small_tokenizer(), tmp_path / "t.tiktoken", format="tiktoken")
    sidecar_path(written).write_text('{"format": ' + NESTED, encoding="utf-8")
    with pytest.raises(FormatError, match=str(sidecar_path(written))):
        load(written)


# ----------------------------------------------------------------------------- the empty .tiktoken token


def _with_empty_token(tmp_path: Path) -> tuple[Path, dict[int, bytes]]:
    """A ``.tiktoken`` file of the 256 bytes with the empty token at rank 256 (as ``= 256``), first line."""
    ranks = {i: bytes([i]) for i in range(256)}
    lines = ["= 256", *(f"{base64.b64encode(t).decode()} {i}" for i, t in ranks.items())]
    path = tmp_path / "empty.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path, {**ranks, 256: b""}


def test_tiktoken_file_with_the_empty_token_loads_and_round_trips(tmp_path: Path) -> None:
    path, ranks = _with_empty_token(tmp_path)
    assert read_tiktoken(path) == ranks
    tok = load(path, pattern="gpt2")  # detected as tiktoken from its first line "= 256"
    assert tok.vocab[256] == b"" and tok.encode("hi") == [104, 105]
    again = save(tok, tmp_path / "again.tiktoken", format="tiktoken")
    assert "= 256\n" in again.read_text(encoding="ascii")
    assert dict(load(again).vocab) == dict(tok.vocab)


def test_tiktoken_reads_the_empty_token_as_we_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    path, ranks = _with_empty_token(tmp_path)
    again = save(load(path, pattern="gpt2"), tmp_path / "again.tiktoken", format="tiktoken")
    assert load_tiktoken_bpe(str(path)) == {t: i for i, t in ranks.items()}
    assert load_tiktoken_bpe(str(again)) == {t: i for i, t in ranks.items()}


# ----------------------------------------------------------------------------------- lone surrogates


def _with_lone_surrogate(fmt: str, folder: Path) -> Path:
    """The format's files where the special token is spelled ``"\\ud800"``: valid JSON, not valid Unicode.

    Their checksums are removed, as by someone who edits the files on purpose.
    """
    path = save(small_tokenizer(), folder / ("g" if fmt == "gpt2" else "t.json"), format=fmt)
    for file in [path / "vocab.json", path / "bpe_studio.json"] if fmt == "gpt2" else [path]:
        document = json.loads(file.read_text(encoding="utf-8"))
        document.pop("checksum", None)
        document.pop("checksums", None)
        text = json.dumps(document).replace(json.dumps(SPECIAL), '"\\ud800"')
        file.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["studio", "hf", "gpt2"])
def test_a_lone_surrogate_in_a_json_string_is_a_format_error(tmp_path: Path, fmt: str) -> None:
    path = _with_lone_surrogate(fmt, tmp_path)
    with pytest.raises(FormatError, match="not valid Unicode"):
        load(path)


# ------------------------------------------------------------------------ truncated and bit-flipped files

#: The files of each format as written by save(): (format, file to load, files written). hf and studio files
#: have a template (BOS), so that its reading is exercised too.
LAYOUTS: dict[str, tuple[str, list[str]]] = {
    "studio": ("tokenizer.json", ["tokenizer.json"]),
    "hf": ("tokenizer.json", ["tokenizer.json"]),
    "gpt2": (".", ["vocab.json", "merges.txt", "bpe_studio.json"]),
    "tiktoken": ("t.tiktoken", ["t.tiktoken", "t.tiktoken.json"]),
}


def _original(fmt: str) -> Tokenizer:
    tok = small_tokenizer()
    if fmt not in ("hf", "studio"):  # the formats that store a template
        return tok
    return Tokenizer(
        dict(tok.vocab),
        tok.merges,
        dict(tok.special_tokens),
        pattern=tok.pattern,
        template=Template((300,), ()),
    )


@functools.cache
def _written(fmt: str) -> dict[str, bytes]:
    """The bytes of each file ``save`` writes for the format."""
    with tempfile.TemporaryDirectory() as folder:
        entry, names = LAYOUTS[fmt]
        save(_original(fmt), Path(folder) / entry, format=fmt)
        return {name: (Path(folder) / name).read_bytes() for name in names}


def _state(tok: Tokenizer) -> tuple[object, ...]:
    """Everything that decides a tokenizer's ids."""
    return dict(tok.vocab), tok.merges, dict(tok.special_tokens), tok.pattern, tok.template


#: What loading a damaged few-kB file may allocate at most: a corrupt size or id must not make it allocate
#: by what the file claims (ids are capped at 0x10FFFF, so the id -> token table stays under ~9 MB).
MEMORY_LIMIT = 64 << 20


def _load_damaged(fmt: str, name: str, data: bytes) -> Tokenizer | FormatError:
    """Write the format's files with ``name`` replaced by ``data`` and load them (any warning is fine)."""
    with tempfile.TemporaryDirectory() as folder:
        for other, content in _written(fmt).items():
            (Path(folder) / other).write_bytes(data if other == name else content)
        tracemalloc.start()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FormatWarning)  # e.g. a post-processor type that was hit
                return load(Path(folder) / LAYOUTS[fmt][0])
        except FormatError as exc:  # anything else fails the test
            assert folder in str(exc), f"the message does not name the file: {exc}"
            return exc
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert peak < MEMORY_LIMIT, f"loading allocated {peak:,} bytes"


FILES = [(fmt, name) for fmt, (_, names) in LAYOUTS.items() for name in names]


@pytest.mark.parametrize(("fmt", "name"), FILES)
@settings(max_examples=150, deadline=None)
@given(cut=st.floats(0, 1, exclude_max=True))
def test_a_truncated_file_loads_as_it_was_or_is_a_format_error(fmt: str, name: str, cut: float) -> None:
    data = _written(fmt)[name]
    at = int(len(data) * cut)
    loaded = _load_damaged(fmt, name, data[:at])
    if isinstance(loaded, FormatError):
        return
    # Cut JSON does not parse; the line files (merges.txt, .tiktoken) are covered by the sidecar's checksums.
    assert _state(loaded) == _state(_original(fmt)), f"cut at {at} of {len(data)}: loads another tokenizer"


@pytest.mark.parametrize(("fmt", "name"), FILES)
@settings(max_examples=150, deadline=None)
# Found by this test: in the tiktoken sidecar, 'checksums' -> 'checkrums' (turning the check off) and a
# flip in the pattern.
@example(flips=[(0.578125, 0), (0.25, 1)])
@given(
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)), min_size=1, max_size=3)
)
def test_a_bit_flipped_file_loads_or_is_a_format_error(
    fmt: str, name: str, flips: list[tuple[float, int]]
) -> None:
    data = bytearray(_written(fmt)[name])
    for where, bit in flips:
        data[int(len(data) * where)] ^= 1 << bit
    loaded = _load_damaged(fmt, name, bytes(data))
    if isinstance(loaded, FormatError) or _state(loaded) == _state(_original(fmt)):
        return
    # Only hf files carry no checksum (tokenizers defines the format): a flip inside a token, the pattern or
    # a special token can make another valid tokenizer there. What must never happen is another exception.
    assert fmt == "hf", "a damaged file loads as another tokenizer"


# ------------------------------------------------------------------------------------------- checksums


def test_a_cut_or_swapped_gpt2_file_is_refused_naming_it(tmp_path: Path) -> None:
    folder = save(small_tokenizer(), tmp_path / "a", format="gpt2")
    merges = folder / "merges.txt"
    lines = merges.read_bytes().splitlines(keepends=True)
    merges.write_bytes(b"".join(lines[:-2]))  # cut at a line end: well formed, two merges short
    with pytest.raises(FormatError, match=f"{merges}: checksum: does not match"):
        load(folder)
    # A vocab.json from another tokenizer next to this merges.txt (a mixed set).
    other = Tokenizer({i: bytes([i]) for i in range(256)}, [], {SPECIAL: 256})
    save(other, tmp_path / "b", format="gpt2")
    merges.write_bytes(b"".join(lines))
    (folder / "vocab.json").write_bytes((tmp_path / "b" / "vocab.json").read_bytes())
    with pytest.raises(FormatError, match=f"{folder / 'vocab.json'}: checksum: does not match"):
        load(folder)


def test_a_cut_tiktoken_file_is_refused_and_an_edit_on_purpose_loads(tmp_path: Path) -> None:
    path = save(small_tokenizer(), tmp_path / "t.tiktoken", format="tiktoken")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(FormatError, match=f"{path}: checksum: does not match"):
        load(path)
    # Told how to accept an edit: delete the 'checksums' key.
    sidecar = sidecar_path(path)
    document = json.loads(sidecar.read_text(encoding="utf-8"))
    del document["checksums"]
    sidecar.write_text(json.dumps(document), encoding="utf-8")
    assert len(load(path).vocab) == len(small_tokenizer().vocab) - 1


def test_an_edited_studio_file_is_refused_until_its_checksum_is_removed(tmp_path: Path) -> None:
    path = save(small_tokenizer(), tmp_path / "t.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["pattern"] = "gpt2"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError, match="key 'checksum': does not match the file's content"):
        load(path)
    del document["checksum"]
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load(path).pattern_name == "gpt2"
    # Formatting and the training notes are not covered: re-indenting changes nothing.
    path = save(small_tokenizer(), tmp_path / "u.json", training={"note": "x"})
    document = json.loads(path.read_text(encoding="utf-8"))
    document["training"] = {"note": "edited"}
    path.write_text(json.dumps(document, indent=4), encoding="utf-8")
    assert load(path).vocab == small_tokenizer().vocab
