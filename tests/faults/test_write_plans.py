"""Write plans (issue 18): every file a command writes, sidecars, staging folders and temporary files
included, is declared in one plan and checked against every file it reads before any work; a file a
command would write over an input is refused in one line (exit 2) and nothing is written.

The walks at the end fail when a new writer or subcommand has no plan, or writes outside it."""

from __future__ import annotations

import ast
import importlib
import os
from pathlib import Path

import pytest

from bpe_studio.cli import build_parser, main
from bpe_studio.engine import Tokenizer, TrainConfig, save, train
from bpe_studio.engine.encoding.corpus_encoding import encode_corpus
from bpe_studio.engine.write_plan import WRITERS, WritePlan

TEXT = "".join(f"doc {i}: the cat sat on the mat.\n" for i in range(200))
ROOT = Path(__file__).resolve().parents[2] / "bpe_studio"


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.err.startswith("bpe-studio: error: ") and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.err


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- the bug: an output implied by --out is the input -----------------------------------------------------


@pytest.mark.parametrize("spelling", ["same path", "symlink", "hard link"])
def test_encode_corpus_refuses_a_sidecar_that_is_the_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / ("notes.bin.json" if spelling == "same path" else "corpus.txt")
    corpus.write_text(TEXT, encoding="utf-8")
    if spelling == "symlink":
        (tmp_path / "notes.bin.json").symlink_to(corpus)
    elif spelling == "hard link":
        os.link(corpus, tmp_path / "notes.bin.json")
    before = _tree(tmp_path)
    code = main(["encode-corpus", "-t", "gpt2", corpus.name, "--out", "notes.bin"])
    assert code == 2
    err = _error_line(capsys)
    if spelling == "same path":
        assert err == (
            "bpe-studio: error: --out: notes.bin implies notes.bin.json, which is the input corpus; "
            "choose another --out\n"
        )
    else:
        assert f"--out: notes.bin implies notes.bin.json, which is the input corpus {corpus.name};" in err
    assert _tree(tmp_path) == before, "something was written"


def test_the_engine_refuses_it_too(tmp_path: Path) -> None:
    corpus = tmp_path / "ids.bin.json"
    corpus.write_text(TEXT, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^out: .*ids\.bin implies .*ids\.bin\.json, which is the input"):
        encode_corpus("gpt2", [corpus], tmp_path / "ids.bin")
    assert corpus.read_text(encoding="utf-8") == TEXT and not (tmp_path / "ids.bin").exists()


def test_an_input_where_a_save_stages_its_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A staging folder left by a crash, its tokenizer given as the input: the save's scratch space.
    staging = tmp_path / ".bpe-studio-save-old"
    staging.mkdir()
    source = staging / "tokenizer.json"
    save(Tokenizer.from_result(train(TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=270))), source)
    before = _tree(tmp_path)
    assert main(["convert", str(source), "--to", "hf", str(tmp_path / "out.json")]) == 2
    err = _error_line(capsys)
    assert "a staging folder" in err and str(source) in err and "move the input elsewhere" in err
    assert _tree(tmp_path) == before


def _corpus(folder: Path) -> Path:
    path = folder / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


# ---- every subcommand has a plan, and writes nothing outside it ------------------------------------------


def _subcommands() -> dict[str, object]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {name: sub for name, sub in action.choices.items() if name != "app"}  # type: ignore[union-attr]


def test_every_subcommand_declares_a_write_plan() -> None:
    missing = [name for name, sub in _subcommands().items() if not callable(sub.get_default("plan"))]  # type: ignore[attr-defined]
    assert not missing, f"subcommands without a write plan (set_defaults(plan=...)): {missing}"


def _commands(tmp: Path) -> list[list[str]]:
    corpus = str(tmp / "corpus.txt")
    tok = str(tmp / "tok.json")
    return [
        *(
            [
                "train",
                corpus,
                "--vocab-size",
                "270",
                "--progress",
                "none",
                "--format",
                fmt,
                "--counts-out",
                str(tmp / f"{fmt}.counts"),
                "--checkpoint",
                str(tmp / f"{fmt}.ckpt"),
                "--out",
                str(tmp / f"train-{fmt}"),
            ]
            for fmt in ("studio", "gpt2", "tiktoken", "hf")
        ),
        *(
            ["convert", tok, "--to", fmt, str(tmp / f"conv-{fmt}") + "/"]
            for fmt in ("studio", "gpt2", "tiktoken", "hf")
        ),
        ["encode-corpus", "-t", tok, corpus, "--out", str(tmp / "ids.bin"), "--quiet"],
        ["encode-corpus", "-t", tok, corpus, "--out", str(tmp / "ids.npy"), "--quiet", "--workers", "2"],
        ["encode", "-t", tok, "hello"],
        ["decode", "-t", tok, "104", "105"],
        ["inspect", tok],
        ["compare", tok, "gpt2", "--text", "hello"],
        ["eval", "-t", tok, corpus],
    ]


def test_every_command_writes_only_what_its_plan_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _corpus(tmp_path)
    save(
        Tokenizer.from_result(train(TrainConfig(inputs=[tmp_path / "corpus.txt"], vocab_size=280))),
        tmp_path / "tok.json",
    )
    renamed: list[tuple[str, str]] = []
    real_replace = os.replace

    def record(src: str, dst: str) -> None:  # every atomic write, staged save and encoding ends in a rename
        renamed.append((os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", record)
    seen = set(_subcommands())
    for argv in _commands(tmp_path):
        seen.discard(argv[0])
        args = build_parser().parse_args(argv)
        plan: WritePlan = args.plan(args)
        before = _tree(tmp_path)
        renamed.clear()
        assert main(argv) == 0, (argv, capsys.readouterr())
        capsys.readouterr()
        new = [name for name, data in _tree(tmp_path).items() if before.get(name) != data]
        outside = [n for n in new if not plan.covers(tmp_path / n)]
        assert not outside, f"{argv[0]} wrote {outside} outside its write plan"
        unplanned = [p for move in renamed for p in move if not plan.covers(p)]
        assert not unplanned, f"{argv[0]} wrote temporary files outside its write plan: {unplanned}"
    assert not seen, f"add a run of {sorted(seen)} here"


# ---- every writer in the source is registered with its plan -----------------------------------------------

_PRIMITIVES = {"atomic_write", "atomic_write_set", "replace_set", "mkdtemp", "mkstemp"}


def _writers() -> set[str]:
    """``module:function`` of every function that creates, replaces or renames a file itself."""
    found: set[str] = set()
    for file in sorted(ROOT.rglob("*.py")):
        module = ".".join(file.relative_to(ROOT.parent).with_suffix("").parts)

        def visit(node: ast.AST, where: list[str], module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, [*where, child.name], module)
                    continue
                if isinstance(child, ast.Call) and where:
                    func = child.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                    on_os = isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "os"
                    mode = child.args[1] if name == "open" and len(child.args) > 1 else None
                    writes_mode = isinstance(mode, ast.Constant) and bool(set(str(mode.value)) & set("wxa"))
                    if name in _PRIMITIVES or (on_os and name in ("replace", "rename")) or writes_mode:
                        found.add(f"{module}:{'.'.join(where[:2])}")
                visit(child, where, module)

        visit(ast.parse(file.read_text(encoding="utf-8")), [])
    return found


def test_every_writer_declares_its_write_plan() -> None:
    writers = _writers()
    # the walk finds writers
    assert "bpe_studio.engine.encoding.corpus_encoding:iter_encode_corpus" in writers
    missing = sorted(writers - set(WRITERS))
    assert not missing, f"writers without a write plan: add them to write_plan.WRITERS: {missing}"
    for writer, plan in WRITERS.items():
        assert writer in writers, f"WRITERS names {writer}, which writes nothing any more"
        if plan.startswith("none: "):
            continue
        module, name = plan.split(":")
        assert callable(getattr(importlib.import_module(module), name)), plan


def test_the_apps_export_refuses_to_write_over_the_tokenizer_it_exports(tmp_path: Path) -> None:
    from bpe_studio.ui.export.job import ExportOptions, prepare_job, run_export
    from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer

    source = tmp_path / "tok.json"
    tok = Tokenizer.from_result(train(TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=280)))
    save(tok, source)
    before = _tree(tmp_path)
    loaded = LoadedTokenizer(tok, "tok", path=source)
    # Exporting the first 10 merges under the same name would replace the whole tokenizer with its cut.
    options = ExportOptions(tmp_path, "tok", formats=("studio",), charts=False, merges=10)
    with pytest.raises(ValueError, match=r"^Export: .*tok\.json is the tokenizer's own file"):
        run_export(prepare_job(loaded, options))
    assert _tree(tmp_path) == before
