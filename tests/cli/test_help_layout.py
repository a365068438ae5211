"""Help pages read as paragraphs on an 80-column terminal.

Typer joins the lines of a command's first help paragraph but keeps the
line breaks of the others: a line longer than the terminal is wrapped by
the terminal and then broken by the source's own newline, leaving an
orphan of a few words per line (`iolab lab pacing --help` did). The
first paragraph (a command's line in its group's list) may be any length;
examples (lines indented by two spaces) are commands to copy, not prose.
"""

from __future__ import annotations

import inspect

import click
import typer
from iolab.cli.main import app

#: Typer's help text sits one column in, inside an 80-column terminal.
WIDTH = 78


def _commands(c: click.Command, path: str) -> list[tuple[str, click.Command]]:
    out = [(path, c)]
    if isinstance(c, click.Group):
        for name, sub in c.commands.items():
            out += _commands(sub, f"{path} {name}")
    return out


def test_help_paragraphs_fit_an_80_column_terminal() -> None:
    long = []
    for path, c in _commands(typer.main.get_command(app), "iolab"):
        paragraphs = inspect.cleandoc(c.help or "").split("\n\n")[1:]
        for line in (ln for p in paragraphs for ln in p.splitlines()):
            if len(line) > WIDTH and not line.startswith("  "):
                long.append(f"{path}: {len(line)} chars: {line[:40]}...")
    assert not long, long
