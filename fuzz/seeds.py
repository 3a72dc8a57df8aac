"""Writes the seed inputs of every harness into tests/engine/fuzz_cases/<harness>/seed-*: valid frames and
tokenizer files, ordinary text, ids and word tables, so that the fuzzer starts from inputs that get deep.

Run: ``python fuzz/seeds.py`` (idempotent; found cases, named after their content, are left alone).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bpe_studio.engine.bytes_unicode import byte_to_char  # noqa: E402
from bpe_studio.engine.workers.protocol import encode_table  # noqa: E402

CASES = ROOT / "tests" / "engine" / "fuzz_cases"
TEXT = "Hello world's 2024 caf\u00e9!\n\n  x = 12345;\r\n\u65e5\u672c\u8a9e \U0001f643 DON'T".encode()


def seeds() -> dict[str, list[bytes]]:
    """Seed inputs by harness."""
    b2u = byte_to_char()
    vocab = {b2u[b]: b for b in range(256)}
    vocab[b2u[ord("h")] + b2u[ord("e")]] = 256
    hf = {
        "version": "1.0",
        "model": {"type": "BPE", "vocab": vocab, "merges": ["h e"]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "added_tokens": [],
    }
    tiktoken = (
        b"".join(__import__("base64").b64encode(bytes([b])) + f" {b}\n".encode() for b in range(256))
        + __import__("base64").b64encode(b"he")
        + b" 256\n"
    )
    return {
        "pretokenize": [bytes([k]) + TEXT for k in range(3)] + [b"\x00" + bytes(range(0x80, 0x100))],
        "encode": [bytes([k]) + b"\x00\x01\x02\x03\xff" + TEXT for k in range(7)],
        "decode": [b"\x00\x10\x00\x01\x00\x00\x02\x05\x00", b"\x00" * 30],
        "merge": [b"seed", b"ties"],
        "kernel": [b"seed", b"lengths"],
        "frames": [
            encode_table({"a": 2, " the": 3}),
            encode_table({"a\0b": 1, "\u00e9": 7}),
            encode_table({}),
        ],
        "formats": [
            b"\x00" + json.dumps(hf).encode(),
            b"\x01" + json.dumps(vocab).encode() + b"\xff#version: 0.2\nh e\n",
            b"\x02" + tiktoken,
        ],
    }


def main() -> None:
    for harness, inputs in seeds().items():
        folder = CASES / harness
        folder.mkdir(parents=True, exist_ok=True)
        for data in inputs:
            (folder / f"seed-{hashlib.sha1(data).hexdigest()[:12]}").write_bytes(data)


if __name__ == "__main__":
    main()
