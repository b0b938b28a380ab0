"""How wrong is the papers' closed form on TREC-8? paper vs delta vs exact vs Monte Carlo.

Ten runs spread over the official MAP ranking, 50 topics, rankings cut at depth 100, unjudged
documents relevant with probability p (default: 0.5, the papers' assumption, then 0.1, near the
true rate of relevance among TREC-8's unjudged documents). Two judgment sets:

- ``full``: the official qrels (a depth-100 pool of the judged runs): few unjudged documents;
- ``pool10``: only the judgments a depth-10 pool of all 129 runs would have made.

For every (system, topic) AP and every (pair, topic) ΔAP it reports E and Var of each method
against the exact values, Monte Carlo's agreement (z-scores), and how the pairwise confidence
P(ΔMAP < 0) changes; then the same confidence for all 8,256 pairs of the 129 runs (depth-10
judgments). Prints markdown (docs/expected.md holds a copy of the output).

Usage::

    python studies/expected_accuracy.py [--data PATH] [--p 0.5 0.1] [--draws 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bayeval.data import RankData, pool_qrels
from bayeval.expected import compare_systems, expected_measures
from bayeval.io import read_qrels, read_run, read_runs

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"


def _pick_runs(data_dir: Path, k: int = 10) -> list[str]:
    rows = [line.split() for line in (data_dir / "official-map.txt").read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: -float(r[1]))
    idx = np.linspace(0, len(rows) - 1, k).round().astype(int)
    return [rows[i][0] for i in idx]


def _q(x, qs=(0.05, 0.5, 0.95)):
    x = np.asarray(x).ravel()
    x = x[np.isfinite(x)]
    return " / ".join(f"{v:.3g}" for v in np.quantile(x, qs)) if len(x) else "n/a"


def _table(title, rows):
    print(f"\n**{title}**\n")
    print("| quantity | 5% / median / 95% |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


def _decide(x):
    return np.where(x >= 0.95, 1, np.where(x <= 0.05, -1, 0))


def _timed(function, times: dict, key: str, data: RankData, p: float, draws: int, seed: int) -> dict:
    """``function`` (expected_measures or compare_systems) by every method; seconds into ``times[key + method]``."""
    out = {}
    for m in ("paper", "delta", "exact", "mc"):
        mc = {"draws": draws, "seed": seed} if m == "mc" else {}
        t0 = time.perf_counter()
        out[m] = function(data, default_p=p, method=m, progress=False, **mc)
        times[key + m] = time.perf_counter() - t0
    return out


def analyse(label: str, data: RankData, p: float, draws: int, seed: int) -> None:
    n_unj = np.mean([np.count_nonzero(~tr.judged) for tr in data])
    print(f"\n### {label}: {len(data.systems)} runs x {len(data)} topics, depth {data.depth}, "
          f"p = {p} for unjudged documents ({n_unj:.0f} unjudged per topic on average)")
    times = {}
    ev = _timed(expected_measures, times, "", data, p, draws, seed)
    ex = ev["exact"]
    random = ex.variance[0] > 1e-12  # cells whose AP is uncertain at all
    frac = random.mean()
    rows = [("cells with Var[AP] > 0", f"{100 * frac:.0f}% of {random.size}")]
    rows += [(f"Var[AP] {m} / exact", _q(ev[m].variance[0][random] / ex.variance[0][random]))
             for m in ("paper", "delta", "mc")]
    rows += [(f"E[AP] {m} - exact", _q((ev[m].expected[0] - ex.expected[0])[random])) for m in ("paper", "delta")]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (ev["mc"].expected[0] - ex.expected[0]) / np.sqrt(ex.variance[0] / draws)
    rows.append((f"MC mean z-score vs exact ({draws} draws)", _q(z[random])))
    rows.append(("Var[MAP] paper / exact (per system)", _q(ev["paper"].all_variance[0] / ex.all_variance[0])))
    rows.append(("Var[MAP] delta / exact (per system)", _q(ev["delta"].all_variance[0] / ex.all_variance[0])))
    _table(f"AP of one system ({label})", rows)

    cmp = _timed(compare_systems, times, "pairs ", data, p, draws, seed)
    cx = cmp["exact"]
    rnd = cx.delta_variance > 1e-12
    rows = [(f"Var[ΔAP] {m} / exact", _q(cmp[m].delta_variance[rnd] / cx.delta_variance[rnd]))
            for m in ("paper", "delta", "mc")]
    rows.append(("Var[ΔMAP] paper / exact", _q(cmp["paper"].all_variance / cx.all_variance)))
    rows.append(("Var[ΔMAP] delta / exact", _q(cmp["delta"].all_variance / cx.all_variance)))
    _table(f"ΔAP and ΔMAP of the {len(cx.index_a)} pairs ({label})", rows)
    print()
    print("| confidence P(Δ<0) vs exact | max abs difference, per (pair, topic) | cells where the 0.95 decision "
          "differs | max abs difference, ΔMAP | pairs where the 0.95 decision differs |")
    print("|---|---|---|---|---|")
    for m in ("paper", "delta", "mc"):
        d_cell = np.abs(cmp[m].p_less - cx.p_less)
        flips = int(np.sum(_decide(cmp[m].p_less) != _decide(cx.p_less)))
        d_map = np.abs(cmp[m].all_p_less - cx.all_p_less)
        flips_map = int(np.sum(_decide(cmp[m].all_p_less) != _decide(cx.all_p_less)))
        print(f"| {m} | {d_cell.max():.3g} | {flips} / {d_cell.size} | {d_map.max():.3g} | "
              f"{flips_map} / {d_map.size} |")
    conf = {m: np.maximum(cmp[m].all_p_less, 1 - cmp[m].all_p_less) for m in cmp}
    print()
    print("| method | pairs with confidence ≥ 0.95 | mean confidence |")
    print("|---|---|---|")
    for m in ("paper", "delta", "exact", "mc"):
        print(f"| {m} | {int(np.sum(conf[m] >= 0.95))} / {len(conf[m])} | {conf[m].mean():.4f} |")
    print("\nseconds: " + ", ".join(f"{k} {v:.2f}" for k, v in times.items()))


def all_pairs(label: str, data: RankData, p: float, draws: int, seed: int) -> None:
    """ΔMAP confidence of all pairs of all runs: how often does the method change the 0.95 decision?"""
    times = {}
    cmp = _timed(compare_systems, times, "", data, p, draws, seed)
    n = len(cmp["exact"].index_a)
    print(f"\n### all {n} pairs of {len(data.systems)} runs, {label}, depth {data.depth}, p = {p}\n")
    print("| method | Var[ΔMAP] / exact, 5% / median / 95% | pairs confident (≥ 0.95 either way) | "
          "0.95 decision differs from exact | max abs ΔP(ΔMAP<0) | seconds |")
    print("|---|---|---|---|---|---|")
    ex = cmp["exact"]
    for m in ("paper", "delta", "exact", "mc"):
        c = cmp[m]
        conf = int(np.sum(_decide(c.all_p_less) != 0))
        flips = int(np.sum(_decide(c.all_p_less) != _decide(ex.all_p_less)))
        dmax = np.abs(c.all_p_less - ex.all_p_less).max()
        extra = f" ({draws} draws)" if m == "mc" else ""
        print(f"| {m}{extra} | {_q(c.all_variance / ex.all_variance)} | {conf} | {flips} | {dmax:.3g} | "
              f"{times[m]:.1f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--p", type=float, nargs="+", default=[0.5, 0.1])
    parser.add_argument("--draws", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args(argv)
    names = _pick_runs(args.data)
    runs = [read_run(args.data / "runs" / f"input.{n}.gz") for n in names]
    qrels = read_qrels(args.data / "qrels.txt.gz")
    print(f"runs: {', '.join(names)}")
    full = RankData.build(runs, qrels, depth=args.depth)
    everything = read_runs(args.data / "runs")
    pool = pool_qrels(everything, qrels, 10)
    shallow = RankData.build(runs, pool, depth=args.depth)
    for p in args.p:
        analyse("full qrels", full, p, args.draws, args.seed)
        analyse("judged at depth 10 only", shallow, p, args.draws, args.seed)
    shallow_all = RankData.build(everything, pool, depth=args.depth)
    for p in args.p:
        all_pairs("judged at depth 10 only", shallow_all, p, 2000, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
