"""Result files that appear only complete, shared by every command and helper that writes one.

``Output(path)`` gives ``.file`` (binary, write mode). A regular file (or a name not taken yet) is
written beside itself under a temporary name and renamed into place by ``commit()``, so a failure,
a full disk or Ctrl-C never leaves a truncated file that reads as a result, and an old file stays
as it was; a symlink's target is replaced, the link stays. Anything else (/dev/null, /dev/full, a
FIFO, a device) is written in place: renaming over it would replace the device with a file.
``discard()`` (safe after ``commit()``) closes and removes the temporary file. As a context
manager it commits when the block ends normally and discards otherwise.

For a staged file: ``mode`` sets its permissions (default: the old file's, else 0666 less the
umask), ``sync`` puts it on disk before the rename, and ``check(temporary_path)`` may raise to
refuse it before it replaces anything.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile


class Output:
    def __init__(self, path, *, mode: int | None = None, sync: bool = False, check=None):
        path = os.fspath(path)
        self.path = path
        try:
            st = os.stat(path)
            staged = stat.S_ISREG(st.st_mode)
        except FileNotFoundError:
            st, staged = None, True
        except OSError:
            st, staged = None, False
        self._tmp = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", path)
        if not staged:
            self.file = open(path, "wb")
            return
        target = os.path.realpath(path)
        try:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".simdex-tmp",
                                             dir=os.path.dirname(target))
        except OSError as e:  # name the user's path, not the temporary one
            raise OSError(e.errno, e.strerror, path) from None
        self._target = target
        if mode is None:
            mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask()
        self._mode, self._sync, self._check = mode, sync, check
        self.file = os.fdopen(fd, "wb")

    @property
    def temporary(self) -> str | None:
        """The staged file's temporary name (None when written in place, or once renamed)."""
        return self._tmp

    def commit(self) -> None:
        if self._tmp is not None and self._sync:
            self.file.flush()
            os.fsync(self.file.fileno())
        self.file.close()  # a write error of the last buffered bytes surfaces here
        if self._tmp is not None:
            os.chmod(self._tmp, self._mode)
            if self._check is not None:
                self._check(self._tmp)
            os.replace(self._tmp, self._target)
            self._tmp = None

    def discard(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass  # the caller is already reporting a failure
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None

    def __enter__(self) -> "Output":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self.commit()
        finally:
            self.discard()
        return False


def write_all(f, data) -> None:
    """Writes every byte of data: a raw (unbuffered) file's write() may take only part of it
    (stdout under PYTHONUNBUFFERED or ``python -u`` is one), and dropping the rest silently
    truncated the output."""
    view = memoryview(data).cast("B")
    while view:
        n = f.write(view)
        if n is None:  # a non-blocking descriptor that is not ready: nothing was written
            raise BlockingIOError(11, "output is not ready (non-blocking)")
        view = view[n:]


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def end_by_sigpipe() -> int:
    """The reader of stdout went away (``simdex ... | head -1``): end as cat does, silently, by
    SIGPIPE (exit status 141 in a shell), not with status 1 and a traceback. Returns 1 where
    there is no SIGPIPE."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
    except (OSError, ValueError, AttributeError):
        pass
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    return 1


def raise_on_termination() -> None:
    """SIGTERM (kill, a timeout, a job scheduler) and SIGHUP (the terminal closed) unwind as an
    exception, so every ``Output`` being written discards its temporary file instead of leaving
    it beside the result; the exit status is the signal's own (143, 129). A signal that is
    ignored (nohup) or handled by someone else is left alone."""

    def terminated(signum, frame):
        signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, terminated)
