"""Survey: does iolab run the fio command lines users paste?

Usage: ``python tests/jobs/cmdline_survey.py CORPUS [--json OUT] [--before BEFORE.json] [--kinds KINDS.json]``

CORPUS is a tab-separated file, one command line a row: where it came from
(a search id or a URL), then the arguments after ``fio`` as written, with
only the survey's own changes made in the corpus: ``{DEV}`` where the line
names a device or a file that must already exist, ``{DIR}`` where it names a
mount point, shell variables given the scripts' defaults. Lines starting
with ``#`` are comments. The corpus is third-party text and is kept outside
this repository; docs/options.md keeps the table this prints.

Each line is run after ``iolab run`` (the ``iolab`` of ``PYTHONPATH``) as
written, except: ``{DEV}`` becomes a 64 MiB scratch file, ``{DIR}`` a
scratch directory, sizes (``size``, ``filesize``, ``io_size``, ``offset``,
``offset_increment``, ``lockmem``) become 16m and times (``runtime``,
``ramp_time``) 1s; nothing is added. First ``--parse-only``, then a short
run in a fresh scratch directory (with ``--allow-overwrite`` where ``{DEV}``
stands for a device: the scratch file exists, and iolab asks before it
writes over a file it did not make). ``--json`` keeps each line's outcome, and
``--before`` puts an earlier run's outcomes beside this one's in the table;
``--kinds`` names what each source is (``{"SOURCE": "shell script"}``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

IOLAB = [sys.executable, "-m", "iolab.cli.main", "run"]
SIZES = {"size", "filesize", "io_size", "offset", "offset_increment", "lockmem"}
TIMES = {"runtime", "ramp_time"}
SHORT_RUN_TIMEOUT_S = 120


def shrink(args: list[str]) -> list[str]:
    """``args`` with sizes shrunk to 16m and times to 1s, in either spelling
    (``--size=4G``, ``-size 4G``)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        m = re.fullmatch(r"(--?)([\w-]+)(=.*)?", tok)
        name = m.group(2) if m else ""
        new = "16m" if name in SIZES else "1s" if name in TIMES else None
        if m is None or new is None:
            out.append(tok)
        elif m.group(3) is not None:
            out.append(f"{m.group(1)}{name}={new}")
        else:  # the value is the next word
            out += [tok, new]
            i += 1
    return out


def first_error(stderr: str, stdout: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("note:", "fio log:"))]
    err = [ln for ln in lines if ln.startswith(("iolab:", "Error"))] or lines[-1:] or stdout.splitlines()[:1] or ["?"]
    if "Traceback" in stderr:
        err = ["traceback: " + lines[-1]]
    return err[0].removeprefix("iolab: ").replace("|", "\\|")[:160]


def survey_one(args: list[str], env: dict[str, str]) -> tuple[str, str, str]:
    """(parses, short run, first refusal) of one command line."""
    with tempfile.TemporaryDirectory(prefix="iolab-cmdline-") as tmp:
        scratch = Path(tmp)
        (scratch / "dir").mkdir()
        (scratch / "temp").mkdir()  # a folder scripts make before their run (mkdir -p ./temp)
        device = scratch / "device.img"
        with open(device, "wb") as f:
            f.truncate(64 << 20)
        words = [a.replace("{DEV}", str(device)).replace("{DIR}", str(scratch / "dir")) for a in shrink(args)]

        def iolab(*extra: str) -> subprocess.CompletedProcess[str]:
            cmd = [*IOLAB, *words, *extra]
            return subprocess.run(
                cmd, capture_output=True, text=True, env=env, cwd=scratch, timeout=SHORT_RUN_TIMEOUT_S
            )

        parse = iolab("--parse-only")
        if parse.returncode != 0 or "Usage:" in parse.stdout:
            return "no", "-", first_error(parse.stderr, parse.stdout)
        try:
            run = iolab("--allow-overwrite") if "{DEV}" in " ".join(args) else iolab()
        except subprocess.TimeoutExpired:
            return "yes", "no", f"the short run did not end within {SHORT_RUN_TIMEOUT_S} s"
        if run.returncode != 0:
            return "yes", "no", first_error(run.stderr, run.stdout).replace(str(scratch), "SCRATCH")
        return "yes", "yes", ""


def read_corpus(path: Path) -> list[tuple[str, list[str]]]:
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            source, _, text = line.partition("\t")
            rows.append((source, shlex.split(text)))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--json", type=Path, help="Keep each line's outcome here.")
    ap.add_argument("--before", type=Path, help="An earlier --json, shown beside this run.")
    ap.add_argument("--kinds", type=Path, help="What each source is, as JSON {source: kind}.")
    a = ap.parse_args()
    env = dict(os.environ)
    outcomes = []
    for source, args in read_corpus(a.corpus):
        parsed, ran, error = survey_one(args, env)
        outcomes.append({"source": source, "parses": parsed, "runs": ran, "error": error})
        print(f"{source}: {parsed} {ran} {error}", file=sys.stderr)
    if a.json:
        a.json.write_text(json.dumps(outcomes, indent=1))
    before = json.loads(a.before.read_text()) if a.before else None
    kinds = json.loads(a.kinds.read_text()) if a.kinds else {}
    by_source: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    stops: dict[str, list[str]] = defaultdict(list)
    for i, o in enumerate(outcomes):
        row = by_source[o["source"]]
        row[0] += 1
        row[1] += before is not None and before[i]["runs"] == "yes"
        row[2] += o["runs"] == "yes"
        if o["error"]:
            stops[o["source"]].append(o["error"])
    print("| source | what it is | lines | run before | run now | what stops the rest |")
    print("|---|---|---|---|---|---|")
    for source, (n, was, now) in by_source.items():
        was_text = str(was) if before is not None else "-"
        print(f"| {source} | {kinds.get(source, '')} | {n} | {was_text} | {now} | {'; '.join(stops[source])} |")
    total_before = sum(r[1] for r in by_source.values())
    total_now = sum(r[2] for r in by_source.values())
    print(f"\n{total_now} of {len(outcomes)} run" + (f" ({total_before} before)" if before is not None else "") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
