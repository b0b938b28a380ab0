"""The Cranfield 1400 collection as a pooled test collection with texts: runs of several retrieval models.

TREC-8 has no document texts, so the paper's text classifiers are tested here, on Cranfield's 1,400 abstracts:
:func:`load_cranfield` (:func:`bayeval.io.read_cranfield`) reads the SMART-format files,
:func:`cranfield_runs` builds eight runs in four "groups" of two — ``vector`` (TF-IDF cosine; TF-IDF with
sublinear tf), ``bm25`` (k1 = 1.2, b = 0.75; k1 = 2.0, b = 0.3), ``lm`` (query likelihood, Dirichlet μ = 300
and 1000) and ``title`` (TF-IDF and BM25 over titles only) — and :func:`cranfield_pool` judges their
depth-``pool_depth`` pool from ``cranqrel`` (codes 1–4 relevant; −1 and every unlisted document nonrelevant:
Cranfield's judgments are taken as complete). :func:`write_cranfield` writes it all as files the CLI reads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from bayeval.bias.pool import RunGroups
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.io import write_qrels, write_run
from bayeval.io.cranfield import CranfieldCollection
from bayeval.io.cranfield import read_cranfield as load_cranfield

__all__ = ["CRANFIELD_GROUPS", "CranfieldCollection", "cranfield_pool", "cranfield_runs", "load_cranfield",
           "write_cranfield"]

CRANFIELD_GROUPS = {"tfidf": "vector", "tfidf-log": "vector", "bm25": "bm25", "bm25-k2b3": "bm25",
                    "ql-300": "lm", "ql-1000": "lm", "tfidf-title": "title", "bm25-title": "title"}
"""Run → group of :func:`cranfield_runs`. The ``title`` group is labelled *manual* in :func:`cranfield_pool`'s
groups, so that the manual-only study has a stand-in (Cranfield has no manual runs)."""


def _bm25(counts: sp.csr_matrix, q: sp.csr_matrix, k1: float, b: float) -> np.ndarray:
    n = counts.shape[0]
    df = np.asarray((counts > 0).sum(axis=0)).ravel()
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    dl = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1.0 - b + b * dl / dl.mean())
    c = counts.tocoo()
    w = c.data * (k1 + 1.0) / (c.data + norm[c.row]) * idf[c.col]
    weights = sp.csr_matrix((w, (c.row, c.col)), shape=counts.shape)
    return (weights @ sp.csr_matrix((q > 0).T, dtype=np.float64)).toarray()


def _ql(counts: sp.csr_matrix, q: sp.csr_matrix, mu: float) -> np.ndarray:
    coll = np.asarray(counts.sum(axis=0)).ravel() + 0.5
    pc = coll / coll.sum()
    dl = np.asarray(counts.sum(axis=1)).ravel()
    qd = q.toarray()
    out = np.zeros((counts.shape[0], q.shape[0]))
    dense = counts.toarray()
    for j in range(q.shape[0]):
        terms = np.flatnonzero(qd[j])
        if len(terms) == 0:
            continue
        p = (dense[:, terms] + mu * pc[terms]) / (dl[:, None] + mu)
        out[:, j] = np.log(p) @ qd[j, terms]
    return out


def cranfield_runs(collection: CranfieldCollection, depth: int = 100) -> RunSet:
    """Eight runs (see :data:`CRANFIELD_GROUPS`), top ``depth`` documents per query, deterministic."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    docnos = np.array(list(collection.texts), dtype=object)
    qids = list(collection.queries)
    qtexts = [collection.queries[q] for q in qids]
    scores = {}
    for name, field in (("", collection.texts), ("-title", collection.titles)):
        corpus = [field[d] for d in docnos]
        cv = CountVectorizer(stop_words="english")
        counts = sp.csr_matrix(cv.fit_transform(corpus), dtype=np.float64)
        q = sp.csr_matrix(cv.transform(qtexts), dtype=np.float64)
        tv = TfidfVectorizer(stop_words="english").fit(corpus)
        scores[f"tfidf{name}"] = (tv.transform(corpus) @ tv.transform(qtexts).T).toarray()
        scores[f"bm25{name}"] = _bm25(counts, q, 1.2, 0.75)
        if not name:
            tl = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(corpus)
            scores["tfidf-log"] = (tl.transform(corpus) @ tl.transform(qtexts).T).toarray()
            scores["bm25-k2b3"] = _bm25(counts, q, 2.0, 0.3)
            scores["ql-300"] = _ql(counts, q, 300.0)
            scores["ql-1000"] = _ql(counts, q, 1000.0)
    runs = []
    for name in CRANFIELD_GROUPS:
        s = scores[name]
        top = np.argsort(-s, axis=0, kind="stable")[:depth]
        frames = [pd.DataFrame({"topic": qid, "docno": docnos[top[:, j]], "score": s[top[:, j], j]})
                  for j, qid in enumerate(qids)]
        runs.append(Run.from_frame(pd.concat(frames, ignore_index=True), name))
    return RunSet(tuple(runs))


def cranfield_pool(collection: CranfieldCollection, runs: RunSet, pool_depth: int = 10
                   ) -> tuple[Qrels, RunGroups]:
    """Judgments of the depth-``pool_depth`` pool of ``runs`` (from ``cranqrel``) and the runs' groups."""
    data = RankData.build(runs, None)
    rows = []
    for tr in data:
        top = tr.ranked[:, :pool_depth]
        for d in tr.docnos[np.unique(top[top >= 0])]:
            code = collection.codes.get((tr.topic, d), 0)
            rows.append((tr.topic, d, int(1 <= code <= 4)))
    qrels = Qrels.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "grade"]))
    names = runs.names
    groups = RunGroups({r: CRANFIELD_GROUPS.get(r, r) for r in names},
                       {r: "manual" if CRANFIELD_GROUPS.get(r) == "title" else "automatic" for r in names})
    return qrels, groups


def write_cranfield(path, out_dir, *, depth: int = 100, pool_depth: int = 10) -> dict[str, Path]:
    """Write ``runs/``, ``qrels.txt``, ``groups.tsv`` and ``texts.tsv`` for the CLI; returns their paths.

    Examples
    --------
    ``python -c "from bayeval.bias.cranfield import write_cranfield as w; w('../shared/data/cranfield', 'cran')"``
    then ``bayeval bias leave-one-group-out cran/qrels.txt cran/runs --groups cran/groups.tsv --pool-depth 10
    --texts cran/texts.tsv --predict kld --predict svm``.
    """
    col = load_cranfield(path)
    runs = cranfield_runs(col, depth)
    qrels, groups = cranfield_pool(col, runs, pool_depth)
    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for r in runs:
        write_run(r, out / "runs" / f"input.{r.name}")  # TREC's naming: the layout of load_collection too
    write_qrels(qrels, out / "qrels.txt")
    with open(out / "groups.tsv", "w", encoding="utf-8") as fh:
        fh.write("run\tgroup\ttype\n")
        for r in runs.names:
            fh.write(f"{r}\t{groups.group[r]}\t{groups.kind[r]}\n")
    with open(out / "texts.tsv", "w", encoding="utf-8") as fh:
        for d, t in col.texts.items():
            fh.write(f"{d}\t{t}\n")
    return {"runs": out / "runs", "qrels": out / "qrels.txt", "groups": out / "groups.tsv",
            "texts": out / "texts.tsv"}
