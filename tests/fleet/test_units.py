"""Pure parts of the fleet, without MPI: launch detection, the hosts
table, clock arithmetic, the mpiexec command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from iolab.errors import JobError
from iolab.fleet import clock
from iolab.fleet.env import FleetError, Launch, check_world, detect
from iolab.fleet.hosts import parse_hosts, read_hosts
from iolab.fleet.launch import mpiexec_command
from iolab.fleet.runner import host_labels
from iolab.jobs import JobSpec

# ---- launch detection ----


def test_detect_launchers() -> None:
    assert detect({}) is None
    assert detect({"OMPI_COMM_WORLD_SIZE": "4"}) == Launch(4, "Open MPI's mpiexec")
    assert detect({"PMI_SIZE": "2"}).expected_ranks == 2  # type: ignore[union-attr]
    # an allocation (salloc, sbatch) is not a launch; a job step is
    assert detect({"SLURM_NTASKS": "8"}) is None
    assert detect({"SLURM_NTASKS": "8", "SLURM_STEP_ID": "0"}) == Launch(8, "Slurm's srun")
    assert detect({"PMIX_RANK": "0"}) == Launch(None, "an MPI launcher")
    assert detect({"OMPI_COMM_WORLD_SIZE": "4", "IOLAB_FLEET": "0"}) is None
    with pytest.raises(FleetError, match="not a number"):
        detect({"OMPI_COMM_WORLD_SIZE": "x"})


def test_singletons_are_refused_with_the_fix() -> None:
    with pytest.raises(FleetError, match=r"rank 0 of 1.*srun --mpi=pmix"):
        check_world(Launch(4, "Slurm's srun"), 1)
    with pytest.raises(FleetError, match="asked for 4 ranks but MPI has 3"):
        check_world(Launch(4, "iolab fleet"), 3)
    check_world(Launch(4, "x"), 4)
    check_world(Launch(None, "x"), 7)


# ---- hosts table ----

TABLE = """
[default]
filename = "/data/vm{rank}.dat"

[[host]]
rank = 1
uri = "nbd://10.0.0.3:10809/e1"
rate_iops = 500

[[host]]
name = "node17"
cpus_allowed = "0-3"
"""


def test_hosts_table_gives_each_rank_its_options() -> None:
    t = parse_hosts(TABLE)
    job = JobSpec("j", (("rw", "randread"), ("rate_iops", "100")))
    (r0,) = t.apply([job], 0, "node17")
    (r1,) = t.apply([job], 1, "other")
    assert r0.options[-2:] == (("filename", "/data/vm0.dat"), ("cpus_allowed", "0-3"))
    assert r1.options[-3:] == (("filename", "/data/vm1.dat"), ("uri", "nbd://10.0.0.3:10809/e1"), ("rate_iops", "500"))
    t.check_against(["node17", "other"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[host]]\nrank = 0\nbs = "4k"', "'bs' cannot differ per host"),
        ('[[host]]\nfilename = "x"', "exactly one of rank"),
        ('[[host]]\nrank = -1\nfilename = "x"', "expected a rank number"),
        ("[hosts]\n", "unknown section"),
        ("[[host]\n", "not TOML"),
        ("[default]\nrate_iops = 1.5", "expected text or a whole number"),
    ],
)
def test_hosts_table_errors_name_the_key(text: str, message: str) -> None:
    with pytest.raises(JobError, match=message):
        parse_hosts(text, "t.toml")


def test_hosts_table_names_must_be_in_the_run() -> None:
    t = parse_hosts('[[host]]\nrank = 5\nfilename = "x"\n[[host]]\nname = "nodeX"\nfilename = "y"')
    with pytest.raises(JobError, match="rank 5 is not in this run"):
        t.check_against(["a", "b"])
    with pytest.raises(JobError, match="host 'nodeX' runs no rank"):
        parse_hosts('[[host]]\nname = "nodeX"\nfilename = "y"').check_against(["a"])


def test_seed001_hosts_table_with_fewer_ranks_says_what_mismatched_and_the_fix() -> None:
    # Issue 21: the seed001 table names ranks 0..7; a 4-rank run got "rank 7 is not in this run" alone.
    table = read_hosts(Path(__file__).parents[2] / "examples" / "fleet" / "seed001-hosts.toml")
    for n in (8, 9):  # 8 ranks or more: every named rank runs (a ninth takes [default] alone)
        table.check_against(["vm"] * n)
    with pytest.raises(JobError) as e:
        table.check_against(["vm"] * 4)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.endswith(
        "seed001-hosts.toml: ranks 4..7 are not in this run (it has 4 ranks, 0..3; the table names ranks 0..7): "
        "start 8 ranks (iolab fleet -n 8), or remove the [[host]] entries of ranks 4..7"
    ), msg
    odd = parse_hosts('[[host]]\nrank = 2\nfilename = "x"\n[[host]]\nrank = 6\nfilename = "y"', "t.toml")
    with pytest.raises(
        JobError, match=r"ranks 2, 6 are not in this run .* remove the \[\[host\]\] entries of ranks 2, 6"
    ):
        odd.check_against(["a"])


def test_labels_name_ranks_that_share_a_host() -> None:
    assert host_labels(["a", "b"]) == ["a", "b"]
    assert host_labels(["a", "a", "b"]) == ["a/0", "a/1", "b"]


# ---- clock ----


def test_offset_from_a_symmetric_round_trip() -> None:
    # remote clock 5 ms ahead; 200 µs each way
    t0 = 1_000_000_000
    s = clock.offset_of(t0, t0 + 200_000 + 5_000_000, t0 + 400_000)
    assert (s.offset_ns, s.round_trip_ns) == (5_000_000, 400_000)


def test_best_sample_is_the_shortest_round_trip() -> None:
    samples = [clock.ClockSample(1, 900, 5_000), clock.ClockSample(1, 120, 300), clock.ClockSample(1, 50, 800)]
    assert clock.best(samples).offset_ns == 120


def test_start_skew_maps_starts_onto_rank_zeros_clock() -> None:
    # rank 1's clock is 2 ms ahead: its start at local +2.5 ms is +0.5 ms on rank 0's clock
    skew = clock.start_skew({0: 10_000_000, 1: 12_500_000, 2: 10_100_000}, {0: 0, 1: 2_000_000, 2: 0})
    assert skew.skew_ns == 500_000
    assert skew.start_after_first_ns == {0: 0, 1: 500_000, 2: 100_000}


# ---- mpiexec command line ----


def test_mpiexec_command() -> None:
    argv = mpiexec_command(4, "run", ["--name=x"], mpiexec="/m/mpiexec", cores=2)
    assert argv[:7] == ["/m/mpiexec", "-n", "4", "--enable-recovery", "-x", "IOLAB_FLEET_RANKS=4", "--oversubscribe"]
    assert argv[-4:] == ["-m", "iolab.cli.main", "run", "--name=x"]
    with_file = mpiexec_command(4, "run", [], mpiexec="m", hostfile=Path("hf"), cores=2)
    assert "--oversubscribe" not in with_file and "--hostfile" in with_file
    assert "--oversubscribe" not in mpiexec_command(2, "run", [], mpiexec="m", cores=2)
    with pytest.raises(FleetError):
        mpiexec_command(0, "run", [], mpiexec="m")
