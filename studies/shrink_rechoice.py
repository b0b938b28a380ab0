"""Choose the model-assisted estimator's (tuning, per-topic shrink) by a rule written before scoring
(docs/notes/sampling-record.md, "the per-topic shrink re-chosen with the model-tuned weight").

Reads trial tables of ``studies/sampling_variants.py evaluate`` (methods named as its variants), scores every
method per *cell* — a collection's runs, split into automatic and manual runs where the collection has manual
runs — and applies the rule to the candidates against the default:

- ``dist(c) = max(0, 0.93 - c, c - 0.97)``, the coverage's distance from the band 93–97%;
- a candidate is *eligible* iff in every cell (1) ``dist(candidate) - dist(default)`` is at most the paired
  standard error (over trials) of the coverage difference, and never more than 0.02; (2) its RMSE of MAP is at
  most 1.05× the default's; (3) its Brier score of P(ΔMAP < 0) exceeds the default's by at most
  ``max(2 · paired se, 0.0005)``; (4) at least 97% of its calls at ≥ 0.99 either way are right (a cell without
  such calls passes); and (5) summed over cells, it has no more over-confident reliability bins than the
  default (a bin above ½ whose Wilson interval lies wholly below the bin, or below ½ wholly above it);
- among the eligible, the smallest mean over cells of ``width ÷ statAP's width`` (the study's ``× statAP``)
  wins iff it is below the default's by at least 0.005; otherwise the default stays. Means within 0.001 of each
  other tie, broken in the order the candidates are given.

Usage::

    python studies/shrink_rechoice.py e_r03.parquet e_syn.parquet e_sm.parquet --default K5-raw-jackknife \\
        --reference sample-jackknife --candidates "K5-raw-jackknife-s0;K5-raw-jackknife-s10;..."
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.experiments.sampling import read_sampling_table, sampling_reliability, sampling_statistics

BAND = (0.93, 0.97)
COVERAGE_CAP, RMSE_FACTOR, BRIER_FLOOR, RIGHT99, MARGIN, TIE = 0.02, 1.05, 0.0005, 0.97, 0.005, 0.001


def band_distance(coverage):
    """Distance of a coverage (share) from the band 93–97% (0 inside it)."""
    c = np.asarray(coverage, dtype=float)
    return np.maximum(0.0, np.maximum(BAND[0] - c, c - BAND[1]))


def _cells(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """``(collection, group)``: ``all`` where a collection has no manual run, else ``automatic`` and ``manual``."""
    out = []
    for col, g in frame.groupby("collection", sort=True):
        has_manual = bool(g[g.kind == "run"].manual.any())
        out += [(col, "automatic"), (col, "manual")] if has_manual else [(col, "all")]
    return out


def _in_cell(rows: pd.DataFrame, group: str) -> pd.DataFrame:
    return rows if group == "all" else rows[rows.manual.to_numpy() == (group == "manual")]


def _per_trial(frame: pd.DataFrame, col: str, group: str, budget: float, method: str) -> pd.DataFrame:
    """Per trial: the cell's coverage of the 95% interval of MAP and Brier score of P(ΔMAP < 0)."""
    g = frame[(frame.collection == col) & (frame.budget == budget) & (frame.method == method)]
    r, p = _in_cell(g[g.kind == "run"], group), _in_cell(g[g.kind == "pair"], group)
    z = 1.959963984540054
    hit = ((r.estimate - z * r.se <= r.truth) & (r.truth <= r.estimate + z * r.se)).astype(float)
    brier = (p.p_less - (p.truth < 0).astype(float)) ** 2
    return pd.DataFrame({"coverage": hit.groupby(r.trial).mean(), "brier": brier.groupby(p.trial).mean()})


def _paired_se(a: pd.Series, b: pd.Series) -> float:
    """Standard error over trials of the mean of ``a - b`` (trials matched; NaN with fewer than 2)."""
    d = (a - b).dropna()
    return float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else np.nan


def score(frame: pd.DataFrame, default: str, reference: str) -> pd.DataFrame:
    """Every method's figures per cell × budget, with the paired standard errors against ``default``.

    Columns: ``collection, group, budget, method, trials, coverage, coverage_se, dcoverage_se, width, x_stat,
    rmse, bias, brier, dbrier_se, calls99, right99, overconfident``.
    """
    methods = set(frame.method)
    for name, what in ((default, "default"), (reference, "reference")):
        if name not in methods:
            raise BayevalInputError(f"{what}: no rows of method {name!r} in the tables")
    stats = sampling_statistics(frame)
    _, bins = sampling_reliability(frame)
    mid = (bins.lower_edge + bins.upper_edge) / 2
    bins = bins.assign(over=((mid > 0.5) & (bins.upper < bins.lower_edge))
                       | ((mid < 0.5) & (bins.lower > bins.upper_edge)))
    rows = []
    for col, group in _cells(frame):
        for budget in sorted(set(frame[frame.collection == col].budget)):
            base = _per_trial(frame, col, group, budget, default)
            ref = stats[(stats.collection == col) & (stats.budget == budget) & (stats.method == reference)
                        & (stats.group == group)]
            for method in sorted(set(frame[(frame.collection == col) & (frame.budget == budget)].method)):
                st = stats[(stats.collection == col) & (stats.budget == budget) & (stats.method == method)
                           & (stats.group == group)].iloc[0]
                mine = _per_trial(frame, col, group, budget, method)
                g = frame[(frame.collection == col) & (frame.budget == budget) & (frame.method == method)]
                p = _in_cell(g[g.kind == "pair"], group)
                conf = np.maximum(p.p_less, 1 - p.p_less)
                right = (p.p_less >= 0.5) == (p.truth < 0)
                split = "all" if group == "all" else "run_type"
                b = bins[(bins.collection == col) & (bins.budget == budget) & (bins.method == method)
                         & (bins.split == split) & (bins.group == group)]
                rows.append((col, group, budget, method, int(st.trials), st.coverage, st.coverage_se,
                             _paired_se(mine.coverage, base.coverage), st.width,
                             st.width / float(ref.width.iloc[0]), st.rmse, st.bias, st.brier,
                             _paired_se(mine.brier, base.brier), int((conf >= 0.99).sum()),
                             float(right[conf >= 0.99].mean()) if (conf >= 0.99).any() else np.nan,
                             int(b.over.sum())))
    return pd.DataFrame(rows, columns=["collection", "group", "budget", "method", "trials", "coverage",
                                       "coverage_se", "dcoverage_se", "width", "x_stat", "rmse", "bias", "brier",
                                       "dbrier_se", "calls99", "right99", "overconfident"])


def decide(scores: pd.DataFrame, default: str, candidates: list[str]) -> tuple[pd.DataFrame, str]:
    """The rule (module docstring): per candidate its checks and mean ``× statAP``; and the method chosen."""
    keys = ["collection", "group", "budget"]
    d = scores[scores.method == default].set_index(keys)
    out = []
    for cand in [default, *[c for c in candidates if c != default]]:
        c = scores[scores.method == cand].set_index(keys)
        if len(c) != len(d) or not c.index.sort_values().equals(d.index.sort_values()):
            raise BayevalInputError(f"candidates: {cand!r} is not scored in the default's cells")
        c = c.loc[d.index]
        worse = pd.Series(band_distance(c.coverage) - band_distance(d.coverage), index=c.index)
        cov_ok = worse <= np.minimum(c.dcoverage_se.fillna(0.0), COVERAGE_CAP) + 1e-12
        rmse_ok = c.rmse <= RMSE_FACTOR * d.rmse
        brier_ok = c.brier - d.brier <= np.maximum(2 * c.dbrier_se.fillna(0.0), BRIER_FLOOR)
        right_ok = c.right99.isna() | (c.right99 >= RIGHT99)
        bins_ok = int(c.overconfident.sum()) <= int(d.overconfident.sum())
        failed = [f"coverage {k[0]} {k[1]} {k[2]:g}" for k in c.index[~cov_ok.to_numpy()]]
        failed += [f"rmse {k[0]} {k[1]} {k[2]:g}" for k in c.index[~rmse_ok.to_numpy()]]
        failed += [f"brier {k[0]} {k[1]} {k[2]:g}" for k in c.index[~brier_ok.to_numpy()]]
        failed += [f"right99 {k[0]} {k[1]} {k[2]:g}" for k in c.index[~right_ok.to_numpy()]]
        failed += [] if bins_ok else [f"overconfident bins {int(c.overconfident.sum())} > "
                                      f"{int(d.overconfident.sum())}"]
        out.append((cand, float(c.x_stat.mean()), float(worse.max()), int(c.overconfident.sum()),
                    not failed, "; ".join(failed)))
    table = pd.DataFrame(out, columns=["method", "mean_x_stat", "max_coverage_worse", "overconfident", "eligible",
                                       "failed"])
    base = float(table.mean_x_stat.iloc[0])
    ok = table[table.eligible & (table.method != default)]
    if not len(ok) or float(ok.mean_x_stat.min()) > base - MARGIN:
        return table, default
    best = float(ok.mean_x_stat.min())
    return table, str(ok[ok.mean_x_stat <= best + TIE].method.iloc[0])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", nargs="+", help="trial tables of sampling_variants.py evaluate")
    ap.add_argument("--default", required=True)
    ap.add_argument("--reference", required=True, help="statAP's method, the × statAP reference")
    ap.add_argument("--candidates", default="", help="semicolon-separated methods (ties go to the earlier)")
    ap.add_argument("--scores", default=None, help="write the per-cell scores to this CSV")
    args = ap.parse_args(argv)
    try:
        cands = [c.strip() for c in args.candidates.split(";") if c.strip()]
        frame = pd.concat([read_sampling_table(p) for p in args.tables], ignore_index=True)
        frame = frame[frame.method.isin([args.default, args.reference, *cands])]
        scores = score(frame, args.default, args.reference)
        table, chosen = decide(scores, args.default, cands) if cands else (None, args.default)
    except BayevalInputError as err:
        sys.exit(f"shrink_rechoice: {err}")
    pd.set_option("display.width", 250)
    print(scores.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if args.scores:
        scores.to_csv(args.scores, index=False)
    if table is not None:
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        print(f"chosen: {chosen}")


if __name__ == "__main__":
    main()
