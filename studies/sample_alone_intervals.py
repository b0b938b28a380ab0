"""Interval variants for bias-corrected statAP (the sample alone) on the sampling study's own draws.

``bayeval experiment sampling run DIR --methods sample-bc,sample-bcp`` gives one interval per method; this
script draws the same samples (same seed, same order: the trial's run pairs, then one sample per budget) and
scores several intervals around the same estimate and jackknife standard error
(:func:`bayeval.sampling.corrected_measures`), so that variants can be compared on identical draws
(docs/notes/sampling-record.md, "Revision of 27 November 2026: the sample alone at 5%"). Variants:

- ``norm``: ``m ± z·se`` (the study's ``sample-bc``);
- ``bcp``: normal on the power scale ``m^γ``, ``γ`` from the runs' standard errors (the study's
  ``sample-bcp``, :func:`bayeval.sampling.power_bounds`);
- ``bcp-t-topic`` / ``bcp-t-topic-n``: ``bcp`` with the Student-t quantile at Satterthwaite's effective
  degrees of freedom ``ν = V² / (Σ_t v_t²/ν_t + I²/(T_I - 1))`` (``v_t`` topic t's share of the variance of
  the run's mean, ``ν_t = n_t - 1`` or ``n_t`` for ``n_t`` sampled relevant documents, ``I`` the between-topic
  term of the empty topics; Satterthwaite 1946; Korn & Graubard 1999, §5.2);
- ``score``: the standard error taken at the hypothesised value, ``{m₀ : |m̂ - m₀| ≤ z·se·(m₀/m̂)^α}`` with
  ``α = 1 - γ`` (a test-inversion, Wilson-type interval: the variance does not shrink with the estimate);
  ``score-log``: the same with ``α = 1``; ``score-t-topic``: ``score`` with ``bcp-t-topic``'s quantile.

Per-document influences (the document-level Satterthwaite degrees of freedom) are not part of the public
result; those rows of docs/sampling.md came from the kernel on the same draws.

    python studies/sample_alone_intervals.py ../shared/data/robust03 --trials 100 --out r03_iv.parquet
    python studies/sample_alone_intervals.py r03_iv.parquet --summary
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import draw_pool_sample
from bayeval.sampling import corrected_measures, power_bounds, power_exponent

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sampling_variants import BUDGETS, DEPTH, PAIRS, SEED, _pool_truth  # noqa: E402

Z = float(stats.norm.ppf(0.975))
COLUMNS = ["collection", "trial", "budget", "variant", "run", "manual", "estimate", "se", "lower", "upper",
           "truth", "gamma", "df"]


def score_bounds(m: np.ndarray, se: np.ndarray, alpha: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``{m₀ ∈ [0, 1] : |m - m₀| ≤ q·se·(m₀/m)^α}`` by bisection (60 halvings); ``m ≤ 0`` keeps ``m ± q·se``."""
    m, se = np.asarray(m, float), np.asarray(se, float)
    q = np.broadcast_to(np.asarray(q, float), m.shape)
    mp = np.maximum(m, 1e-12)

    def outside(m0):
        return np.abs(m - m0) - q * se * (np.maximum(m0, 0.0) / mp) ** alpha > 0

    a, b = np.zeros_like(m), m.copy()              # lower bound in [0, m]: outside at a, inside at b
    for _ in range(60):
        mid = 0.5 * (a + b)
        out = outside(mid)
        a, b = np.where(out, mid, a), np.where(out, b, mid)
    lower = np.where(outside(np.zeros_like(m)), b, 0.0)
    a, b = m.copy(), np.ones_like(m)               # upper bound in [m, 1]: inside at a, outside at b
    for _ in range(60):
        mid = 0.5 * (a + b)
        out = outside(mid)
        a, b = np.where(out, a, mid), np.where(out, mid, b)
    upper = np.where(outside(np.ones_like(m)), a, 1.0)
    low = m <= 0
    return (np.where(low, np.clip(m - q * se, 0, 1), lower), np.where(low, np.clip(m + q * se, 0, 1), upper))


def satterthwaite(ev, n_rel: np.ndarray, within_df: np.ndarray) -> np.ndarray:
    """Each run's effective degrees of freedom ``V² / (Σ_t v_t²/ν_t + I²/(T_I - 1))`` (see the module)."""
    values, var = ev.values["AP"], ev.variances["AP"]
    use = ~np.isnan(values) & ev.informative[None, :]
    n = np.maximum(use.sum(axis=1), 1).astype(float)
    v = np.where(use, var, 0.0) / (n * n)[:, None]
    total = np.diag(ev.covariance["AP"])
    imputed = np.maximum(total - v.sum(axis=1), 0.0)
    denom = np.sum(v * v / np.maximum(within_df, 1.0)[None, :], axis=1) \
        + np.where(use.sum(axis=1) > 1, imputed ** 2 / np.maximum(use.sum(axis=1) - 1, 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, total * total / denom, np.inf)


def run_trials(args) -> None:
    col = load_collection(args.collection, name=args.name)
    runs, qrels, topics = col.runs(col.run_names), col.qrels(), col.topics()
    base, true_map = _pool_truth(runs, qrels, topics)
    manual = np.array([n in set(col.manual) for n in runs.names])
    out = Path(args.out)
    done = pd.read_parquet(out) if out.exists() else pd.DataFrame(columns=COLUMNS)
    frames = [done]
    for trial in range(args.trials):
        if trial in set(done.trial):
            continue
        t0 = time.perf_counter()
        rng = np.random.default_rng([SEED, trial])
        ia, _ = np.triu_indices(len(runs), 1)
        rng.choice(len(ia), size=min(PAIRS, len(ia)), replace=False)     # the study's pairs: same draws after
        rows = []
        for budget in BUDGETS:
            sample, incl = draw_pool_sample(base, qrels, budget, rng)
            ev = corrected_measures(runs, sample, inclusion=incl, depth=DEPTH)
            n_rel = np.array([float(np.sum(sample[t].sampled & (sample[t].grades >= qrels.relevance_level)))
                              for t in ev.topics])
            m, v = ev.mean("AP")
            se = np.sqrt(np.maximum(v, 0.0))
            gamma = power_exponent(m, se)
            df_top = satterthwaite(ev, n_rel, n_rel - 1.0)
            df_n = satterthwaite(ev, n_rel, n_rel)
            q_top = stats.t.ppf(0.975, np.maximum(df_top, 1.0)) / Z
            q_n = stats.t.ppf(0.975, np.maximum(df_n, 1.0)) / Z
            variants = {
                "norm": (power_bounds(m, se, 1.0), np.inf),
                "bcp": (power_bounds(m, se, gamma), np.inf),
                "bcp-t-topic": (power_bounds(m, se * q_top, gamma), df_top),
                "bcp-t-topic-n": (power_bounds(m, se * q_n, gamma), df_n),
                "score": (score_bounds(m, se, 1.0 - gamma, Z), np.inf),
                "score-log": (score_bounds(m, se, 1.0, Z), np.inf),
                "score-t-topic": (score_bounds(m, se, 1.0 - gamma, Z * q_top), df_top),
            }
            for name, ((lo, hi), df) in variants.items():
                df = np.broadcast_to(df, m.shape)
                rows += [(col.name, trial, budget, name, runs.names[s], bool(manual[s]), m[s], se[s], lo[s], hi[s],
                          true_map[s], gamma, df[s]) for s in range(len(m))]
        frames.append(pd.DataFrame(rows, columns=COLUMNS))
        pd.concat(frames, ignore_index=True).to_parquet(out)
        print(f"{col.name} trial {trial}: {time.perf_counter() - t0:.1f} s", flush=True)


def summary(path: str) -> pd.DataFrame:
    """Coverage (± its standard error over trials), shares above / below, width, bias, RMSE per cell."""
    if not Path(path).is_file():
        raise BayevalInputError(f"table: {path} is not a file (write one with --out first)")
    d = pd.read_parquet(path)
    groups = [("all", None)] if not d.manual.any() else [("automatic", False), ("manual", True)]
    rows = []
    for gname, man in groups:
        sel = d if man is None else d[d.manual == man]
        for (col, budget, variant), g in sel.groupby(["collection", "budget", "variant"], sort=True):
            hit = (g.lower <= g.truth) & (g.truth <= g.upper)
            per = hit.groupby(g.trial).mean()
            rows.append((col, budget, gname, variant, g.trial.nunique(), 100 * hit.mean(),
                         100 * per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else np.nan,
                         100 * (g.truth > g.upper).mean(), 100 * (g.truth < g.lower).mean(),
                         (g.upper - g.lower).mean(), (g.estimate - g.truth).mean(),
                         np.sqrt(((g.estimate - g.truth) ** 2).mean()), np.median(g.df)))
    return pd.DataFrame(rows, columns=["collection", "budget", "runs", "variant", "trials", "coverage", "coverage_se",
                                       "above", "below", "width", "bias", "rmse", "df_median"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection", help="collection directory, or with --summary the table")
    ap.add_argument("--name", default=None)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--out", default=None, help="table of every run's interval (.parquet), resumed if present")
    ap.add_argument("--summary", action="store_true", help="print the coverage table of a written table")
    args = ap.parse_args()
    if args.trials < 1:
        ap.error(f"--trials: a positive number, got {args.trials}")
    try:
        if args.summary:
            pd.set_option("display.width", 200)
            print(summary(args.collection).round(4).to_string(index=False))
            return
        if args.out is None:
            ap.error("--out is required to run trials")
        run_trials(args)
    except (BayevalInputError, OSError) as exc:
        sys.exit(f"sample_alone_intervals.py: {exc}")


if __name__ == "__main__":
    main()
