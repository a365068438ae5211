"""The ``iolab`` command line (typer).

Each command parses its arguments, calls one library function and renders
the outcome; nothing else. Library errors become a one-line message and an
exit status in exactly one place, :class:`iolab.cli.errors.IolabGroup`.

- :mod:`iolab.cli.main`: the app and its commands (run, quick, options, version).
- :mod:`iolab.cli.render`: how results, prepared jobs and tables are printed.
- :mod:`iolab.cli.docs`: docs/cli.md, generated from the commands themselves.
"""
