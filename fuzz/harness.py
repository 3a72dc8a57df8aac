"""Shared runner of the atheris harnesses in this folder: ``python fuzz/fuzz_<name>.py [libFuzzer options]``.

Each harness feeds the fuzzer's bytes to one check of ``tests/engine/fuzz_checks.py`` (the native kernel
against the pure-Python reference); a failing check (an AssertionError, an unexpected exception or a Rust
panic) makes atheris save the input as ``crash-<sha1>`` in the working folder. The seed corpus is
``tests/engine/fuzz_cases/<name>/``, which the test suite replays without atheris.

Example:
    python fuzz/fuzz_encode.py -max_total_time=300 -- tests/engine/fuzz_cases/encode  (see fuzz/README.md)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "engine" / "fuzz_cases"


def main(name: str, argv: list[str] | None = None) -> None:
    """Fuzz harness ``name`` (a key of ``fuzz_checks.CHECKS``) with libFuzzer options ``argv``.

    Without a corpus folder among the options, a scratch copy of the committed cases is used, so that the
    fuzzer's new inputs never land in the repository unasked.
    """
    import atheris  # type: ignore[import-untyped]  # only the harnesses need it: pip install -e ".[fuzz]"

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("RUST_BACKTRACE", "0")
    with atheris.instrument_imports(include=["bpe_studio", "tests"]):
        from tests.engine import fuzz_checks

    if not fuzz_checks.native_built():
        sys.exit("fuzz: the native kernel (bpe_studio._native) is not built: run `pip install -e .` first")
    run_case = fuzz_checks.run_case

    def one_input(data: bytes) -> None:
        run_case(name, data)

    args = [sys.argv[0], *(sys.argv[1:] if argv is None else argv)]
    if not any(not a.startswith("-") for a in args[1:]):
        import shutil
        import tempfile

        scratch = Path(tempfile.mkdtemp(prefix=f"bpe-fuzz-{name}-"))
        if (CASES / name).is_dir():
            for case in (CASES / name).iterdir():
                shutil.copy(case, scratch / case.name)
        print(f"fuzz: corpus in {scratch} (seeded from {CASES / name})", file=sys.stderr)
        args.append(str(scratch))
    atheris.Setup(args, one_input)
    atheris.Fuzz()
