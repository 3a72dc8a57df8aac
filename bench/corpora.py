"""Deterministic, offline benchmark corpora for BPE Studio.

Five kinds of corpus are available, all plain UTF-8 text whose documents are joined by the literal
special token ``<|endoftext|>``:

* :func:`corpus_en` -- the small reference corpus shipped with the shared CS336 test data.
* :func:`natural` -- about 100 MB of English text assembled from text that Debian packages ship
  (fortunes, the Python, Perl, Linux and Git manuals, the Debian Reference and five dictd
  dictionaries). The machine that runs the benchmarks reaches no web site, only the Debian mirrors,
  so the corpus is built from installed packages instead of a download.
* :func:`synthetic` -- a corpus of any size made of random words with a Zipf-like frequency
  distribution, for scaling experiments.
* :func:`chinese` -- Chinese-like text (CJK characters, no spaces: long pre-tokens), 2.3 MB by default.
* :func:`identifiers` -- code-like lines of made-up identifiers (mostly unique pre-tokens), 6.8 MB.

Built corpora are cached in ``bench/.cache/`` next to a ``.json`` file with their statistics and are
rebuilt only when missing. Run ``python bench/corpora.py --help`` for the command line.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import html.entities
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = REPO_ROOT / "bench" / ".cache"
CS336_DATA_ENV = "BPE_STUDIO_CS336_DATA"
DEFAULT_CS336_DATA = REPO_ROOT.parent / "shared" / "data" / "cs336"

ENDOFTEXT = "<|endoftext|>"
_SEPARATOR = ENDOFTEXT.encode("utf-8")

# Bump when the extraction or generation changes, so stale cached corpora are not reused.
_FORMAT_VERSION = 1

DEBIAN_PACKAGES: tuple[str, ...] = (
    "fortunes-min",
    "fortunes",
    "python3.11-doc",
    "perl-doc",
    "linux-doc-6.1",
    "git-doc",
    "debian-reference-en",
    "dict-devil",
    "dict-jargon",
    "dict-foldoc",
    "dict-gcide",
    "dict-wn",
)
"""Debian packages whose text makes up the natural corpus (Debian 12 "bookworm" names)."""

INSTALL_COMMAND: tuple[str, ...] = ("apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_PACKAGES)
"""The command that installs :data:`DEBIAN_PACKAGES`; ``python bench/corpora.py --install`` runs it."""


class MissingPackageError(RuntimeError):
    """A Debian package needed for the natural corpus is not installed."""


# --------------------------------------------------------------------------------------------------
# Reference corpus
# --------------------------------------------------------------------------------------------------


def corpus_en() -> Path:
    """Return the path of ``corpus.en`` from the shared CS336 reference data.

    The data folder defaults to ``<repo root>/../shared/data/cs336`` and can be overridden with the
    environment variable ``BPE_STUDIO_CS336_DATA``.

    Returns:
        The path of the existing ``corpus.en`` file.

    Raises:
        FileNotFoundError: If the file does not exist.
    """
    folder = Path(os.environ.get(CS336_DATA_ENV) or DEFAULT_CS336_DATA)
    path = folder / "corpus.en"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. Set the environment variable {CS336_DATA_ENV} to the folder that "
            f"holds the CS336 reference data (corpus.en, gpt2_vocab.json, ...); "
            f"the default is {DEFAULT_CS336_DATA}."
        )
    return path


# --------------------------------------------------------------------------------------------------
# Caching and statistics shared by the built corpora
# --------------------------------------------------------------------------------------------------


class _CorpusWriter:
    """Writes documents joined by ``<|endoftext|>`` and keeps count of what it wrote.

    Args:
        stream: The binary file to write to.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._sha256 = hashlib.sha256()
        self.size = 0
        self.documents = 0

    def cost(self, encoded: bytes) -> int:
        """Return how many bytes writing ``encoded`` as the next document would add."""
        return len(encoded) + (len(_SEPARATOR) if self.documents else 0)

    def write(self, encoded: bytes) -> None:
        """Append one UTF-8 encoded document, preceded by the separator unless it is the first."""
        data = _SEPARATOR + encoded if self.documents else encoded
        self._stream.write(data)
        self._sha256.update(data)
        self.size += len(data)
        self.documents += 1

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of everything written so far."""
        return self._sha256.hexdigest()


def _stats_path(corpus: Path) -> Path:
    return corpus.with_suffix(".json")


def read_stats(corpus: Path) -> dict[str, Any]:
    """Return the statistics saved next to a corpus built by this module.

    Args:
        corpus: A path returned by :func:`natural` or :func:`synthetic`.

    Returns:
        A dictionary with at least ``bytes``, ``documents``, ``sha256`` and ``build_seconds``.
    """
    return dict(json.loads(_stats_path(corpus).read_text(encoding="utf-8")))


def _cached(path: Path, build: Callable[[_CorpusWriter], dict[str, Any]]) -> Path:
    """Return ``path``, first building it with ``build`` unless it and its statistics exist.

    The corpus and its statistics are written to temporary names and renamed into place only when
    complete, so an interrupted build never leaves a truncated file that would pass for a cached one.

    Args:
        path: Where the corpus belongs.
        build: Writes the documents and returns extra statistics to save.

    Returns:
        ``path``.
    """
    stats_path = _stats_path(path)
    if path.is_file() and stats_path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_corpus = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp_stats = stats_path.with_name(f"{stats_path.name}.{os.getpid()}.tmp")
    start = time.perf_counter()
    try:
        with tmp_corpus.open("wb", buffering=1 << 22) as stream:
            writer = _CorpusWriter(stream)
            extra = build(writer)
        stats = {
            "bytes": writer.size,
            "documents": writer.documents,
            "sha256": writer.sha256,
            "build_seconds": round(time.perf_counter() - start, 3),
            **extra,
        }
        tmp_stats.write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp_corpus, path)
        os.replace(tmp_stats, stats_path)
    finally:
        tmp_corpus.unlink(missing_ok=True)
        tmp_stats.unlink(missing_ok=True)
    return path


# --------------------------------------------------------------------------------------------------
# Natural corpus: Debian packages
# --------------------------------------------------------------------------------------------------


def _dpkg_query(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as error:  # not a Debian system
        raise MissingPackageError(
            "dpkg-query was not found: the natural corpus is built from Debian packages and needs a "
            "Debian 12 (bookworm) system with: " + " ".join(INSTALL_COMMAND)
        ) from error


def installed_versions(packages: Iterable[str] = DEBIAN_PACKAGES) -> dict[str, str]:
    """Return the installed version of each given Debian package that is installed.

    Args:
        packages: Debian package names.

    Returns:
        A mapping from package name to version, without the packages that are not installed.
    """
    fmt = "${Package}\t${db:Status-Status}\t${Version}\n"
    # dpkg-query exits non-zero when some package is unknown but still reports the others.
    result = _dpkg_query("-W", f"-f={fmt}", *packages)
    versions = {}
    for line in result.stdout.splitlines():
        name, status, version = line.split("\t")
        if status == "installed":
            versions[name] = version
    return versions


def check_packages() -> dict[str, str]:
    """Check that every package in :data:`DEBIAN_PACKAGES` is installed.

    Returns:
        The installed version of each package.

    Raises:
        MissingPackageError: If some package is missing; the message names the command to run.
    """
    versions = installed_versions()
    missing = [name for name in DEBIAN_PACKAGES if name not in versions]
    if missing:
        raise MissingPackageError(
            f"Debian package(s) {', '.join(missing)} are not installed. Install them with\n"
            f"    {' '.join(INSTALL_COMMAND)}\n"
            "(as root, after apt-get update), or run: python bench/corpora.py --install"
        )
    return versions


def _package_files(package: str) -> list[Path]:
    """Return the regular files that ``package`` ships, sorted.

    Listing what the package ships, instead of globbing a folder, keeps the corpus independent of
    other packages that put files in the same folders (e.g. ``fortunes-off``). Symlinks are skipped
    because they only alias files that are listed anyway (``fortunes/*.u8``).
    """
    result = _dpkg_query("-L", package)
    paths = (Path(line) for line in result.stdout.splitlines() if line.startswith("/"))
    return sorted(path for path in paths if path.is_file() and not path.is_symlink())


def _read_bytes(path: Path) -> bytes:
    # dictzip (.dz) files are gzip files with an extra header field, so gzip reads them too.
    if path.suffix in {".gz", ".dz"}:
        with gzip.open(path, "rb") as stream:
            return stream.read()
    return path.read_bytes()


def _decode(data: bytes, encoding: str = "utf-8") -> str:
    """Decode bytes leniently and normalise line endings to ``\\n``."""
    return data.decode(encoding, errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _read_text(path: Path) -> str:
    return _decode(_read_bytes(path))


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def _clean_document(text: str) -> str:
    """Trim blank lines around a document and remove stray separators.

    A literal ``<|endoftext|>`` inside a document would split it in two for any tokenizer that
    treats it as a special token, so it is removed. Leading spaces of the first line are kept
    because they are meaningful (indented verse in fortunes, code in manuals).
    """
    return _LEADING_BLANK_LINES.sub("", text.replace(ENDOFTEXT, "")).rstrip()


# --- fortunes -------------------------------------------------------------------------------------


_FORTUNE_SEPARATOR = re.compile(r"^%[ \t]*$", re.MULTILINE)


def _fortune_documents(path: Path) -> Iterator[str]:
    """Yield the fortunes of a fortune file: one per ``%``-separated block."""
    yield from _FORTUNE_SEPARATOR.split(_read_text(path))


def _is_fortune_file(path: Path) -> bool:
    # The .dat files are strfile indexes; the .u8 names are symlinks (skipped anyway).
    return "/games/fortunes/" in str(path) and path.suffix not in {".dat", ".u8"}


# --- Sphinx, asciidoc and plain text manuals ------------------------------------------------------


def _whole_file(path: Path) -> Iterator[str]:
    """Yield the whole file as one document."""
    yield _read_text(path)


def _is_python_doc_source(path: Path) -> bool:
    # Sphinx ships the reStructuredText source of each page as _sources/*.rst.txt; it is the text of
    # the HTML pages without the navigation boilerplate, so it needs no tag stripping.
    return "/html/_sources/" in str(path) and path.name.endswith(".txt")


def _is_linux_doc_source(path: Path) -> bool:
    # translations/ holds the Chinese, Japanese, Korean, Italian and Spanish versions.
    return _is_python_doc_source(path) and "/_sources/translations/" not in str(path)


def _is_git_doc_source(path: Path) -> bool:
    return path.suffix == ".txt"


# The headings are "Chapter\u00a01.\u00a0GNU/Linux tutorials" (no-break spaces, which \s matches).
_DEBIAN_REFERENCE_CHAPTER = re.compile(r"^(?=(?:Chapter|Appendix)\s[0-9A-Z]+\.\s)", re.MULTILINE)


def _debian_reference_documents(path: Path) -> Iterator[str]:
    """Yield the preface and each chapter of the Debian Reference as separate documents."""
    yield from _DEBIAN_REFERENCE_CHAPTER.split(_read_text(path))


def _is_debian_reference_text(path: Path) -> bool:
    return path.name == "debian-reference.en.txt.gz"


# --- Perl POD -------------------------------------------------------------------------------------


_POD_PARAGRAPHS = re.compile(r"\n(?:[ \t]*\n)+")
_POD_ENCODING = re.compile(rb"^=encoding\s+(\S+)", re.MULTILINE)
_POD_CODE_START = re.compile(r"([A-Z])(<+)")
_POD_SIMPLE_CODE_END = re.compile(r">")
_POD_COMMAND = re.compile(r"=([a-z]\w*)\s*(.*)", re.DOTALL)
_POD_BULLET = re.compile(r"\*?|[0-9]+\.?")
_POD_DROPPED_COMMANDS = frozenset({"over", "back", "pod", "encoding", "for", "cut", "end"})


def _pod_escape(name: str) -> str:
    """Return the character of a POD ``E<...>`` escape (``lt``, ``gt``, ``0x263A``, ``eacute``...)."""
    named = {"lt": "<", "gt": ">", "sol": "/", "verbar": "|"}
    if name in named:
        return named[name]
    try:
        return chr(int(name, 0)) if name[:1].isdigit() else html.entities.html5[name + ";"]
    except (KeyError, ValueError, OverflowError):
        return name


def _pod_code(code: str, content: str) -> str:
    """Return the plain text of one POD formatting code such as ``B<bold>`` or ``L<text|link>``."""
    if code == "E":
        return _pod_escape(content)
    if code in {"X", "Z"}:  # index entries and zero-width markers have no visible text
        return ""
    if code == "L":
        text, bar, _target = content.partition("|")
        return text if bar else content.replace('"', "")
    return content


@functools.cache
def _pod_multi_code_end(brackets: int) -> re.Pattern[str]:
    return re.compile(rf"\s+>{{{brackets}}}")


def _pod_parse(text: str, pos: int, end: re.Pattern[str] | None) -> tuple[str, int]:
    """Parse POD text from ``pos`` up to the ``end`` of the enclosing formatting code.

    A recursive parser rather than regular expressions, because codes nest (``S<C<< $a->[0] >>>``)
    and the content of the ``C<< ... >>`` forms may hold ``>`` characters that do not close anything.

    Returns:
        The plain text and the position just after ``end`` (or the end of the text if unclosed).
    """
    parts = []
    while True:
        start = _POD_CODE_START.search(text, pos)
        stop = end.search(text, pos) if end else None
        if stop and (start is None or stop.start() <= start.start()):
            parts.append(text[pos : stop.start()])
            return "".join(parts), stop.end()
        if start is None:
            parts.append(text[pos:])
            return "".join(parts), len(text)
        parts.append(text[pos : start.start()])
        code, brackets = start[1], len(start[2])
        if brackets > 1 and text[start.end() : start.end() + 1].isspace():
            content, pos = _pod_parse(text, start.end() + 1, _pod_multi_code_end(brackets))
            content = content.strip()
        else:  # "C<<x>" is a one-bracket code whose text starts with "<"
            content, pos = _pod_parse(text, start.start() + 2, _POD_SIMPLE_CODE_END)
        parts.append(_pod_code(code, content))


def _pod_inline(text: str) -> str:
    """Strip POD formatting codes (``B<bold>``, ``C<< $a->b >>``...), keeping their text."""
    return _pod_parse(text, 0, None)[0]


def _pod_to_text(pod: str) -> str:
    """Convert a POD document to plain text.

    Headings and list items become their text, ordinary paragraphs lose their formatting codes,
    verbatim (indented) paragraphs are kept as they are, and ``=begin``/``=end`` blocks for other
    formatters (HTML, man...) and non-POD code after ``=cut`` are dropped. A bare ``=item *`` or
    ``=item 1.`` becomes the bullet of the paragraph that follows it, as ``pod2text`` shows it.
    """
    out: list[str] = []
    in_pod, skipping, bullet = True, False, ""
    for paragraph in _POD_PARAGRAPHS.split(pod):
        command = _POD_COMMAND.match(paragraph)
        if command:
            name, rest = command[1], _pod_inline(command[2]).strip()
            in_pod = name != "cut"
            if skipping or name == "begin":
                skipping = name != "end"
            elif name == "item" and _POD_BULLET.fullmatch(rest):
                bullet = (rest or "*") + " "
            elif name not in _POD_DROPPED_COMMANDS:
                out.append(rest)
        elif in_pod and not skipping:
            if paragraph[:1] in {" ", "\t"}:
                out.append(paragraph.rstrip())
            else:
                out.append(bullet + _pod_inline(paragraph).strip())
                bullet = ""
    # Paragraphs holding only index entries (X<...>) end up empty.
    return "\n\n".join(paragraph for paragraph in out if paragraph)


def _pod_documents(path: Path) -> Iterator[str]:
    """Yield a POD file, converted to plain text, as one document."""
    raw = path.read_bytes()
    declared = _POD_ENCODING.search(raw)
    encoding = "utf-8"
    if declared and declared[1].decode("ascii", "replace").lower() in {"latin1", "iso-8859-1"}:
        encoding = "latin-1"
    yield _pod_to_text(_decode(raw, encoding))


def _is_pod_file(path: Path) -> bool:
    return path.suffix == ".pod"


# --- dictd dictionaries ---------------------------------------------------------------------------


_DICTD_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DICTD_CROSS_REFERENCE = re.compile(r"\{([^{}]*)\}")


def _dictd_number(digits: str) -> int:
    """Decode a dictd index number (base 64, most significant digit first)."""
    value = 0
    for digit in digits:
        value = value * 64 + _DICTD_B64.index(digit)
    return value


def _dictd_spans(index: Path) -> list[tuple[int, int]]:
    """Return the sorted, distinct (offset, length) spans of the entries listed in a dictd index.

    Several headwords often point at the same entry (synonyms, variant spellings), so spans are
    deduplicated. The ``00-database-*`` entries hold metadata, not definitions, and are skipped.
    """
    spans = set()
    for line in _read_text(index).splitlines():
        headword, offset, length = line.rsplit("\t", 2)
        if not headword.startswith(("00-database", "00database")):
            spans.add((_dictd_number(offset), _dictd_number(length)))
    return sorted(spans)


def _dictd_documents(path: Path) -> Iterator[str]:
    """Yield each entry of a dictd dictionary (``*.dict.dz`` next to its ``*.index``) as a document.

    Cross-reference braces (``{Renounce}``) are dictd markup, not text, and are removed. WordNet
    repeats one definition under every synonym's headword, so an entry whose definition (all but
    its first, headword, line) was already seen is skipped.
    """
    data = _read_bytes(path)
    seen: set[str] = set()
    for offset, length in _dictd_spans(path.with_name(path.name.replace(".dict.dz", ".index"))):
        entry = _DICTD_CROSS_REFERENCE.sub(r"\1", _decode(data[offset : offset + length]))
        # One-line entries (e.g. "HEARSE, n.  Death's baby-carriage.") are keyed by their whole text.
        body = entry.strip().partition("\n")[2] or entry
        if body not in seen:
            seen.add(body)
            yield entry


def _is_dict(name: str) -> Callable[[Path], bool]:
    return lambda path: path.name == f"{name}.dict.dz"


# --- the source list ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A part of the natural corpus: some files of one Debian package and how to split them.

    Attributes:
        name: Short name shown in summaries.
        package: The Debian package that ships the files.
        wanted: Selects the package's files to use.
        documents: Yields the documents of one file.
    """

    name: str
    package: str
    wanted: Callable[[Path], bool]
    documents: Callable[[Path], Iterable[str]]

    def iter_documents(self) -> Iterator[str]:
        """Yield the cleaned, non-empty documents of this source in a fixed order."""
        for path in _package_files(self.package):
            if self.wanted(path):
                for document in self.documents(path):
                    cleaned = _clean_document(document)
                    if cleaned:
                        yield cleaned


# Prose comes first and the dictionaries last, WordNet (the most formulaic text) at the very end,
# so that truncating to the target size drops dictionary entries rather than prose.
SOURCES: tuple[Source, ...] = (
    Source("fortunes-min", "fortunes-min", _is_fortune_file, _fortune_documents),
    Source("fortunes", "fortunes", _is_fortune_file, _fortune_documents),
    Source("python-docs", "python3.11-doc", _is_python_doc_source, _whole_file),
    Source("perl-pod", "perl-doc", _is_pod_file, _pod_documents),
    Source("linux-docs", "linux-doc-6.1", _is_linux_doc_source, _whole_file),
    Source("git-docs", "git-doc", _is_git_doc_source, _whole_file),
    Source("debian-reference", "debian-reference-en", _is_debian_reference_text, _debian_reference_documents),
    Source("devils-dictionary", "dict-devil", _is_dict("devil"), _dictd_documents),
    Source("jargon-file", "dict-jargon", _is_dict("jargon"), _dictd_documents),
    Source("foldoc", "dict-foldoc", _is_dict("foldoc"), _dictd_documents),
    Source("gcide", "dict-gcide", _is_dict("gcide"), _dictd_documents),
    Source("wordnet", "dict-wn", _is_dict("wn"), _dictd_documents),
)
"""The parts of the natural corpus, in the order they are written."""


def _write_natural(writer: _CorpusWriter, target_bytes: int) -> dict[str, Any]:
    """Write documents from :data:`SOURCES` in order until the next one would pass ``target_bytes``.

    Returns:
        Per-source statistics and whether the sources ran out before the target was reached.
    """
    sources: dict[str, dict[str, Any]] = {}
    for source in SOURCES:
        before_bytes, before_docs = writer.size, writer.documents
        for document in source.iter_documents():
            encoded = document.encode("utf-8")
            if writer.size + writer.cost(encoded) > target_bytes:
                # Truncate at a document boundary: the corpus is a prefix of the full sequence.
                sources[source.name] = _source_stats(source, writer, before_bytes, before_docs)
                return {"sources": sources, "exhausted": False}
            writer.write(encoded)
        sources[source.name] = _source_stats(source, writer, before_bytes, before_docs)
    return {"sources": sources, "exhausted": True}


def _source_stats(
    source: Source, writer: _CorpusWriter, before_bytes: int, before_docs: int
) -> dict[str, Any]:
    return {
        "package": source.package,
        "bytes": writer.size - before_bytes,
        "documents": writer.documents - before_docs,
    }


def natural(target_bytes: int = 100_000_000, *, cache_dir: Path | None = None) -> Path:
    """Return a natural-English corpus of about ``target_bytes`` bytes built from Debian packages.

    The documents of :data:`SOURCES` are written in a fixed order, joined by ``<|endoftext|>``, and
    the corpus stops before the first document that would make it larger than ``target_bytes``. If
    all the sources together are smaller, nothing is repeated: the corpus is what there is, a warning
    is issued and the statistics say ``"exhausted": true``. The output depends only on the target and
    on the installed package versions, which are recorded in the statistics file.

    Args:
        target_bytes: The maximum size of the corpus in bytes.
        cache_dir: Where to cache the corpus; defaults to ``<repo root>/bench/.cache``.

    Returns:
        The path of the cached corpus (UTF-8, documents separated by ``<|endoftext|>``).

    Raises:
        MissingPackageError: If a package of :data:`DEBIAN_PACKAGES` is not installed.
    """
    path = Path(cache_dir or DEFAULT_CACHE_DIR) / f"natural-v{_FORMAT_VERSION}-{target_bytes}.txt"
    if not (path.is_file() and _stats_path(path).is_file()):
        versions = check_packages()

        def build(writer: _CorpusWriter) -> dict[str, Any]:
            stats = _write_natural(writer, target_bytes)
            return {"kind": "natural", "target_bytes": target_bytes, **stats, "packages": versions}

        _cached(path, build)
        stats = read_stats(path)
        if stats["exhausted"]:
            warnings.warn(
                f"The Debian sources hold only {stats['bytes']:,} bytes, less than the {target_bytes:,} "
                "asked for; the natural corpus is smaller than the target.",
                stacklevel=2,
            )
    return path


# --------------------------------------------------------------------------------------------------
# Synthetic corpus
# --------------------------------------------------------------------------------------------------


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# English letter frequencies (percent), so that frequent letter pairs exist for BPE to merge.
_LETTER_WEIGHTS = (
    8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4,
    6.7, 7.5, 1.9, 0.095, 6.0, 6.3, 9.1, 2.8, 0.98, 2.4, 0.15, 2.0, 0.074,
)  # fmt: skip
_MIN_WORD_LENGTH, _MAX_WORD_LENGTH = 2, 12
# Zipf-Mandelbrot law: frequency of the word of rank r is proportional to 1 / (r + 2.7) ** 1.1. The
# offset flattens the head as in English, where "the" is about 5% of the words; a plain 1 / r ** 1.1
# would give the top word 14%.
_ZIPF_EXPONENT = 1.1
_ZIPF_OFFSET = 2.7
_POOL_LINES = 200_000  # ~20 MB of distinct lines; larger corpora recombine them into new documents
_LINE_WORDS = (10, 20)
_DOCUMENT_LINES = (20, 60)
_AVERAGE_LINE_BYTES = 90


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """Return ``size`` distinct random words, most frequent first.

    Frequent words are short in natural languages, so the expected length grows with the log of the
    rank: 2.5 letters for the top word, 4.6 at rank 100 and 7.4 at rank 50,000. With the Zipf weights
    this makes running text average 4.8 letters per word, as in English.
    """
    words: dict[str, None] = {}  # a dict, not a set: its order is deterministic
    for rank in range(1, size + 1):
        mean_length = 2.5 + 0.45 * math.log(rank)
        word = ""
        while not word or word in words:
            length = min(_MAX_WORD_LENGTH, max(_MIN_WORD_LENGTH, round(rng.gauss(mean_length, 1.2))))
            word = "".join(rng.choices(_LETTERS, _LETTER_WEIGHTS, k=length))
        words[word] = None
    return list(words)


def _line(rng: random.Random, words: list[str], cum_weights: list[float]) -> str:
    """Return one sentence of Zipf-distributed words with some capitals, numbers and punctuation."""
    tokens = rng.choices(words, cum_weights=cum_weights, k=rng.randint(*_LINE_WORDS))
    for i, token in enumerate(tokens):
        roll = rng.random()
        if roll < 0.03:  # proper nouns
            tokens[i] = token.capitalize()
        elif roll < 0.04:
            tokens[i] = str(rng.randrange(2100))
        elif roll < 0.05:  # possessives exercise the GPT-2 pre-tokeniser's contraction rule
            tokens[i] = token + "'s"
        elif roll < 0.12:
            tokens[i] = token + ","
    tokens[0] = tokens[0].capitalize()
    return " ".join(tokens).rstrip(",") + rng.choices(".?!;", (85, 6, 4, 5))[0]


def _write_synthetic(writer: _CorpusWriter, size_bytes: int, seed: int, vocab: int) -> None:
    """Write a synthetic corpus of at most ``size_bytes`` bytes (and usually a few bytes less).

    Drawing every word separately is too slow for gigabyte corpora, so a pool of sentences is drawn
    once and documents are random sequences of pool sentences: the word statistics follow the Zipf
    law and every document is different, while the cost per byte is that of a list join.
    """
    rng = random.Random(seed)
    words = _vocabulary(rng, vocab)
    ranks = range(1, vocab + 1)
    cum_weights = list(itertools.accumulate((rank + _ZIPF_OFFSET) ** -_ZIPF_EXPONENT for rank in ranks))
    pool_size = max(1, min(_POOL_LINES, size_bytes // _AVERAGE_LINE_BYTES))
    pool = [_line(rng, words, cum_weights) for _ in range(pool_size)]
    while True:
        lines = rng.choices(pool, k=rng.randint(*_DOCUMENT_LINES))
        encoded = "\n".join(lines).encode("ascii")  # the generated text is ASCII only
        room = size_bytes - writer.size - writer.cost(b"")
        if len(encoded) > room:
            break
        writer.write(encoded)
    # Fill the remainder with as many whole lines as fit, so the size is close to the target.
    last: list[str] = []
    used = 0
    for line in lines:
        used += len(line) + bool(last)
        if used > room:
            break
        last.append(line)
    if last:
        writer.write("\n".join(last).encode("ascii"))


def synthetic(
    size_bytes: int,
    *,
    seed: int = 0,
    vocab: int = 50_000,
    cache_dir: Path | None = None,
) -> Path:
    """Return a synthetic corpus of about ``size_bytes`` bytes with Zipf-distributed random words.

    Words are 2-12 random lowercase letters drawn with English letter frequencies, shorter for the
    more frequent words; the word of rank ``r`` occurs with probability proportional to
    ``1 / (r + 2.7)**1.1`` (a Zipf-Mandelbrot law close to English). Lines are sentences of 10-20 words
    with occasional capitals, numbers, possessives and commas; documents are 20-60 lines joined by
    ``<|endoftext|>``. The output is ASCII and depends only on the arguments.

    Args:
        size_bytes: The maximum size of the corpus in bytes (it is reached to within one line).
        seed: Seed of the random generator.
        vocab: Number of distinct words.
        cache_dir: Where to cache the corpus; defaults to ``<repo root>/bench/.cache``.

    Returns:
        The path of the cached corpus.

    Raises:
        ValueError: If ``size_bytes`` or ``vocab`` is not positive.
    """
    if size_bytes <= 0 or vocab <= 0:
        raise ValueError(f"size_bytes and vocab must be positive, got {size_bytes} and {vocab}")
    name = f"synthetic-v{_FORMAT_VERSION}-seed{seed}-vocab{vocab}-{size_bytes}.txt"

    def build(writer: _CorpusWriter) -> dict[str, Any]:
        _write_synthetic(writer, size_bytes, seed, vocab)
        return {"kind": "synthetic", "target_bytes": size_bytes, "seed": seed, "vocab": vocab}

    return _cached(Path(cache_dir or DEFAULT_CACHE_DIR) / name, build)


# --------------------------------------------------------------------------------------------------
# Chinese text and made-up identifiers: where long and rare pre-tokens dominate
# --------------------------------------------------------------------------------------------------

_HAN_FIRST, _HAN_LAST = 0x4E00, 0x9FA5  # CJK Unified Ideographs (the basic block)
_HAN_CHARACTERS = 3_500  # about the characters of everyday Chinese (the "common characters" list)
_CHINESE_WORD_LENGTHS = ((1, 2, 3, 4), (30, 50, 12, 8))  # characters per word, and how often
_CHINESE_PUNCTUATION = ("，", "、", "；", "：")
_CHINESE_END = (("。", "？", "！", "……"), (85, 7, 6, 2))
_LATIN_WORDS = ("Python", "Linux", "HTTP", "API", "GPU", "Unicode", "BPE", "iPhone", "Wi-Fi", "CPU")


def _zipf_cum_weights(size: int) -> list[float]:
    return list(itertools.accumulate((rank + _ZIPF_OFFSET) ** -_ZIPF_EXPONENT for rank in range(1, size + 1)))


def _write_chinese(writer: _CorpusWriter, size_bytes: int, seed: int, vocab: int) -> None:
    """Write Chinese-like text of at most ``size_bytes`` bytes (see :func:`chinese`)."""
    rng = random.Random(seed)
    characters = rng.sample([chr(c) for c in range(_HAN_FIRST, _HAN_LAST + 1)], _HAN_CHARACTERS)
    char_weights = _zipf_cum_weights(len(characters))
    words: dict[str, None] = {}
    while len(words) < vocab:
        length = rng.choices(*_CHINESE_WORD_LENGTHS)[0]
        words["".join(rng.choices(characters, cum_weights=char_weights, k=length))] = None
    vocabulary = list(words)
    word_weights = _zipf_cum_weights(len(vocabulary))

    def clause() -> str:
        parts = rng.choices(vocabulary, cum_weights=word_weights, k=rng.randint(2, 9))
        roll = rng.random()
        if roll < 0.05:  # a number, as Chinese text writes them (Arabic digits, no spaces)
            parts.insert(rng.randrange(len(parts) + 1), str(rng.randrange(1, 3000)))
        elif roll < 0.08:  # a Latin word, with spaces around as in most Chinese typesetting
            parts.insert(rng.randrange(len(parts) + 1), f" {rng.choice(_LATIN_WORDS)} ")
        return "".join(parts)

    def sentence() -> str:
        clauses = [clause() for _ in range(rng.randint(1, 4))]
        return (
            "".join(c + rng.choice(_CHINESE_PUNCTUATION) for c in clauses[:-1])
            + clauses[-1]
            + (rng.choices(*_CHINESE_END)[0])
        )

    while True:
        paragraphs = ["".join(sentence() for _ in range(rng.randint(2, 8))) for _ in range(rng.randint(1, 6))]
        encoded = "\n\n".join(paragraphs).encode("utf-8")
        if writer.size + writer.cost(encoded) > size_bytes:
            return
        writer.write(encoded)


def chinese(
    size_bytes: int = 2_300_000, *, seed: int = 0, vocab: int = 20_000, cache_dir: Path | None = None
) -> Path:
    """Return a corpus of Chinese-like text of about ``size_bytes`` bytes (CJK: long pre-tokens).

    Words of 1-4 characters (2 most often) are drawn from 3,500 random characters of the basic CJK block
    with Zipf-like frequencies, and occur themselves with a Zipf-Mandelbrot law. Sentences are clauses of
    2-9 words written without spaces and joined by full-width punctuation (，、；：), ending in 。？！ or
    ……; a few clauses hold a number or a Latin word. Paragraphs are 2-8 sentences, documents 1-6 paragraphs
    joined by ``<|endoftext|>``. As in real Chinese text, a pre-tokenizer that splits at letters meets a
    whole clause as one pre-token (16 bytes on average, often 50 or more), which is what makes such
    corpora hard for a merge loop. The text is not Chinese (the words mean nothing); its statistics are
    what matters. The output depends only on the arguments.

    Args:
        size_bytes: The maximum size in bytes (reached to within one document).
        seed: Seed of the random generator.
        vocab: Number of distinct words.
        cache_dir: Where to cache the corpus; defaults to ``<repo root>/bench/.cache``.

    Returns:
        The path of the cached corpus.
    """
    if size_bytes <= 0 or vocab <= 0:
        raise ValueError(f"size_bytes and vocab must be positive, got {size_bytes} and {vocab}")
    name = f"chinese-v{_FORMAT_VERSION}-seed{seed}-vocab{vocab}-{size_bytes}.txt"

    def build(writer: _CorpusWriter) -> dict[str, Any]:
        _write_chinese(writer, size_bytes, seed, vocab)
        return {"kind": "chinese", "target_bytes": size_bytes, "seed": seed, "vocab": vocab}

    return _cached(Path(cache_dir or DEFAULT_CACHE_DIR) / name, build)


_SYLLABLE_ONSETS = ("", "b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kr", "l", "m", "n",
                    "p", "pl", "qu", "r", "s", "sh", "st", "t", "th", "tr", "v", "w", "x", "z")  # fmt: skip
_SYLLABLE_VOWELS = ("a", "e", "i", "o", "u", "y", "ai", "ea", "ou", "io")
_SYLLABLE_CODAS = ("", "", "", "n", "r", "s", "x", "l", "m", "nd", "st", "ck")
_KEYWORDS = ("if", "for", "return", "let", "const", "def", "while", "else", "self", "this", "new", "await")
_LINE_SHAPES = (
    "{i}{a} = {b}({c}, {d})",
    "{i}{a}.{b} = {c} + {n}",
    "{i}{k} {a} in {b}:",
    "{i}{k} {a}({b}, {c}={n})",
    "{i}{a}[{b}] = {c}.{d}()",
    "{i}{k} {a}.{b}({c})",
    "{i}// {a} {b} {c}",
    "{i}{a} {b} {c} {d}",
)


def _identifier(rng: random.Random) -> str:
    """A made-up name of 2-4 syllables in camelCase, PascalCase or snake_case, sometimes with digits."""
    syllables = [
        rng.choice(_SYLLABLE_ONSETS) + rng.choice(_SYLLABLE_VOWELS) + rng.choice(_SYLLABLE_CODAS)
        for _ in range(rng.randint(2, 4))
    ]
    style = rng.random()
    if style < 0.55:
        name = syllables[0] + "".join(s.capitalize() for s in syllables[1:])
    elif style < 0.9:
        name = "".join(s.capitalize() for s in syllables)
    else:
        name = "_".join(syllables)
    return name + (str(rng.randrange(100)) if rng.random() < 0.1 else "")


def _write_identifiers(writer: _CorpusWriter, size_bytes: int, seed: int) -> None:
    """Write code-like text of at most ``size_bytes`` bytes (see :func:`identifiers`)."""
    rng = random.Random(seed)
    while True:
        names: list[str] = []  # a document reuses some of its own names, as code does
        lines = []
        for _ in range(rng.randint(20, 80)):
            fresh = [
                rng.choice(names) if names and rng.random() < 0.1 else _identifier(rng) for _ in range(4)
            ]
            names.extend(fresh)
            a, b, c, d = fresh
            indent = " " * rng.choice((0, 4, 4, 8, 8, 12))
            shape = rng.choice(_LINE_SHAPES)
            lines.append(
                shape.format(i=indent, a=a, b=b, c=c, d=d, k=rng.choice(_KEYWORDS), n=rng.randrange(1000))
            )
        encoded = "\n".join(lines).encode("ascii")
        if writer.size + writer.cost(encoded) > size_bytes:
            return
        writer.write(encoded)


def identifiers(size_bytes: int = 6_800_000, *, seed: int = 0, cache_dir: Path | None = None) -> Path:
    """Return a corpus of code-like lines of made-up identifiers (rare pre-tokens), ``size_bytes`` or less.

    Each line has one of a few shapes (an assignment, a call, a loop head, a comment) filled with keywords,
    numbers and four names of 2-4 random syllables in camelCase, PascalCase or (a tenth) snake_case; a
    tenth of the names end in digits, and a tenth repeat one used earlier in the same document. Almost
    every name is new, so most unique pre-tokens occur once or twice (6.8 MB hold 1.19 million pre-tokens,
    366,000 of them unique, under the gpt2 pattern): the merge loop's tables are large and its counts
    small, the opposite of natural text. Documents are 20-80 lines joined by ``<|endoftext|>``; the
    output is ASCII and depends only on the arguments.

    Args:
        size_bytes: The maximum size in bytes (reached to within one document).
        seed: Seed of the random generator.
        cache_dir: Where to cache the corpus; defaults to ``<repo root>/bench/.cache``.

    Returns:
        The path of the cached corpus.
    """
    if size_bytes <= 0:
        raise ValueError(f"size_bytes must be positive, got {size_bytes}")
    name = f"identifiers-v{_FORMAT_VERSION}-seed{seed}-{size_bytes}.txt"

    def build(writer: _CorpusWriter) -> dict[str, Any]:
        _write_identifiers(writer, size_bytes, seed)
        return {"kind": "identifiers", "target_bytes": size_bytes, "seed": seed}

    return _cached(Path(cache_dir or DEFAULT_CACHE_DIR) / name, build)


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def install_packages() -> int:
    """Install :data:`DEBIAN_PACKAGES` with apt-get (through sudo when not root).

    Returns:
        The exit status of apt-get.
    """
    sudo = ["sudo"] if os.geteuid() != 0 and shutil.which("sudo") else []
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print("+", " ".join([*sudo, *INSTALL_COMMAND]), flush=True)
    status = subprocess.run([*sudo, *INSTALL_COMMAND], env=env, check=False).returncode
    if status != 0:
        # A fresh container has no package lists yet: fetch them once and retry.
        print("+", " ".join([*sudo, "apt-get", "update"]), flush=True)
        subprocess.run([*sudo, "apt-get", "update"], env=env, check=False)
        status = subprocess.run([*sudo, *INSTALL_COMMAND], env=env, check=False).returncode
    return status


def _timed(label: str, build: Callable[[], Path]) -> tuple[str, Path, float]:
    start = time.perf_counter()
    path = build()
    return label, path, time.perf_counter() - start


def _print_table(rows: list[tuple[str, Path, float]]) -> None:
    """Print name, path, size, document count and build time of each corpus."""
    header = f"{'name':<16} {'size MB':>9} {'documents':>10} {'build s':>8} {'this run s':>10}  path"
    print(header)
    print("-" * len(header))
    for label, path, elapsed in rows:
        stats = read_stats(path)
        print(
            f"{label:<16} {stats['bytes'] / 1e6:>9.2f} {stats['documents']:>10,} "
            f"{stats['build_seconds']:>8.1f} {elapsed:>10.1f}  {path}"
        )
        if stats.get("exhausted"):
            print(f"  note: all sources hold only {stats['bytes'] / 1e6:.1f} MB, less than the target")


def _print_sources(path: Path) -> None:
    """Print how many bytes and documents each Debian source contributed to a natural corpus."""
    for name, source in read_stats(path)["sources"].items():
        size_mb = source["bytes"] / 1e6
        print(f"  {name:<18} {source['package']:<20} {size_mb:>8.2f} MB {source['documents']:>9,} docs")


def main(argv: list[str] | None = None) -> int:
    """Build the corpora asked for on the command line and print a summary table.

    Args:
        argv: Command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The process exit status.
    """
    parser = argparse.ArgumentParser(description="Build the BPE Studio benchmark corpora.")
    parser.add_argument("--install", action="store_true", help="install the Debian packages first")
    parser.add_argument("--natural", action="store_true", help="build the natural-English corpus")
    parser.add_argument("--natural-mb", type=float, default=100, help="its size in MB (default 100)")
    parser.add_argument(
        "--synthetic",
        type=float,
        nargs="+",
        default=[],
        metavar="SIZE_MB",
        help="build synthetic corpora of these sizes in MB (1 MB = 10^6 bytes)",
    )
    parser.add_argument(
        "--chinese", type=float, metavar="SIZE_MB", help="build the Chinese-text corpus (2.3)"
    )
    parser.add_argument(
        "--identifiers", type=float, metavar="SIZE_MB", help="build the made-up-identifiers corpus (6.8)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpora")
    parser.add_argument("--vocab", type=int, default=50_000, help="vocabulary of the synthetic corpora")
    parser.add_argument("--cache-dir", type=Path, default=None, help=f"default: {DEFAULT_CACHE_DIR}")
    args = parser.parse_args(argv)
    if not (args.install or args.natural or args.synthetic or args.chinese or args.identifiers):
        parser.print_help()
        return 2
    if args.install and (status := install_packages()) != 0:
        return status

    rows = []
    if args.natural:
        target = round(args.natural_mb * 1e6)
        try:
            rows.append(_timed("natural", functools.partial(natural, target, cache_dir=args.cache_dir)))
        except MissingPackageError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    for size_mb in args.synthetic:
        build = functools.partial(
            synthetic, round(size_mb * 1e6), seed=args.seed, vocab=args.vocab, cache_dir=args.cache_dir
        )
        rows.append(_timed(f"synthetic-{size_mb:g}MB", build))
    if args.chinese:
        build_chinese = functools.partial(
            chinese, round(args.chinese * 1e6), seed=args.seed, cache_dir=args.cache_dir
        )
        rows.append(_timed(f"chinese-{args.chinese:g}MB", build_chinese))
    if args.identifiers:
        build_identifiers = functools.partial(
            identifiers, round(args.identifiers * 1e6), seed=args.seed, cache_dir=args.cache_dir
        )
        rows.append(_timed(f"identifiers-{args.identifiers:g}MB", build_identifiers))
    if rows:
        _print_table(rows)
    if args.natural:
        print("\nnatural corpus by source:")
        _print_sources(rows[0][1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
