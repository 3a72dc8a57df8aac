"""Light and dark themes: View ▸ Theme (System/Light/Dark, saved), the desktop's colour scheme followed,
every widget that draws its own colours switching with the palette, and text contrast of at least 4.5:1."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from bpe_studio.cli import parse_args
from bpe_studio.ui.app import app as app_module
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.settings import Settings, load_settings, save_settings
from bpe_studio.ui.app.style import DARK_THEME, LIGHT_THEME, Theme, apply_style, is_dark_palette, theme_for
from bpe_studio.ui.present.token_format import DARK_PALETTE, LIGHT_PALETTE, contrast_ratio

from .test_menu_actions import find_action
from .tokenizer_helpers import open_and_wait, tiny_corpus, tiny_file, tiny_result, views  # noqa: F401

THEMES = [LIGHT_THEME, DARK_THEME]

#: Text on a background, by theme field names: every pair must reach WCAG AA for normal text (4.5:1).
TEXT_PAIRS = [
    ("text", "base"),
    ("text", "alternate_base"),
    ("window_text", "window"),
    ("button_text", "button"),
    ("caption", "window"),
    ("caption", "status_background"),
    ("accent", "status_background"),  # the phase label
    ("accent_text", "accent"),  # the Start button
    ("highlighted_text", "highlight"),
    ("tooltip_text", "tooltip_base"),
    ("placeholder", "base"),
    ("error", "window"),
    ("error", "base"),
    ("text", "invalid_background"),
    ("text", "tree_leaf"),
]

#: Lines and curves on the chart background: WCAG's 3:1 for graphics.
CHART_LINES = ["chart_count", "chart_mean", "chart_bytes_rate", "chart_merge_rate", "chart_current", "text"]


@pytest.mark.parametrize("theme", THEMES, ids=["light", "dark"])
def test_text_on_every_token_colour_reads_well(theme: Theme) -> None:
    tokens = theme.tokens
    assert tokens is (DARK_PALETTE if theme.dark else LIGHT_PALETTE)
    for background in tokens.backgrounds:
        assert contrast_ratio(tokens.text, background) >= 4.5, background
    assert contrast_ratio(tokens.special_text, tokens.special_background) >= 4.5
    assert contrast_ratio(tokens.text, tokens.error_background) >= 4.5
    # Tokens must stand out from the editor's background too (3:1 would be needed for a boundary line;
    # here they differ in hue and lightness from their neighbours, so only "not the same" is asked).
    assert all(background.lower() != theme.base.lower() for background in tokens.backgrounds)


@pytest.mark.parametrize("theme", THEMES, ids=["light", "dark"])
def test_text_of_the_widgets_reads_well(theme: Theme) -> None:
    for text, background in TEXT_PAIRS:
        ratio = contrast_ratio(getattr(theme, text), getattr(theme, background))
        assert ratio >= 4.5, f"{text} on {background}: {ratio:.2f}"
    for name in CHART_LINES:
        ratio = contrast_ratio(getattr(theme, name), theme.base)
        assert ratio >= 3.0, f"{name} on the chart background: {ratio:.2f}"


def test_the_choice_and_the_desktop_scheme_make_the_theme() -> None:
    assert theme_for("system", Qt.ColorScheme.Dark) is DARK_THEME
    assert theme_for("system", Qt.ColorScheme.Light) is LIGHT_THEME
    assert theme_for("system", Qt.ColorScheme.Unknown) is LIGHT_THEME
    assert theme_for("light", Qt.ColorScheme.Dark) is LIGHT_THEME
    assert theme_for("dark", Qt.ColorScheme.Light) is DARK_THEME


def test_the_palette_switches(qapp) -> None:  # type: ignore[no-untyped-def]
    assert apply_style(qapp, "dark") is DARK_THEME
    assert is_dark_palette(qapp.palette())
    assert qapp.palette().color(qapp.palette().ColorRole.Base) == QColor(DARK_THEME.base)
    assert DARK_THEME.status_background in qapp.styleSheet()
    assert apply_style(qapp, "light") is LIGHT_THEME
    assert not is_dark_palette(qapp.palette())
    assert LIGHT_THEME.status_background in qapp.styleSheet()


def test_system_follows_the_desktop_while_the_app_runs(qapp) -> None:  # type: ignore[no-untyped-def]
    hints = qapp.styleHints()
    apply_style(qapp, "system")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert is_dark_palette(qapp.palette())
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert not is_dark_palette(qapp.palette())
    # A theme chosen by the user stays, whatever the desktop does.
    apply_style(qapp, "light")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert not is_dark_palette(qapp.palette())


def _base(widget_palette_owner) -> QColor:  # type: ignore[no-untyped-def]
    return widget_palette_owner.palette().color(widget_palette_owner.palette().ColorRole.Base)


def test_view_theme_dark_recolours_every_view(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, tiny_file: Path
) -> None:
    open_and_wait(qtbot, window, tiny_file, "Hello world, hello tokens")
    playground = views.playground
    assert playground.editor.token_palette is LIGHT_PALETTE or not is_dark_palette(QApplication.palette())

    find_action(window, "View", "Theme", "Dark").trigger()
    assert window.settings.theme == "dark"
    assert window.theme_actions["dark"].isChecked() and not window.theme_actions["light"].isChecked()
    assert is_dark_palette(QApplication.palette())
    # The token colours (in the text and the legend), the Train tab's charts and the playground's curve.
    assert playground.editor.token_palette is DARK_PALETTE
    assert DARK_PALETTE.backgrounds[0] in playground.details.text()
    assert LIGHT_PALETTE.backgrounds[0] not in playground.details.text()
    charts = window.train_view.charts
    assert charts.view.backgroundBrush().color() == QColor(DARK_THEME.base)
    assert charts.count_curve.opts["pen"].color() == QColor(DARK_THEME.chart_count)
    assert charts.length_mean.opts["pen"].color() == QColor(DARK_THEME.chart_mean)
    assert charts.count_plot.getAxis("left").textPen().color() == QColor(DARK_THEME.text)
    curve = playground.curve_plot
    assert curve.view.backgroundBrush().color() == QColor(DARK_THEME.base)
    assert curve.curve.opts["pen"].color() == QColor(DARK_THEME.chart_count)
    # The training status strip's live labels (painted opaque) take the dark status background.
    phase = window.train_view.phase_label
    assert phase.palette().color(phase.backgroundRole()) == QColor(DARK_THEME.status_background)

    find_action(window, "View", "Theme", "Light").trigger()
    assert window.settings.theme == "light"
    assert playground.editor.token_palette is LIGHT_PALETTE
    assert LIGHT_PALETTE.backgrounds[0] in playground.details.text()
    assert charts.view.backgroundBrush().color() == QColor(LIGHT_THEME.base)
    assert curve.curve.opts["pen"].color() == QColor(LIGHT_THEME.chart_count)
    assert phase.palette().color(phase.backgroundRole()) == QColor(LIGHT_THEME.status_background)


def test_the_theme_is_saved_and_used_at_the_next_start(qtbot) -> None:  # type: ignore[no-untyped-def]
    app_module.create_application()
    window, _ = app_module.open_window(parse_args([]))
    qtbot.addWidget(window)
    assert window.theme_actions["system"].isChecked()
    window.set_theme("dark")
    window.close()
    assert load_settings().theme == "dark"

    QApplication.instance().setPalette(QApplication.style().standardPalette())  # type: ignore[union-attr]
    again, _ = app_module.open_window(parse_args([]))
    qtbot.addWidget(again)
    assert again.theme_actions["dark"].isChecked()
    assert is_dark_palette(QApplication.palette())
    again.close()


def test_a_screenshot_ignores_the_saved_theme(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert save_settings(Settings(theme="dark"))
    app_module.create_application()
    window, shooter = app_module.open_window(parse_args(["--screenshot", str(tmp_path / "unused.png")]))
    qtbot.addWidget(window)
    assert shooter is not None
    shooter.cancel()
    assert window.settings.theme == "system"
    assert not is_dark_palette(QApplication.palette())  # the offscreen desktop has no dark scheme
    window.close()
