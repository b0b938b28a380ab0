"""The depth study over the choosing collections, every candidate of docs/notes/depth.md, and the rule's verdict.

Each collection is judged to depth K (every run's top K) and evaluated at depth 100
(:mod:`bayeval.experiments.depth`); per collection the per-run and reliability tables are written to
``OUT/<collection>.runs.parquet`` and ``OUT/<collection>.bins.parquet``, and the statistics are printed.
``--rule`` reads every table in OUT and applies the selection rule of docs/notes/depth.md.

    python studies/depth_choice.py --out /tmp/depth robust03=../shared/data/robust03 \\
        dl20=../shared/data/dl20-passage:2 synth-ind=DIR synth-dense=DIR
    python studies/depth_choice.py --out /tmp/depth --rule

A collection is ``NAME=DIR[:LEVEL]`` (LEVEL the relevance level, default 1); its runs are condensed to the
documents the qrels judge. The synthetic collections are written by studies/make_synthetic_collection.py
(docs/depth.md gives the two recipes).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.experiments.depth import DepthStudy, DepthVariant, depth_statistics, depth_study
from bayeval.io import load_collection
from bayeval.relevance import load_config
from bayeval.relevance.config import BeyondDepthPrior

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"


BASE = str(STUDY_MODELS / "hier-level-shift.toml")


def _band(name: str, **kw):
    return dataclasses.replace(load_config(BASE), beyond_depth=BeyondDepthPrior(band="half", **kw), name=name)


#: Every candidate of the selection rule (docs/notes/depth.md), by label.
CANDIDATES = {
    "today": DepthVariant(BASE, unseen=True, name="today"),
    "today-nounseen": DepthVariant(BASE, unseen=False, name="today-nounseen"),
    "today-laplace": DepthVariant(BASE, fit="laplace", unseen=True, name="today-laplace"),
    "band-level-walk": DepthVariant(_band("band-level-walk"), unseen=True, name="band-level-walk"),
    "band-level-walk-nounseen": DepthVariant(_band("band-level-walk"), unseen=False,
                                             name="band-level-walk-nounseen"),
    "band-none-walk": DepthVariant(_band("band-none-walk", correction="none"), unseen=True, name="band-none-walk"),
    "band-level-flat": DepthVariant(_band("band-level-flat", growth="flat"), unseen=True, name="band-level-flat"),
    "band-level-walk-f25": DepthVariant(_band("band-level-walk-f25", collection_floor=0.25), unseen=True,
                                        name="band-level-walk-f25"),
    "band-level-walk-f50": DepthVariant(_band("band-level-walk-f50", collection_floor=0.5), unseen=True,
                                        name="band-level-walk-f50"),
    "band-level-walk-laplace": DepthVariant(_band("band-level-walk"), fit="laplace", unseen=True,
                                            name="band-level-walk-laplace"),
}


def _collection(text: str):
    name, _, rest = text.partition("=")
    path, _, level = rest.partition(":")
    if not name or not path:
        raise SystemExit(f"depth_choice.py: collection {text!r}: expected NAME=DIR[:LEVEL]")
    return load_collection(path, name=name, relevance_level=int(level or 1), condense=True)


def verdict(stats: pd.DataFrame, baseline: str = "today") -> pd.DataFrame:
    """The rule of docs/notes/depth.md over the candidates' statistics (anchors left out): per candidate the
    honest cells (coverage ≥ 0.90, half-width ≤ 4 × median error), cells with median E/true in 0.95–1.05, mean
    |log E/true|, the worst drop of τ against the baseline, eligibility, and the rank."""
    s = stats[stats["variant"].isin(CANDIDATES)].copy()
    s["honest"] = (s["coverage"] >= 0.90) & (s["width_error"] <= 4.0)
    s["centred"] = (s["ratio"] >= 0.95) & (s["ratio"] <= 1.05)
    s["abslog"] = np.abs(np.log(s["ratio"]))
    base = s[s["variant"] == baseline].set_index(["collection", "pool_depth"])["tau"]
    s["tau_drop"] = base.reindex(pd.MultiIndex.from_frame(s[["collection", "pool_depth"]])).to_numpy() - s["tau"]
    g = s.groupby("variant").agg(cells=("honest", "size"), honest=("honest", "sum"), centred=("centred", "sum"),
                                 mean_abslog=("abslog", "mean"), tau_drop=("tau_drop", "max"),
                                 coverage=("coverage", "mean"))
    g["eligible"] = g["tau_drop"] <= 0.02
    g = g.sort_values(["eligible", "honest", "centred", "mean_abslog"], ascending=[False, False, False, True])
    return g


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collections", nargs="*", help="NAME=DIR[:LEVEL]")
    ap.add_argument("--out", required=True, type=Path, help="directory of the tables")
    ap.add_argument("--pool-depths", default="10,20,50")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--variants", default=",".join(CANDIDATES), help="labels of CANDIDATES (default all)")
    ap.add_argument("--rule", action="store_true", help="apply the selection rule to every table in --out")
    a = ap.parse_args(argv)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    if a.rule:
        runs = [pd.read_parquet(p) for p in sorted(a.out.glob("*.runs.parquet"))]
        bins = [pd.read_parquet(p) for p in sorted(a.out.glob("*.bins.parquet"))]
        if not runs:
            raise SystemExit(f"depth_choice.py: no *.runs.parquet in {a.out}")
        stats = depth_statistics(pd.concat(runs, ignore_index=True), pd.concat(bins, ignore_index=True))
        print(stats.round(3).to_string(index=False))
        print(verdict(stats).round(4).to_string())
        return
    labels = [v for v in a.variants.split(",") if v]
    unknown = [v for v in labels if v not in CANDIDATES]
    if unknown:
        raise SystemExit(f"depth_choice.py: --variants: unknown {unknown}; known: {', '.join(CANDIDATES)}")
    ks = [int(k) for k in a.pool_depths.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)
    for text in a.collections:
        col = _collection(text)
        st = depth_study(col, ks, [CANDIDATES[v] for v in labels], depth=a.depth,
                         progress=lambda line: print(line, file=sys.stderr, flush=True))
        stem = a.out / col.name
        old_runs, old_bins = Path(f"{stem}.runs.parquet"), Path(f"{stem}.bins.parquet")
        runs, bins = st.runs, st.bins
        if old_runs.is_file():  # keep the rows of other variants and pool depths already measured
            prev = pd.read_parquet(old_runs)
            keep = ~(prev["variant"].isin(runs["variant"].unique()) & prev["pool_depth"].isin(ks))
            runs = pd.concat([prev[keep], runs], ignore_index=True)
            prevb = pd.read_parquet(old_bins)
            keepb = ~(prevb["variant"].isin(bins["variant"].unique()) & prevb["pool_depth"].isin(ks))
            bins = pd.concat([prevb[keepb], bins], ignore_index=True)
        runs.to_parquet(old_runs, index=False)
        bins.to_parquet(old_bins, index=False)
        print(DepthStudy(runs, bins).statistics().round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
