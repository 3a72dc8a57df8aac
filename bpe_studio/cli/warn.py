"""The engine's format warnings as one ``bpe-studio: warning: ...`` line each, on standard error."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..engine import FormatWarning


@contextmanager
def print_format_warnings() -> Iterator[None]:
    """Print each distinct format warning raised inside the block once, on standard error.

    Other warnings go on to Python's usual handling. Nothing is printed when the block raises: the error
    is what the user needs to read.

    Example:
        >>> import contextlib
        >>> with contextlib.redirect_stderr(sys.stdout), print_format_warnings():  # stderr shown here
        ...     for _ in range(2):
        ...         warnings.warn("tokenizer.json: key 'truncation' is not applied", FormatWarning)
        bpe-studio: warning: tokenizer.json: key 'truncation' is not applied
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FormatWarning)
        yield
    shown: set[str] = set()
    for item in caught:
        if not issubclass(item.category, FormatWarning):
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)
        elif str(item.message) not in shown:
            shown.add(str(item.message))
            print(f"bpe-studio: warning: {item.message}", file=sys.stderr)
