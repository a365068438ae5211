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
    r = cli("options")
    assert r.exit_code == 0, r.output
    for opt in _native.option_table():
        assert opt["name"] in r.stdout, opt["name"]


def test_options_markdown(cli):
    r = cli("options", "--markdown")
    assert r.exit_code == 0, r.output
    assert r.stdout == _native.options_markdown()


def test_docs_are_current(cli):
    r = cli("docs", "--check", str(ROOT / "docs"))
    assert r.exit_code == 0, r.output + "\nregenerate with: .venv/bin/iolab docs docs"


def test_every_cli_option_is_documented():
    text = (ROOT / "docs" / "cli.md").read_text()
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    ctx = click.Context(root, info_name="iolab")
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        assert cmd is not None
        if cmd.hidden:
            continue
        assert f"`iolab {name}`" in text, name
        for p in cmd.params:
            names = [p.human_readable_name] if isinstance(p, click.Argument) else p.opts
            for opt in names:
                assert f"`{opt}`" in text, f"{name} {opt}"


def test_every_job_option_is_documented():
    text = (ROOT / "docs" / "options.md").read_text()
    for opt in _native.option_table():
        assert opt["name"] in text, opt["name"]


def test_cli_markdown_is_deterministic():
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    assert cli_markdown(root) == cli_markdown(root)
