"""JSON text of answers, for the command line's ``--json`` and ``SweepResult.to_json``.

JSON has no infinite numbers and no NaN. An infinite ε (no finite ε exists at
that δ: mass at +∞ in the privacy loss exceeds δ) is written as the string
``"inf"`` (``"-inf"``, ``"nan"`` likewise), the text ``str(float)`` gives and
CSV writes, so ``float(value)`` reads every cell back.
"""
import json
import math


def plain(obj):
    """``obj`` with every non-finite float replaced by its string (in dicts, lists, tuples)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {key: plain(val) for key, val in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(val) for val in obj]
    return obj


def dumps(obj):
    """Indented JSON text of ``obj`` (non-finite floats as strings; other
    non-JSON values by ``str``)."""
    return json.dumps(plain(obj), indent=2, allow_nan=False, default=str)
