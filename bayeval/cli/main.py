"""``bayeval`` command line: a thin layer over the public API.

Each sub-command lives in its own module exposing ``register(subparsers)``; the module's
handler receives the parsed arguments and returns an exit status. Bad input of any kind
(:class:`~bayeval.errors.BayevalInputError`, unreadable files) ends with a one-line
``bayeval: error: ...`` on stderr and exit status 2, never a traceback; an irregularity a reader
tolerated (:class:`~bayeval.errors.DataNotice`) is one line ``bayeval: note: ...``; with ``--quiet``
(any command) those notes are counted and said in one line at the end.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import warnings
from collections.abc import Sequence

from bayeval import __version__
from bayeval.errors import BayevalInputError, DataNotice

__all__ = ["build_parser", "main"]

# sub-command modules, in the order `bayeval --help` lists them
_COMMANDS = ("check", "demo", "measures", "sampled", "evaluate", "compare", "estimate", "report", "design", "bias",
             "judge", "experiment")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: usage line + exit 2
        self.print_usage(sys.stderr)
        self.exit(2, f"bayeval: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bayeval", description="Evaluate search systems honestly with incomplete judgments.")
    parser.add_argument("--version", action="version", version=f"bayeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"bayeval.cli.{name}")
        except ModuleNotFoundError as exc:  # a command whose module is absent is simply not offered
            if exc.name != f"bayeval.cli.{name}":
                raise
            continue
        module.register(sub)
    _add_quiet(parser)
    return parser


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet`` on every command (before or after its name): the readers' notes become one line."""
    if "--quiet" not in parser._option_string_actions:
        parser.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                            help="one summary line instead of every note about tolerated irregularities in the "
                                 "data ('bayeval check' lists them all)")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_quiet(child)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    quiet = bool(getattr(args, "quiet", False))
    hidden = [0]

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if quiet and issubclass(category, DataNotice):
            hidden[0] += 1
        else:
            _show_notice(message, category, filename, lineno, file, line)

    def terminated(signum, frame):  # a timeout's SIGTERM ends the run as Ctrl-C does: workers stopped, files closed
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread (an embedding application): leave its signals alone
        previous = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", DataNotice)
            warnings.showwarning = show
            try:
                return int(args.func(args) or 0)
            finally:
                if hidden[0]:
                    print(f"bayeval: note: {hidden[0]} notes about the data not shown (--quiet; 'bayeval check' "
                          "lists them)", file=sys.stderr)
    except BayevalInputError as exc:
        print(f"bayeval: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"bayeval: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("bayeval: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


_showwarning = warnings.showwarning


def _show_notice(message, category, filename, lineno, file=None, line=None) -> None:
    """What a reader tolerated (:class:`~bayeval.errors.DataNotice`): one line ``bayeval: note: ...``."""
    if issubclass(category, DataNotice):
        print(f"bayeval: note: {message}", file=sys.stderr)
    else:
        _showwarning(message, category, filename, lineno, file, line)


if __name__ == "__main__":
    sys.exit(main())
