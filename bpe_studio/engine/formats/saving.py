"""Saving a tokenizer the one way every front end does: write the set, load it back, compare, then publish.

:func:`save_tokenizer` writes any format. With ``verify_texts`` it first writes the files into a hidden
staging folder next to the targets, loads them back with :func:`~bpe_studio.engine.formats.load` (and
with ``tokenizers`` / ``tiktoken`` for their formats, when installed), checks that every text encodes to
the ids the tokenizer in memory gives, and only then renames the files over the targets as one set. A
file that does not load back identically raises :class:`VerificationError` and nothing is left behind:
the targets keep what they held. :func:`training_record` is how a run trained, as studio files store it
(the CLI's ``train``, the app's Save and Export all write this record).

Example:
    >>> texts = sample_texts(small)
    >>> save_tokenizer(small, "t.tiktoken", format="tiktoken", verify_texts=texts).checked_in
    ('bpe_studio', 'tiktoken')
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..pretokenize.patterns import resolve_pattern
from ..write_plan import WritePlan
from .atomic import atomic_plan, replace_set
from .base import FormatError
from .detect import FORMATS, load, save, save_targets
from .studio import save_studio

if TYPE_CHECKING:
    from ..config import TrainConfig
    from ..encoding.tokenizer import Tokenizer
    from ..events import TrainResult

#: Text a saved tokenizer must encode exactly as the original: contractions, whitespace runs, digits,
#: punctuation, accents, several scripts, emoji and control characters (see :func:`sample_texts`).
SAMPLE_TEXT = (
    "Hello, world! It's 2024: we'll see -- they've said \"naïve café\" costs $3.14 (or 1,000,000 yen).\n"
    "  Indented  by two,\tthen a tab;   three spaces\n\n\nand blank lines.\r\nWindows line\r\n"
    "Ünïcödé: ΑΒΓ δεζ, абв где, עברית, العربية, हिन्दी, 日本語のテキスト, 한국어, ไทย 🙃😀👍🏽 ½ ² ٣\n"
    "CamelCaseWords HTTPServer snake_case kebab-case URLs https://example.com/a?b=c&d=e#f emails a@b.co\n"
    "0000 12345678 3.14159e-10 0x1F  'S 'LL 'Ve ''' \u200b\u00a0\u3000\x0b\x0c end"
)

_STAGING_PREFIX = ".bpe-studio-save-"


class VerificationError(FormatError):
    """A written tokenizer, loaded back, does not encode the sample texts as the tokenizer in memory does
    (or does not load at all); the message says where they differ. Nothing was written."""


@dataclass(frozen=True)
class SaveReport:
    """What :func:`save_tokenizer` wrote and how it was checked.

    Attributes:
        path: What to give :func:`~bpe_studio.engine.formats.load` (a file, or the folder for ``gpt2``).
        files: Every file written (a ``.tiktoken`` file's sidecar, the three files of a GPT-2 folder).
        format: The format's name.
        checked_characters: Characters of sample text the files were checked on (0: not checked).
        checked_in: The libraries the files were loaded with and agreed: ``bpe_studio``, then ``tokenizers``
            or ``tiktoken`` when installed; empty when not checked.
    """

    path: Path
    files: tuple[Path, ...]
    format: str
    checked_characters: int = 0
    checked_in: tuple[str, ...] = ()


def sample_texts(tokenizer: Tokenizer, extra: str | None = None) -> list[str]:
    """The texts a save is checked on: :data:`SAMPLE_TEXT` with the special tokens woven in, and ``extra``.

    Example:
        >>> len(sample_texts(Tokenizer({i: bytes([i]) for i in range(256)}, []), "more"))
        2
    """
    specials = sorted(tokenizer.special_tokens, key=tokenizer.special_tokens.__getitem__)
    woven = SAMPLE_TEXT + "".join(f" {s}x{s}\n" for s in specials) + "".join(specials)
    return [woven, *([extra] if extra else [])]


def training_record(result: TrainResult, config: TrainConfig | None = None) -> dict[str, Any]:
    """How a run trained, as a studio file's ``training`` object: the settings that shaped it
    (:meth:`TrainConfig.describe`), why it stopped, the corpus statistics and each merge's pair count.

    The record holds nothing of the machine or the clock (no timings, worker counts or dates), so the same
    training writes the same file, byte for byte, from the CLI and from the app.

    Example:
        >>> sorted(training_record(train(config), config))  # doctest: +NORMALIZE_WHITESPACE
        ['inputs', 'max_token_length', 'merge_counts', 'min_frequency', 'pattern', 'special_tokens', 'stats',
         'stop_reason', 'vocab_size']
    """
    record: dict[str, Any] = dict(config.describe()) if config is not None else {}
    summary = result.summary()
    record.update(
        stop_reason=summary["stop_reason"], stats=summary["stats"], merge_counts=summary["merge_counts"]
    )
    return record


def save_tokenizer(
    tokenizer: Tokenizer,
    path: str | os.PathLike[str],
    *,
    format: str = "studio",
    training: Mapping[str, Any] | None = None,
    verify_texts: Sequence[str] | None = None,
) -> SaveReport:
    """Save a tokenizer in a format; with ``verify_texts``, publish it only once it loads back identically.

    Args:
        tokenizer: The tokenizer.
        path: As for :func:`~bpe_studio.engine.formats.save`: the folder for ``gpt2`` (created if missing),
            the file (or an existing folder to put the format's usual file name in) for the others.
        format: One of :data:`~bpe_studio.engine.formats.FORMATS`.
        training: For ``studio``: how the tokenizer was trained (see :func:`training_record`); ignored by the
            other formats.
        verify_texts: Texts every written file must encode to the tokenizer's ids (special tokens in them
            are recognised), e.g. :func:`sample_texts`. ``None``: write without checking.

    Returns:
        What was written, and where it was checked.

    Raises:
        VerificationError: A file does not load back, or encodes a text differently; nothing was written.
        FormatError: The format cannot represent this tokenizer (the message says why); nothing was written.
        OSError: A file cannot be written; the targets keep what they held.
        ValueError: Unknown format name.

    Warns:
        FormatWarning: The format drops the tokenizer's template (BOS/EOS); the check then expects the ids
            without it.

    Example:
        >>> save_tokenizer(small, "out", format="gpt2", verify_texts=sample_texts(small)).path
        PosixPath('out')
    """
    if format not in FORMATS:
        raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    training = training if format == "studio" else None
    targets = save_targets(path, format=format)
    folder = targets[0].parent
    created = False
    if format == "gpt2" and not folder.is_dir():
        folder.mkdir(parents=True)
        created = True
    if verify_texts is None:
        written = save(tokenizer, path, format=format, training=training)
        return SaveReport(written, tuple(targets), format)
    import shutil  # (here: opening a file, which imports this module, writes nothing; 1-2 ms)
    import tempfile

    staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=folder))
    try:
        staged = staging if format == "gpt2" else staging / targets[0].name
        staged_written = save(tokenizer, staged, format=format, training=training)
        final = folder if format == "gpt2" else targets[0]
        checked_in = _verify(tokenizer, staged_written, final, format, verify_texts)
        moves = {target: staging / target.name for target in targets if (staging / target.name).is_file()}
        replace_set(moves)
    except BaseException:
        if created:
            shutil.rmtree(staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: the folder was made for this save
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return SaveReport(final, tuple(moves), format, sum(len(t) for t in verify_texts), checked_in)


def other_readers(tokenizer: Tokenizer, format: str) -> list[str]:
    """What other libraries reading the saved files without BPE Studio's sidecar will do differently, one
    sentence each (empty: nothing): the ``gpt2`` and ``tiktoken`` files carry the pattern and the special
    tokens only in the sidecar, which ``transformers``, ``tokenizers`` and ``tiktoken`` do not read. ``hf``
    and ``studio`` files carry both; what no format but ``hf`` keeps (a template, ``ignore_merges``, NFC)
    :func:`~bpe_studio.engine.formats.save` warns about itself.

    Example:
        >>> cl100k = Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern="cl100k")
        >>> print(*other_readers(cl100k, "gpt2"))  # doctest: +NORMALIZE_WHITESPACE
        gpt2 files carry no pattern: transformers and tokenizers will split text with GPT-2's regex, not
        cl100k's, and encode differently; convert --to hf keeps the pattern
        >>> other_readers(cl100k, "hf")
        []
    """
    from ..pretokenize.patterns import preset_name

    preset = preset_name(tokenizer.pattern)
    pattern = f"{preset}'s" if preset else "this tokenizer's own"
    specials = sorted(tokenizer.special_tokens, key=lambda token: tokenizer.special_tokens[token])
    named = (
        f"{specials[0]!r}" + (f" and {len(specials) - 1} more" if len(specials) > 1 else "")
        if specials
        else ""
    )
    notes: list[str] = []
    if format == "gpt2":
        if preset != "gpt2":
            notes.append(
                "gpt2 files carry no pattern: transformers and tokenizers will split text with GPT-2's "
                f"regex, not {pattern}, and encode differently; convert --to hf keeps the pattern"
            )
        if specials:
            notes.append(
                f"gpt2 files do not mark special tokens: tokenizers will encode {named} as ordinary text "
                "(transformers' GPT2Tokenizer knows only '<|endoftext|>'); convert --to hf keeps them"
            )
    elif format == "tiktoken":
        also = f" and special_tokens ({named})" if specials else ""
        notes.append(
            "tiktoken rank files carry no pattern"
            + (" and no special tokens" if specials else "")
            + f": tiktoken.Encoding must be given pat_str ({pattern} regex){also}, which only the sidecar "
            "(.tiktoken.json) holds; without them text is split and encoded differently"
        )
    return notes


def save_plan(
    plan: WritePlan,
    option: str,
    path: str | os.PathLike[str],
    *,
    format: str,
    folder: bool | None = None,
    verify: bool = True,
) -> None:
    """Add what :func:`save_tokenizer` writes for ``path`` and ``format`` to ``plan``: the format's files
    (a sidecar as implied by the main file), their temporary files and, with ``verify``, the staging folder.

    Args:
        plan: The plan to extend.
        option: What the user named ``path`` with (``"--out"``, ``"OUTPUT"``), for messages.
        path: As for :func:`save_tokenizer`.
        format: One of :data:`~bpe_studio.engine.formats.FORMATS`.
        folder: As for :func:`~bpe_studio.engine.formats.save_targets`.
        verify: Whether the save is checked (``verify_texts``), so written through a staging folder.

    Example:
        >>> plan = WritePlan()
        >>> save_plan(plan, "OUTPUT", "t.tiktoken", format="tiktoken")
        >>> [str(w.path) for w in plan.writes]
        ['t.tiktoken', 't.tiktoken.json']
    """
    targets = save_targets(path, format=format, folder=folder)
    for i, target in enumerate(targets):
        # A GPT-2 folder's files are what the user asked for; a .tiktoken's sidecar follows from its name.
        atomic_plan(plan, option, target, implied_by=None if format == "gpt2" or i == 0 else targets[0])
    if verify:
        plan.scratch_files(
            option, targets[0].parent, _STAGING_PREFIX, implied_by=Path(path), what="a staging folder"
        )


def save_result(
    result: TrainResult,
    path: str | os.PathLike[str],
    *,
    format: str = "studio",
    config: TrainConfig | None = None,
    verify_texts: Sequence[str] | None = None,
) -> Path:
    """Save a trained tokenizer; the studio format also records how it was trained (:func:`training_record`).

    Args:
        result: What training produced.
        path: As for :func:`save_tokenizer` (a folder gets the format's usual file name).
        format: One of :data:`~bpe_studio.engine.formats.FORMATS`.
        config: The run's configuration, recorded with the result's statistics in studio files.
        verify_texts: As for :func:`save_tokenizer`.

    Returns:
        The path to give :func:`~bpe_studio.engine.formats.load`.

    Example:
        >>> save_result(train(config), "out/", config=config)
        PosixPath('out/tokenizer.json')
    """
    training = training_record(result, config) if format == "studio" else None
    if format == "studio" and verify_texts is None and result.rule == "merges" and not result.ignore_merges:
        # Written straight from the result, the same bytes as through a Tokenizer (tests compare them):
        # building one only to write it derived every merge's ids, 15-30 ms of a CLI run (issue 22). A
        # result with tiktoken's rule or ignore_merges goes the long way, for its merges and its warning.
        target = save_targets(path, format=format)[0]
        save_studio(
            target,
            vocab=result.vocab,
            merges=result.merges,
            special_tokens=result.special_token_ids,
            pattern=resolve_pattern(result.pattern),
            training=training,
        )
        return target
    from ..encoding.tokenizer import Tokenizer

    return save_tokenizer(
        Tokenizer.from_result(result), path, format=format, training=training, verify_texts=verify_texts
    ).path


# ----------------------------------------------------------------------------------------------------------
# Checking what was written
# ----------------------------------------------------------------------------------------------------------


def _verify(
    tokenizer: Tokenizer, staged: Path, final: Path, format: str, texts: Sequence[str]
) -> tuple[str, ...]:
    """Load ``staged`` back (named ``final`` in messages) and compare its ids on ``texts``; returns the
    libraries that agreed."""
    try:
        again = load(staged)
    except (FormatError, OSError) as exc:
        raise VerificationError(
            f"{final}: written, it does not load back ({_renamed(exc, staged, final)}); nothing was saved; "
            "keep the original and report this as a bug"
        ) from None
    # A template (BOS/EOS) the format cannot store is dropped on purpose, with a FormatWarning from save().
    kept = again.template is not None
    for text in texts:
        expected = tokenizer.encode(text, allowed_special="all", add_special_tokens=kept)
        found = again.encode(text, allowed_special="all")
        _compare(f"{final}, loaded back,", expected, found, format)
        if again.decode(found) != tokenizer.decode(expected):
            raise VerificationError(
                f"{final}, loaded back, decodes the sample text differently from the original; the {format} "
                "format cannot represent this tokenizer exactly: keep the original or choose another format"
            )
    return ("bpe_studio", *_verify_elsewhere(tokenizer, staged, final, format, texts))


def _compare(what: str, expected: list[int], found: list[int], format: str) -> None:
    if found == expected:
        return
    at = next((i for i, (a, b) in enumerate(zip(expected, found, strict=False)) if a != b), None)
    if at is None:
        where = f"it gives {len(found):,} tokens instead of {len(expected):,}"
        at = min(len(expected), len(found))
    else:
        where = f"first difference at token {at}"
    raise VerificationError(
        f"{what} encodes the sample text differently from the original ({where}: {expected[at : at + 5]} vs "
        f"{found[at : at + 5]}); the {format} format cannot represent this tokenizer exactly: keep the "
        "original or choose another format"
    )


def _renamed(exc: BaseException, staged: Path, final: Path) -> str:
    """An error's message with the staging path replaced by the path the user asked for."""
    return str(exc).replace(os.fspath(staged), os.fspath(final))


def _verify_elsewhere(
    tokenizer: Tokenizer, staged: Path, final: Path, format: str, texts: Sequence[str]
) -> list[str]:
    """Check the written file in the library it is meant for, when installed; returns the libraries used."""
    if format == "hf":
        try:
            import tokenizers
        except ImportError:
            return []
        hf_tokenizer: Any = tokenizers.Tokenizer.from_file(os.fspath(staged))
        for text in texts:
            _compare(
                f"{final}, in tokenizers,", tokenizer.encode(text), hf_tokenizer.encode(text).ids, format
            )
        return ["tokenizers"]
    if format == "tiktoken":
        try:
            import tiktoken
            from tiktoken.load import load_tiktoken_bpe
        except ImportError:
            return []
        # An empty TIKTOKEN_CACHE_DIR makes tiktoken read the file directly and cache nothing.
        before = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""
        try:
            ranks = load_tiktoken_bpe(os.fspath(staged))
        finally:
            if before is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = before
        try:
            encoding: Any = tiktoken.Encoding(
                name=final.stem,
                pat_str=tokenizer.pattern,
                mergeable_ranks=ranks,
                special_tokens=dict(tokenizer.special_tokens),
            )
        except ValueError as exc:  # e.g. a regex tiktoken's engine does not accept
            raise VerificationError(
                f"{final}: tiktoken cannot use this tokenizer ({exc}); choose another format"
            ) from None
        for text in texts:
            ids = tokenizer.encode(text, add_special_tokens=False)  # tiktoken has no BOS/EOS template
            _compare(f"{final}, in tiktoken,", ids, encoding.encode(text, allowed_special="all"), format)
        return ["tiktoken"]
    return []


__all__ = [
    "SAMPLE_TEXT",
    "SaveReport",
    "VerificationError",
    "other_readers",
    "sample_texts",
    "save_plan",
    "save_result",
    "save_tokenizer",
    "training_record",
]
