"""Hostile and careless study files: each is one clean line naming file, line and key, in bounded time and memory.

The corpus (hostile_studies.py) is loaded in one child interpreter whose
address space is capped, under a timeout: a case that blew up memory or hung
would fail the whole test instead of slowing the suite.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

from hostile_studies import BASE, CORPUS, _custom_axes

from scalewise.campaign.expand import expand
from scalewise.campaign.study import load_study

MEMORY_CAP = 1536 * 1024 * 1024

HARNESS = textwrap.dedent("""
    import json, resource, sys, traceback
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    from scalewise.campaign.expand import expand
    from scalewise.campaign.study import load_study
    from scalewise.errors import ScalewiseError
    for path in sys.argv[1:]:
        try:
            expand(load_study(path))
            out = {{"path": path, "loaded": True}}
        except ScalewiseError as exc:
            out = {{"path": path, "error": str(exc)}}
        except BaseException:
            out = {{"path": path, "traceback": traceback.format_exc()}}
        print(json.dumps(out), flush=True)
""")


def test_every_hostile_study_is_one_clean_line(tmp_path):
    paths = {}
    for case, (data, _) in CORPUS.items():
        folder = tmp_path / case
        folder.mkdir()
        paths[case] = folder / "study.yaml"
        paths[case].write_bytes(data)
    assert len(CORPUS) >= 50
    done = subprocess.run([sys.executable, "-c", HARNESS.format(cap=MEMORY_CAP), *map(str, paths.values())],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = {r["path"]: r for r in map(json.loads, done.stdout.splitlines())}
    for case, (_, fragment) in CORPUS.items():
        r = results[str(paths[case])]
        assert "traceback" not in r, f"{case}: {r['traceback']}"
        assert "error" in r, f"{case}: loaded without an error"
        message = r["error"]
        assert "\n" not in message and fragment in message, f"{case}: {message!r}"
        assert re.match(r"^study\.yaml:\d+: \S", message), f"{case}: no file:line: {message!r}"
    # Nothing was written next to any file (no output folder, no escaped paths).
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted([*CORPUS, *(["study.yaml"] * len(CORPUS))])


def test_plan_rejects_through_the_command_line_with_exit_2(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_bytes(CORPUS["bash_function_env"][0])
    done = subprocess.run([sys.executable, "-m", "scalewise.cli.main", "study", "plan", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("scalewise: error: study.yaml:5: applications.app.env: environment name 'BASH_FUNC_date%%'")
    assert len(done.stderr.splitlines()) == 1


def test_a_plan_above_the_limit_loads_once_the_limit_is_raised(write_study):
    text = _custom_axes(2, 100).decode() + "max_runs: 20000\n"
    assert len(expand(load_study(write_study(text)))) == 20000


def test_custom_axes_and_the_interconnect_are_settings_of_each_run(write_study):
    text = BASE.replace("ranks: [1, 2]", "ranks: [2]\n  interconnect: [gige, 100mbit]")
    text = text.replace('"{size}"', '"{size}-{interconnect}"')
    runs = expand(load_study(write_study(text)))
    assert [(r.interconnect, dict(r.custom)) for r in runs] == [("gige", {"size": "tiny"}),
                                                              ("100mbit", {"size": "tiny"})]
    assert runs[0].settings()["interconnect"] == "gige" and "interconnect" not in dict(runs[0].custom)
