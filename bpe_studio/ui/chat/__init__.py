"""The "Chat" tab: chat messages through a model's chat template."""
