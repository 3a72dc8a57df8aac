#!/usr/bin/env python3
"""Fuzz harness: counting-table frames (protocol.decode_table) from arbitrary bytes: a table or ValueError.

Run: `python fuzz/fuzz_frames.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/frames/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("frames")
