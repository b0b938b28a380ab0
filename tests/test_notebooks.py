"""The example notebooks re-execute on small settings (12 TREC-8 topics, 5 runs, few draws; 04: 10 synthetic topics).

They are stored with their outputs (full settings) so they read on a repository page; here each one is
run again with ``BAYEVAL_NOTEBOOK_SMALL=1`` and must finish without an error. Together they take
about a minute on two cores; marked ``notebooks`` so ``-m 'not notebooks'`` leaves them out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
#: notebooks that read ../shared/data (the others run on a synthetic collection, reading the data only where present)
NEEDS_DATA = {"01-posterior-diagnostics", "02-comparing-priors", "03-reporting-uncertainty"}


def test_four_notebooks_are_stored_with_outputs():
    assert [p.name for p in NOTEBOOKS] == ["01-posterior-diagnostics.ipynb", "02-comparing-priors.ipynb",
                                           "03-reporting-uncertainty.ipynb", "04-automatic-assessors.ipynb"]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(c.get("outputs") for c in code), path.name
        assert not any(o.get("output_type") == "error" for c in code for o in c["outputs"]), path.name


@pytest.mark.notebooks
@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.data) if p.stem in NEEDS_DATA else p
                                  for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_notebook_executes_on_small_settings(path, request, monkeypatch):
    monkeypatch.setenv("BAYEVAL_NOTEBOOK_SMALL", "1")
    if path.stem in NEEDS_DATA:
        monkeypatch.setenv("BAYEVAL_DATA", str(request.getfixturevalue("shared_data")))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(EXAMPLES.parent),
                                                                   os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c["outputs"]]
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in outputs)
