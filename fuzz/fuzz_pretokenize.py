#!/usr/bin/env python3
"""Fuzz harness: the native pre-tokenizers (gpt2, cl100k, o200k) count what the `regex` patterns find.

Run: `python fuzz/fuzz_pretokenize.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/pretokenize/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("pretokenize")
