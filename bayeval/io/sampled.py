"""Reading and writing NIST's stratified-sample qrels, the file ``sample_eval.pl`` reads.

Five whitespace-separated columns ``topic iteration docno stratum rel``: one line per *pooled* document;
``rel`` is the judged grade (an integer >= 0, read as qrels grades are: ``2.0`` is 2, ``1_0`` is refused) where
the document was sampled and ``-1`` where it was pooled but not sampled; ``stratum`` is any label. Files may be
gzip-compressed (the :mod:`bayeval.io` helpers); blank lines and ``#`` lines are skipped. Errors are one line
naming file and line: a wrong number of columns, a grade that is not an integer >= -1, a document listed twice
for a topic, an empty file.

:func:`match_sample_topics` matches the topics of runs to those of a sample as ``sample_eval.pl`` does: it strips
leading zeros from the run's topic ids (``0401`` is topic ``401`` of the sample).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable

import numpy as np

from bayeval.data.run import Run, RunSet
from bayeval.data.sample import NOT_SAMPLED, StratifiedSample, TopicSample
from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io._files import decode, identifier, is_comment, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_grade

__all__ = ["match_sample_topics", "read_stratified_sample", "write_stratified_sample"]

_LAYOUT = "topic iteration docno stratum rel"


def read_stratified_sample(path: str | os.PathLike) -> StratifiedSample:
    """Read a stratified-sample qrels file ``topic iteration docno stratum rel`` (plain or gzip).

    Raises
    ------
    FileFormatError
        Naming file and line: not five columns, ``rel`` not an integer >= -1, a document listed twice
        for one topic, no data line.
    """
    path = str(path)
    per_topic: dict[str, tuple[list, list, list, dict, dict]] = {}
    for lineno, raw in enumerate(split_lines(read_bytes(path)), start=1):
        if is_comment(raw):
            continue
        fields = raw.split()
        if len(fields) != 5:
            raise FileFormatError(path, lineno, f"expected 5 columns '{_LAYOUT}', found {len(fields)}")
        grade = as_grade(fields[4])
        if grade is None or grade < NOT_SAMPLED or grade >= 2**62:
            raise FileFormatError(path, lineno, f"rel {quoted(fields[4], 20)} is not an integer >= -1 "
                                                "(-1: pooled, not sampled)")
        topic = identifier(fields[0], "topic", path, lineno)
        docno = identifier(fields[2], "docno", path, lineno)
        label = decode(fields[3], path, lineno)
        docs, strata, grades, seen, labels = per_topic.setdefault(topic, ([], [], [], {}, {}))
        if docno in seen:
            raise FileFormatError(path, lineno, f"document {quoted(docno)} listed twice for topic {quoted(topic)} "
                                                f"(first on line {seen[docno]})")
        seen[docno] = lineno
        docs.append(docno)
        strata.append(labels.setdefault(label, len(labels)))
        grades.append(grade)
    if not per_topic:
        raise FileFormatError(path, None, "empty file: no pooled documents")
    return StratifiedSample({
        t: TopicSample(np.array(d, dtype=object), np.array(s, dtype=np.int32), tuple(lab),
                       np.array(g, dtype=np.int64))
        for t, (d, s, g, _, lab) in per_topic.items()})


def write_stratified_sample(sample: StratifiedSample, path: str | os.PathLike) -> None:
    """Write ``sample`` as ``topic 0 docno stratum rel`` (``rel = -1`` where not sampled)."""
    with open(path, "w", encoding="utf-8") as fh:
        for t in sample.topics:
            s = sample[t]
            for d, c, g in zip(s.docnos, s.strata, s.grades, strict=True):
                fh.write(f"{t} 0 {d} {s.labels[c]} {int(g)}\n")


def match_sample_topics(runs: RunSet | Iterable[Run], topics: Iterable[str]) -> RunSet:
    """The runs with their topic ids matched to a sample's ``topics`` as ``sample_eval.pl`` matches them.

    ``sample_eval.pl`` strips leading zeros from a run's topic ids before looking them up in the sample, so that
    a run answering ``0401`` is evaluated on the sample's topic ``401``. Here a run topic that is a sample topic
    as written keeps its id; one that is not, but is once its leading zeros are stripped, takes that id, with
    one :class:`~bayeval.errors.DataNotice` for all runs. Other topics are left as they are (no sample topic
    matches them: they are not evaluated). Where ``sample_eval.pl`` itself would drop a topic (sample topic
    ``0401``, run topic ``0401``) the exact match is kept.

    Raises
    ------
    BayevalInputError
        When two topics of one run become one sample topic (``0401`` and ``401``): ``sample_eval.pl`` would merge
        their rankings; no merge can be chosen for the user.

    Examples
    --------
    >>> run = Run.from_arrays("r", np.array(["0401", "0402", "7"]), np.array(["a", "b", "c"]), np.ones(3))
    >>> match_sample_topics([run], ["401", "402", "403"])[0].topics
    ('7', '401', '402')
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    wanted = {str(t) for t in topics}
    out, renamed = [], {}
    for run in runs:
        names = []
        for t in run.topics:
            stripped = t.lstrip("0")
            names.append(stripped if t not in wanted and stripped in wanted else t)
        if names == list(run.topics):
            out.append(run)
            continue
        seen: dict[str, str] = {}
        for t, n in zip(run.topics, names, strict=True):
            if n in seen:
                raise BayevalInputError(f"run {quoted(run.name)}: topics {quoted(seen[n])} and {quoted(t)} are both "
                                        f"topic {quoted(n)} of the sample once leading zeros are stripped, as "
                                        "sample_eval.pl strips them; keep one")
            seen[n] = t
            if n != t:
                renamed[t] = n
        out.append(Run._from_sorted(run.name, names, run.offsets[:-1], run.docno_array, run.scores))
    if renamed:
        shown = ", ".join(f"{t} → {n}" for t, n in list(renamed.items())[:6]) + (" …" if len(renamed) > 6 else "")
        warnings.warn(f"runs: {len(renamed)} topic id(s) matched to the sample's with their leading zeros stripped, "
                      f"as sample_eval.pl does: {shown}", DataNotice, stacklevel=2)
    return RunSet(tuple(out))
