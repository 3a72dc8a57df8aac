"""Pattern benchmark: encoding with each pre-tokenization pattern of the zoo, ours against tiktoken.

Run it standalone (a few minutes on a loaded machine; one core)::

    python bench/patterns.py               # 4 MB of mixed English, every pattern
    python bench/patterns.py --text-mb 1 --pattern llama3 --pattern qwen35
    python bench/patterns.py --ranks cl100k_base.tiktoken  # another rank file (tiktoken's format)

For each pattern (the presets; tiktoken's r50k and ``tokenizers``' ByteLevel regex, both GPT-2's; Llama 3's,
which is also OLMo 2's; Qwen 2's; Qwen 3.5's; Llama 4's, which is o200k's; Mistral Nemo's), tiktoken gets an
``Encoding`` with that ``pat_str`` and GPT-2's ranks (the one rank file in the shared data; ``--ranks`` gives
another, cl100k's say), and BPE Studio a Tokenizer of the same ranks (tiktoken's rule: ``merges=None``) and
pattern. The text's lines are the documents: the ids of every one are checked equal first. Then, interleaved
over a few rounds and keeping each one's best: ``encode_ordinary`` of the whole text, ours with a cold cache
(a new Tokenizer, made outside the timing) and a warm one (the same text again; tiktoken keeps no cache),
tiktoken's; and, to show what a pattern without a native scanner costs, ours with the same pattern spelled so
that no scanner recognises it (``(?:...)`` around it: the ``regex`` module splits, the native BPE merges;
warm).

The ratios are ours (native scanner, warm and cold) over tiktoken; the target is at least 1.5x for every
pattern.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from encode import (  # type: ignore[import-not-found]  # bench/encode.py, a sibling script
    CACHE_DIR,
    MB,
    SPECIAL,
    best_of,
    cpu_name,
    data_dir,
    english_file,
    library_versions,
    mixed_text,
    natural_corpus,
)

#: The zoo, by the name of the model (or library) whose pattern it is.
ZOO = (
    "gpt2",
    "r50k",
    "byte_level",
    "cl100k",
    "llama3",
    "qwen2",
    "qwen35",
    "o200k",
    "nemo",
)


def zoo_patterns() -> dict[str, str]:
    """Each zoo name -> its regex, exactly as the model's file or code states it."""
    from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS, PATTERNS

    return {name: PATTERNS.get(name) or MODEL_PATTERNS[name] for name in ZOO}


def gpt2_ranks(data: Path) -> dict[bytes, int]:
    """GPT-2's ranks as tiktoken reads them, from the shared data (tiktoken's cache filled from it)."""
    import shutil

    import tiktoken

    cache = CACHE_DIR / "tiktoken-gpt2"
    cache.mkdir(parents=True, exist_ok=True)
    merges = b"#version: 0.2\n" + (data / "gpt2_merges.txt").read_bytes()
    (cache / "6d1cbeee0f20b3d9449abfede4726ed8212e3aee").write_bytes(merges)
    shutil.copyfile(data / "gpt2_vocab.json", cache / "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    ranks: dict[bytes, int] = tiktoken.get_encoding("gpt2")._mergeable_ranks
    return ranks


def measure(name: str, pattern: str, text: str, ranks: dict[bytes, int], rounds: int) -> dict[str, Any]:
    """One row: MB/s of ours (native scanner), ours (regex split) and tiktoken, ids checked equal."""
    import tiktoken

    from bpe_studio.engine import Tokenizer
    from bpe_studio.engine.pretokenize.patterns import scanner_name

    size = len(text.encode("utf-8")) / MB
    special = {SPECIAL: len(ranks)}
    enc = tiktoken.Encoding(f"bench-{name}", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)
    vocab = {rank: token for token, rank in ranks.items()}
    ours = Tokenizer(vocab, None, special, pattern=pattern)
    wrapped = f"(?:{pattern})"  # the same pre-tokens, but no scanner recognises this spelling
    assert scanner_name(wrapped) is None
    split_in_python = Tokenizer(vocab, None, special, pattern=wrapped)
    scanner = ours._encoder.preset if ours.backend == "native" else None
    documents = text.splitlines(keepends=True)
    expected = enc.encode_ordinary_batch(documents, num_threads=1)
    assert ours.encode_ordinary_batch(documents) == expected, f"{name}: BPE Studio and tiktoken disagree"
    assert split_in_python.encode_ordinary(text) == ours.encode_ordinary(text)

    def cold() -> None:
        fresh = Tokenizer(vocab, None, special, pattern=pattern)
        seconds, _ = best_of(1, lambda: fresh.encode_ordinary(text))
        best["cold"] = min(best.get("cold", float("inf")), seconds)

    actions = {
        "cold": cold,
        "ours": lambda: ours.encode_ordinary(text),
        "regex": lambda: split_in_python.encode_ordinary(text),
        "tiktoken": lambda: enc.encode_ordinary(text),
    }
    best: dict[str, float] = {}
    for _ in range(rounds):
        for key, action in actions.items():
            if key == "cold":
                cold()
                continue
            seconds, _ = best_of(1, action)
            best[key] = min(best.get(key, float("inf")), seconds)
    speeds = {key: size / seconds for key, seconds in best.items()}
    return {
        "pattern": name,
        "scanner": scanner or "(regex)",
        "documents": len(documents),
        **speeds,
        "ratio": speeds["ours"] / speeds["tiktoken"],
        "cold ratio": speeds["cold"] / speeds["tiktoken"],
        "regex ratio": speeds["regex"] / speeds["tiktoken"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text-mb", type=float, default=4.0, help="size of the text (default 4 MB)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds, best kept (default 5)")
    parser.add_argument("--pattern", choices=ZOO, action="append", help="(default: all)")
    parser.add_argument("--ranks", type=Path, help="a .tiktoken rank file (default: GPT-2's, from the data)")
    args = parser.parse_args(argv)

    data = data_dir()
    source = natural_corpus()
    text_size = int(args.text_mb * MB)
    text = mixed_text(english_file(text_size, source, data), text_size)
    if args.ranks is not None:
        from tiktoken.load import load_tiktoken_bpe

        ranks, ranks_name = load_tiktoken_bpe(str(args.ranks)), args.ranks.name
    else:
        ranks, ranks_name = gpt2_ranks(data), "GPT-2"
    patterns = zoo_patterns()
    print(f"# Pattern benchmark: {ranks_name} ranks, {len(text.encode()) / MB:.1f} MB of mixed English")
    print(f"{cpu_name()}, Python {platform.python_version()}, {library_versions()}")
    print(f"text: {source.name if source else 'shared CS336 English texts'}\n")
    print(
        "| pattern | native scanner | BPE Studio warm / cold MB/s | regex split, warm MB/s | tiktoken MB/s "
        "| ratio warm / cold | regex split ratio |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    worst = worst_cold = float("inf")
    for name in args.pattern or ZOO:
        row = measure(name, patterns[name], text, ranks, args.rounds)
        worst, worst_cold = min(worst, row["ratio"]), min(worst_cold, row["cold ratio"])
        print(
            f"| {name} | {row['scanner']} | {row['ours']:.2f} / {row['cold']:.2f} | {row['regex']:.2f} "
            f"| {row['tiktoken']:.2f} | {row['ratio']:.2f}x / {row['cold ratio']:.2f}x "
            f"| {row['regex ratio']:.2f}x |",
            flush=True,
        )
    print(
        f"\nlowest ratio: {worst:.2f}x tiktoken warm, {worst_cold:.2f}x cold (target 1.5x); ids equal on "
        "every document of every pattern"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
