"""Loading the tokenizer a command names (``PATH``, ``-t``/``--tokenizer``), with one-line errors: shared by
``inspect``, ``encode``, ``decode``, ``convert`` and ``compare``, and kept light (``inspect FILE`` in a fresh
process should take no longer than the reference library's load: issue 20, bench/load.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..engine import FormatError, load
from ..engine.formats.detect import detect_format
from .common import EXIT_FAILURE, CliError
from .warn import print_format_warnings

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from ..engine import Tokenizer
    from ..engine.formats.tiktoken_format import SpecialTokenSpec


def load_tokenizer(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    option: str = "--tokenizer",
    pattern_option: str = "--pattern",
    decode_only: bool = False,
    download: bool = False,
    special_tokens: Sequence[SpecialTokenSpec] = (),
    special_option: str = "--special-token",
) -> Tokenizer:
    """Load a tokenizer for a subcommand, turning file problems into one-line errors (naming ``option``).

    Args:
        path: The tokenizer file or folder.
        pattern: The ``--pattern`` given, if any (see :func:`~bpe_studio.engine.load`).
        option: The option or argument that named ``path``, for messages.
        pattern_option: The option that gives the pattern, for the message when one is needed.
        decode_only: The command only decodes, which no pattern affects: a file that states none loads
            with ``gpt2`` rather than failing.
        download: ``path`` names an OpenAI encoding or a Hugging Face model that may be fetched if it is not
            cached (``--download``).
        special_tokens: The ``--special-token`` values given: special tokens added to a ``.tiktoken`` file's
            (see :func:`~bpe_studio.engine.formats.tiktoken_format.add_special_tokens`); other formats
            store their own, so giving any for them is refused.
        special_option: The option that gives them, for messages.

    Example:
        >>> save(small, "out/tokenizer.json")
        PosixPath('out/tokenizer.json')
        >>> load_tokenizer("out/tokenizer.json").vocab == small.vocab
        True
    """
    try:
        name = os.fspath(path)
        if download and not os.path.exists(name):
            _download(name)
        if special_tokens and detect_format(path) != "tiktoken":
            raise CliError(
                f"{special_option}: {path} is not a .tiktoken file; its format stores its own special tokens "
                f"(leave out {special_option}, or convert it with --to tiktoken first)"
            )
        with print_format_warnings():
            try:
                tokenizer = load(path, pattern=pattern)
            except FormatError as exc:
                # (Imported here: only a rank file raises it, and then its module is imported already.)
                from ..engine.formats.tiktoken_format import PATTERN_MISSING, PatternRequiredError

                if not isinstance(exc, PatternRequiredError):
                    raise
                if not decode_only:
                    raise CliError(
                        f"{exc.path}: {PATTERN_MISSING}; pass {pattern_option} "
                        "gpt2|cl100k|o200k|llama3|qwen2|qwen35|nemo|REGEX"
                    ) from None
                tokenizer = load(path, pattern="gpt2")
        if not special_tokens:
            return tokenizer
        from ..engine.formats.tiktoken_format import add_special_tokens

        try:
            return add_special_tokens(tokenizer, special_tokens)
        except ValueError as exc:
            raise CliError(f"{special_option}: {path}: {exc}") from None
    except FileNotFoundError:
        from ..engine.formats.named import tokenizer_names

        raise CliError(
            f"{option}: {path} does not exist; give a tokenizer file or folder, or a name: "
            f"{', '.join(tokenizer_names())}, or a Hugging Face model id (ORG/NAME)"
        ) from None
    except (FormatError, ValueError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        from ..engine.humanize import error_message  # (only for a message: it imports the events, 3 ms)

        raise CliError(error_message(exc, path=path)) from None


def _download(name: str) -> None:
    """``--download`` of a name that is not a path: an OpenAI encoding into tiktoken's cache, or a Hugging
    Face model's tokenizer files into its cache (when not there yet); nothing for any other name.

    Raises:
        CliError: The download failed (exit 1), or the model is gated, private or missing (exit 2).
    """
    # (Imported here: opening a file needs neither module, 3-4 ms of every command.)
    from ..engine.formats.hub import (
        HubModelUnavailableError,
        download_model,
        endpoint,
        find_model,
        is_model_id,
    )
    from ..engine.formats.named import download_encoding, download_timeout, encoding_of

    if encoding_of(name) is not None:
        seconds = download_timeout()  # a bad BPE_STUDIO_DOWNLOAD_TIMEOUT is the user's mistake (exit 2)
        print(f"bpe-studio: fetching {name} (if not cached)…", file=sys.stderr)
        try:
            download_encoding(name, timeout=seconds)
        except FormatError as exc:  # the network or the server, not the user's mistake
            raise CliError(str(exc), EXIT_FAILURE) from None
    elif is_model_id(name) and find_model(name) is None:
        seconds = download_timeout()
        print(f"bpe-studio: fetching the tokenizer of {name} from {endpoint()}…", file=sys.stderr)
        try:
            download_model(name, timeout=seconds)
        except HubModelUnavailableError as exc:  # gated, private or no such model: the user's to fix
            raise CliError(str(exc)) from None
        except FormatError as exc:  # the network, the server or HF_HUB_OFFLINE
            raise CliError(str(exc), EXIT_FAILURE) from None
