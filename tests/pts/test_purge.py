"""Purge through NBD, and the device safety checks on injected system tables."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from iolab.errors import RefusedError
from iolab.pts import purge as purging
from iolab.run.api import Job, run

from tests.pts.served import served


def _read(client: purging.NbdClient, offset: int, length: int) -> bytes:
    client.handle += 1
    client.sock.sendall(struct.pack(">IHHQQI", purging.REQUEST_MAGIC, 0, 0, client.handle, offset, length))
    magic, error, _ = struct.unpack(">IIQ", client._recv(16))
    assert magic == purging.SIMPLE_REPLY_MAGIC and error == 0
    return client._recv(length)


def test_nbd_purge_trims_the_whole_export(tmp_path: Path) -> None:
    with served(tmp_path, mem="memory,size=8m") as uris:
        uri = uris["mem"]
        run(Job("fill", ioengine="nbd", uri=uri, rw="write", bs="1m", size="8m"))
        client = purging.NbdClient(uri)
        try:
            assert client.size_bytes == 8 << 20
            assert any(_read(client, 7 << 20, 4096))  # written: not all zeros
        finally:
            client.close()
        assert purging.export_size(uri) == 8 << 20
        assert purging.purge_nbd(uri) == purging.Purged("nbd TRIM", 8 << 20)
        client = purging.NbdClient(uri)
        try:
            assert _read(client, 0, 4096) == bytes(4096) and _read(client, (8 << 20) - 4096, 4096) == bytes(4096)
        finally:
            client.close()


def test_bad_uri_is_one_line() -> None:
    with pytest.raises(Exception, match=r"expected nbd://host\[:port\]/export"):
        purging.export_size("http://x/y")


def _tables(tmp_path: Path, mounts: str = "", swaps: str = "", holders: tuple[str, ...] = ()) -> purging.SystemTables:
    sys_block = tmp_path / "sys"
    (sys_block / "sdz" / "sdz1").mkdir(parents=True)
    (sys_block / "sdz1" / "holders").mkdir(parents=True)
    for h in holders:
        (sys_block / "sdz1" / "holders" / h).mkdir()
    (tmp_path / "mounts").write_text(mounts)
    (tmp_path / "swaps").write_text("Filename Type Size Used Priority\n" + swaps)
    return purging.SystemTables(tmp_path / "mounts", tmp_path / "swaps", sys_block)


def test_a_device_in_use_is_found_through_its_partitions(tmp_path: Path) -> None:
    dev = str(tmp_path / "sdz")  # not a real device: named by its last component, as the kernel names it
    assert purging.in_use(dev, _tables(tmp_path / "a")) is None
    mounted = _tables(tmp_path / "b", mounts="/dev/sdz1 /mnt/data ext4 rw 0 0\n")
    assert purging.in_use(dev, mounted) == "/dev/sdz1 is mounted on /mnt/data"
    assert purging.in_use(dev, _tables(tmp_path / "c", swaps="/dev/sdz1 partition 1 0 -2\n")) == (
        "/dev/sdz1 is in use as swap"
    )
    assert purging.in_use(dev, _tables(tmp_path / "d", holders=("dm-0",))) == "sdz1 is held by dm-0"
    with pytest.raises(RefusedError, match=r"sdz: /dev/sdz1 is mounted on /mnt/data: .*unmount it first"):
        purging.check_device_purge(dev, dev, True, mounted)


def test_a_device_purge_needs_the_device_named_again_and_allow_overwrite(tmp_path: Path) -> None:
    dev, tables = str(tmp_path / "sdz"), _tables(tmp_path / "t")
    with pytest.raises(RefusedError, match=r"purging erases every byte of it: confirm with --purge-device"):
        purging.check_device_purge(dev, None, True, tables)
    with pytest.raises(RefusedError, match="confirm with --purge-device"):
        purging.check_device_purge(dev, "/dev/other", True, tables)
    with pytest.raises(RefusedError, match="needs --allow-overwrite"):
        purging.check_device_purge(dev, dev, False, tables)
    purging.check_device_purge(dev, dev, True, tables)  # named twice, allowed, not in use: may purge


def test_a_file_iolab_did_not_create_is_removed_only_with_allow_overwrite(tmp_path: Path) -> None:
    f = tmp_path / "data"
    f.write_bytes(b"precious")
    with pytest.raises(RefusedError, match="exists and iolab did not create it"):
        purging.purge_file(f, allow_overwrite=False)
    assert f.read_bytes() == b"precious"
    assert purging.purge_file(f, allow_overwrite=True).bytes == 8 and not f.exists()
    assert purging.purge_file(f, allow_overwrite=False).bytes == 0
