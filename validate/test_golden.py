"""Golden counts from real applications (validate/, docs/validation.md): each
application from its Debian package at 2 ranks under `scalewise run`, every
deterministic function's calls and bytes per rank against mpiP's figures."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from golden import LAUNCHERS, app_names, load_app, validate, work_dir

CASES = [(name, flavour) for name in app_names() for flavour in load_app(name).commands]
SONAMES = {"openmpi": "libmpi.so.40", "mpich": "libmpich.so.12"}


@pytest.mark.parametrize("name,flavour", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_application_matches_its_goldens(name, flavour):
    app = load_app(name)
    exe = shutil.which(app.commands[flavour][0])
    assert exe, f"{app.commands[flavour][0]} is not installed: `make validate` installs {', '.join(app.packages)}"
    outcome = validate(app, flavour, work_dir(name, flavour))
    assert outcome.checked >= 3, f"only {outcome.checked} functions compared"
    assert outcome.problems() == []


@pytest.mark.parametrize("name", app_names())
def test_every_mpi_is_covered_or_says_why(name):
    app = load_app(name)
    for flavour in LAUNCHERS:
        covered = flavour in app.commands
        reasons = [r for r in (app.not_provided.get(flavour), app.broken.get(flavour)) if r]
        assert covered != bool(reasons), f"{name} on {flavour}: a command, or one reason it has none"
        if covered:  # the binary Debian ships is linked with the MPI it is run under
            out = subprocess.run(["ldd", shutil.which(app.commands[flavour][0])], capture_output=True, text=True).stdout
            assert SONAMES[flavour] in out, f"{name}: {app.commands[flavour][0]} is not linked with {SONAMES[flavour]}"


@pytest.mark.parametrize("name,flavour", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_goldens_are_mpips_figures(name, flavour):
    """Each golden is mpiP's figure (or a stated transform of it) in the stored report."""
    from golden import golden_functions, parse_mpip

    app = load_app(name)
    golden = json.loads(app.golden_path(flavour).read_text())
    mpip = parse_mpip(app.mpip_path(flavour).read_text(), app.ranks)
    assert golden["functions"] == golden_functions(mpip, app.ranks, app.received_bytes, app.unmoved_bytes)
    excluded_unknown = set(app.excluded) - set(golden["functions"])
    assert not excluded_unknown, f"excluded functions mpiP never recorded: {sorted(excluded_unknown)}"


def test_the_setup_script_installs_every_applications_packages():
    import re

    from golden import ROOT

    script = (ROOT / "scripts" / "setup-system.sh").read_text()
    group = set(re.search(r'^validate="([^"]*)"', script, re.M).group(1).split())
    wanted = {p for name in app_names() for p in load_app(name).packages}
    assert wanted <= group, f"missing from the validate group: {sorted(wanted - group)}"
