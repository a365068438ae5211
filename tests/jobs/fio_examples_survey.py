"""Survey: does iolab run the job files of fio's examples/ directory?

Usage: ``python tests/jobs/fio_examples_survey.py FIO_CHECKOUT/examples``

Takes every job file whose engine is general-purpose (libaio, sync, psync,
vsync, pvsync, pvsync2, io_uring, null, nbd, mmap, cpuio, or no ioengine
line), runs ``iolab run --parse-only`` on it as written, then — where it
parses — a short real run in a scratch directory with sizes shrunk
(``--size=4m --runtime=1s``; devices other than /dev/null and /dev/zero
replaced by a scratch file, which is also given to files written to be
handed a device on the command line (``allow_file_create=0`` and no
``filename``, or comments that run them as ``fio --filename=/dev/...``);
``directory=`` pointed at the scratch directory; ``filesize=`` shrunk to
4 MiB; ``zonemode=zbd`` jobs get
two 32 MiB zones from the file's start (``--zonesize=32m --size=64m --offset=0``); ``offset_increment`` stripes shrunk to
4 MiB (``--io_size=1m``); nbd jobs
get an iolab target with a memory export on a private Unix socket). Prints a Markdown table: file, engine, parse, short run, and the
first error (the named fio feature that stopped it). docs/options.md keeps
the table; the job files themselves are not copied into this repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.waits import wait_until

GENERAL = {"libaio", "sync", "psync", "vsync", "pvsync", "pvsync2", "io_uring", "null", "nbd", "mmap", "cpuio"}
IOLAB = [sys.executable, "-m", "iolab.cli.main", "run"]
#: Values for the variables fio's examples leave to the user.
ENV = {
    "uri": "nbd+unix:///survey?socket=/nonexistent.sock",
    "FIO_BS": "4k",
    "FIO_RW": "randwrite",
    "FIO_IODEPTH": "1",
}
_ENGINE = re.compile(r"^\s*ioengine\s*=\s*([\w.-]+)", re.M)
_ZBD = re.compile(r"^\s*zonemode\s*=\s*zbd", re.M)
_DEVICE = re.compile(r"^\s*filename\s*=\s*/dev/(?!null\b|zero\b)", re.M)
_CLI_DEVICE = re.compile(r"^\s*[;#].*\bfio\b.*--filename=/dev/", re.M)


def engines(text: str) -> set[str]:
    return set(_ENGINE.findall(text))


def first_error(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("note:", "fio log:"))]
    err = [ln for ln in lines if ln.startswith("iolab:")] or lines[-1:] or ["?"]
    # "/where/examples/x.fio:12: ..." -> "x.fio:12: ...": the table is about fio's files, not this machine.
    message = re.sub(r"^/\S*/(?=[^/\s]+:\d+: )", "", err[0].removeprefix("iolab: "))
    return message.replace("|", "\\|")[:160]


def survey_one(path: Path, scratch: Path) -> tuple[str, str, str]:
    """(parses, short run, first refusal) of one job file."""
    text = path.read_text()
    env = {**os.environ, **ENV}
    image = scratch / "survey.img"
    # Files whose comments run them as `fio --filename=/dev/... FILE` get the scratch image.
    on_cli = _CLI_DEVICE.search(text) and not re.search(r"^\s*filename\s*=", text, re.M)
    given = [f"--filename={image}"] if on_cli else []
    parse = subprocess.run(
        [*IOLAB, str(path), "--parse-only", *given], capture_output=True, text=True, env=env, timeout=60
    )
    if parse.returncode != 0:
        return "no", "-", first_error(parse.stderr)
    extra = ["--size=4m", "--runtime=1s"]
    no_file = not re.search(r"^\s*filename\s*=", text, re.M)
    if (re.search(r"^\s*allow_file_create\s*=\s*0", text, re.M) and no_file) or on_cli:
        # Written to be given a device on the command line (--filename=/dev/nvme0n1).
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        extra += [f"--filename={image}", "--allow-overwrite"]  # the scratch image made just now
    elif _DEVICE.search(text):
        extra.append(f"--filename={image}")
    if _ZBD.search(text):
        # Emulated zones shrunk with the sizes: two 32 MiB zones (blocks of up
        # to 32 MiB must fit in a zone) from the file's start.
        extra += ["--zonesize=32m", "--size=64m", "--offset=0"]
    if re.search(r"^\s*filesize\s*=", text, re.M):
        # File sizes shrunk with the sizes (enospc-pressure.fio's 128 GiB files).
        extra.append("--filesize=4m")
    if re.search(r"^\s*offset_increment\s*=", text, re.M):
        # Stripes per clone shrunk with the sizes (one 4 MiB stripe each).
        extra += ["--offset_increment=4m", "--io_size=1m"]
    if re.search(r"^\s*directory\s*=", text, re.M):
        extra.append(f"--directory={scratch}")
    if "nbd" in engines(text):
        with nbd_target(scratch) as uri:
            return _short_run(path, extra, {**env, "uri": uri}, scratch)
    return _short_run(path, extra, env, scratch)


#: Longest a short run may take: startdelay in fio's examples reaches 124 s
#: (1mbs_clients.fio starts its last client then, as fio would), plus layout.
SHORT_RUN_TIMEOUT_S = 180


def _short_run(path: Path, extra: list[str], env: dict[str, str], scratch: Path) -> tuple[str, str, str]:
    try:
        run = subprocess.run(
            [*IOLAB, str(path), *extra, "--output-format=terse"],
            capture_output=True,
            text=True,
            env=env,
            cwd=scratch,
            timeout=SHORT_RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return "yes", "no", f"the short run did not end within {SHORT_RUN_TIMEOUT_S} s"
    if run.returncode != 0:
        return "yes", "no", first_error(run.stderr)
    return "yes", "yes", ""


@contextmanager
def nbd_target(scratch: Path) -> Iterator[str]:
    """An iolab target serving a 256 MiB memory export on a private Unix
    socket for the job's lifetime; yields its NBD URI."""
    sock = scratch / "nbd.sock"
    target = subprocess.Popen(
        [sys.executable, "-m", "iolab.cli.main", "target", "--unix", str(sock), "--export", "survey=memory,size=256m"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(sock.exists, 30, "iolab target's socket", target)
        yield f"nbd+unix:///survey?socket={sock}"
    finally:
        target.terminate()
        target.wait(timeout=30)


def main(examples: Path) -> int:
    rows = []
    for path in sorted(examples.glob("*.fio")):
        used = engines(path.read_text())
        if used - GENERAL:
            continue
        with tempfile.TemporaryDirectory(prefix="iolab-survey-") as tmp:
            parsed, ran, error = survey_one(path, Path(tmp))
        rows.append((path.name, ", ".join(sorted(used)) or "(none)", parsed, ran, error))
    print("| job file | ioengine | parses | short run | first refusal |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    ok = sum(1 for r in rows if r[3] == "yes")
    print(f"\n{ok} of {len(rows)} run; {sum(1 for r in rows if r[2] == 'yes')} parse.")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
