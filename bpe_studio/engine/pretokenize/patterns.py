"""Pre-tokenization patterns: the presets (``gpt2``, ``cl100k``, ``o200k``), their ASCII twins, the models'
own patterns that the native kernel scans (:func:`scanner_name`), and compiling a preset name or a regex with
a message that says how to fix a bad one.

Example:
    >>> compile_pattern("cl100k").findall("It's 2024!")
    ['It', "'s", ' ', '202', '4', '!']
"""

from __future__ import annotations

import itertools

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any

#: Pre-tokenization patterns by preset name.
#:
#: ``gpt2`` is the pattern of the GPT-2 paper's code as used by the Stanford CS336 handout;
#: ``cl100k`` and ``o200k`` are the patterns of tiktoken's encodings of the same names.
PATTERNS: dict[str, str] = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

# ASCII twins of the presets for the standard library's ``re``: on ASCII text they find exactly the same
# pre-tokens (tests/engine/pretokenize/test_patterns.py checks it), and ``re`` scans ASCII with small classes
# about
# 1.6x faster than ``regex`` with Unicode properties. In ASCII, \p{L} is [A-Za-z], \p{Lu} [A-Z], \p{Ll}
# [a-z], \p{N} [0-9], \p{Lt}, \p{Lm}, \p{Lo} and \p{M} are empty, and \s is [\t\n\x0b\x0c\r ].
_S = r"\t\n\x0b\x0c\r "
ASCII_PATTERNS: dict[str, str] = {
    "gpt2": rf"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^{_S}A-Za-z0-9]+|[{_S}]+(?![^{_S}])|[{_S}]+""",
    "cl100k": (
        rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{{1,3}}+| ?[^{_S}A-Za-z0-9]++[\r\n]*+"""
        rf"""|[{_S}]++$|[{_S}]*[\r\n]|[{_S}]+(?![^{_S}])|[{_S}]"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[0-9]{1,3}""",
            rf""" ?[^{_S}A-Za-z0-9]+[\r\n/]*""",
            rf"""[{_S}]*[\r\n]+""",
            rf"""[{_S}]+(?![^{_S}])""",
            rf"""[{_S}]+""",
        ]
    ),
}

#: The pre-tokenization patterns of models' tokenizers that are not presets, exactly as their files or code
#: state them: Llama 3's (llama-models, and its tokenizer.json's Split; OLMo 2's Split too), Qwen 2 / 2.5 /
#: 3's and Qwen 3.5's Split, Mistral Nemo's tekken pattern, tiktoken's r50k/p50k (GPT-2's, written to run
#: faster) and the GPT-2 regex of ``tokenizers``' ByteLevel (GPT-NeoX, Pythia, OLMo 1). Llama 4's is
#: o200k's, character for character. Each has a native scanner (:func:`scanner_name`).
MODEL_PATTERNS: dict[str, str] = {
    "llama3": (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "qwen2": (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
        r"|\s+(?!\S)|\s+"
    ),
    "qwen35": (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "nemo": (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|"
        r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
    "r50k": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "byte_level": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
}


def _spellings() -> dict[str, str]:
    r"""Every spelling of a pattern that a native scanner equals -> the scanner's name.

    A scanner is a preset's with parameters (rust/src/pretok_cl100k.rs, pretok_o200k.rs): numbers in groups
    of 3 or one by one, whether a whitespace run that ends the text is one pre-token (``\s++$``), whether
    marks are letters, whether o200k's words end with a contraction. Each alternative may be spelled in the
    ways below, which find the same pre-tokens whatever the rest: the contractions ``'(?i:[sdmt]|ll|ve|re)``
    and ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` are the same strings, none a prefix of another that a later one
    would take; a possessive quantifier gives back nothing that its alternative could use (what follows it
    cannot match what it took, or always matches); ``\s*[\r\n]`` and ``\s*[\r\n]+`` both end at the run's
    last newline; ``\s`` and ``\s+`` after ``\s+(?!\S)`` only ever take one character. Patterns are not
    normalized otherwise: another spelling runs through ``regex`` (tests/engine/pretokenize hold each
    spelling here equal to its scanner).

    Example:
        >>> _spellings()[MODEL_PATTERNS["llama3"]]
        'llama3'
    """
    contractions = (r"'(?i:[sdmt]|ll|ve|re)", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)")
    words = (r"[^\r\n\p{L}\p{N}]?\p{L}+", r"[^\r\n\p{L}\p{N}]?+\p{L}+", r"[^\r\n\p{L}\p{N}]?+\p{L}++")
    words_and_marks = (r"[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+",)
    digits = {3: (r"\p{N}{1,3}", r"\p{N}{1,3}+"), 1: (r"\p{N}",)}
    punctuation = (
        r" ?[^\s\p{L}\p{N}]+[\r\n]*",
        r" ?[^\s\p{L}\p{N}]++[\r\n]*",
        r" ?[^\s\p{L}\p{N}]++[\r\n]*+",
    )
    punctuation_but_marks = (r" ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*",)
    newlines = (r"\s*[\r\n]+", r"\s*[\r\n]")
    spaces = (r"\s+(?!\S)|\s+", r"\s+(?!\S)|\s")
    found: dict[str, str] = {}
    # cl100k's family: (name, numbers, whitespace run at the end whole, marks are letters).
    for name, n, end_whole, marks in (
        ("cl100k", 3, True, False),
        ("llama3", 3, False, False),
        ("qwen2", 1, False, False),
        ("qwen35", 1, False, True),
    ):
        for parts in itertools.product(
            contractions,
            words_and_marks if marks else words,
            digits[n],
            punctuation_but_marks if marks else punctuation,
            [r"\s++$|" + w for w in newlines] if end_whole else newlines,
            spaces,
        ):
            found["|".join(parts)] = name
    # o200k's family: its words with or without the contraction after them, numbers by 3 or one by one.
    upper, lower = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
    suffix = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    for name, n, contraction in (("o200k", 3, True), ("nemo", 1, False)):
        tail = suffix if contraction else ""
        for number in digits[n]:
            found[
                "|".join(
                    [
                        rf"[^\r\n\p{{L}}\p{{N}}]?{upper}*{lower}+{tail}",
                        rf"[^\r\n\p{{L}}\p{{N}}]?{upper}+{lower}*{tail}",
                        number,
                        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                        r"\s*[\r\n]+",
                        r"\s+(?!\S)",
                        r"\s+",
                    ]
                )
            ] = name
    # GPT-2's: its contractions as a group or one by one; tiktoken's r50k (possessive, \s++$, \s).
    for gpt2_contractions in (r"'(?:[sdmt]|ll|ve|re)", r"'s|'t|'re|'ve|'m|'ll|'d"):
        found[gpt2_contractions + r"| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"] = "gpt2"
        found[gpt2_contractions + r"| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"] = "gpt2"
    return found


#: Every spelling of a pattern that a native scanner equals -> the scanner's name (see :func:`_spellings`).
NATIVE_SPELLINGS: dict[str, str] = _spellings()


# A short text with letters, digits, punctuation, whitespace runs and newlines: a pattern that matches the
# empty string anywhere in it would make pre-tokenization loop without progress, so it is rejected.
_PROBE_TEXT = "Hello, world! It's 2024 -- naïve café  \n\n\t x_y 日本語 😀 '"


def resolve_pattern(pattern: str) -> str:
    """Return the regex of a preset name or of a model's name (:data:`MODEL_PATTERNS`: ``llama3``,
    ``qwen2``…), or ``pattern`` itself when it is neither.

    Example:
        >>> resolve_pattern("gpt2").startswith("'(?:[sdmt]")
        True
        >>> resolve_pattern("llama3") == MODEL_PATTERNS["llama3"]
        True
    """
    return PATTERNS.get(pattern) or MODEL_PATTERNS.get(pattern, pattern)


def preset_name(pattern: str) -> str | None:
    """Return the preset name of a pattern given by name or by its regex, else ``None``.

    Example:
        >>> preset_name(PATTERNS["gpt2"])
        'gpt2'
    """
    if pattern in PATTERNS:
        return pattern
    for name, regex_text in PATTERNS.items():
        if regex_text == pattern:
            return name
    return None


def scanner_name(pattern: str) -> str | None:
    r"""The native scanner that finds exactly the pre-tokens of ``pattern`` (a preset name or a regex): the
    preset's name, a model's (``llama3``, ``qwen2``, ``qwen35``, ``nemo``: :data:`MODEL_PATTERNS`),
    ``superbpe`` for :data:`SUPERWORD_PATTERN`, or ``None`` when the pattern runs through ``regex`` only.

    Example:
        >>> scanner_name("cl100k"), scanner_name(MODEL_PATTERNS["qwen2"]), scanner_name(r"\w+|\s+")
        ('cl100k', 'qwen2', None)
        >>> scanner_name("llama3")
        'llama3'
    """
    name = preset_name(pattern) or NATIVE_SPELLINGS.get(resolve_pattern(pattern))
    if name is None and resolve_pattern(pattern) == SUPERWORD_PATTERN:
        return "superbpe"
    return name


def newline_cuts_certain(pattern: str) -> bool:
    r"""Whether a corpus may be cut after its newlines without changing the pre-tokens of ``pattern``: true
    for the patterns with a native scanner whose pre-tokens never run on across a newline's end (the presets
    and the models' patterns: the proof is in ``corpus/plan.py``), false for any other regex and for the
    superword split, whose chunks run on across newlines.

    Example:
        >>> [newline_cuts_certain(p) for p in ("gpt2", SUPERWORD_PATTERN, r"\w+")]
        [True, False, False]
    """
    return scanner_name(pattern) not in (None, "superbpe")


def compile_pattern(pattern: str) -> Any:
    """Compile a preset name or regex, raising ``ValueError`` that says what is wrong and how to fix it.

    Example:
        >>> compile_pattern("gpt2").findall("Hello world")
        ['Hello', ' world']
    """
    import regex  # (here: opening a file with a preset's pattern needs none of its import time)

    text = resolve_pattern(pattern)
    try:
        compiled = regex.compile(text)
    except (regex.error, TypeError, ValueError) as exc:
        raise ValueError(
            f"pattern: {text!r} does not compile ({exc}); give a preset name "
            f"({', '.join(PATTERNS)}) or a valid regex for the `regex` module"
        ) from None
    if compiled.fullmatch("") is not None or any(
        m.start() == m.end() for m in compiled.finditer(_PROBE_TEXT)
    ):
        raise ValueError(
            f"pattern: {text!r} can match the empty string; every alternative must consume at least one "
            "character (use + instead of *, for example)"
        )
    if compiled.search(_PROBE_TEXT) is None:
        raise ValueError(
            f"pattern: {text!r} matches nothing in a sample of words, digits, spaces and punctuation, so "
            f"there would be nothing to train on; give a preset ({', '.join(PATTERNS)}) or a regex that "
            r"matches such text, e.g. \w+|\s+|[^\w\s]+"
        )
    return compiled


#: The stage-2 split of the published SuperBPE tokenizers (PythonNut/superbpe, scripts/extend_tokenizer.sh):
#: a Hugging Face ``Split`` with behaviour ``isolated`` on this regex -- runs of 1-3 digits, runs of two or
#: more punctuation characters (with an optional leading space and trailing newlines or slashes), and spaces
#: that no non-space follows are pieces of their own; everything between two such matches (words, the
#: single spaces between them, single punctuation, newlines) is one piece.
SUPERBPE_SPLIT = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"


def superword_pattern(split: str = SUPERBPE_SPLIT) -> str:
    """The findall pattern of an ``isolated`` split on ``split``: a match, or the longest run of characters
    at none of which ``split`` matches. Its matches cover the whole text, so it is an ordinary pattern for
    our pre-tokenizer and for a ``tokenizer.json`` ``Split`` (which then leaves no gap).

    The boundary rule it gives: special tokens and document ends always split (before pre-tokenization, as
    in every run); inside a document only the matches of ``split`` split -- with the default, newlines and
    the single spaces between words do *not* (as in the published SuperBPE tokenizers).

    Example:
        >>> import regex
        >>> regex.findall(superword_pattern(), "By the way, 2024!!\\nok  ")
        ['By the way, ', '202', '4', '!!\\n', 'ok', '  ']
    """
    # [\s\S], not (?s:.): Oniguruma (tokenizers' regex engine) has no (?s) flag. Written exactly as
    # formats/hf.py turns a tokenizer.json's isolated Split into a pattern, so that a published SuperBPE
    # tokenizer opened from the Hub has this very pattern.
    return f"(?:{split})|(?:(?!(?:{split}))[\\s\\S])+"


#: The stage-2 pattern of ``superword_transition`` runs: :func:`superword_pattern` of :data:`SUPERBPE_SPLIT`.
SUPERWORD_PATTERN = superword_pattern()
