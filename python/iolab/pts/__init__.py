"""``iolab pts``: the SNIA Solid State Storage Performance Test
Specification's procedure — purge, preconditioning, rounds of a test's
matrix until a 5-round window is steady — and its report.

- :mod:`iolab.pts.steady`: the steady-state window and its figures (pure);
- :mod:`iolab.pts.tests`: the five tests' matrices (IOPS, throughput,
  latency, WSAT, DIRTH), their tracking variables, the shrunk forms;
- :mod:`iolab.pts.purge`: purge of an NBD export, a block device, a file,
  and the safety checks in front of it;
- :mod:`iolab.pts.settings`: the spec's defaults, what shrinking them
  means, the target, the safety checks and the purge in front of it;
- :mod:`iolab.pts.procedure`: the rounds, each cell a run through the run
  pipeline kept as a point of a sweep directory; ``pts.json``;
- :mod:`iolab.pts.report`: the report in the spec's layout (text, md, html);
- :mod:`iolab.pts.wa`: the write amplification and steady random-write IOPS
  sim-ssd's greedy GC predicts (what WSAT on the simulated SSD is checked against).
"""
