"""An SLO on a fleet (``iolab fleet -n N find``): held per host and on the
exact total.

A fleet point's run keeps the exact merge of its hosts (result.json: every
host's histograms merged, I/Os summed, over the time they ran) and each
host's own results (``hosts/rank-R.json``, :mod:`iolab.fleet.rundir`). The
SLO's verdict on a point's repeats is every clause on the total (the
percentile of the merge of every host's histograms over every repeat —
never an average of the hosts' percentiles) and every clause on each host
(its repeats merged), each with its own 95 % interval over the repeats.
It holds only when all of them hold: one slow host breaks the fleet's
objective even when the total meets it.

:func:`fleet_repeat` reads one run directory's figures;
:func:`judge_fleet` is :func:`iolab.plans.slo.judge` over total and hosts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.analysis.load import run_samples
from iolab.analysis.samples import group_sample
from iolab.fleet.rundir import read_fleet, read_rank_results
from iolab.plans.find_run import repeat_of
from iolab.plans.slo import Repeat, Slo, Verdict, judge


@dataclass(frozen=True)
class FleetRepeat:
    """One repeat of a point on a fleet: the exact total and each host's own figures (host → repeat)."""

    total: Repeat
    hosts: dict[str, Repeat]


def fleet_repeat(directory: Path) -> FleetRepeat:
    """A fleet run directory's total and hosts, named as fleet.json names
    them (``rank-R`` where it does not). Raises ``ValueError`` for a
    directory without the hosts' results (not a fleet run)."""
    ranks = read_rank_results(directory)
    if not ranks:
        raise ValueError(f"{directory}: no hosts/rank-R.json: not a fleet run")
    fleet = read_fleet(directory) or {}
    names = {int(h["rank"]): str(h["host"]) for h in fleet.get("hosts", []) if "rank" in h and "host" in h}
    hosts: dict[str, Repeat] = {}
    for rank, doc in ranks.items():
        (group,) = doc["summary"]["groups"][:1]
        label = names.get(rank, f"rank-{rank}")
        hosts[label] = repeat_of(group_sample(doc, group, label, [], None))
    (total,) = run_samples(directory)[:1]
    return FleetRepeat(repeat_of(total), hosts)


def judge_fleet(slo: Slo, repeats: Sequence[FleetRepeat]) -> Verdict:
    """The SLO on the total and on each host present in every repeat; the
    hosts' clauses are scoped ``host NAME`` (the statement names them)."""
    total = judge(slo, [r.total for r in repeats])
    clauses = list(total.clauses)
    common = [h for h in repeats[0].hosts if all(h in r.hosts for r in repeats)]
    for host in common:
        scoped = Slo(slo.text, tuple(replace(c, scope=f"host {host}") for c in slo.clauses))
        clauses.extend(judge(scoped, [r.hosts[host] for r in repeats]).clauses)
    return Verdict(tuple(clauses), len(repeats))
