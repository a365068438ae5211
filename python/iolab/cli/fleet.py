"""Fleet commands: ``iolab fleet`` (runs mpiexec for the user) and the run
under MPI (``mpiexec -n N iolab run ...``, ``srun iolab run ...``).

Fleet options of ``iolab run`` exist only under MPI and are written like
fio options, ``--fleet-hosts=FILE``, ``--fleet-deadline=5s``,
``--fleet-live-http=HOST:PORT``, ``--fleet-spool=DIR``,
``--fleet-metrics-summaries=1``: they are taken out
of the command line here before the rest is read as jobs (outside MPI they
are unknown options, an error that names them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer

from iolab.cli.errors import exit_status
from iolab.cli.options import MetricsSummaries
from iolab.errors import IolabError, JobError
from iolab.run.api import parse_interval_ns

if TYPE_CHECKING:
    from iolab.fleet.comm import World

FLEET_OPTIONS = ("hosts", "deadline", "live-http", "spool", "metrics-summaries")


def split_fleet_options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """``--fleet-NAME=VALUE`` (or ``--fleet-NAME VALUE``) taken out of ``args``."""
    found: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if not tok.startswith("--fleet-"):
            rest.append(tok)
            continue
        name, eq, value = tok[len("--fleet-") :].partition("=")
        if name not in FLEET_OPTIONS:
            raise JobError(
                f"--fleet-{name}: unknown fleet option (known: {', '.join('--fleet-' + o for o in FLEET_OPTIONS)})"
            )
        if not eq:
            if i >= len(args):
                raise JobError(f"--fleet-{name}: needs a value")
            value = args[i]
            i += 1
        found[name] = value
    return found, rest


#: Set by `iolab fleet` when its stderr is a terminal (forwarded to the ranks).
TTY_VAR = "IOLAB_FLEET_TTY"


class TerminalLive:
    """The cluster table on stderr, redrawn in place on a terminal; on a
    pipe or file nothing is drawn (logs stay clean)."""

    def __init__(self) -> None:
        # Under mpiexec a rank's stderr is a pipe to mpiexec, which copies it
        # to the user's terminal: `iolab fleet` says when that is a terminal.
        on_tty = sys.stderr.isatty() or os.environ.get(TTY_VAR) == "1"
        self.tty = on_tty and os.environ.get("TERM") != "dumb"
        self._lines = 0

    def show(self, view: Any) -> None:
        if not self.tty:
            return
        from iolab.fleet.live import terminal_table

        table = terminal_table(view)
        up = f"\x1b[{self._lines}F\x1b[J" if self._lines else ""
        sys.stderr.write(up + table + "\n")
        sys.stderr.flush()
        self._lines = table.count("\n") + 1

    def note(self, line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self._lines = 0


def _interrupt(_sig: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _join_world() -> World:
    """This rank's MPI world, checked against the launcher's
    rank count; Ctrl-C becomes a stop-and-report."""
    from iolab.fleet import env
    from iolab.fleet.comm import World
    from iolab.fleet.runner import prestart_guard

    launch = env.detect()
    assert launch is not None
    # mpiexec forwards SIGUSR1 to every rank (Ctrl-C would abort the job):
    # `iolab fleet` turns Ctrl-C into it, and each rank into a stop-and-report.
    signal.signal(signal.SIGUSR1, _interrupt)
    with prestart_guard(120.0, "MPI initialisation"):
        world = World.init()
    env.check_world(launch, world.size)
    return world


def run_on_fleet(
    args: list[str],
    output: Optional[Path],
    output_format: str,
    allow_overwrite: bool,
    interval: str,
    results: Optional[Path],
    target_stats: Optional[str],
    streaming: tuple[bool, bool] = (False, False),
) -> None:
    """``iolab run`` as one rank of an MPI job (see :mod:`iolab.fleet`);
    ``streaming``: ``--stream-intervals`` and ``--per-worker-intervals``."""
    from iolab.fleet.hosts import read_hosts
    from iolab.fleet.runner import DEFAULT_DEADLINE_S, EXIT_HOST_LOST, FleetConfig, Plan, fleet_run
    from iolab.fleet.spool import DEFAULT_ROOT
    from iolab.run.sources import jobs_from_command_line

    world = _join_world()
    opts, job_args = split_fleet_options(args)
    if target_stats:
        raise JobError("--target-stats is not supported on a fleet run: run the target's stats per host instead")
    if opts.get("metrics-summaries", "1") != "1" or ("metrics-summaries" in opts and "live-http" not in opts):
        raise JobError("--fleet-metrics-summaries=1 goes with --fleet-live-http=HOST:PORT (the /metrics it adds to)")
    deadline_s = DEFAULT_DEADLINE_S
    if "deadline" in opts:
        try:
            deadline_s = parse_interval_ns(opts["deadline"]) / 1e9
        except ValueError as e:
            raise JobError(f"--fleet-deadline: {e}") from None
    run_dir: Optional[Path] = None
    if streaming[0] and results is not None and world.rank == 0:
        from iolab.results.catalog import new_run_dir
        from iolab.results.intervals import HLOG_FILE

        run_dir = new_run_dir(results, create=False)  # rank 0 streams the fleet's intervals there
    cfg = FleetConfig(
        interval_ns=parse_interval_ns(interval),
        deadline_s=deadline_s,
        allow_overwrite=allow_overwrite,
        spool_root=Path(opts.get("spool", str(DEFAULT_ROOT))),
        stream_intervals=streaming[0],
        per_worker_intervals=streaming[1],
        interval_log=None if run_dir is None else run_dir / HLOG_FILE,
    )

    def plan() -> Plan:
        from iolab.fleet.spool import run_id

        jobs = tuple(jobs_from_command_line(job_args))
        hosts = read_hosts(Path(opts["hosts"])) if "hosts" in opts else None
        return Plan(jobs, hosts, run_id("fleet"))

    live = TerminalLive() if world.rank == 0 else None
    server = None
    if world.rank == 0 and "live-http" in opts:
        from iolab.fleet.serve import LiveServer

        summaries = opts.get("metrics-summaries") == "1"
        server = LiveServer(opts["live-http"], f"{world.size} ranks", cfg.interval_ns // 1_000_000, summaries)
        server.start()
        typer.echo(f"live view: {server.url} (metrics: {server.url}metrics)", err=True)

    def on_view(view: Any) -> None:
        if live is not None:
            live.show(view)
        if server is not None:
            server.show(view)

    try:
        outcome = fleet_run(world, plan, cfg, on_view=on_view, note=(live.note if live else lambda _l: None))
    except (IolabError, OSError) as e:
        if world.rank == 0:
            raise
        raise typer.Exit(exit_status(e)) from None  # every rank has it; rank 0 says it once
    if outcome is None:
        return  # not rank 0: rank 0 reports
    _report(outcome, output, output_format, results, run_dir)
    if server is not None:
        server.close()
    if outcome.incomplete:
        typer.echo(f"iolab: fleet run incomplete: {'; '.join(outcome.faults)}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        mark_done(EXIT_HOST_LOST)
        # A peer is gone: leave without MPI_Finalize, which could wait for it.
        os._exit(EXIT_HOST_LOST)
    if outcome.interrupted:
        raise typer.Exit(130)


def _report(
    outcome: Any, output: Optional[Path], output_format: str, results: Optional[Path], run_dir: Optional[Path] = None
) -> None:
    from iolab.fleet import output as fleet_output

    res = fleet_output.build(outcome)
    if output is None:
        sys.stdout.write(fleet_output.formatted(res, output_format))
    else:
        output.write_text(fleet_output.formatted(res, output_format))
        sys.stdout.write(fleet_output.text(res))
        typer.echo(f"results ({output_format}) written to {output}", err=True)
    sys.stdout.flush()
    if results is not None and res.total is not None:
        from iolab.fleet.rundir import save_fleet_run

        typer.echo(f"results: {save_fleet_run(results, res, run_dir)}", err=True)


#: Set by ``iolab fleet`` for rank 0: where it writes its exit status once it
#: has reported a run that lost a host.
DONE_VAR = "IOLAB_FLEET_DONE_FILE"
#: How long mpiexec may take to end after rank 0 reported a lost host.
MPIEXEC_GRACE_S = 2.0


def mark_done(status: int) -> None:
    """Rank 0 has reported: tell ``iolab fleet`` (when it launched us)."""
    path = os.environ.get(DONE_VAR)
    if path:
        Path(path).write_text(str(status))


def run_mpiexec(argv: list[str], environ: dict[str, str]) -> int:
    """Run mpiexec; its exit status. When rank 0 has reported a lost host,
    mpiexec may wait for that host's daemon forever (a cut link never
    closes): after a grace period it is ended, and rank 0's status returned."""
    import tempfile
    import time

    from iolab.fleet.launch import session_environ

    with tempfile.TemporaryDirectory(prefix="iolab-fleet-") as tmp:
        done = Path(tmp) / "done"
        sessions = Path(tmp) / "mpi"
        sessions.mkdir()
        environ = {**session_environ(environ, argv, sessions), DONE_VAR: str(done)}
        argv = [argv[0], "-x", DONE_VAR, *argv[1:]]
        proc = subprocess.Popen(argv, env=environ, start_new_session=True)
        try:
            reported_at = None
            while True:
                try:
                    return proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
                except KeyboardInterrupt:
                    # mpiexec forwards SIGUSR1 to the ranks: they stop and rank 0 reports (exit 130)
                    os.kill(proc.pid, signal.SIGUSR1)
                    continue
                if done.is_file() and reported_at is None:
                    reported_at = time.monotonic()
                if reported_at is not None and time.monotonic() - reported_at > MPIEXEC_GRACE_S:
                    typer.echo("iolab: mpiexec still waits for a lost host's daemon: ending it", err=True)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    _end_local_daemons(proc.pid)
                    return int(done.read_text() or 1)
        finally:
            if proc.poll() is None:  # left by an error: end mpiexec before its session folder goes
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _end_local_daemons(mpiexec_pid: int) -> None:
    """Open MPI's daemons (prted) of this job left on this machine: they
    detach into their own sessions, and one that served the lost host keeps
    waiting for mpiexec. Each names its job (``prterun-HOST-PID@0``) on
    its command line; daemons on other machines end when their ssh does."""
    import socket

    job = f"prterun-{socket.gethostname()}-{mpiexec_pid}@".encode()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if job in (p / "cmdline").read_bytes():
                os.kill(int(p.name), signal.SIGKILL)
        except OSError:
            continue  # gone already, or not ours to read


#: Fleet options of `iolab sweep` under MPI (it takes no extra arguments):
#: environment variables, which `iolab fleet ... sweep` sets and forwards.
SWEEP_ENV = {"hosts": "IOLAB_FLEET_HOSTS", "deadline": "IOLAB_FLEET_DEADLINE", "spool": "IOLAB_FLEET_SPOOL"}


def sweep_on_fleet(plan: Path, results: Path, opts: Any) -> Any:
    """``iolab sweep`` as one rank of an MPI job: each point on every rank
    (:mod:`iolab.fleet.sweep`); rank 0 returns the outcome, others None."""
    from iolab.plans.sweep import run_sweep

    return plans_on_fleet(lambda o: run_sweep(plan, results, o), opts, "a fleet sweep")


def plans_on_fleet(body: Callable[[Any], Any], opts: Any, where: str) -> Any:
    """``body(opts)`` (a sweep or a search) as one rank of an MPI job: each
    point it runs runs on every rank (:func:`iolab.fleet.sweep.on_fleet`);
    rank 0 returns what ``body`` returns, others None."""
    from iolab.fleet.hosts import read_hosts
    from iolab.fleet.output import build, text
    from iolab.fleet.runner import DEFAULT_DEADLINE_S, EXIT_HOST_LOST, FleetConfig
    from iolab.fleet.spool import DEFAULT_ROOT
    from iolab.fleet.sweep import on_fleet

    world = _join_world()
    deadline = os.environ.get(SWEEP_ENV["deadline"])
    try:
        deadline_s = parse_interval_ns(deadline) / 1e9 if deadline else DEFAULT_DEADLINE_S
    except ValueError as e:
        raise JobError(f"{SWEEP_ENV['deadline']}: {e}") from None
    cfg = FleetConfig(
        deadline_s=deadline_s,
        allow_overwrite=opts.allow_overwrite,
        spool_root=Path(os.environ.get(SWEEP_ENV["spool"]) or DEFAULT_ROOT),
    )
    hosts_path = os.environ.get(SWEEP_ENV["hosts"])
    hosts = read_hosts(Path(hosts_path)) if hosts_path and world.rank == 0 else None

    def incomplete(outcome: Any) -> None:
        sys.stdout.write(text(build(outcome)))
        typer.echo(f"iolab: {where} stopped, a point lost a host: {'; '.join(outcome.faults)}", err=True)
        typer.echo("iolab: the finished points are kept; run the same command again to resume", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        mark_done(EXIT_HOST_LOST)
        os._exit(EXIT_HOST_LOST)

    try:
        return on_fleet(world, body, opts, cfg, hosts, incomplete, where)
    except (IolabError, OSError) as e:
        if world.rank == 0:
            raise
        raise typer.Exit(exit_status(e)) from None


FLEET_HELP = """Run `iolab run|sweep|find ARGS...` on N MPI ranks (mpiexec, run for you).

Examples:

  iolab fleet -n 4 run --name=r --ioengine=null --rw=randread --bs=4k --size=1g --time_based --runtime=10

  iolab fleet -n 2 --hostfile hosts.txt --hosts table.toml run job.fio --output-format json

  iolab fleet -n 4 sweep plan.toml --results results

  iolab fleet -n 4 find --slo 'p99<1ms' --axis iodepth plan.toml

Without --hostfile the ranks run on this host. Rank 0 reads the jobs,
broadcasts them, measures every rank's clock offset, and starts all ranks
together; it shows the cluster live and prints a row per host and an exact
total. A rank lost mid-run ends the run within two intervals plus
--deadline, named, with partial results marked incomplete (exit status 4).
A sweep runs each point on every rank; so does find, whose SLO must
hold on every host and on the exact total. Ctrl-C stops every rank and still
reports (exit status 130). See docs/fleet.md.
"""


def register(app: typer.Typer) -> None:
    @app.command(
        help=FLEET_HELP,
        # Everything from `run`/`sweep` on belongs to that command.
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False},
        options_metavar="[OPTIONS] run|sweep|find ARGS...",
    )
    def fleet(
        ctx: typer.Context,
        ranks: Annotated[int, typer.Option("-n", "--ranks", help="Number of MPI ranks.")] = 2,
        hostfile: Annotated[
            Optional[Path], typer.Option("--hostfile", help="Open MPI hostfile (hosts over ssh); none = this host.")
        ] = None,
        hosts: Annotated[
            Optional[Path],
            typer.Option("--hosts", help="Hosts table (TOML): per-host filename, uri, cpus_allowed, rate_iops."),
        ] = None,
        deadline: Annotated[
            str, typer.Option("--deadline", help="Watchdog deadline beyond two intervals (e.g. 5s).")
        ] = "5s",
        live_http: Annotated[
            Optional[str], typer.Option("--live-http", help="Serve the live view and /metrics at HOST:PORT.")
        ] = None,
        mpiexec_arg: Annotated[
            list[str], typer.Option("--mpiexec-arg", help="Extra argument for mpiexec (repeatable).")
        ] = [],  # noqa: B006 - typer reads the default, never mutates it
        metrics_summaries: MetricsSummaries = False,
    ) -> None:
        from iolab.fleet.launch import find_mpiexec, launch_environ, mpiexec_command

        if not ctx.args:
            raise JobError("iolab fleet: give a command: run ARGS..., sweep ARGS... or find ARGS...")
        command, *args = ctx.args
        try:
            parse_interval_ns(deadline)
        except ValueError as e:
            raise JobError(f"--deadline: {e}") from None
        environ = launch_environ()
        if sys.stderr.isatty():
            environ[TTY_VAR] = "1"
            mpiexec_arg = [*mpiexec_arg, "-x", TTY_VAR]
        if command in ("sweep", "find"):
            if live_http is not None:
                raise JobError(f"--live-http: not available for {command} on a fleet (use it with `run`)")
            forwarded = {"deadline": deadline, "hosts": None if hosts is None else str(hosts.resolve())}
            extra_env = {SWEEP_ENV[k]: v for k, v in forwarded.items() if v is not None}
            environ.update(extra_env)
            mpi_extra = [*mpiexec_arg, *[a for var in extra_env for a in ("-x", var)]]
            argv = mpiexec_command(ranks, command, args, hostfile=hostfile, mpiexec=find_mpiexec(), extra=mpi_extra)
            raise typer.Exit(run_mpiexec(argv, environ))
        extra = [f"--fleet-deadline={deadline}"]
        if hosts is not None:
            extra.append(f"--fleet-hosts={hosts.resolve()}")
        if live_http is not None:
            extra.append(f"--fleet-live-http={live_http}")
        if metrics_summaries:
            if live_http is None:
                raise JobError(
                    "--metrics-summaries: the fleet's /metrics is served with --live-http HOST:PORT; give it too"
                )
            extra.append("--fleet-metrics-summaries=1")
        argv = mpiexec_command(
            ranks, command, [*args, *extra], hostfile=hostfile, mpiexec=find_mpiexec(), extra=mpiexec_arg
        )
        raise typer.Exit(run_mpiexec(argv, environ))


__all__ = ["register", "run_on_fleet", "split_fleet_options", "sweep_on_fleet"]
