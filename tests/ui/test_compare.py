"""The Compare tab: two tokenizers' boundaries and counts on one text, and their first differing merge."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor

from bpe_studio.engine import Tokenizer, TrainConfig, save, train
from bpe_studio.engine.encoding import analysis
from bpe_studio.engine.encoding.analysis import compare_merges, cut_difference, shared_tokens
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.style import theme_of
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.compare.view import describe_merges, shift_positions, utf16_ranges

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    TRICKY_TEXT,
    WAIT_MS,
    expected_formats,
    formatted_units,
    open_and_wait,
    tiny_corpus,
    train_tiny,
    views,
)


def test_compare_merges() -> None:
    base = {i: bytes([i]) for i in range(256)}
    one = Tokenizer(base | {256: b"ab", 257: b"abc"}, [(b"a", b"b"), (b"ab", b"c")])
    two = Tokenizer(base | {256: b"ab", 257: b"bc"}, [(b"a", b"b"), (b"b", b"c")])
    short = Tokenizer(base | {256: b"ab"}, [(b"a", b"b")])
    diff = compare_merges(one, two)
    assert (diff.shared, diff.first, diff.a_merge, diff.b_merge) == (1, 1, (b"ab", b"c"), (b"b", b"c"))
    assert "merge <b>2</b>" in describe_merges(diff) and "&nbsp;ab&nbsp;</code> + <code" in describe_merges(
        diff
    )
    prefix = compare_merges(short, one)
    assert (prefix.shared, prefix.first, prefix.a_merge, prefix.b_merge) == (1, None, None, (b"ab", b"c"))
    assert "B has 1 more" in describe_merges(prefix)
    assert "identical (2 merges)" in describe_merges(compare_merges(one, one))


def test_two_tokenizers_side_by_side(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    small = train_tiny(tiny_corpus, 400)
    # A second corpus: the same documents in another order and upper-cased, so the merges differ.
    other_corpus = tmp_path / "other.txt"
    other_corpus.write_text(tiny_corpus.read_text(encoding="utf-8").upper(), encoding="utf-8")
    other = train(TrainConfig(inputs=(other_corpus,), vocab_size=500, special_tokens=(SPECIAL,)))
    other_path = tmp_path / "other.json"
    save(Tokenizer.from_result(other), other_path)

    open_and_wait(qtbot, window, small, TRICKY_TEXT)
    compare = views.compare
    assert compare.text() == TRICKY_TEXT  # the playground's text, as nothing was typed here yet

    def shows_other(*_args: object) -> bool:
        chosen = compare.chosen("b")
        return chosen is not None and chosen.path == other_path

    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS, check_params_cb=shows_other):
        views.open(other_path, target="b")
    assert window.tabs.currentWidget() is compare
    a, b = compare.chosen("a"), compare.chosen("b")
    assert a is views.current and b is not None and b.path == other_path

    # Each side's colours sit on its own tokenizer's spans; the counts are each tokenizer's.
    for side, loaded in (("a", a), ("b", b)):
        spans = loaded.tokenizer.encode_with_offsets(TRICKY_TEXT)
        view = compare.sides[side].view
        # The document holds word joiners inside special tokens and zero-width spaces around them (so they
        # never wrap): past each, positions move on by one.
        expected = expected_formats(TRICKY_TEXT, spans)
        moved = shift_positions(list(expected), view.marks)
        marks = {mark + k for k, mark in enumerate(view.marks)}  # their own places in the document
        assert view.marks, "the text's special token holds places to wrap"
        shown = {p: unit for p, unit in formatted_units(view).items() if p not in marks}
        assert shown == dict(zip(moved, expected.values(), strict=True))
        assert view.plain_text() == TRICKY_TEXT
        assert f"<b>{len(spans):,}</b> tokens" in compare.sides[side].stats.text()
    na = len(a.tokenizer.encode(TRICKY_TEXT))
    nb = len(b.tokenizer.encode(TRICKY_TEXT))
    assert na != nb
    fewer = "A" if na < nb else "B"
    assert f"{fewer} uses <b>{abs(na - nb):,} fewer</b>" in compare.counts_label.text()
    a_ids = a.tokenizer.encode(TRICKY_TEXT, allowed_special="all")
    same = shared_tokens(
        a.tokenizer, a_ids, b.tokenizer, b.tokenizer.encode(TRICKY_TEXT, allowed_special="all")
    )
    assert f"{same:,} of A's {na:,} tokens" in compare.counts_label.text()
    # The sentence `bpe-studio compare` prints, here in rich text.
    plain = compare.counts_label.text().replace("<b>", "").replace("</b>", "")
    assert plain == analysis.compare(a.tokenizer, b.tokenizer, TRICKY_TEXT).describe_counts()

    # The first differing merge, found independently.
    first = next(i for i, (x, y) in enumerate(zip(small.merges, other.merges, strict=False)) if x != y)
    assert compare.difference is not None and compare.difference.first == first
    assert f"merge <b>{first + 1:,}</b>" in compare.merges_label.text()  # numbered from 1
    if first == 0:  # it said "The merge lists agree on the first 0 merges" (issue 21)
        assert compare.merges_label.text().startswith("The merge lists differ from the start.")

    # The same corpus to a larger size: the smaller's merges are the larger's first ones.
    larger = train_tiny(tiny_corpus, 600)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(larger)
    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS):
        compare.choose("a", views.opened[0])
        compare.choose("b", views.current)  # type: ignore[arg-type]
    # Choosing A may start an encoding that choosing B supersedes; the runner's thread also ends a moment
    # after its last result, so wait for the compare view to go idle rather than for one more signal.
    qtbot.waitUntil(lambda: not compare.is_busy(), timeout=WAIT_MS)
    assert compare.difference is not None and compare.difference.first is None
    assert compare.difference.shared == len(small.merges)
    assert f"B has {len(larger.merges) - len(small.merges):,} more" in compare.merges_label.text()

    # Typing re-encodes both sides.
    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS):
        compare.set_text("brand new text")
    assert [s.encoding.text for s in compare.sides.values()] == ["brand new text"] * 2  # type: ignore[union-attr]


def test_the_same_tokenizer_on_both_sides_shares_every_token(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path
) -> None:  # type: ignore[no-untyped-def]
    # Trained on English prose, the tokenizer splits "日本語" and "🙃" into byte tokens that each hold only
    # part of a character: they must count as shared too (they were left out, so A and B seemed to differ).
    open_and_wait(qtbot, window, train_tiny(tiny_corpus, 400), TRICKY_TEXT)
    compare = views.compare
    loaded = views.current
    assert loaded is not None
    compare.choose("a", loaded)
    compare.choose("b", loaded)
    qtbot.waitUntil(lambda: not compare.is_busy() and compare.comparison is not None, timeout=WAIT_MS)
    spans = loaded.tokenizer.encode_with_offsets(TRICKY_TEXT, allowed_special="all")
    assert any(s.partial for s in spans)
    n = len(spans)
    assert f"Both use <b>{n:,}</b> tokens. {n:,} of A's {n:,} tokens" in compare.counts_label.text()
    assert "(all: the same split)" in compare.counts_label.text()
    assert compare.merges_label.text().startswith(
        "A and B are the same tokenizer. The merge lists are identical"
    )


def test_spans_cut_differently_are_outlined_on_both_sides_with_counts(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path
) -> None:  # type: ignore[no-untyped-def]
    # The same corpus at two sizes: the larger one joins what the smaller leaves in pieces.
    open_and_wait(qtbot, window, train_tiny(tiny_corpus, 300), TRICKY_TEXT)
    small = views.current
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(train_tiny(tiny_corpus, 600))
    large = views.current
    assert small is not None and large is not None
    compare = views.compare
    window.tabs.setCurrentWidget(compare)
    compare.choose("a", small)
    compare.choose("b", large)
    qtbot.waitUntil(lambda: not compare.is_busy() and compare.comparison is not None, timeout=WAIT_MS)

    a_ids = small.tokenizer.encode(TRICKY_TEXT, allowed_special="all")
    b_ids = large.tokenizer.encode(TRICKY_TEXT, allowed_special="all")
    expected = cut_difference(small.tokenizer, a_ids, large.tokenizer, b_ids)
    assert expected.spans and expected.a_tokens > expected.b_tokens
    ranges = utf16_ranges(TRICKY_TEXT, expected.spans)
    for name, other, tokens in (("a", "B", expected.a_tokens), ("b", "A", expected.b_tokens)):
        side = compare.sides[name]
        assert side.view.difference_ranges == ranges  # the same stretches of text on both sides
        note = f"<b>{tokens:,}</b> tokens in {len(expected.spans):,} spans that {other} cuts differently"
        assert note in side.stats.text()
    # Outside the spans both cut alike: A's tokens there are exactly the shared ones.
    shared = shared_tokens(small.tokenizer, a_ids, large.tokenizer, b_ids)
    assert len(a_ids) - expected.a_tokens == shared == len(b_ids) - expected.b_tokens

    # The outlines are drawn, in the theme's colour.
    view = compare.sides["a"].view
    qtbot.waitUntil(view.isVisible)
    image = view.viewport().grab().toImage()
    outline = QColor(theme_of(view).difference).rgb()
    pixels = sum(
        image.pixel(x, y) == outline for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
    )
    assert pixels > 20

    # The same tokenizer on both sides: nothing to outline.
    compare.choose("b", small)
    qtbot.waitUntil(lambda: not compare.is_busy() and compare.sides["b"].view.difference_ranges == [])
    assert compare.sides["a"].view.difference_ranges == []
    assert "cut like B everywhere" in compare.sides["a"].stats.text()


def test_utf16_ranges_widen_to_whole_characters() -> None:
    text = "a🙃é日x"
    # Bytes: a 0, 🙃 1-4, é 5-6, 日 7-9, x 10. UTF-16: a 0, 🙃 1-2, é 3, 日 4, x 5.
    assert utf16_ranges(text, [(0, 1), (2, 4), (4, 6), (9, 11)]) == [(0, 1), (1, 3), (1, 4), (4, 6)]
    assert utf16_ranges(text, []) == []
