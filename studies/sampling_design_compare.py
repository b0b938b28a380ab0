"""Score the sampling study's two designs (``--design rank`` / ``prior``) against each other.

Reads trial tables of ``bayeval experiment sampling run`` (each table one design; the design is read from the
rows' ``settings``: ``prior`` when recorded, ``rank`` otherwise), pools the collections named by ``--pool``
(e.g. ``synth-manual`` pools ``synth-manual-11``, ``-12``, ``-13``; their trials are kept apart), and prints per
collection × budget × run group × method × design: trials, coverage of the 95% MAP interval ± its standard
error over trials, bias, RMSE, mean width, the width × the same design's statAP (method ``sample``) and × the
rank design's statAP, and — for the rule of docs/notes/sampling-record.md ("(late, 4)") — the width and RMSE against the
rank design's same method. ``--rule`` adds the rule's verdict over the cells given by ``--cells``.

Usage::

    python studies/sampling_design_compare.py T1.parquet T2.parquet ... --pool synth-manual \
        [--methods sample-bcp] [--rule] [--cells "robust03:all;synthetic:all;synth-manual:automatic,manual"]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from bayeval.experiments.sampling import read_sampling_table, sampling_statistics


def _design(text) -> str:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return "rank"
    return json.loads(text).get("design", "rank")


def load(paths: list[str], pools: list[str]) -> pd.DataFrame:
    frames = []
    for k, path in enumerate(paths):
        f = read_sampling_table(path)
        f = f.assign(design=f.settings.map(_design))
        for pool in pools:
            mine = f.collection.str.startswith(pool + "-")
            # keep each source collection's trials apart once pooled
            f.loc[mine, "trial"] = f.loc[mine, "trial"] + 100_000 * (k + 1)
            f.loc[mine, "collection"] = pool
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def table(frame: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    out = []
    for design, g in frame.groupby("design"):
        st = sampling_statistics(g.drop(columns=["design"]))
        out.append(st.assign(design=design))
    st = pd.concat(out, ignore_index=True)
    key = ["collection", "budget", "group"]
    ref = st[st.method == "sample"].set_index(key + ["design"]).width
    rank_ref = st[(st.method == "sample") & (st.design == "rank")].set_index(key).width
    st["x_own_statAP"] = [w / ref.get((*k, d), np.nan) for w, k, d in
                          zip(st.width, st[key].itertuples(index=False, name=None), st.design, strict=True)]
    st["x_rank_statAP"] = [w / rank_ref.get(k, np.nan) for w, k in
                           zip(st.width, st[key].itertuples(index=False, name=None), strict=True)]
    same = st[st.design == "rank"].set_index(key + ["method"])
    st["width_vs_rank"] = [w / same.width.get((*k, m), np.nan) for w, k, m in
                           zip(st.width, st[key].itertuples(index=False, name=None), st.method, strict=True)]
    st["rmse_vs_rank"] = [r / same.rmse.get((*k, m), np.nan) for r, k, m in
                          zip(st.rmse, st[key].itertuples(index=False, name=None), st.method, strict=True)]
    st = st[st.method.isin(methods)]
    cols = key + ["method", "design", "trials", "coverage", "coverage_se", "bias", "rmse", "width",
                  "x_own_statAP", "x_rank_statAP", "width_vs_rank", "rmse_vs_rank"]
    return st[cols].sort_values(key + ["method", "design"]).reset_index(drop=True)


def rule(st: pd.DataFrame, cells: dict[str, list[str]], method: str) -> list[str]:
    """The rule of docs/notes/sampling-record.md "(late, 4)": (a) band count, (b) no in-band cell leaves, (c) width
    below rank in >= 9 of 12 and on the mean ratio, (d) RMSE not above rank's by more than 5% in any cell."""
    sel = pd.concat([st[(st.collection == c) & st.group.isin(gs) & (st.method == method)]
                     for c, gs in cells.items()])
    piv = sel.pivot_table(index=["collection", "group", "budget"], columns="design",
                          values=["coverage", "width", "rmse"])
    if ("coverage", "prior") not in piv.columns or ("coverage", "rank") not in piv.columns:
        return [f"{method}: both designs needed"]
    inb = (piv["coverage"] >= 0.93) & (piv["coverage"] <= 0.97)
    n = len(piv)
    a = int(inb["prior"].sum()) >= int(inb["rank"].sum())
    left = piv.index[inb["rank"] & ~inb["prior"]].tolist()
    b = not left
    ratio = piv["width"]["prior"] / piv["width"]["rank"]
    c = int((ratio < 1).sum()) >= int(np.ceil(0.75 * n)) and float(ratio.mean()) < 1
    rm = piv["rmse"]["prior"] / piv["rmse"]["rank"]
    d = bool((rm <= 1.05).all())
    lines = [f"{method}: {n} cells",
             f"(a) cells in 93-97%: prior {int(inb['prior'].sum())}, rank {int(inb['rank'].sum())} -> {a}",
             f"(b) rank's in-band cells leaving the band under prior: {left} -> {b}",
             f"(c) width prior/rank < 1 in {int((ratio < 1).sum())} of {n}, mean ratio {ratio.mean():.3f} -> {c}",
             f"(d) RMSE prior/rank max {rm.max():.3f} (cells above 1.05: "
             f"{rm[rm > 1.05].index.tolist()}) -> {d}",
             f"verdict: {'recommend prior' if a and b and c and d else 'keep rank'}"]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--pool", action="append", default=[], help="collection-name prefix to pool (repeatable)")
    ap.add_argument("--methods", default="sample,sample-bcp,assisted")
    ap.add_argument("--rule", action="store_true")
    ap.add_argument("--cells", default="robust03:all;synthetic:all;synth-manual:automatic,manual")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--markdown", action="store_true", help="print the table as docs/sampling.md's markdown rows")
    args = ap.parse_args()
    frame = load(args.tables, args.pool)
    st = table(frame, args.methods.split(","))
    if args.csv:
        st.to_csv(args.csv, index=False)
    if args.markdown:
        for r in st.itertuples(index=False):
            print(f"| {r.collection} | {r.group} | {r.budget:.0%} | {r.method} | {r.design} | {r.trials} | "
                  f"{r.coverage:.1%} ± {100 * r.coverage_se:.1f} | {r.bias:+.4f} | {r.rmse:.4f} | {r.width:.4f} | "
                  f"{r.x_own_statAP:.2f} | {r.x_rank_statAP:.2f} |".replace("+", "+").replace("-0.", "−0."))
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.float_format", "{:.4f}".format):
        print(st.to_string(index=False))
    if args.rule:
        cells = {c.split(":")[0]: c.split(":")[1].split(",") for c in args.cells.split(";")}
        for m in args.methods.split(","):
            if m != "sample":
                print("\n".join(rule(st, cells, m)))


if __name__ == "__main__":
    main()
