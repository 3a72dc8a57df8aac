"""Tests of bpe_studio.engine.pretokenize."""
