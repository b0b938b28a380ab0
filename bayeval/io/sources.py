"""What the judging page shows besides the campaign, read from the paths given: document texts and topic statements.

Texts: a file of ``docno<TAB>text`` lines or JSON lines (:func:`bayeval.io.read_texts`), or Cranfield's directory
(``cran.all.1400.gz``: title + abstract; its queries ``cran.qry.gz`` become the topics). Topics: a TREC
topic file or ``topic<TAB>title[<TAB>description[<TAB>narrative]]`` lines (:func:`bayeval.io.topics.read_topics`).
Only the paths given on the command line are read, once, at start.
"""

from __future__ import annotations

from pathlib import Path

from bayeval.errors import BayevalInputError
from bayeval.io.cranfield import read_cranfield
from bayeval.io.texts import read_texts
from bayeval.io.topics import TopicStatement, read_topics

__all__ = ["cranfield_dir", "load_texts", "load_topics"]

_CRAN_DOCS = "cran.all.1400.gz"


def cranfield_dir(path) -> Path | None:
    """The Cranfield directory ``path`` names (the directory or one of its files), or None."""
    p = Path(path)
    if p.is_dir() and (p / _CRAN_DOCS).is_file():
        return p
    if p.is_file() and p.name in (_CRAN_DOCS, "cran.qry.gz") and (p.parent / _CRAN_DOCS).is_file():
        return p.parent
    return None


def load_texts(path) -> dict[str, str]:
    """Document texts by docno from ``path`` (see the module notes)."""
    cran = cranfield_dir(path)
    if cran is not None:
        return dict(read_cranfield(cran).texts)
    if Path(path).is_dir():
        raise BayevalInputError(f"texts: {path} is a directory without {_CRAN_DOCS}; "
                                "give a docno<TAB>text or JSON lines file")
    return read_texts(path)


def load_topics(path) -> dict[str, TopicStatement]:
    """Topic statements by topic id from ``path`` (see the module notes)."""
    cran = cranfield_dir(path)
    if cran is not None:
        return {q: TopicStatement(q, text) for q, text in read_cranfield(cran).queries.items()}
    if Path(path).is_dir():
        raise BayevalInputError(f"topics: {path} is a directory; give a topics file")
    return read_topics(path)
