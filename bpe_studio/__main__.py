"""``python -m bpe_studio``: the same as the ``bpe-studio`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
