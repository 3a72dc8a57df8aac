"""Start a Python child process that runs a function of ``bpe_studio``, isolated from its surroundings.

Every child process of BPE Studio (the counting workers, the app's training process) starts here, and
never with ``python -m``: ``-m`` puts the working folder first on ``sys.path``, so a ``regex.py`` or
``numpy.py`` lying next to a corpus would be imported, and run, in every child. Instead the child runs

    python -I -c BOOTSTRAP PACKAGE_DIR USER_SITE ENTRY_POINT PARENT_PID DIE_WITH_THREAD

``-I`` (isolated mode) leaves out the working folder, ``PYTHONPATH`` and the user's site-packages, so
``sys.path`` is the standard library and the interpreter's site-packages, nothing else. The bootstrap
then loads ``bpe_studio`` from ``PACKAGE_DIR``, the folder the parent imported it from, by file location:
the child runs the same copy as the parent (a source checkout, an editable install or a wheel) without
that folder's neighbours ever becoming importable, and without anything put before the standard library.
(This is stricter than appending the folder above ``PACKAGE_DIR`` to ``sys.path``, which would make every
other module of a checkout importable.) ``USER_SITE`` is the user's site-packages when the parent uses it
(``pip install --user``), appended so that the dependencies installed there are found; otherwise empty.

Children start in a process group of their own, so Ctrl-C at a terminal (sent to the foreground group)
never reaches them: it is the parent that decides what happens and stops its children (a child killed by
it would make the parent report a crash, and a child interrupted would print a traceback, or, during the
interpreter's start-up, die with "Fatal Python error: init_import_site"). SIGINT and SIGHUP are also
ignored from the bootstrap's first line on, for a signal sent to a child's group on purpose.

The child leaves quietly when its parent is gone (killed, or crashed): it checks the parent's pid a few
times a second, and on Linux it can also ask the kernel to kill it at once (see :func:`start_child`).
A parent that closes the pipes makes the child's reads end with ``EOFError`` and its writes with
``BrokenPipeError``; :func:`child_main` turns both into a quiet exit rather than a traceback.

Example:
    >>> with start_child("bpe_studio.engine.workers.count_worker:main") as proc:
    ...     proc.stdin.close()  # the worker's next read ends: it leaves quietly, as if orphaned
    >>> proc.returncode == EXIT_PARENT_GONE
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import signal
import site
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

#: Seconds between two checks, in the child, that its parent still runs.
PARENT_CHECK_SECONDS = 0.2

#: Exit code of a child that left because its parent was gone (nobody reads it; 128 + SIGHUP, "hang up").
EXIT_PARENT_GONE = 129

# Kept short and free of anything but the standard library: it runs before bpe_studio is importable.
BOOTSTRAP = """\
import signal
for name in ("SIGINT", "SIGHUP"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
import os, sys
from importlib.util import module_from_spec, spec_from_file_location
package, user_site, entry, parent, die_with_thread = sys.argv[1:6]
del sys.argv[1:6]
if user_site:
    import site
    site.addsitedir(user_site)
if package:
    spec = spec_from_file_location(
        "bpe_studio", os.path.join(package, "__init__.py"), submodule_search_locations=[package]
    )
    sys.modules["bpe_studio"] = module = module_from_spec(spec)
    spec.loader.exec_module(module)
from bpe_studio.engine.workers.launch import child_main
child_main(entry, parent_pid=int(parent), die_with_thread=die_with_thread == "1")
"""


def package_dir() -> str:
    """The folder this process imported ``bpe_studio`` from (``""`` if it has none, e.g. a zip file).

    Example:
        >>> Path(package_dir()).name
        'bpe_studio'
    """
    here = Path(__file__).resolve().parents[2]  # bpe_studio/engine/workers/launch.py -> bpe_studio
    return str(here) if (here / "__init__.py").is_file() else ""


def user_site() -> str:
    """The user's site-packages if this process imports from it (``pip install --user``), else ``""``.

    Example:
        >>> user_site() in ("", site.getusersitepackages())
        True
    """
    folder = site.getusersitepackages()
    return folder if site.ENABLE_USER_SITE and folder in sys.path else ""


def child_command(entry_point: str, *, die_with_thread: bool = False) -> list[str]:
    """The command line that runs ``entry_point`` (``"package.module:function"``) in an isolated child.

    Example:
        >>> child_command("bpe_studio.engine.workers.count_worker:main")[1:3]
        ['-I', '-c']
    """
    module, _, function = entry_point.partition(":")
    if not module or not function:
        raise ValueError(f"entry_point: {entry_point!r} is not 'module:function'; write e.g. 'pkg.mod:main'")
    return [
        sys.executable,
        "-I",
        "-c",
        BOOTSTRAP,
        package_dir(),
        user_site(),
        entry_point,
        str(os.getpid()),
        "1" if die_with_thread else "0",
    ]


def start_child(
    entry_point: str,
    *,
    die_with_thread: bool = False,
    stdin: int | IO[Any] | None = subprocess.PIPE,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start a Python child process that calls ``entry_point`` (``"module:function"``), isolated.

    The pipes are unbuffered (``bufsize=0``), so ``select()`` on the child's stdout never misses a
    message held in a buffer. The function's return value becomes the child's exit code.

    Args:
        entry_point: What the child runs, e.g. ``"bpe_studio.engine.workers.count_worker:main"``.
        die_with_thread: On Linux, have the kernel kill the child (SIGKILL) as soon as the thread calling
            this ends, or the whole process (``PR_SET_PDEATHSIG`` counts from the creating *thread*). Use
            it only from a thread that outlives the child, such as the main thread or a thread that waits
            for it. Without it, the child still leaves within :data:`PARENT_CHECK_SECONDS` of its parent's
            death, or at once when it next reads or writes a pipe to it.
        stdin: The child's standard input (default: a pipe).
        stdout: The child's standard output (default: a pipe).
        stderr: The child's standard error (default: this process's).
        env: The child's environment (default: this one's; ``-I`` makes it ignore every ``PYTHON*`` variable).

    Example:
        >>> with start_child("bpe_studio.engine.workers.count_worker:main") as proc:
        ...     proc.stdin.close()  # the worker's next read ends: it leaves quietly, as if orphaned
        >>> proc.returncode == EXIT_PARENT_GONE
        True
    """
    return subprocess.Popen(
        child_command(entry_point, die_with_thread=die_with_thread),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        bufsize=0,
        env=env,
        process_group=0,  # out of the terminal's foreground group: Ctrl-C is the parent's (see above)
    )


def child_main(entry_point: str, *, parent_pid: int, die_with_thread: bool) -> None:
    """Run in the child by :data:`BOOTSTRAP`: watch the parent, call the entry point, exit with its code."""
    if die_with_thread:
        _kill_me_with_parent_thread()
    if os.getppid() != parent_pid:
        os._exit(EXIT_PARENT_GONE)  # the parent died before this child got going
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watch", daemon=True).start()
    module, _, function = entry_point.partition(":")
    try:
        code = getattr(importlib.import_module(module), function)()
        sys.stdout.flush()
    except (BrokenPipeError, EOFError, ConnectionResetError):
        # The parent closed the pipes or died: nobody is left to read a message or a traceback.
        os._exit(EXIT_PARENT_GONE)
    sys.exit(code)


def _watch_parent(parent_pid: int) -> None:
    """Leave at once, quietly, when the parent process is gone (this process is then re-parented)."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(EXIT_PARENT_GONE)


def _kill_me_with_parent_thread() -> None:
    """Linux: ask the kernel for SIGKILL when the thread that started this process ends."""
    if not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1  # from <linux/prctl.h>
    try:
        # CDLL(None): the symbols already loaded, libc's among them (find_library would start a process).
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return  # not glibc/musl, or no prctl: the parent watch still applies


__all__ = [
    "BOOTSTRAP",
    "EXIT_PARENT_GONE",
    "PARENT_CHECK_SECONDS",
    "child_command",
    "package_dir",
    "start_child",
    "user_site",
]


# Stopping a child: every wait has a deadline (see stop_process).


#: Seconds a worker is given to end after SIGTERM, and again after SIGKILL.
STOP_TIMEOUT = 5.0


def stop_process(proc: subprocess.Popen[bytes], *, timeout: float | None = None) -> None:
    """Stop a worker process (if still running: terminate, then kill after ``timeout`` s, default
    :data:`STOP_TIMEOUT`) and close its pipes.

    Every wait has a deadline: a process that even SIGKILL does not end at once (stuck in the kernel, on a
    hung network file system) is left to the kernel after another ``timeout`` s rather than waited for
    forever; the caller goes on.
    """
    timeout = STOP_TIMEOUT if timeout is None else timeout
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def death_message(proc: subprocess.Popen[bytes]) -> str:
    """Why a worker's pipe ended, in words (it has ended, so the wait is short; bounded all the same)."""
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "a counting worker process died (it closed its pipe but did not end)"
    if code == -signal.SIGKILL:
        # The kernel's out-of-memory killer sends SIGKILL.
        return (
            "a counting worker process died (killed by SIGKILL); this is often a lack of memory: try fewer "
            "workers or a smaller chunk_size"
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:  # a real-time signal has no name
            name = f"signal {-code}"
        return f"a counting worker process died (stopped by {name}, sent from outside bpe-studio)"
    return (
        f"a counting worker process died (exit code {code}); this is often a lack of memory: try fewer "
        "workers or a smaller chunk_size"
    )
