"""Names and numbers for people: what a configuration, fit, moment method or study method is called in a caption,
a figure label or a table title. The one place that turns the package's identifiers (``rtc-default``,
``map+laplace+laplace``, ``bayes``, ``hier+unseen``) into words; identifiers stay as they are in files,
options and csv/json columns.

- :func:`display_name` — a relevance-model configuration or a study method;
- :func:`describe_fit` — a fit label, one method for every stage or one per stage (``rank+calibration+
  aggregation`` for the RTC chain);
- :func:`describe_moments` — how expected measures were computed;
- :func:`format_number`, :func:`number_format` — a number, or a column of them, with at most
  :data:`SIGNIFICANT` significant digits (counts whole); :func:`format_probability` — a probability, tiny ones
  (and exact 0 and 1, which a computed probability never quite is) as ``< 1e-6`` / ``> 1 - 1e-6``;
  :func:`format_pvalue`; :func:`format_share` — a share as a whole percentage, never ``-0%``;
- :data:`LEGENDS` — what the columns several commands print mean, one line each.

Every table, report and caption formats its numbers here, so that they read the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

__all__ = ["FIT_NAMES", "LEGENDS", "MOMENT_NAMES", "NAMES", "SIGNIFICANT", "TINY_P", "describe_fit",
           "describe_moments", "describe_source", "display_name", "format_number", "format_probability",
           "format_pvalue", "format_share", "number_format"]

#: Relevance-model configurations (models/*.toml) and the methods of the simulation studies.
NAMES = {
    "rtc-default": "RTC model",
    "rtc-mtc": "RTC model (mtc-eval priors)",
    "rtc-weak": "RTC model (weak priors)",
    "rtc-intercept": "RTC model with intercept",
    "hier-default": "hierarchical model",
    "hier-t": "hierarchical model, Student-t run effects",
    "hier-level-shift": "hierarchical model with held-out run levels and shifts",
    "hier-depth": "hierarchical model with held-out run levels and shifts, p beyond the judged depth from its band",
    "hier-reuse": "hierarchical model with the reuse prior",
    "hier-reuse-depth": "hierarchical model with the reuse prior, p beyond the judged depth from its band",
    "hier": "hierarchical model",
    "similarity-default": "similarity model",
    "smoothed": "plus-one smoothing model",
    "uniform": "uniform model (p = 0.5)",
    # study methods (docs/robustness-trec8.md, docs/similarity-trec8.md, docs/calibration.md)
    "mtc": "MTC",
    "rtc": "RTC",
    "bayes": "Bayesian RTC",
    "bayes0": "Bayesian RTC",
    "ip": "incremental pooling",
    "sim": "MTC + similarity",
    "one": "MTC + one",
    "unseen": "unseen relevant documents",
}

#: Fit methods of a relevance model.
FIT_NAMES = {"map": "posterior mode", "laplace": "Laplace", "mcmc": "NUTS", "vi": "ADVI"}

#: Moment methods of the expected measures.
MOMENT_NAMES = {"exact": "exact moments", "delta": "delta method", "paper": "the papers' closed form",
                "mc": "Monte Carlo"}

_STAGES = ("rank", "calibration", "aggregation")  # the RTC chain's stages, in the order of a fit label


def display_name(name: str) -> str:
    """The human name of a configuration or study method.

    Known names come from :data:`NAMES`; ``a+b`` reads "A with B"; ``bayes-reX`` / ``bayes0-sdX`` (a run
    effect of sd X/10 or X) and ``-csX`` (coverage scale X) are spelled out; anything else is returned as is.

    >>> display_name("rtc-default"), display_name("hier+unseen"), display_name("bayes-re3")
    ('RTC model', 'hierarchical model with unseen relevant documents', 'Bayesian RTC, run effect sd 0.3')
    """
    name = str(name)
    if name in NAMES:
        return NAMES[name]
    if "+" in name:
        head, *rest = name.split("+")
        return display_name(head) + "".join(f" with {display_name(r)}" for r in rest)
    for prefix, what in (("bayes-re", "run effect sd"), ("bayes0-sd", "run effect sd")):
        if name.startswith(prefix) and name[len(prefix):]:
            x = name[len(prefix):]
            value = f"0.{x}" if prefix == "bayes-re" and x.isdigit() else x
            return f"{NAMES['bayes']}, {what} {value}"
    if "-cs" in name:
        head, _, x = name.partition("-cs")
        return f"{display_name(head)}, coverage scale {x}"
    return name


def describe_fit(label: str) -> str:
    """A fit label in words: ``"laplace"`` → "Laplace"; ``"map+laplace+laplace"`` (per RTC stage) →
    "rank at the posterior mode, calibration and aggregation Laplace".

    >>> describe_fit("map+laplace+laplace")
    'rank at the posterior mode, calibration and aggregation Laplace'
    """
    parts = str(label).split("+")
    if len(parts) == 1:
        return FIT_NAMES.get(parts[0], parts[0])
    stages = _STAGES if len(parts) == len(_STAGES) else tuple(f"stage {k + 1}" for k in range(len(parts)))
    groups: dict[str, list[str]] = {}
    for stage, fit in zip(stages, parts, strict=True):
        groups.setdefault(fit, []).append(stage)
    out = []
    for fit, names in groups.items():
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        how = FIT_NAMES.get(fit, fit)
        out.append(f"{who} at the {how}" if fit == "map" else f"{who} {how}")
    return ", ".join(out)


def describe_moments(method: str) -> str:
    """``"mc"`` → "Monte Carlo", ``"exact"`` → "exact moments", ...; unknown names as they are."""
    return MOMENT_NAMES.get(str(method), str(method))


def describe_source(model: str | None, fit: str | None, method: str, *, default_p: float | None = None,
                    draws: int | None = None) -> str:
    """Where p came from and how the moments were computed, for a caption.

    >>> describe_source("rtc-default", "map+laplace+laplace", "mc", draws=2000)
    'p from the RTC model (rank at the posterior mode, calibration and aggregation Laplace); Monte Carlo, 2000 draws'
    """
    if model:
        src = f"p from the {display_name(model)}" + (f" ({describe_fit(fit)})" if fit else "")
    elif default_p is not None:
        src = f"p = {default_p:g}"
    else:
        src = "given p"
    return src + f"; {describe_moments(method)}" + (f", {draws} draws" if draws else "")


# numbers ----------------------------------------------------------------------------------------------------------

SIGNIFICANT = 4  #: significant digits of a number printed for people (csv and json keep them all)
TINY_P = 1e-6  #: a probability below this (or above 1 minus it) is printed as a bound: nobody needs its digits
_TINY_TEXT = "1e-6"
_SMALL = 1e-3  # a column whose non-zero values all lie below this gets the decimals of 3 significant digits


def format_probability(v: float, digits: int = SIGNIFICANT) -> str:
    """A probability with ``digits`` decimals; at or below :data:`TINY_P` ``"< 1e-6"`` and at or above
    1 - :data:`TINY_P` ``"> 1 - 1e-6"`` (exact 0 and 1 included: a probability computed from a model or draws is
    never exactly certain, and a printed ``0.0000`` reads as if it were); between 1e-6 and 10^-digits one
    significant digit.

    >>> format_probability(0.25), format_probability(3.2e-5), format_probability(0.0), format_probability(1.0)
    ('0.2500', '3e-05', '< 1e-6', '> 1 - 1e-6')
    """
    if v is None or not math.isfinite(v):
        return "NA"
    if v <= TINY_P:
        return f"< {_TINY_TEXT}"
    if v >= 1.0 - TINY_P:
        return f"> 1 - {_TINY_TEXT}"
    if v < 10.0 ** -digits:
        return f"{v:.0e}"
    return f"{v:.{digits}f}"


def format_pvalue(v: float, digits: int = SIGNIFICANT) -> str:
    """A p-value: as :func:`format_probability` below, but 1 (an adjusted p-value's ceiling) is printed as it is.

    >>> format_pvalue(1.0), format_pvalue(0.0), format_pvalue(0.0312)
    ('1.0000', '< 1e-6', '0.0312')
    """
    if v is not None and math.isfinite(v) and v >= 1.0 - TINY_P:
        return f"{min(v, 1.0):.{digits}f}"
    return format_probability(v, digits)


def format_share(v: float) -> str:
    """A share as a whole percentage; a share that rounds to 0 is ``0%`` whatever its sign.

    >>> format_share(0.4567), format_share(-0.0004), format_share(float("nan"))
    ('46%', '0%', 'NA')
    """
    if v is None or not math.isfinite(v):
        return "NA"
    pct = round(100.0 * v)
    return f"{0 if pct == 0 else pct:d}%"


def _decimals(top: float, digits: int) -> int:
    """Decimals that give a number of magnitude ``top`` at most ``digits`` significant digits."""
    return max(digits - (math.floor(math.log10(top)) + 1), 0)


def format_number(v: float, digits: int = SIGNIFICANT) -> str:
    """One number with at most ``digits`` significant digits (fixed notation up to 10^digits).

    >>> format_number(3226.381), format_number(12.3456), format_number(0.18842), format_number(123456.7)
    ('3226', '12.35', '0.1884', '1.235e+05')
    """
    return number_format([v], digits)(v)


def number_format(values: Iterable[float], digits: int = SIGNIFICANT, *, scientific: bool = False
                  ) -> Callable[[float], str]:
    """One formatter for a column of numbers, each printed with at most ``digits`` significant digits.

    Counts (whole numbers above 1) stay whole; a column whose non-zero values all lie below 1e-3 gets the
    decimals of 3 significant digits of its largest (``scientific``, e.g. variances, or below 1e-6: ``1.234e-05``);
    otherwise the decimals that leave the largest value ``digits`` significant digits (``0.1884``, ``12.35``,
    ``3226``), and a non-whole column beyond 10^digits is scientific. NaN and infinities read ``NA``.
    """
    finite = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    nonzero = [abs(x) for x in finite if x != 0]

    def na(fmt):
        return lambda v: "NA" if v is None or not math.isfinite(float(v)) else fmt(float(v))

    top = max(nonzero, default=0.0)
    if finite and all(x == round(x) for x in finite) and top > 1 and top < 1e15:
        return na(lambda v: f"{int(round(v)):d}")
    if nonzero and top < _SMALL:
        if scientific or top < TINY_P:
            return na(lambda v: f"{v:.{digits - 1}e}")
        places = min(_decimals(top, 3), 8)
        return na(lambda v: f"{v:.{places}f}")
    if top >= 10.0 ** digits:
        return na(lambda v: f"{v:.{digits}g}" if abs(v) < 10.0 ** digits else f"{v:.{digits - 1}e}")
    places = digits if top <= 1 else _decimals(top, digits)  # measures in [0, 1]: 0.1884 and 1.0000 alike
    return na(lambda v: f"{v:.{places}f}")


#: Legend of columns that several sub-commands print (table output only): one line each.
LEGENDS = {
    "run": "the run (its tag, or its file's name where tags repeat)",
    "run_a": "the first run of the pair",
    "run_b": "the second run of the pair",
    "topic": "the topic; all: the mean over topics",
    "measure": "the per-topic measure (AP: its mean over topics is MAP)",
    "expected": "expected value of the measure, unjudged documents relevant at random",
    "variance": "variance of the measure under that randomness",
    "sd": "standard deviation (of the measure under the randomness of relevance; of a parameter's posterior)",
    "lower": "lower end of the interval of the measure",
    "upper": "upper end of the interval of the measure",
    "delta_expected": "E[measure_a - measure_b]",
    "delta_variance": "Var[measure_a - measure_b]",
    "delta_lower": "lower end of the interval of measure_a - measure_b, these topics (relevance uncertain)",
    "delta_upper": "upper end of that interval",
    "p_less": "P(measure_a - measure_b < 0) on these topics: confidence that run b is better",
    "p_less_plugin": "P(a - b < 0) at the point probabilities (Bernoulli uncertainty only)",
    "p_less_bayes": "P(a - b < 0) over posterior draws of p (parameter uncertainty too)",
    "p_less_topics": "P(mean of a - b over the population of topics < 0): topics sampled and relevance uncertain",
    "topic_lower": "lower end of the interval of the mean of a - b over the population of topics",
    "topic_upper": "upper end of that interval",
    "p_value": "two-sided p-value of the test across topics",
    "sd_plugin": "sd of a - b, plug-in",
    "sd_bayes": "sd of a - b, Bayesian",
    "unjudged_zero": "the measure with unjudged documents counted as not relevant (what trec_eval reports)",
    "model_share": "share of E resting on the model's p of unjudged documents rather than on judgments",
    "beyond_share": "share of E resting on documents that no run with a judged top k retrieved",
    "prob": "probability of relevance of an unjudged document",
    "docno": "the document",
    "score": "how much judging the document is worth to the target pairs (the selector's weight)",
    "docs": "documents of the topic the runs retrieve or the qrels judge",
    "unjudged": "of those, unjudged",
    "mean_p": "mean probability of relevance of the unjudged documents",
    "expected_rel": "expected relevant documents among the unjudged (the sum of their p)",
    # a relevance model's posterior summary (ArviZ's az.summary)
    "param": "the model's parameter",
    "mean": "its posterior mean (the mode for a MAP fit)",
    "hdi_3%": "lower end of the 94% highest-density interval",
    "hdi_97%": "upper end of that interval",
    "mcse_mean": "Monte Carlo standard error of the mean",
    "mcse_sd": "Monte Carlo standard error of the sd",
    "ess_tail": "tail effective sample size",
    "judged_at_k": "fraction of the top k holding a judged document",
    "r_hat": "rank-normalised split r-hat (NUTS only; < 1.01 is good)",
    "ess_bulk": "bulk effective sample size",
    # simulation studies (docs/robustness-trec8.md, docs/similarity-trec8.md)
    "accuracy": "share of pairs whose call (sign of ΔMAP) is right",
    "W_mean": "bookmaker W̄: 0 calibrated, < 0 over-confident, > 0 under-confident",
    "median_judgments": "median judgments per trial to reach the target confidence",
    "mean_judgments": "mean judgments per trial",
    "mean_tau": "mean Kendall τ between the runs' E[MAP] and their true MAP",
    "decided": "share of trials whose selection reached the target confidence",
    "goal_bins": "yes: every confidence bin's accuracy is at least its lower edge",
    "calls_95": "share of pairs called with confidence ≥ 0.95",
    "accuracy_95": "accuracy of the calls made with confidence ≥ 0.95 (NA: none)",
    "seconds": "mean seconds per trial",
}
