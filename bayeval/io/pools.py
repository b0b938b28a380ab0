"""Files that describe a judging pool: run groups and types, and which groups contributed each judged document.

- :class:`RunGroups` — each run's group (participant) and type (``automatic`` / ``manual``), read from a run
  table such as TREC-8's ``runs.tsv`` (:func:`read_run_groups`);
- :class:`Contributions` — for every judged document, the groups whose pooled runs retrieved it within the
  pool depth, read from an annotated qrels file (``topic 0 docno grade n group…``, :func:`read_contributions`).

The biased-pool studies (``bayeval.bias``, docs/bias.md) use them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io._files import decode, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_integer
from bayeval.io.tables import read_run_table

__all__ = ["RUN_TYPES", "Contributions", "RunGroups", "read_contributions", "read_run_groups"]

RUN_TYPES = ("automatic", "manual")


@dataclass(frozen=True, eq=False)
class RunGroups:
    """Group and type (``automatic`` or ``manual``) of every run.

    Attributes
    ----------
    group : mapping run → group
    kind : mapping run → ``"automatic"`` or ``"manual"``

    Examples
    --------
    >>> rg = RunGroups({"a1": "A", "a2": "A", "b": "B"}, {"a1": "automatic", "a2": "manual", "b": "automatic"})
    >>> rg.runs_of("A"), rg.groups, rg.manual
    (('a1', 'a2'), ('A', 'B'), ('a2',))
    """

    group: Mapping[str, str]
    kind: Mapping[str, str]

    def __post_init__(self) -> None:
        group = {str(r): str(g) for r, g in self.group.items()}
        kind = {str(r): str(k) for r, k in self.kind.items()}
        if set(group) != set(kind):
            raise BayevalInputError("kind: must name the same runs as group")
        bad = sorted({k for k in kind.values() if k not in RUN_TYPES})
        if bad:
            raise BayevalInputError(f"kind: run types must be 'automatic' or 'manual', got {bad}")
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "kind", kind)

    @classmethod
    def singletons(cls, runs: Iterable[str], kind: str = "automatic") -> RunGroups:
        """Every run its own group (a leave-one-run-out study)."""
        runs = [str(r) for r in runs]
        return cls({r: r for r in runs}, {r: kind for r in runs})

    @property
    def groups(self) -> tuple[str, ...]:
        """Groups in order of first appearance."""
        return tuple(dict.fromkeys(self.group.values()))

    @property
    def manual(self) -> tuple[str, ...]:
        return tuple(r for r, k in self.kind.items() if k == "manual")

    def runs_of(self, group: str) -> tuple[str, ...]:
        return tuple(r for r, g in self.group.items() if g == group)

    def check_runs(self, runs: Iterable[str], argument: str = "runs") -> None:
        """Raise naming the runs that have no group."""
        missing = [r for r in runs if r not in self.group]
        if missing:
            raise BayevalInputError(f"{argument}: no group for run(s) {missing[:5]}"
                                    f"{' …' if len(missing) > 5 else ''} (add them to the groups table)")


def read_run_groups(path: str | os.PathLike) -> RunGroups:
    """Read a run table (:func:`bayeval.io.read_run_table`) with columns ``run``, ``group``, ``type``.

    Other columns (TREC-8's ``judging_priority``) are ignored. ``type`` is ``automatic`` or
    ``manual`` (case-insensitive; ``auto`` accepted).

    Raises
    ------
    FileFormatError
        Naming the file and line: missing column, unknown type, a run listed twice with different cells.
    """
    table = read_run_table(path, required=("run", "group", "type"))
    gcol = "group" if "group" in table.columns else "site"
    group, kind = {}, {}
    for run, g, k, lineno in zip(table["run"], table[gcol], table["type"], table["line"], strict=True):
        k = {"auto": "automatic"}.get(k.lower(), k.lower())
        if k not in RUN_TYPES:
            raise FileFormatError(str(path), int(lineno), f"type {quoted(k)} is neither automatic nor manual")
        group[run], kind[run] = g, k
    return RunGroups(group, kind)


@dataclass(frozen=True, eq=False)
class Contributions:
    """For each topic and judged document, the groups whose pooled runs retrieved it.

    Attributes
    ----------
    by_topic : mapping topic → mapping docno → frozenset of groups

    Examples
    --------
    >>> c = Contributions({"1": {"d1": frozenset({"A"}), "d2": frozenset({"A", "B"})}})
    >>> c.unique_to("1", "A")
    ('d1',)
    """

    by_topic: Mapping[str, Mapping[str, frozenset]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_topic", {str(t): {str(d): frozenset(g) for d, g in m.items()}
                                              for t, m in self.by_topic.items()})

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(sorted({g for m in self.by_topic.values() for gs in m.values() for g in gs}))

    def contributors(self, topic: str, docno: str) -> frozenset:
        """The groups that contributed ``docno`` to ``topic``'s pool (empty if unknown)."""
        return self.by_topic.get(str(topic), {}).get(str(docno), frozenset())

    def unique_to(self, topic: str, group: str) -> tuple[str, ...]:
        """Documents that only ``group`` contributed to ``topic``."""
        return tuple(d for d, gs in self.by_topic.get(str(topic), {}).items() if gs == {group})

    def unique_counts(self) -> dict[str, int]:
        """Number of (topic, document) pairs each group alone contributed."""
        out: dict[str, int] = {}
        for m in self.by_topic.values():
            for gs in m.values():
                if len(gs) == 1:
                    (g,) = gs
                    out[g] = out.get(g, 0) + 1
        return out


def read_contributions(path: str | os.PathLike) -> Contributions:
    """Read an annotated qrels file: ``topic iteration docno grade n group_1 … group_n``.

    Raises
    ------
    FileFormatError
        Naming the file and line when a line has fewer than 5 columns, ``n`` is not an integer or
        does not match the number of groups listed, or a document appears twice for a topic.
    """
    path = str(path)
    out: dict[str, dict[str, frozenset]] = {}
    for lineno, raw in enumerate(split_lines(read_bytes(path)), start=1):
        fields = decode(raw, path, lineno).split()
        if not fields:
            continue
        if len(fields) < 5:
            raise FileFormatError(path, lineno, "expected 'topic iteration docno grade n group…'")
        n = as_integer(fields[4])
        if n is None:
            raise FileFormatError(path, lineno, f"group count {quoted(fields[4])} is not an integer")
        groups = fields[5:]
        if n != len(groups):
            raise FileFormatError(path, lineno, f"says {n} group(s) but lists {len(groups)}")
        topic = out.setdefault(fields[0], {})
        if fields[2] in topic:
            raise FileFormatError(path, lineno, f"document {quoted(fields[2])} listed twice for topic "
                                                f"{quoted(fields[0])}")
        topic[fields[2]] = frozenset(groups)
    if not out:
        raise FileFormatError(path, None, "empty file: no annotated judgments")
    return Contributions(out)
