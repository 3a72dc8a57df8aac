"""A token's merge tree, drawn as boxes: the token on top, each merge's two parts below it, single bytes at
the bottom; every box spans the bytes it is made of, and clicking a box selects that token.

A long token's tree is large (a 93-byte token has 185 boxes, 35 rows deep), so :class:`MergeTreePanel`
keeps it readable: levels deeper than :data:`DEFAULT_LEVELS` below the top collapse into their box (drawn
dashed, "▸ n levels"; clicking it shows that token's own tree), long labels are elided in the middle, the
drawing shrinks to fit the view's width (down to :data:`MIN_SCALE`, then it scrolls), and a new tree is
scrolled so that its top box is in view.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QFrame, QScrollArea, QToolTip, QWidget

from ...engine import Tokenizer
from ...engine.encoding.analysis import MergeNode
from ...engine.humanize import merge_number
from ..app.style import theme_of
from ..present.token_format import hex_bytes, token_name

_PAD = 6.0
_GAP = 4.0
_ROW_GAP = 14.0

#: Merge levels drawn below the top box; deeper ones collapse into their box (None: draw every level).
DEFAULT_LEVELS = 5
#: The drawing shrinks to fit the view's width down to this scale; a wider tree scrolls.
MIN_SCALE = 0.75
#: The widest label of a collapsed box or a leaf, in pixels; longer labels are elided in the middle.
MAX_LABEL_WIDTH = 150.0


@dataclass(frozen=True)
class TreeBox:
    """A drawn node of the merge tree.

    Attributes:
        rect: Where it is in the view (widget coordinates, after fitting).
        node: The node (its token, and the merge that made it).
        label: The token's full label (the box may show it elided).
        caption: The second line: ``#n`` (merge n), the hex of a byte, or how many levels are folded.
        collapsed: Whether merges below it are not drawn.
        natural: Where it is in the unscaled drawing.
    """

    rect: QRectF
    node: MergeNode
    label: str
    caption: str
    collapsed: bool
    natural: QRectF


class MergeTreeView(QWidget):
    """The drawing of one merge tree (or a message when there is none).

    Signals:
        token_clicked(int): A box was clicked (the token's id).
    """

    token_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("merge_tree")
        self.setMouseTracking(True)
        self.tree: MergeNode | None = None
        self.boxes: list[TreeBox] = []
        self.levels: int | None = DEFAULT_LEVELS
        self.scale = 1.0
        self._tokenizer: Tokenizer | None = None
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.0, self._small.pointSizeF() * 0.85))
        self._natural = QSize(0, 0)
        self._available = QSize(0, 0)
        self._message = "Select a token to see how merges build it."

    # -- content ------------------------------------------------------------------------------------

    @property
    def message(self) -> str:
        """The text shown while there is no tree."""
        return self._message

    def set_tree(self, tree: MergeNode | None, tokenizer: Tokenizer | None, message: str = "") -> None:
        """Show a tree (None: a message instead)."""
        self.tree = tree
        self._tokenizer = tokenizer
        if message:
            self._message = message
        self._relayout()

    def set_levels(self, levels: int | None) -> None:
        """Draw this many merge levels below the top box (None: all of them)."""
        self.levels = levels
        self._relayout()

    def set_available_size(self, size: QSize) -> None:
        """The room the view has (its scroll area's viewport): the drawing shrinks to fit its width."""
        if size != self._available:
            self._available = size
            self._fit()

    def root_box(self) -> TreeBox | None:
        """The top box (the token itself), if a tree is shown."""
        return self.boxes[0] if self.boxes else None

    # -- layout ---------------------------------------------------------------------------------------

    def _relayout(self) -> None:
        self.boxes = []
        self._natural = QSize(0, 0)
        if self.tree is not None and self._tokenizer is not None:
            self._layout(self.tree, self._tokenizer)
        self._fit()
        self.update()

    def _layout(self, tree: MergeNode, tokenizer: Tokenizer) -> None:
        metrics = QFontMetricsF(self._font)
        small = QFontMetricsF(self._small)
        box_height = metrics.height() + small.height() + 2 * 3
        levels = self.levels
        special_ids = frozenset(tokenizer.special_tokens.values())

        def shown_height(node: MergeNode, depth: int) -> int:
            """The rows drawn below a node (0 for a leaf or a collapsed node)."""
            if node.left is None or node.right is None or (levels is not None and depth >= levels):
                return 0
            return 1 + max(shown_height(node.left, depth + 1), shown_height(node.right, depth + 1))

        rows = shown_height(tree, 0) + 1
        # Each bottom box (a single byte, a token no merge makes, or a collapsed token) gets a slot wide
        # enough for its label (up to MAX_LABEL_WIDTH) and its caption.
        x = _GAP
        found: list[tuple[QRectF, MergeNode, str, str, bool]] = []

        def place(node: MergeNode, depth: int) -> tuple[float, float]:
            """Add the node's box (after its children's); returns its left and right edges."""
            nonlocal x
            data = tokenizer.token_bytes(node.token_id)
            has_parts = node.left is not None and node.right is not None
            collapsed = has_parts and levels is not None and depth >= levels
            if node.token_id in special_ids:
                label, caption = data.decode("utf-8", "replace"), "special"
            else:
                label = token_name(tokenizer, node.token_id)  # a SentencePiece-style model's pieces: ▁the
                if node.rank is None:
                    caption = hex_bytes(data)
                elif collapsed:
                    folded = node.height()
                    caption = (
                        f"merge {merge_number(node.rank):,} ▸ {folded} level{'s' if folded != 1 else ''}"
                    )
                else:
                    caption = f"merge {merge_number(node.rank):,}"
            if has_parts and not collapsed:
                assert node.left is not None and node.right is not None
                left, _ = place(node.left, depth + 1)
                _, right = place(node.right, depth + 1)
            else:
                width = min(metrics.horizontalAdvance(label), MAX_LABEL_WIDTH)
                width = max(width, small.horizontalAdvance(caption if collapsed else hex_bytes(data)[:12]))
                width = max(width + 2 * _PAD, 26.0)
                left, right = x, x + width
                x = right + _GAP
            row = rows - 1 - shown_height(node, depth)
            top = _GAP + row * (box_height + _ROW_GAP)
            rect = QRectF(left, top, right - left, box_height)
            if small.horizontalAdvance(caption) > rect.width() - 4:
                caption = f"merge {merge_number(node.rank):,}" if collapsed and node.rank is not None else ""
                if small.horizontalAdvance(caption) > rect.width() - 4:
                    caption = ""
            found.append((rect, node, label, caption, collapsed))
            return left, right

        place(tree, 0)
        found.reverse()  # the top box first, then each node before its parts
        self.boxes = [TreeBox(QRectF(r), n, label, c, f, r) for r, n, label, c, f in found]
        self._natural = QSize(int(x + _GAP), int(_GAP * 2 + rows * (box_height + _ROW_GAP)))

    def _fit(self) -> None:
        """Choose the scale (fit the available width, not below MIN_SCALE) and place the boxes."""
        natural = self._natural
        scale = 1.0
        if natural.width() > 0 and self._available.width() > 0:
            scale = max(MIN_SCALE, min(1.0, self._available.width() / natural.width()))
        self.scale = scale
        self._place_boxes()
        self.updateGeometry()

    def _offset(self) -> float:
        """The x where the drawing starts (centred when narrower than the view)."""
        return max(0.0, (self.width() - self._natural.width() * self.scale) / 2)

    def _place_boxes(self) -> None:
        offset, scale = self._offset(), self.scale
        self.boxes = [
            TreeBox(
                QRectF(
                    offset + box.natural.left() * scale,
                    box.natural.top() * scale,
                    box.natural.width() * scale,
                    box.natural.height() * scale,
                ),
                box.node,
                box.label,
                box.caption,
                box.collapsed,
                box.natural,
            )
            for box in self.boxes
        ]

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Keep the drawing centred."""
        super().resizeEvent(event)
        self._place_boxes()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The drawing's size at the chosen scale (a message takes what the view gives it)."""
        if not self.boxes:
            return QSize(200, 60)
        return QSize(
            int(self._natural.width() * self.scale) + 1, int(self._natural.height() * self.scale) + 1
        )

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As large as the drawing, so that the scroll area scrolls it; a message wraps to any width."""
        if not self.boxes:
            return QSize(0, 0)
        return self.sizeHint()

    # -- painting -----------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """Draw the boxes, children below their parents, with lines from each box to its parts."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            if not self.boxes:
                painter.setPen(self.palette().color(self.foregroundRole()))
                painter.drawText(
                    QRectF(self.rect()).adjusted(8, 8, -8, -8),
                    int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap),
                    self._message,
                )
                return
            painter.translate(self._offset(), 0)
            painter.scale(self.scale, self.scale)
            self._paint_tree(painter)
        finally:
            painter.end()

    def _paint_tree(self, painter: QPainter) -> None:
        theme = theme_of(self)
        palette = theme.tokens
        text_colour = QColor(palette.text)
        by_node = {id(box.node): box for box in self.boxes}
        painter.setPen(QPen(QColor(theme.tree_edge), 1))
        for box in self.boxes:
            node = box.node
            if node.left is None or node.right is None or box.collapsed:
                continue
            for child in (node.left, node.right):
                child_rect = by_node[id(child)].natural
                start = QPointF(child_rect.center().x(), box.natural.bottom())
                painter.drawLine(start, QPointF(child_rect.center().x(), child_rect.top()))
        metrics = QFontMetricsF(self._font)
        for box in self.boxes:
            node = box.node
            leaf = node.left is None
            colour = (
                palette.special_background
                if box.caption == "special"
                else (theme.tree_leaf if leaf else palette.backgrounds[node.height() % 6])
            )
            rect = box.natural
            painter.setBrush(QColor(colour))
            border = QPen(QColor(theme.tree_outline), 1.5 if box.collapsed else 1)
            if box.collapsed:
                border.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(border)
            painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
            painter.setPen(QColor(theme.text) if leaf else text_colour)
            painter.setFont(self._font)
            label_rect = QRectF(rect.left(), rect.top() + 2, rect.width(), rect.height() / 2)
            label = metrics.elidedText(box.label, Qt.TextElideMode.ElideMiddle, rect.width() - 2 * _PAD)
            painter.drawText(label_rect, int(Qt.AlignmentFlag.AlignCenter), label)
            if box.caption:
                painter.setFont(self._small)
                caption_rect = QRectF(rect.left(), rect.center().y(), rect.width(), rect.height() / 2 - 2)
                painter.drawText(caption_rect, int(Qt.AlignmentFlag.AlignCenter), box.caption)

    # -- mouse --------------------------------------------------------------------------------------

    def box_at(self, point: QPointF) -> TreeBox | None:
        """The box under a point, if any."""
        for box in self.boxes:
            if box.rect.contains(point):
                return box
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        """Report the clicked token."""
        box = self.box_at(event.position())
        if box is not None and event.button() == Qt.MouseButton.LeftButton:
            self.token_clicked.emit(box.node.token_id)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        """Describe the box under the mouse in a tooltip."""
        box = self.box_at(event.position())
        if box is None:
            QToolTip.hideText()
        else:
            node = box.node
            how = "not made by a merge"
            if node.rank is not None:
                how = f"made by merge {merge_number(node.rank):,}"
            if box.collapsed:
                how += f"; {node.height()} more levels below: click to see its tree"
            QToolTip.showText(
                event.globalPosition().toPoint(), f"Token {node.token_id}: {box.label} ({how})", self
            )
        super().mouseMoveEvent(event)


class MergeTreePanel(QScrollArea):
    """A :class:`MergeTreeView` in a scroll area: fits it to the width, scrolls a new tree to its top."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree_view = MergeTreeView(self)
        self.setWidget(self.tree_view)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """Fit the drawing when the viewport changes size."""
        if watched is self.viewport() and event.type() == QEvent.Type.Resize:
            self.tree_view.set_available_size(self.viewport().size())
        return super().eventFilter(watched, event)

    def show_tree(self, tree: MergeNode | None, tokenizer: Tokenizer | None, message: str = "") -> None:
        """Show a tree (None: a message), fitted, with its top box in view."""
        self.tree_view.set_available_size(self.viewport().size())
        self.tree_view.set_tree(tree, tokenizer, message)
        self.scroll_to_root()

    def set_levels(self, levels: int | None) -> None:
        """Draw this many merge levels (None: all), and bring the top box back into view."""
        self.tree_view.set_levels(levels)
        self.scroll_to_root()

    def scroll_to_root(self) -> None:
        """Scroll so that the top box's label is in view (the middle of a wide tree's top row)."""
        view = self.tree_view
        view.resize(view.minimumSizeHint().expandedTo(self.viewport().size()))
        root = view.root_box()
        self.verticalScrollBar().setValue(0)
        if root is None:
            self.horizontalScrollBar().setValue(0)
            return
        centre = root.rect.center().x()
        self.horizontalScrollBar().setValue(int(centre - self.viewport().width() / 2))


__all__ = ["DEFAULT_LEVELS", "MAX_LABEL_WIDTH", "MIN_SCALE", "MergeTreePanel", "MergeTreeView", "TreeBox"]
