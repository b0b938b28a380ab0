"""xinfAP/infNDCG/iP@k of many runs from a stratified sample: the vectorised kernels against a literal
per-document loop (the reference, written here the way sample_eval.pl walks a ranking), same process.

    python benchmarks/bench_sampling.py ../shared/data/trec8 [--runs 20]

Prints the time of both on the first ``--runs`` runs, the ratio, and the largest difference of infAP, infNDCG and
iP@10 between them.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from bayeval.data import RunSet
from bayeval.io import read_runs, read_stratified_sample
from bayeval.sampling import inferred_measures


def reference(runs, sample, depth=1000):
    """infAP, infNDCG, iP10 per (run, topic) by walking each ranking document by document."""
    out = {}
    for run in runs:
        for t in run.topics:
            if t not in sample:
                continue
            ts = sample[t]
            cat = {d: ts.labels[c] for d, c in zip(ts.docnos, ts.strata, strict=True)}
            rel = dict(zip(ts.docnos, ts.grades.tolist(), strict=True))
            labels = sorted(set(ts.labels))
            big_n = {c: 0 for c in labels}
            small_n = {c: 0 for c in labels}
            s_rel = {c: 0 for c in labels}
            grade_n: dict = {}
            for d in ts.docnos:
                c, g = cat[d], rel[d]
                big_n[c] += 1
                small_n[c] += g >= 0
                s_rel[c] += g > 0
                if g > 0:
                    grade_n.setdefault(g, {c2: 0 for c2 in labels})[c] += 1
            r_hat = sum(s_rel[c] * big_n[c] / small_n[c] for c in labels if small_n[c])
            counts = {g: sum(v[c] * big_n[c] / small_n[c] for c in labels if small_n[c]) for g, v in grade_n.items()}
            ideal, start = 0.0, 0
            for g in sorted(counts, reverse=True):
                r = start + 1
                while r <= start + int(counts[g] + 0.5):
                    ideal += g / (math.log(r + 1) / math.log(2))
                    if r >= depth:
                        break
                    r += 1
                start += int(counts[g] + 0.5)
            nd = {c: 0 for c in labels}
            ns = {c: 0 for c in labels}
            nr = {c: 0 for c in labels}
            sap = {c: 0.0 for c in labels}
            gain = {c: 0.0 for c in labels}
            m, p10, r_k = 0, None, 0.0
            for k, d in enumerate(run.ranking(t)[:depth], start=1):
                c, g = cat.get(d), rel.get(d, -1)
                if g > 0:
                    above = sum(nd[x] / m * (nr[x] + 1e-5) / (ns[x] + 3e-5) for x in labels if m and nd[x])
                    sap[c] += 1 / k + m / k * above
                    nr[c] += 1
                    gain[c] += g / (math.log(k + 1) / math.log(2))
                if c is not None:
                    m += 1
                    nd[c] += 1
                    ns[c] += g >= 0
                r_k = sum(nd[x] * (nr[x] + 1e-5) / (ns[x] + 3e-5) for x in labels)
                if k == 10:
                    p10 = r_k / 10
            ap = sum((s_rel[c] * big_n[c] / small_n[c]) / r_hat * (sap[c] / s_rel[c] if s_rel[c] else 0)
                     for c in labels if small_n[c] and r_hat)
            dcg = sum(nd[c] / m * gain[c] / ns[c] for c in labels if m and ns[c])
            out[run.name, t] = (ap, m * dcg / ideal if ideal else 0.0, p10 if p10 is not None else r_k / 10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("collection")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    d = Path(args.collection)
    sample = read_stratified_sample(d / "sampled" / "prels.txt.gz")
    runs = RunSet(tuple(read_runs(d / "runs"))[: args.runs])
    inferred_measures(runs, sample)  # warm-up
    t0 = time.perf_counter()
    ev = inferred_measures(runs, sample)
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = reference(runs, sample)
    slow = time.perf_counter() - t0
    diff = 0.0
    for (name, t), vals in ref.items():
        s, j = ev.systems.index(name), ev.topics.index(t)
        ours = (ev.per_topic["infAP"][s, j], ev.per_topic["infNDCG"][s, j], ev.per_topic["iP10"][s, j])
        diff = max(diff, max(abs(a - b) for a, b in zip(ours, vals, strict=True)))
    print(f"{len(runs)} runs x {len(ev.topics)} topics: bayeval {fast:.2f} s, reference loop {slow:.2f} s, "
          f"ratio {slow / fast:.1f}x; max abs diff (infAP, infNDCG, iP10) {diff:.2e}")
    assert np.isfinite(diff)


if __name__ == "__main__":
    main()
