"""Tokenizer files: each format saves, re-loads (with ``load``, tiktoken, tokenizers) and encodes alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import FORMATS, FormatError, Tokenizer, detect_format, load, save
from bpe_studio.engine.encoding.rank_rule import derive_merges
from bpe_studio.engine.formats.gpt2 import SIDECAR_FILE, read_merges_txt, read_vocab_json
from bpe_studio.engine.formats.tiktoken_format import sidecar_path

from ..reference_encoder import SAMPLE_TEXTS, SPECIAL, gpt2_tokenizer, trained_tokenizer

PATTERNS = ("gpt2", "cl100k", "o200k")


def _samples(data: Path) -> list[str]:
    return [*SAMPLE_TEXTS, (data / "tinystories_sample.txt").read_text(encoding="utf-8")]


def _target(folder: Path, fmt: str) -> Path:
    return (
        folder
        / {"studio": "tok.json", "gpt2": "gpt2", "tiktoken": "tok.tiktoken", "hf": "tokenizer.json"}[fmt]
    )


def _tokenizers(data: Path) -> dict[str, Tokenizer]:
    return {"gpt2-files": gpt2_tokenizer(data)} | {
        f"trained-{p}": trained_tokenizer(data, p) for p in PATTERNS
    }


# -------------------------------------------------------------------------------------- GPT-2 files


def test_from_files_with_and_without_version_header(cs336_data: Path, tmp_path: Path) -> None:
    plain = gpt2_tokenizer(cs336_data)
    assert plain.vocab_size == 50257 and len(plain.merges) == 50000
    assert plain.token_bytes(50256) == SPECIAL.encode() and plain.special_tokens == {SPECIAL: 50256}
    headed = tmp_path / "merges.txt"
    headed.write_bytes(b"#version: 0.2\n" + (cs336_data / "gpt2_merges.txt").read_bytes())
    with_header = Tokenizer.from_files(cs336_data / "gpt2_vocab.json", headed, [SPECIAL])
    assert with_header.merges == plain.merges
    text = (cs336_data / "address.txt").read_text(encoding="utf-8")
    assert with_header.encode(text) == plain.encode(text)


def test_gpt2_folder_without_sidecar_finds_endoftext(cs336_data: Path, tmp_path: Path) -> None:
    # GPT-2's own folder: vocab.json + merges.txt only; <|endoftext|> is the vocab entry no merge makes.
    (tmp_path / "vocab.json").write_bytes((cs336_data / "gpt2_vocab.json").read_bytes())
    (tmp_path / "merges.txt").write_bytes(b"#version: 0.2\n" + (cs336_data / "gpt2_merges.txt").read_bytes())
    assert detect_format(tmp_path) == "gpt2" and detect_format(tmp_path / "vocab.json") == "gpt2"
    tok = load(tmp_path)
    assert tok.special_tokens == {SPECIAL: 50256} and tok.pattern_name == "gpt2"
    assert tok.encode(f"hi{SPECIAL}") == [5303, 50256]


# -------------------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips(cs336_data: Path, tmp_path: Path, fmt: str) -> None:
    samples = _samples(cs336_data)
    for name, tok in _tokenizers(cs336_data).items():
        folder = tmp_path / name
        folder.mkdir()
        path = save(tok, _target(folder, fmt), format=fmt)
        assert detect_format(path) == fmt
        again = load(path)
        assert again.special_tokens == tok.special_tokens, name
        assert again.pattern == tok.pattern, name
        assert dict(again.vocab) == dict(tok.vocab), name
        for text in samples:
            assert again.encode(text) == tok.encode(text), (name, text[:40])
        # Writes are atomic: no temporary files are left behind.
        leftovers = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
        assert leftovers == []


def test_saving_into_a_folder_uses_default_names(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, "gpt2")
    assert save(tok, tmp_path, format="studio") == tmp_path / "tokenizer.json"
    assert save(tok, tmp_path, format="tiktoken") == tmp_path / "tokenizer.tiktoken"
    assert sidecar_path(tmp_path / "tokenizer.tiktoken").is_file()
    assert load(tmp_path / "tokenizer.tiktoken.json").encode("hello") == tok.encode(
        "hello"
    )  # via the sidecar
    assert load(tmp_path).pattern == tok.pattern  # the folder's tokenizer.json
    # Overwriting replaces the file.
    save(tok, tmp_path / "tokenizer.json", format="hf")
    assert detect_format(tmp_path / "tokenizer.json") == "hf"
    with pytest.raises(ValueError, match="not one of"):
        save(tok, tmp_path / "x", format="sentencepiece")


def test_studio_file_keeps_training_metadata(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, "gpt2")
    path = save(tok, tmp_path / "t.json", format="studio", training={"vocab_size": 1000})
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["training"] == {"vocab_size": 1000} and document["format"] == "bpe-studio-tokenizer"


def test_tiktoken_load_derives_the_merges_tiktoken_applies(cs336_data: Path, tmp_path: Path) -> None:
    gpt2 = gpt2_tokenizer(cs336_data)
    path = save(gpt2, tmp_path / "gpt2.tiktoken", format="tiktoken")
    again = load(path)
    assert again.merges == gpt2.merges  # GPT-2's 50,000 merges, not every split of a token in two
    text = (cs336_data / "corpus.en").read_text(encoding="utf-8")[:40000]
    assert again.encode(text) == gpt2.encode(text)
    # "abc" is made from "ab" + "c" (tiktoken joins "ab" first), not also from "a" + "bc".
    assert derive_merges({0: b"a", 1: b"b", 2: b"c", 3: b"ab", 4: b"abc", 5: b"bc"}) == [
        (b"a", b"b"),
        (b"ab", b"c"),
        (b"b", b"c"),
    ]


def test_tiktoken_save_refuses_what_tiktoken_cannot_reproduce(tmp_path: Path) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c")])  # "ab" is merged first but has the higher id
    with pytest.raises(FormatError, match="merge order"):
        save(tok, tmp_path / "x.tiktoken", format="tiktoken")
    unreachable = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"xyz"}, [])
    with pytest.raises(FormatError, match="made by no merge"):
        save(unreachable, tmp_path / "y.tiktoken", format="tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()


# ---------------------------------------------------------------------------------- other libraries


@pytest.fixture(scope="module")
def hf_files(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Tokenizer, Any]]:
    """Each test tokenizer saved as ``hf`` and loaded by Hugging Face ``tokenizers``."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path_factory.mktemp("hf")
    loaded = {}
    for name, tok in _tokenizers(cs336_data).items():
        path = save(tok, folder / f"{name}.json", format="hf")
        loaded[name] = (tok, tokenizers.Tokenizer.from_file(str(path)))
    return loaded


def test_hf_file_encodes_identically_in_tokenizers(cs336_data: Path, hf_files: dict[str, Any]) -> None:
    for name, (tok, theirs) in hf_files.items():
        # "0000": cl100k's possessive \p{N}{1,3}+ must stay possessive in tokenizers' regex dialect.
        for text in [*_samples(cs336_data), "0000 12345678 000000"]:
            assert theirs.encode(text).ids == tok.encode(text), (name, text[:40])
        ids = tok.encode(SAMPLE_TEXTS[1])
        assert theirs.decode(ids, skip_special_tokens=False) == tok.decode(ids)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(st.sampled_from([*"aZé日😀0٣ \t\n\r'.,-<|>", "'s", SPECIAL, "  "]), max_size=30).map(
        "".join
    )
)
def test_hf_file_encodes_identically_on_random_text(hf_files: dict[str, Any], text: str) -> None:
    for name, (tok, theirs) in hf_files.items():
        assert theirs.encode(text).ids == tok.encode(text), name


def test_loads_tokenizer_json_written_by_tokenizers(cs336_data: Path, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    model = models.BPE.from_file(str(cs336_data / "gpt2_vocab.json"), str(cs336_data / "gpt2_merges.txt"))
    theirs = tokenizers.Tokenizer(model)
    theirs.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    theirs.decoder = decoders.ByteLevel()
    theirs.add_special_tokens([SPECIAL])
    path = tmp_path / "tokenizer.json"
    theirs.save(str(path))
    ours = load(path)
    assert ours.special_tokens == {SPECIAL: 50256}
    for text in _samples(cs336_data):
        assert ours.encode(text) == theirs.encode(text).ids

    # A tokenizer trained by tokenizers itself (its own id order), with a Split pre-tokenizer.
    trained = tokenizers.Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(
                tokenizers.Regex(r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+"), behavior="isolated"
            ),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    from tokenizers import trainers

    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<pad>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    trained.train([str(cs336_data / "corpus.en")], trainer)
    trained.save(str(path))
    ours = load(path)
    for text in _samples(cs336_data):
        assert ours.encode(text) == trained.encode(text).ids


def test_tiktoken_file_encodes_identically_in_tiktoken(
    cs336_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file directly, cache nothing
    for name, tok in _tokenizers(cs336_data).items():
        path = save(tok, tmp_path / f"{name}.tiktoken", format="tiktoken")
        sidecar = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
        theirs = tiktoken.Encoding(
            name=name,
            pat_str=sidecar["pattern"],
            mergeable_ranks=load_tiktoken_bpe(str(path)),
            special_tokens=sidecar["special_tokens"],
        )
        for text in _samples(cs336_data):
            assert theirs.encode(text, allowed_special="all") == tok.encode(text), (name, text[:40])


# ---------------------------------------------------------------------------------- malformed files


def _error(path: Path) -> str:
    with pytest.raises(FormatError) as caught:
        load(path)
    return str(caught.value)


def test_malformed_files_name_the_file_and_place(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, "gpt2")
    folder = save(tok, tmp_path / "gpt2", format="gpt2")
    merges = folder / "merges.txt"
    lines = merges.read_text(encoding="utf-8").splitlines()
    lines[3] = "onlyonetoken"
    merges.write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = _error(folder)
    assert str(merges) in message and "line 4" in message

    vocab = folder / "vocab.json"
    vocab.write_text('{"a": 0, "b": "one"}', encoding="utf-8")
    assert "key 'b'" in _error(folder) and str(vocab) in _error(folder)
    vocab.write_text('{"a": 0,\n "b": ', encoding="utf-8")
    assert "line 2" in _error(folder)
    vocab.write_text('{"a b": 0}', encoding="utf-8")
    assert "key 'a b'" in _error(folder)

    tiktoken_file = save(tok, tmp_path / "t.tiktoken", format="tiktoken")
    rows = tiktoken_file.read_text(encoding="ascii").splitlines()
    rows[1] = "not-base64!! 1"
    tiktoken_file.write_text("\n".join(rows), encoding="ascii")
    message = _error(tiktoken_file)
    assert str(tiktoken_file) in message and "line 2" in message
    tiktoken_file.write_text("YQ== 0\nYQ== 1\n", encoding="ascii")
    assert "listed twice" in _error(tiktoken_file)

    hf = save(tok, tmp_path / "hf.json", format="hf")
    document = json.loads(hf.read_text(encoding="utf-8"))
    document["model"]["byte_fallback"] = True
    hf.write_text(json.dumps(document), encoding="utf-8")
    assert "model.byte_fallback" in _error(hf)
    document["model"]["byte_fallback"] = False
    document["pre_tokenizer"]["add_prefix_space"] = "yes"
    hf.write_text(json.dumps(document), encoding="utf-8")
    assert "pre_tokenizer.add_prefix_space" in _error(hf)
    document["pre_tokenizer"] = {"type": "Whitespace"}
    hf.write_text(json.dumps(document), encoding="utf-8")
    assert "pre_tokenizer" in _error(hf)
    document["pre_tokenizer"] = None
    document["model"]["merges"][2] = "a b c"
    hf.write_text(json.dumps(document), encoding="utf-8")
    assert "model.merges[2]" in _error(hf) or "pre_tokenizer" in _error(hf)

    studio = save(tok, tmp_path / "studio.json", format="studio")
    document = json.loads(studio.read_text(encoding="utf-8"))
    document["merges"][5] = "x"
    studio.write_text(json.dumps(document), encoding="utf-8")
    assert "key 'merges' item 5" in _error(studio)

    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    assert "neither" in _error(other)
    text = tmp_path / "notes.txt"
    text.write_text("just some text\n", encoding="utf-8")
    assert "line 1" in _error(text)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "vocab.json" in _error(empty)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.json")


def test_readers(cs336_data: Path, tmp_path: Path) -> None:
    vocab = read_vocab_json(cs336_data / "gpt2_vocab.json")
    assert vocab[220] == b" " and vocab[50256] == SPECIAL.encode()
    merges = read_merges_txt(cs336_data / "gpt2_merges.txt")
    assert merges[0] == (b" ", b"t") and len(merges) == 50000
    crlf = tmp_path / "merges.txt"
    crlf.write_bytes(b"#version: 0.2\r\n\xc4\xa0 t\r\nh e\r\n")
    assert read_merges_txt(crlf) == [(b" ", b"t"), (b"h", b"e")]
    assert SIDECAR_FILE == "bpe_studio.json"


def test_gpt2_files_with_prefixed_names(cs336_data: Path, tmp_path: Path) -> None:
    # Downloads and course materials often name them gpt2_vocab.json + gpt2_merges.txt.
    with pytest.raises(FormatError, match=r"gpt2_vocab.json \+ gpt2_merges.txt.*give the path of one"):
        detect_format(cs336_data)  # it holds two such pairs: GPT-2's and the training reference's
    assert detect_format(cs336_data / "gpt2_vocab.json") == "gpt2"
    tok = load(cs336_data / "gpt2_vocab.json")
    assert tok.encode("Hello world<|endoftext|>") == [15496, 995, 50256]
    only = tmp_path / "only"
    only.mkdir()
    for name in ("gpt2_vocab.json", "gpt2_merges.txt"):
        (only / name).symlink_to(cs336_data / name)
    assert load(only).encode("Hello world") == [15496, 995]
