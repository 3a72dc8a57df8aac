"""The Compare tab: tokenizers side by side on a text, and their compression on a corpus."""
