"""SentencePiece-style BPE (Llama 2, Mistral...): a ``.model`` of type BPE and a byte-fallback
``tokenizer.json`` encode as ``sentencepiece`` and ``tokenizers`` do, on any text (characters the training
text lacks included, so that byte fallback is used); what is not BPE is refused with one sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine.formats import FormatError, load, save

from ...spm_helpers import llama2_style_tokenizer_json

spm = pytest.importorskip("sentencepiece", reason="needs the sentencepiece package (the test extra)")
hf_tokenizers = pytest.importorskip("tokenizers", reason="needs the tokenizers package (the test extra)")

_TRAINING = "\n".join(
    f"the {w} of {v} in a {u} was {n} and the {w}s were {v}ed, {n} times over." * 2
    for n, (w, v, u) in enumerate(
        zip(
            ["cat", "dog", "house", "river", "song", "light", "stone"] * 6,
            ["walk", "talk", "jump", "paint", "fold", "turn"] * 7,
            ["garden", "kitchen", "forest", "city", "valley", "boat", "field"] * 6,
            strict=False,
        )
    )
)

# Characters of the training text and others (byte fallback), spaces and newlines in runs.
_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from("the cat walked over\n  \t,."), st.characters(codec="utf-8")),
    max_size=60,
)


def _train(folder: Path, **options: Any) -> Path:
    corpus = folder / "corpus.txt"
    corpus.write_text(_TRAINING, encoding="utf-8")
    settings_: dict[str, Any] = {
        "model_type": "bpe",
        "vocab_size": 300,
        "byte_fallback": True,
        "normalization_rule_name": "identity",
        "remove_extra_whitespaces": False,
        "minloglevel": 2,
    } | options
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "m"), **settings_)
    return folder / "m.model"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train(tmp_path_factory.mktemp("spm"))


@pytest.fixture(scope="module")
def hf_file(model_file: Path) -> Path:
    """A Llama 2 style tokenizer.json of the same model (merges by the score of the piece they make)."""
    return llama2_style_tokenizer_json(model_file, model_file.parent / "tokenizer.json")


def test_a_model_file_opens_as_sentencepiece_bpe_in_python(model_file: Path) -> None:
    tok = load(model_file)
    assert tok.piece_model is not None and tok.backend == "python"
    assert b"".join(tok.token_bytes(i) for i in tok.encode("the cat")) == b" the cat"
    assert load(model_file.parent / "m.model").encode("the cat") == tok.encode("the cat")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_model_file_encodes_as_sentencepiece(model_file: Path, text: str) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    tok = load(model_file)
    assert tok.encode(text) == sp.encode(text)
    assert tok.decode(tok.encode(text)) == sp.decode(sp.encode(text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_tokenizer_json_encodes_as_tokenizers(hf_file: Path, text: str) -> None:
    reference = hf_tokenizers.Tokenizer.from_file(str(hf_file))
    tok = load(hf_file)
    assert tok.encode(text) == reference.encode(text).ids
    spans = tok.encode_with_offsets(text)
    assert [s.id for s in spans] == tok.encode(text)
    assert all(0 <= s.start <= s.end <= len(text) for s in spans)


def test_byte_fallback_is_used_for_unknown_characters(model_file: Path) -> None:
    tok = load(model_file)
    ids = tok.encode("€")
    assert [tok.token_bytes(i) for i in ids] == [b" ", b"\xe2", b"\x82", b"\xac"]


def test_saving_is_refused_with_a_reason(model_file: Path, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="SentencePiece-style BPE"):
        save(load(model_file), tmp_path / "out.json", format="hf")


# ---------------------------------------------------------------------------------------------- refusals


def _one_line(path: Path) -> str:
    with pytest.raises(FormatError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


def test_a_unigram_model_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _train(tmp_path, model_type="unigram", vocab_size=400, hard_vocab_limit=False)
    assert "model_type: a Unigram model (SentencePiece); BPE Studio opens BPE tokenizers only" in _one_line(
        path
    )
    assert main(["encode", "-t", str(path), "hi"]) == 2
    assert "a Unigram model" in capsys.readouterr().err


def test_models_this_engine_does_not_reproduce_say_why(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert "normalization rule 'nmt_nfkc'" in _one_line(
        _train(tmp_path / "a", normalization_rule_name="nmt_nfkc")
    )
    (tmp_path / "b").mkdir()
    assert "byte_fallback: false" in _one_line(_train(tmp_path / "b", byte_fallback=False))


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Unigram", "model.type: a Unigram model (SentencePiece"),
        ("WordPiece", "model.type: a WordPiece model (BERT style"),
    ],
)
def test_unigram_and_wordpiece_tokenizer_json_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, expected: str
) -> None:
    models = hf_tokenizers.models
    built = (
        models.Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0)
        if model == "Unigram"
        else models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]")
    )
    path = tmp_path / "tokenizer.json"
    hf_tokenizers.Tokenizer(built).save(str(path))
    message = _one_line(path)
    assert expected in message and "BPE Studio opens BPE tokenizers only" in message
    assert main(["encode", "-t", str(path), "hi"]) == 2
    assert expected in capsys.readouterr().err


def test_an_rwkv_vocabulary_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rwkv_vocab_v20230424.txt"
    path.write_text("1 '\\x00' 1\n2 '\\x01' 1\n257 b'\\xe4' 1\n", encoding="utf-8")
    assert "line 1: an RWKV vocabulary" in _one_line(path)
    assert main(["encode", "-t", str(path), "hi"]) == 2
    assert "an RWKV vocabulary" in capsys.readouterr().err


def test_a_byte_fallback_file_of_another_shape_names_the_key(hf_file: Path, tmp_path: Path) -> None:
    document = json.loads(hf_file.read_text(encoding="utf-8"))
    document["pre_tokenizer"] = {"type": "ByteLevel"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert "model.byte_fallback: true beside a ByteLevel" in _one_line(path)


@pytest.mark.parametrize("which", ["model_file", "hf_file"])
def test_every_cut_counts_what_it_encodes(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    # The Playground's vocab-size curve and cut: each cut is that cut of the piece model (it used to keep
    # the full model's pieces, so a smaller vocabulary encoded as the whole one).
    from bpe_studio.engine.encoding.analysis import MergeIndex, cut_to_merges, token_count_curve

    # (A larger vocabulary than the fixtures', for many merges.)
    path = _train(tmp_path, vocab_size=420) if which == "model_file" else request.getfixturevalue(which)
    tok = load(path)
    text = "the cats walked over the river, then 7 dogs talked — ünïcode 東京\n  and   more"
    index = MergeIndex(tok)
    curve = token_count_curve(tok, text, index=index)
    assert curve.counts[-1] == len(tok.encode_ordinary(text))
    for k in range(index.merge_count + 1):
        cut = cut_to_merges(tok, k, index=index)
        assert (curve.counts[k], curve.vocab_sizes[k]) == (len(cut.encode_ordinary(text)), cut.vocab_size), k
    assert curve.counts[0] > curve.counts[-1]


@pytest.mark.parametrize("which", ["model", "json"])
def test_merge_trees_join_pieces_not_byte_tokens(model_file: Path, hf_file: Path, which: str) -> None:
    """The piece ``a`` is a leaf of the trees that use it, not the byte token ``<0x61>`` with its bytes."""
    from bpe_studio.engine.encoding.analysis import MergeIndex, merge_summary

    tok = load(model_file if which == "model" else hf_file)
    model = tok.piece_model
    assert model is not None
    names = model.names()
    index = MergeIndex(tok)
    assert index.merge_count == len(tok.merges) > 0
    for made in index.rank_of:
        leaves = index.merge_tree(made).leaves()
        assert all(model.byte_of(i) is None for i in leaves), [names[i] for i in leaves]
        assert "".join(names[i] for i in leaves) == names[made]
    summary = merge_summary(tok)  # what inspect prints, from the same merges
    assert (summary.learned_tokens, summary.deepest) == (index.new_before[-1], index.deepest())
    longest = max(index.rank_of, key=lambda i: (len(names[i]), -i))
    assert [names[i] for i in index.merge_tree(longest).leaves()] == list(names[longest])
    assert names[model.byte_ids[0x61]] == "<0x61>" and model.byte_of(model.byte_ids[0x61]) == 0x61
