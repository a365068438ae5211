"""`iolab options`, `iolab version`, and the generated docs/cli.md."""

from __future__ import annotations

from pathlib import Path

import click
import typer
from iolab import _native
from iolab.cli.docs import cli_markdown
from iolab.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def test_version(cli):
    r = cli("version")
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"iolab {_native.version()}"


def test_options_lists_every_option(cli):
    # The engine's and those handled around it (tests/jobs/test_option_surface.py checks every accepted name).
    from iolab.jobs.extras import EXTRA_OPTIONS

    r = cli("options")
    assert r.exit_code == 0, r.output
    heads = {line.split()[0] for line in r.stdout.splitlines() if line and not line[0].isspace()}
    for name in [o["name"] for o in _native.option_table()] + [d.name for d in EXTRA_OPTIONS]:
        assert name in heads, name


def test_options_markdown(cli):
    from iolab.jobs.compat import extras_section

    r = cli("options", "--markdown")
    assert r.exit_code == 0, r.output
    assert r.stdout == _native.options_markdown() + extras_section()


def test_docs_are_current(cli):
    r = cli("docs", "--check", str(ROOT / "docs"))
    assert r.exit_code == 0, r.output + "\nregenerate with: .venv/bin/iolab docs docs"


def test_every_cli_option_is_documented():
    text = (ROOT / "docs" / "cli.md").read_text()
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    ctx = click.Context(root, info_name="iolab")
    # Subcommands of groups too (`iolab lab raid`), each in its own section.
    todo: list[tuple[str, click.Group, click.Context]] = [("", root, ctx)]
    seen: list[str] = []
    while todo:
        prefix, group, gctx = todo.pop()
        for sub in group.list_commands(gctx):
            c = group.get_command(gctx, sub)
            assert c is not None
            if isinstance(c, click.Group):
                todo.append((f"{prefix}{sub} ", c, click.Context(c, info_name=sub, parent=gctx)))
            seen.append(f"{prefix}{sub}")
    assert "lab raid" in seen
    for name in seen:
        cmd = root
        for part in name.split():
            got = cmd.get_command(ctx, part) if isinstance(cmd, click.Group) else None
            assert got is not None
            cmd = got
        if cmd.hidden:
            continue
        section = text.split(f"## `iolab {name}`\n", 1)
        assert len(section) == 2, name
        body = section[1].split("\n## ", 1)[0]
        for p in cmd.params:
            names = [p.human_readable_name] if isinstance(p, click.Argument) else p.opts
            for opt in names:
                assert f"`{opt}`" in body, f"{name} {opt}"


def test_every_job_option_is_documented():
    text = (ROOT / "docs" / "options.md").read_text()
    for opt in _native.option_table():
        assert opt["name"] in text, opt["name"]


def test_cli_markdown_is_deterministic():
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    assert cli_markdown(root) == cli_markdown(root)


def _commands(group: click.Group, ctx: click.Context) -> list[click.Command]:
    out: list[click.Command] = []
    for name in group.list_commands(ctx):
        c = group.get_command(ctx, name)
        assert c is not None
        out.append(c)
        if isinstance(c, click.Group):
            out += _commands(c, click.Context(c, info_name=name, parent=ctx))
    return out


def test_help_loses_no_bracket_to_rich_markup():
    # Session 12: `iolab find --help` printed the SLO grammar as "pPCT<DURATION ... and iops>N" and
    # `iolab sweep --help` "as its  table says": rich read [read.|write.], [quick], [base] as
    # markup and dropped them. Every help text must render as written (write `\[` for `[`).
    from rich.text import Text

    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    for cmd in [root, *_commands(root, click.Context(root, info_name="iolab"))]:
        texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
        for text in texts:
            assert Text.from_markup(text).plain == text.replace("\\[", "["), (cmd.name, text)
