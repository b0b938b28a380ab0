"""The one rule for numbers in every file bayeval reads (docs/data.md, "Numbers").

An **integer** is ASCII digits with an optional sign: ``[+-]?[0-9]+``. A **number** is a decimal literal — ASCII
digits with an optional sign, decimal point and exponent (``-1.5e3``, ``.5``, ``2.``) — or ``inf``, ``infinity``
or ``nan`` in any case, with an optional sign. Nothing else: no digit separators (``1_0``, which Python's
``int`` and ``float`` read as 10), no other scripts' digits (``٣``, which they read as 3), no hexadecimal
(``0x1``), no ``nan(…)`` payload (which C's ``strtod`` and Arrow's CSV reader take). The same rule holds on the
careful line-by-line paths and the vectorised ones, so a file is read the same by both. Whether a value must
also be finite, or in a range, is each reader's rule.

>>> as_integer(b"-3"), as_integer(b"1_0"), as_number(b"2.5e1"), as_number(b"nan(1)")
(-3, None, 25.0, None)
"""

from __future__ import annotations

import re

__all__ = ["as_grade", "as_integer", "as_number"]

_INTEGER = re.compile(rb"[+-]?[0-9]+")
# each digit belongs to one group only (no "[0-9]+[0-9]*"), so a long field is refused in linear time
_NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))")


def _bytes(field: bytes | str) -> bytes:
    return field.encode("utf-8", "surrogatepass") if isinstance(field, str) else field


def as_integer(field: bytes | str) -> int | None:
    """The integer ``field`` spells under the rule (module notes), or ``None`` (also beyond Python's 4,300 digits)."""
    field = _bytes(field)
    if field.isdigit() or _INTEGER.fullmatch(field):  # bytes.isdigit: ASCII digits only
        try:
            return int(field)
        except ValueError:  # more digits than int() converts
            return None
    return None


def as_number(field: bytes | str) -> float | None:
    """The number ``field`` spells under the rule (module notes; ``inf`` and ``nan`` included), or ``None``.

    A literal beyond the range of a double reads as ``±inf`` (``1e400``), as Python and C read it.
    """
    field = _bytes(field)
    return float(field) if _NUMBER.fullmatch(field) else None


def as_grade(field: bytes | str) -> int | None:
    """A relevance grade: an integer, or a number with an integer value (``2.0``), or
    ``None``. The magnitude is each reader's to check.

    >>> as_grade(b"2.0"), as_grade(b"2.5"), as_grade(b"1_0")
    (2, None, None)
    """
    grade = as_integer(field)
    if grade is None:
        value = as_number(field)
        if value is None or not value.is_integer():
            return None
        grade = int(value)
    return grade
