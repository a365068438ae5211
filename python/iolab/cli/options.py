"""Options shared by several commands, declared once so their help cannot drift."""

from __future__ import annotations

from typing import Annotated

import typer

AllowOverwrite = Annotated[
    bool,
    typer.Option(
        "--allow-overwrite",
        help="Allow writing to existing files iolab did not create and to block devices "
        "(never to mounted devices or ones holding a filesystem).",
    ),
]
