"""Reading topic statements: TREC topic files (``<top>`` blocks) and ``topic<TAB>title[<TAB>desc[<TAB>narr]]``.

A TREC topic file is a sequence of ``<top> … </top>`` blocks with the fields ``<num> Number: 401``,
``<title>``, ``<desc> Description:`` and ``<narr> Narrative:`` (each running to the next tag; the
``Number:``/``Description:``/``Narrative:`` labels are dropped). Any other file is read as tab-separated
lines: topic id, title, and optionally description and narrative. Blank lines are skipped; plain or gzip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bayeval.errors import FileFormatError
from bayeval.io._files import decode, quoted, read_bytes, split_lines

__all__ = ["TopicStatement", "read_topics"]

_TAG = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(number|description|narrative)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class TopicStatement:
    """What an assessor reads about a topic: its ``title``, ``description`` and ``narrative`` (``""`` when absent)."""

    topic: str
    title: str
    description: str = ""
    narrative: str = ""


def _clean(text: str) -> str:
    return " ".join(_LABEL.sub("", text, count=1).split())


def _read_trec(path: str, lines: list[str]) -> dict[str, TopicStatement]:
    out: dict[str, TopicStatement] = {}
    block: list[tuple[int, str]] | None = None
    start = 0
    for lineno, line in enumerate(lines, start=1):
        low = line.strip().lower()
        if low == "<top>":
            if block is not None:
                raise FileFormatError(path, lineno, "<top> inside a topic (missing </top>)")
            block, start = [], lineno
        elif low == "</top>":
            if block is None:
                raise FileFormatError(path, lineno, "</top> without <top>")
            text = "\n".join(t for _, t in block)
            parts = _TAG.split(text)
            fields = {parts[k].lower(): _clean(parts[k + 1]) for k in range(1, len(parts) - 1, 2)}
            num = fields.get("num", "")
            if not num:
                raise FileFormatError(path, start, "topic without a <num>")
            if num in out:
                raise FileFormatError(path, start, f"topic {quoted(num)} listed twice")
            out[num] = TopicStatement(num, fields.get("title", ""), fields.get("desc", ""), fields.get("narr", ""))
            block = None
        elif block is not None:
            block.append((lineno, line))
    if block is not None:
        raise FileFormatError(path, start, "<top> without </top>")
    return out


def read_topics(path) -> dict[str, TopicStatement]:
    """Read topic statements (see the module notes); returns topic id → :class:`TopicStatement`.

    Raises
    ------
    FileFormatError
        Naming file and line: an unclosed ``<top>``, a topic without a number or listed twice, a
        tab-separated line without a title.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.txt")
    >>> _ = open(p, "w").write("<top>\\n<num> Number: 401\\n<title> foreign minorities\\n<desc> Description:\\n"
    ...                        "Which minorities?\\n</top>\\n")
    >>> read_topics(p)["401"].description
    'Which minorities?'
    """
    path = str(path)
    lines = [decode(raw, path, k).rstrip("\r") for k, raw in enumerate(split_lines(read_bytes(path)), start=1)]
    if any(line.strip().lower() == "<top>" for line in lines):
        out = _read_trec(path, lines)
    else:
        out = {}
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = [f.strip() for f in line.split("\t")]
            if len(fields) < 2 or not fields[0] or not fields[1]:
                raise FileFormatError(path, lineno, "expected 'topic<TAB>title[<TAB>description[<TAB>narrative]]'")
            if fields[0] in out:
                raise FileFormatError(path, lineno, f"topic {quoted(fields[0])} listed twice")
            out[fields[0]] = TopicStatement(fields[0], *(fields[1:4] + ["", ""])[:3])
    if not out:
        raise FileFormatError(path, None, "empty file: no topics")
    return out
