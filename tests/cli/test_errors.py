"""Bad input: each class of mistake is one line on stderr, a distinct exit
status, no traceback, and nothing touched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BASE = ["--name=t", "--rw=randread", "--bs=4k", "--runtime=1", "--time_based"]


def assert_one_line_error(r, code: int, *needles: str) -> None:
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output, r.output
    assert r.stdout == "", r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.output
    for n in needles:
        assert n in lines[0], r.output


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("--bs=0", "bs"),
        ("--iodepth=-1", "iodepth"),
        ("--rwmixread=101", "rwmixread"),
        ("--size=lots", "size"),
    ],
)
def test_invalid_values(cli, workdir, option, needle):
    r = cli("run", *BASE, "--filename=f", "--size=1m", option)
    assert_one_line_error(r, 2, needle)
    assert not (workdir / "f").exists()


def test_unknown_option_names_it_and_hints(cli, workdir):
    r = cli("run", *BASE, "--filename=f", "--size=1m", "--iodeph=4")
    assert_one_line_error(r, 2, "iodeph", "iodepth")


def test_missing_directory(cli, workdir):
    r = cli("run", *BASE, "--filename=no/such/dir/f", "--size=1m")
    assert_one_line_error(r, 1, "no/such/dir")


def test_missing_job_file(cli, workdir):
    r = cli("run", "nonexistent.fio")
    assert_one_line_error(r, 1, "nonexistent.fio")


def test_file_too_small_for_a_read_job(cli, workdir):
    (workdir / "small").write_bytes(b"x" * 4096)
    r = cli("run", *BASE, "--filename=small", "--size=16m")
    assert r.exit_code in (1, 3), r.output
    assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1, r.output
    assert "small" in r.stderr, r.output
    assert (workdir / "small").read_bytes() == b"x" * 4096


def test_existing_file_is_refused_and_unchanged(cli, workdir):
    data = os.urandom(2 * 2**20)
    (workdir / "precious").write_bytes(data)
    r = cli("run", "--name=w", "--rw=randwrite", "--bs=4k", "--size=1m", "--filename=precious")
    assert_one_line_error(r, 3, "precious", "--allow-overwrite")
    assert (workdir / "precious").read_bytes() == data


def test_existing_file_is_written_with_allow_overwrite(cli, workdir):
    data = os.urandom(2**20)
    (workdir / "scratch").write_bytes(data)
    r = cli("run", "--allow-overwrite", "--name=w", "--rw=write", "--bs=64k", "--size=1m", "--filename=scratch")
    assert r.exit_code == 0, r.output
    assert (workdir / "scratch").read_bytes() != data


def test_permission_denied(iolab_cmd, tmp_path: Path):
    """A file the user may not open: the OS's reason, one line, exit 1.

    Root ignores file modes, so as root iolab runs without the capabilities
    that let it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH)."""
    locked = tmp_path / "locked"
    locked.write_bytes(b"\0" * 2**20)
    locked.chmod(0)
    args = [*iolab_cmd, "run", *BASE, f"--filename={locked}", "--size=1m"]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv (util-linux): cannot drop file-permission override")
        args = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", *args]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    out = f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert r.returncode == 1, out
    assert "Traceback" not in r.stderr, out
    assert len(r.stderr.strip().splitlines()) == 1, out
    assert "ermission denied" in r.stderr and str(locked) in r.stderr, out


def test_closed_stdout_is_not_an_error(iolab_cmd: list[str], workdir: Path) -> None:
    # `iolab show RUN | head -1`: the reader goes away while iolab still
    # writes (77 KB of text for 64 workers: more than a pipe holds).
    run = ["run", "--name=x", "--ioengine=null", "--size=1m", "--numjobs=64", "--results", "res"]
    subprocess.run([*iolab_cmd, *run], capture_output=True, check=True)
    run_id = next((workdir / "res").glob("run-*")).name
    p = subprocess.Popen(
        [*iolab_cmd, "show", "--results", "res", run_id], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=60)
    assert rc in (0, 141), err
    assert "Traceback" not in err and "Broken pipe" not in err, err


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        # Issue 21 item 9: each of these printed click's five-line box (and 'rnu' suggested 'run' twice).
        (["rnu"], ["no such command 'rnu'", "did you mean 'run'?", "'iolab -h' lists the commands"]),
        (["report", "no/such/results"], ["iolab report:", "no/such/results", "does not exist", "check the path"]),
        (["compare", "a-dir", "b-dir"], ["iolab compare:", "'a-dir' does not exist", "check the path"]),
        (["run", "--output-format=bogus", "--name=x"], ["--output-format", "bogus", "use one or more of"]),
        (["report"], ["Missing argument 'SOURCE'", "'iolab report -h' shows the usage"]),
        (["--bogus"], ["--bogus", "'iolab -h' shows the usage"]),
    ],
)
def test_usage_errors_are_one_line_with_what_to_do(cli, workdir, args, needles):
    r = cli(*args)
    assert_one_line_error(r, 2, *needles)
    assert "╭" not in r.stderr and "Usage:" not in r.stderr, r.output
    assert r.stderr.count("did you mean") <= 1, r.output
