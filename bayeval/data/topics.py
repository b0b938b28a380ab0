"""Ordering of topic identifiers."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["sort_topics"]


def _key(topic: str) -> tuple:
    # ASCII digits by value, without int() (a 5,000-digit id would exceed Python's conversion limit)
    if topic.isascii() and topic.isdigit():
        value = topic.lstrip("0")
        return (0, len(value), value, topic)
    return (1, 0, "", topic)


def sort_topics(topics: Iterable[str]) -> list[str]:
    """Natural order: numeric identifiers by value first, then the others by byte order.

    >>> sort_topics(["10", "9", "b", "a", "009"])
    ['009', '9', '10', 'a', 'b']
    """
    return sorted({str(t) for t in topics}, key=_key)
