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
        raise _error(arg, f"--{key} is an option of the fio program, not of a job; see `iolab run --help`")
    if not sep:
        return key, None
    try:
        done = expand(value, had_keyword=False, time_option=key in time_options())
    except ExprError as e:
        raise _error(arg, str(e)) from None
    return key, value if done is None else done


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
