"""The BPE Studio desktop app (PySide6 + pyqtgraph)."""
