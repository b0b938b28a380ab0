"""Speed of MTC selection: time per judgment (select + record + confidence), incremental vs naive.

The incremental selector (bayeval.selection.MTCSelector) updates, after a judgment, only the judged
topic's per-system sums (O(n_t·S)), that topic's pair weights and that topic's ΔAP moments. The naive
reference recomputes from scratch at every judgment what the algorithm needs: the c_ij matrices and
the relevant/nonrelevant weights of every topic and pair, and P(ΔMAP < 0) of every pair with
bayeval.expected.compare_systems over all topics — the same decisions, measured in the same run.

    python benchmarks/bench_selection.py [--judgments 200] [--naive-judgments 10]

TREC-8 runs at depth 100, 50 topics (synthetic runs of the same shape when ../shared/data is absent).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bayeval.data import RankData, TopicRanks
from bayeval.expected import compare_systems
from bayeval.selection import MTCSelector, QrelsAssessor

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
RUNS10 = ["INQ603", "Sab8A1", "ok8amxc", "pir9Attd", "ibmg99a", "acsys8alo", "uwmt8a2", "AntHoc1", "Dm8NbnR",
          "fub99a"]


def load(n_runs: int):
    from bayeval.io import read_qrels, read_runs

    if DATA.is_dir():
        runs = read_runs([DATA / "runs" / f"input.{r}.gz" for r in RUNS10[:n_runs]])
        qrels = read_qrels(DATA / "qrels.txt.gz")
        src = "TREC-8"
    else:
        from bayeval.synthetic import make_collection

        col = make_collection(n_topics=50, n_systems=n_runs, n_docs=1000, depth=100, seed=0)
        runs, qrels, src = col.runs, col.qrels, "synthetic"
    topics = sorted(set(runs.topics) & set(qrels.topics))
    return RankData.build(runs, None, depth=100, topics=topics), qrels, src


def naive_step(data: RankData, judged: list, grades: list, pairs, alpha: float):
    """One MTC step from scratch: every weight and the confidence of every pair recomputed."""
    per = [TopicRanks(tr.topic, tr.systems, tr.docnos, tr.ranked, tr.lengths, judged[t].copy(), grades[t].copy(),
                      tr.relevance_level, tr.has_results) for t, tr in enumerate(data)]
    cur = RankData(data.systems, data.topics, tuple(per), data.depth)
    cmp = compare_systems(cur, default_p=0.5, pairs=pairs, measure="AP", method="delta", progress=False)
    undecided = [k for k in range(len(pairs)) if (1 - alpha) < cmp.all_p_less[k] < alpha]
    best = (-1.0, None)
    for t, tr in enumerate(cur):
        r = np.asarray(tr.ranks, dtype=np.float64)
        inv = np.divide(1.0, r, out=np.zeros_like(r), where=r > 0)
        rel = tr.judged & (tr.grades >= 1)
        er = float(np.where(tr.judged, rel, 0.5).sum())
        for k in undecided:
            a, b = data.systems.index(pairs[k][0]), data.systems.index(pairs[k][1])
            c = np.minimum.outer(inv[:, a], inv[:, a]) - np.minimum.outer(inv[:, b], inv[:, b])
            diag = np.diag(c).copy()
            np.fill_diagonal(c, 0.0)
            w_rel = diag + c[:, rel].sum(axis=1)
            w_non = w_rel + c[:, ~tr.judged].sum(axis=1)
            s = np.where(tr.judged, 0.0, np.maximum(np.abs(w_rel), np.abs(w_non)) / er)
            i = int(np.argmax(s))
            if s[i] > best[0]:
                best = (float(s[i]), (t, i))
    return best


def bench(n_runs: int, n_judge: int, n_naive: int) -> dict:
    data, qrels, src = load(n_runs)
    assessor = QrelsAssessor(qrels)
    sel = MTCSelector(data, measure="AP", alpha=0.9999)  # keep every pair undecided for the whole timing
    pairs = sel.pairs
    # warm-up (numba compilation of the ΔAP kernels)
    MTCSelector(data, measure="AP").select()
    t0 = time.perf_counter()
    for _ in range(n_judge):
        c = sel.select()[0]
        sel.record(c.topic, c.docno, assessor.judge(c.topic, c.docno))
    inc = (time.perf_counter() - t0) / n_judge
    judged = [np.array(tr.judged) for tr in data]
    grades = [np.array(tr.grades) for tr in data]
    naive_step(data, judged, grades, pairs, 0.9999)
    t0 = time.perf_counter()
    for _ in range(n_naive):
        _, (t, i) = naive_step(data, judged, grades, pairs, 0.9999)
        judged[t][i] = True
        grades[t][i] = assessor.judge(data.topics[t], data[t].docnos[i])
    naive = (time.perf_counter() - t0) / n_naive
    return {"source": src, "runs": n_runs, "pairs": len(pairs), "docs": sum(tr.n_docs for tr in data),
            "incremental_ms": inc * 1e3, "naive_ms": naive * 1e3, "ratio": naive / inc}


def check_same_choices(n_runs: int, steps: int = 5) -> bool:
    """Whether the selector's choice has the naive reference's largest weight at every step (ties may be broken
    differently: the selector prefers the better-ranked document)."""
    data, qrels, _ = load(n_runs)
    assessor = QrelsAssessor(qrels)
    sel = MTCSelector(data, measure="AP", alpha=0.9999)
    judged = [np.array(tr.judged) for tr in data]
    grades = [np.array(tr.grades) for tr in data]
    for _ in range(steps):
        best, _ = naive_step(data, judged, grades, sel.pairs, 0.9999)
        c = sel.select()[0]
        if abs(best - c.score) > 1e-9 * best:
            return False
        g = assessor.judge(c.topic, c.docno)
        t = data.topics.index(c.topic)
        i = int(np.flatnonzero(data[t].docnos == c.docno)[0])
        sel.record(c.topic, c.docno, g)
        judged[t][i] = True
        grades[t][i] = g
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judgments", type=int, default=200)
    ap.add_argument("--naive-judgments", type=int, default=10)
    args = ap.parse_args()
    print("| data | runs | pairs | documents | incremental ms/judgment | naive ms/judgment | ratio | same weights |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for n_runs in (2, 10):
        r = bench(n_runs, args.judgments, args.naive_judgments)
        same = check_same_choices(n_runs)
        print(f"| {r['source']} depth 100, 50 topics | {r['runs']} | {r['pairs']} | {r['docs']} | "
              f"{r['incremental_ms']:.2f} | {r['naive_ms']:.1f} | {r['ratio']:.0f}x | {same} |")


if __name__ == "__main__":
    main()
