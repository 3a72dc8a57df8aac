"""The Playground tab: type text, see its tokens, ids and bytes; decode ids; cut the vocabulary with the
slider."""
