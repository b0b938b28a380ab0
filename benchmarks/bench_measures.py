"""Read + standard measures for all 129 TREC-8 runs, end to end, against two references.

Usage::

    python benchmarks/bench_measures.py [--data ../shared/data] [--repeat 3]

Prints the best-of-``repeat`` wall time of bayeval (read runs and qrels, build the RankData,
AP/P@10/nDCG@10/bpref/RR), of a naive pure-Python implementation (line-by-line parsing with
dicts, one run and topic at a time) measured in the same run, and of pytrec_eval-terrier
(Python parsing into dicts + its C evaluation) when it is installed; ratios against bayeval.
"""

from __future__ import annotations

import argparse
import gzip
import math
import time
from pathlib import Path

MEASURES = "AP,P@10,nDCG@10,bpref,RR"


def bayeval_end_to_end(d: Path):
    from bayeval.data import RankData
    from bayeval.io import read_qrels, read_runs
    from bayeval.measures import evaluate

    data = RankData.build(read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz"))
    return evaluate(data, MEASURES).mean()


def _read_dicts(d: Path):
    qrels: dict[str, dict[str, int]] = {}
    for line in gzip.open(d / "qrels.txt.gz", "rt"):
        t, _, doc, rel = line.split()
        qrels.setdefault(t, {})[doc] = int(rel)
    runs = {}
    for f in sorted((d / "runs").glob("input.*.gz")):
        run: dict[str, dict[str, float]] = {}
        for line in gzip.open(f, "rt"):
            t, _, doc, _, score, tag = line.split()
            run.setdefault(t, {})[doc] = float(score)
        runs[f.name] = run
    return qrels, runs


def naive_end_to_end(d: Path):
    """Straightforward Python: the reference a user would write."""
    qrels, runs = _read_dicts(d)
    out = {}
    for name, run in runs.items():
        sums = [0.0] * 5
        n = 0
        for t, scores in run.items():
            if t not in qrels:
                continue
            q = qrels[t]
            ranked = sorted(scores, key=lambda doc: (-scores[doc], [-ord(c) for c in doc]))
            R = sum(1 for g in q.values() if g > 0)
            N = sum(1 for g in q.values() if g <= 0)
            hits = nonrel = 0
            ap = rr = bp = 0.0
            dcg = 0.0
            for i, doc in enumerate(ranked, start=1):
                g = q.get(doc)
                if g is not None and g > 0:
                    hits += 1
                    ap += hits / i
                    rr = rr or 1 / i
                    bp += 1 - min(nonrel, R) / min(R, N) if nonrel else 1
                    if i <= 10:
                        dcg += g / math.log2(i + 1)
                elif g is not None:
                    nonrel += 1
            ideal = sorted((g for g in q.values() if g > 0), reverse=True)[:10]
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
            p10 = sum(1 for doc in ranked[:10] if q.get(doc, 0) > 0) / 10
            vals = [ap / R if R else 0, p10, dcg / idcg if idcg else 0, bp / R if R else 0, rr]
            sums = [a + b for a, b in zip(sums, vals, strict=True)]
            n += 1
        out[name] = [s / n for s in sums]
    return out


def pytrec_eval_end_to_end(d: Path):
    import pytrec_eval

    qrels, runs = _read_dicts(d)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10", "bpref", "recip_rank"})
    return {name: ev.evaluate(run) for name, run in runs.items()}


def pytrec_eval_evaluation_only(d: Path):
    import pytrec_eval

    qrels, runs = _read_dicts(d)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10", "bpref", "recip_rank"})
    t = time.perf_counter()
    for run in runs.values():
        ev.evaluate(run)
    return time.perf_counter() - t


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    d = args.data / "trec8"
    bayeval_end_to_end(d)  # warm imports and the page cache
    ours = best_of(lambda: bayeval_end_to_end(d), args.repeat)
    print(f"bayeval  read + RankData + {MEASURES}, 129 runs x 50 topics: {ours:.2f} s  (goal <= 3 s)")
    naive = best_of(lambda: naive_end_to_end(d), 1)
    print(f"naive pure Python, same work:                        {naive:.2f} s  ratio {naive / ours:.1f}x")
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        print("pytrec_eval-terrier is not installed: `pip install pytrec_eval-terrier` to compare")
        return
    pte = best_of(lambda: pytrec_eval_end_to_end(d), 1)
    only = pytrec_eval_evaluation_only(d)
    print(f"pytrec_eval-terrier, parse in Python + evaluate:      {pte:.2f} s  ratio {pte / ours:.1f}x"
          f"  (evaluation alone {only:.2f} s)")


if __name__ == "__main__":
    main()
