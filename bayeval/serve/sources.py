"""What the judging page shows besides the campaign: document texts and topic statements.

Read by :mod:`bayeval.io.sources` (all file reading is in ``bayeval.io``); re-exported here.
"""

from bayeval.io.sources import cranfield_dir, load_texts, load_topics

__all__ = ["cranfield_dir", "load_texts", "load_topics"]
