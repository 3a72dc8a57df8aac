"""Training: from pre-token counts to merges (the trainer's phases, counting, the merge loop, checkpoints,
training from an iterator)."""
