#!/usr/bin/env python3
"""Fuzz harness: the native merge loop makes the merges of the Python MergeLoop on small word tables.

Run: `python fuzz/fuzz_merge.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/merge/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("merge")
