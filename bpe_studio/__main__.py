"""``python -m bpe_studio``: the same as the ``bpe-studio`` command."""

from .cli import run

if __name__ == "__main__":
    run()
