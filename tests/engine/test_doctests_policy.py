"""The docstring examples of ``bpe_studio/`` and ``tests/`` run (issue 19): a ``+SKIP`` says why on its line.

pytest runs every example (``--doctest-modules``, with the names and the working folder of the root
``conftest.py``). An example that cannot run here (it needs a window, the network, a running cluster) is
a literal block without ``>>>``; a ``+SKIP`` is for the rare example that must stay one, and then the line
says why, in a comment before the directive: ``>>> show(window)  # needs a display  # doctest: +SKIP``.
(doctest reads every word after ``doctest:`` as an option, so the reason cannot follow ``+SKIP``.)
"""

from __future__ import annotations

import doctest
import re

import pytest

from ..conftest import REPO_ROOT

# A doctest directive that holds +SKIP, the way doctest finds directives: at the end of a line.
_SKIP_DIRECTIVE = re.compile(r"#\s*doctest:[^\n'\"]*\+SKIP\b[^\n'\"]*$")
# A comment with some text in it right before the directive: the reason.
_REASON = re.compile(r"#[^#]*\w[^#]*#\s*doctest:")


def unexplained_skips(text: str) -> list[int]:
    """The numbers (from 1) of the lines of ``text`` with a ``+SKIP`` directive and no reason before it."""
    return [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if _SKIP_DIRECTIVE.search(line) and not _REASON.search(line)
    ]


def test_unexplained_skips_are_found() -> None:
    text = "\n".join(
        [
            '    >>> load("out/t.json")  # doctest: +SKIP',
            "    ... # doctest: +SKIP",
            "    >>> show(window)  # needs a display  # doctest: +SKIP",
            "    >>> f()  # doctest: +ELLIPSIS, +SKIP",
            "    >>> g()  # needs the network  # doctest: +NORMALIZE_WHITESPACE +SKIP",
            "    >>> h()  # doctest: +ELLIPSIS",
        ]
    )
    assert unexplained_skips(text) == [1, 2, 4]


def test_the_way_a_reason_is_written_is_one_doctest_accepts() -> None:
    parser = doctest.DocTestParser()
    (example,) = parser.get_examples(">>> show(window)  # needs a display  # doctest: +SKIP\n")
    assert example.options == {doctest.SKIP: True}
    with pytest.raises(ValueError, match="invalid option"):
        parser.get_examples(">>> show(window)  # doctest: +SKIP (needs a display)\n")


@pytest.mark.parametrize("folder", ["bpe_studio", "tests"])
def test_every_skip_says_why(folder: str) -> None:
    # Both folders are collected with --doctest-modules (pyproject's testpaths).
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
        for number in unexplained_skips(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        "a +SKIP without a reason; make the example run (see the root conftest.py), make it a literal block, "
        "or say why on the line ('>>> x  # needs a display  # doctest: +SKIP'): " + ", ".join(offenders)
    )
