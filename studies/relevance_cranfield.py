"""Held-out accuracy with document texts: similarity regression vs RTC on Cranfield.

TREC-8 and Robust 2003 come without texts, so similarity regression (Carterette & Allan 2007) is scored here,
on the Cranfield 1400 collection (``../shared/data/cranfield``), with the shallow-pool protocol:

- systems = five retrieval models built here over title + abstract: TF-IDF cosine, BM25 (k1 = 1.2, b = 0.75),
  BM25 (k1 = 2.0, b = 0.3), query likelihood with Dirichlet smoothing (μ = 300), TF-IDF on titles only;
  top 100 documents per query;
- judgments = the depth-10 pool of the five runs, judged from ``cranqrel`` (codes 1–4 relevant; −1 and
  every document it does not list nonrelevant: Cranfield's judgments are taken as complete);
- targets = every other document some run ranks in its top 100.

Usage::

    python studies/relevance_cranfield.py [--data PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data import Qrels, Run, RunSet
from bayeval.io.cranfield import read_cranfield
from bayeval.relevance import estimate_probabilities, shallow_pool_split
from bayeval.relevance.diagnostics import heldout_elpd

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"


def load(data: Path):
    col = read_cranfield(data)
    docs = {d: (col.titles[d], col.texts[d]) for d in col.texts}
    return docs, col.queries, col.codes


def _scores(docs, queries):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    ids = list(docs)
    full = [docs[i][1] for i in ids]
    titles = [docs[i][0] for i in ids]
    qtext = list(queries.values())
    out = {}
    tf = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit(full)
    out["tfidf"] = (tf.transform(qtext) @ tf.transform(full).T).toarray()
    tt = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit(titles)
    out["tfidf-title"] = (tt.transform(qtext) @ tt.transform(titles).T).toarray()
    cv = CountVectorizer(stop_words="english").fit(full)
    C = cv.transform(full).tocsc().astype(np.float64)  # (docs, terms)
    Q = (cv.transform(qtext) > 0).astype(np.float64)  # (queries, terms)
    dl = np.asarray(C.sum(axis=1)).ravel()
    df = np.asarray((C > 0).sum(axis=0)).ravel()
    N = C.shape[0]
    idf = np.log(1 + (N - df + 0.5) / (df + 0.5))
    Cd = C.toarray()
    for name, k1, b in (("bm25", 1.2, 0.75), ("bm25-k2b.3", 2.0, 0.3)):
        norm = k1 * (1 - b + b * dl / dl.mean())
        W = Cd * (k1 + 1) / (Cd + norm[:, None]) * idf[None, :]
        out[name] = Q @ W.T
    mu = 300.0
    pc = (Cd.sum(axis=0) + 0.5) / (Cd.sum() + 0.5 * Cd.shape[1])
    L = np.log((Cd + mu * pc[None, :]) / (dl[:, None] + mu))  # (docs, terms)
    out["ql-dir300"] = np.asarray(Q @ L.T)
    return ids, out


def build(docs, queries, rel, depth: int = 100):
    ids, scores = _scores(docs, queries)
    qids = list(queries)
    runs = []
    for name, S in scores.items():
        top = np.argsort(-S, axis=1, kind="stable")[:, :depth]
        t = np.repeat(np.array(qids, dtype=object), depth)
        d = np.array(ids, dtype=object)[top].ravel()
        s = np.take_along_axis(S, top, axis=1).ravel()
        runs.append(Run.from_arrays(name, t, d, s))
    rows = [(q, d, 1 if rel.get((q, d), 0) >= 1 else 0) for q in qids for d in ids]
    qrels = Qrels.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "grade"]))
    return RunSet(tuple(runs)), qrels, {d: docs[d][1] for d in ids}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    docs, queries, rel = load(args.data)
    runs, qrels, texts = build(docs, queries, rel)
    split = shallow_pool_split(runs, qrels, None, judged_depth=10, depth=100)
    data = split.data
    y_all = np.concatenate(split.labels)
    n_j = sum(int(tr.judged.sum()) for tr in data)
    print(f"Cranfield: {len(runs)} runs x {len(data)} queries at depth 100 ({time.perf_counter() - t0:.1f} s "
          "to build); "
          f"judged (depth-10 pool) {n_j}; targets {split.n_targets}, {int(y_all.sum())} relevant "
          f"(rate {y_all.mean():.4f})\n")
    print("| estimator | log loss | const. log loss | AUC | Brier | mean p | true rate | mean p / rate | ELPD/doc "
          "| fit s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, model, fit in (("uniform 0.5", "uniform", "map"), ("plus-one smoothing", "smoothed", "map"),
                              ("rtc-mtc, MAP", "rtc-mtc", "map"), ("rtc-default, MAP", "rtc-default", "map"),
                              ("similarity-default (TF-IDF), MAP", "similarity-default", "map"),
                              ("similarity-default, Laplace", "similarity-default", "laplace")):
        t0 = time.perf_counter()
        kw = {"texts": texts} if model.startswith("similarity") else {}
        est = estimate_probabilities(data, model, fit=fit, p_draws=200, seed=1, draws=250, chains=4, **kw)
        dt = time.perf_counter() - t0
        y, p = split.gather(est.p)
        s = split.score(est.p)
        elpd = heldout_elpd(y, split.gather(est.draws)[1] if est.has_draws else p) / len(y)
        print(f"| {label} | {s['log_loss']:.4f} | {s['base_log_loss']:.4f} | {s['auc']:.3f} | {s['brier']:.4f} | "
              f"{s['mean_p']:.4f} | {s['rate']:.4f} | {s['mean_p_ratio']:.2f} | {elpd:.4f} | {dt:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
