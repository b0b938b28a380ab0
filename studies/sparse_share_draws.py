"""Independent or joint draws of the sparse-label model's cell shares (docs/notes/sparse-labels-record.md, "Joint
draws").

Runs the sparse-label study (AP, depth 100) with a shipped configuration whose ``share_draws`` (and optionally
``relevant_shape`` and ``combine``) is replaced, and prints the study's summary, every reliability bin with its
Wilson interval, and Cox's recalibration line of P(Δ<0): the logistic regression of 1{Δ<0} on logit P(Δ<0),
whose slope is 1 for calibrated forecasts, above 1 when they are under-confident (too close to 0.5) and below 1
when over-confident (Cox 1958, *Two further applications of a model for binary regression*, Biometrika 45).
Choose on Robust 2003 and the synthetic collection; TREC-8 is the report.

    python studies/sparse_share_draws.py ../shared/data/robust03 --trials 15 --share-draws topics
    python studies/sparse_share_draws.py /tmp/sparse/synth-msm --model sparse-default --trials 20 --share-draws topics
    python studies/sparse_share_draws.py ../shared/data/robust03 --trials 15 --consensus-power 0.5
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_expit, logit

from bayeval.experiments.collection import load_collection
from bayeval.experiments.sparse import run_sparse_study
from bayeval.relevance import load_config

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"



def recalibration(p_less: np.ndarray, negative: np.ndarray) -> tuple[float, float]:
    """Intercept and slope of the logistic regression of ``negative`` on logit ``p_less`` (Cox 1958)."""
    x = logit(np.clip(np.asarray(p_less, dtype=np.float64), 1e-6, 1 - 1e-6))
    y = np.asarray(negative, dtype=np.float64)

    def nll(ab):
        z = ab[0] + ab[1] * x
        return -(y * log_expit(z) + (1 - y) * log_expit(-z)).sum()

    a, b = minimize(nll, [0.0, 1.0]).x
    return float(a), float(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--model", default=str(STUDY_MODELS / "sparse-trec.toml"))
    ap.add_argument("--share-draws", default="topics", choices=("cells", "topics"))
    ap.add_argument("--shape", type=float, default=None, help="replace relevant_shape k")
    ap.add_argument("--mean", type=float, default=None, help="replace relevant_mean mu")
    ap.add_argument("--combine", default=None, choices=("mean", "projected"), help="replace combine")
    ap.add_argument("--consensus-power", type=float, default=None,
                    help="replace consensus_power alpha (each topic's judged document weighs m_t^-alpha)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--max-pairs", type=int, default=None)
    ap.add_argument("--out", default=None, help="write every trial's pairs (p_less, true_delta, ...) to this CSV")
    args = ap.parse_args()
    extra = {"share_draws": args.share_draws}
    if args.shape is not None:
        extra["relevant_shape"] = args.shape
    if args.mean is not None:
        extra["relevant_mean"] = args.mean
    if args.combine is not None:
        extra["combine"] = args.combine
    if args.consensus_power is not None:
        extra["consensus_power"] = args.consensus_power
    base = load_config(args.model)
    cfg = dataclasses.replace(base, name=f"{base.name}-" + "-".join(f"{k}={v}" for k, v in extra.items()), **extra)
    col = load_collection(args.collection)
    t0 = time.perf_counter()
    st = run_sparse_study(col.runs(col.run_names), col.qrels(), trials=args.trials, depth=100, model=cfg,
                          max_pairs=args.max_pairs)
    print(f"{cfg.name} ({time.perf_counter() - t0:.0f} s)\n{st.summary()}")
    print(st.reliability().to_string())
    if args.out:
        st.pairs.to_csv(args.out, index=False)
    a, b = recalibration(st.pairs["p_less"], st.pairs["true_delta"] < 0)
    print(f"recalibration: intercept {a:.2f}, slope {b:.2f} (1: calibrated; > 1: under-confident)")


if __name__ == "__main__":
    main()
