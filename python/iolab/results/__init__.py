"""Results: the iolab JSON document and exports of it.

- ``build_output``: run result + summary → the ``iolab.result/1`` document.
- ``to_fio_json``: the document's parts → fio 3.x ``--output-format=json`` layout.
- ``ResultFormatError``: a document iolab cannot read.

docs/results-schema.md documents every field.
"""

from __future__ import annotations

from iolab.errors import ResultFormatError
from iolab.results.document import (
    RESULT_SCHEMA,
    SUMMARY_SCHEMA,
    build_output,
    check_document,
)
from iolab.results.fio_json import FIO_OMITTED_KEYS, to_fio_json

__all__ = [
    "FIO_OMITTED_KEYS",
    "RESULT_SCHEMA",
    "SUMMARY_SCHEMA",
    "ResultFormatError",
    "build_output",
    "check_document",
    "to_fio_json",
]
