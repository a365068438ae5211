"""Library errors → one line on stderr and an exit status, in one place.

| error                                   | exit status |
|-----------------------------------------|-------------|
| ``JobError`` (bad option or value)      | 2 (as a usage error) |
| ``RefusedError`` (would destroy data)   | 3           |
| ``EngineError``, ``OSError``, other ``IolabError`` | 1 |
| a usage error (click: bad value, missing path, unknown command) | 2 |
| Ctrl-C outside a run's measuring loop   | 130         |
| stdout closed by its reader (``| head``) | 141 (quietly) |

A run that Ctrl-C cut short still prints its results and exits with 130; a
run that an error (an I/O error) ended early prints the results of the work
done before it, then the error's line, and exits with its status (see
:mod:`iolab.cli.main`). A usage error that click finds (a path that does
not exist, a bad ``--output-format``, a mistyped command) is one line too,
naming what to do (:func:`usage_line`), not click's boxed usage block.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
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


class NoSuchCommand(click.UsageError):
    """A mistyped command; its message already says what to do."""


def _help_instead(e: click.UsageError) -> bool:
    """click's "no arguments: show the help" is a UsageError too; it stays the help."""
    return type(e).__name__ == "NoArgsIsHelpError"


def usage_line(e: click.UsageError) -> str:
    """A usage error as the one line the guide promises: what was wrong, then what to do."""
    text = " ".join(e.format_message().split()).rstrip(".")
    path = e.ctx.command_path if e.ctx is not None else "iolab"
    if isinstance(e, NoSuchCommand):
        return f"{path}: {text}"
    if isinstance(e, click.BadParameter) and "does not exist" in text:
        return f"{path}: {text}: check the path (relative paths are from {os.getcwd()})"
    return f"{path}: {text}; '{path} -h' shows the usage"


class IolabGroup(TyperGroup):
    """The command group: runs a command and maps its errors."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Any, Any, list[str]]:
        """An unknown command, with the nearest ones (click and typer each
        added its own "Did you mean", so 'rnu' suggested 'run' twice)."""
        try:
            return click.Group.resolve_command(self, ctx, args)
        except click.UsageError as e:
            if not args or args[0] in self.commands:
                raise
            visible = [n for n, c in self.commands.items() if not c.hidden]
            near = difflib.get_close_matches(args[0], visible)
            hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
            raise NoSuchCommand(f"no such command {args[0]!r}; {hint}('iolab -h' lists the commands)", ctx) from e

    def make_context(self, info_name: Any, args: list[str], parent: Any = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:  # `iolab --bogus`: before any command runs
            if _help_instead(e):
                raise
            typer.echo(usage_line(e), err=True)
            raise typer.Exit(EXIT_JOB) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            if _help_instead(e):
                raise
            typer.echo(usage_line(e), err=True)
            raise typer.Exit(EXIT_JOB) from None
        except BrokenPipeError:
            # The reader went away (`iolab show RUN | head`): not an error of
            # ours. Point stdout at /dev/null so the interpreter's final flush
            # does not complain, and exit like `head`'s writer would.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except (IolabError, OSError, KeyboardInterrupt) as e:
            typer.echo(f"iolab: {message(e)}", err=True)
            raise typer.Exit(exit_status(e)) from None
