"""Pre-tokenization: how text is cut into pre-tokens (presets, patterns, the boundary rule)."""
