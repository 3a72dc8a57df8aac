"""Encoding: a trained tokenizer at work (the Tokenizer, whole corpora, evaluation, analysis)."""
