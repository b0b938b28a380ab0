"""bayeval: evaluation of search systems with incomplete relevance judgments.

Nothing heavy is imported here (PyMC in particular is imported only by the relevance
models that need it).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
