"""Many hosts on MPI: one run driven from N ranks, one exact result.

- :mod:`iolab.fleet.env`: is this process under an MPI launcher, how many
  ranks were asked for, and the check that MPI agrees (srun without PMI
  starts N singletons that each think they are rank 0 of 1).
- :mod:`iolab.fleet.comm`: the few MPI operations the fleet uses, over
  mpi4py: collectives before the start (every rank is alive), non-blocking
  point-to-point under a deadline after it (a rank may die at any moment).
- :mod:`iolab.fleet.hosts`: the hosts table (TOML): per-host or per-rank
  options (filename, uri, cpus_allowed, rate_iops).
- :mod:`iolab.fleet.clock`: clock offsets and round trips by ping-pong, the
  common start instant, the start skew.
- :mod:`iolab.fleet.merge`: per-host results → one exact total (histogram
  buckets summed, never percentiles averaged), the per-host table.
- :mod:`iolab.fleet.live`: one interval of the cluster (a row per host and
  a total) and its renderers: terminal table, Prometheus text, live page.
- :mod:`iolab.fleet.prepare`: every rank prepares its engine in waves, so
  ranks that share a file lay it out once.
- :mod:`iolab.fleet.runner`: the run on every rank: broadcast, start
  together, interval gathering, the watchdog, the final gather.
- :mod:`iolab.fleet.report`: the fleet part of ``iolab report`` in every
  format (per host, spread, start skew).
- :mod:`iolab.fleet.launch`: ``iolab fleet -n N``'s mpiexec command line.

mpi4py is imported only by :mod:`iolab.fleet.comm`, and only under MPI,
so a plain ``iolab run`` never loads it.
"""
