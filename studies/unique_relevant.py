r"""Unique relevant documents of manual and automatic runs: the signature of TREC's manual runs.

For each run s of a collection directory (``runs/``, ``qrels.txt``, ``runs.tsv`` marking manual runs) and each
topic t, with :math:`D_{st}` the run's top ``--depth`` documents and :math:`\mathcal R_t` the relevant ones,

.. math:: u_s = \frac{\sum_t |\{i \in D_{st} \cap \mathcal R_t : i \notin D_{s't}\ \forall s' \ne s\}|}
                     {\sum_t |D_{st} \cap \mathcal R_t|}

is the share of the run's relevant retrieved documents that no other run retrieves ("unique relevant",
Zobel, SIGIR 1998). Printed per run type (manual / automatic): the mean of :math:`u_s`, the mean number of
unique relevant documents per topic, the mean MAP at ``--depth`` and the share of all relevant documents no run
retrieves. Cheap (no model); used to choose the manual-like generator of docs/notes/calibration-record.md ("A choosing
collection with manual-like runs") by its qualitative signature.

Usage::

    python studies/unique_relevant.py synth-manual [--depth 100]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.io import load_collection
from bayeval.measures import average_precision


def unique_relevant(path: Path, depth: int = 100) -> pd.DataFrame:
    """Per run: type, relevant retrieved, unique relevant retrieved, their share, MAP at ``depth``.

    Parameters
    ----------
    path : Path
        A collection directory (:func:`bayeval.io.load_collection`).
    depth : int
        Documents of each run counted per topic.

    Returns
    -------
    DataFrame
        Columns ``run``, ``type``, ``rel``, ``unique_rel``, ``unique_share``, ``map``; plus, in
        ``frame.attrs["unretrieved"]``, the share of relevant documents no run retrieves.
    """
    if depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth}")
    col = load_collection(path)
    runs = col.runs()
    qrels = col.qrels()
    manual = set(col.manual)
    rel_sets = {}
    for t in qrels.topics:
        tj = qrels.topic_judgments[t]
        rel_sets[t] = set(tj.docnos[tj.grades >= qrels.relevance_level].tolist())
    tops = {r.name: {t: list(r.ranking(t)[:depth]) for t in r.topics} for r in runs}
    rows = []
    n_rel_total = n_unretrieved = 0
    counts_by_topic = {}
    for t in rel_sets:
        c = Counter()
        for name in tops:
            c.update(set(tops[name].get(t, ())))
        counts_by_topic[t] = c
        n_rel_total += len(rel_sets[t])
        n_unretrieved += sum(1 for d in rel_sets[t] if c[d] == 0)
    for name, by_topic in tops.items():
        n_rel = n_uni = 0
        aps = []
        for t, rel in rel_sets.items():
            docs = by_topic.get(t, [])
            hits = [d in rel for d in docs]
            n_rel += sum(hits)
            n_uni += sum(1 for d, h in zip(docs, hits, strict=True) if h and counts_by_topic[t][d] == 1)
            aps.append(float(average_precision(np.array(hits + [False] * (depth - len(hits))), len(rel))[0]))
        rows.append({"run": name, "type": "manual" if name in manual else "automatic", "rel": n_rel,
                     "unique_rel": n_uni, "unique_share": n_uni / n_rel if n_rel else 0.0,
                     "map": float(np.mean(aps))})
    frame = pd.DataFrame(rows)
    frame.attrs["unretrieved"] = n_unretrieved / n_rel_total if n_rel_total else 0.0
    frame.attrs["topics"] = len(rel_sets)
    return frame


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path, help="collection directory (runs/, qrels.txt, runs.tsv)")
    ap.add_argument("--depth", type=int, default=100)
    a = ap.parse_args(argv)
    try:
        frame = unique_relevant(a.collection, a.depth)
    except (BayevalInputError, OSError) as exc:
        sys.exit(f"unique_relevant.py: {exc}")
    t = frame.attrs["topics"]
    summary = frame.groupby("type").agg(runs=("run", "size"), unique_share=("unique_share", "mean"),
                                        unique_per_topic=("unique_rel", lambda x: x.mean() / t),
                                        rel_per_topic=("rel", lambda x: x.mean() / t), map=("map", "mean"))
    print(summary.round(4).to_string())
    print(f"relevant documents no run retrieves (top {a.depth}): {frame.attrs['unretrieved']:.3f}")


if __name__ == "__main__":
    main()
