"""What the package writes to disk is its user's alone: files 0600, folders 0700.

Spooled turns, dead letters, exports and a Milvus Lite store hold what people
said; on a machine with other accounts none of it may be readable by them,
whatever the process's umask. The rules every writer of the package follows:

- **Folders.** A folder the package creates, and each missing parent on the
  way, is created 0700. A folder that already exists belongs to the user
  (``/var/lib/app``, the working directory) and is left as it is.
- **Files.** A file the package creates is 0600. A file it opens to write
  again (a spool, a lock, a ledger an earlier version made 0644) loses its
  group and other bits at that open. Files are opened with ``O_NOFOLLOW``:
  a symbolic link in a file's place is refused (``ELOOP``), never written
  through.
- **Whole rewrites** (compaction, purge, the row ledger, an export) write a
  new file under an unpredictable name in the target's folder, created
  exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``, 0600), then ``fsync``,
  rename over the target and ``fsync`` the folder: no link planted in the
  folder is followed, and a crash leaves the old file or the new one whole.
  A crash can leave the temporary file behind; :func:`remove_stale_temps`
  removes those of one target, and its owner calls it when it opens.

Limits: modes are POSIX permission bits (Windows ignores them); a file that
another account owns cannot be narrowed, and that open fails with
``PermissionError``. Cost: one ``fstat`` per open, one ``fchmod`` where bits
were wider.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

FILE_MODE = 0o600
DIR_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_SUFFIX = ".tmp"
_TOKEN_HEX = 8  # bytes of randomness in a temporary name: 16 hex digits


def make_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and each missing parent 0700; existing folders stay as they are.

    Raises:
        OSError: a folder cannot be created (or a file is in the way).
    """
    missing: list[Path] = []
    folder = Path(path)
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            os.mkdir(each, DIR_MODE)
        except FileExistsError:
            if not each.is_dir():
                raise
            continue  # made meanwhile by another thread or process: theirs
        os.chmod(each, DIR_MODE)  # exactly 0700, whatever the umask took away


def open_private(
    path: str | os.PathLike[str], flags: int, *, create: bool = True
) -> int:
    """``os.open`` for writing a file of ours: created 0600, narrowed if found wider.

    Args:
        path: the file.
        flags: the access flags (``os.O_WRONLY | os.O_APPEND``, ``os.O_RDWR``);
            ``O_NOFOLLOW`` and ``O_CLOEXEC`` are added.
        create: add ``O_CREAT`` (a missing file raises ``FileNotFoundError``
            without it).

    Returns:
        The open descriptor.

    Raises:
        OSError: the file cannot be opened, or a symbolic link is in its
            place (``ELOOP``, with a message saying what to do).
    """
    try:
        flags |= _NOFOLLOW | _CLOEXEC | (os.O_CREAT if create else 0)
        fd = os.open(path, flags, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP,
                "is a symbolic link; hindsight-lg writes its files only in "
                "place, never through a link: remove the link or pass the "
                "path of the real file",
                os.fspath(path),
            ) from None
        raise
    try:
        narrow(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def narrow_file(path: str | os.PathLike[str]) -> None:
    """Narrow a file of ours to its owner if it exists (see :func:`open_private`).

    Raises:
        OSError: a symbolic link is in its place, or it cannot be changed.
    """
    try:
        fd = open_private(path, os.O_RDONLY, create=False)
    except FileNotFoundError:
        return
    os.close(fd)


def narrow(fd: int) -> None:
    """Take the group and other bits off an open file or folder."""
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o077:
        os.fchmod(fd, mode & 0o700)


def replace_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the file ``path``, atomically and durably, 0600.

    See the module notes: an exclusive temporary file in the same folder,
    ``fsync``, rename, folder ``fsync``.

    Raises:
        OSError: the folder cannot be written (the target is unchanged).
    """
    target = Path(path)
    tmp, fd = _exclusive_temp(target)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


@contextmanager
def private_output(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at ``path`` whole, 0600, or not at all.

    Written like :func:`replace_private`; when the block raises, the
    temporary file is removed and whatever was at ``path`` stays.

    Raises:
        OSError: the folder cannot be written (named as ``path``).
    """
    target = Path(path)
    tmp, fd = _exclusive_temp(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def _exclusive_temp(target: Path) -> tuple[Path, int]:
    """A new file beside ``target`` that no one could have named before us.

    Raises:
        OSError: it cannot be created; the error names ``target``.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    while True:
        name = f".{target.name}.{secrets.token_hex(_TOKEN_HEX)}{_TEMP_SUFFIX}"
        tmp = target.with_name(name)
        try:
            return tmp, os.open(tmp, flags, FILE_MODE)
        except FileExistsError:  # 2**-64 per try, or a planted name
            continue
        except OSError as exc:  # the caller knows the target, not our name
            raise OSError(exc.errno, exc.strerror, os.fspath(target)) from None


def remove_stale_temps(path: str | os.PathLike[str]) -> list[Path]:
    """Remove what an interrupted :func:`replace_private` of ``path`` left behind.

    Call it only while no rewrite of ``path`` can be running (its owner holds
    it). The plain ``<name>.tmp`` earlier versions used goes too: it may hold
    text a ``forget`` has erased since.

    Returns:
        The files removed.
    """
    target = Path(path)
    ours = re.compile(
        rf"\.{re.escape(target.name)}\.[0-9a-f]{{{2 * _TOKEN_HEX}}}"
        + re.escape(_TEMP_SUFFIX)
    )
    legacy = target.name + _TEMP_SUFFIX
    removed = []
    try:
        names = os.listdir(target.parent)
    except FileNotFoundError:
        return []
    for name in names:
        if name == legacy or ours.fullmatch(name):
            leftover = target.with_name(name)
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def narrow_tree(root: str | os.PathLike[str]) -> list[str]:
    """Take the group and other bits off ``root`` and everything beneath it.

    For a folder another program fills (Milvus Lite's store). Symbolic links
    are neither followed nor changed; a file removed meanwhile is skipped.

    Returns:
        The paths that could not be narrowed, each with its error.
    """
    failed: list[str] = []
    _narrow_path(os.fspath(root), failed)
    for folder, dirs, files in os.walk(root, onerror=lambda e: failed.append(str(e))):
        for name in (*dirs, *files):
            _narrow_path(os.path.join(folder, name), failed)
    return failed


def _narrow_path(path: str, failed: list[str]) -> None:
    try:
        info = os.lstat(path)
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
            os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
    except FileNotFoundError:
        pass
    except OSError as exc:
        failed.append(f"{path}: {exc.strerror or exc}")


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable.

    Raises:
        OSError: the folder's ``fsync`` failed (an I/O error), not merely
            unsupported where folders cannot be opened or synced.
    """
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # platforms that cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written; a write of 0 bytes is an error."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.ENOSPC, "no space left on device (short write)")
        view = view[n:]
