"""Saving under faults: a full disk, a read-only ``--out``, a folder in the way, a failure between the renames
of a multi-file format. Outputs are checked before training (exit 2 at once); a save that fails after
training keeps the result in a fallback folder and says where (exit 1); a tokenizer's files are replaced
as one set, so the old set stays whole or the new one is complete, never a mix."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, TrainConfig, load, save, train
from bpe_studio.engine.formats import atomic, load_studio

TEXT = "".join(f"doc {i}: the cat sat on the mat, naïvely; {i * 7919 % 1000} dogs.\n" for i in range(300))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user cache folder (platformdirs reads XDG_CACHE_HOME on Linux), where a failed save's result
    goes; the temporary folder, the second choice, is kept inside the test too."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the second fallback, kept inside the test
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    return folder


def _enospc(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _full_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every file written into ``folder`` fail as on a full disk: half of the bytes go in, then
    ``write`` raises ENOSPC (the temporary files of atomic writes are made with ``tempfile.mkstemp``)."""
    import tempfile

    doomed: set[int] = set()
    real_mkstemp, real_fdopen = tempfile.mkstemp, os.fdopen

    def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, name = real_mkstemp(*args, **kwargs)
        if folder == Path(name).parent or folder in Path(name).parents:
            doomed.add(fd)
        return fd, name

    class FullDisk:
        def __init__(self, handle: Any) -> None:
            self._handle = handle

        def write(self, data: bytes) -> int:
            self._handle.write(data[: len(data) // 2])
            _enospc()
            return 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self._handle, name)

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self._handle.close()

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, *args, **kwargs)
        if fd in doomed:
            doomed.discard(fd)  # descriptor numbers are reused once closed
            return FullDisk(handle)
        return handle

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "fdopen", fdopen)


def _one_error_line(err: str) -> str:
    assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


# --------------------------------------------------------------------------------------------------
# A full disk after training: the result is kept


@pytest.mark.parametrize("fmt", ["studio", "gpt2", "tiktoken", "hf"])
def test_disk_full_after_training_keeps_the_result(
    corpus: Path, cache: Path, tmp_path: Path, *, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fmt: str,
) -> None:  # fmt: skip
    out = tmp_path / "out"
    _full_under(out, monkeypatch)
    code = main(["train", str(corpus), "--vocab-size", "320", "--format", fmt, "--out", str(out), "-q"])
    assert code == 1
    err = _one_error_line(capsys.readouterr().err)
    assert "No space left on device" in err and "the trained tokenizer was kept in" in err
    kept = next((cache / "bpe-studio" / "unsaved").glob("tokenizer-*.json"))
    assert str(kept) in err and f"--to {fmt}" in err
    expected = train(TrainConfig(inputs=[corpus], vocab_size=320))
    saved = load_studio(kept)
    assert saved.merges == expected.merges and saved.vocab == expected.vocab
    assert saved.training["vocab_size"] == 320
    assert _files(out) == {}, "a partial or temporary file was left in --out"
    # The message's command puts it where it was asked for.
    monkeypatch.undo()
    assert main(["convert", str(kept), "--to", fmt, f"{out}{os.sep}"]) == 0
    assert list(load(out).merges) == expected.merges


def test_disk_full_everywhere_still_says_what_happened(
    corpus: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _full_under(tmp_path, monkeypatch)
    code = main(["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "out"), "-q"])
    assert code == 1
    err = _one_error_line(capsys.readouterr().err)
    assert "could not be kept either" in err and str(cache / "bpe-studio" / "unsaved") in err


def _mount(options: str, folder: Path) -> str:
    """Mount a tmpfs on ``folder``; returns why it could not ('' when mounted)."""
    if os.geteuid() != 0:
        return "mounting needs root"
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            check=False,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:  # no mount command, or it hangs
        return str(exc)
    if mounted.returncode != 0:
        return mounted.stderr.decode(errors="replace").strip() or f"mount exited {mounted.returncode}"
    return ""


def _umount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True, timeout=30)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs; skipped where mounting is not permitted (the injected ENOSPC tests cover the same
    path)."""
    folder = tmp_path / "small"
    folder.mkdir()
    problem = _mount("size=64k", folder)
    if problem:
        pytest.skip(f"cannot mount a tmpfs ({problem}); the injected ENOSPC tests cover this")
    try:
        yield folder
    finally:
        _umount(folder)


def test_real_full_disk_keeps_the_result(corpus: Path, tmp_path: Path, small_tmpfs: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"w{i} x{i * 31 % 977} " for i in range(40_000)), encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = small_tmpfs / "out"
    command = [sys.executable, "-m", "bpe_studio", "train", str(big), "--vocab-size", "3000", "-q"]
    proc = subprocess.run(
        [*command, "--out", str(out)], check=False, capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 1, proc.stderr
    err = _one_error_line(proc.stderr)
    assert "No space left on device" in err
    kept = next((tmp_path / "cache" / "bpe-studio" / "unsaved").glob("tokenizer-*.json"))
    assert len(load_studio(kept).merges) > 2000
    assert _files(out) == {}


def test_real_full_disk_keeps_the_old_gpt2_set(corpus: Path, tmp_path: Path, small_tmpfs: Path) -> None:
    small = Tokenizer.from_result(train(TrainConfig(inputs=[corpus], vocab_size=280)))
    folder = small_tmpfs / "tok"
    save(small, folder, format="gpt2")
    before = _files(folder)
    filler = small_tmpfs / "filler"
    free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
    filler.write_bytes(b"x" * max(0, free - 16_000))  # room for about one new file, not the set
    big = Tokenizer.from_result(train(TrainConfig(inputs=[corpus], vocab_size=1000)))
    with pytest.raises(OSError) as info:
        save(big, folder, format="gpt2")
    assert info.value.errno == errno.ENOSPC
    assert _files(folder) == before
    assert load(folder).merges == small.merges


# --------------------------------------------------------------------------------------------------
# Checked before training: exit 2 at once


@pytest.fixture
def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if training starts: these mistakes must be found before."""

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("training started although an output cannot be written")

    monkeypatch.setattr("bpe_studio.cli.train.iter_train", refuse)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder that takes no new file: a read-only tmpfs as root (root ignores permissions), else
    mode 0o555; skipped where neither works (test_read_only_out_injected covers it)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    problem = _mount("ro,size=64k", folder)
    if problem:
        pytest.skip(f"cannot mount a read-only tmpfs ({problem}); test_read_only_out_injected covers this")
    try:
        yield folder
    finally:
        _umount(folder)


@pytest.mark.parametrize("where", ["out", "out/new/deeper", "counts", "checkpoint"])
def test_read_only_destination_is_refused_before_training(
    corpus: Path, read_only_folder: Path, no_training: None, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    args = ["train", str(corpus), "--vocab-size", "300", "--out"]
    if where.startswith("out"):
        args += [str(read_only_folder / where)]
    else:
        args += [str(read_only_folder.parent / "fine")]
        args += [f"--{'counts-out' if where == 'counts' else 'checkpoint'}", str(read_only_folder / "x.bin")]
    assert main(args) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert f"cannot write into {read_only_folder}" in err and "choose a writable folder" in err
    assert not (read_only_folder.parent / "fine").exists()


def test_read_only_out_injected(
    corpus: Path, tmp_path: Path, no_training: None, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    import tempfile

    def refuse(*args: object, **kwargs: object) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "o")]) == 2
    assert "(Read-only file system); choose a writable folder" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("fmt", "in_the_way"),
    [("studio", "tokenizer.json"), ("gpt2", "merges.txt"), ("tiktoken", "tokenizer.tiktoken.json")],
)
def test_folder_in_the_way_is_refused_before_training(
    corpus: Path,
    tmp_path: Path,
    no_training: None,
    *,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    in_the_way: str,
) -> None:
    out = tmp_path / "out"
    (out / in_the_way).mkdir(parents=True)
    assert main(["train", str(corpus), "--vocab-size", "300", "--format", fmt, "--out", str(out)]) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert f"--out: {out / in_the_way} is a folder" in err
    assert sorted(p.name for p in out.iterdir()) == [in_the_way]


@pytest.mark.parametrize("option", ["--counts-out", "--checkpoint"])
def test_missing_folder_or_a_file_in_the_way_is_refused_before_training(
    corpus: Path, tmp_path: Path, no_training: None, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    args = ["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "o"), option]
    assert main([*args, str(tmp_path / "missing" / "x.bin")]) == 2
    assert "does not exist; create it first" in _one_error_line(capsys.readouterr().err)
    assert main([*args, str(corpus / "x.bin")]) == 2
    assert f"{corpus} is a file" in _one_error_line(capsys.readouterr().err)
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(corpus / "sub")]) == 2
    assert f"--out: {corpus} is a file" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------------------------------
# A multi-file format is replaced as one set


@pytest.fixture(scope="module")
def two_tokenizers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Tokenizer]:
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    path.write_text(TEXT, encoding="utf-8")
    small = Tokenizer.from_result(train(TrainConfig(inputs=[path], vocab_size=280, special_tokens=("<s>",))))
    big = Tokenizer.from_result(train(TrainConfig(inputs=[path], vocab_size=400, special_tokens=("<s>",))))
    return small, big


def _failing_at(step: int, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Make the ``step``-th file operation of a save (temporary write, keeping an old file, rename) fail."""
    calls = 0

    def counted(original: Callable[..., Any]) -> Callable[..., Any]:
        def operation(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == step:
                _enospc()
            return original(*args, **kwargs)

        return operation

    monkeypatch.setattr(atomic, "_write_temporary", counted(atomic._write_temporary))
    monkeypatch.setattr(atomic, "_keep_old", counted(atomic._keep_old))
    monkeypatch.setattr(os, "replace", counted(os.replace))
    return lambda: calls


@pytest.mark.parametrize("fmt", ["gpt2", "tiktoken"])
def test_a_failure_at_any_step_leaves_the_old_set_or_the_new_one(
    two_tokenizers: tuple[Tokenizer, Tokenizer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    small, big = two_tokenizers
    reference = tmp_path / "reference"
    reference.mkdir()
    save(big, reference, format=fmt)
    new_files = _files(reference)
    step = 1
    while True:
        folder = tmp_path / f"tok{step}"
        folder.mkdir()
        save(small, folder, format=fmt)
        old_files = _files(folder)
        with monkeypatch.context() as patched:
            operations = _failing_at(step, patched)
            try:
                save(big, folder, format=fmt)
                failed = False
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                failed = True
            done = operations()
        now = _files(folder)
        if failed:
            assert now == old_files, f"a failure at step {step} left a mixed or partial set"
            assert load(folder).merges == small.merges
        else:
            assert now == new_files
            assert load(folder).merges == big.merges
            assert step > done, "every step was tried"
            break
        step += 1
    assert step > 6  # writes, keeps and renames of at least two files were each made to fail


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True),
    existing=st.sets(st.sampled_from(["a", "b", "c", "d"])),
    step=st.integers(min_value=1, max_value=14),
)
def test_atomic_write_set_is_all_or_nothing(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], existing: set[str], step: int
) -> None:
    folder = tmp_path_factory.mktemp("set")
    for name in existing:
        (folder / name).write_text(f"old {name}")
    before = _files(folder)
    with pytest.MonkeyPatch.context() as patched:
        _failing_at(step, patched)
        try:
            atomic.atomic_write_set({folder / name: f"new {name}" for name in names})
            failed = False
        except OSError:
            failed = True
    after = _files(folder)
    if failed:
        assert after == before
    else:
        assert after == {**before, **{name: f"new {name}".encode() for name in names}}


def test_a_folder_in_the_way_fails_before_any_rename(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_text("old vocab")
    (tmp_path / "merges.txt").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic.atomic_write_set({tmp_path / "vocab.json": "new", tmp_path / "merges.txt": "new"})
    assert (tmp_path / "vocab.json").read_text() == "old vocab"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges.txt", "vocab.json"]


# --------------------------------------------------------------------------------------------------
# convert ... DIR/


@pytest.mark.parametrize("fmt", ["studio", "hf", "tiktoken", "gpt2"])
@pytest.mark.parametrize("exists", [False, True])
def test_convert_into_a_folder_named_with_a_slash(
    two_tokenizers: tuple[Tokenizer, Tokenizer], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    fmt: str, exists: bool,
) -> None:  # fmt: skip
    source = tmp_path / "source.json"
    save(two_tokenizers[0], source)
    target = tmp_path / "new" / "dir"
    if exists:
        target.mkdir(parents=True)
    assert main(["convert", str(source), "--to", fmt, f"{target}{os.sep}"]) == 0
    capsys.readouterr()
    assert target.is_dir()
    expected = {"studio": ["tokenizer.json"], "hf": ["tokenizer.json"],
                "tiktoken": ["tokenizer.tiktoken", "tokenizer.tiktoken.json"],
                "gpt2": ["bpe_studio.json", "merges.txt", "vocab.json"]}[fmt]  # fmt: skip
    assert sorted(p.name for p in target.iterdir()) == expected
    assert load(target).merges == two_tokenizers[0].merges


@pytest.mark.parametrize("output", ["--checkpoint", "--counts-out"])
def test_a_full_disk_while_writing_a_checkpoint_or_counts_is_a_failed_run(
    tmp_path: Path,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    output: str,
) -> None:
    # Not a mistake in the command (exit 2) but the machine's trouble: exit 1, one line, no output written.
    side = tmp_path / "side"
    side.mkdir()
    _full_under(side, monkeypatch)
    target = side / "run.bin"
    out = tmp_path / "out"
    code = main(["train", str(corpus), "--vocab-size", "300", output, str(target), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "No space left on device" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not target.exists() and list(side.iterdir()) == []
    assert not (out / "tokenizer.json").exists()


def test_encode_corpus_on_a_full_disk_names_its_output_and_leaves_nothing(
    tmp_path: Path, small_tmpfs: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"w{i} x{i * 31 % 977} " for i in range(40_000)), encoding="utf-8")
    out = small_tmpfs / "ids.npy"
    command = [sys.executable, "-m", "bpe_studio", "encode-corpus", "--tokenizer", "gpt2", str(big)]
    proc = subprocess.run(
        [*command, "--out", str(out)], check=False, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"bpe-studio: error: --out: cannot write {out} (No space left on device)")
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert list(small_tmpfs.iterdir()) == []  # no partial or temporary file
