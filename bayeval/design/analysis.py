r"""Reusability analysis of a held-out-sites design: :func:`analyze_design`.

Given per-topic scores of runs, the site of each run and the :class:`~bayeval.design.Design`, it
answers the paper's three questions for the three kinds of reusability (within-site, between-site,
participant comparison):

1. agreement in statistical significance: observed vs expected 2×2 tables and their χ² p-value
   (:mod:`bayeval.design.agreement`), aggregated over sites and per site (pair);
2. relative ordering: Kendall's τ per site between baseline and reuse means, and the
   participant-comparison τ;
3. agreement in scores: RMSE between baseline and reuse means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations, permutations

import numpy as np
import pandas as pd

from bayeval.design.agreement import (
    AgreementTable,
    expected_table,
    goodness_of_fit,
    observed_table,
    pair_statistics,
)
from bayeval.design.assign import Design
from bayeval.design.plot import plot_reuse
from bayeval.design.scores import TopicScores
from bayeval.design.significance import ADJUSTMENTS
from bayeval.design.sites import first_of, runs_in_design, site_labels
from bayeval.errors import BayevalInputError
from bayeval.stats import PAIRED_TESTS, kendall_tau, pairwise_tau, rmse

__all__ = ["KINDS", "ReusabilityAnalysis", "SignificanceAgreement", "analyze_design"]

KINDS = ("within", "between", "participant")
_KIND_TITLES = {"within": "within-site", "between": "between-site", "participant": "participant comparison"}
_CELL_COLUMNS = ("both", "commission", "omission", "neither")


def _cells(table: np.ndarray) -> list:
    return [table[0, 0], table[0, 1], table[1, 0], table[1, 1]]


@dataclass(frozen=True, eq=False)
class SignificanceAgreement:
    """Agreement in significance for one kind of reusability, aggregated over sites.

    Attributes
    ----------
    kind : {"within", "between", "participant"}
    table : AgreementTable
        Observed and expected tables summed over every site (pair), and their goodness-of-fit test;
        ``table.pairs`` lists every pairwise comparison.
    groups : DataFrame
        One row per site (within), pair of sites (between) or ordered pair (participant: ``site`` is
        the new site, ``other`` the participant): sizes, the four observed and expected cells and the
        group's own p-value.
    skipped : tuple of (str, str)
        Groups left out, and why (fewer than two baseline or reuse topics, fewer than two runs).
    """

    kind: str
    table: AgreementTable
    groups: pd.DataFrame
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def p_value(self) -> float:
        return self.table.p_value

    @property
    def observed(self) -> np.ndarray:
        return self.table.observed

    @property
    def expected(self) -> np.ndarray:
        return self.table.expected

    @property
    def pairs(self) -> pd.DataFrame:
        return self.table.pairs if self.table.pairs is not None else pd.DataFrame()

    def to_frame(self) -> pd.DataFrame:
        """The per-group table (see ``groups``)."""
        return self.groups.copy()

    def summary(self) -> str:
        head = f"{_KIND_TITLES[self.kind]} reusability, aggregated over {len(self.groups)} group(s)"
        if self.table.n_pairs == 0:
            head = f"{_KIND_TITLES[self.kind]} reusability: nothing to test"
            lines = [head]
        else:
            lines = [head, self.table.summary()]
        if self.skipped:
            lines.append(f"({len(self.skipped)} group(s) skipped: {self.skipped[0][1]}"
                         + (", ..." if len(self.skipped) > 1 else "") + ")")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"SignificanceAgreement(kind={self.kind!r}, pairs={self.table.n_pairs}, "
                f"p_value={self.table.p_value:.3g})")


@dataclass(frozen=True, eq=False)
class ReusabilityAnalysis:
    """The result of :func:`analyze_design`.

    Attributes
    ----------
    measure : str
    alpha : float
    test, adjust, method : str
        Pairwise test, multiple-comparison adjustment, goodness-of-fit method requested.
    within, between, participant : SignificanceAgreement or None
        Agreement in significance per kind (None when not requested).
    runs : DataFrame
        Per run: ``run, site, baseline, reuse, n_baseline, n_reuse`` — its mean over the topics its
        site contributed to and over those it was held out of.
    sites : DataFrame
        Per site: ``site, runs, n_baseline, n_reuse, tau_within, tau_participant,
        participant_pairs, rmse``.
    overall : dict
        Over all runs: ``runs``, ``tau`` (Kendall's τ between baseline and reuse means of every run:
        the paper's rough estimate of between-site reusability, §5.1), ``tau_participant`` (pooled
        over sites), ``participant_pairs``, ``rmse``.
    design : Design
    site_of : dict
        Run → site, for the analysed runs.
    dropped_runs : tuple of str
        Runs of the scores whose site is not in the design (left out).
    """

    measure: str
    alpha: float
    test: str
    adjust: str
    method: str
    within: SignificanceAgreement | None
    between: SignificanceAgreement | None
    participant: SignificanceAgreement | None
    runs: pd.DataFrame
    sites: pd.DataFrame
    overall: dict
    design: Design
    site_of: dict = field(repr=False)
    dropped_runs: tuple[str, ...] = ()

    def agreement(self, kind: str) -> SignificanceAgreement:
        if kind not in KINDS:
            raise BayevalInputError(f"kind: must be one of {', '.join(KINDS)}, got {kind!r}")
        res = getattr(self, kind)
        if res is None:
            raise BayevalInputError(f"kind: {kind} reusability was not analysed")
        return res

    def to_frame(self) -> pd.DataFrame:
        """One row per kind: pairs, the observed (``O_*``) and expected (``E_*``) cells, statistic, p-value.

        Cells: ``both`` (significant on both topic sets), ``commission`` (reuse only), ``omission``
        (baseline only), ``neither``.
        """
        rows = []
        for kind in KINDS:
            res = getattr(self, kind)
            if res is None:
                continue
            t = res.table
            rows.append({"kind": kind, "groups": len(res.groups), "pairs": t.n_pairs,
                         **{f"O_{c}": int(v) for c, v in zip(_CELL_COLUMNS, _cells(t.observed), strict=True)},
                         **{f"E_{c}": float(v) for c, v in zip(_CELL_COLUMNS, _cells(t.expected), strict=True)},
                         "statistic": t.statistic, "df": t.df, "p_value": t.p_value, "method": t.method,
                         "reversals": t.reversals})
        return pd.DataFrame(rows)

    def pairs(self) -> pd.DataFrame:
        """Every pairwise comparison of every kind (``kind`` column first)."""
        parts = [res.pairs.assign(kind=kind) for kind in KINDS if (res := getattr(self, kind)) is not None]
        parts = [p for p in parts if not p.empty]
        if not parts:
            return pd.DataFrame()
        out = pd.concat(parts, ignore_index=True)
        return out[["kind", *[c for c in out.columns if c != "kind"]]]

    def site_table(self) -> pd.DataFrame:
        """``sites`` with a last row ``all`` from ``overall`` (its τ in ``tau_within``; topic counts empty)."""
        o = self.overall
        last = pd.DataFrame([{"site": "all", "runs": o["runs"], "n_baseline": None, "n_reuse": None,
                              "tau_within": o["tau"], "tau_participant": o["tau_participant"],
                              "participant_pairs": o["participant_pairs"], "rmse": o["rmse"]}])
        out = pd.concat([self.sites.astype({"n_baseline": object, "n_reuse": object}), last], ignore_index=True)
        out[["n_baseline", "n_reuse"]] = out[["n_baseline", "n_reuse"]].fillna("")
        return out

    def summary(self) -> str:
        n_sites = len(set(self.site_of.values()))
        lines = [f"Reusability analysis: {self.measure}, {len(self.runs)} runs of {n_sites} sites, "
                 f"{self.design.n_topics} topics; paired {self.test}-test at alpha = {self.alpha:g}"
                 + ("" if self.adjust == "none" else f", {self.adjust} adjustment")]
        if self.dropped_runs:
            lines.append(f"({len(self.dropped_runs)} run(s) of sites outside the design left out)")
        for kind in KINDS:
            res = getattr(self, kind)
            if res is not None:
                lines += ["", res.summary()]
        lines += ["", "Ordering and scores, baseline vs reuse means per site:"]
        lines.append(self.site_table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    def plot(self, truth: TopicScores | None = None, *, ax=None, path=None):
        """Baseline vs reuse scores per site (paper Figures 1–2); see :func:`bayeval.design.plot_reuse`."""
        return plot_reuse(self, truth=truth, ax=ax, path=path)

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={getattr(self, k).p_value:.3g}" for k in KINDS if getattr(self, k) is not None)
        return f"ReusabilityAnalysis(measure={self.measure!r}, runs={len(self.runs)}, p_values=({ps}))"


# ---------------------------------------------------------------------------------------- input
def _as_scores(scores, measure) -> TopicScores:
    if isinstance(scores, TopicScores):
        return scores
    if isinstance(scores, pd.DataFrame):
        return TopicScores.from_frame(scores, measure)
    if hasattr(scores, "values") and hasattr(scores, "systems") and hasattr(scores, "measures"):
        return TopicScores.from_evaluation(scores, measure)
    raise BayevalInputError(f"scores: expected TopicScores, an Evaluation or a DataFrame, got {type(scores).__name__}")


def _align(scores: TopicScores, design: Design, site_of: dict[str, str]):
    keep, dropped = runs_in_design(scores.runs, site_of, design.sites)
    absent = [t for t in design.topics if t not in set(scores.topics)]
    if absent:
        raise BayevalInputError(f"scores: no scores for design topic {first_of(absent)}")
    sub = scores.select(keep, design.topics)
    bad = np.argwhere(np.isnan(sub.values))
    if len(bad):
        r, t = bad[0]
        raise BayevalInputError(f"scores: run {sub.runs[r]!r} has no score for topic {sub.topics[t]!r}")
    return sub, dropped


# ---------------------------------------------------------------------------------------- groups
def _groups(kind: str, design: Design, members: dict[str, np.ndarray]):
    """(label, site, other, base mask, reuse mask, pair index arrays) for each comparison group."""
    sites = [s for s in design.sites if len(members[s])]
    if kind == "within":
        for s in sites:
            base, reuse = design.masks("within", s)
            idx = members[s]
            ia, ib = np.triu_indices(len(idx), 1)
            yield s, s, "", base, reuse, idx[ia], idx[ib]
    else:
        it = combinations(sites, 2) if kind == "between" else permutations(sites, 2)
        for s, o in it:
            base, reuse = design.masks(kind, s, o)
            a, b = members[s], members[o]
            ia, ib = np.repeat(a, len(b)), np.tile(b, len(a))
            yield f"{s}|{o}", s, o, base, reuse, ia, ib


def _analyse_kind(kind: str, X: np.ndarray, runs: tuple[str, ...], site_of: dict[str, str], design: Design,
                  members: dict[str, np.ndarray], *, alpha: float, test: str, adjust: str, method: str, draws: int,
                  seed: np.random.SeedSequence) -> SignificanceAgreement:
    rows, pair_frames, skipped, tables = [], [], [], []
    names = np.asarray(runs, dtype=object)
    groups = list(_groups(kind, design, members))
    seeds = seed.spawn(len(groups) + 1)
    for g, (label, s, o, base, reuse, ia, ib) in enumerate(groups):
        nb, nr = int(base.sum()), int(reuse.sum())
        if len(ia) == 0:
            skipped.append((label, "fewer than two runs"))
            continue
        if nb < 2 or nr < 2:
            skipped.append((label, f"fewer than 2 {'baseline' if nb < 2 else 'reuse'} topics ({min(nb, nr)})"))
            continue
        st = pair_statistics(X[np.ix_(ia, base)], X[np.ix_(ib, base)], X[np.ix_(ia, reuse)], X[np.ix_(ib, reuse)],
                             alpha=alpha, test=test, adjust=adjust)
        obs = observed_table(st["sig_base"], st["sig_reuse"])
        exp = expected_table(st["power_base"], st["power_reuse"])
        x2, df, p, how = goodness_of_fit(obs, exp, method, draws=draws, seed=seeds[g])
        tables.append((obs, exp))
        rows.append({"group": label, "site": s, "other": o, "pairs": len(ia), "n_baseline": nb, "n_reuse": nr,
                     **{f"O_{c}": int(v) for c, v in zip(_CELL_COLUMNS, _cells(obs), strict=True)},
                     **{f"E_{c}": float(v) for c, v in zip(_CELL_COLUMNS, _cells(exp), strict=True)},
                     "statistic": x2, "p_value": p, "method": how, "reversals": int(st["reversed"].sum())})
        pair_frames.append(pd.DataFrame({
            "group": label, "site_a": site_of[runs[ia[0]]], "site_b": site_of[runs[ib[0]]], "run_a": names[ia],
            "run_b": names[ib], "n_baseline": nb, "n_reuse": nr, **st}))
    cols = ["group", "site", "other", "pairs", "n_baseline", "n_reuse", *[f"O_{c}" for c in _CELL_COLUMNS],
            *[f"E_{c}" for c in _CELL_COLUMNS], "statistic", "p_value", "method", "reversals"]
    frame = pd.DataFrame(rows, columns=cols)
    obs = sum((t[0] for t in tables), np.zeros((2, 2), dtype=np.int64))
    exp = sum((t[1] for t in tables), np.zeros((2, 2)))
    pairs = pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame()
    table = AgreementTable.from_counts(obs, exp, method, draws=draws, seed=seeds[-1], alpha=alpha, pairs=pairs,
                                       reversals=int(frame["reversals"].sum()) if len(frame) else 0)
    return SignificanceAgreement(kind, table, frame, tuple(skipped))


def _ordering(X: np.ndarray, runs: tuple[str, ...], site_of: dict[str, str], design: Design,
              members: dict[str, np.ndarray]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    R = len(runs)
    base_mean = np.full(R, np.nan)
    reuse_mean = np.full(R, np.nan)
    n_base = np.zeros(R, dtype=np.int64)
    n_reuse = np.zeros(R, dtype=np.int64)
    for s, idx in members.items():
        if not len(idx):
            continue
        base, reuse = design.masks("within", s)
        n_base[idx], n_reuse[idx] = base.sum(), reuse.sum()
        if base.any():
            base_mean[idx] = X[np.ix_(idx, base)].mean(axis=1)
        if reuse.any():
            reuse_mean[idx] = X[np.ix_(idx, reuse)].mean(axis=1)
    run_frame = pd.DataFrame({"run": list(runs), "site": [site_of[r] for r in runs], "baseline": base_mean,
                              "reuse": reuse_mean, "n_baseline": n_base, "n_reuse": n_reuse})
    rows = []
    total_c = total_d = total_n = 0
    for s in design.sites:
        idx = members[s]
        if not len(idx):
            continue
        diffs_b, diffs_r = [], []
        for o in design.sites:
            jdx = members[o]
            if o == s or not len(jdx):
                continue
            base, reuse = design.masks("participant", s, o)
            if not base.any() or not reuse.any():
                continue
            ia, ib = np.repeat(idx, len(jdx)), np.tile(jdx, len(idx))
            diffs_b.append((X[np.ix_(ia, base)] - X[np.ix_(ib, base)]).mean(axis=1))
            diffs_r.append((X[np.ix_(ia, reuse)] - X[np.ix_(ib, reuse)]).mean(axis=1))
        if diffs_b:
            tau_p, c, d, n = pairwise_tau(np.concatenate(diffs_b), np.concatenate(diffs_r))
            total_c, total_d, total_n = total_c + c, total_d + d, total_n + n
        else:
            tau_p, n = float("nan"), 0
        ok = ~np.isnan(base_mean[idx]) & ~np.isnan(reuse_mean[idx])
        rows.append({"site": s, "runs": len(idx), "n_baseline": int(n_base[idx[0]]), "n_reuse": int(n_reuse[idx[0]]),
                     "tau_within": kendall_tau(base_mean[idx][ok], reuse_mean[idx][ok]),
                     "tau_participant": tau_p, "participant_pairs": n,
                     "rmse": rmse(base_mean[idx][ok], reuse_mean[idx][ok])})
    ok = ~np.isnan(base_mean) & ~np.isnan(reuse_mean)
    overall = {"runs": R, "tau": kendall_tau(base_mean[ok], reuse_mean[ok]),
               "tau_participant": (total_c - total_d) / total_n if total_n else float("nan"),
               "participant_pairs": total_n, "rmse": rmse(base_mean[ok], reuse_mean[ok])}
    cols = ["site", "runs", "n_baseline", "n_reuse", "tau_within", "tau_participant", "participant_pairs", "rmse"]
    return run_frame, pd.DataFrame(rows, columns=cols), overall


# ---------------------------------------------------------------------------------------- API
def analyze_design(scores, design: Design, sites, *, measure: str | None = None, alpha: float = 0.05,
                   test: str = "t", adjust: str = "none", method: str = "auto", draws: int = 10000,
                   seed: int | np.random.SeedSequence | None = 0, kinds=KINDS) -> ReusabilityAnalysis:
    r"""Analyse the reusability evidence collected by a held-out-sites design.

    Parameters
    ----------
    scores : TopicScores, Evaluation or DataFrame
        Per-topic scores of the runs (a DataFrame with columns ``run, topic, value[, measure]``).
        Every design topic needs a score for every analysed run.
    design : Design
        Which sites contributed to which topics.
    sites : mapping or DataFrame
        Run → site (or a frame with columns ``run`` and ``site``/``group``). Every run of ``scores``
        needs a site; runs of sites that are not in the design are left out (``dropped_runs``).
    measure : str, optional
        Which measure of a multi-measure Evaluation or frame (default: the only / first one).
    alpha : float
        Significance level of the pairwise tests (0.05).
    test : {"t", "wilcoxon"}
        Pairwise test (paired t-test by default; the expected table always uses t-test power).
    adjust : {"none", "bonferroni", "holm"}
        Multiple-comparison adjustment within each group (site, pair of sites); powers are then
        computed at α / (number of pairs of the group).
    method : {"auto", "chi2", "monte-carlo"}
        Goodness-of-fit test: χ², Monte Carlo, or Monte Carlo when an expected count is below 5.
    draws : int
        Monte Carlo draws.
    seed : int or SeedSequence
        Seeds every Monte Carlo test (spawned per kind and group, so results do not depend on the
        order of evaluation).
    kinds : iterable of {"within", "between", "participant"}
        Which kinds of reusability to test for agreement in significance.

    Returns
    -------
    ReusabilityAnalysis

    Notes
    -----
    For each kind the comparison groups and their topic sets (:meth:`Design.masks`) are:

    * within-site, per site s: the pairs of runs of s; baseline = topics s contributed to, reuse =
      topics s was held out of;
    * between-site, per pair of sites {s, o}: the pairs (run of s, run of o); baseline = topics both
      contributed to, reuse = topics both were held out of;
    * participant comparison, per ordered pair (new s, participant o): the pairs (run of s, run of o);
      baseline = topics both contributed to, reuse = topics s was held out of while o contributed.

    For each pair: paired tests on the baseline (p) and reuse (p') topics, the effect size
    :math:`d = \bar x/s` of the baseline differences, powers :math:`\pi(d, n)` and :math:`\pi(d, n')`
    (:func:`~bayeval.design.t_test_power`), observed and expected 2×2 tables
    (:mod:`bayeval.design.agreement`). Tables are summed over the groups of a kind and tested with
    χ² (3 df) or Monte Carlo; each group also gets its own p-value. Groups with fewer than two
    baseline or reuse topics are skipped (e.g. between-site with a single block and k = 2).

    Ordering and scores (per site): each run's mean over its site-baseline topics and over its
    reuse topics; Kendall's τ between those two means over the site's runs (within-site τ); the
    participant τ over the pairs with exactly one run of the site, each pair compared by its mean
    difference over the topics both sites contributed to and over the topics the site was held out
    of while the other contributed; RMSE between baseline and reuse means.

    References
    ----------
    .. [1] B. Carterette, E. Kanoulas, V. Pavlu, H. Fang. Reusable test collections through
       experimental design. SIGIR 2010, §3.2.

    Examples
    --------
    >>> from bayeval.design import assign_design
    >>> rng = np.random.default_rng(3)
    >>> design = assign_design(60, ["A", "B", "C", "D"], k=2, min_baseline=12)
    >>> runs = [f"{s}{i}" for s in "ABCD" for i in range(3)]
    >>> quality = rng.uniform(0.1, 0.4, len(runs))[:, None]
    >>> values = np.clip(quality + rng.normal(0, 0.1, (1, 60)) + rng.normal(0, 0.05, (len(runs), 60)), 0, 1)
    >>> scores = TopicScores(runs, design.topics, values)
    >>> res = analyze_design(scores, design, {r: r[0] for r in runs})
    >>> res.within.table.n_pairs, res.between.table.n_pairs, res.participant.table.n_pairs
    (12, 54, 108)
    """
    kinds = _checked_settings(design, alpha, test, adjust, kinds)
    sc = _as_scores(scores, measure)
    site_of_all = site_labels(sites)
    sub, dropped = _align(sc, design, site_of_all)
    site_of = {r: site_of_all[r] for r in sub.runs}
    X = sub.values
    members = {s: np.array([i for i, r in enumerate(sub.runs) if site_of[r] == s], dtype=np.int64)
               for s in design.sites}
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    kind_seeds = dict(zip(KINDS, root.spawn(len(KINDS)), strict=True))
    results = {k: _analyse_kind(k, X, sub.runs, site_of, design, members, alpha=float(alpha), test=test,
                                adjust=adjust, method=method, draws=draws, seed=kind_seeds[k])
               if k in kinds else None for k in KINDS}
    run_frame, site_frame, overall = _ordering(X, sub.runs, site_of, design, members)
    return ReusabilityAnalysis(sub.measure, float(alpha), test, adjust, method, results["within"],
                               results["between"], results["participant"], run_frame, site_frame, overall, design,
                               site_of, dropped)


def _checked_settings(design: Design, alpha: float, test: str, adjust: str, kinds) -> tuple[str, ...]:
    """Refuse, naming the argument, settings :func:`analyze_design` cannot use; the kinds asked for."""
    if alpha is None or not 0.0 < float(alpha) < 1.0:
        raise BayevalInputError(f"alpha: must lie in (0, 1), got {alpha!r}")
    if test not in PAIRED_TESTS:
        raise BayevalInputError(f"test: must be one of {', '.join(PAIRED_TESTS)}, got {test!r}")
    if adjust not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {adjust!r}")
    if not isinstance(design, Design):
        raise BayevalInputError(f"design: expected a Design, got {type(design).__name__}")
    kinds = tuple(kinds)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise BayevalInputError(f"kinds: unknown kind {bad[0]!r}; choose from {', '.join(KINDS)}")
    return kinds
