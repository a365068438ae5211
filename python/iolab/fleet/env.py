"""Is this process one rank of an MPI job, and of how many?

Launchers say so in the environment before MPI is initialised: Open MPI's
mpiexec (``OMPI_COMM_WORLD_SIZE``), PMIx (``PMIX_RANK``), MPICH/Hydra and
Intel MPI (``PMI_SIZE``), Slurm's srun (``SLURM_NTASKS`` with
``SLURM_STEP_ID``). ``iolab fleet -n N`` also sets ``IOLAB_FLEET_RANKS``.
The environment only says a launcher started us; MPI itself says how many
ranks joined. When they disagree — srun started N copies without a PMI
plugin, so each initialised MPI alone as rank 0 of 1 — running would give
N independent runs and N "totals": :func:`check_world` refuses that.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from iolab.errors import IolabError

#: Set by ``iolab fleet -n N``: the number of ranks it asked mpiexec for.
RANKS_VAR = "IOLAB_FLEET_RANKS"
#: Set to ``0`` to run one independent ``iolab run`` per rank even under a launcher.
DISABLE_VAR = "IOLAB_FLEET"

#: (variable giving the number of ranks, launcher named in messages), checked in order.
_SIZE_VARS = (
    (RANKS_VAR, "iolab fleet"),
    ("OMPI_COMM_WORLD_SIZE", "Open MPI's mpiexec"),
    ("PMI_SIZE", "a PMI launcher (MPICH/Hydra, Intel MPI, srun --mpi=pmi2)"),
    ("MPI_LOCALNRANKS", "MPICH's mpiexec"),
    ("SLURM_NTASKS", "Slurm's srun"),
)
#: Variables that say a PMIx/PMI launcher started us even without a size.
_PRESENCE_VARS = ("PMIX_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK")


class FleetError(IolabError):
    """A fleet run cannot go on: wrong launch, a rank failed, a host lost."""


@dataclass(frozen=True)
class Launch:
    """What the environment says about the launch."""

    #: Ranks the launcher was asked for, when it says (None: unknown).
    expected_ranks: Optional[int]
    #: Who said so, for messages.
    launcher: str


def detect(environ: Optional[Mapping[str, str]] = None) -> Optional[Launch]:
    """The launch this process is part of, or None when it runs alone.

    srun sets ``SLURM_NTASKS`` for a whole allocation too (``salloc``, a
    batch script): only a job *step* (``SLURM_STEP_ID``) counts as launched.
    """
    env = os.environ if environ is None else environ
    if env.get(DISABLE_VAR) == "0":
        return None
    for var, launcher in _SIZE_VARS:
        raw = env.get(var)
        if raw is None:
            continue
        if var == "SLURM_NTASKS" and "SLURM_STEP_ID" not in env:
            continue
        try:
            n = int(raw)
        except ValueError:
            raise FleetError(f"{var}={raw!r} is not a number of ranks (set by {launcher})") from None
        return Launch(n, launcher)
    if any(v in env for v in _PRESENCE_VARS):
        return Launch(None, "an MPI launcher")
    return None


def check_world(launch: Launch, world_size: int) -> None:
    """Refuse a world whose size is not what the launcher was asked for."""
    n = launch.expected_ranks
    if n is None or n == world_size:
        return
    if world_size == 1:
        raise FleetError(
            f"{launch.launcher} started {n} ranks but MPI sees each as rank 0 of 1: the processes "
            "are not connected (srun without a PMI plugin?). Use `srun --mpi=pmix` (or pmi2), or "
            "`mpiexec -n N`, or set IOLAB_FLEET=0 to run independent single-host runs"
        )
    raise FleetError(f"{launch.launcher} asked for {n} ranks but MPI has {world_size}: check the launch command")


__all__ = ["DISABLE_VAR", "RANKS_VAR", "FleetError", "Launch", "check_world", "detect"]
