#!/usr/bin/env python3
"""Fuzz harness: tokenizer files (tokenizer.json, vocab.json + merges.txt, .tiktoken) from arbitrary
bytes: FormatError or a tokenizer that encodes the same on both backends.

Run: `python fuzz/fuzz_formats.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/formats/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("formats")
