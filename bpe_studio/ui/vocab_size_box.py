"""The playground's "Vocab size" box: a slider that cuts the tokenizer to its first merges, and the curve.

The slider's value is the number of merges in use (0: bytes only, the maximum: the whole tokenizer); the
label says what vocab size that is, and the plot shows how many tokens the text needs at every size.
The playground computes the curve (on a worker thread) and hands it to :meth:`VocabSizeBox.show_curve`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from .token_charts import VocabCurvePlot
from .tokenizer_info import Curve, LoadedTokenizer


class VocabSizeBox(QGroupBox):
    """The slider, "All merges" button, size label and curve plot.

    Signals:
        merges_changed(int): The user moved the slider (the number of merges in use).
    """

    merges_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Vocab size", parent)
        self.loaded: LoadedTokenizer | None = None
        self.curve: Curve | None = None
        layout = QVBoxLayout(self)
        slider_row = QHBoxLayout()
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setToolTip(
            "Use only the first merges: the tokenizer a training run would have given at that size"
        )
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.slider.valueChanged.connect(self._on_slider_changed)
        slider_row.addWidget(self.slider, 1)
        self.full_button = QPushButton("All merges", self)
        self.full_button.setToolTip("Use the whole tokenizer")
        self.full_button.clicked.connect(self._on_full_button_clicked)
        slider_row.addWidget(self.full_button)
        layout.addLayout(slider_row)
        self.label = QLabel(self)
        self.label.setObjectName("size")
        layout.addWidget(self.label)
        self.curve_plot = VocabCurvePlot(self)
        self.curve_plot.setMinimumHeight(180)
        self.curve_plot.setToolTip("Tokens in the text at each vocab size; click to use that size")
        self.curve_plot.vocab_size_clicked.connect(self._on_curve_plot_clicked)
        layout.addWidget(self.curve_plot, 1)

    @property
    def merges(self) -> int:
        """How many merges the tokenizer in use has (the slider's position)."""
        return self.slider.value()

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Show a tokenizer's range of sizes (None: none), at its full size, without a curve."""
        self.loaded = loaded
        self.curve = None
        self.curve_plot.set_curve(None, None)
        self.slider.blockSignals(True)
        if loaded is None:
            self.slider.setRange(0, 0)
        else:
            total = loaded.index.merge_count
            self.slider.setRange(0, total)
            self.slider.setValue(total)
            self.slider.setPageStep(max(1, total // 20))
            self.slider.setSingleStep(1)
        self.slider.blockSignals(False)
        for widget in (self.slider, self.full_button, self.curve_plot):
            widget.setEnabled(loaded is not None)
        self.update_label()

    def show_curve(self, curve: Curve | None, title: str) -> None:
        """Plot a curve of token count against vocab size (None or one with an error: no curve)."""
        self.curve = curve
        if curve is None or curve.error:
            self.curve_plot.set_curve(None, None)
        else:
            self.curve_plot.set_curve(curve.vocab_sizes, curve.counts)
        self.curve_plot.plot.setTitle(title, size="10pt")
        self.update_label()

    def update_label(self) -> None:
        """Say what vocab size the slider stands for, and mark it on the curve."""
        loaded = self.loaded
        if loaded is None:
            self.label.setText("Open a tokenizer to try smaller vocabularies.")
            self.curve_plot.set_current(256, None)
            return
        index = loaded.index
        merges = self.merges
        size = index.vocab_size_at(merges)
        total = index.merge_count
        shown = f"<b>{size:,}</b> tokens: the first {merges:,} of {total:,} merges"
        if merges >= total:
            shown = f"<b>{size:,}</b> tokens: all {total:,} merges"
        count = None
        if self.curve is not None and not self.curve.error and merges < len(self.curve.counts):
            count = int(self.curve.counts[merges])
        self.label.setText(shown)
        self.curve_plot.set_current(size, count)

    @Slot(int)
    def _on_slider_changed(self, value: int) -> None:
        self.update_label()
        self.merges_changed.emit(value)

    @Slot()
    def _on_full_button_clicked(self) -> None:
        self.slider.setValue(self.slider.maximum())

    @Slot(int)
    def _on_curve_plot_clicked(self, vocab_size: int) -> None:
        if self.loaded is not None:
            self.slider.setValue(self.loaded.index.merges_for_vocab_size(vocab_size))


__all__ = ["VocabSizeBox"]
