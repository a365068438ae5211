"""Analysis of a study's results: tables, consistency checks, knees,
bottleneck, trend statements and methodology warnings.

``load_dataset(path)`` reads an iolab run or sweep directory (or a fio
JSON output) into a :class:`Dataset`; ``analyze(ds)`` turns it into an
:class:`Analysis` (``.to_json()`` is the ``iolab.analysis/1`` document).
"""

from iolab.analysis.analyze import analyze
from iolab.analysis.load import DatasetError, load_dataset
from iolab.analysis.model import (
    ANALYSIS_SCHEMA,
    Analysis,
    CpuFigures,
    Dataset,
    DeviceFigures,
    DirResult,
    Finding,
    Interval,
    LatStats,
    Point,
    Row,
    Sample,
    SampleConfig,
    Stat,
    metric_name,
)

__all__ = [
    "ANALYSIS_SCHEMA",
    "Analysis",
    "CpuFigures",
    "Dataset",
    "DatasetError",
    "DeviceFigures",
    "DirResult",
    "Finding",
    "Interval",
    "LatStats",
    "Point",
    "Row",
    "Sample",
    "SampleConfig",
    "Stat",
    "analyze",
    "load_dataset",
    "metric_name",
]
