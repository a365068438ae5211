"""Running jobs. ``iolab.run(jobs, ...)`` calls this package: the library
API's run (``iolab/__init__.py``: :func:`iolab.run.api.run` with fio's log
files written); ``import iolab.run`` gives the package itself.

- :mod:`iolab.run.pipeline`: one run, start to end — prepare, start,
  poll/progress, stop, record, report — for ``iolab run``, the API and sweeps.
- :mod:`iolab.run.local`: the driver of one local run (prepare, progress,
  Ctrl-C, result and summary) → :class:`~iolab.run.local.RunOutput`.
- :mod:`iolab.run.progress`: live progress on a terminal, silent elsewhere.
- :mod:`iolab.run.api`: ``Job``, ``prepare``, ``run`` (re-exported by ``iolab``).
- :mod:`iolab.run.sources`: jobs from a command line (job files and fio options).
- :mod:`iolab.run.quick`: the standard one-minute characterisation.
"""
