"""Read + standard measures for all 129 TREC-8 runs, end to end, against two references.

Usage::

    python benchmarks/bench_measures.py [--data ../shared/data] [--repeat 3]

Times (best of ``--repeat`` wall-clock runs):

* bayeval: read the 129 runs and the qrels, build the :class:`~bayeval.data.RankData`, evaluate
  AP, P@10, nDCG@10, bpref and RR for every run and topic (also split into its three steps);
* a naive pure-Python implementation of the same work, measured in the same process: line-by-line
  parsing into dicts, then one run and one topic at a time (the reference a user would write);
* pytrec_eval-terrier when installed: the same Python parsing into dicts, plus its C evaluation
  (trec_eval's code); its evaluation alone is reported too.

Each reference's means are compared with bayeval's (largest absolute difference), so a fast wrong
answer cannot pass unnoticed. The machine's load is printed: on a shared machine, timings vary.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import time
from pathlib import Path

import numpy as np

MEASURES = "AP,P@10,nDCG@10,bpref,RR"
TREC_EVAL_NAMES = ["map", "P_10", "ndcg_cut_10", "bpref", "recip_rank"]


def bayeval_end_to_end(d: Path, timings: dict | None = None):
    """``{run: [AP, P@10, nDCG@10, bpref, RR]}`` means, via bayeval."""
    from bayeval.data import RankData
    from bayeval.io import read_qrels, read_runs
    from bayeval.measures import evaluate

    t0 = time.perf_counter()
    runs, qrels = read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz")
    t1 = time.perf_counter()
    data = RankData.build(runs, qrels)
    t2 = time.perf_counter()
    ev = evaluate(data, MEASURES)
    means = ev.mean()
    t3 = time.perf_counter()
    if timings is not None:
        timings.update(read=t1 - t0, build=t2 - t1, evaluate=t3 - t2)
    return {name: means[:, s].tolist() for s, name in enumerate(ev.systems)}


def _read_dicts(d: Path):
    """qrels ``{topic: {doc: grade}}`` and runs ``{tag: {topic: {doc: score}}}``, parsed in Python."""
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(d / "qrels.txt.gz", "rt") as fh:
        for line in fh:
            t, _, doc, rel = line.split()
            qrels.setdefault(t, {})[doc] = int(rel)
    runs = {}
    for f in sorted((d / "runs").glob("input.*.gz")):
        run: dict[str, dict[str, float]] = {}
        tag = None
        with gzip.open(f, "rt") as fh:
            for line in fh:
                t, _, doc, _, score, tag_ = line.split()
                tag = tag or tag_
                run.setdefault(t, {})[doc] = float(score)
        runs[tag] = run
    return qrels, runs


def naive_end_to_end(d: Path):
    """Straightforward Python, one run and topic at a time (trec_eval's conventions)."""
    qrels, runs = _read_dicts(d)
    out = {}
    for name, run in runs.items():
        sums = [0.0] * 5
        n = 0
        for t, scores in run.items():
            if t not in qrels:
                continue
            q = qrels[t]
            ranked = sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)  # score, docno descending
            R = sum(1 for g in q.values() if g >= 1)
            N = sum(1 for g in q.values() if 0 <= g < 1)
            hits = nonrel = 0
            ap = rr = bp = dcg = 0.0
            for i, doc in enumerate(ranked, start=1):
                g = q.get(doc)
                if g is None or g < 0:
                    continue
                if i <= 10 and g > 0:
                    dcg += g / math.log2(i + 1)
                if g >= 1:
                    hits += 1
                    ap += hits / i
                    rr = rr or 1 / i
                    bp += 1 - min(nonrel, R) / min(R, N) if nonrel else 1
                else:
                    nonrel += 1
            ideal = sorted((g for g in q.values() if g > 0), reverse=True)[:10]
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
            p10 = sum(1 for doc in ranked[:10] if q.get(doc, 0) >= 1) / 10
            vals = [ap / R if R else 0.0, p10, dcg / idcg if idcg else 0.0, bp / R if R else 0.0, rr]
            sums = [a + b for a, b in zip(sums, vals, strict=True)]
            n += 1
        out[name] = [s / n for s in sums]
    return out


def pytrec_eval_end_to_end(d: Path, timings: dict | None = None):
    import pytrec_eval

    t0 = time.perf_counter()
    qrels, runs = _read_dicts(d)
    t1 = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.10", "ndcg_cut.10", "bpref", "recip_rank"})
    out = {}
    for name, run in runs.items():
        per_topic = ev.evaluate(run)
        out[name] = [float(np.mean([v[m] for v in per_topic.values()])) for m in TREC_EVAL_NAMES]
    t2 = time.perf_counter()
    if timings is not None:
        timings.update(parse=t1 - t0, evaluate=t2 - t1)
    return out


def best_of(fn, repeat: int):
    """(best wall time, result of the last call, timings dict of the best call)."""
    best, result, best_timings = math.inf, None, {}
    for _ in range(repeat):
        timings: dict = {}
        t = time.perf_counter()
        result = fn(timings)
        elapsed = time.perf_counter() - t
        if elapsed < best:
            best, best_timings = elapsed, timings
    return best, result, best_timings


def max_difference(a: dict, b: dict) -> float:
    assert set(a) == set(b), "the implementations disagree on the run names"
    return max(abs(x - y) for name in a for x, y in zip(a[name], b[name], strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    d = args.data / "trec8"
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before the run")
    bayeval_end_to_end(d)  # warm imports and the page cache
    ours, ours_means, split = best_of(lambda tm: bayeval_end_to_end(d, tm), args.repeat)
    print(f"bayeval   read + RankData + {MEASURES}, 129 runs x 50 topics: {ours:.2f} s  (goal <= 3 s)")
    print(f"          read {split['read']:.2f} s, RankData.build {split['build']:.2f} s, "
          f"evaluate {split['evaluate']:.3f} s")
    naive, naive_means, _ = best_of(lambda tm: naive_end_to_end(d), 1)
    print(f"naive pure Python, same work:   {naive:.2f} s  ratio {naive / ours:.1f}x  "
          f"(max |difference| of the means {max_difference(ours_means, naive_means):.1e})")
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        print("pytrec_eval-terrier is not installed (`pip install pytrec_eval-terrier` to compare)")
        return
    from importlib.metadata import version

    pte, pte_means, pte_split = best_of(lambda tm: pytrec_eval_end_to_end(d, tm), 1)
    print(f"pytrec_eval-terrier {version('pytrec_eval-terrier')}, parse in Python + evaluate: {pte:.2f} s  "
          f"ratio {pte / ours:.1f}x  (parse {pte_split['parse']:.2f} s, evaluate {pte_split['evaluate']:.2f} s; "
          f"max |difference| of the means {max_difference(ours_means, pte_means):.1e})")
    print(f"load average {os.getloadavg()[0]:.2f} after the run")


if __name__ == "__main__":
    main()
