"""What the readers find in a collection: ``bayeval check``, the first command to run on new data.

:func:`check_collection` reads a qrels file and run files with the readers of :mod:`bayeval.io`,
keeping going past a bad file, and reports per file what it found — topics, documents per topic,
repeated documents dropped, tied scores, renamed runs, topics missing on either side — and, per
run, how incomplete the judgments are for it:

.. math::

    \\mathrm{judged@}k = \\frac{1}{k}\\sum_{r \\le k} j_r, \\qquad
    \\mathrm{unjudged@100} = 1 - \\frac{\\sum_{r \\le \\min(100, n)} j_r}{\\min(100, n)},

averaged over the topics the run answers that have judgments (``j_r`` = 1 when the document at rank
``r`` is judged, ``n`` the number retrieved; judged@k divides by ``k`` as trec_eval's ``judged_k``
does, :func:`bayeval.measures.judged_at`). docs/data.md lists the irregularities and the rules.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.labels import SCORE_BINS, AssessorLabels, score_bin_edges
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError, DataNotice
from bayeval.io.qrels import read_qrels
from bayeval.io.runs import _notify, read_run_files
from bayeval.measures import judged_at

__all__ = ["COLUMN_LEGEND", "CollectionCheck", "LabelCheck", "check_collection", "check_labels"]

#: The legend under the per-run table of :meth:`CollectionCheck.summary`.
COLUMN_LEGEND = {
    "run": "the run's name (its tag, or its file's name where tags repeat)",
    "layout": "file format the reader recognised",
    "topics": "topics the run answers",
    "docs_per_topic": "documents retrieved per topic (median)",
    "repeated": "repeated documents dropped (the first is kept)",
    "ties": "documents with the same score as the one ranked above (ordered as trec_eval orders ties)",
    "judged@10, judged@100": "judged share of the top k, divided by k even when a run returns fewer than k "
                             "(trec_eval's judged_k): a run of 52 documents has judged@100 <= 0.52",
    "unjudged@100": "unjudged share of the documents the run does return in its top 100",
    "remarks": "what the readers changed or tolerated",
}

_COLUMNS = ["run", "file", "layout", "topics", "docs_per_topic", "repeated", "ties", "judged@10", "judged@100",
            "unjudged@100", "remarks"]


@dataclass(frozen=True)
class CollectionCheck:
    """The result of :func:`check_collection`.

    Attributes
    ----------
    qrels_path : str
    qrels_summary : str or None
        One line on the qrels (``None`` when they could not be read).
    runs : pandas.DataFrame
        One row per run read (columns: run, file, layout, topics, docs_per_topic, repeated, ties,
        judged@10, judged@100, unjudged@100, remarks).
    only_in_runs, only_in_qrels : tuple of str
        Topics some run answers that have no judgments, and judged topics no run answers — neither
        is evaluated (trec_eval's rule; docs/data.md).
    evaluated : int
        Topics with judgments and results of at least one run.
    notes : tuple of str
        Every irregularity tolerated (one line each).
    errors : tuple of str
        Every file that could not be read (one line each, naming file and line).
    """

    qrels_path: str
    qrels_summary: str | None
    runs: pd.DataFrame
    only_in_runs: tuple[str, ...]
    only_in_qrels: tuple[str, ...]
    evaluated: int
    notes: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether everything loaded (``bayeval check`` exits 0, else 2)."""
        return not self.errors

    def to_frame(self) -> pd.DataFrame:
        """The per-run table."""
        return self.runs.copy()

    def summary(self, max_rows: int = 20) -> str:
        """A one-screen report; with more than ``max_rows`` runs, those with remarks and the least judged."""
        lines = [f"qrels   {self.qrels_summary or self.qrels_path + ': not read'}"]
        layouts = self.runs["layout"].value_counts()
        kinds = ", ".join(f"{n} {k}" for k, n in layouts.items())
        lines.append(f"runs    {len(self.runs)} read{f' ({kinds})' if kinds else ''}, "
                     f"{len(self.errors)} could not be read")
        if self.qrels_summary is not None and len(self.runs):
            lines.append(f"topics  {self.evaluated} evaluated (judged and answered by some run); "
                         f"only in runs: {_few(self.only_in_runs)}; only in qrels: {_few(self.only_in_qrels)}")
        if len(self.runs):
            table = self.runs
            hidden = 0
            if len(table) > max_rows:
                flagged = table["remarks"] != ""
                order = np.lexsort((table["judged@10"].to_numpy(), ~flagged.to_numpy()))
                table = table.iloc[order[:max_rows]]
                hidden = len(self.runs) - max_rows
            lines.append("")
            lines.extend(_render(table.drop(columns=["file"])))
            if hidden:
                lines.append(f"… {hidden} more runs (those with remarks and the least judged are shown; "
                             "--all lists every run)")
            lines += [f"  {c}: {t}" for c, t in COLUMN_LEGEND.items()]
        for title, items in (("notes", self.notes), ("errors", self.errors)):
            if items:
                lines += ["", title] + [f"  {m}" for m in items]
        lines += ["", "everything loads" if self.ok else "some files cannot be read: fix them, or see docs/data.md"]
        return "\n".join(lines)


@dataclass(frozen=True)
class LabelCheck:
    """How an automatic assessor's labels overlap the human judgments (:func:`check_labels`).

    Attributes
    ----------
    name, kind : str
        The assessor's (:class:`~bayeval.data.AssessorLabels`).
    pairs : int
        Labelled pairs.
    both : int
        Pairs both labelled and judged: what the map from label to relevance learns from.
    per_topic : pandas.Series
        Per judged topic, its pairs both labelled and judged (0 where none).
    unjudged : int
        Labelled pairs of judged topics that nobody judged: where the labels add evidence.
    label_only_topics : tuple of str
        Labelled topics without judgments (their labels are not used).
    agreement : pandas.DataFrame
        Pairs both labelled and judged, human grade (rows) × label (columns: the grade, or for scores one of
        ``bayeval.data.labels.SCORE_BINS`` quantile bins of them).
    """

    name: str
    kind: str
    pairs: int
    both: int
    per_topic: pd.Series
    unjudged: int
    label_only_topics: tuple[str, ...]
    agreement: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The agreement table."""
        return self.agreement.copy()

    def summary(self) -> str:
        """A few lines: the overlap, per topic min and median, and the agreement table."""
        pt = self.per_topic
        lines = [f"labels  {self.name} ({self.kind}): {self.pairs} pairs; {self.both} also judged (per judged topic "
                 f"min {int(pt.min()) if len(pt) else 0}, median {float(pt.median()) if len(pt) else 0:g}, "
                 f"{int((pt == 0).sum())} topics with none); {self.unjudged} labelled pairs unjudged; "
                 f"{len(self.label_only_topics)} labelled topics not judged"]
        if self.both:
            lines.append("  human grade (rows) × label (columns), pairs both judged and labelled:")
            lines.extend("  " + row for row in self.agreement.to_string().splitlines())
        else:
            lines.append("  no pair is both judged and labelled: the map from label to relevance cannot be learned")
        return "\n".join(lines)


def check_labels(labels: AssessorLabels, qrels: Qrels) -> LabelCheck:
    """The overlap of ``labels`` with the judgments ``qrels`` (what ``bayeval check --labels`` prints).

    Examples
    --------
    >>> lab = AssessorLabels.from_frame(pd.DataFrame({"topic": ["1", "1", "1"], "docno": ["a", "b", "c"],
    ...                                               "value": [2, 0, 1]}), "llm", "grades")
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1"], "docno": ["a", "b"], "grade": [1, 0]}))
    >>> c = check_labels(lab, q)
    >>> c.both, c.unjudged, c.agreement.to_numpy().tolist()
    (2, 1, [[1, 0], [0, 1]])
    """
    if not isinstance(labels, AssessorLabels):
        raise BayevalInputError(f"labels: expected an AssessorLabels, got {type(labels).__name__}")
    if not isinstance(qrels, Qrels):
        raise BayevalInputError(f"qrels: expected a Qrels, got {type(qrels).__name__}")
    human, label, per_topic, unjudged = [], [], {}, 0
    for t, v, grades in labels.judged_pairs(qrels):
        per_topic[t] = len(v)
        human.append(grades)
        label.append(v)
        if t in labels.by_topic:
            unjudged += len(labels.by_topic[t][0]) - len(v)
    h = np.concatenate(human) if human else np.zeros(0, dtype=np.int64)
    g = np.concatenate(label) if label else np.zeros(0)
    if labels.kind == "scores" and len(g):
        edges = score_bin_edges(g, SCORE_BINS)
        cols = np.searchsorted(edges, g, side="right")
        bounds = np.concatenate([[g.min()], edges, [g.max()]])
        names = [f"[{bounds[k]:.3g}, {bounds[k + 1]:.3g}{']' if k == len(edges) else ')'}"
                 for k in range(len(edges) + 1)]
        g = np.array(names, dtype=object)[cols]
        order = names
    else:
        g = g.astype(np.int64)
        order = sorted(set(g.tolist()))
    agreement = pd.crosstab(pd.Series(h, name="human"), pd.Series(g, name=labels.name)).reindex(columns=order,
                                                                                                 fill_value=0)
    return LabelCheck(labels.name, labels.kind, labels.n_pairs, int(len(h)), pd.Series(per_topic, dtype=np.int64),
                      int(unjudged), tuple(t for t in labels.topics if t not in qrels.topic_judgments), agreement)


def _few(topics: tuple[str, ...], k: int = 5) -> str:
    if not topics:
        return "none"
    return f"{len(topics)} ({', '.join(topics[:k])}{' …' if len(topics) > k else ''})"


def _render(frame: pd.DataFrame) -> list[str]:
    cells = [[str(c) for c in frame.columns]]
    for row in frame.itertuples(index=False):
        cells.append([f"{v:.2f}" if isinstance(v, float) else str(v) for v in row])
    widths = [max(len(r[j]) for r in cells) for j in range(len(cells[0]))]
    cells.insert(1, ["-" * w for w in widths])  # the rule under the header, as every table of bayeval has
    return ["  ".join(c.ljust(w) if j in (0, 1, len(widths) - 1) else c.rjust(w)
                      for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip() for r in cells]


def check_collection(qrels: str | os.PathLike, runs: str | os.PathLike | Iterable[str | os.PathLike], *,
                     run_names: str = "auto", strict: bool = False, relevance_level: int = 1) -> CollectionCheck:
    """Read a qrels file and run files as the other commands would, and report what was found.

    Parameters
    ----------
    qrels : path-like
    runs : path-like or iterable of them
        Run files or directories (see :func:`bayeval.io.read_runs`).
    run_names, strict
        As in :func:`bayeval.io.read_runs`.
    relevance_level : int
        Lowest relevant grade.

    Returns
    -------
    CollectionCheck
        Never raises for a malformed file: its message is in ``errors``.
    """
    errors: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataNotice)
        try:
            q = read_qrels(qrels, relevance_level=relevance_level, strict=strict)
        except BayevalInputError as exc:
            q = None
            errors.append(str(exc))
        try:
            files = read_run_files(runs, run_names=run_names, strict=strict, errors=errors)
        except BayevalInputError as exc:  # no file at all, or a bad run_names
            files = ()
            errors.append(str(exc))
        _notify(files)
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, DataNotice))
    rows = []
    run_topics = set().union(*(rf.run.topics for rf in files)) if files else set()
    judged_topics = set(q.topics) if q is not None else set()
    evaluated = run_topics & judged_topics
    data = None
    if files and evaluated:
        data = RankData.build([rf.run for rf in files], q, depth=100)
    for s, rf in enumerate(files):
        run = rf.run
        lengths = np.diff(run.offsets)
        same_topic = np.ones(max(len(run.scores) - 1, 0), dtype=bool)
        same_topic[run.offsets[1:-1] - 1] = False
        ties = int(np.count_nonzero(same_topic & (run.scores[1:] == run.scores[:-1])))
        remarks = []
        if rf.renamed:
            remarks.append(f"tag {rf.tag} shared: named by file")
        if rf.mixed_tags:
            remarks.append("mixed tags")
        if rf.duplicates:
            remarks.append(f"{rf.duplicates} repeated dropped (line {rf.duplicate_line})")
        missing = len(evaluated - set(run.topics))
        if missing:
            remarks.append(f"answers {len(evaluated) - missing} of {len(evaluated)} topics")
        j10, j100, un100 = _judged(data, s) if data is not None else (np.nan, np.nan, np.nan)
        rows.append([run.name, rf.path, rf.layout, len(run.topics), round(float(np.median(lengths))), rf.duplicates,
                     ties, j10, j100, un100, "; ".join(remarks)])
    summary = None
    if q is not None:
        n = sum(q.num_judged(t) for t in q.topics)
        rel = sum(q.num_rel(t) for t in q.topics)
        summary = (f"{qrels}: {len(q.topics)} topics, {n} judgments, {rel} relevant (grade >= {q.relevance_level}), "
                   f"{np.median([q.num_judged(t) for t in q.topics]):.0f} judged per topic (median)")
        top = max((int(q[t].grades.max()) for t in q.topics if len(q[t].grades)), default=0)
        if top >= 2:
            summary += (f"; graded 0-{top}: relevant means grade >= {q.relevance_level} here (trec_eval's -l "
                        f"{q.relevance_level}); tracks with graded judgments often count a higher grade (TREC DL: "
                        f"grade >= 2, --relevance-level 2)")
    return CollectionCheck(str(qrels), summary, pd.DataFrame(rows, columns=_COLUMNS),
                           _sorted(run_topics - judged_topics) if q is not None else (),
                           _sorted(judged_topics - run_topics) if files else (), len(evaluated), notes,
                           tuple(errors))


def _sorted(topics: set[str]) -> tuple[str, ...]:
    return tuple(sort_topics(topics))


def _judged(data, s: int) -> tuple[float, float, float]:
    """Mean judged@10, judged@100 and unjudged share of the top 100 of system ``s`` over its judged topics."""
    j10, j100, un = [], [], []
    for tr in data:
        if not tr.has_results[s]:
            continue
        n = int(min(tr.lengths[s], 100))
        row = tr.ranked[s:s + 1, :100]
        judged = np.where(row >= 0, tr.judged[np.maximum(row, 0)], False)
        j10.append(judged_at(judged, 10)[0])
        j100.append(judged_at(judged, 100)[0])
        un.append(1.0 - np.count_nonzero(judged) / n if n else 0.0)
    if not j10:
        return np.nan, np.nan, np.nan
    return float(np.mean(j10)), float(np.mean(j100)), float(np.mean(un))
