"""Sweep plans: a base job, axes, repeats and method, run as one study.

- :mod:`iolab.plans.model`: the TOML format → :class:`Plan` (``load_plan``, ``PlanError``).
- :mod:`iolab.plans.points`: points (matrix or zip), ``--quick``, ``--target``, validation.
- :mod:`iolab.plans.sweep`: ``run_sweep`` — runs, writes, resumes.
- :mod:`iolab.plans.steady`: SNIA PTS steady state; the page-cache drop.
- :mod:`iolab.plans.progress`: points done/total and ETA on the terminal.

docs/plans.md documents the format.
"""

from __future__ import annotations

from iolab.plans.model import Axis, Plan, PlanError, PtsSteadyState, load_plan, parse_plan
from iolab.plans.points import Point, expand, point_job, resolve, validate

__all__ = [
    "Axis",
    "Plan",
    "PlanError",
    "Point",
    "PtsSteadyState",
    "expand",
    "load_plan",
    "parse_plan",
    "point_job",
    "resolve",
    "validate",
]
