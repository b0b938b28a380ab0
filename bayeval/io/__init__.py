"""Reading and writing TREC runs, qrels, Million Query prels and probability files."""

from bayeval.io.probabilities import read_probabilities, write_probabilities
from bayeval.io.qrels import read_prels, read_qrels, write_qrels
from bayeval.io.runs import read_run, read_runs, write_run

__all__ = [
    "read_prels",
    "read_probabilities",
    "read_qrels",
    "read_run",
    "read_runs",
    "write_probabilities",
    "write_qrels",
    "write_run",
]
