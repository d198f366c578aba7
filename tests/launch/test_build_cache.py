"""The per-MPI build cache is shared by every checkout: a part's objects made from another checkout
(whose dependency files name sources that may be gone) are dropped before make runs, this checkout's kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewise.launch.mpibuild import _forget_other_checkout


def _objects(out: Path, part: str) -> Path:
    obj = out / "obj" if part == "runtime" else out / "proxies" / "obj"
    (obj / "sem").mkdir(parents=True)
    (obj / "sem" / "partition.d").write_text("obj/sem/partition.o: /gone/checkout/proxies/sem/partition.c\n")
    return obj


@pytest.mark.parametrize("part", ["runtime", "proxies"])
def test_objects_of_another_checkout_are_dropped(tmp_path, part):
    out, here = tmp_path / "mpich-5.0.2", tmp_path / "checkout"
    obj = _objects(out, part)
    (out / f".{part}-source").write_text("/gone/checkout")
    _forget_other_checkout(out, part, here)
    assert not obj.exists()


@pytest.mark.parametrize("part", ["runtime", "proxies"])
def test_objects_of_no_known_checkout_are_dropped(tmp_path, part):
    out = tmp_path / "mpich-5.0.2"
    obj = _objects(out, part)
    _forget_other_checkout(out, part, tmp_path / "checkout")
    assert not obj.exists()


@pytest.mark.parametrize("part", ["runtime", "proxies"])
def test_this_checkouts_objects_are_kept(tmp_path, part):
    out, here = tmp_path / "mpich-5.0.2", tmp_path / "checkout"
    obj = _objects(out, part)
    (out / f".{part}-source").write_text(str(here))
    _forget_other_checkout(out, part, here)
    assert (obj / "sem" / "partition.d").is_file()
