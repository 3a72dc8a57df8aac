"""Write ``bpe_studio/resources/unicode_classes.zlib``: every code point's class as the installed ``regex``
finds it (``bpe_studio.engine.native._computed_class_table``), which a fresh process then reads instead of
importing ``regex`` and building it (issue 22). Run after upgrading ``regex``, then set
``native.SHIPPED_REGEX`` to the version printed; tests/engine/pretokenize/test_class_table.py checks both.

Usage: ``python tools/class_table.py``
"""

from __future__ import annotations

import zlib
from importlib.metadata import version
from pathlib import Path

from bpe_studio.engine import native


def main() -> None:
    table = native._computed_class_table(0x110000)
    target = Path(native.SHIPPED_TABLE)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_bytes(zlib.compress(table, 9))
    temporary.replace(target)  # complete or not at all
    print(
        f"{target}: {target.stat().st_size:,} bytes for regex {version('regex')}; SHIPPED_REGEX must say so"
    )


if __name__ == "__main__":
    main()
