"""Robustness trials comparing several relevance models on the *same* judgments (docs/calibration.md).

Each trial judges once (MTC and RTC selection, :func:`bayeval.experiments.robustness.run_trial` with
``reuse``), then scores MTC, RTC and every Bayesian variant on those judgments; the variant's label replaces
``bayes`` in the ``method`` column, so ``bayeval experiment robustness stats`` and ``report`` read the table.

Variants (``--variants``, comma-separated):

- ``bayes0``: today's Bayesian RTC (``rtc-default``, Laplace on the aggregation, no run effect);
- ``bayes0-sdX``: the same with :func:`bayeval.relevance.run_effect_draws` of sd X;
- ``hier``: the hierarchical model (``hier-default``);
- ``hier+unseen``: the same with Chao's unseen relevant documents in R_t;
- ``hier-t``/``hier-t+unseen``: the hierarchical model with Student-t run effects (``hier-t``);
- ``hier-extrap``/``hier-extrap+unseen``: ``hier-default`` with the extrapolation effect (``hier-extrap``);
- ``hier-csX``/``hier-csX+unseen``: ``hier-default`` with the coverage scale (half-normal scale of σ1) set to X;
- any shipped hierarchical configuration, or a study variant of studies/models, by name, e.g.
  ``hier-crossfit-slope+unseen`` (cross-fitted calibration, :mod:`bayeval.relevance.crossfit`);
- ``NAME~sX`` (``hier~s0.5+unseen``, ``hier-crossfit-slope~s1+unseen``): the hierarchical configuration NAME
  (``hier`` = ``hier-default``) with held-out run shifts of scale X (``run_shift_sd``,
  :mod:`bayeval.relevance.run_shift`);
- ``NAME~lX`` (``hier~l1+unseen``): held-out run levels with prior scale X (``run_level_sd``,
  :mod:`bayeval.relevance.run_level`); the modifiers combine, ``hier~l1~s2+unseen``;
- ``NAME~fX`` (``hier~f1~s2+unseen``): held-out run levels with a fixed spread X, not shrunk across runs
  (``run_level_sd = X``, ``run_level_spread = "fixed"``).
- ``NAME~mX``, ``~bX``, ``~wX``, ``~tX``, ``~rX``, ``~vX`` (``hier~m-0.5~b1~w1+unseen``): the reuse prior
  (:mod:`bayeval.relevance.reuse_prior`): level mean, common sd, run sd, run df, rank-profile mean and sd
  (``reuse_mean``, ``reuse_common_sd``, ``reuse_run_sd``, ``reuse_run_df``, ``reuse_slope_mean``,
  ``reuse_slope_sd``);
- ``LABEL@N`` (``hier-reuse+unseen@1``): the variant with a top-up of N of each held-out run's unjudged documents
  per topic, judged by the complete qrels (``RobustnessConfig.topup``).

The table is resumable: with ``--resume`` the trials already in ``--out`` (every variant present) are kept
and only the missing trial numbers of ``--first``.. ``--first + --trials − 1`` are run.

Usage::

    python studies/calibration_study.py ../shared/data/robust03 --trials 20 --out r03-variants.parquet \\
        --variants bayes0,hier,hier+unseen,hier-cs2+unseen [--workers 2] [--no-base] [--condense]

``--condense`` scores against condensed lists (every run keeps only the documents the qrels judge), so
that the truth is complete where the qrels are shallow; without it the truth counts documents the qrels
do not judge as not relevant, as trec_eval does (docs/notes/calibration-record.md, "Two questions").
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from bayeval.experiments import RobustnessConfig, load_collection
from bayeval.experiments.robustness import run_trial
from bayeval.io.trials import completed_trials, write_table

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"



def _model(name: str) -> str:
    """A configuration by name: a study variant's file in studies/models, else the shipped one."""
    path = STUDY_MODELS / f"{name}.toml"
    return str(path) if path.is_file() else name


def _shipped_hierarchical(name: str) -> bool:
    from bayeval.relevance.config import HierarchicalConfig, list_configs, load_config

    known = name in list_configs() or (STUDY_MODELS / f"{name}.toml").is_file()
    return known and isinstance(load_config(_model(name)), HierarchicalConfig)


def _variant(label: str, tmp: Path) -> dict:
    label, at, topup = label.partition("@")
    if at:
        try:
            n = int(topup)
        except ValueError:
            raise SystemExit(f"--variants: {label}@{topup}: the top-up after @ must be an integer") from None
        kw = _variant(label, tmp)
        if n < 1 or "hier" not in label:
            raise SystemExit(f"--variants: {label}@{topup}: a top-up of >= 1 per topic, of a hierarchical variant")
        return {**kw, "topup": n}
    if label == "bayes0":
        return {"bayes_config": "rtc-default", "unseen": False}
    if label.startswith("bayes0-sd"):
        return {"bayes_config": "rtc-default", "unseen": False, "run_effect_sd": float(label[len("bayes0-sd"):])}
    name, _, extra = label.partition("+")
    kw = {"unseen": extra == "unseen"}
    name, *mods = name.split("~")
    if mods:
        from bayeval.relevance.config import models_dir

        base = "hier-default" if name == "hier" else name
        if not _shipped_hierarchical(base):
            raise SystemExit(f"--variants: {label!r}: {base!r} is no shipped hierarchical configuration")
        keys = {"s": "run_shift_sd", "l": "run_level_sd", "f": "run_level_sd", "m": "reuse_mean",
                "b": "reuse_common_sd", "w": "reuse_run_sd", "t": "reuse_run_df", "r": "reuse_slope_mean",
                "v": "reuse_slope_sd"}
        text = Path(_model(base) if (STUDY_MODELS / f"{base}.toml").is_file() else models_dir() / f"{base}.toml"
                    ).read_text()
        tail = text[text.rfind("["):]
        if not tail.startswith(("[hierarchy]", "[held_out_runs]")):
            raise SystemExit(f"--variants: {label!r}: {base}.toml must end with its [hierarchy] or [held_out_runs] "
                             "table")
        lines, tag = [], base
        for mod in mods:
            key = keys.get(mod[:1])
            if key is None:
                raise SystemExit(f"--variants: {label!r}: unknown modifier {mod!r} (~sX: run shift, ~lX: run level, "
                                 "~fX: run level of fixed spread; the reuse prior: ~mX mean, ~bX common sd, "
                                 "~wX run sd, ~tX run df, ~rX rank-profile mean, ~vX its sd)")
            try:
                scale = float(mod[1:])
            except ValueError:
                raise SystemExit(f"--variants: {label!r}: the scale of {mod!r} must be a number") from None
            if key in text:
                raise SystemExit(f"--variants: {label!r}: {base}.toml sets {key} already")
            if key in (line.split(" = ")[0] for line in lines):
                raise SystemExit(f"--variants: {label!r}: {key} set twice")
            lines.append(f"{key} = {scale}")
            if mod[:1] == "f":
                lines.append('run_level_spread = "fixed"')
            tag += f"-{mod[:1]}{scale}"
        path = tmp / f"{tag}.toml"
        table = "" if tail.startswith("[held_out_runs]") else "\n[held_out_runs]"  # the corrections' table
        path.write_text(text.rstrip() + table + "\n" + "\n".join(lines) + "\n")
        kw["bayes_config"] = str(path)
        return kw
    if name == "hier":
        kw["bayes_config"] = "hier-default"
    elif name in ("hier-t", "hier-extrap") or _shipped_hierarchical(name):
        kw["bayes_config"] = _model(name)
    elif name.startswith("hier-cs"):
        from bayeval.relevance.config import load_config, models_dir

        cfg = load_config("hier-default")
        scale = float(name[len("hier-cs"):])
        text = (models_dir() / "hier-default.toml").read_text()
        text = text.replace(f"coverage_scale = {cfg.hierarchy.coverage_scale}", f"coverage_scale = {scale}")
        path = tmp / f"{name}.toml"
        path.write_text(text)
        kw["bayes_config"] = str(path)
    else:
        raise SystemExit(f"--variants: unknown variant {label!r}")
    return kw


def _trial(args) -> pd.DataFrame:
    path, name, trial, variants, base, confidences, tmp, condense, level, base_confidences = args
    col = load_collection(path, name=name, condense=condense, relevance_level=level)
    common = {"confidences": confidences}
    reuse: dict = {}
    frames = []
    if base:
        frames.append(run_trial(col, RobustnessConfig(methods=("mtc", "rtc"), confidences=base_confidences or
                                                      confidences), trial, reuse=reuse))
    for label in variants:
        cfg = RobustnessConfig(methods=("bayes",), **common, **_variant(label, Path(tmp)))
        t0 = time.perf_counter()
        f = run_trial(col, cfg, trial, reuse=reuse)
        f["method"] = label
        f["seconds"] = time.perf_counter() - t0
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--variants", default="bayes0,hier,hier+unseen")
    ap.add_argument("--confidences", default="delta,mc")
    ap.add_argument("--no-base", action="store_true", help="skip MTC and RTC")
    ap.add_argument("--base-confidences", default=None, help="confidences of MTC and RTC (default --confidences)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--resume", action="store_true",
                    help="keep the trials already in --out and run only the missing ones")
    ap.add_argument("--condense", action="store_true",
                    help="runs keep only documents the qrels judge: the truth is complete where qrels are shallow")
    ap.add_argument("--relevance-level", type=int, default=1, help="least grade counted relevant (DL 2020: 2)")
    a = ap.parse_args(argv)
    variants = tuple(a.variants.split(","))
    name = a.collection.name
    with tempfile.TemporaryDirectory() as tmp:
        for v in variants:
            _variant(v, Path(tmp))  # fail early on an unknown variant
        frames, done = [], set()
        if a.resume and a.out.exists():
            old = pd.read_parquet(a.out)
            done = completed_trials(old, methods=variants)
            frames.append(old[old["trial"].isin(done)])
            print(f"resuming: {len(done)} trials already in {a.out}", flush=True)
        jobs = [(str(a.collection), name, i, variants, not a.no_base, tuple(a.confidences.split(",")), tmp,
                 a.condense, a.relevance_level,
                 tuple(a.base_confidences.split(",")) if a.base_confidences else None)
                for i in range(a.first, a.first + a.trials) if i not in done]
        t0 = time.perf_counter()
        with ProcessPoolExecutor(a.workers) as ex:
            for k, f in enumerate(ex.map(_trial, jobs), 1):
                frames.append(f)
                table = pd.concat(frames, ignore_index=True)
                write_table(table, a.out, columns=list(table.columns))  # atomic: a kill loses one trial at most
                print(f"{k}/{len(jobs)} trials, {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
