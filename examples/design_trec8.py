"""Carterette et al. (SIGIR 2010) §4.3 on TREC-8: simulate the held-out-sites design, test reusability.

The paper simulates its design on Robust 2004 (249 topics, 14 sites, 2 held out per topic, depth-100
pools of the other sites) and finds no evidence against within-site reusability (p = 0.74; 0.63,
0.58 and 0.60 at depths 10, 20 and 50). TREC-8 ad hoc has 50 topics and 41 groups, so m must satisfy
C(m, 2) <= 50: this script takes the m = 10 groups with the most runs (eleven groups have five runs;
ties are broken by name, case-insensitively, which leaves out utwente), 50 runs in all. With k = 2 and
n0 = 5 the design has one block of C(10, 2) = 45 topics plus a 5-topic all-site baseline: each group
is held out of 9 topics (its reuse set) and contributes to 41 (its baseline); each pair of groups is
held out together of a single topic, so between-site reusability cannot be tested (reported as "nothing
to test", p = nan); the participant comparison has 8 topics per ordered pair of groups. ``--sites 7``
gives two blocks of C(7, 2) = 21 topics plus an 8-topic baseline, and so 2 between-site reuse topics per
pair of groups: the smallest set on which a paired t-test can run at all.

For each assignment seed (the topic order is shuffled before the layout) and each pool depth, the
judgments are the TREC-8 qrels restricted to the depth-d pool of the contributing groups' runs; every
run is evaluated with AP on them; :func:`bayeval.design.analyze_design` does the rest. Runs of the
other 31 groups are left out (neither pooled nor evaluated).

    python examples/design_trec8.py                       # seed 0 in detail + 20 seeds (~2 min)
    python examples/design_trec8.py --seeds 5 --plot trec8_reuse.png
    python examples/design_trec8.py --sites 7             # between-site testable (2 reuse topics per pair)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.design import analyze_design, assign_design, read_sites, simulate_design
from bayeval.io.qrels import read_qrels
from bayeval.io.runs import read_runs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec8"
DEPTHS = (10, 20, 50, 100)


def largest_groups(site_of: dict[str, str], m: int) -> list[str]:
    counts = pd.Series(site_of).value_counts()
    return sorted(counts.index, key=lambda g: (-counts[g], g.lower(), g))[:m]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help=f"TREC-8 directory (default {DATA})")
    ap.add_argument("--sites", type=int, default=10, help="number of groups m (default 10)")
    ap.add_argument("--seeds", type=int, default=20, help="assignment seeds for the distribution (default 20)")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    ap.add_argument("--plot", help="save the seed-0, depth-100 plot (paper Figure 1 style) here")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    site_all = read_sites(args.data / "runs.tsv")
    groups = largest_groups(site_all, args.sites)
    names = [r for r, g in site_all.items() if g in groups]
    runs = read_runs([args.data / "runs" / f"input.{r}.gz" for r in names])
    qrels = read_qrels(args.data / "qrels.txt.gz")
    print(f"groups (m = {len(groups)}): {', '.join(groups)}; {len(runs)} runs; {len(qrels.topics)} topics")
    print(assign_design(qrels.topics, groups, k=2, min_baseline=5).plan().summary())

    rows, controls = [], []
    for seed in range(args.seeds):
        design = assign_design(qrels.topics, groups, k=2, min_baseline=5, seed=seed)
        for depth in depths:
            detail = seed == 0
            first = depth == depths[0]
            want_truth = first or (detail and bool(args.plot))
            sim = simulate_design(runs, qrels, design, site_all, depth=depth, truth=want_truth)
            if first:  # control: the same design and tests on the complete qrels (a perfectly reusable collection)
                ctrl = analyze_design(sim.true_scores(), design, sim.site_of)
                controls.append({"seed": seed, "within_p": ctrl.within.p_value, "between_p": ctrl.between.p_value,
                                 "participant_p": ctrl.participant.p_value})
            res = sim.analyze()
            rows.append({"seed": seed, "depth": depth, "within_p": res.within.p_value,
                         "within_method": res.within.table.method, "between_p": res.between.p_value,
                         "participant_p": res.participant.p_value,
                         "tau_within": res.sites["tau_within"].median(),
                         "tau_participant": res.overall["tau_participant"],
                         "tau_all": res.overall["tau"], "rmse": res.overall["rmse"],
                         "judged": sim.pools["judged"].mean(),
                         "relevant_found": sim.pools["relevant"].sum() / sim.pools["relevant_all"].sum()})
            if detail:
                print(f"\n=== seed 0, depth {depth}: {sim.summary().splitlines()[1].strip()}")
                print(res.within.summary())
                print(res.between.summary())
                print(res.participant.summary())
                if depth == max(depths):
                    print(res.site_table().to_string(index=False, float_format=lambda v: f"{v:.3g}"))
                    if args.plot:
                        import matplotlib

                        matplotlib.use("Agg")
                        res.plot(sim.true_scores(), path=args.plot)
    frame = pd.DataFrame(rows)
    print("\n=== seed 0: p-values by pool depth")
    print(frame[frame.seed == 0].drop(columns="seed").to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if args.seeds > 1:
        agg = frame.groupby("depth").agg(
            within_median_p=("within_p", "median"), within_p_below_05=("within_p", lambda p: np.mean(p < 0.05)),
            between_median_p=("between_p", "median"), participant_median_p=("participant_p", "median"),
            participant_p_below_05=("participant_p", lambda p: np.mean(p < 0.05)),
            tau_within=("tau_within", "median"), tau_participant=("tau_participant", "median"),
            tau_all=("tau_all", "median"), rmse=("rmse", "median"), relevant_found=("relevant_found", "median"))
        print(f"\n=== over {args.seeds} assignment seeds (medians; share of seeds with p < 0.05)")
        print(agg.reset_index().to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    ctrl = pd.DataFrame(controls)
    print("\n=== control: the same designs and tests on the complete qrels (reusable by construction)")
    print(ctrl.head(1).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if args.seeds > 1:
        print(f"over {args.seeds} seeds: median within p = {ctrl.within_p.median():.3f} "
              f"(share < 0.05: {np.mean(ctrl.within_p < 0.05):.2f}), median participant p = "
              f"{ctrl.participant_p.median():.3g} (share < 0.05: {np.mean(ctrl.participant_p < 0.05):.2f})")


if __name__ == "__main__":
    main()
