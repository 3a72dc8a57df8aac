"""Tests of bpe_studio.engine.workers."""
