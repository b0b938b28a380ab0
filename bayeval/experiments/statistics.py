r"""The statistics of carterette2007 §4.4 computed from a trial table.

Each pair of a trial is a prediction: with :math:`P_i = P(\Delta MAP<0)` the method calls
:math:`\Delta MAP<0` when :math:`P_i>\tfrac12` and :math:`\Delta MAP>0` when :math:`P_i<\tfrac12`, with
*confidence* :math:`\max(P_i, 1-P_i)`. The call is right (:math:`y_i=1`) when the sign of the true
ΔMAP agrees; a true tie (ΔMAP = 0) makes any call wrong, and :math:`P_i=\tfrac12` (no call) scores
:math:`y_i=\tfrac12`.

- **Confidence bins** (Tables 2–5): the share of pairs whose confidence falls in 0.5–0.6, 0.6–0.7,
  0.7–0.8, 0.8–0.9, 0.9–0.95, 0.95–0.99, ≥ 0.99 and the accuracy (mean :math:`y`) in each; a
  trustworthy method has every bin's accuracy at least its lower edge.
- **Bookmaker** :math:`\bar W` (§4.4): with the call's confidence :math:`P` and odds
  :math:`O=P/(1-P)`, :math:`W_i=y_i-(1-y_i)\min(O_i, 100)` — the paper's
  :math:`W_i=(y_i-P_i)/(1-P_i)` with :math:`-W_i` capped at 100, written so that :math:`P_i=1`
  exactly gives 1 when right and −100 when wrong instead of 0/0. 0 is calibrated; below 0 over-confident.
- **Judgments** to reach α on the original runs: median and mean over trials.
- **Kendall τ** between the k runs' E[MAP] and true MAP, mean over trials (incremental pooling's τ
  at MTC's number of judgments under method ``ip``).
- **Paired tests** between methods over trials: Wilcoxon signed-rank (medians) and t-test (means).
- **Proper scores** (:mod:`bayeval.stats.forecast`): Brier and log score of :math:`P_i` itself against the
  true sign (a tie counts ½ each way), sharpness (share of calls at ≥ 0.95 and ≥ 0.99) and the share of
  those calls that are right, and reliability bins of :math:`P_i` with Wilson intervals — per method ×
  confidence, overall and split by pair type. :math:`\bar W` is kept beside them for the paper's
  figures, but it is not a proper score (always answering about ½ scores :math:`2\,\mathrm{accuracy}-1>0`).

Splits (columns ``split, group`` of :attr:`RobustnessStatistics.proper` and ``.reliability``):

- ``all`` / ``all`` — every pair;
- ``pair_type`` / ``both``, ``one``, ``none`` — how many of the pair's runs are originals, i.e. contributed
  judgments (``none``: both runs are evaluated on reused judgments only);
- ``run_type`` / ``automatic``, ``manual`` — two automatic runs, or at least one manual run (only when the
  manual runs are given: ``manual=`` of :func:`robustness_statistics`, from ``runs.tsv``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.stats import paired_pvalues
from bayeval.stats.forecast import calls, forecast_scores, reliability_bins, wilson_interval

__all__ = [
    "BIN_EDGES",
    "PROPER_COLUMNS",
    "RELIABILITY_COLUMNS",
    "BIN_LABELS",
    "SIMILARITY_EDGES",
    "RobustnessStatistics",
    "bookmaker",
    "calls",
    "confidence_bins",
    "paired_series",
    "paired_tests",
    "proper_scores",
    "robustness_statistics",
    "similarity_bin",
    "wilson_interval",
]

BIN_EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
BIN_LABELS = ("0.5–0.6", "0.6–0.7", "0.7–0.8", "0.8–0.9", "0.9–0.95", "0.95–0.99", "≥ 0.99")
SIMILARITY_EDGES = (0.0, 0.1, 0.2, 0.3, 1.0)
SIMILARITY_LABELS = ("0–0.1", "0.1–0.2", "0.2–0.3", "≥ 0.3")
W_CAP = 100.0


def bookmaker(p_less, true_delta, *, cap: float = W_CAP) -> np.ndarray:
    r"""The bookmaker's winnings :math:`W_i` per pair (carterette2007 §4.4), :math:`-W_i` capped at ``cap``.

    :math:`W_i = y_i - (1-y_i)\min(P_i/(1-P_i),\ \mathrm{cap})` with :math:`P_i` the call's confidence:
    equal to :math:`(y_i-P_i)/(1-P_i)` for :math:`P_i<1` and :math:`-W_i\le\mathrm{cap}`.

    Examples
    --------
    Right at P = 0.9 wins 1; wrong loses the odds 0.9/0.1 = 9; wrong at 0.999 (odds 999) and at
    P = 1 exactly lose the cap; right at P = 1 wins 1:

    >>> bookmaker([0.9, 0.9, 0.999, 1.0, 1.0], [-1, 1, 1, 1, -1])
    array([   1.,   -9., -100., -100.,    1.])
    """
    conf, y = calls(p_less, true_delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(conf < 1.0, conf / (1.0 - conf), np.inf)
    return y - (1.0 - y) * np.minimum(odds, cap)


def _bin_index(conf: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.asarray(BIN_EDGES), conf, side="right") - 1


def similarity_bin(similarity) -> np.ndarray:
    """Label of the similarity bin (0–0.1, 0.1–0.2, 0.2–0.3, ≥ 0.3) of each pair (carterette2007 Table 4).

    >>> similarity_bin([0.05, 0.1, 0.29, 0.8]).tolist()
    ['0–0.1', '0.1–0.2', '0.2–0.3', '≥ 0.3']
    """
    s = np.asarray(similarity, dtype=np.float64)
    idx = np.clip(np.searchsorted(np.asarray(SIMILARITY_EDGES[1:-1]), s, side="right"), 0, 3)
    return np.asarray(SIMILARITY_LABELS, dtype=object)[idx]


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    f = frame[frame["p_less"].notna()]
    conf, y = calls(f["p_less"].to_numpy(), f["true_delta"].to_numpy())
    return f.assign(conf=conf, y=y, W=bookmaker(f["p_less"].to_numpy(), f["true_delta"].to_numpy()),
                    bin=_bin_index(conf))


def confidence_bins(frame: pd.DataFrame, *, by: str | None = None, level: float = 0.95) -> pd.DataFrame:
    """The confidence-bin table: per method, confidence (and ``by`` group), bin: count, share, accuracy.

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table (rows with NaN ``p_less``, i.e. ``ip``, are left out).
    by : {"pair_type", "similarity"}, optional
        Break down by pair type (Table 3) or similarity bin (Table 4).
    level : float
        Level of the Wilson interval of each accuracy.

    Returns
    -------
    pandas.DataFrame
        ``method, confidence, [group,] bin, n, share, accuracy, lower, upper, mean_confidence``; ``share``
        is the fraction of that method's (and group's) pairs in the bin.
    """
    f = _scored(frame)
    keys = ["method", "confidence"]
    if by == "similarity":
        f = f.assign(group=similarity_bin(f["similarity"].to_numpy()))
        keys.append("group")
    elif by == "pair_type":
        f = f.assign(group=f["pair_type"].to_numpy())
        keys.append("group")
    elif by is not None:
        raise BayevalInputError(f"by: must be 'pair_type', 'similarity' or None, got {by!r}")
    rows = []
    for key, g in f.groupby(keys, sort=False):
        total = len(g)
        for b, label in enumerate(BIN_LABELS):
            sel = g[g["bin"] == b]
            n = len(sel)
            acc = float(sel["y"].mean()) if n else float("nan")
            lo, hi = wilson_interval(sel["y"].sum(), n, level)
            rows.append((*key, label, n, n / total if total else float("nan"), acc, float(lo), float(hi),
                         float(sel["conf"].mean()) if n else float("nan")))
    cols = [*keys, "bin", "n", "share", "accuracy", "lower", "upper", "mean_confidence"]
    return pd.DataFrame(rows, columns=cols)


def _trial_level(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.groupby(["method", "confidence", "trial"], sort=False).agg(
        judgments=("judgments", "first"), tau=("tau", "first"), decided=("decided", "first"),
        seconds=("seconds", "first")).reset_index()


def paired_tests(frame: pd.DataFrame, quantity: str, a: tuple[str, str], b: tuple[str, str]) -> dict:
    """Paired Wilcoxon signed-rank and t-tests of a per-trial quantity between two methods.

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table.
    quantity : {"judgments", "tau", "W"}
        Per trial: judgments on the originals, Kendall τ, or the mean bookmaker W of the trial's pairs.
    a, b : (method, confidence)
        The two methods, e.g. ``("mtc", "delta")`` and ``("rtc", "delta")``.

    Returns
    -------
    dict
        ``n`` (trials in both), ``mean_a``, ``mean_b``, ``median_a``, ``median_b``, ``wilcoxon_p``,
        ``t_p`` (two-sided; NaN when the differences are all 0 or fewer than 2 trials).
    """
    if quantity == "W":
        s = _scored(frame)
        per = s.groupby(["method", "confidence", "trial"])["W"].mean().rename("value").reset_index()
    elif quantity in ("judgments", "tau"):
        per = _trial_level(frame).rename(columns={quantity: "value"})
    else:
        raise BayevalInputError(f"quantity: must be 'judgments', 'tau' or 'W', got {quantity!r}")
    sides = []
    for m, c in (a, b):
        x = per[(per["method"] == m) & (per["confidence"] == c)].set_index("trial")["value"]
        if not len(x):
            raise BayevalInputError(f"methods: no rows for method {m!r} with confidence {c!r}")
        sides.append(x)
    return paired_series(*sides)


def paired_series(a: pd.Series, b: pd.Series) -> dict:
    """Paired Wilcoxon signed-rank and t-tests of two per-trial series (index: trial; trials in both only).

    Returns ``n, mean_a, mean_b, median_a, median_b, wilcoxon_p, t_p`` as :func:`paired_tests`.
    """
    both = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
    n = len(both)
    out = {"n": n, "mean_a": float(both["a"].mean()), "mean_b": float(both["b"].mean()),
           "median_a": float(both["a"].median()), "median_b": float(both["b"].median()),
           "wilcoxon_p": float("nan"), "t_p": float("nan")}
    a, b = both["a"].to_numpy()[None], both["b"].to_numpy()[None]
    out["wilcoxon_p"] = float(paired_pvalues(a, b, "wilcoxon")[0])
    out["t_p"] = float(paired_pvalues(a, b, "t")[0])
    return out


@dataclass(frozen=True, eq=False)
class RobustnessStatistics:
    """The papers' statistics of one study (one collection).

    Attributes
    ----------
    bins : pandas.DataFrame
        :func:`confidence_bins` of every method × confidence.
    by_pair_type, by_similarity : pandas.DataFrame
        The same broken down (carterette2007 Tables 3 and 4).
    overall : pandas.DataFrame
        Per method × confidence: ``trials, pairs, accuracy, W_mean, W_by_type`` (dict), ``median_judgments,
        mean_judgments, mean_tau, decided`` (share of trials whose selection reached α), ``seconds``
        (mean per trial), ``goal_bins`` (every bin's accuracy ≥ its lower edge).
        Also the proper scores of all pairs (:class:`~bayeval.stats.forecast.ForecastScores`): ``brier,
        log_score, share_95, share_99, right_95, right_99``, and ``reliable`` (every reliability bin of
        P(ΔMAP < 0) consistent with its Wilson interval).
    tests : pandas.DataFrame
        Paired tests (judgments, τ, W) between the methods.
    proper : pandas.DataFrame
        Per method × confidence × split × group (see the module): ``pairs, brier, log_score, share_95,
        share_99, n_95, n_99, right_95, right_99, W_mean``.
    reliability : pandas.DataFrame
        Per method × confidence × split × group, the :func:`~bayeval.stats.forecast.reliability_bins` of
        P(ΔMAP < 0): ``bin, lower_edge, upper_edge, n, mean_forecast, frequency, lower, upper, consistent``.
    """

    bins: pd.DataFrame
    by_pair_type: pd.DataFrame
    by_similarity: pd.DataFrame
    overall: pd.DataFrame
    tests: pd.DataFrame
    proper: pd.DataFrame
    reliability: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The overall table."""
        return self.overall.copy()

    def confidence_interval(self, level: float = 0.95) -> pd.DataFrame:
        """The bins with Wilson intervals of the accuracy at ``level``."""
        return self.bins.drop(columns=["lower", "upper"]).assign(
            lower=wilson_interval(self.bins["accuracy"] * self.bins["n"], self.bins["n"], level)[0],
            upper=wilson_interval(self.bins["accuracy"] * self.bins["n"], self.bins["n"], level)[1])

    def summary(self) -> str:
        lines = []
        for r in self.overall.itertuples(index=False):
            lines.append(f"{r.method:>5} {r.confidence:>6}: Brier {r.brier:.4f}  log score {r.log_score:.4f}  "
                         f"≥ 0.95: {r.share_95:.1%} of calls, {r.right_95:.1%} right  "
                         f"≥ 0.99: {r.share_99:.1%}, {r.right_99:.1%} right  W̄ = {r.W_mean:+.2f}  "
                         f"accuracy {r.accuracy:.1%}  median judged {r.median_judgments:.0f}  "
                         f"mean τ {r.mean_tau:.3f}  bins ≥ lower edge: {'yes' if r.goal_bins else 'no'}  "
                         f"reliable: {'yes' if r.reliable else 'no'}")
        return "\n".join(lines)


def _goal(bins: pd.DataFrame) -> bool:
    lower = dict(zip(BIN_LABELS, BIN_EDGES, strict=True))
    ok = [acc >= lower[b] for b, acc, n in zip(bins["bin"], bins["accuracy"], bins["n"], strict=True) if n > 0]
    return bool(ok) and all(ok)


PROPER_COLUMNS = ("method", "confidence", "split", "group", "pairs", "brier", "log_score", "share_95", "share_99",
                  "n_95", "n_99", "right_95", "right_99", "W_mean")
RELIABILITY_COLUMNS = ("method", "confidence", "split", "group", "bin", "lower_edge", "upper_edge", "n",
                       "mean_forecast", "frequency", "lower", "upper", "consistent")


def _splits(scored: pd.DataFrame, manual) -> list[tuple[str, pd.Series]]:
    out = [("all", pd.Series("all", index=scored.index)), ("pair_type", scored["pair_type"].astype(str))]
    if manual is not None:
        man = set(manual)
        has = scored["run_a"].isin(man) | scored["run_b"].isin(man)
        out.append(("run_type", pd.Series(np.where(has, "manual", "automatic"), index=scored.index)))
    return out


def proper_scores(frame: pd.DataFrame, *, manual=None, level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Proper scores and reliability bins of P(ΔMAP < 0) per method × confidence × split × group.

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table (rows with NaN ``p_less``, i.e. ``ip``, are left out).
    manual : sequence of str, optional
        Tags of the manual runs; adds the ``run_type`` split (``automatic``/``manual``).
    level : float
        Level of the reliability bins' Wilson intervals.

    Returns
    -------
    proper, reliability : pandas.DataFrame
        Columns :data:`PROPER_COLUMNS` and :data:`RELIABILITY_COLUMNS` (see :class:`RobustnessStatistics`).

    Examples
    --------
    >>> f = pd.DataFrame({"method": "m", "confidence": "delta", "pair_type": ["both", "none", "none"],
    ...                   "run_a": ["A", "B", "C"], "run_b": ["B", "C", "A"],
    ...                   "p_less": [0.9, 0.2, 1.0], "true_delta": [-0.1, -0.1, -0.2]})

    Brier: 0.1² = 0.01, 0.8² = 0.64 and 0² = 0, so (0.01 + 0.64 + 0) / 3 = 0.2167 over all pairs; the two
    pairs with run C (manual) are the two of pair type ``none``: (0.64 + 0) / 2 = 0.32; the one call at
    ≥ 0.99 (P = 1, Δ < 0) is right:

    >>> proper, rel = proper_scores(f, manual=["C"])
    >>> proper[["split", "group", "pairs", "brier", "share_99", "right_99"]].round(4)
           split      group  pairs   brier  share_99  right_99
    0        all        all      3  0.2167    0.3333       1.0
    1  pair_type       both      1  0.0100    0.0000       NaN
    2  pair_type       none      2  0.3200    0.5000       1.0
    3   run_type  automatic      1  0.0100    0.0000       NaN
    4   run_type     manual      2  0.3200    0.5000       1.0
    """
    f = _scored(frame)
    prows, rrows = [], []
    for (m, c), g in f.groupby(["method", "confidence"], sort=False):
        for split, labels in _splits(g, manual):
            for grp, sub in g.groupby(labels, sort=True):
                p, d = sub["p_less"].to_numpy(), sub["true_delta"].to_numpy()
                sc = forecast_scores(p, d)
                prows.append({"method": m, "confidence": c, "split": split, "group": grp,
                              **sc.to_frame().iloc[0].to_dict(), "W_mean": float(sub["W"].mean())})
                rel = reliability_bins(p, d, level=level)
                rrows.append(rel.assign(method=m, confidence=c, split=split, group=grp))
    proper = pd.DataFrame(prows, columns=list(PROPER_COLUMNS))
    for col in ("pairs", "n_95", "n_99"):
        proper[col] = proper[col].astype(np.int64)
    reliability = (pd.concat(rrows, ignore_index=True)[list(RELIABILITY_COLUMNS)] if rrows
                   else pd.DataFrame(columns=list(RELIABILITY_COLUMNS)))
    return proper, reliability


def robustness_statistics(frame: pd.DataFrame, *, manual=None) -> RobustnessStatistics:
    """All the statistics of :mod:`bayeval.experiments.statistics` for one collection's trial table.

    ``manual`` (tags of the manual runs, e.g. :attr:`TestCollection.manual
    <bayeval.experiments.TestCollection>`) adds the ``run_type`` split to the proper scores.

    Examples
    --------
    >>> f = pd.DataFrame({"method": "m", "confidence": "delta", "trial": [0, 0, 1], "pair_type": "none",
    ...                   "similarity": 0.5, "p_less": [0.9, 0.2, 1.0], "true_delta": [-0.1, -0.1, -0.2],
    ...                   "judgments": [10, 10, 30], "tau": [0.2, 0.2, 0.4], "decided": True, "seconds": 1.0})
    >>> st = robustness_statistics(f)
    >>> r = st.overall.iloc[0]
    >>> round(float(r.W_mean), 3), float(r.median_judgments), round(float(r.mean_tau), 3)
    (-0.667, 20.0, 0.3)
    """
    if "collection" in frame.columns and frame["collection"].nunique() > 1:
        raise BayevalInputError(f"frame: holds several collections {sorted(frame['collection'].unique())}; "
                                "compute statistics per collection")
    need = {"method", "confidence", "trial", "p_less", "true_delta", "judgments", "tau", "pair_type", "similarity"}
    if manual is not None:
        if isinstance(manual, str):
            raise BayevalInputError("manual: expected a sequence of run tags, got a string")
        need |= {"run_a", "run_b"}
    missing = need - set(frame.columns)
    if missing:
        raise BayevalInputError(f"frame: missing column(s) {sorted(missing)}")
    bins = confidence_bins(frame)
    by_type = confidence_bins(frame, by="pair_type")
    by_sim = confidence_bins(frame, by="similarity")
    scored = _scored(frame)
    trials = _trial_level(frame)
    proper, reliability = proper_scores(frame, manual=manual)
    rows = []
    for (m, c), g in frame.groupby(["method", "confidence"], sort=False):
        t = trials[(trials["method"] == m) & (trials["confidence"] == c)]
        s = scored[(scored["method"] == m) & (scored["confidence"] == c)]
        b = bins[(bins["method"] == m) & (bins["confidence"] == c)]
        if len(s):
            acc, wm = float(s["y"].mean()), float(s["W"].mean())
            w_type = {k: float(v) for k, v in s.groupby("pair_type")["W"].mean().items()}
            w_sim = {k: float(v) for k, v in s.assign(sb=similarity_bin(s["similarity"]))
                     .groupby("sb")["W"].mean().items()}
        else:  # no confidence (ip): accuracy of the sign of the MAP difference on the judgments alone
            e = g["e_delta"].to_numpy() if "e_delta" in g else np.full(len(g), np.nan)
            acc = float(np.mean(np.sign(e) == np.sign(g["true_delta"].to_numpy()))) if len(g) else float("nan")
            wm, w_type, w_sim = float("nan"), {}, {}
        rows.append({"method": m, "confidence": c, "trials": int(t["trial"].nunique()), "pairs": len(g),
                     "accuracy": acc, "W_mean": wm, "W_by_type": w_type, "W_by_similarity": w_sim,
                     "median_judgments": float(t["judgments"].median()),
                     "mean_judgments": float(t["judgments"].mean()), "mean_tau": float(t["tau"].mean()),
                     "decided": float(t["decided"].mean()) if "decided" in t else float("nan"),
                     "seconds": float(t["seconds"].mean()) if "seconds" in t else float("nan"),
                     "goal_bins": _goal(b) if len(b) else False, **_overall_scores(proper, reliability, m, c)})
    overall = pd.DataFrame(rows)
    tests = []
    pairs = overall[["method", "confidence"]].itertuples(index=False, name=None)
    pairs = list(pairs)
    for i, a in enumerate(pairs):
        for b2 in pairs[i + 1:]:
            if a[0] == b2[0]:
                continue
            for q in ("judgments", "tau", "W"):
                if q == "judgments" and a[1] != b2[1]:
                    continue
                if q == "W" and ("ip" in (a[0], b2[0])):
                    continue
                try:
                    r = paired_tests(frame, q, a, b2)
                except BayevalInputError:
                    continue
                tests.append({"quantity": q, "a": f"{a[0]}/{a[1]}", "b": f"{b2[0]}/{b2[1]}", **r})
    return RobustnessStatistics(bins, by_type, by_sim, overall, pd.DataFrame(tests), proper, reliability)


def _overall_scores(proper: pd.DataFrame, reliability: pd.DataFrame, method: str, confidence: str) -> dict:
    keys = ("brier", "log_score", "share_95", "share_99", "right_95", "right_99")
    sel = (proper["method"] == method) & (proper["confidence"] == confidence) & (proper["split"] == "all")
    if not sel.any():  # no confidence (ip)
        return {**{k: float("nan") for k in keys}, "reliable": False}
    r = proper[sel].iloc[0]
    rel = reliability[(reliability["method"] == method) & (reliability["confidence"] == confidence)
                      & (reliability["split"] == "all")]
    return {**{k: float(r[k]) for k in keys}, "reliable": bool(rel["consistent"].all())}
