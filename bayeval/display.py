"""Names for people: what a configuration, fit, moment method or study method is called in a caption,
a figure label or a table title. The one place that turns the package's identifiers (``rtc-default``,
``map+laplace+laplace``, ``bayes``, ``hier+unseen``) into words; identifiers stay as they are in files,
options and csv/json columns.

- :func:`display_name` — a relevance-model configuration or a study method;
- :func:`describe_fit` — a fit label, one method for every stage or one per stage (``rank+calibration+
  aggregation`` for the RTC chain);
- :func:`describe_moments` — how expected measures were computed.
"""

from __future__ import annotations

__all__ = ["FIT_NAMES", "MOMENT_NAMES", "NAMES", "describe_fit", "describe_moments", "describe_source",
           "display_name"]

#: Relevance-model configurations (models/*.toml) and the methods of the simulation studies.
NAMES = {
    "rtc-default": "RTC model",
    "rtc-mtc": "RTC model (mtc-eval priors)",
    "rtc-weak": "RTC model (weak priors)",
    "rtc-intercept": "RTC model with intercept",
    "hier-default": "hierarchical model",
    "hier-t": "hierarchical model, Student-t run effects",
    "hier-level-shift": "hierarchical model with held-out run levels and shifts",
    "hier-reuse": "hierarchical model with the reuse prior",
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
