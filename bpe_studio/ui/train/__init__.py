"""The Train tab: the form, live progress and charts, Watch BPE learn, the result."""
