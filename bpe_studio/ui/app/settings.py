"""The desktop app's settings: one JSON file in the platform's config folder.

Kept: the window geometry, the theme, the last training configuration, recent corpora and tokenizers, and
the workspace of the tokenizer views (:mod:`bpe_studio.ui.app.workspace`: the Playground text, the opened
tokenizers, the slider, the current tab).
The folder is ``platformdirs.user_config_dir("bpe-studio")``, or ``$BPE_STUDIO_CONFIG_DIR`` when set (the
tests use a temporary folder). A file that cannot be read or parsed is ignored with a warning in the log: the
app then starts from the defaults, and a wrongly typed entry falls back to its default alone. This module is
Qt-free.

Example:
    >>> settings = load_settings()
    >>> settings.add_recent_corpus("corpus.txt")
    >>> save_settings(settings)
    True
    >>> load_settings().recent_corpora == [os.path.abspath("corpus.txt")]  # kept as an absolute path
    True
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...engine.formats import atomic_write

log = logging.getLogger(__name__)

#: Environment variable that overrides the folder the settings file lives in.
CONFIG_DIR_ENV = "BPE_STUDIO_CONFIG_DIR"

#: The settings file's name inside the config folder.
SETTINGS_FILE = "settings.json"

#: How many recent corpora and tokenizers are remembered.
MAX_RECENT = 10

#: The app's theme choices (View ▸ Theme): follow the desktop's colour scheme, or force light or dark.
THEME_CHOICES = ("system", "light", "dark")

_VERSION = 1


def config_dir() -> Path:
    """The folder of the settings file: ``$BPE_STUDIO_CONFIG_DIR`` or the platform's user config folder."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir("bpe-studio", appauthor=False))


def settings_path() -> Path:
    """The settings file's path."""
    return config_dir() / SETTINGS_FILE


@dataclass
class TrainSettings:
    """The training form's values, as last used.

    Attributes:
        inputs: Corpus files.
        vocab_size: Final vocabulary size.
        special_tokens: Special tokens, in order.
        pattern: A preset name or a custom regex.
        workers: Worker processes; ``None`` for automatic.
        min_frequency: Stop when the best pair is rarer than this.
        cluster: Dask cluster to count on (``local:N`` or ``tcp://HOST:PORT``); empty for this machine.
        max_token_length: The longest token made, in bytes; ``None`` for no limit.
        chunk_size: Bytes per counting chunk.
        invalid_utf8: ``"error"`` or ``"replace"``.
        text_field: The field (column) of JSON Lines and Parquet records that holds the text.
        skip_bad_records: Skip records without a usable text instead of stopping.
        checkpoint_every: Merges between two checkpoints. (The files of a run, counts and checkpoints, are
            not kept: they belong to one run.)
        extend: The tokenizer the run starts from ("Start from": a path, or a name such as ``gpt2``);
            empty for the single bytes.
        superword_transition: Superwords after this vocabulary size (SuperBPE); 0 for none.
    """

    inputs: list[str] = field(default_factory=list)
    vocab_size: int = 10_000
    special_tokens: list[str] = field(default_factory=lambda: ["<|endoftext|>"])
    pattern: str = "gpt2"
    workers: int | None = None
    min_frequency: int = 1
    cluster: str = ""
    max_token_length: int | None = None
    chunk_size: int = 4 << 20
    invalid_utf8: str = "error"
    text_field: str = "text"
    skip_bad_records: bool = False
    checkpoint_every: int = 1000
    extend: str = ""
    superword_transition: int = 0


@dataclass
class Settings:
    """Everything the app remembers between sessions.

    Attributes:
        geometry: The main window's geometry (``QWidget.saveGeometry`` in base64), or empty.
        window_state: The main window's state (``QMainWindow.saveState`` in base64), or empty.
        train: The last training configuration.
        recent_corpora: Corpus files, most recent first.
        recent_tokenizers: Tokenizer files, most recent first.
        theme: One of :data:`THEME_CHOICES`.
        workspace: The tokenizer views as they were at the last quit (a workspace file's JSON object, see
            :mod:`bpe_studio.ui.app.workspace`), or empty.
    """

    geometry: str = ""
    window_state: str = ""
    train: TrainSettings = field(default_factory=TrainSettings)
    recent_corpora: list[str] = field(default_factory=list)
    recent_tokenizers: list[str] = field(default_factory=list)
    theme: str = "system"
    workspace: dict[str, Any] = field(default_factory=dict)

    def add_recent_corpus(self, path: str | os.PathLike[str]) -> None:
        """Put a corpus file first in the recent list."""
        self.recent_corpora = _push(self.recent_corpora, path)

    def add_recent_tokenizer(self, path: str | os.PathLike[str]) -> None:
        """Put a tokenizer file first in the recent list."""
        self.recent_tokenizers = _push(self.recent_tokenizers, path)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form of the settings."""
        return {"version": _VERSION, **asdict(self)}


def _push(items: list[str], path: str | os.PathLike[str]) -> list[str]:
    text = os.fspath(Path(path).absolute())
    return [text, *(item for item in items if item != text)][:MAX_RECENT]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# Per field: a check of the JSON value's type. A value that fails is replaced by the default, with a warning.
_TRAIN_CHECKS: dict[str, Callable[[Any], bool]] = {
    "inputs": _is_str_list,
    "vocab_size": lambda v: _is_int(v) and v > 0,
    "special_tokens": _is_str_list,
    "pattern": lambda v: isinstance(v, str) and v != "",
    "workers": lambda v: v is None or (_is_int(v) and v > 0),
    "min_frequency": lambda v: _is_int(v) and v > 0,
    "cluster": lambda v: isinstance(v, str),
    "max_token_length": lambda v: v is None or (_is_int(v) and v >= 2),
    "chunk_size": lambda v: _is_int(v) and v > 0,
    "invalid_utf8": lambda v: v in ("error", "replace"),
    "text_field": lambda v: isinstance(v, str) and v != "",
    "skip_bad_records": lambda v: isinstance(v, bool),
    "checkpoint_every": lambda v: _is_int(v) and v > 0,
    "extend": lambda v: isinstance(v, str),
    "superword_transition": lambda v: _is_int(v) and v >= 0,
}
_TOP_CHECKS: dict[str, Callable[[Any], bool]] = {
    "geometry": lambda v: isinstance(v, str),
    "window_state": lambda v: isinstance(v, str),
    "recent_corpora": _is_str_list,
    "recent_tokenizers": _is_str_list,
    "theme": lambda v: v in THEME_CHOICES,
    "workspace": lambda v: isinstance(v, dict),
}


def settings_from_json(document: Any, *, source: str = "settings") -> Settings:
    """Build settings from parsed JSON, keeping every valid entry and warning about the others."""
    settings = Settings()
    if not isinstance(document, dict):
        log.warning("%s: expected a JSON object; using the default settings", source)
        return settings
    for name, check in _TOP_CHECKS.items():
        if name in document:
            if check(document[name]):
                setattr(settings, name, document[name])
            else:
                log.warning("%s: ignoring %r (wrong type: %r)", source, name, document[name])
    settings.recent_corpora = settings.recent_corpora[:MAX_RECENT]
    settings.recent_tokenizers = settings.recent_tokenizers[:MAX_RECENT]
    train = document.get("train", {})
    if not isinstance(train, dict):
        log.warning("%s: ignoring 'train' (expected an object)", source)
        train = {}
    for name, check in _TRAIN_CHECKS.items():
        if name in train:
            if check(train[name]):
                setattr(settings.train, name, train[name])
            else:
                log.warning("%s: ignoring 'train.%s' (wrong type: %r)", source, name, train[name])
    return settings


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings file; a missing file gives the defaults, a corrupt one a warning and the defaults."""
    path = path or settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("%s: cannot read the settings (%s); using the defaults", path, exc)
        return Settings()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        log.warning("%s: the settings file is corrupt (%s); using the defaults", path, exc)
        return Settings()
    return settings_from_json(document, source=str(path))


def save_settings(settings: Settings, path: Path | None = None) -> bool:
    """Write the settings file atomically; returns False (with a warning) when it cannot be written."""
    path = path or settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(settings.to_json(), indent=1, ensure_ascii=False) + "\n")
    except OSError as exc:
        log.warning("%s: cannot save the settings (%s)", path, exc)
        return False
    return True


__all__ = [
    "CONFIG_DIR_ENV",
    "MAX_RECENT",
    "THEME_CHOICES",
    "Settings",
    "TrainSettings",
    "config_dir",
    "load_settings",
    "save_settings",
    "settings_from_json",
    "settings_path",
]
