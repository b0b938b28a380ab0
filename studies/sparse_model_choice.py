"""Choosing the sparse-label model's prior mean μ and pooling κ (docs/sparse-labels.md).

Runs one trial of the sparse-label study (AP, depth 100) for each μ in ``--means`` at the given ``--pooling``
and prints Kendall's τ, RMSE and the proper scores of P(Δ<0). Run it on the synthetic collection and Robust
2003 only; TREC-8 is the report.

    python studies/sparse_model_choice.py ../shared/data/robust03 --means 1,10,30,60 --pooling 1
    python studies/sparse_model_choice.py ../shared/data/robust03 --means 60 --pooling 0.1
    python studies/sparse_model_choice.py /tmp/sparse/synth-msm --means 1,2,5,10 --pooling 1
    python studies/sparse_model_choice.py ../shared/data/robust03 --means 60 --trials 5 --combine projected
"""

from __future__ import annotations

import argparse
import time

from bayeval.experiments.collection import load_collection
from bayeval.experiments.sparse import run_sparse_study
from bayeval.relevance.config import SparseLabelConfig


def over_confident(bins) -> str:
    """Bins whose Wilson interval lies beyond the bin on the side of 0.5 (docs/sparse-labels.md): count and list."""
    low = (bins["upper_edge"] <= 0.5) & (bins["lower"] > bins["upper_edge"])
    high = (bins["lower_edge"] >= 0.5) & (bins["upper"] < bins["lower_edge"])
    b = bins[(low | high) & (bins["n"] > 0)]
    return f"{len(b)}" + "".join(f" [{r.bin}: {r.mean_forecast:.2f} → {r.frequency:.2f}, n={r.n}]"
                                 for r in b.itertuples())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--means", default="1,2,5,10,30,60", help="comma-separated prior means μ")
    ap.add_argument("--pooling", type=float, default=0.1, help="κ (default 0.1)")
    ap.add_argument("--shape", type=float, default=0.5, help="Gamma shape k of R̄ - 1 (default 0.5)")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--combine", default="mean", choices=("mean", "projected"),
                    help="a document's p from its cells: their mean, or the mean projected onto the cells' counts")
    ap.add_argument("--no-vote-classes", action="store_true", help="with --combine projected: no vote classes")
    ap.add_argument("--ridge", type=float, default=0.01, help="the projection's ridge λ (default 0.01)")
    ap.add_argument("--draw-steps", type=int, default=3, help="chord steps per posterior draw (default 3)")
    ap.add_argument("--share-draws", default="cells", choices=("cells", "topics"),
                    help="the cells' shares drawn each on its own, or jointly by topic weights (default cells)")
    args = ap.parse_args()
    col = load_collection(args.collection)
    runs, qrels = col.runs(col.run_names), col.qrels()
    for m in (float(x) for x in args.means.split(",")):
        t0 = time.perf_counter()
        combine = "" if args.combine == "mean" else (f"-projected{'' if args.no_vote_classes else '-votes'}"
                                                     f"-ridge{args.ridge:g}-steps{args.draw_steps}")
        combine += "" if args.share_draws == "cells" else f"-{args.share_draws}"
        cfg = SparseLabelConfig(relevant_mean=m, pooling=args.pooling, relevant_shape=args.shape,
                                combine=args.combine, vote_classes=not args.no_vote_classes,
                                projection_ridge=args.ridge, projection_draw_steps=args.draw_steps,
                                share_draws=args.share_draws,
                                name=f"sparse-mu{m:g}-kappa{args.pooling:g}-k{args.shape:g}{combine}")
        st = run_sparse_study(runs, qrels, trials=args.trials, depth=args.depth, model=cfg)
        bins = st.reliability()
        print(f"{cfg.name}: "
              + st.summary().replace("\n", " | ")
              + f" | inconsistent bins {int((~bins['consistent']).sum())}, over-confident {over_confident(bins)}"
              + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
