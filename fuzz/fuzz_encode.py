#!/usr/bin/env python3
"""Fuzz harness: the native Encoder gives the ids and offsets of the Python one (GPT-2 and tiny
made-up tokenizers).

Run: `python fuzz/fuzz_encode.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/encode/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("encode")
