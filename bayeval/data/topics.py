"""Ordering of topic identifiers."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["sort_topics"]


def _key(topic: str) -> tuple:
    return (0, int(topic), topic) if topic.isdigit() else (1, 0, topic)


def sort_topics(topics: Iterable[str]) -> list[str]:
    """Natural order: numeric identifiers by value first, then the others by byte order.

    >>> sort_topics(["10", "9", "b", "a"])
    ['9', '10', 'a', 'b']
    """
    return sorted({str(t) for t in topics}, key=_key)
