#!/usr/bin/env python3
"""Fuzz harness: `_native.MergeKernel` on raw, inconsistent arguments: refuses them with ValueError,
never panics.

Run: `python fuzz/fuzz_kernel.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/kernel/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("kernel")
