"""Widgets shared by several views: token text, token details, merge trees, charts, file drops, dialogs."""
