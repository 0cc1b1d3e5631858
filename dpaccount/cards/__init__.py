"""The privacy report card: ``report(m)`` → ``PrivacyReport`` (``summary.py``), laid out as one
standalone HTML file (``html.py``) with inline SVG figures (``figures.py``)."""
from .summary import PrivacyReport, Row, report

__all__ = ["PrivacyReport", "Row", "report"]
