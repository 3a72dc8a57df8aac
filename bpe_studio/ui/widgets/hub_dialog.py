"""A small dialog that asks for a Hugging Face model id, listing the models in the local cache to pick from.

Opening resolves the id as the CLI does (:mod:`~bpe_studio.engine.formats.hub`); nothing is downloaded
unless the user ticks the box, and then within the same deadline as every download.

Example (``window`` the app's main window; the dialog waits for the user)::

    HubDialog.ask(window)  # HubAnswer('Qwen/Qwen2.5-7B', download=False), or None when cancelled
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from ...engine.formats.hub import cached_models, hub_cache_dir, is_model_id


@dataclass(frozen=True)
class HubAnswer:
    """What the user chose: a model id, and whether it may be downloaded when it is not cached."""

    model_id: str
    download: bool


class HubDialog(QDialog):
    """*File ▸ Open from Hugging Face…*: a model id field (listing the cached models) and a download box."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open from Hugging Face")
        layout = QVBoxLayout(self)
        cached = cached_models()
        where = hub_cache_dir()
        layout.addWidget(
            QLabel(
                f"A model id, ORG/NAME. The {len(cached)} model(s) with a tokenizer in the cache {where} "
                "are listed."
                if cached
                else f"A model id, ORG/NAME. No model with a tokenizer is in the cache {where} yet."
            )
        )
        self.model_box = QComboBox(self)
        self.model_box.setEditable(True)
        self.model_box.addItems(cached)
        self.model_box.setCurrentText(cached[0] if cached else "")
        layout.addWidget(self.model_box)
        self.download_box = QCheckBox("Download its tokenizer files if they are not in the cache", self)
        self.download_box.setToolTip(
            "Only tokenizer.json and tokenizer_config.json (or tekken.json), with HF_TOKEN if set"
        )
        layout.addWidget(self.download_box)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.model_box.editTextChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        ok.setEnabled(is_model_id(self.model_id()))

    def model_id(self) -> str:
        """The model id as typed or picked, without surrounding spaces."""
        return self.model_box.currentText().strip()

    def answer(self) -> HubAnswer:
        """The model id and the download box."""
        return HubAnswer(self.model_id(), self.download_box.isChecked())

    @classmethod
    def ask(cls, parent: QWidget | None) -> HubAnswer | None:
        """Show the dialog and wait; the answer, or None when cancelled."""
        dialog = cls(parent)
        return dialog.answer() if dialog.exec() == QDialog.DialogCode.Accepted else None
