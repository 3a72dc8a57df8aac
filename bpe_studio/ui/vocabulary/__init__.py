"""The Vocabulary tab: every token in a searchable table, with its details and merge tree."""
