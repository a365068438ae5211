"""Jobs from a command line: job files, fio options, or both.

``iolab run`` takes fio's command line: ``[JOBFILE]... [--OPTION[=VALUE]]...``.
Options are job options, written ``--bs=4k`` or ``--bs 4k`` (the option
table says which options are flags and so take no separate value), or with
one dash as fio also reads them (``-bs=4k``, :func:`single_dash_as_long`).

- Options alone: ``--name`` starts each job, as in fio
  (:func:`iolab.jobs.parse_fio_args`).
- Job files alone: every job in them (:func:`iolab.jobs.parse_job_file`).
- Both: the options, which must not include ``--name``, apply to every job
  of the files *after* the files' own options, so what was typed last
  wins (``iolab run seed.fio --runtime=5`` shortens every job). fio would
  let a job file's ``[global]`` override the command line instead; iolab
  does not, because shrinking a study from the command line is the common
  need.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from iolab import _native
from iolab.errors import JobError
from iolab.jobs import JobSpec, parse_fio_args, parse_job_file
from iolab.jobs.cmdline import FIO_PROGRAM_OPTIONS, FIO_PROGRAM_OPTIONS_WITH_VALUE
from iolab.jobs.extras import EXTRA_OPTIONS


@lru_cache(maxsize=1)
def _flags() -> frozenset[str]:
    """Options that may be written bare (``--time_based``), aliases included."""
    names: set[str] = set()
    for o in _native.option_table():
        if o["type"] == "bool":
            names.add(o["name"])
            names.update(o["aliases"])
    # fio's options handled around the engine (iolab.jobs.extras) too.
    names.update(n for d in EXTRA_OPTIONS if d.kind == "bool" for n in (d.name, *d.aliases))
    return frozenset(names)


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    extras = (n for d in EXTRA_OPTIONS for n in (d.name, *d.aliases))
    return frozenset([*(n for o in _native.option_table() for n in (o["name"], *o["aliases"])), *extras])


def single_dash_as_long(tokens: Sequence[str], takes_value: frozenset[str] = frozenset()) -> list[str]:
    """``tokens`` with fio's single-dash long options written with two dashes.

    fio reads its command line with ``getopt_long_only``, so ``-name=x``,
    ``-iodepth 1`` and ``-thread`` are long options there, and scripts and
    guides are full of them (``fio -filename=/dev/sdb -direct=1 -rw=randread
    -bs=4k -name=test``). A single-dash token becomes ``--`` + its name when
    the name, before any ``=``, is longer than one letter and spelt as an
    option name (a letter, then letters, digits, ``_`` or ``-``): ``-o FILE``
    and ``-h`` stay the short options they are, and a value such as ``-1``
    stays a value. A name no one knows (``-cgroup=x``) becomes a long
    option too, so that the error names it rather than its first letter
    read as a short option.

    Only words in an option's place are read so: the word after an option
    that takes a value is that value, whatever it looks like (``--name
    -job``, as fio's getopt gives it), words after ``--`` are left as they
    are, and ``-oFILE`` (``-o`` with its value attached) stays short unless
    the whole word is a known option. ``takes_value``: the command's own
    options that take a value (``o``, ``output``, ...).
    """
    known = _known() | FIO_PROGRAM_OPTIONS | takes_value
    values = (_known() - _flags()) | FIO_PROGRAM_OPTIONS_WITH_VALUE | takes_value
    out: list[str] = []
    value_next = False
    for i, tok in enumerate(tokens):
        if tok == "--":
            out.extend(tokens[i:])
            break
        if value_next:
            value_next = False
            if tok.startswith("-") and out[-1].startswith("--"):
                out[-1] = f"{out[-1]}={tok}"  # joined: the parser after this one would read -job as -j -o b
            else:
                out.append(tok)
            continue
        name = tok[1:].partition("=")[0]
        short_o = name.startswith("o") and name not in known
        if (
            tok.startswith("-")
            and not tok.startswith("--")
            and len(name) > 1
            and _OPTION_NAME.fullmatch(name)
            and not short_o
        ):
            tok = "-" + tok
        if tok.startswith("-") and "=" not in tok:
            value_next = tok.lstrip("-") in values
        out.append(tok)
    return out


_OPTION_NAME = re.compile(r"[A-Za-z][\w-]*")


def split_command_line(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """(job files, fio options as ``--name[=value]``) from ``tokens`` in order.

    ``--opt value`` is joined into ``--opt=value`` for options that take a
    value, fio's program options among them (``--status-interval 1``, so
    that the error names the option rather than a job file ``1``), and for
    a flag followed by a number (``--randrepeat 1``: fio's getopt gives its
    boolean options a required value, so fio reads the next word as it);
    a bare word anywhere else is a job file.
    """
    files: list[str] = []
    options: list[str] = []
    known = _known()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if not tok.startswith("-") or tok == "-":
            files.append(tok)
            continue
        name = tok.lstrip("-")
        following = tokens[i] if i < len(tokens) else None
        if "=" not in name and following is not None and not following.startswith("--"):
            flag = name in _flags()
            takes_value = (name in known and not flag) or name in FIO_PROGRAM_OPTIONS_WITH_VALUE
            if takes_value or (flag and following.isdigit()):
                tok = f"{tok}={following}"
                i += 1
        options.append(tok)
    return files, options


def _read_job_file(path: str) -> list[JobSpec]:
    return parse_job_file(Path(path).read_text(), source=path)


def jobs_from_command_line(tokens: Sequence[str]) -> list[JobSpec]:
    """The jobs ``tokens`` describe (see the module doc). Raises ``JobError``
    for a malformed command line, ``OSError`` for an unreadable job file."""
    files, options = split_command_line(tokens)
    if not files:
        if not options:
            raise JobError("no job given: name a job file, or give fio options such as --name=x --rw=read")
        return parse_fio_args(options)
    jobs = [job for f in files for job in _read_job_file(f)]
    if not options:
        return jobs
    if any(o.split("=", 1)[0].lstrip("-") == "name" for o in options):
        raise JobError(
            "--name starts a new job, which cannot be combined with job files; "
            "put the job in a file, or give options without --name to apply them to every job"
        )
    (extra,) = parse_fio_args(["--name=command-line", *options])
    return [j.with_options(*extra.options) for j in jobs]
