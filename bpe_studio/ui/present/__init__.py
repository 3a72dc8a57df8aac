"""Qt-free presentation: how tokens are spelled, coloured and laid out, and a tokenizer as the views hold it.
Nothing here imports Qt (a test checks)."""
