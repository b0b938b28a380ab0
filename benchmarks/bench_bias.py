"""Speed of the biased-pool studies (bayeval.bias), each against a naive reference timed in the same run.

Usage::

    python benchmarks/bench_bias.py [--data ../shared/data] [--repeat 3]

Cases (best of ``--repeat`` wall-clock runs; each reference's answer is compared with bayeval's, so a fast
wrong answer cannot pass unnoticed):

A. Leave-one-group-out on TREC-8 without repair (72 pooled runs, 40 groups, 8 measures): bayeval scores only
   the left-out group's runs on each reduced qrels; the naive reference removes the unique documents with
   Python sets and re-evaluates every studied run on every reduced qrels (what a script that loops over
   "evaluate everything with these qrels" does).
B. KLD of 400 documents against a relevant-document model over the Cranfield vocabulary: sparse formula vs
   the dense sum over the vocabulary.
C. Expected reciprocal rank of 129 systems × 1000 ranks: vectorised vs a Python loop per system and rank.
D. Kendall's τ between two scorings of 129 runs: vectorised vs the double loop over pairs.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from bayeval.bias import (
    expected_reciprocal_rank,
    kld_scores,
    leave_one_group_out,
    pooled_runs,
    read_contributions,
    read_run_groups,
)
from bayeval.bias.cranfield import load_cranfield
from bayeval.data import Qrels, RankData
from bayeval.io import read_qrels, read_runs
from bayeval.measures import evaluate
from bayeval.stats import kendall_tau

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEASURES = ("RR", "P@10", "P@20", "nDCG@20", "AP", "bpref", "P@20(j)", "RankEff")


def best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def case_a(data: Path, repeat: int) -> dict:
    d = data / "trec8"
    runs, qrels = read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz")
    contrib, groups = read_contributions(d / "qrels-annotated.txt.gz"), read_run_groups(d / "runs.tsv")

    def fast():
        return leave_one_group_out(runs, qrels, contrib, groups, measures=MEASURES, progress=False)

    def naive():
        full = RankData.build(runs, qrels)
        study = pooled_runs(full, 100)
        sub = runs.select(study)
        frame = qrels.to_frame()
        new = {}
        for g in dict.fromkeys(groups.group[r] for r in study):
            unique = {(t, doc) for t, m in contrib.by_topic.items() for doc, gs in m.items() if gs == {g}}
            keep = [(t, doc) not in unique for t, doc in zip(frame.topic, frame.docno, strict=True)]
            reduced = Qrels.from_frame(frame[keep])
            means = evaluate(RankData.build(sub, reduced, topics=full.topics), list(MEASURES)).mean()
            for s, r in enumerate(study):
                if groups.group[r] == g:
                    new[r] = means[:, s]
        return study, np.stack([new[r] for r in study], axis=1)

    t_fast, st = best(fast, repeat)
    t_naive, (study, ref) = best(naive, 1)
    assert tuple(study) == st.runs
    diff = float(np.abs(st.mean_scores()[0] - ref).max())
    return {"case": "A. leave-one-group-out, TREC-8 (72 runs, 40 groups, 8 measures)", "bayeval_s": t_fast,
            "naive_s": t_naive, "max_abs_diff": diff}


def case_b(data: Path, repeat: int) -> dict:
    from sklearn.feature_extraction.text import CountVectorizer

    col = load_cranfield(data / "cranfield")
    counts = sp.csr_matrix(CountVectorizer().fit_transform(list(col.texts.values())), dtype=np.float64)
    coll = np.asarray(counts.sum(axis=0)).ravel()
    coll = coll / coll.sum()
    rows = counts[:400]
    rel = np.arange(0, 400, 10)
    lam = 0.2

    def naive():
        dense = rows.toarray()
        pr = (1 - lam) * dense[rel].sum(0) / dense[rel].sum() + lam * coll
        out = np.zeros(len(dense))
        for i, row in enumerate(dense):
            pd_ = (1 - lam) * row / row.sum() + lam * coll
            out[i] = float(np.sum(pd_ * np.log(pd_ / pr)))
        return out

    t_fast, fast = best(lambda: kld_scores(rows, rel, coll, lam), repeat)
    t_naive, ref = best(naive, repeat)
    return {"case": f"B. KLD, 400 docs x {counts.shape[1]} terms (Cranfield)", "bayeval_s": t_fast,
            "naive_s": t_naive, "max_abs_diff": float(np.abs(fast - ref).max())}


def case_c(repeat: int) -> dict:
    rng = np.random.default_rng(0)
    p = rng.beta(0.3, 3.0, size=(129, 1000))

    def naive():
        out = np.zeros(len(p))
        for s in range(len(p)):
            none = 1.0
            for r in range(p.shape[1]):
                out[s] += none * p[s, r] / (r + 1)
                none *= 1.0 - p[s, r]
        return out

    t_fast, fast = best(lambda: expected_reciprocal_rank(p), repeat)
    t_naive, ref = best(naive, 1)
    return {"case": "C. E[RR], 129 systems x 1000 ranks", "bayeval_s": t_fast, "naive_s": t_naive,
            "max_abs_diff": float(np.abs(fast - ref).max())}


def case_d(repeat: int) -> dict:
    rng = np.random.default_rng(1)
    a = rng.random(129)
    b = a + rng.normal(0, 0.05, 129)

    def naive():
        n, inv = len(a), 0
        for i in range(n):
            for j in range(i + 1, n):
                if (a[i] - a[j]) * (b[i] - b[j]) < 0:
                    inv += 1
        return 1 - 2 * inv / (n * (n - 1) / 2)

    t_fast, fast = best(lambda: kendall_tau(a, b, ties="agree"), repeat)
    t_naive, ref = best(naive, repeat)
    return {"case": "D. Kendall's tau, 129 runs", "bayeval_s": t_fast, "naive_s": t_naive,
            "max_abs_diff": abs(fast - ref)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rows = [case_a(args.data, args.repeat), case_b(args.data, args.repeat), case_c(args.repeat), case_d(args.repeat)]
    print(f"{'case':62s} {'bayeval':>10s} {'naive':>10s} {'ratio':>8s} {'max |diff|':>11s}")
    for r in rows:
        print(f"{r['case']:62s} {r['bayeval_s']:9.4f}s {r['naive_s']:9.3f}s {r['naive_s'] / r['bayeval_s']:7.1f}x "
              f"{r['max_abs_diff']:11.2e}")


if __name__ == "__main__":
    main()
