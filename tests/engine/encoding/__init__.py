"""Tests of bpe_studio.engine.encoding."""
