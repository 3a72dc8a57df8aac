"""Hugging Face ``tokenizer.json``: post-processors (BOS/EOS), ``truncation`` / ``padding``, ``convert``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import FormatWarning, Template, Tokenizer, load, save

BOS, EOS, BEGIN = "<s>", "</s>", "<|begin_of_text|>"
TEXTS = ["hello world", "", "<s>x", "he said: hello, hello!\n\n  ", "日本 😀"]


def _tokenizer() -> Tokenizer:
    """Bytes, four merges and three special tokens at fixed ids (300-302)."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b" ", b"w")]
    for n, (left, right) in enumerate(merges):
        vocab[256 + n] = left + right
    return Tokenizer(vocab, merges, {BOS: 300, EOS: 301, BEGIN: 302})


def _hf_file(tmp_path: Path, processor: Any, **keys: Any) -> Path:
    """Our tokenizer as a ``tokenizer.json`` with ``post_processor`` (and other top-level keys) replaced."""
    path = save(_tokenizer(), tmp_path / "base.json", format="hf")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["post_processor"] = processor
    document.update(keys)
    out = tmp_path / "tokenizer.json"
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


def _special(name: str, i: int) -> dict[str, Any]:
    return {"id": name, "ids": [i], "tokens": [name]}


def _piece(name: str) -> dict[str, Any]:
    if name in ("$A", "$B"):
        return {"Sequence": {"id": name[1], "type_id": 0}}
    return {"SpecialToken": {"id": name, "type_id": 0}}


def _template(single: str, specials: dict[str, int]) -> dict[str, Any]:
    """A ``TemplateProcessing`` as ``tokenizers`` writes it, e.g. ``_template("<s> $A", {"<s>": 300})``."""
    return {
        "type": "TemplateProcessing",
        "single": [_piece(p) for p in single.split()],
        "pair": [_piece(p) for p in single.split()],
        "special_tokens": {name: _special(name, i) for name, i in specials.items()},
    }


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
ROBERTA = {
    "type": "RobertaProcessing",
    "sep": [EOS, 301],
    "cls": [BOS, 300],
    "trim_offsets": True,
    "add_prefix_space": False,
}

#: name -> (post_processor, ids before the text, ids after it)
PROCESSORS: dict[str, tuple[Any, list[int], list[int]]] = {
    "llama3": (
        {"type": "Sequence", "processors": [BYTE_LEVEL, _template(f"{BEGIN} $A", {BEGIN: 302})]},
        [302],
        [],
    ),
    "bos-eos": (_template(f"{BOS} $A {EOS}", {BOS: 300, EOS: 301}), [300], [301]),
    "two-eos": (_template(f"{BOS} $A {EOS} {EOS}", {BOS: 300, EOS: 301}), [300], [301, 301]),
    "roberta": (ROBERTA, [300], [301]),
    "bert": ({"type": "BertProcessing", "sep": [EOS, 301], "cls": [BOS, 300]}, [300], [301]),
    "byte-level": (BYTE_LEVEL, [], []),
}


@pytest.mark.parametrize("name", list(PROCESSORS))
def test_post_processor_ids_are_added_around_each_text(tmp_path: Path, name: str) -> None:
    processor, before, after = PROCESSORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatWarning)  # these are all applied: no warning
        tok = load(_hf_file(tmp_path, processor))
    plain = _tokenizer()
    for text in TEXTS:
        inner = plain.encode(text)
        assert tok.encode(text) == [*before, *inner, *after], text
        assert tok.encode(text, add_special_tokens=False) == inner
        assert list(tok.encode_iterable([text[:3], text[3:]])) == tok.encode(text)
        spans = tok.encode_with_offsets(text)
        assert [s.id for s in spans] == tok.encode(text)
        assert all(s.start == s.end for s in spans[: len(before)])  # BOS/EOS cover no text
    assert tok.encode("hello") == [*before, 258, 111, *after]  # written out once, by hand
    assert tok.decode(tok.encode("hello")) == "".join(
        [*(plain.decode([i]) for i in before), "hello", *(plain.decode([i]) for i in after)]
    )


@pytest.mark.parametrize("name", list(PROCESSORS))
def test_ids_equal_those_of_tokenizers(tmp_path: Path, name: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    path = _hf_file(tmp_path, PROCESSORS[name][0])
    theirs = tokenizers.Tokenizer.from_file(str(path))
    ours = load(path)
    for text in TEXTS:
        assert ours.encode(text) == theirs.encode(text).ids, text
        assert (
            ours.encode(text, add_special_tokens=False) == theirs.encode(text, add_special_tokens=False).ids
        )
    # Written back as hf, the template is kept and tokenizers reads the same ids.
    again_path = save(ours, tmp_path / "again.json", format="hf")
    again = tokenizers.Tokenizer.from_file(str(again_path))
    assert load(again_path).template == ours.template
    for text in TEXTS:
        assert again.encode(text).ids == theirs.encode(text).ids


def test_a_template_is_kept_by_hf_and_studio_and_other_formats_warn(tmp_path: Path) -> None:
    tok = load(_hf_file(tmp_path, PROCESSORS["bos-eos"][0]))
    assert tok.template == Template((300,), (301,))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatWarning)
        studio = save(tok, tmp_path / "studio.json")
    assert json.loads(studio.read_text(encoding="utf-8"))["version"] == 2  # older readers refuse it
    assert load(studio).template == tok.template and load(studio).encode("hello") == [300, 258, 111, 301]
    # Without a template, a studio file stays version 1.
    assert json.loads(save(_tokenizer(), tmp_path / "plain.json").read_text(encoding="utf-8"))["version"] == 1
    for fmt in ("gpt2", "tiktoken"):
        with pytest.warns(FormatWarning, match=f"the {fmt} format cannot store the template"):
            written = (
                save(tok, tmp_path / fmt, format=fmt)
                if fmt == "gpt2"
                else save(tok, tmp_path / f"t.{fmt}", format=fmt)
            )
        assert load(written).template is None


@pytest.mark.parametrize(
    ("processor", "message"),
    [
        ({"type": "SomeFutureProcessor"}, "type 'SomeFutureProcessor' is not one bpe-studio applies"),
        (_template(f"{BOS} $B {EOS}", {BOS: 300, EOS: 301}), "holds 'B', not \\$A once"),
        (_template(f"{BOS} {EOS}", {BOS: 300, EOS: 301}), "does not hold the text"),
        (
            {"type": "Sequence", "processors": [_template(f"{BOS} $A", {BOS: 300}), ROBERTA]},
            "a Sequence with 2 processors that add tokens",
        ),
    ],
)
def test_other_post_processors_are_not_applied_with_a_warning(
    tmp_path: Path, processor: Any, message: str
) -> None:
    path = _hf_file(tmp_path, processor)
    with pytest.warns(FormatWarning, match=message) as caught:
        tok = load(path)
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    assert "is not applied" in str(caught[0].message)
    assert tok.template is None and tok.encode("hello") == [258, 111]


def test_truncation_and_padding_are_not_applied_with_a_warning(tmp_path: Path) -> None:
    truncation = {"direction": "Right", "max_length": 3, "strategy": "LongestFirst", "stride": 0}
    padding = {
        "strategy": {"Fixed": 8},
        "direction": "Right",
        "pad_to_multiple_of": None,
        "pad_id": 0,
        "pad_type_id": 0,
        "pad_token": "<pad>",
    }
    path = _hf_file(tmp_path, None, truncation=truncation, padding=padding)
    with pytest.warns(FormatWarning) as caught:
        tok = load(path)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "key 'truncation' is not applied" in messages[0] and "max_length 3" in messages[0]
    assert "key 'padding' is not applied" in messages[1]
    assert tok.encode("hello world") == _tokenizer().encode("hello world")  # the whole text, unpadded

    # Padding to the longest text of a batch leaves a single text as it is: nothing to say.
    batch_longest = {**padding, "strategy": "BatchLongest"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatWarning)
        load(_hf_file(tmp_path, None, padding=batch_longest))


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_encode_shows_bos_and_warns_once_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llama = _hf_file(tmp_path, PROCESSORS["llama3"][0])
    code, out, err = _run(capsys, "encode", "-t", llama, "hello")
    assert (code, out, err) == (0, "302 258 111\n", "")

    truncating = _hf_file(tmp_path, None, truncation={"max_length": 2})
    code, out, err = _run(capsys, "encode", "-t", truncating, "hello world")
    assert code == 0 and out.split() == [str(i) for i in _tokenizer().encode("hello world")]
    assert err.count("\n") == 1 and err.startswith(f"bpe-studio: warning: {truncating}: key 'truncation'")


def test_cli_convert_says_what_it_does_not_carry_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _hf_file(tmp_path, PROCESSORS["roberta"][0], truncation={"max_length": 512})
    document = json.loads(path.read_text(encoding="utf-8"))
    document["added_tokens"][0]["special"] = False
    document["model"]["unk_token"] = "<unk>"
    path.write_text(json.dumps(document), encoding="utf-8")

    code, _, err = _run(capsys, "convert", path, tmp_path / "out", "--to", "gpt2")
    assert code == 0, err
    lines = err.splitlines()
    assert all(line.startswith("bpe-studio: warning: ") for line in lines), err
    expected = [
        "key 'truncation' is not applied",
        "the gpt2 format cannot store the template (ids [300] before and [301] after",
        # What libraries reading the gpt2 files alone will do (issue 20: convert says it).
        "gpt2 files do not mark special tokens: tokenizers will encode '<s>' and 2 more as ordinary text",
        "key 'truncation': not written",
        "added_tokens: 'special': false on 1 token(s) (e.g. '<s>')",
        "model.unk_token '<unk>': not kept",
    ]
    assert len(lines) == len(expected), err
    for line, part in zip(lines, expected, strict=True):
        assert part in line, (line, part)

    # To hf: the template is kept, but Roberta's pair template and offset options are not.
    code, _, err = _run(capsys, "convert", path, tmp_path / "again.json", "--to", "hf")
    assert code == 0, err
    assert "key 'post_processor' (RobertaProcessing): written as a TemplateProcessing" in err
    assert "cannot store the template" not in err
    # Nothing to say about a file we wrote ourselves.
    code, _, err = _run(capsys, "convert", tmp_path / "again.json", tmp_path / "third.json", "--to", "hf")
    assert (code, err) == (0, "")


def test_cli_encode_no_special_adds_no_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _hf_file(tmp_path, PROCESSORS["bos-eos"][0])
    code, out, _ = _run(capsys, "encode", "-t", path, "--no-special", "hello<s>")
    assert code == 0 and out.split() == [str(i) for i in _tokenizer().encode_ordinary("hello<s>")]
    code, out, _ = _run(capsys, "encode", "-t", path, "hello<s>")
    assert code == 0 and out.split() == ["300", "258", "111", "300", "301"]


def test_cli_convert_to_studio_keeps_the_template_and_says_what_else_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _hf_file(tmp_path, PROCESSORS["llama3"][0])
    code, _, err = _run(capsys, "convert", path, tmp_path / "s.json", "--to", "studio")
    assert code == 0
    assert err == (
        f"bpe-studio: warning: {path}: key 'post_processor' (Sequence): only the ids around a single text "
        "are kept (not its pair template, type ids or offset options)\n"
    )
    assert load(tmp_path / "s.json").encode("hello") == [302, 258, 111]
