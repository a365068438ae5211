"""Library errors → one line on stderr and an exit status, in one place.

| error                                   | exit status |
|-----------------------------------------|-------------|
| ``JobError`` (bad option or value)      | 2 (as a usage error) |
| ``RefusedError`` (would destroy data)   | 3           |
| ``EngineError``, ``OSError``, other ``IolabError`` | 1 |
| Ctrl-C outside a run's measuring loop   | 130         |
| stdout closed by its reader (``| head``) | 141 (quietly) |

A run that Ctrl-C cut short still prints its results and exits with 130; a
run that an error (an I/O error) ended early prints the results of the work
done before it, then the error's line, and exits with its status (see
:mod:`iolab.cli.main`). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
import typer
from typer.core import TyperGroup

from iolab.errors import IolabError, JobError, RefusedError

EXIT_ENGINE = 1
EXIT_JOB = 2
EXIT_REFUSED = 3
EXIT_INTERRUPTED = 130
# 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe.
EXIT_BROKEN_PIPE = 141


def exit_status(e: BaseException) -> int:
    if isinstance(e, JobError):
        return EXIT_JOB
    if isinstance(e, RefusedError):
        return EXIT_REFUSED
    if isinstance(e, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_ENGINE


def message(e: BaseException) -> str:
    """The one line the user reads."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted"
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return str(e).strip() or type(e).__name__


class IolabGroup(TyperGroup):
    """The command group: runs a command and maps its errors."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # The reader went away (`iolab show RUN | head`): not an error of
            # ours. Point stdout at /dev/null so the interpreter's final flush
            # does not complain, and exit like `head`'s writer would.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except (IolabError, OSError, KeyboardInterrupt) as e:
            typer.echo(f"iolab: {message(e)}", err=True)
            raise typer.Exit(exit_status(e)) from None
