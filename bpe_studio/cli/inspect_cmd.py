"""``bpe-studio inspect``: what a tokenizer file holds: sizes, special tokens, pattern, longest tokens, and
with ``--text``/``--file`` its compression of that text and the token count at smaller vocab sizes (the
figures of :mod:`bpe_studio.engine.encoding.analysis`, which the app shows too)."""

from __future__ import annotations

import argparse
from collections import Counter

from ..engine import FormatError, Tokenizer, detect_format
from ..engine.encoding.summary import SENTENCEPIECE_STYLE, length_counts, merge_summary, positions_at_least
from ..engine.notation import control_label, json_text
from .common import (
    CliError,
    add_download_option,
    add_pattern_option,
    add_special_token_option,
    add_text_options,
    no_writes,
    read_text,
)
from .loading import load_tokenizer

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# Token lengths above this are counted together in the length summary.
_LENGTH_CAP = 16
# How many vocab sizes the token count of --text is shown at (evenly spaced merge counts, ends included).
_CURVE_POINTS = 8


def register(subparsers: Any) -> None:
    """Add the ``inspect`` subcommand."""
    p = subparsers.add_parser(
        "inspect",
        help="show a tokenizer's size, special tokens, pattern and longest tokens",
        description="Describe a tokenizer file or folder (any format).",
    )
    p.add_argument(
        "path", metavar="PATH", help="tokenizer file or folder, or a name: gpt2, cl100k_base, o200k_base, ..."
    )
    p.add_argument("--top", type=int, default=10, metavar="N", help="how many of the longest tokens to list")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    add_pattern_option(p)
    add_special_token_option(p)
    add_download_option(p)
    add_text_options(
        p, required=False, purpose="also show how the tokenizer compresses this text, at several vocab sizes"
    )
    p.set_defaults(handler=run, plan=no_writes)  # prints only: writes no file


def describe(tok: Tokenizer, *, top: int = 10) -> dict[str, Any]:
    """A JSON-ready description of a tokenizer.

    Example:
        >>> describe(tok)["vocab_size"]
        50257
    """
    # Every figure in C-speed passes over the 100k-200k tokens: ``inspect`` should open a file about as
    # fast as the reference library loads it (bench/load.py).
    # The lengths of all the tokens counted in one pass (natively: no lookup per id, no int per token; 15 of
    # a 200k-token file's 19 ms), then the few special tokens' taken off the counts and the longest.
    special_ids = set(tok.special_tokens.values())
    vocab = tok.vocab
    ids = list(vocab)
    tokens = list(vocab.values())
    counted = length_counts(tokens)
    for i in special_ids:
        counted[len(vocab[i])] -= 1
    counted = +counted  # (the lengths only special tokens have: gone)
    total = sum(counted.values())
    histogram = Counter[int]()
    for n, count in counted.items():
        histogram[min(n, _LENGTH_CAP)] += count
    # The longest few: the length of the top-th (from the counts of each length), then only the tokens
    # longer than that (fewer than ``top``) are sorted by length, and those of that length follow by id,
    # their ids sorted in C (picked in C: no Python loop over the 200k tokens, nor over the thousands of a
    # length that random or padded tokens share).
    shortest_shown = _top_length(counted, top) if top > 0 else None
    longest: list[tuple[int, bytes]] = []
    if shortest_shown is not None:
        at_least = positions_at_least(tokens, shortest_shown)
        longer_at = positions_at_least(tokens, shortest_shown + 1)
        longest = sorted(
            ((ids[at], tokens[at]) for at in longer_at if ids[at] not in special_ids),
            key=lambda item: (-len(item[1]), item[0]),
        )
        shortest_ids = set(map(ids.__getitem__, at_least)).difference(map(ids.__getitem__, longer_at))
        shortest_ids.difference_update(special_ids)
        longest += [(i, vocab[i]) for i in sorted(shortest_ids)[: max(top - len(longest), 0)]]
        longest = longest[:top]
    summary = merge_summary(tok)
    deepest = summary.deepest
    return {
        "vocab_size": tok.vocab_size,
        "merges": summary.merges,
        "learned_tokens": summary.learned_tokens,
        "deepest_token": None
        if deepest is None
        else {
            "id": deepest[0],
            "depth": deepest[1],
            "text": tok.token_bytes(deepest[0]).decode("utf-8", errors="backslashreplace"),
        },
        "special_tokens": dict(tok.special_tokens),
        **_pattern(tok),
        "longest_tokens": [
            {"id": i, "bytes": len(b), "text": b.decode("utf-8", errors="backslashreplace")}
            for i, b in longest
        ],
        "token_lengths": {
            "histogram": {(f"{n}+" if n == _LENGTH_CAP else str(n)): histogram[n] for n in sorted(histogram)},
            # statistics.fmean's value (importing statistics costs 2 ms: it imports fractions and decimal),
            # from the counts: their exact integer sum is what fsum gives for the lengths.
            "mean": round(sum(n * count for n, count in counted.items()) / total, 3) if total else 0.0,
            "median": _median(counted) if total else 0,
            "max": max(counted, default=0),
        },
    }


def _pattern(tok: Tokenizer) -> dict[str, Any]:
    """The description's pattern entries: the regex and its preset name; for a SentencePiece-style BPE,
    which has no regex (its ``Tokenizer.pattern`` is a placeholder no encode uses), none, and how its text
    is cut before the merges instead.

    Example:
        >>> _pattern(tok)["pattern_preset"]
        'gpt2'
    """
    model = tok.piece_model
    if model is None:
        return {"pattern": tok.pattern, "pattern_preset": tok.pattern_name}
    pipeline = model.pipeline
    normalizer = "+".join(pipeline.normalizer_names()) if pipeline is not None else ""
    pre_tokenizer = "+".join(pipeline.pre_tokenizer_names()) if pipeline is not None else ""
    steps = [f"normalizer {normalizer}"] if normalizer else []
    steps.append(
        f"pre-tokenizer {pre_tokenizer}"
        if pre_tokenizer
        else "no pre-tokenizer: the merges run over the whole normalized text"
    )
    return {
        "pattern": None,
        "pattern_preset": None,
        "pre_tokenization": f"{SENTENCEPIECE_STYLE} ({'; '.join(steps)})",
    }


def _top_length(counted: Counter[int], top: int) -> int:
    """The ``top``-th largest of the lengths counted (the smallest of all when there are fewer; 0 for none):
    ``min(heapq.nlargest(top, lengths), default=0)`` from the few distinct lengths.

    Example:
        >>> counted = Counter([1, 5, 5, 3])
        >>> _top_length(counted, 2), _top_length(counted, 3), _top_length(counted, 9)
        (5, 3, 1)
    """
    seen = 0
    value = 0
    for value, count in sorted(counted.items(), reverse=True):
        seen += count
        if seen >= top:
            return value
    return value


def _median(counted: Counter[int]) -> float | int:
    """``statistics.median`` of the lengths counted (from their few distinct values, not a sort of all)."""
    total = sum(counted.values())
    ordered = sorted(counted.items())

    def at(position: int) -> int:
        seen = 0
        for value, count in ordered:
            seen += count
            if position < seen:
                return value
        raise AssertionError("position past the end")  # pragma: no cover

    if total % 2:
        return at(total // 2)
    return (at(total // 2 - 1) + at(total // 2)) / 2


def on_text(tok: Tokenizer, text: str, *, points: int = _CURVE_POINTS) -> dict[str, Any]:
    """How a tokenizer compresses a text, and its token count cut to a few smaller vocab sizes.

    Example:
        >>> on_text(tok, "hello world")["tokens"]
        2
    """
    # (Imported here: describing a file needs none of them, and analysis imports dataclasses, 5-8 ms.)
    from ..engine.encoding.analysis import MergeIndex, compression, token_count_curve

    index = MergeIndex(tok)
    curve = token_count_curve(tok, text, index=index)
    n = index.merge_count
    cuts = sorted({round(i * n / max(points, 1)) for i in range(max(points, 1) + 1)})
    figures = compression(text, curve.counts[-1])
    return {
        "characters": figures.characters,
        "bytes": figures.bytes,
        "words": figures.words,
        "tokens": figures.tokens,
        "bytes_per_token": figures.bytes_per_token,
        "tokens_per_word": figures.tokens_per_word,
        "by_vocab_size": [
            {"merges": k, "vocab_size": curve.vocab_sizes[k], "tokens": curve.counts[k]} for k in cuts
        ],
    }


#: How many special tokens the text output lists.
_SPECIALS_SHOWN = 8


def _text(path: str, fmt: str, info: dict[str, Any]) -> str:
    lines = [
        f"file:           {path} ({fmt})",
        f"vocab size:     {info['vocab_size']:,} tokens, {info['merges']:,} merges",
    ]
    deepest = info["deepest_token"]
    if deepest is not None:
        lines.append(
            f"learned tokens: {info['learned_tokens']:,}; deepest merge tree: id {deepest['id']} "
            f"{deepest['text']!r}, {deepest['depth']} merges deep"
        )
    specials = info["special_tokens"]
    if specials:
        ordered = sorted(specials.items(), key=lambda kv: kv[1])
        # A file may hold a thousand (Mistral's tekken): the first few on the line, all of them in --json.
        shown = ", ".join(f"{token!r} = {i}" for token, i in ordered[:_SPECIALS_SHOWN])
        more = len(ordered) - _SPECIALS_SHOWN
        tail = f" … and {more:,} more" if more > 0 else ""
        lines.append(f"special tokens: {len(specials)}: {shown}{tail}")
    else:
        lines.append("special tokens: none")
    preset = info["pattern_preset"]
    if info["pattern"] is None:
        lines.append(f"pattern:        none: {info['pre_tokenization']}")
    else:
        lines.append(f"pattern:        {preset} (preset)" if preset else f"pattern:        {info['pattern']}")
    if info["longest_tokens"]:
        lines.append("longest tokens:")
        for item in info["longest_tokens"]:
            lines.append(f"  {item['bytes']:>4} bytes  id {item['id']:<7} {item['text']!r}")
    stats = info["token_lengths"]
    lines.append(
        f"token lengths:  mean {stats['mean']:.2f} bytes, median {stats['median']}, max {stats['max']}"
    )
    counts = stats["histogram"]
    peak = max(counts.values(), default=1)
    for length, count in counts.items():
        bar = "█" * max(1, round(30 * count / peak)) if count else ""
        lines.append(f"  {length:>4} bytes  {count:>8,}  {bar}")
    sample = info.get("text")
    if sample is not None:
        figures = [f"{sample['tokens']:,} tokens"]
        if sample["bytes_per_token"] is not None:
            figures.append(f"{sample['bytes_per_token']:.2f} bytes/token")
        if sample["tokens_per_word"] is not None:
            figures.append(f"{sample['tokens_per_word']:.2f} tokens/word")
        lines.append(
            f"text:           {sample['characters']:,} characters, {sample['bytes']:,} bytes, "
            f"{sample['words']:,} words: {', '.join(figures)}"
        )
        lines.append("the text's tokens with the first merges only (smaller vocab sizes):")
        most = max((p["tokens"] for p in sample["by_vocab_size"]), default=1) or 1
        for point in sample["by_vocab_size"]:
            bar = "█" * round(30 * point["tokens"] / most)
            lines.append(f"  vocab {point['vocab_size']:>8,}  {point['tokens']:>10,} tokens  {bar}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio inspect``."""
    text = read_text(args)
    tok = load_tokenizer(
        args.path,
        pattern=args.pattern,
        option="PATH",
        download=args.download,
        special_tokens=args.special_token,
    )
    try:
        fmt = detect_format(args.path)
    except (FormatError, OSError) as exc:  # load() succeeded, so this is not expected
        raise CliError(str(exc)) from None
    info = describe(tok, top=args.top)
    if text is not None:
        info["text"] = on_text(tok, text)
    if args.json:
        print(json_text({"path": str(args.path), "format": fmt, **info}))  # control characters escaped
    else:
        print(
            control_label(_text(str(args.path), fmt, info))
        )  # a file name or pattern must not drive the terminal
    return 0
