"""Reports of many runs: readable labels with a key, significance groups, a LaTeX matrix and a figure that fit a
page, the full matrix in markdown; captions in words, not identifiers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayeval.data import RankData
from bayeval.data.run import RunSet
from bayeval.display import describe_fit, describe_source, display_name
from bayeval.reporting import MAX_MATRIX, make_report, run_labels
from bayeval.synthetic import make_collection

LONG = "baselines__IRTask1_{}_bm25_variant"


@pytest.fixture(scope="module")
def rep32():
    col = make_collection(n_topics=8, n_systems=32, n_docs=120, depth=30, judged_depth=10, seed=3)
    runs = RunSet(tuple(dataclasses.replace(r, name=LONG.format(r.name)) for r in col.runs))
    return make_report(RankData.build(runs, col.judgments), default_p=0.2)


def test_run_labels_are_short_unique_and_keep_short_names():
    assert run_labels(["a", "bb"]) == {"a": "a", "bb": "bb"}
    names = [LONG.format(f"sys{k:02d}") for k in range(32)]
    labels = run_labels(names)
    assert [labels[n] for n in names] == [f"sys{k:02d}" for k in range(32)]  # no word split ("sys" kept)
    clash = ["a-very-long-run-name-number-1x", "a-very-long-run-name-number-1y", "short"]
    lab = run_labels(clash)
    assert len(set(lab.values())) == 3 and all(len(v) <= 14 for v in lab.values())
    same_start = ["averyveryverylongrunname_A_xx", "averyveryverylongrunname_B_xx"]
    lab = run_labels(same_start)
    assert len(set(lab.values())) == 2 and all(len(v) <= 14 for v in lab.values())


def test_groups_follow_the_rule(rep32):
    g = rep32.groups()
    names = list(rep32.runs.index)
    assert list(g.index) == names and g.iloc[0] == 1 and np.all(np.diff(g.to_numpy()) >= 0)
    C = rep32.confidence
    for k in range(1, g.max() + 1):
        members = list(g[g == k].index)
        lead = members[0]
        assert all(C.loc[lead, r] < 0.95 for r in members[1:])
        nxt = names.index(members[-1]) + 1
        if nxt < len(names):
            assert C.loc[lead, names[nxt]] >= 0.95  # the next run is beaten by this group's first


def test_latex_matrix_holds_the_top_k_and_markdown_the_full_matrix(rep32):
    tex, md = rep32.to_latex(), rep32.to_markdown()
    matrix = tex.split(r"\end{table}")[1]
    header = next(ln for ln in matrix.splitlines() if ln.startswith(" & "))
    assert header.count("&") == MAX_MATRIX
    assert f"best {MAX_MATRIX} of 32 runs" in matrix and "full matrix is in the markdown" in matrix
    assert "baselines" not in header and "sys" in header
    assert "without the prefix 'baselines\\_\\_IRTask1\\_'" in tex  # the key, once, in the caption
    md_header = next(ln for ln in md.splitlines() if ln.startswith("| P(row > column)"))
    assert md_header.count("|") == 32 + 2
    assert "| group |" in md or "| group" in md.splitlines()[0]


def test_figure_fits_a_page_and_uses_the_labels(rep32):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = rep32.plot()
    w, h = fig.get_size_inches()
    assert w <= 10.5 and h <= 9.5
    ax1, ax2 = fig.axes[:2]
    left = [t.get_text() for t in ax1.get_yticklabels()]
    assert len(left) == 32 and all(len(t) <= 14 for t in left)
    assert len(ax2.get_xticklabels()) == MAX_MATRIX
    plt.close(fig)


def test_summary_prints_the_matrix_legend_only_with_the_matrix(rep32):
    text = rep32.summary()
    assert "P(row > column)" not in text and "groups)" in text
    assert "P(row > column)" in rep32.to_markdown()


def test_captions_say_models_in_words():
    assert display_name("rtc-default") == "RTC model"
    assert display_name("hier+unseen") == "hierarchical model with unseen relevant documents"
    assert display_name("bayes-re3") == "Bayesian RTC, run effect sd 0.3"
    assert describe_fit("map+laplace+laplace") == "rank at the posterior mode, calibration and aggregation Laplace"
    text = describe_source("rtc-default", "map+laplace+laplace", "mc", draws=2000)
    assert "rtc-default" not in text and "map+laplace" not in text and "Monte Carlo, 2000 draws" in text


def test_study_panels_are_titled_in_words_with_one_y_label():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from bayeval.experiments.plots import plot_expected_vs_true

    rng = np.random.default_rng(0)
    rows = [dict(method=m, confidence="E[MAP]", trial=t, run_a="a", run_b="b", e_map_a=rng.random(),
                 e_map_b=rng.random(), true_map_a=rng.random(), true_map_b=rng.random())
            for m in ("sim", "one", "mtc", "rtc", "ip") for t in range(3)]
    fig = plot_expected_vs_true(pd.DataFrame(rows), [(m, "E[MAP]") for m in ("sim", "one", "mtc", "rtc", "ip")])
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "MTC + similarity · E[MAP]" and titles[-1] == "incremental pooling · E[MAP]"
    assert [ax.get_ylabel() for ax in fig.axes] == ["E[MAP]", "", "", "", ""]
    plt.close(fig)


@pytest.mark.parametrize("names", ["long", "dl20"])
def test_figure_keeps_every_text_inside_and_carries_the_label_key(names):
    """Nothing of the figure is cut (the colorbar's label, tick labels, the key), and where labels are not the run
    names the key is in the figure too, not only at the end of the text. DL 2020's names: 15 characters, two
    differing only at their end (bl_bcai_mdl1_vs, _vt) -- labelled apart, not renamed R1...R59."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if names == "long":
        col = make_collection(n_topics=6, n_systems=20, n_docs=100, depth=30, judged_depth=10, seed=4)
        runs = RunSet(tuple(dataclasses.replace(r, name=LONG.format(r.name)) for r in col.runs))
    else:
        tags = ["bl_bcai_mdl1_vs", "bl_bcai_mdl1_vt", "bm25_bert_token", "CoRT-standalone", "p_bm25", "1", "2",
                "TF_IDF_d_2_t_50", "bigIR-T5xp-T5-F", "rr-pass-roberta", "fr_pass_roberta", "pash_f1"]
        col = make_collection(n_topics=6, n_systems=len(tags), n_docs=100, depth=30, judged_depth=10, seed=4)
        runs = RunSet(tuple(dataclasses.replace(r, name=t) for r, t in zip(col.runs, tags, strict=True)))
    rep = make_report(RankData.build(runs, col.judgments), default_p=0.2)
    labels = rep.labels
    assert not any(lab.startswith("R") and lab[1:].isdigit() for lab in labels.values())
    assert len(set(labels.values())) == len(labels)
    fig = rep.plot()
    fig.canvas.draw()
    box = fig.bbox
    texts = [t for ax in fig.axes for t in (*ax.texts, *((ax.xaxis.label, ax.yaxis.label, *ax.get_yticklabels(),
                                                           *ax.get_xticklabels()) if ax.axison else ()))
             if t.get_text()]
    for t in texts:
        ext = t.get_window_extent()
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, \
            t.get_text()
    colorbar = [ax.yaxis.label.get_text() for ax in fig.axes]
    assert "P(row > column)" in colorbar
    figure_text = "\n".join(t.get_text() for ax in fig.axes for t in ax.texts)
    for line in rep.label_key():
        assert line in figure_text
    plt.close(fig)
