"""Shared fixtures. ``shared_data`` locates ../shared/data beside the repository, or skips."""

from __future__ import annotations

from pathlib import Path

import pytest

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # <repo>/../shared/data


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ``../shared/data`` (TREC-8, Robust 2003, Cranfield); skips the test when absent."""
    if not (_SHARED_DATA / "trec8").is_dir():
        pytest.skip(f"real data not found at {_SHARED_DATA}")
    return _SHARED_DATA
