"""Tests of bpe_studio.engine.corpus."""
