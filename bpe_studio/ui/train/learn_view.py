"""Watch BPE learn: a sample text re-tokenized live with the merges made so far, its token count falling on a
small chart beside it; after the run, the same view replays the run merge by merge.

The view follows a :class:`~bpe_studio.ui.train.view.TrainView` (any object with its ``runner.progress``,
``training_started`` and ``training_ended`` signals and ``result_config``): it keeps the merges' pairs from
the progress batches and, from its own timer (every :data:`TICK_MS`, never per merge), applies the new ones
to a :class:`~bpe_studio.engine.training.learn.MergeReplay` of the sample and redraws, at most every
:data:`LIVE_INTERVAL` seconds while a run goes on: the GUI thread shares the GIL with the merge loop.

The sample is drawn from the first corpus file (one of its documents, cut at a line) unless the user typed
their own (Edit text). Once the run is over, Play replays it from the start at the chosen speed; the
slider, Step back and Step forward go to any merge.

Example (``train_view`` the app's Train view)::

    view = LearnView(train_view)
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ...engine import MergeMade, TrainConfig
from ...engine.corpus.sources import head_documents, is_plain_text
from ...engine.training.learn import MergeReplay, Pair, is_superword, replay_to, sample_passage
from ..app.style import theme_of
from ..present.replay_scale import (
    LOG_PACE,
    REPLAY_SECONDS,
    SLIDER_STEPS,
    replay_target,
    slider_merges,
    slider_position,
)
from ..present.token_format import palette_for, text_label, token_label
from ..widgets.token_charts import style_plot
from .charts import COUNT_COLOR, TRANSITION_COLOR, TRANSITION_TIP, LogAxis

#: How often the view applies new merges and redraws (milliseconds).
TICK_MS = 50
#: Shortest time between two redraws while a run goes on (seconds).
LIVE_INTERVAL = 0.3
#: Characters of corpus text read to draw a sample from, and the sample's length.
READ_CHARS = 300_000
SAMPLE_CHARS = 700
#: Replay speeds, merges per second (after the default, :data:`LOG_PACE`: a whole run in 30 s).
SPEEDS = (10, 100, 1_000, 10_000)
#: The sample shown before any run.
WELCOME_TEXT = (
    "Byte-pair encoding starts from single bytes and merges the most frequent pair, again and again. "
    "Start a training run to watch this text split into fewer, longer tokens as the merges are made."
)


class LearnView(QWidget):
    """A sample text re-tokenized with the merges made so far, with its token count on a chart.

    Signals:
        advanced(int): The view now shows the sample with this many merges (after a tick that applied
            merges, a step, or a replay frame).

    Args:
        train_view: The Train view to follow (see the module's docstring); None to feed the view by hand
            with :meth:`start_run`, :meth:`add_merges` and :meth:`end_run`.
        parent: The parent widget.
    """

    advanced = Signal(int)

    def __init__(self, train_view: Any | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("learn_view")
        policy = self.sizePolicy()
        policy.setVerticalStretch(4)
        self.setSizePolicy(policy)
        self._pattern = "gpt2"
        self._specials: tuple[str, ...] = ()
        # Of a superword run: the merges before its transition (the sample is cut into superwords after).
        self._superword_after: int | None = None
        # Of an extend run: the tokenizer's own merges, which the replay starts from (not the bytes).
        self._first_merge = 0
        self._inputs: tuple[Path, ...] = ()
        self._text_field = "text"
        self._merges: list[Pair] = []
        self._live = False
        self._user_text = False  # the user typed the sample: keep it across runs
        self._pick = 0
        self._replay = MergeReplay(WELCOME_TEXT, pattern=self._pattern)
        self._full_history: list[tuple[int, int]] | None = None  # the whole run's curve, once it ended
        self._shown: tuple[int, int] | None = None  # (merges applied, sample version) drawn
        self._text_shown: tuple[int, int] | None = None  # (token count, sample version) the text shows
        self._version = 0  # counts the samples (a new text, or the same text replayed afresh)
        self._due = 0.0  # when the next redraw may be, while a run goes on (perf_counter seconds)
        self._play_from = 0.0  # perf_counter when playing started, and the merge it started at
        self._play_start_merge = 0
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)  # keeps its offset from the charts' (start_run)
        self.timer.timeout.connect(self._on_timer_timeout)
        self._render(force=True)
        self._update_controls()
        if train_view is not None:
            train_view.runner.progress.connect(self._on_progress)
            train_view.training_started.connect(lambda: self.start_run(train_view.result_config))
            train_view.training_ended.connect(lambda _ended: self.end_run())

    # ---- layout ----------------------------------------------------------------------------------

    def _build(self) -> None:
        palette = self.palette()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        header = QHBoxLayout()
        title = QLabel("<b>Watch BPE learn</b>", self)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("learn_count")
        # On a line of its own under the buttons: beside them it was cut short ("1.21 chars/toke").
        self.count_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.back_button = QPushButton("◀ Step", self)
        self.back_button.setToolTip("Undo the last merge (replay)")
        self.back_button.clicked.connect(lambda: self.go_to(self._replay.merges_applied - 1))
        self.play_button = QPushButton("▶ Replay", self)
        self.play_button.setCheckable(True)
        self.play_button.setToolTip("Replay the run merge by merge from the start (or from the slider)")
        self.play_button.toggled.connect(self._on_play_toggled)
        self.step_button = QPushButton("Step ▶", self)
        self.step_button.setToolTip("Make the next merge (replay)")
        self.step_button.clicked.connect(lambda: self.go_to(self._replay.merges_applied + 1))
        self.speed_combo = QComboBox(self)
        # The default follows the chart's log scale: the first merges slowly, the last thousands quickly,
        # any run in the same time (at a fixed 100 merges/s a 65,279-merge run took 11 minutes).
        self.speed_combo.addItem(f"Whole run in {REPLAY_SECONDS:.0f} s", LOG_PACE)
        for speed in SPEEDS:
            self.speed_combo.addItem(f"{speed:,} merges/s", speed)
        self.speed_combo.setCurrentIndex(0)
        self.speed_combo.setToolTip("Replay speed")
        self.speed_combo.currentIndexChanged.connect(self._on_speed_changed)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        # Log scale, as the chart: the first merges, which change the sample most, get their share of it.
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setPageStep(SLIDER_STEPS // 20)
        self.slider.setToolTip("Go to a merge (log scale, as the chart)")
        self.slider.valueChanged.connect(self._on_slider_moved)
        self.sample_button = QPushButton("New sample", self)
        self.sample_button.setToolTip("Another passage of the corpus")
        self.sample_button.clicked.connect(self._on_sample_button_clicked)
        self.edit_button = QPushButton("Edit text", self)
        self.edit_button.setCheckable(True)
        self.edit_button.setToolTip("Type your own sample text")
        self.edit_button.toggled.connect(self._on_edit_toggled)
        # The title beside the count, the controls on their own line: on one line with the title they kept
        # the window from being narrower than 1150 px (issue 21).
        title_row = QHBoxLayout()
        title_row.addWidget(title)
        title_row.addWidget(self.count_label, 1)
        for widget in (
            self.back_button,
            self.play_button,
            self.step_button,
            self.speed_combo,
            self.slider,
            self.sample_button,
            self.edit_button,
        ):
            header.addWidget(widget)
        self.slider.setMinimumWidth(60)
        header.setStretchFactor(self.slider, 1)  # the slider takes the room left over
        layout.addLayout(title_row)
        layout.addLayout(header)

        body = QHBoxLayout()
        self.stack = QStackedWidget(self)
        self.tokens_view = QTextEdit(self.stack)
        self.tokens_view.setReadOnly(True)
        self.tokens_view.setObjectName("learn_tokens")
        self.editor = QPlainTextEdit(self.stack)
        self.editor.setPlaceholderText("Type or paste a text to watch")
        self.stack.addWidget(self.tokens_view)
        self.stack.addWidget(self.editor)
        body.addWidget(self.stack, 1)

        # Log scale: the count falls most in the first few hundred merges (x is merges + 1: 0 merges at 1).
        self.plot_widget = pg.PlotWidget(self, axisItems={"bottom": LogAxis("bottom")})
        self.plot_widget.setBackground(palette.color(QPalette.ColorRole.Base))
        self.plot: pg.PlotItem = self.plot_widget.getPlotItem()
        # No axis titles: the chart is short at 1024×640 and its plot area went to them; the tooltip says it.
        style_plot(self.plot, "", "", "", palette.color(QPalette.ColorRole.Text))
        self.plot_widget.setToolTip("Tokens in the sample (up) against merges made (across, log scale)")
        self.plot.setTitle(None)  # an empty title still takes a line
        for name in ("left", "bottom"):
            self.plot.getAxis(name).showLabel(False)
        self.plot.setLogMode(x=True, y=False)
        self.plot.showGrid(x=False, y=False)
        self.plot.vb.setMouseEnabled(x=False, y=False)
        self.curve: pg.PlotDataItem = self.plot.plot(pen=pg.mkPen(COUNT_COLOR, width=2))
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#D55E00", width=1))
        self.plot.addItem(self.marker, ignoreBounds=True)
        # A superword run's transition (as on the training charts): where the sample is cut into superwords.
        self.transition_mark = pg.InfiniteLine(
            angle=90, movable=False, pen=pg.mkPen(TRANSITION_COLOR, width=1, style=Qt.PenStyle.DashLine)
        )
        self.transition_mark.setToolTip(TRANSITION_TIP)
        self.plot.addItem(self.transition_mark, ignoreBounds=True)
        self.transition_mark.hide()
        self.plot_widget.setFixedWidth(240)
        self.plot_widget.setMinimumHeight(80)
        self.plot_widget.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        body.addWidget(self.plot_widget)
        layout.addLayout(body, 1)
        self.apply_theme()

    def apply_theme(self) -> None:
        """Colour the chart in the theme of this widget's palette (again whenever the palette changes)."""
        theme = theme_of(self)
        foreground = QColor(theme.text)
        self.plot_widget.setBackground(QColor(theme.base))
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTextPen(foreground)
            axis.setPen(pg.mkPen(foreground, width=1))
        self.curve.setPen(pg.mkPen(theme.chart_count, width=2))
        self.marker.setPen(pg.mkPen(theme.chart_current, width=1))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow a change of theme (the app's palette): the chart, and the tokens' colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "curve"):
            self.apply_theme()
            self._text_shown = None
            self._shown = None
            self._render(force=True)

    # ---- feeding ---------------------------------------------------------------------------------

    @property
    def merges_applied(self) -> int:
        """How many merges the shown tokens have."""
        return self._replay.merges_applied

    @property
    def token_count(self) -> int:
        """How many tokens the sample has now."""
        return self._replay.token_count

    @property
    def sample_text(self) -> str:
        """The sample text."""
        return self._replay.text

    def start_run(self, config: TrainConfig | None) -> None:
        """A run starts: forget the last one's merges and draw a sample from its corpus (unless the user
        typed one)."""
        self.play_button.setChecked(False)
        self._merges = []
        self._full_history = None
        self._live = True
        self._first_merge = 0
        if config is not None:
            if config.extend is not None:
                self._merges = list(config.extend.merges)
                self._first_merge = len(self._merges)
            self._pattern = config.pattern
            self._specials = tuple(config.special_tokens)
            transition = config.superword_transition
            self._superword_after = (
                None if transition is None else transition - 256 - len(config.special_tokens)
            )
            if self._superword_after is None:
                self.transition_mark.hide()
            else:  # (log10 units: the chart's x is merges + 1)
                self.transition_mark.setValue(math.log10(self._superword_after + 1))
                self.transition_mark.show()
            self._text_field = config.text_field
            self._inputs = tuple(Path(p) for p in config.inputs)
        text = self._replay.text if self._user_text else self._draw_sample()
        # Drawn on the first tick, not now: the run's start keeps the GUI thread busy enough.
        self._due = time.perf_counter() + TICK_MS / 1000
        self._restart(text, draw_now=False)
        # Half a tick after the training charts' timer (same interval, started with the run): the sample's
        # rich text and the charts are then redrawn in different turns of the event loop, never in one
        # (together they made the longest stalls of the GUI thread in bench/gui.py).
        QTimer.singleShot(TICK_MS // 2, self._start_live_ticks)
        self._update_controls()

    @Slot()
    def _start_live_ticks(self) -> None:
        if self._live:  # (a run may end within half a tick)
            self.timer.start()

    def add_merges(self, pairs: Sequence[Pair]) -> None:
        """The run made these merges (applied on the next tick)."""
        self._merges.extend(pairs)

    def end_run(self) -> None:
        """The run ended: the replay controls come alive; the chart shows the whole run."""
        self._live = False
        self._replay.apply(self._merges[self._replay.merges_applied :])
        self._full_history = list(self._replay.history)
        self._render(force=True)
        self._update_controls()
        if not self.play_button.isChecked():
            self.timer.stop()

    def clear_run(self) -> None:
        """Forget the last run (a failed one, once the corpus changed): its sample and merges go, the
        welcome text (or the user's own) comes back."""
        self.play_button.setChecked(False)
        self.timer.stop()
        self._live = False
        self._merges = []
        self._first_merge = 0
        self.transition_mark.hide()
        self._full_history = None
        self._inputs = ()
        self._restart(self._replay.text if self._user_text else WELCOME_TEXT)
        self._update_controls()

    @Slot(object)
    def _on_progress(self, events: list[object]) -> None:
        self._merges.extend(e.pair for e in events if type(e) is MergeMade)

    def set_sample(self, text: str) -> None:
        """Watch this text (as if the user typed it): re-tokenized with the merges so far."""
        self._user_text = True
        self._restart(text, keep=self._replay.merges_applied)

    # ---- replay ----------------------------------------------------------------------------------

    def replay(self, *, speed: int) -> None:
        """Replay the last run from its first merge at ``speed`` merges per second (one of :data:`SPEEDS`,
        or :data:`~bpe_studio.ui.present.replay_scale.LOG_PACE`)."""
        self.speed_combo.setCurrentIndex(self.speed_combo.findData(speed))
        self.play_button.setChecked(False)
        self.go_to(len(self._merges))  # at the end, Replay starts from the first merge
        self.play_button.setChecked(True)

    def go_to(self, merges: int) -> None:
        """Show the sample with the first ``merges`` merges of the run (clamped to those known)."""
        merges = max(0, min(merges, len(self._merges)))
        if merges >= self._replay.merges_applied:
            self._replay.apply(self._merges[self._replay.merges_applied : merges])
        else:  # back: replaying from the start is cheap (a dictionary look-up per merge)
            self._replay = replay_to(
                self._replay.text,
                self._merges,
                merges,
                pattern=self._pattern,
                special_tokens=self._specials,
                superword_after=self._superword_after,
            )
        self._render(force=True)

    def _restart(self, text: str, *, keep: int | None = None, draw_now: bool = True) -> None:
        self._version += 1
        self._replay = MergeReplay(
            text, pattern=self._pattern, special_tokens=self._specials, superword_after=self._superword_after
        )
        if keep:
            self._replay.apply(self._merges[:keep])
        if self._full_history is not None:
            self._full_history = replay_to(
                text,
                self._merges,
                len(self._merges),
                pattern=self._pattern,
                special_tokens=self._specials,
                superword_after=self._superword_after,
            ).history
        self._render(force=draw_now)

    def _draw_sample(self) -> str:
        if not self._inputs:
            return WELCOME_TEXT
        path = self._inputs[0]
        specials = self._specials
        try:
            if is_plain_text(path):
                with open(path, encoding="utf-8", errors="replace") as file:
                    data = file.read(READ_CHARS)
            else:  # JSON Lines, Parquet or compressed: its first documents, as the preview reads them
                documents = head_documents(path, text_field=self._text_field, count=40, max_bytes=READ_CHARS)
                data = (specials[0] if specials else "\n\n").join(documents)
                if not specials:  # one document per passage anyway
                    specials = ("\n\n",)
        except (OSError, ValueError):  # unreadable, corrupt, a package missing: the welcome text then
            return WELCOME_TEXT
        return sample_passage(data, special_tokens=specials, length=SAMPLE_CHARS, pick=self._pick) or (
            WELCOME_TEXT
        )

    # ---- slots -----------------------------------------------------------------------------------

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self.play_button.isChecked():
            speed = int(self.speed_combo.currentData())
            elapsed = time.perf_counter() - self._play_from
            target = replay_target(self._play_start_merge, len(self._merges), elapsed, speed=speed)
            if target >= len(self._merges):
                target = len(self._merges)
                self.play_button.setChecked(False)
            self.go_to(target)
            return
        if self._live:
            if len(self._merges) > self._replay.merges_applied:
                self._replay.apply(self._merges[self._replay.merges_applied :])
            self._render()  # does nothing when drawn already, or drawn less than LIVE_INTERVAL ago

    @Slot(bool)
    def _on_play_toggled(self, checked: bool) -> None:
        # No ⏸ (U+23F8): fonts without it (many Linux desktops' defaults) show an empty box.
        self.play_button.setText("■ Pause" if checked else "▶ Replay")
        if checked:
            start = self._replay.merges_applied
            if start >= len(self._merges):
                start = self._first_merge  # at the end: replay from the start (an extended tokenizer's)
                self.go_to(start)
            self._play_start_merge = start
            self._play_from = time.perf_counter()
            self.timer.start()
        elif not self._live:
            self.timer.stop()
        self._update_controls()

    @Slot(int)
    def _on_speed_changed(self, _index: int) -> None:
        # Carry on from where the replay is, at the new speed.
        self._play_start_merge = self._replay.merges_applied
        self._play_from = time.perf_counter()

    def slider_merges(self, position: int) -> int:
        """The merges the slider shows at ``position`` (a log scale over the run's merges)."""
        return slider_merges(position, len(self._merges))

    @Slot(int)
    def _on_slider_moved(self, value: int) -> None:
        merges = self.slider_merges(value)
        if self._live or merges == self._replay.merges_applied:
            return
        self.go_to(merges)
        if self.play_button.isChecked():
            self._on_speed_changed(0)

    @Slot()
    def _on_sample_button_clicked(self) -> None:
        self._pick += 1
        self._user_text = False
        self._restart(self._draw_sample(), keep=self._replay.merges_applied)

    @Slot(bool)
    def _on_edit_toggled(self, checked: bool) -> None:
        if checked:  # editing
            self.editor.setPlainText(self._replay.text)
            self.stack.setCurrentWidget(self.editor)
            self.edit_button.setText("Done")
        else:
            self.stack.setCurrentWidget(self.tokens_view)
            self.edit_button.setText("Edit text")
            text = self.editor.toPlainText()
            if text != self._replay.text:
                self.set_sample(text)

    # ---- drawing ---------------------------------------------------------------------------------

    def _update_controls(self) -> None:
        replayable = not self._live and bool(self._merges)
        for widget in (self.back_button, self.step_button, self.slider, self.play_button):
            widget.setEnabled(replayable)
        self.sample_button.setEnabled(bool(self._inputs))

    def _render(self, *, force: bool = False) -> None:
        """Redraw the count, the chart and the text: while a run goes on at most every
        :data:`LIVE_INTERVAL` (the GUI thread shares the GIL with the merge loop), else at once."""
        replay = self._replay
        now = time.perf_counter()
        key = (replay.merges_applied, self._version)
        if key == self._shown or (not force and self._live and now < self._due):
            return
        self._shown = key
        self._due = now + LIVE_INTERVAL
        per = len(replay.text) / replay.token_count if replay.token_count else 0.0
        text = f"{replay.token_count:,} tokens · {per:.2f} chars/token · {replay.merges_applied:,} merges"
        self.count_label.setText(text)
        self.count_label.setToolTip(text.strip())
        history = self._full_history if self._full_history is not None else replay.history
        xs = [m + 1 for m, _ in history] + [max(len(self._merges), replay.merges_applied) + 1]
        ys = [c for _, c in history] + [history[-1][1]]
        self.curve.setData(np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64))
        # Ranges of our own: from one point (before any merge) pyqtgraph would make 190.6..191.4 tokens.
        top = max(ys)
        self.plot.setYRange(0, top * 1.05, padding=0)
        # Two labels, 0 and the sample's count before any merge: the chart is short (80 px at 1024×640), and
        # pyqtgraph's own ticks piled up there ("400" over "200").
        self.plot.getAxis("left").setTicks([[(0, "0"), (top, f"{top:,}")], []])
        self.plot.setXRange(0, math.log10(max(xs[-1], 10)), padding=0)  # log10 units: merges 0 to the end
        self.marker.setValue(math.log10(replay.merges_applied + 1))
        blocked = self.slider.blockSignals(True)
        self.slider.setValue(slider_position(replay.merges_applied, len(self._merges)))
        self.slider.blockSignals(blocked)
        # The costliest part (Qt lays the rich text out): only when the tokens changed, which most merges
        # late in a run do not (a sample's tokens change when its count does: merges only join tokens).
        if (replay.token_count, self._version) != self._text_shown:
            self._text_shown = (replay.token_count, self._version)
            self.tokens_view.setHtml(self.tokens_html())
        self.advanced.emit(replay.merges_applied)

    def tokens_html(self) -> str:
        """The sample's tokens as HTML: alternating backgrounds, visible whitespace, a line break after a
        newline, special tokens outlined, superwords underlined in bold."""
        dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
        colours = palette_for(dark)
        specials = {s.encode("utf-8") for s in self._specials}
        parts = [f'<div style="font-family: monospace; color: {colours.text}; line-height: 150%;">']
        for n, token in enumerate(self._replay.tokens()):
            if token in specials:
                label = html.escape(text_label(token.decode("utf-8")))
                parts.append(
                    f'<span style="background: {colours.special_background}; color: {colours.special_text};'
                    f' font-weight: bold;">{label}</span>'
                )
                continue
            background = colours.backgrounds[n % len(colours.backgrounds)]
            label = html.escape(token_label(token))
            # A superword (a token across the space between words, after a superword run's transition) is
            # underlined and bold, so that the merges across words stand out as they appear.
            mark = " text-decoration: underline; font-weight: bold;" if is_superword(token) else ""
            # A zero-width space after each token: whitespace is shown as ·, so lines may break anywhere.
            parts.append(f'<span style="background: {background};{mark}">{label}</span>\u200b')
            if token.endswith(b"\n"):
                parts.append("<br>")
        parts.append("</div>")
        return "".join(parts)


__all__ = ["SPEEDS", "TICK_MS", "LearnView"]
