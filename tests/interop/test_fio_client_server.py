"""A fleet's fio-json/json+ against fio 3.33's own client/server output
(``fio --client=A job --client=B job --output-format=json+``, two fio
servers on private sockets): the same top-level keys, the same keys in each
host's entry (less ``FIO_OMITTED_KEYS``, plus ``"iolab"``) and in the
``All clients`` entry, whose bins fio 3.33 leaves out (it writes them
since 3.39) and iolab writes from the exact merge."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from iolab.fleet.output import formatted
from iolab.results import FIO_OMITTED_KEYS

from tests.fleet.synth import fleet_results, hosts
from tests.peers import require_peer
from tests.waits import wait_until

Json = dict[str, Any]
OMIT_JOB = {k.split(".", 1)[1] for k in FIO_OMITTED_KEYS if k.startswith("job.")}
JOB = "[a]\nioengine=null\nsize=4m\nbs=4k\nrw=randread\n"


def _fio_client_server(tmp: Path) -> Json:
    fio = require_peer("fio")
    (tmp / "j.fio").write_text(JOB)
    socks = [tmp / "s1", tmp / "s2"]
    servers = [
        subprocess.Popen([fio, f"--server=sock:{s}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for s in socks
    ]
    try:
        wait_until(lambda: all(s.exists() for s in socks), timeout_s=30, what="fio servers listening")
        args = [a for s in socks for a in (f"--client=sock:{s}", "j.fio")]
        out = subprocess.run(
            [fio, "--output-format=json+", *args], cwd=tmp, capture_output=True, text=True, timeout=60, check=True
        )
    finally:
        for p in servers:
            p.kill()
            p.wait(timeout=30)
    # The client prints its servers' text lines ("<host> ...") before the JSON.
    return dict(json.loads(out.stdout[out.stdout.index("\n{") + 1 :]))


def test_fleet_json_plus_has_fios_client_server_layout(tmp_path: Path) -> None:
    fio = _fio_client_server(tmp_path)
    per_host, _ = hosts(2, 300)
    ours = json.loads(formatted(fleet_results(per_host), "json+"))
    assert "jobs" not in fio and "jobs" not in ours
    assert set(ours) - {"iolab version", "iolab", "timestamp_ms"} == set(fio) - {"global options"}
    f_clients = [e for e in fio["client_stats"] if e["jobname"] != "All clients"]
    (f_all,) = [e for e in fio["client_stats"] if e["jobname"] == "All clients"]
    o_clients = [e for e in ours["client_stats"] if e["jobname"] != "All clients"]
    (o_all,) = [e for e in ours["client_stats"] if e["jobname"] == "All clients"]
    assert len(f_clients) == len(o_clients) == 2
    for f, o in ((f_clients[0], o_clients[0]), (f_all, o_all)):
        assert set(o) == (set(f) - OMIT_JOB) | {"iolab"}, (f["jobname"], set(o) - set(f), set(f) - set(o))
        assert {"hostname", "port"} <= set(o)
    # Each host's bins: in fio's and ours. All clients: fio 3.33 has neither percentiles nor bins.
    assert "bins" in f_clients[0]["read"]["clat_ns"] and "bins" in o_clients[0]["read"]["clat_ns"]
    assert "bins" not in f_all["read"]["clat_ns"] and "bins" in o_all["read"]["clat_ns"]
