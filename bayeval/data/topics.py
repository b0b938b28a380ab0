"""Ordering of topic identifiers, and the mapping over topics that keeps it (:class:`TopicMapping`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

__all__ = ["TopicMapping", "sort_topics"]


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


class TopicMapping(Mapping):
    """A mapping topic -> per-topic data iterated in natural topic order (:func:`sort_topics`).

    A subclass sets ``_topics`` (its topics, sorted) and defines ``__getitem__``; iteration, ``len`` and
    :attr:`topics` follow ``_topics``.
    """

    _topics: tuple[str, ...]

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics)

    def __len__(self) -> int:
        return len(self._topics)

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics in natural order."""
        return self._topics
