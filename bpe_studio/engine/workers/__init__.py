"""Workers: how the engine runs work beside itself (isolated child processes, a task pool, ordered thread
maps, the worker entry points)."""
