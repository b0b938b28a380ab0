r"""Paper-ready reports with uncertainty: per-run tables, the pairwise confidence matrix and a figure.

:func:`make_report` evaluates every run under uncertain relevance (:func:`bayeval.expected.expected_measures`
and :func:`bayeval.expected.compare_systems`, with a relevance model's posterior draws of p when given) and
returns a frozen :class:`Report`:

- per run: :math:`E[\mathrm{MAP}]` (or the mean of another measure), its interval
  :math:`E\pm z_{(1+\ell)/2}\sqrt{\mathrm{Var}}` at level :math:`\ell` (clipped to [0, 1]), judged@k
  (mean over topics of the fraction of the top k holding a judged document) and the rank by E;
- the pairwise confidence matrix :math:`C_{ab}=P(\mathrm{MAP}_a>\mathrm{MAP}_b)=P(\Delta_{ab}>0)`, marked
  † at 0.95 and ‡ at 0.99 (on these topics, relevance uncertain), and * where a test across topics says the runs
  differ over the population of topics (:func:`bayeval.expected.topic_tests`, default the paired t-test on the
  values with unjudged documents not relevant, Holm-adjusted over all pairs, at 0.05);

rendered as LaTeX (booktabs) and markdown tables and a figure (E with intervals; the confidence heatmap).
Like ranx's ``Report``, with the uncertainty of incomplete judgments in every number.

Many runs: long run names get short labels with a key (:func:`run_labels`); every run gets a significance
group (:meth:`Report.groups`: a group starts at the best run not yet grouped and holds the runs ranked below
it that it does not beat with confidence ≥ 0.95); the LaTeX matrix and the figure's heatmap show the top
``max_matrix`` runs (default 12), so that both fit a page for 32 runs; the markdown keeps the full matrix.

References
----------
E. Bassani (2022). ranx: a blazing-fast Python library for ranking evaluation and comparison. ECIR.
B. Carterette, J. Allan, R. Sitaraman (2006). Minimal test collections for retrieval evaluation. SIGIR.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.display import describe_source, format_number, format_share
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.expected.extrapolation import expected_shift, extrapolation, mostly_extrapolated
from bayeval.measures import evaluate, judged_at

__all__ = ["ACROSS_MARK", "MARKERS", "MAX_MATRIX", "Report", "make_report", "run_labels"]

#: Confidence thresholds and their markers (LaTeX, plain text), strongest first.
MARKERS = ((0.99, r"$^{\ddagger}$", "‡"), (0.95, r"$^{\dagger}$", "†"))
#: The mark of a pair that differs across topics (adjusted p-value below the report's ``alpha``).
ACROSS_MARK = "*"


#: Runs shown in the LaTeX confidence matrix and the figure's heatmap (the best by E); the markdown has all.
MAX_MATRIX = 12
_LABEL_WIDTH = 14  # longest run label printed as it is


_SEPARATORS = "_-./: "


def _shared_affixes(names: list[str]) -> tuple[str, str]:
    """The prefix and suffix every name shares, cut at a separator (``_-./:`` or space) so that no word is
    split, and leaving every name a non-empty core."""
    if len(names) < 2:
        return "", ""
    pre = os.path.commonprefix(names)
    pre = pre[:max((pre.rfind(c) for c in _SEPARATORS), default=-1) + 1]
    rest = [n[len(pre):] for n in names]
    suf = os.path.commonprefix([n[::-1] for n in rest])[::-1]
    cuts = [k for k, c in enumerate(suf) if c in _SEPARATORS]
    suf = suf[cuts[0]:] if cuts else ""
    if any(not n[:len(n) - len(suf)].strip(_SEPARATORS) for n in rest):
        return pre, ""
    return pre, suf


def run_labels(names, width: int = _LABEL_WIDTH) -> dict[str, str]:
    """Short, unique labels of run names for tables and figures, ``{name: label}``.

    Names of at most ``width`` characters are kept. Otherwise the prefix and suffix all names share are
    dropped, cut at a separator (``baselines__IRTask1_bm25_run`` → ``bm25``), and a core still longer than
    ``width`` is cut with "…" at its end; where two cut labels would be equal, those (and only those) keep their
    last characters instead (``bl_bcai_mdl1_vs``, ``bl_bcai_mdl1_vt`` → ``bl_bcai_mdl…vs``, ``bl_bcai_mdl…vt``).
    Only if that cannot tell them apart are the runs labelled ``R1``, ``R2``, ... in the given order. A report
    prints the key of the labels that are not their run's name (:meth:`Report.label_key`), in its text and its
    figure.

    >>> run_labels(["baselines__IRTask1_bm25_run", "baselines__IRTask1_dph_run"])
    {'baselines__IRTask1_bm25_run': 'bm25', 'baselines__IRTask1_dph_run': 'dph'}
    >>> list(run_labels(["bl_bcai_mdl1_vs", "bl_bcai_mdl1_vt", "bm25_bert_token", "p_bm25"]).values())
    ['bl_bcai_mdl…vs', 'bl_bcai_mdl…vt', 'bm25_bert_tok…', 'p_bm25']
    """
    names = [str(n) for n in names]
    if all(len(n) <= width for n in names):
        return {n: n for n in names}
    pre, suf = _shared_affixes(names)
    core = [n[len(pre):len(n) - len(suf)].strip(_SEPARATORS) or n for n in names]
    labels = [c if len(c) <= width else c[:width - 1] + "…" for c in core]
    for _ in range(2):  # clashing cut labels keep their ends: head…tail, the tail as long as it must be
        seen: dict[str, list[int]] = {}
        for k, lab in enumerate(labels):
            seen.setdefault(lab, []).append(k)
        for group in (g for g in seen.values() if len(g) > 1):
            for tail in range(2, width - 1):
                cut = [core[k] if len(core[k]) <= width else core[k][:width - 1 - tail] + "…" + core[k][-tail:]
                       for k in group]
                if len(set(cut)) == len(cut):
                    break
            for k, lab in zip(group, cut, strict=True):
                labels[k] = lab
    if len(set(labels)) < len(labels):
        labels = [f"R{k + 1}" for k in range(len(names))]
    return dict(zip(names, labels, strict=True))


def _mean_name(measure: str) -> str:
    return "MAP" if measure == "AP" else f"mean {measure}"


def _marker(c: float, latex: bool) -> str:
    for thr, tex, txt in MARKERS:
        if c >= thr:
            return tex if latex else txt
    return ""


def _tex(text: str) -> str:
    """Escape LaTeX's special characters in a run name or header."""
    out = str(text)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")):
        out = out.replace(a, b) if a != "\\" else out.replace(a, "\x00")
    out = out.replace("\x00", r"\textbackslash{}")
    for a, b in (("±", r"$\pm$"), ("·", r"$\cdot$"), ("≥", r"$\geq$"), ("†", r"$^\dagger$"), ("‡", r"$^\ddagger$"),
                 ("<", "$<$"), (">", "$>$")):
        out = out.replace(a, b)
    return out


@dataclass(frozen=True, eq=False)
class Report:
    """Per-run expected measure with intervals, judged@k and rank, and the pairwise confidence matrix.

    Attributes
    ----------
    measure : str
        The per-topic measure (``"AP"``: the report shows E[MAP]).
    level : float
        Level of the intervals.
    judged_k : int
    runs : DataFrame
        Index ``run`` (ordered by rank); columns ``expected, sd, lower, upper, judged_at_k, rank``, and the
        two questions side by side (docs/calibration.md, "Two questions"): ``unjudged_zero``, the measure
        with every unjudged document counted as not relevant (what trec_eval reports); ``model_share``, the
        share of E[measure] that rests on the model's p of unjudged documents rather than on judgments, and
        ``beyond_share``, the share resting on documents no judged run (top ``judged_k`` all judged)
        retrieved, ``depth_share`` on documents beyond the judged depth, and ``extrapolated`` (one of the two
        shares at least one half) (:func:`bayeval.expected.extrapolation.extrapolation`, at the point p). E[MAP]
        estimates MAP *as if every document were judged*. With automatic assessors' labels, ``from_labels``:
        how much of E rests on them (:func:`make_report`'s ``without_labels``).
    confidence : DataFrame
        Square, runs in rank order: ``confidence.loc[a, b]`` = P(measure_a > measure_b) (NaN on the diagonal).
    source : str
        Where the probabilities of relevance came from and how the moments were computed.
    topics : int
    across : DataFrame, optional
        Square like ``confidence``: the adjusted p-value of the test across topics of row and column (NaN on the
        diagonal); ``None`` when not tested.
    across_caption : str
        That test in words.
    alpha : float
        Level at which ``across`` marks a pair (:data:`ACROSS_MARK`).
    """

    measure: str
    level: float
    judged_k: int
    runs: pd.DataFrame
    confidence: pd.DataFrame
    source: str
    topics: int
    across: pd.DataFrame | None = None
    across_caption: str = ""
    alpha: float = 0.05

    # tables ------------------------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """The per-run table (a copy)."""
        return self.runs.copy()

    def _run_legend(self) -> str:
        pct = f"{100 * self.level:g}%"
        return (f"E[{_mean_name(self.measure)}] over {self.topics} topics with unjudged documents relevant at "
                f"random ({self.source}); interval: {pct}, E ± z·sd; judged@{self.judged_k}: mean fraction of "
                f"the top {self.judged_k} judged; rank by E; group: runs a group's first run does not beat with "
                f"confidence ≥ 0.95. E[{_mean_name(self.measure)}] estimates the measure as if every document "
                f"were judged; '(unjudged = 0)' counts unjudged documents as not relevant, as trec_eval does; "
                f"'model share': the share of E resting on the model's p rather than on judgments; "
                f"'beyond judged runs': the share resting on documents no run with its top {self.judged_k} "
                f"judged retrieved; 'beyond judged depth': on documents below the depth the runs are judged to "
                f"(* when either share is half of E or more: E rests mostly on extrapolated p)."
                + (f" 'from labels': E[{_mean_name(self.measure)}] minus E[{_mean_name(self.measure)}] with the "
                   "automatic assessors' labels removed (their likelihood ratios set to 1, at the point p): the part "
                   "of E resting on the labels." if "from_labels" in self.runs.columns else ""))

    def _matrix_legend(self) -> str:
        text = "Confidence: P(row > column) on these topics, relevance uncertain; † ≥ 0.95, ‡ ≥ 0.99."
        if self.across is not None:
            text += (f" {ACROSS_MARK}: the runs differ over the population of topics, p < {self.alpha:g} "
                     f"({self.across_caption}).")
        return text

    def _cell(self, a: str, b: str, latex: bool) -> str:
        """A cell of the confidence matrix: the confidence, its marker, and the mark of the test across topics."""
        c = self.confidence.loc[a, b]
        text = f"{c:.3f}{_marker(c, latex)}"
        if self.across is not None and self.across.loc[a, b] < self.alpha:
            text += f"$^{{{ACROSS_MARK}}}$" if latex else ACROSS_MARK
        return text

    def across_pairs(self) -> int:
        """How many pairs differ across topics at ``alpha`` (0 when not tested)."""
        if self.across is None:
            return 0
        return int(np.nansum(np.triu(self.across.to_numpy(dtype=float) < self.alpha, 1)))

    @property
    def labels(self) -> dict[str, str]:
        """``{run: label}``: the run names as tables and the figure print them (:func:`run_labels`)."""
        return run_labels(self.runs.index)

    def label_key(self) -> list[str]:
        """The key of the run labels: empty when every label is its run's name; one line when the labels
        are the names without a shared prefix/suffix; else one ``label = run`` per shortened name."""
        labels = self.labels
        if all(lab == run for run, lab in labels.items()):
            return []
        pre, suf = _shared_affixes(list(labels))
        if all(run == pre + run[len(pre):len(run) - len(suf)] + suf
               and run[len(pre):len(run) - len(suf)].strip(_SEPARATORS) == lab for run, lab in labels.items()):
            parts = [f"prefix '{pre}'"] * bool(pre) + [f"suffix '{suf}'"] * bool(suf)
            return [f"run labels are the run names without the {' and '.join(parts)}"]
        return [f"{lab} = {run}" for run, lab in labels.items() if lab != run]

    def groups(self) -> pd.Series:
        """Significance group of every run (1, 2, ...; index: runs in rank order).

        Group 1 starts at the best run; it holds the runs ranked below it, in rank order, up to the first
        one it beats with confidence P(first > run) ≥ 0.95, which starts group 2, and so on. Runs of one
        group are not told apart from its first run at 0.95 (docs/report-example/README.md).
        """
        names = list(self.runs.index)
        C = self.confidence
        out, g, lead = [], 0, None
        for run in names:
            if lead is None or not C.loc[lead, run] < 0.95:
                g, lead = g + 1, run
            out.append(g)
        return pd.Series(out, index=pd.Index(names, name="run"), name="group")

    def _run_rows(self) -> list[tuple[str, ...]]:
        rows, labels, groups = [], self.labels, self.groups()
        for run, r in self.runs.iterrows():
            rows.append((labels[run], format_number(r["expected"]),
                         f"[{format_number(r['lower'])}, {format_number(r['upper'])}]",
                         f"{r['judged_at_k']:.2f}", f"{int(r['rank'])}", f"{int(groups[run])}",
                         format_number(r["unjudged_zero"]), format_share(r["model_share"]),
                         format_share(r["beyond_share"]),
                         format_share(r["depth_share"]) + (" *" if r["extrapolated"] else ""))
                        + ((f"{r['from_labels']:+.4f}",) if "from_labels" in self.runs.columns else ()))
        return rows

    def _headers(self) -> tuple[str, ...]:
        name = _mean_name(self.measure)
        return ("run", f"E[{name}]", f"{100 * self.level:g}% interval", f"judged@{self.judged_k}", "rank", "group",
                f"{name} (unjudged = 0)", "model share", "beyond judged runs", "beyond judged depth") \
            + (("from labels",) if "from_labels" in self.runs.columns else ())

    def to_markdown(self) -> str:
        """The per-run table, the key of the run labels and the full confidence matrix as GitHub markdown,
        with the legend."""
        h = self._headers()
        lines = ["| " + " | ".join(h) + " |", "|" + "|".join([":---"] + ["---:"] * (len(h) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in self._run_rows()]
        lines += ["", self._run_legend()]
        key = self.label_key()
        if len(key) == 1 and " = " not in key[0]:
            lines += ["", key[0][0].upper() + key[0][1:] + "."]
        elif key:
            lines += ["", "| label | run |", "|:---|:---|"] + ["| {} | {} |".format(*k.split(" = ", 1)) for k in key]
        labels = self.labels
        names = list(self.confidence.index)
        lines += ["", "| P(row > column) | " + " | ".join(labels[n] for n in names) + " |",
                  "|:---|" + "|".join(["---:"] * len(names)) + "|"]
        for a in names:
            cells = ["—" if a == b else self._cell(a, b, False) for b in names]
            lines.append(f"| {labels[a]} | " + " | ".join(cells) + " |")
        lines += ["", self._matrix_legend()]
        return "\n".join(lines) + "\n"

    def to_latex(self, max_matrix: int = MAX_MATRIX) -> str:
        """Two booktabs tables (per run; confidence matrix) for a paper (needs ``\\usepackage{booktabs}``).

        The matrix holds the best ``max_matrix`` runs by E (all of them when there are no more), so that it
        fits a page; its caption says so and points to the markdown's full matrix. With more than 20 runs
        the per-run table is set in ``\\small``.
        """
        h = self._headers()
        pct = f"{100 * self.level:g}\\%"
        n = len(self.runs)
        size = [r"\small"] if n > 20 else []
        lines = [r"\begin{table}[t]", r"\centering", *size, r"\begin{tabular}{l" + "r" * (len(h) - 1) + "}",
                 r"\toprule",
                 " & ".join(_tex(x).replace(f"{100 * self.level:g}%", pct) for x in h) + r" \\", r"\midrule"]
        lines += [" & ".join(_tex(c) for c in r) + r" \\" for r in self._run_rows()]
        key = self.label_key()
        keytext = (" Key: " + "; ".join(key) + ".") if key else ""
        lines += [r"\bottomrule", r"\end{tabular}",
                  rf"\caption{{{_tex(self._run_legend() + keytext)}}}", r"\end{table}", ""]
        labels = self.labels
        names = list(self.confidence.index)[:max_matrix]
        tight = [r"\small", r"\setlength{\tabcolsep}{3pt}"] if len(names) > 8 else []
        lines += [r"\begin{table}[t]", r"\centering", *tight, r"\begin{tabular}{l" + "r" * len(names) + "}",
                  r"\toprule",
                  " & ".join([""] + [_tex(labels[n]) for n in names]) + r" \\", r"\midrule"]
        for a in names:
            cells = [_tex(labels[a])] + ["--" if a == b else self._cell(a, b, True) for b in names]
            lines.append(" & ".join(cells) + r" \\")
        top = (f" The best {len(names)} of {n} runs by E; the full matrix is in the markdown report."
               if len(names) < n else "")
        lines += [r"\bottomrule", r"\end{tabular}",
                  rf"\caption{{P({_tex(_mean_name(self.measure))} of row $>$ column) on these topics; "
                  rf"$^\dagger\geq 0.95$, $^\ddagger\geq 0.99$.{_tex(self._across_note())}{_tex(top)}}}",
                  r"\end{table}"]
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """Plain aligned text (the per-run table), for a terminal or a log."""
        h = self._headers()
        rows = self._run_rows()
        w = [max(len(h[i]), *(len(r[i]) for r in rows)) for i in range(len(h))]
        fmt = lambda r: "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r))  # noqa: E731
        strong = int(np.nansum(self.confidence.to_numpy() >= 0.95))
        n = len(self.confidence)
        key = [f"  {k}" for k in self.label_key()]
        across = ("" if self.across is None else f"; {self.across_pairs()} differ over the population of topics "
                  f"(p < {self.alpha:g}: {self.across_caption})")
        return "\n".join([fmt(h), *map(fmt, rows), *(["key:", *key] if key else []),
                          f"{strong} of {n * (n - 1) // 2} pairs ordered with confidence ≥ 0.95 on these topics "
                          f"({self.groups().max()} groups){across}", self._run_legend()])

    def _across_note(self) -> str:
        if self.across is None:
            return ""
        return f" {ACROSS_MARK}: differ over the population of topics, p < {self.alpha:g} ({self.across_caption})."

    # figure ------------------------------------------------------------------------------------------
    def plot(self, *, figsize=None, max_matrix: int = MAX_MATRIX):
        """A figure with E[MAP] and its interval per run (left; every run, by its label) and the confidence
        heatmap of the best ``max_matrix`` runs (right), sized to fit a page (at most 9 in high for 32 runs); the
        key of shortened run labels under both, where there is one."""
        import matplotlib.pyplot as plt

        n = len(self.runs)
        m = min(n, max_matrix)
        labels = self.labels
        key = self.label_key()
        per = 0.32 if n <= max_matrix else 0.24
        height = min(0.9 + per * n, 9.5)
        key_cols = 3 if len(key) > 6 else 1
        key_rows = -(-len(key) // key_cols)
        key_h = 0.15 * key_rows + 0.2 if key else 0.0
        fig = plt.figure(figsize=figsize or (min(4 + 0.55 * m, 10.5), min(max(height, 2.5) + key_h, 9.5)),
                         layout="constrained")
        grid = fig.add_gridspec(2 if key else 1, 2, width_ratios=[1, 1.3],
                                height_ratios=[max(height, 2.5), key_h] if key else None)
        ax1, ax2 = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        y = np.arange(n)[::-1]
        r = self.runs
        ax1.errorbar(r["expected"], y, xerr=[r["expected"] - r["lower"], r["upper"] - r["expected"]], fmt="o",
                     color="C0", capsize=2, ms=4)
        ax1.set_yticks(y, [labels[x] for x in r.index], fontsize=8 if n <= max_matrix else 7)
        ax1.set_xlabel(f"E[{_mean_name(self.measure)}], {100 * self.level:g}% interval")
        ax1.grid(axis="x", color="0.9")
        names = list(self.confidence.index)[:m]
        C = self.confidence.loc[names, names].to_numpy(dtype=float)
        A = None if self.across is None else self.across.loc[names, names].to_numpy(dtype=float)
        im = ax2.imshow(C, vmin=0.0, vmax=1.0, cmap="RdBu")
        ticks = [labels[x] for x in names]
        ax2.set_xticks(range(m), ticks, rotation=90, fontsize=8)
        ax2.set_yticks(range(m), ticks, fontsize=8)
        for i in range(m):
            for j in range(m):
                mark = _marker(C[i, j], False) + (ACROSS_MARK if A is not None and A[i, j] < self.alpha else "")
                if i != j and mark:
                    ax2.text(j, i, mark, ha="center", va="center", fontsize=7, color="white" if abs(C[i, j] - 0.5)
                             > 0.3 else "black")
        fig.colorbar(im, ax=ax2, label="P(row > column)", fraction=0.046, pad=0.04)
        top = f"best {m} of {n} runs; " if m < n else ""
        across = f", {ACROSS_MARK} differ across topics" if self.across is not None else ""
        ax2.set_title(f"{top}† ≥ 0.95, ‡ ≥ 0.99{across}", fontsize=8)
        if key:
            ax3 = fig.add_subplot(grid[1, :])
            ax3.axis("off")
            cols = [key[k * key_rows:(k + 1) * key_rows] for k in range(key_cols)]
            for c, lines in enumerate(cols):
                ax3.text(c / key_cols, 1.0, "\n".join(lines), ha="left", va="top", fontsize=6,
                         transform=ax3.transAxes)
        return fig

    def save(self, directory: str | os.PathLike, *, stem: str = "report", formats=("png", "pdf")) -> dict[str, Path]:
        """Write ``<stem>.tex``, ``<stem>.md`` and the figure ``<stem>.<fmt>`` into ``directory``; return the paths."""
        import matplotlib.pyplot as plt

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        out = {"tex": d / f"{stem}.tex", "md": d / f"{stem}.md"}
        out["tex"].write_text(self.to_latex(), encoding="utf-8")
        out["md"].write_text(self.to_markdown(), encoding="utf-8")
        fig = self.plot()
        for fmt in formats:
            out[fmt] = d / f"{stem}.{fmt}"
            fig.savefig(out[fmt], dpi=150, metadata={"CreationDate": None} if fmt == "pdf" else None)
        plt.close(fig)
        return out

    def __repr__(self) -> str:
        return f"Report(measure={self.measure!r}, runs={len(self.runs)}, topics={self.topics}, level={self.level})"


def _judged_at(data, k: int) -> np.ndarray:
    """Per run, the mean over topics of the fraction of its top k holding a judged document."""

    out = np.zeros(len(data.systems))
    for tr in data:
        jr = np.append(tr.judged, False)[tr.ranked]  # (S, D); padding (-1) → False
        out += judged_at(jr, k) if jr.shape[1] else 0.0
    return out / max(len(data), 1)


def make_report(data, probabilities=None, *, measure: str = "AP", level: float = 0.95, judged_k: int = 10,
                method: str | None = None, default_p: float = 0.5, mc_draws: int = 2000, seed=0,
                test: str | None = "t", test_values: str = "judged", adjust: str = "holm",
                alpha: float = 0.05, without_labels=None) -> Report:
    """Evaluate every run of ``data`` under uncertain relevance and build a :class:`Report`.

    Parameters
    ----------
    data : RankData
    probabilities : None, RelevanceProbabilities, RelevanceEstimate or arrays
        As in :func:`~bayeval.expected.expected_measures`; an estimate with posterior draws is used by
        Monte Carlo over them (parameter uncertainty included).
    measure : str
        Per-topic measure (``"AP"`` → E[MAP]).
    level : float
        Interval level, in (0, 1).
    judged_k : int
        The k of judged@k.
    method : {"exact", "delta", "paper", "mc"}, optional
        Moments; default ``"mc"`` for an estimate with draws, else ``"exact"``.
    default_p : float
        p of unjudged documents absent from ``probabilities``.
    mc_draws : int
        Monte Carlo draws (``method="mc"``).
    seed : int
    test : str or None
        The test across topics that marks pairs (:data:`ACROSS_MARK`): ``"t"`` (default), ``"wilcoxon"``,
        ``"randomization"``, ``"bootstrap"``, ``"combined"`` (topics and relevance in one probability)
        (:func:`bayeval.expected.topic_tests`); ``None``: no test.
    test_values : {"judged", "expected"}
        What it compares per topic: the measure with unjudged documents not relevant (default, as trec_eval), or
        E[measure]; on shallow judgments both reject too many true nulls, ``"expected"`` more (the choice and its
        figures: docs/expected.md, "Across topics").
    adjust : {"none", "bonferroni", "holm", "bh"}
        Its adjustment over all pairs (default Holm).
    alpha : float
        Level at which a pair is marked.
    without_labels : optional
        The same probabilities without the automatic assessors' labels (the model's estimate before
        :func:`bayeval.relevance.with_assessors`): adds the column ``from_labels``, E[measure] minus E[measure] under
        these (:func:`bayeval.expected.extrapolation.expected_shift`, at the point p), how much of each run's E rests
        on the labels.

    Returns
    -------
    Report

    Examples
    --------
    >>> from bayeval.data import RankData
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=1)
    >>> rep = make_report(RankData.build(col.runs, col.judgments), default_p=0.1)
    >>> list(rep.runs.columns[:6]), rep.runs["rank"].tolist()
    (['expected', 'sd', 'lower', 'upper', 'judged_at_k', 'rank'], [1, 2, 3])
    >>> list(rep.runs.columns[6:])
    ['unjudged_zero', 'model_share', 'beyond_share', 'depth_share', 'extrapolated']
    """

    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if not 0.0 < float(level) < 1.0:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    if not isinstance(judged_k, int | np.integer) or judged_k < 1:
        raise BayevalInputError(f"judged_k: must be a positive integer, got {judged_k!r}")
    if len(data.systems) < 2:
        raise BayevalInputError(f"data: a report compares runs; got {len(data.systems)} run")
    if not 0.0 < float(alpha) < 1.0:
        raise BayevalInputError(f"alpha: must lie in (0, 1), got {alpha!r}")
    has_draws = bool(getattr(probabilities, "has_draws", False))
    method = method or ("mc" if has_draws else "exact")
    mc = {"draws": mc_draws, "seed": seed} if method == "mc" else {}
    ev = expected_measures(data, probabilities, default_p=default_p, measures=[measure], method=method,
                           progress=False, **mc)
    cmp = compare_systems(data, probabilities, default_p=default_p, measure=measure, method=method, progress=False,
                          **mc)
    e = ev.all_expected[0]
    sd = np.sqrt(np.maximum(ev.all_variance[0], 0.0))
    lo, hi = ev.confidence_interval(level)
    order = np.argsort(-e, kind="stable")
    names = np.asarray(data.systems, dtype=object)
    rank = np.empty(len(e), dtype=np.int64)
    rank[order] = np.arange(1, len(e) + 1)
    # the trec_eval question (unjudged = not relevant) and what rests on the model / beyond the judged runs
    ex = extrapolation(data, probabilities, measure=measure, default_p=default_p, depth=judged_k)
    runs = pd.DataFrame({"expected": e, "sd": sd, "lower": lo[0], "upper": hi[0],
                         "judged_at_k": _judged_at(data, judged_k), "rank": rank, "unjudged_zero": ex.unjudged_zero,
                         "model_share": ex.model_share, "beyond_share": ex.beyond_share,
                         "depth_share": ex.depth_share, "extrapolated": mostly_extrapolated(ex)},
                        index=pd.Index(names, name="run"))
    if without_labels is not None:
        runs["from_labels"] = expected_shift(data, probabilities, without_labels, measure=measure,
                                             default_p=default_p)
    runs = runs.iloc[order]
    S = len(names)
    C = np.full((S, S), np.nan)
    C[cmp.index_a, cmp.index_b] = 1.0 - cmp.all_p_less
    C[cmp.index_b, cmp.index_a] = cmp.all_p_less
    conf = pd.DataFrame(C[np.ix_(order, order)], index=names[order], columns=names[order])
    across, caption = None, ""
    if test is not None:
        if test_values not in ("judged", "expected"):
            raise BayevalInputError(f"test_values: must be judged or expected, got {test_values!r}")
        known = evaluate(data, [measure]).values[0] if test_values == "judged" else None
        tt = cmp.topic_tests(test, values=known, values_name="the values with unjudged documents not relevant",
                             adjust=adjust, seed=seed)
        A = np.full((S, S), np.nan)
        A[tt.index_a, tt.index_b] = A[tt.index_b, tt.index_a] = tt.p_adjusted
        across, caption = pd.DataFrame(A[np.ix_(order, order)], index=names[order], columns=names[order]), \
            tt.describe()

    src = describe_source(getattr(probabilities, "model", None), getattr(probabilities, "method", None), method,
                          default_p=default_p if probabilities is None else None,
                          draws=ev.draws if method == "mc" else None)
    held_out = getattr(probabilities, "held_out", None)  # the reuse prior's levels (bayeval.relevance.reuse_prior)
    if held_out is not None and held_out.describe():
        src = f"{src}; {held_out.describe()}"
    return Report(measure, float(level), int(judged_k), runs, conf, src, len(data), across, caption, float(alpha))
