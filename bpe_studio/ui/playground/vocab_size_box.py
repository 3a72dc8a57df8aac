"""The playground's "Vocab size" box: a slider that cuts the tokenizer to its first merges, and the curve.

The slider moves on the same log scale as the curve's vocab-size axis: its position is the log of the
vocab size (see :func:`slider_steps`), so a position lines up with the curve's x. The box keeps the number
of merges in use (0: bytes only, all of them: the whole tokenizer); the arrow keys step it by one merge,
so every cut is reachable at either end. The label says what vocab size that is, and the plot shows how
many tokens the text needs at every size. The playground computes the curve (on a worker thread) and
hands it to :meth:`VocabSizeBox.show_curve`.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractSlider,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ..present.token_layout import Curve
from ..present.tokenizer_info import LoadedTokenizer
from ..widgets.token_charts import VocabCurvePlot

#: Slider positions at the least (a tokenizer with very few merges still slides smoothly).
MIN_STEPS = 100
#: Page Up / Page Down move this share of the log axis.
PAGE_SHARE = 0.05


def slider_steps(low: int, high: int) -> int:
    """Slider positions for vocab sizes ``low`` to ``high`` on a log scale, fine enough that every size
    has a position of its own (the gap between sizes n and n+1 is about 1/n of a unit of log).

    Example:
        >>> slider_steps(256, 256), slider_steps(257, 300), slider_steps(256, 50_257)
        (0, 100, 265349)
    """
    if high <= low:
        return 0
    return max(MIN_STEPS, math.ceil((high + 1) * math.log(high / low)))


def position_of(size: int, low: int, high: int, steps: int) -> int:
    """The slider position of a vocab size: its log's share of the way from ``low`` to ``high``.

    Example:
        >>> [position_of(size, 256, 65536, 800) for size in (256, 4096, 65536)]
        [0, 400, 800]
    """
    if steps <= 0 or high <= low:
        return 0
    share = math.log(max(size, low) / low) / math.log(high / low)
    return max(0, min(steps, round(share * steps)))


def size_at(position: int, low: int, high: int, steps: int) -> int:
    """The vocab size at a slider position (the inverse of :func:`position_of`, rounded).

    Example:
        >>> size_at(400, 256, 65536, 800)
        4096
    """
    if steps <= 0 or high <= low:
        return high
    return max(low, min(high, round(low * math.exp(math.log(high / low) * position / steps))))


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
        self._merges = 0  # the merges in use; the slider shows the log of their vocab size
        self._low = self._high = 256  # the vocab sizes at the slider's ends
        layout = QVBoxLayout(self)
        slider_row = QHBoxLayout()
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setToolTip(
            "Use only the first merges: the tokenizer a training run would have given at that size. "
            "The slider follows the curve's log scale; the arrow keys step one merge."
        )
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.slider.valueChanged.connect(self._on_slider_changed)
        self.slider.actionTriggered.connect(self._on_slider_action)
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
        self.curve_plot.setMinimumHeight(120)  # 180 kept the window taller than 640 px (issue 21)
        self.curve_plot.setToolTip("Tokens in the text at each vocab size; click to use that size")
        self.curve_plot.vocab_size_clicked.connect(self._on_curve_plot_clicked)
        layout.addWidget(self.curve_plot, 1)

    @property
    def merges(self) -> int:
        """How many merges the tokenizer in use has (the slider shows their vocab size)."""
        return self._merges

    def position_for(self, merges: int) -> int:
        """The slider position of the cut to the first ``merges`` merges."""
        if self.loaded is None:
            return 0
        size = self.loaded.index.vocab_size_at(max(0, merges))
        return position_of(size, self._low, self._high, self.slider.maximum())

    def merges_at(self, position: int) -> int:
        """The cut at a slider position: the fewest merges that reach its vocab size."""
        if self.loaded is None:
            return 0
        index = self.loaded.index
        if position >= self.slider.maximum():
            return index.merge_count
        return index.merges_for_vocab_size(size_at(position, self._low, self._high, self.slider.maximum()))

    def set_merges(self, merges: int) -> None:
        """Use the first ``merges`` merges (the slider moves to their vocab size); emits merges_changed."""
        total = self.loaded.index.merge_count if self.loaded is not None else 0
        merges = max(0, min(total, merges))
        position = self.position_for(merges)
        changed = merges != self._merges
        self._merges = merges
        if position != self.slider.value():
            self.slider.blockSignals(True)
            self.slider.setValue(position)
            self.slider.blockSignals(False)
        if changed:
            self.update_label()
            self.merges_changed.emit(merges)

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Show a tokenizer's range of sizes (None: none), at its full size, without a curve."""
        self.loaded = loaded
        self.curve = None
        self.curve_plot.set_curve(None, None)
        self.slider.blockSignals(True)
        if loaded is None:
            self.slider.setRange(0, 0)
            self._merges = 0
        else:
            index = loaded.index
            self._low, self._high = index.vocab_size_at(0), index.vocab_size_at(index.merge_count)
            steps = slider_steps(self._low, self._high)
            self.slider.setRange(0, steps)
            self.slider.setValue(steps)
            self._merges = index.merge_count
            self.slider.setPageStep(max(1, round(steps * PAGE_SHARE)))
            # The arrow keys step one merge (see _on_slider_action); this is the mouse wheel's step.
            self.slider.setSingleStep(max(1, steps // 200))
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
    def _on_slider_changed(self, position: int) -> None:
        if position == self.position_for(self._merges):
            return  # (set by an arrow key: several cuts can share a vocab size, hence a position)
        merges = self.merges_at(position)
        if merges != self._merges:
            self._merges = merges
            self.update_label()
            self.merges_changed.emit(merges)

    @Slot(int)
    def _on_slider_action(self, action: int) -> None:
        """The arrow keys step one merge (on the log scale a position is many merges at the top end, and
        a merge many positions at the bottom, so a fixed step in positions would skip or stall)."""
        step = {
            QAbstractSlider.SliderAction.SliderSingleStepAdd.value: 1,
            QAbstractSlider.SliderAction.SliderSingleStepSub.value: -1,
        }.get(action)
        if step is None or self.loaded is None:
            return
        # Called before the slider takes its new position: put it where the next merge is, instead.
        total = self.loaded.index.merge_count
        merges = max(0, min(total, self._merges + step))
        self.slider.setSliderPosition(self.position_for(merges))
        if merges != self._merges:
            self._merges = merges  # (a cut of the same vocab size as the last is at the same position)
            self.update_label()
            self.merges_changed.emit(merges)

    @Slot()
    def _on_full_button_clicked(self) -> None:
        if self.loaded is not None:
            self.set_merges(self.loaded.index.merge_count)

    @Slot(int)
    def _on_curve_plot_clicked(self, vocab_size: int) -> None:
        if self.loaded is not None:
            self.set_merges(self.loaded.index.merges_for_vocab_size(vocab_size))


__all__ = ["VocabSizeBox", "position_of", "size_at", "slider_steps"]
