"""``bpe-studio inspect`` of a SentencePiece ``.model`` says what stands for its pattern: it has none (no
regex cuts its text: spaces become ``▁`` and the merges run over the whole normalized text), where it said
``pattern: gpt2 (preset)``, the placeholder the Tokenizer holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import load
from tests.engine.formats.test_load_imports import _model

NONE = (
    "none: SentencePiece-style BPE, no regex (normalizer Prepend+Replace; no pre-tokenizer: the merges run "
    "over the whole normalized text)"
)


def test_inspect_of_a_model_says_it_has_no_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _model(tmp_path / "tokenizer.model")
    assert main(["inspect", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("pattern:")] == [f"pattern:        {NONE}"]
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["pattern"], info["pattern_preset"]) == (None, None)
    assert info["pre_tokenization"] == NONE.removeprefix("none: ")


def test_what_it_says_is_what_the_model_does(tmp_path: Path) -> None:
    # The text is one piece (no regex cuts it at spaces), normalized: '▁' before it and for each space.
    tok = load(_model(tmp_path / "tokenizer.model"))
    model = tok.piece_model
    assert model is not None and model.pipeline is not None
    assert [p.text for p in model.pipeline.pieces("x y  y")] == ["▁x▁y▁▁y"]
    assert tok.encode("x y") == [model.pieces[t] for t in ("▁", "x", "▁y")]
