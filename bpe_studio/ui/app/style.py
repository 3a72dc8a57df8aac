"""The app's look: the Fusion style with a light or a dark palette, and a small style sheet.

Every colour the app's widgets use comes from a :class:`Theme` here (the token colours from
:mod:`bpe_studio.ui.present.token_format`'s palettes): :data:`LIGHT_THEME` and :data:`DARK_THEME`. The theme
is the
user's choice (View ▸ Theme, saved in the settings): ``"system"`` follows the desktop's colour scheme
(``QStyleHints.colorScheme()``, and its ``colorSchemeChanged`` while the app runs), ``"light"`` and
``"dark"`` force one. Widgets that draw with theme colours read them from their own palette when it changes
(``QEvent.PaletteChange``), see :func:`theme_of`.

Kept in code (not a file) so that an installed package needs no data files.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from ..present.token_format import TokenPalette, palette_for
from .settings import THEME_CHOICES

#: The theme choices: follow the desktop, or force one.
SYSTEM, LIGHT, DARK = THEME_CHOICES


@dataclass(frozen=True)
class Theme:
    """Every colour of one theme (``#rrggbb``).

    Attributes:
        dark: Whether this is the dark theme.
        window, window_text, base, alternate_base, text, button, button_text, highlight, highlighted_text,
            tooltip_base, tooltip_text, placeholder, disabled_text: The ``QPalette`` roles.
        border: Frames of group boxes and progress bars.
        soft_border: The status strip's frame and the table grid.
        caption: Secondary text (captions, hints).
        accent, accent_hover, accent_border, accent_disabled, accent_text: The Start button and the phase.
        error: Error text and the frame of an invalid field.
        invalid_background: Background of an invalid field.
        status_background: Background of the training status strip.
        progress_background, progress_chunk: The progress bar.
        chart_count, chart_length, chart_mean, chart_bytes_rate, chart_merge_rate, chart_current: Chart
            curves (Okabe-Ito colours, lighter ones on dark).
        density: The length chart's ramp: none, some, most.
        tree_leaf, tree_outline, tree_edge, error_underline: The merge tree and the playground's errors.
        difference: The dashed outline of a span that the other side of Compare cuts differently.
    """

    dark: bool
    window: str
    window_text: str
    base: str
    alternate_base: str
    text: str
    button: str
    button_text: str
    highlight: str
    highlighted_text: str
    tooltip_base: str
    tooltip_text: str
    placeholder: str
    disabled_text: str
    border: str
    soft_border: str
    caption: str
    accent: str
    accent_hover: str
    accent_border: str
    accent_disabled: str
    accent_text: str
    error: str
    invalid_background: str
    status_background: str
    progress_background: str
    progress_chunk: str
    chart_count: str
    chart_length: str
    chart_mean: str
    chart_bytes_rate: str
    chart_merge_rate: str
    chart_current: str
    density: tuple[str, str, str]
    tree_leaf: str
    tree_outline: str
    tree_edge: str
    error_underline: str
    difference: str

    @property
    def tokens(self) -> TokenPalette:
        """The token colours of this theme (:mod:`bpe_studio.ui.present.token_format`)."""
        return palette_for(self.dark)


LIGHT_THEME = Theme(
    dark=False,
    window="#fbfbfc",
    window_text="#1d232b",
    base="#ffffff",
    alternate_base="#f4f6f9",
    text="#1d232b",
    button="#f0f2f5",
    button_text="#1d232b",
    highlight="#2a6fb0",
    highlighted_text="#ffffff",
    tooltip_base="#ffffe8",
    tooltip_text="#1d232b",
    placeholder="#6b737d",
    disabled_text="#9aa1aa",
    border="#c9ced6",
    soft_border="#dde1e7",
    caption="#5b6470",
    accent="#2a6fb0",
    accent_hover="#3479bb",
    accent_border="#1f5a91",
    accent_disabled="#a9bfd6",
    accent_text="#ffffff",
    error="#b3261e",
    invalid_background="#fdf0ef",
    status_background="#f3f5f8",
    progress_background="#ffffff",
    progress_chunk="#8fb8e0",
    chart_count="#0072B2",
    chart_length="#E69F00",
    chart_mean="#1d232b",
    chart_bytes_rate="#009E73",
    chart_merge_rate="#CC79A7",
    chart_current="#D55E00",
    density=("#ffffff", "#e69f00", "#783c00"),
    tree_leaf="#e9ecf0",
    tree_outline="#5b6470",
    tree_edge="#8a929c",
    error_underline="#CC3311",
    difference="#CC3311",
)

DARK_THEME = Theme(
    dark=True,
    window="#1f2226",
    window_text="#e6e8eb",
    base="#17191c",
    alternate_base="#23272c",
    text="#e6e8eb",
    button="#2b3036",
    button_text="#e6e8eb",
    highlight="#5fa0e3",
    highlighted_text="#0d1117",
    tooltip_base="#2b3036",
    tooltip_text="#e6e8eb",
    placeholder="#9aa3ad",
    disabled_text="#6b737d",
    border="#454c55",
    soft_border="#353b42",
    caption="#a9b1bb",
    accent="#5fa0e3",
    accent_hover="#74aee8",
    accent_border="#7fb0e0",
    accent_disabled="#34475a",
    accent_text="#0d1117",
    error="#ff8a80",
    invalid_background="#4a2020",
    status_background="#262a30",
    progress_background="#17191c",
    progress_chunk="#3d6f9e",
    chart_count="#56B4E9",
    chart_length="#E69F00",
    chart_mean="#e6e8eb",
    chart_bytes_rate="#2fc89a",
    chart_merge_rate="#e09bc3",
    chart_current="#ff8c42",
    density=("#17191c", "#e69f00", "#ffe3a3"),
    tree_leaf="#3a3f46",
    tree_outline="#8a929c",
    tree_edge="#6b737d",
    error_underline="#ff8a80",
    difference="#ffb199",
)

# The light theme's colours under the names other modules imported before themes existed.
ACCENT = LIGHT_THEME.accent
ERROR = LIGHT_THEME.error
#: Background of the training status strip (its live widgets fill their background with it, see
#: :func:`opaque`, which gives them the current theme's instead).
STATUS_BACKGROUND = LIGHT_THEME.status_background


def style_sheet(theme: Theme) -> str:
    """The app's style sheet in ``theme``'s colours."""
    t = theme
    return f"""
QGroupBox {{
    font-weight: bold;
    border: 1px solid {t.border};
    border-radius: 6px;
    margin-top: 10px;
    padding-top: 6px;
}}
QGroupBox::title {{
    subcontrol-origin: margin;
    left: 10px;
    padding: 0 4px;
}}
QGroupBox > QWidget, QGroupBox QLabel {{
    font-weight: normal;
}}
QLabel#caption {{
    color: {t.caption};
}}
QLabel#phase {{
    color: {t.accent};
}}
QLabel#error {{
    color: {t.error};
}}
QLineEdit[invalid="true"] {{
    border: 1px solid {t.error};
    background: {t.invalid_background};
}}
QFrame#status QLabel {{
    background: {t.status_background};
}}
QFrame#status {{
    background: {t.status_background};
    border: 1px solid {t.soft_border};
    border-radius: 6px;
}}
QProgressBar {{
    border: 1px solid {t.border};
    border-radius: 4px;
    background: {t.progress_background};
    text-align: center;
    min-height: 20px;
}}
QProgressBar::chunk {{
    background-color: {t.progress_chunk};
    border-radius: 3px;
}}
QPushButton#start {{
    background-color: {t.accent};
    color: {t.accent_text};
    font-weight: bold;
    border: 1px solid {t.accent_border};
    border-radius: 4px;
    padding: 5px 12px;
}}
QPushButton#start:hover {{
    background-color: {t.accent_hover};
}}
QPushButton#start:disabled {{
    background-color: {t.accent_disabled};
    border-color: {t.accent_disabled};
}}
QTableView {{
    gridline-color: {t.soft_border};
}}
"""


#: The light theme's style sheet (as before themes existed).
STYLE_SHEET = style_sheet(LIGHT_THEME)


def qt_palette(theme: Theme) -> QPalette:
    """A ``QPalette`` of ``theme``'s colours."""
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: theme.window,
        QPalette.ColorRole.WindowText: theme.window_text,
        QPalette.ColorRole.Base: theme.base,
        QPalette.ColorRole.AlternateBase: theme.alternate_base,
        QPalette.ColorRole.Text: theme.text,
        QPalette.ColorRole.Button: theme.button,
        QPalette.ColorRole.ButtonText: theme.button_text,
        QPalette.ColorRole.Highlight: theme.highlight,
        QPalette.ColorRole.HighlightedText: theme.highlighted_text,
        QPalette.ColorRole.ToolTipBase: theme.tooltip_base,
        QPalette.ColorRole.ToolTipText: theme.tooltip_text,
        QPalette.ColorRole.PlaceholderText: theme.placeholder,
        QPalette.ColorRole.Link: theme.accent,
        QPalette.ColorRole.BrightText: theme.error,
    }
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    # Fusion draws frames and bevels from these: derived from the window colour, as Qt does.
    window = QColor(theme.window)
    palette.setColor(QPalette.ColorRole.Light, window.lighter(150))
    palette.setColor(QPalette.ColorRole.Midlight, window.lighter(125) if theme.dark else window.darker(105))
    palette.setColor(QPalette.ColorRole.Mid, window.lighter(140) if theme.dark else window.darker(130))
    palette.setColor(QPalette.ColorRole.Dark, window.darker(150) if theme.dark else window.darker(160))
    palette.setColor(QPalette.ColorRole.Shadow, QColor("#000000"))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(theme.disabled_text))
    return palette


def is_dark_palette(palette: QPalette) -> bool:
    """Whether a palette is dark (its base colour is)."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def theme_of(widget: QWidget | None = None) -> Theme:
    """The theme a widget is drawn in (or the app's, without one): dark when its base colour is dark.

    Read from the palette rather than from the choice, so that it is right for any palette the widget has.
    """
    palette = widget.palette() if widget is not None else QApplication.palette()
    return DARK_THEME if is_dark_palette(palette) else LIGHT_THEME


def theme_for(choice: str, scheme: Qt.ColorScheme = Qt.ColorScheme.Unknown) -> Theme:
    """The theme of a choice (``"system"``, ``"light"``, ``"dark"``) under the desktop's colour scheme.

    Example:
        >>> theme_for("system", Qt.ColorScheme.Dark).dark, theme_for("light", Qt.ColorScheme.Dark).dark
        (True, False)
        >>> theme_for("system").dark  # an unknown scheme is light
        False
    """
    if choice == DARK:
        return DARK_THEME
    if choice == LIGHT:
        return LIGHT_THEME
    return DARK_THEME if scheme == Qt.ColorScheme.Dark else LIGHT_THEME


# Widgets given the status background by opaque(): they get the new theme's when it changes.
_opaque_widgets: weakref.WeakSet[QWidget] = weakref.WeakSet()


def _fill(widget: QWidget, background: str) -> None:
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor(background))
    widget.setPalette(palette)


def opaque(widget: QWidget, background: str) -> None:
    """Let a widget that changes often paint its own background.

    A widget that does not is transparent to Qt, so repainting it repaints every ancestor beneath it
    first; for a progress bar, whose ``setValue`` repaints at once, that is the whole window, ten times a
    second while training. An opaque widget repaints alone. Given :data:`STATUS_BACKGROUND`, the widget
    takes the current theme's status background, and the next theme's when it changes.
    """
    if background == STATUS_BACKGROUND:
        _opaque_widgets.add(widget)
        background = theme_of(widget).status_background
    _fill(widget, background)
    widget.setAutoFillBackground(True)


class _SchemeFollower(QObject):
    """Re-applies the "system" theme when the desktop's colour scheme changes."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.app = app
        self.choice = SYSTEM
        app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)

    @Slot(Qt.ColorScheme)
    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.choice == SYSTEM:
            _apply(self.app, theme_for(SYSTEM, scheme))


def _follower(app: QApplication) -> _SchemeFollower:
    found = app.findChild(_SchemeFollower)
    return found if isinstance(found, _SchemeFollower) else _SchemeFollower(app)


def _apply(app: QApplication, theme: Theme) -> None:
    app.setPalette(qt_palette(theme))
    app.setStyleSheet(style_sheet(theme))
    # Rich text resolves ``palette(...)`` colours when it is set: set it again to take the new ones.
    for widget in app.allWidgets():
        if isinstance(widget, QLabel) and "palette(" in (text := widget.text()):
            widget.clear()  # setText with the same text would do nothing
            widget.setText(text)
    for widget in list(_opaque_widgets):
        if shiboken6.isValid(widget):  # its window may be gone while Python still holds the wrapper
            _fill(widget, theme.status_background)
        else:
            _opaque_widgets.discard(widget)


def apply_style(app: QApplication, choice: str = SYSTEM) -> Theme:
    """Use the Fusion style, the palette and style sheet of ``choice``'s theme; returns the theme.

    With ``"system"`` the theme follows the desktop's colour scheme, now and when it changes.
    """
    if choice not in THEME_CHOICES:
        choice = SYSTEM
    app.setStyle("Fusion")
    _follower(app).choice = choice
    theme = theme_for(choice, app.styleHints().colorScheme())
    _apply(app, theme)
    return theme


__all__ = [
    "DARK",
    "DARK_THEME",
    "LIGHT",
    "LIGHT_THEME",
    "STATUS_BACKGROUND",
    "SYSTEM",
    "Theme",
    "apply_style",
    "is_dark_palette",
    "opaque",
    "qt_palette",
    "style_sheet",
    "theme_for",
    "theme_of",
]
