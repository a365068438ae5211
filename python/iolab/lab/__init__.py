"""Labs: published storage studies re-run with iolab, each table measured
and printed beside the study's own reference values.

``raid``: seed 003, Intel's RAID bootcamp workbook (labs 1B, 1C, 1D, 2A,
2B) against a simulated 6-drive RAID 5 that iolab serves itself, or against
real storage (see docs/raid-lab.md).

``fio_study``: seed 002, fio on one SSD (block size, read/write mix, queue
depth): its commands as written, its figures checked, its analysis
verdicted (see docs/labs.md).
"""
