"""The methodology note for fleet hosts that draw the same offsets on one
target (iolab.fleet.seeds): only random jobs that fix randseed, only hosts
sharing a target; the seeds themselves are checked in the core
(crates/iolab-core/tests/integration/gen.rs, ``jobs_and_hosts_differ_unless_randseed_is_given``)."""

from __future__ import annotations

from iolab.fleet.seeds import same_sequence_notes, seed_keys
from iolab.jobs import JobSpec


def _spec(*opts: tuple[str, str]) -> JobSpec:
    return JobSpec("r", (("rw", "randread"), ("bs", "4k"), *opts))


def test_hosts_sharing_a_target_and_a_fixed_seed_get_one_note() -> None:
    shared = [seed_keys([_spec(("uri", "nbd://t/d"), ("randseed", "7"))]) for _ in range(3)]
    (note,) = same_sequence_notes(shared, ["a", "b", "c"])
    assert "hosts a, b, c draw the same offsets for job 'r' on nbd://t/d (randseed=7 given)" in note
    assert "drop randseed" in note


def test_no_note_without_a_fixed_seed_another_target_or_sequential_io() -> None:
    assert seed_keys([_spec(("uri", "nbd://t/d"))]) == []  # each host's rank is mixed into its seeds
    assert seed_keys([JobSpec("s", (("rw", "read"), ("filename", "/dev/x"), ("randseed", "7")))]) == []
    own = [seed_keys([_spec(("filename", f"/data/{h}"), ("randseed", "7"))]) for h in "ab"]
    assert same_sequence_notes(own, ["a", "b"]) == []
