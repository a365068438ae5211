"""fio job files → :class:`~iolab.jobs.JobSpec`, with fio's rules.

Checked against fio 3.33 (``fio --showcmd file.fio`` shows how it read a file):

- Sections ``[name]`` start jobs; ``[global]`` sections hold options for
  every job that *follows* them. A later ``[global]`` adds to (and
  overrides) the earlier ones for the jobs after it only.
- ``;`` and ``#`` start a comment anywhere on a line, as in fio (so a value
  cannot contain them).
- ``key=value`` or a bare ``key``; blanks around ``=`` and around the
  line are dropped (fio keeps a blank before the value and then fails to
  match ``rw = randread``; iolab reads what was meant).
- ``${VAR}`` is replaced by the environment variable ``VAR`` (an unset one
  is an error here; fio silently substitutes nothing). fio's keywords
  ``$ncpus``, ``$pagesize`` and ``$mb_memory`` are replaced by this
  machine's values.
- ``include FILE`` inserts another job file at that point; a relative
  ``FILE`` is found next to the including file.
- An option before any section is an error (fio: "outside of [] job section").

fio's arithmetic (``size=(2*1024)k``, ``size=8*$mb_memory``) is evaluated
(:mod:`iolab.jobs.arith`). Errors are :class:`~iolab.jobs.ParseError`, one line
naming the file and the line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab.jobs import JobSpec, Option, ParseError
from iolab.jobs.arith import ExprError, expand, time_options

GLOBAL = "global"
#: Nesting limit for ``include``, far above real use; stops runaway recursion.
MAX_INCLUDE_DEPTH = 16

_ENV_VAR = re.compile(r"\$\{([^}]*)\}")
_KEYWORD = re.compile(r"\$(ncpus|pagesize|mb_memory)\b")
_INCLUDE = re.compile(r"^include(\s+|$)(.*)$")


@dataclass(frozen=True)
class _Line:
    source: str
    number: int
    text: str  # comments and surrounding blanks removed; never empty

    def error(self, message: str) -> ParseError:
        return ParseError(self.source, self.number, message)


def parse_job_file(
    text: str,
    *,
    source: str = "<job file>",
    env: Mapping[str, str] | None = None,
    base_dir: Path | None = None,
) -> list[JobSpec]:
    """The jobs of a job file, each with the ``[global]`` options in force at
    its section first and its own options after them.

    ``source`` names the file in messages and, unless ``base_dir`` is
    given, locates relative ``include`` files (next to it). ``env``
    defaults to ``os.environ``.
    """
    env = os.environ if env is None else env
    if base_dir is None and not source.startswith("<"):
        base_dir = Path(source).parent
    lines = _lines(text, source, base_dir, ())
    return _sections(lines, env, source)


def _strip_comment(raw: str) -> str:
    # fio cuts a line at the first ';' or '#', wherever it is.
    return re.split(r"[;#]", raw, maxsplit=1)[0].strip()


def _lines(text: str, source: str, base_dir: Path | None, stack: tuple[Path, ...]) -> Iterator[_Line]:
    """Meaningful lines, with ``include`` files expanded in place."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _Line(source, number, _strip_comment(raw))
        if not line.text:
            continue
        m = _INCLUDE.match(line.text)
        if m:
            yield from _include(line, m.group(2).strip(), base_dir, stack)
        else:
            yield line


def _include(line: _Line, name: str, base_dir: Path | None, stack: tuple[Path, ...]) -> Iterator[_Line]:
    if not name:
        raise line.error("include needs a file name")
    path = Path(name)
    if not path.is_absolute():
        if base_dir is None:
            raise line.error(f"cannot include '{name}': this job text has no directory to look in")
        path = base_dir / path
    if len(stack) >= MAX_INCLUDE_DEPTH or path.resolve() in stack:
        raise line.error(f"include '{name}' loops back on itself")
    try:
        text = path.read_text()
    except OSError as e:
        raise line.error(f"cannot include '{name}': {e.strerror or e}") from None
    yield from _lines(text, str(path), path.parent, (*stack, path.resolve()))


def _sections(lines: Iterator[_Line], env: Mapping[str, str], source: str) -> list[JobSpec]:
    # Each option with where it was written ("file.fio:12"), for later errors.
    globals_: list[tuple[Option, str]] = []
    jobs: list[tuple[str, list[tuple[Option, str]]]] = []
    current: list[tuple[Option, str]] | None = None  # where options go now
    for line in lines:
        if line.text.startswith("["):
            name = _section_name(line)
            current = globals_ if name == GLOBAL else []
            if name != GLOBAL:
                # Copy: a later [global] must not reach back to this job.
                current.extend(globals_)
                jobs.append((name, current))
        elif current is None:
            raise line.error(f"option '{line.text}' is outside of a section; put it under [global] or a [job]")
        else:
            current.append((_option(line, env), f"{line.source}:{line.number}"))
    if not jobs:
        raise ParseError(source, None, "no job in this file (only [global] options or nothing)")
    return [JobSpec(name, tuple(o for o, _ in opts), tuple(w for _, w in opts)) for name, opts in jobs]


def _section_name(line: _Line) -> str:
    if not line.text.endswith("]"):
        raise line.error(f"section header '{line.text}' has no closing ']'")
    name = line.text[1:-1].strip()
    if not name:
        raise line.error("empty section name '[]'")
    return name


def _option(line: _Line, env: Mapping[str, str]) -> Option:
    text = _substitute(line, line.text, env)
    had_keyword = bool(_KEYWORD.search(line.text.partition("=")[2]))
    key, sep, value = text.partition("=")
    key = key.strip()
    if not key:
        raise line.error(f"'{line.text}' has no option name before '='")
    if any(c.isspace() for c in key):
        raise line.error(f"option name '{key}' contains a blank; write key=value")
    if not sep:
        return key, None
    value = value.strip()
    try:
        done = expand(value, had_keyword=had_keyword, time_option=key in time_options())
    except ExprError as e:
        raise line.error(f"{key}={value}: {e}") from None
    return key, value if done is None else done


def _substitute(line: _Line, text: str, env: Mapping[str, str]) -> str:
    def env_var(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in env:
            raise line.error(f"environment variable '{name}' is not set (used as ${{{name}}})")
        return env[name]

    return _KEYWORD.sub(lambda m: str(_keyword(m.group(1))), _ENV_VAR.sub(env_var, text))


def _keyword(name: str) -> int:
    """fio's job-file keywords, for this machine."""
    page = os.sysconf("SC_PAGE_SIZE")
    if name == "ncpus":
        return os.cpu_count() or 1
    if name == "pagesize":
        return page
    return os.sysconf("SC_PHYS_PAGES") * page // 2**20  # mb_memory
