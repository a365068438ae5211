"""Reports of results: terminal text (fio-like, one explicit unit per figure).

- ``format_text``: the full summary of a results document.
- ``format_quick_table``: one row per job, for ``iolab quick``.
"""

from __future__ import annotations

from iolab.report.text import format_quick_table, format_text

__all__ = ["format_quick_table", "format_text"]
