"""The BPE Studio desktop app (PySide6 + pyqtgraph).

Importing it changes nothing in the process: the app guards against PySide6 6.12's reference-counting bugs
when it starts (:mod:`bpe_studio.ui.app.refcounts`).
"""
