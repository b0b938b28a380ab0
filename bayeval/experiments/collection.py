"""A test collection on disk for simulation studies: run files, complete qrels, optional run metadata.

Read by :mod:`bayeval.io.collection` (all file reading is in ``bayeval.io``); re-exported here.
"""

from bayeval.io.collection import TestCollection, load_collection

__all__ = ["TestCollection", "load_collection"]
