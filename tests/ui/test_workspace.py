"""The workspace's file form: how tokenizers are named (path, Hugging Face model id, built-in), what a
malformed file says, and how texts are capped (journeys/test_workspace.py drives the window)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, save
from bpe_studio.engine.formats.named import GPT2_FOLDER
from bpe_studio.ui.app.workspace import (
    WORKSPACE_FORMAT,
    TokenizerRef,
    Workspace,
    WorkspaceError,
    cap_text,
    read_workspace,
    ref_of,
    save_workspace,
    workspace_from_json,
)
from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer

TOK = Tokenizer({i: bytes([i]) for i in range(256)}, [])


def _snapshot(cache: Path, model: str, revision: str) -> Path:
    folder = cache / ("models--" + model.replace("/", "--"))
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    save(TOK, snapshot / "tokenizer.json", format="hf")
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot / "tokenizer.json"


def test_tokenizers_are_named_by_path_model_id_or_builtin(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    first = _snapshot(cache, "org/model", "aaa")
    plain = tmp_path / "mine" / "tok.json"
    plain.parent.mkdir()
    save(TOK, plain)
    refs = [ref_of(LoadedTokenizer(TOK, "t", path=p)) for p in (first, GPT2_FOLDER, plain)]
    assert refs == [
        TokenizerRef(model="org/model"),
        TokenizerRef(builtin="gpt2"),
        TokenizerRef(path=str(plain)),
    ]
    assert ref_of(LoadedTokenizer(TOK, "trained")) is None, "a tokenizer trained in this session has no file"
    workspace = Workspace(tokenizers=[r for r in refs if r is not None], current=1, side_by_side=[2, 0])
    assert workspace_from_json(json.loads(json.dumps(workspace.to_json()))) == workspace
    # A model is found again in its current snapshot, after the cache moved on.
    second = _snapshot(cache, "org/model", "bbb")
    assert workspace.tokenizers[0].location() == second
    assert workspace.tokenizers[1].location() == GPT2_FOLDER


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"hello": 1}, "not a BPE Studio workspace"),
        ({"format": WORKSPACE_FORMAT, "version": 9}, "key 'version'"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "tokenizers": [{"path": 3}]}, "tokenizers[0]"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "current": 0}, "key 'current'"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "side_by_side": [1]}, "key 'side_by_side'"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "text": 3}, "key 'text'"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "merges": -1}, "key 'merges'"),
        ({"format": WORKSPACE_FORMAT, "version": 1, "chat": [["user"]]}, "key 'chat'"),
    ],
)
def test_a_malformed_workspace_says_where_in_one_line(tmp_path: Path, document: object, where: str) -> None:
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(WorkspaceError) as caught:
        read_workspace(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {where}")
    assert message.endswith("choose a file saved with File ▸ Save workspace…") and "\n" not in message


def test_not_json_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "ws.json"
    path.write_text("{oops", encoding="utf-8")
    with pytest.raises(WorkspaceError, match=r"ws\.json: line 1, column 2: not JSON"):
        read_workspace(path)
    with pytest.raises(WorkspaceError, match=r"missing\.json: cannot be read"):
        read_workspace(tmp_path / "missing.json")


def test_saving_never_writes_over_a_tokenizer_file(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    save(TOK, folder / "tokenizer.json", format="hf")
    before = (folder / "tokenizer.json").read_bytes()
    workspace = Workspace(tokenizers=[TokenizerRef(path=str(folder))])  # a folder: its files are inputs
    with pytest.raises(WorkspaceError, match="the tokenizer"):
        save_workspace(workspace, folder / "tokenizer.json")
    assert (folder / "tokenizer.json").read_bytes() == before
    save_workspace(workspace, tmp_path / "ws.json")
    assert read_workspace(tmp_path / "ws.json") == workspace
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "ws.json"], "no temporary file left"


@given(st.text(), st.integers(0, 40))
def test_cap_text_cuts_at_a_character(text: str, limit: int) -> None:
    kept, cut = cap_text(text, limit)
    assert text.startswith(kept)
    assert len(kept.encode("utf-8", "surrogatepass")) <= limit or not cut
    assert cut == (len(text.encode("utf-8", "surrogatepass")) > limit)
    if cut:  # as much as fits: one more character would not
        assert len(text[: len(kept) + 1].encode("utf-8", "surrogatepass")) > limit
