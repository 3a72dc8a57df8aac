"""Tests of bpe_studio.engine.formats."""
