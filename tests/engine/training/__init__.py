"""Tests of bpe_studio.engine.training."""
