"""Labs: published storage studies re-run with iolab, each table measured
and printed beside the study's own reference values.

``raid``: seed 003, Intel's RAID bootcamp workbook (labs 1B, 1C, 1D, 2A,
2B) against a simulated 6-drive RAID 5 that iolab serves itself, or against
real storage (see docs/raid-lab.md).

``fio_study``: seed 002, fio on one SSD (block size, read/write mix, queue
depth): its commands as written, its figures checked, its analysis
verdicted (see docs/labs.md).

``fleet_lab``: seed 001, VM Fleet on Storage Spaces Direct: VMs as ranks
of ``iolab fleet`` on nodes (network namespaces where root), each under
its own QoS limit against a 3-way mirror of simulated SSDs per node, a
live cluster view, the post's figures beside the measured ones (see
docs/labs.md).
"""
