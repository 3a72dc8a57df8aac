"""The playground's vocab-size slider moves on the curve's log scale, and the keyboard reaches every cut."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from bpe_studio.engine import Tokenizer
from bpe_studio.ui.playground.vocab_size_box import VocabSizeBox, position_of, size_at, slider_steps
from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer

from .tokenizer_helpers import duplicate_merge_tokenizer


def wide_tokenizer(second_bytes: int) -> LoadedTokenizer:
    """A tokenizer of 256 * ``second_bytes`` merges, each making a new two-byte token (no training needed)."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for first in range(256):
        for second in range(second_bytes):
            vocab[len(vocab)] = bytes([first, second])
            merges.append((bytes([first]), bytes([second])))
    return LoadedTokenizer(Tokenizer(vocab, merges, {}, pattern=r"\S+|\s+"), "wide")


def _box(qtbot, loaded: LoadedTokenizer) -> VocabSizeBox:  # type: ignore[no-untyped-def]
    box = VocabSizeBox()
    qtbot.addWidget(box)
    box.set_tokenizer(loaded)
    box.show()
    return box


@given(
    low=st.integers(256, 5_000),
    span=st.integers(1, 300_000),
    share=st.floats(0.0, 1.0),
)
def test_every_vocab_size_has_its_own_position(low: int, span: int, share: float) -> None:
    high = low + span
    steps = slider_steps(low, high)
    size = low + round(share * span)
    position = position_of(size, low, high, steps)
    assert size_at(position, low, high, steps) == size
    # The position is the size's log, as the curve's x axis.
    assert abs(position / steps - math.log(size / low) / math.log(high / low)) <= 1 / steps


def test_slider_positions_line_up_with_the_curves_log_axis(qtbot) -> None:  # type: ignore[no-untyped-def]
    loaded = wide_tokenizer(16)
    index = loaded.index
    low, high = index.vocab_size_at(0), index.vocab_size_at(index.merge_count)
    box = _box(qtbot, loaded)
    slider = box.slider
    assert box.merges == index.merge_count and slider.value() == slider.maximum()
    moved: list[int] = []
    box.merges_changed.connect(moved.append)
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        slider.setValue(round(share * slider.maximum()))  # as a drag does
        size = index.vocab_size_at(box.merges)
        # Halfway along the slider is halfway along the log axis (sqrt(low * high)), not half the merges.
        assert math.log(size / low) / math.log(high / low) == pytest.approx(share, abs=1e-3)
        # The curve's marker is at that size (the plot's x is log10 of the vocab size).
        assert box.curve_plot.line.value() == pytest.approx(math.log10(size))
        assert f"<b>{size:,}</b> tokens" in box.label.text()
    assert moved[-1] == index.merge_count and box.merges == index.merge_count


def test_keys_reach_every_cut_and_page_on_the_log_scale(qtbot) -> None:  # type: ignore[no-untyped-def]
    loaded = wide_tokenizer(2)
    total = loaded.index.merge_count
    box = _box(qtbot, loaded)
    slider = box.slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_Home)
    assert box.merges == 0 and slider.value() == 0
    seen = []
    for _ in range(total + 1):  # one more than needed: the end stops it
        qtbot.keyClick(slider, Qt.Key.Key_Right)
        seen.append(box.merges)
    assert seen == [*range(1, total + 1), total]
    assert slider.value() == slider.maximum()
    qtbot.keyClick(slider, Qt.Key.Key_Left)
    assert box.merges == total - 1
    qtbot.keyClick(slider, Qt.Key.Key_End)
    assert box.merges == total
    # Page Up / Page Down move 5% of the log axis.
    qtbot.keyClick(slider, Qt.Key.Key_Home)
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    assert slider.value() == slider.pageStep() == round(slider.maximum() * 0.05)
    assert box.merges == box.merges_at(slider.value()) > 0
    qtbot.keyClick(slider, Qt.Key.Key_PageDown)
    assert box.merges == 0


def test_arrow_keys_step_through_cuts_of_the_same_size(qtbot) -> None:  # type: ignore[no-untyped-def]
    # Merge 4 makes no new token: cuts 3 and 4 have the same vocab size, hence the same position.
    loaded = LoadedTokenizer(duplicate_merge_tokenizer(), "dup")
    box = _box(qtbot, loaded)
    slider = box.slider
    slider.setFocus()
    down = []
    for _ in range(5):
        qtbot.keyClick(slider, Qt.Key.Key_Left)
        down.append(box.merges)
    assert down == [4, 3, 2, 1, 0]
    up = []
    for _ in range(5):
        qtbot.keyClick(slider, Qt.Key.Key_Right)
        up.append(box.merges)
    assert up == [1, 2, 3, 4, 5]
    # "All merges" and the playground's set_merges move the slider to the size's position.
    box.set_merges(2)
    assert slider.value() == box.position_for(2) and box.merges == 2
    qtbot.mouseClick(box.full_button, Qt.MouseButton.LeftButton)
    assert box.merges == 5 and slider.value() == slider.maximum()
