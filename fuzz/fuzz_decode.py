#!/usr/bin/env python3
"""Fuzz harness: native and Python decoding agree on arbitrary id lists; unknown ids raise
UnknownTokenIdError.

Run: `python fuzz/fuzz_decode.py -max_total_time=300` (see fuzz/README.md); the check is
`tests/engine/fuzz_checks.py`, replayed on tests/engine/fuzz_cases/decode/ by the test suite.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import main

if __name__ == "__main__":
    main("decode")
