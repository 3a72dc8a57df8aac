"""Replays the fuzzers' corpus (tests/engine/fuzz_cases/<harness>/) through the same checks the atheris
harnesses in fuzz/ run (tests/engine/fuzz_checks.py): the native kernel against the Python reference, and
hostile frames and tokenizer files against their documented errors. No atheris needed.

The cases named ``found-*`` are inputs on which a check once failed; each one fails again without its fix
(see fuzz/README.md). A harness whose folder is missing or empty fails, so a lost corpus does not pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .backends import needs_native
from .fuzz_checks import CHECKS, HARNESSES, run_case

pytestmark = needs_native

CASES = Path(__file__).parent / "fuzz_cases"


def _cases() -> list[object]:
    return [
        pytest.param(harness, path, id=f"{harness}/{path.name}")
        for harness in HARNESSES
        for path in sorted((CASES / harness).glob("*"))
    ]


def test_every_harness_has_cases() -> None:
    assert set(HARNESSES) == set(CHECKS)
    for harness in HARNESSES:
        assert any((CASES / harness).glob("*")), f"no fuzz cases for {harness} in {CASES / harness}"


@pytest.mark.parametrize(("harness", "path"), _cases())
def test_fuzz_case(harness: str, path: Path) -> None:
    run_case(harness, path.read_bytes())


def test_fuzz_harnesses_import_without_atheris() -> None:
    """The harness files name a check that exists; importing them needs no atheris (only running does)."""
    fuzz = Path(__file__).resolve().parents[2] / "fuzz"
    for harness in HARNESSES:
        source = (fuzz / f"fuzz_{harness}.py").read_text(encoding="utf-8")
        assert f'main("{harness}")' in source
        assert "import atheris" not in source


def test_merge_kernel_refuses_lengths_that_wrap_around() -> None:
    """Found by fuzz_kernel: lengths whose sum wraps past 2**64 to the number of symbols passed the check
    and indexed past the symbols (a Rust panic); the sum is now checked."""
    from bpe_studio.engine import native

    assert native._native is not None
    tokens = [bytes([i]) for i in range(256)]
    with pytest.raises(ValueError, match="lengths do not add up"):
        native._native.MergeKernel(b"ab", 1, [2**64 - 1, 3], [1, 1], tokens)


def test_merge_kernel_refuses_counts_that_would_overflow() -> None:
    """Found by the cargo fuzz target rust/fuzz merge: pair counts summed past 2**63 - 1 (a panic in a debug
    build, a wrapped negative count in a release one, so the pair was silently never merged)."""
    from bpe_studio.engine import native

    assert native._native is not None
    tokens = [bytes([i]) for i in range(256)]
    with pytest.raises(ValueError, match="counts are too large"):
        native._native.MergeKernel(b"abab", 1, [2, 2], [2**62, 2**62], tokens)
    # The Python loop takes such counts; the native one refuses them instead of merging wrongly.
    kernel = native._native.MergeKernel(b"abab", 1, [2, 2], [2**61, 2**61], tokens)
    assert kernel.best() == (ord("a"), ord("b"), 2**62)


def test_scanners_advance_with_any_class_table(tmp_path: Path) -> None:
    """Found by the cargo fuzz target rust/fuzz pretok: a class table holding a class no scanner knows made
    the cl100k scanner loop for ever on an empty pre-token. Run in a child with a deadline, since without
    the fix it never returns."""
    code = (
        "from bpe_studio.engine import native\n"
        "for preset in native.NATIVE_PRESETS:\n"
        "    print(native._native.count_pretokens(preset, ['\\x01a \\x01'], bytes([0, 23] + [0] * 126)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a native scanner did not return within 60 s on a class table with an unknown class")
    assert done.returncode == 0, done.stderr
    # The unknown class counts as "other", like every other character of this table: one punctuation run.
    assert done.stdout.splitlines() == [repr(({"\x01a \x01": 1}, 1))] * 3, done.stdout
