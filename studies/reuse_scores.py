"""Scores of the reuse candidates on each choosing set, and the choosing rule of docs/notes/reuse-decided.md.

Per set and row (method / confidence): Brier and log score of P(ΔMAP < 0), calls at ≥ 0.95 (share), right at
≥ 0.99 (share and n) on automatic and on manual pairs (a pair with a run marked manual), the folded reliability
bins of the confidence max(P, 1 − P) (edges 0.5 … 1) whose 95% Wilson interval of the share right lies wholly
below the bin (over-confident), counted on automatic and manual pairs, mean τ of E[MAP], and E[MAP] ÷ MAP by run
type. Then the rule: a candidate passes when neither it nor its top-up (``LABEL@1``) has an over-confident bin on
any set; among those the lowest mean Brier (sets weighted equally; a difference under one paired standard error
over all trials is a tie), then the larger share of calls at ≥ 0.95.

Usage::

    python studies/reuse_scores.py --set r03=c-r03.parquet --set sm=c-sm11.parquet,c-sm12.parquet \\
        --runs-info synth-manual-11=out/synth-manual-11/runs.tsv --runs-info synth-manual-12=... \\
        --candidate A=hier~m-1.02~b1.26~w1.38~r-0.45~v0.59+unseen [--candidate B=...] \\
        [--rows mtc/delta,rtc/delta,hier~l1~s2+unseen/mc] [--topup 1]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayeval.io.tables import manual_runs
from bayeval.stats.forecast import brier_score, calls, log_score, wilson_interval

EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def over_confident_bins(p_less, true_delta) -> list[str]:
    """The folded confidence bins whose Wilson interval of the share right lies below the bin's lower edge."""
    conf, y = calls(p_less, true_delta)
    e = np.asarray(EDGES)
    idx = np.clip(np.searchsorted(e, conf, side="right") - 1, 0, len(e) - 2)
    out = []
    for b in range(len(e) - 1):
        m = idx == b
        if not m.any():
            continue
        _, hi = wilson_interval(np.array([(y[m] == 1).sum()]), np.array([m.sum()]))
        if hi[0] < e[b]:
            out.append(f"{e[b]:g}–{e[b + 1]:g} ({100 * (y[m] == 1).mean():.0f}% of {int(m.sum())})")
    return out


def _kind(frame: pd.DataFrame, manual: dict) -> np.ndarray:
    is_man = np.array([a in manual.get(c, ()) or b in manual.get(c, ())
                       for c, a, b in zip(frame.collection, frame.run_a, frame.run_b, strict=True)])
    return np.where(is_man, "manual", "automatic")


def row_scores(f: pd.DataFrame, manual: dict) -> dict:
    kind = _kind(f, manual)
    p, d = f.p_less.to_numpy(), f.true_delta.to_numpy()
    conf, y = calls(p, d)
    out = {"pairs": len(f), "brier": float(brier_score(p, d).mean()), "log": float(log_score(p, d).mean()),
           "calls95": float((conf >= 0.95).mean()), "tau": float(f.groupby("trial").tau.first().mean())}
    for k in ("automatic", "manual"):
        m = kind == k
        c99 = m & (conf >= 0.99)
        out[f"right99_{k}"] = (float((y[c99] == 1).mean()) if c99.any() else np.nan, int(c99.sum()))
        out[f"bins_{k}"] = over_confident_bins(p[m], d[m]) if m.any() else []
        out[f"brier_{k}"] = float(brier_score(p[m], d[m]).mean()) if m.any() else np.nan
    sides = [f[["trial", f"run_{x}", f"e_map_{x}", f"true_map_{x}"]].set_axis(["trial", "run", "e", "t"], axis=1)
             for x in "ab"]
    r = pd.concat(sides).drop_duplicates(["trial", "run"])
    man = r.run.isin(set().union(*manual.values()) if manual else set())
    out["ratio_manual"] = float(r[man].e.sum() / r[man].t.sum()) if man.any() else np.nan
    out["ratio_automatic"] = float(r[~man].e.sum() / r[~man].t.sum())
    return out


def _fmt(v) -> str:
    if isinstance(v, tuple):
        return "–" if not np.isfinite(v[0]) else f"{100 * v[0]:.1f}% ({v[1]})"
    if isinstance(v, list):
        return "none" if not v else "; ".join(v)
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", required=True, metavar="NAME=TABLE[,TABLE...]")
    ap.add_argument("--runs-info", action="append", default=[], metavar="COLLECTION=runs.tsv")
    ap.add_argument("--candidate", action="append", default=[], metavar="NAME=LABEL")
    ap.add_argument("--rows", default="", help="other method/confidence rows to show")
    ap.add_argument("--topup", type=int, default=1)
    a = ap.parse_args(argv)
    manual = {c: set(manual_runs(p)) for c, p in (x.split("=", 1) for x in a.runs_info)}
    sets = {n: pd.concat([pd.read_parquet(t) for t in ts.split(",")], ignore_index=True)
            for n, ts in (x.split("=", 1) for x in a.set)}
    cands = dict(x.split("=", 1) for x in a.candidate)
    rows = [(lab, "mc") for lab in cands.values()] + [(f"{lab}@{a.topup}", "mc") for lab in cands.values()]
    rows += [tuple(r.split("/")) for r in a.rows.split(",") if r]
    scores, paired = {}, {}
    for sname, frame in sets.items():
        keep = None
        for m, c in rows:
            t = set(frame[(frame.method == m) & (frame.confidence == c)].trial)
            keep = t if keep is None else keep & t
        frame = frame[frame.trial.isin(sorted(keep or ()))]
        print(f"\n### {sname}: {len(keep or ())} trials\n")
        print("| row | Brier | log score | calls ≥ 0.95 | right ≥ 0.99 automatic | manual | over-confident bins "
              "automatic | manual | τ | E[MAP] ÷ MAP automatic / manual |")
        print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
        for m, c in rows:
            f = frame[(frame.method == m) & (frame.confidence == c)]
            if not len(f):
                continue
            sc = row_scores(f, manual)
            scores[(sname, m, c)] = sc
            paired[(sname, m, c)] = f.assign(b=brier_score(f.p_less, f.true_delta)).groupby(
                ["collection", "trial"]).b.mean()
            print(f"| {m} / {c} | {sc['brier']:.4f} | {sc['log']:.4f} | {100 * sc['calls95']:.1f}% | "
                  f"{_fmt(sc['right99_automatic'])} | {_fmt(sc['right99_manual'])} | {_fmt(sc['bins_automatic'])} | "
                  f"{_fmt(sc['bins_manual'])} | {sc['tau']:.3f} | {sc['ratio_automatic']:.3f} / "
                  f"{sc['ratio_manual']:.3f} |")
    if not cands:
        return
    print("\n### The rule (docs/notes/reuse-decided.md)\n")
    verdict = []
    for name, lab in cands.items():
        nbins = sum(len(scores[(s, lb, "mc")][f"bins_{k}"]) for s in sets for lb in (lab, f"{lab}@{a.topup}")
                    for k in ("automatic", "manual") if (s, lb, "mc") in scores)
        brier = np.mean([scores[(s, lab, "mc")]["brier"] for s in sets])
        c95 = np.mean([scores[(s, lab, "mc")]["calls95"] for s in sets])
        verdict.append((name, lab, nbins, brier, c95))
        print(f"- {name} (`{lab}`): over-confident bins (pure and @{a.topup}, every set) {nbins}; mean Brier "
              f"{brier:.4f}; calls ≥ 0.95 {100 * c95:.1f}%")
    passing = [v for v in verdict if v[2] == 0]
    pool = passing if passing else [v for v in verdict if v[2] == min(x[2] for x in verdict)]
    best = min(pool, key=lambda v: v[3])

    def se_diff(x, y):  # paired over every trial of every set, each set's trials weighted by 1/(sets * trials)
        ds = [paired[(s, x, "mc")] - paired[(s, y, "mc")] for s in sets]
        w = np.concatenate([np.full(len(d), 1.0 / (len(sets) * len(d))) for d in ds])
        d = np.concatenate([d.to_numpy() for d in ds])
        return float(np.sum(w * d)), float(np.sqrt(np.sum(w ** 2) * d.var(ddof=1)))

    ties = [best] + [v for v in pool if v is not best and abs(se_diff(v[1], best[1])[0]) < se_diff(v[1], best[1])[1]]
    chosen = max(ties, key=lambda v: v[4])
    for v in pool:
        if v is not best:
            diff, se = se_diff(v[1], best[1])
            print(f"  - {v[0]} − {best[0]}: Brier {diff:+.4f} ± {se:.4f}")
    print(f"\n{'passing: ' + ', '.join(v[0] for v in passing) if passing else 'none passes 1: fewest bins'}; "
          f"lowest Brier {best[0]}; ties {', '.join(v[0] for v in ties)}; **chosen: {chosen[0]}**")


if __name__ == "__main__":
    main()
