"""Exceptions raised for bad input.

Every problem a user can cause (a malformed file, a bad argument) is reported with a
:class:`BayevalInputError` whose message is one line naming the file and line, or the
argument. The CLI turns it into ``bayeval: error: ...`` and exit status 2.
"""

from __future__ import annotations

__all__ = ["BayevalInputError", "DataNotice", "FileFormatError"]


class BayevalInputError(ValueError):
    """Bad input supplied by the user (argument value, option, data).

    Parameters
    ----------
    message : str
        What is wrong, one line; kept as the attribute ``reason``.
    argument : str, optional
        The offending argument's name, kept as the attribute ``argument`` (so that a caller can attribute
        the problem to its own argument or a file line without parsing the message); the error then reads
        ``"{argument}: {message}"``.
    """

    def __init__(self, message: str = "", *, argument: str | None = None) -> None:
        self.argument = argument
        self.reason = message
        super().__init__(f"{argument}: {message}" if argument else message)


class FileFormatError(BayevalInputError):
    """A malformed input file.

    Parameters
    ----------
    path : str
        The file.
    line : int or None
        1-based line number of the offending line (``None`` for whole-file problems).
    message : str
        What is wrong.
    """

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
        self.reason = message

    def __reduce__(self):  # rebuilt from its three fields, so that it crosses process boundaries (workers)
        return type(self), (self.path, self.line, self.reason)


class DataNotice(UserWarning):
    """An irregularity a reader tolerated (a renamed run, duplicate documents dropped, ...).

    Issued with :func:`warnings.warn`; its message is one line naming the file (and the first
    line concerned). The CLI prints it as ``bayeval: note: ...``; ``strict=True`` (``--strict``)
    turns each of them into a :class:`FileFormatError` instead (docs/data.md lists them).
    """
