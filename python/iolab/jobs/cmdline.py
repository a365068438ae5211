"""fio-style command-line job options → :class:`~iolab.jobs.JobSpec`.

fio's rules, as in ``fio --name=a --bs=4k --name=b``:

- options before the first ``--name`` apply to every job (like ``[global]``);
- each ``--name=X`` starts job ``X``; the options after it are its own;
- ``--name=global`` starts global options again, for the jobs after it;
- an option is ``--opt=value``, or ``--opt`` alone for a flag.

Where fio would refuse to run ("no jobs defined") because options were
given without any ``--name``, iolab runs them as one job named
:data:`DEFAULT_JOB_NAME`.

Only job options are handled here: job files and iolab's own flags are
separated out by the CLI (:mod:`iolab.run.sources`), which also joins
``--opt value`` into ``--opt=value`` where the option table says the
option takes a value. A fio *program* option (``--output-format``,
``--minimal``, ...) reaching this point is reported as such.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from iolab.jobs import JobSpec, Option, ParseError
from iolab.jobs.arith import ExprError, expand, time_options

#: Name of the job made of options given without any ``--name``.
DEFAULT_JOB_NAME = "iolab"

SOURCE = "command line"

#: Options of the fio program itself (``fio --help``), not of a job.
FIO_PROGRAM_OPTIONS = frozenset(
    """
    debug parse-only merge-blktrace-only output bandwidth-log minimal output-format
    terse-version version help cpuclock-test crctest cmdhelp enghelp showcmd eta
    eta-newline eta-interval status-interval readonly section alloc-size
    warnings-fatal max-jobs server daemonize client remote-config idle-prof
    inflate-log trigger-file trigger-timeout trigger trigger-remote aux-path
    append-terse latency-log
    """.split()
)

#: The program options above that take their value as the next word
#: (``--eta-newline 1``): fio gives them a required argument.
FIO_PROGRAM_OPTIONS_WITH_VALUE = frozenset(
    """
    debug output output-format terse-version eta eta-newline eta-interval
    status-interval section alloc-size max-jobs daemonize client remote-config
    idle-prof inflate-log trigger-file trigger-timeout trigger trigger-remote aux-path
    """.split()
)

_CLIENT_SERVER = "fio's client/server mode is not offered: `iolab fleet` runs jobs on several hosts"
_TRIGGER = "fio's triggers are not offered: stop a run with Ctrl-C or SIGTERM (its results are kept)"

#: What to do instead, for each fio program option ``iolab run`` does not
#: take; the others are options of ``iolab run`` itself (``iolab run --help``).
FIO_PROGRAM_OPTION_ADVICE = {
    "debug": "fio's debug tracing is not offered; drop it (iolab notes what layout and the engines do on stderr)",
    "warnings-fatal": "drop it: iolab refuses what it cannot do instead of warning",
    "bandwidth-log": "give the jobs write_bw_log=NAME instead",
    "latency-log": "give the jobs write_lat_log=NAME instead",
    "merge-blktrace-only": "blktrace merging is not offered",
    "inflate-log": "fio's compressed logs are not written, so there is none to inflate",
    "idle-prof": "CPU idleness profiling is not offered; the results give each job's usr/sys CPU",
    "aux-path": "drop it: iolab writes no state files beside the jobs",
    "server": _CLIENT_SERVER,
    "client": _CLIENT_SERVER,
    "remote-config": _CLIENT_SERVER,
    "daemonize": _CLIENT_SERVER,
    "trigger-file": _TRIGGER,
    "trigger-timeout": _TRIGGER,
    "trigger": _TRIGGER,
    "trigger-remote": _TRIGGER,
    "version": "run `iolab version`",
    "help": "run `iolab run --help`",
    "cmdhelp": "run `iolab options` for every job option",
    "enghelp": "run `iolab options` for the engines' options",
    "cpuclock-test": "iolab times I/O with clock_gettime(CLOCK_MONOTONIC); there is no CPU clock to test",
    "crctest": "checksum speed tests are not offered",
}


def parse_fio_args(args: Sequence[str]) -> list[JobSpec]:
    """The jobs described by fio-style ``args`` (see the module doc)."""
    global_opts: list[Option] = []
    jobs: list[tuple[str, list[Option]]] = []
    current = global_opts
    for arg in args:
        key, value = _split(arg)
        if key != "name":
            current.append((key, value))
            continue
        if not value:
            raise _error(arg, "--name needs a job name: --name=NAME")
        if value == "global":
            current = global_opts
        else:
            # The globals in force now; later --name=global must not reach back.
            current = list(global_opts)
            jobs.append((value, current))
    if not jobs:
        if any(_split(a)[0] == "name" for a in args):
            raise ParseError(SOURCE, None, "only --name=global options, no job: add --name=JOB")
        return [JobSpec(DEFAULT_JOB_NAME, tuple(global_opts))] if global_opts else []
    return [JobSpec(name, tuple(opts)) for name, opts in jobs]


def _split(arg: str) -> tuple[str, str | None]:
    if not arg.startswith("--") or arg == "--":
        raise _error(arg, "expected a job option --option=value (job files are given before the options)")
    key, sep, value = arg[2:].partition("=")
    key = key.strip()
    if not key:
        raise _error(arg, "no option name after '--'")
    if key in FIO_PROGRAM_OPTIONS:
        raise _error(arg, program_option_message(key))
    if not sep:
        return key, None
    try:
        done = expand(value, had_keyword=False, time_option=key in time_options())
    except ExprError as e:
        raise _error(arg, str(e)) from None
    return key, value if done is None else done


def program_option_message(key: str) -> str:
    """Why fio's program option ``--key`` is not a job option, and what to do."""
    advice = FIO_PROGRAM_OPTION_ADVICE.get(key)
    if advice is None:
        return f"--{key} is an option of the fio program, not of a job; see `iolab run --help`"
    return f"--{key} is an option of the fio program that iolab run does not take: {advice}"


def _error(arg: str, message: str) -> ParseError:
    return ParseError(SOURCE, None, f"'{arg}': {message}")


def command_line(jobs: Sequence[JobSpec]) -> str:
    """fio's ``--showcmd``: the jobs as one command line, ``--name`` first in
    each job and its options (``[global]`` ones folded in) after it."""
    args = ["iolab", "run"]
    for job in jobs:
        args.append(f"--name={job.name}")
        args += [f"--{k}" if v is None else f"--{k}={v}" for k, v in job.options]
    return " ".join(shlex.quote(a) for a in args)


def select_sections(jobs: Sequence[JobSpec], sections: Sequence[str]) -> list[JobSpec]:
    """fio's ``--section``: only the jobs named in ``sections``, in file order.
    A name no job has is an error naming the ones there are."""
    names = {j.name for j in jobs}
    missing = [s for s in sections if s not in names]
    if missing:
        raise ParseError(
            SOURCE, None, f"--section {', '.join(missing)}: no such job; the jobs are {', '.join(sorted(names))}"
        )
    return [j for j in jobs if j.name in sections]


def check_max_jobs(jobs: Sequence[JobSpec], max_jobs: int) -> None:
    """fio's ``--max-jobs``: the jobs' workers (each job's ``numjobs``,
    summed) must not exceed ``max_jobs``; fio refuses the job that would
    pass it, iolab the run, before anything runs."""
    workers = 0
    for job in jobs:
        numjobs = [v for k, v in job.options if k == "numjobs"]
        text = (numjobs[-1] if numjobs else None) or "1"
        workers += int(text) if text.strip().isdigit() else 1  # the core refuses what is not a count
    if workers > max_jobs:
        raise ParseError(
            SOURCE,
            None,
            f"--max-jobs={max_jobs}: the jobs have {workers} workers (numjobs summed); "
            "raise --max-jobs or lower numjobs",
        )
