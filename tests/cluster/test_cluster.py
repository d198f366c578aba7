"""The emulated cluster, for real: namespaces, shaped links, both MPIs across nodes, nothing left behind."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from scalewise.cluster import cluster_down, cluster_up, current_cluster, parse_rate
from scalewise.cluster.checks import check_links
from scalewise.cluster.emulated import LINK_PREFIXES, node_holders, state_dir
from scalewise.cluster.launching import cluster_launch
from scalewise.launch.preload import build_dir
from scalewise.logfile.reader import read_profile

SW = str(Path(os.sys.executable).with_name("scalewise"))


def _our_links() -> list[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    names = [line.split(":")[1].strip() for line in out.splitlines()]
    return [n for n in names if n.startswith(LINK_PREFIXES)]


def _nothing_left() -> None:
    assert _our_links() == [] and node_holders() == [] and not state_dir().exists()


def test_up_is_idempotent_and_down_leaves_nothing(emulation):
    c = cluster_up(3, parse_rate("gige"))
    assert [n.name for n in c.nodes] == ["swnode1", "swnode2", "swnode3"]
    for n in c.nodes:  # its own hostname and address, inside its namespaces
        inside = subprocess.run(["nsenter", "-t", str(n.pid), "-n", "-u", "sh", "-c", "hostname; ip -o -4 addr"],
                                capture_output=True, text=True, check=True).stdout
        assert inside.splitlines()[0] == n.name and f"inet {n.address}/24" in inside
    again = cluster_up(3, parse_rate("gige"))  # same shape: the same nodes
    assert [n.pid for n in again.nodes] == [n.pid for n in c.nodes]
    faster = cluster_up(3, parse_rate("10gbit"))  # same nodes, other links: reshaped in place
    assert [n.pid for n in faster.nodes] == [n.pid for n in c.nodes] and current_cluster().rate_bits == 10**10
    for n in c.nodes:
        outside = subprocess.run(["tc", "qdisc", "show", "dev", n.veth], capture_output=True, text=True).stdout
        inside = subprocess.run(["nsenter", "-t", str(n.pid), "-n", "tc", "qdisc", "show", "dev", "eth0"],
                                capture_output=True, text=True).stdout
        assert "rate 10Gbit" in outside and "rate 10Gbit" in inside
    other = cluster_up(2, parse_rate("fe"))  # another shape: rebuilt
    assert len(other.nodes) == 2 and set(node_holders()) == {n.pid for n in other.nodes}
    # A process started inside a node dies with the cluster.
    straggler = subprocess.Popen([str(other.agent), "swnode1", "sleep 300"])
    node_ns = os.readlink(f"/proc/{other.nodes[0].pid}/ns/net")
    for _ in range(500):
        if os.readlink(f"/proc/{straggler.pid}/ns/net") == node_ns:
            break
        time.sleep(0.01)
    assert "processes" in " ".join(cluster_down())
    straggler.wait(timeout=10)
    _nothing_left()
    assert cluster_down() == []  # twice: nothing to do


def test_up_cleans_what_a_crashed_run_left(emulation):
    c = cluster_up(2, parse_rate("fe"))
    (Path(c.folder) / "state.json").unlink()  # as if the tool died and its record was lost
    assert current_cluster() is None and len(node_holders()) == 2
    fresh = cluster_up(2, parse_rate("fe"))
    assert set(node_holders()) == {n.pid for n in fresh.nodes}
    cluster_down()
    _nothing_left()


def test_blocking_topology_has_a_shaped_uplink(emulation):
    c = cluster_up(4, parse_rate("gige"), blocking="2:1")
    bridges = {}
    for n in c.nodes:
        master = subprocess.run(["ip", "-o", "link", "show", n.veth], capture_output=True, text=True).stdout
        bridges[n.name] = re.search(r"master (\S+)", master).group(1)
    assert bridges == {"swnode1": "swbr0", "swnode2": "swbr0", "swnode3": "swbr1", "swnode4": "swbr1"}
    qdisc = subprocess.run(["tc", "qdisc", "show", "dev", "swup0"], capture_output=True, text=True).stdout
    assert "tbf" in qdisc and "rate 1Gbit" in qdisc  # 2 nodes x 1 Gbit/s over 2:1


def _queues(c) -> list[str]:
    """The tbf ``lat`` of both ends of every node's link, as tc reports it."""
    shown = []
    for n in c.nodes:
        for argv in (["tc", "qdisc", "show", "dev", n.veth],
                     ["nsenter", "-t", str(n.pid), "-n", "tc", "qdisc", "show", "dev", "eth0"]):
            shown.append(re.search(r" lat (\S+)", subprocess.run(argv, capture_output=True, text=True).stdout).group(1))
    return shown


def test_the_link_queue_is_a_setting(two_nodes):
    from click.testing import CliRunner

    from scalewise.cli.cluster import cluster
    from scalewise.whatif.calibrate.measure import cluster_shaping

    c = cluster_up(2, parse_rate("fe"))
    assert c.queue_us == 2000 and _queues(c) == ["2ms"] * 4
    # in this process: the lock this test holds is reentrant here, not for a second process
    up = CliRunner().invoke(cluster, ["up", "--nodes", "2", "--rate", "100mbit", "--queue", "10ms"])
    assert up.exit_code == 0 and "links 100 Mbit/s, queue 10 ms" in up.output, up.output
    deeper = current_cluster()  # the same nodes, reshaped in place, and the queue recorded
    assert [n.pid for n in deeper.nodes] == [n.pid for n in c.nodes] and deeper.queue_us == 10_000
    assert _queues(deeper) == ["10ms"] * 4
    assert "queue 10 ms" in CliRunner().invoke(cluster, ["status"]).output
    kept = cluster_up(2, parse_rate("gige"))  # another rate, no queue asked: the running cluster's kept
    assert kept.queue_us == 10_000 and _queues(kept) == ["10ms"] * 4
    assert cluster_shaping(kept).source == "tc tbf of the emulated links, 1 Gbit/s, queue 10 ms"
    shallow = cluster_up(2, parse_rate("gige"), queue_us=500)
    assert [n.pid for n in shallow.nodes] == [n.pid for n in c.nodes] and _queues(shallow) == ["500us"] * 4
    bad = subprocess.run([SW, "cluster", "up", "--nodes", "2", "--queue", "deep"], capture_output=True, text=True)
    assert bad.returncode != 0 and "link queue 'deep' is not a time" in bad.stderr
    assert current_cluster().queue_us == 500  # refused before anything was reshaped


def test_the_sending_ends_queue_is_a_setting_of_its_own(two_nodes):
    c = cluster_up(2, parse_rate("gige"), queue_us=2000, sending_queue_us=100_000)
    # each node: the host's end (what it is sent) keeps the link's queue, its own eth0 the deeper one
    assert _queues(c) == ["2ms", "100ms"] * 2 and current_cluster().sending_queue_us == 100_000
    assert "queue 2 ms (100 ms at each node's sending end)" in current_cluster().describe()
    both = cluster_up(2, parse_rate("gige"), queue_us=2000)  # not asked: both ends the link's queue again
    assert [n.pid for n in both.nodes] == [n.pid for n in c.nodes] and _queues(both) == ["2ms"] * 4
    assert current_cluster().sending_queue_us is None
    # and then not in the record, which versions without the setting read as well
    assert "sending_queue_us" not in (Path(both.folder) / "state.json").read_text()


def test_a_cluster_recorded_before_queues_were_a_setting_has_100ms(two_nodes):
    import json

    c = cluster_up(2, parse_rate("fe"), queue_us=100_000)
    state = Path(c.folder) / "state.json"
    raw = json.loads(state.read_text())
    del raw["queue_us"]
    state.write_text(json.dumps(raw))
    assert current_cluster().queue_us == 100_000


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
@pytest.mark.parametrize("rate", ["100mbit", "1gbit"])
def test_links_deliver_the_configured_rate(two_nodes, mpi, rate):
    c = cluster_up(2, parse_rate(rate))
    # The fastest of the round trips: robust to other load on the cores.  40 of 4 MiB at 1 Gbit/s (34 ms
    # each, where a scheduling delay of the cores shows); 10 at 100 Mbit/s, where each takes 0.7 s of
    # the link's own time and the fastest of 10 was 0.969-0.971 of the rate in each of 20 checks
    # (docs/benchmarks.md, "The test suite's cost", round 7): 22 s less per MPI.
    check = check_links(c, mpi, reps=40 if c.rate_bits >= parse_rate("1gbit") else 10)
    assert check.hosts == ("swnode1", "swnode2")
    assert 0.90 <= check.ratio <= 1.10, check.text()
    assert check.latency_us > 0  # measured and reported, never configured


def _running(pid: int) -> bool:
    """Exists and is not a zombie (this machine's init may reap daemons late)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _tx(dev: str) -> int:
    return int(Path(f"/sys/class/net/{dev}/statistics/tx_bytes").read_text())


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_job_spans_two_hosts_over_the_links(two_nodes, mpi, tmp_path):
    cluster_up(2, parse_rate("gige"))
    exe = build_dir() / mpi / "proxies" / "sem"
    launcher = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.mpich"}[mpi]
    before = _tx("swv1") + _tx("swv2")
    done = subprocess.run([SW, "run", "--cluster", "-o", str(tmp_path), "--quiet", "--",
                           launcher, "-np", "4", str(exe), "--size", "tiny"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "status=PASS" in done.stdout
    log = re.search(r"profile: (\S+)", done.stdout).group(1)
    p = read_profile(log)
    hosts = p.ranks.groupby("host")["rank"].count().to_dict()
    assert hosts == {"swnode1": 2, "swnode2": 2}
    summary = subprocess.run([SW, "summary", log], capture_output=True, text=True).stdout
    assert "swnode1 (2 ranks), swnode2 (2 ranks)" in summary  # placement shown
    moved = _tx("swv1") + _tx("swv2") - before
    assert moved > p.p2p[p.p2p["src"] // 2 != p.p2p["dst"] // 2]["bytes"].sum() > 0  # inter-node bytes crossed the veths


def test_cluster_exec_runs_a_users_own_line(two_nodes):
    c = cluster_up(2, parse_rate("gige"))
    exe = build_dir() / "mpich" / "proxies" / "pingpong"
    launch = cluster_launch(c, ["mpiexec.mpich", "-n", "2", "-ppn", "1", str(exe), "--sizes", "8"])
    assert launch.argv[:3] == ["mpiexec.mpich", "-machinefile", str(c.hostfile("mpich", 1))]
    done = subprocess.run([SW, "cluster", "exec", "--", "mpiexec.mpich", "-n", "2", "-ppn", "1", str(exe),
                           "--sizes", "8"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "host0=swnode1 host1=swnode2" in done.stdout


def test_clear_errors(emulation):
    bad = subprocess.run([SW, "cluster", "up", "--nodes", "2", "--rate", "fast"], capture_output=True, text=True)
    assert bad.returncode != 0 and "link rate 'fast' is neither a preset" in bad.stderr
    none = subprocess.run([SW, "cluster", "exec", "--", "mpirun", "-np", "2", "true"], capture_output=True, text=True)
    assert none.returncode != 0 and "no emulated cluster is up" in none.stderr
    nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SW, "cluster", "up",
                             "--nodes", "2"], capture_output=True, text=True)
    assert nobody.returncode != 0 and "needs root" in nobody.stderr


def test_slurm_runs_jobs_across_the_nodes(emulation, tmp_path):
    from scalewise.cluster.launching import transport_env
    from scalewise.cluster.slurm import BASE, slurm_env, start_slurm
    from scalewise.launch.base import Job
    from scalewise.launch.slurm import SlurmScheduler

    c = cluster_up(2, parse_rate("gige"))
    start_slurm(c)
    env = slurm_env()
    nodes = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=env, capture_output=True, text=True).stdout
    assert nodes.split() == ["swnode1", "idle", "swnode2", "idle"]
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = env["SLURM_CONF"]
    try:
        for mpi in ("openmpi", "mpich"):
            rundir = tmp_path / mpi
            rundir.mkdir()
            exe = build_dir() / mpi / "proxies" / "pingpong"
            before = _tx("swv1")
            job = Job(name=mpi, app_argv=[str(exe), "--sizes", "8,1048576"], mpi=mpi, ranks=2, nodes=2,
                      env=transport_env(mpi, env), rundir=rundir, stdout=rundir / "out", stderr=rundir / "err",
                      timeout=120)
            outcome = SlurmScheduler(launcher="srun").run(job)
            assert outcome.exit_code == 0, (rundir / "err").read_text()
            assert outcome.hosts == ["swnode1", "swnode2"]
            assert "host0=swnode1 host1=swnode2" in (rundir / "out").read_text()
            assert _tx("swv1") - before > 1048576  # the megabyte crossed node 1's link
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
    daemons = [int(p.read_text()) for p in [*BASE.glob("*.pid"), BASE / "munge" / "munged.pid"]]
    assert len(daemons) == 4  # slurmctld, two slurmd, munged
    assert any("slurm" in r for r in cluster_down())
    alive = [pid for pid in daemons if _running(pid)]
    assert not BASE.exists() and not alive, [Path(f"/proc/{p}/stat").read_text() for p in alive]


def test_a_study_sweeps_nodes_and_interconnects_on_emulated_nodes(emulation, write_study):
    import sqlite3

    from scalewise.campaign.runner import run_study
    from scalewise.campaign.store import store_path
    from scalewise.campaign.study import load_study

    text = f"""name: links
applications:
  sem:
    command: ["{build_dir()}/{{mpi}}/proxies/sem", --size, tiny]
    fom: {{source: result_line}}
axes:
  ranks: [2]
  nodes: [1, 2]
  interconnect: [fe, gige]
  mpi: [openmpi, mpich]
timeout: 120
"""
    loaded = load_study(write_study(text))
    summary = run_study(loaded, "local")
    assert summary.counts == {"ok": 8}
    db = sqlite3.connect(store_path(loaded))
    rows = db.execute("SELECT r.run_id, r.nodes, r.hosts, s.value FROM runs r JOIN run_settings s "
                      "ON s.run_id = r.run_id AND s.name = 'interconnect'").fetchall()
    assert sorted({(n, h, v) for _, n, h, v in rows}) == [
        (1, "swnode1", "fe"), (1, "swnode1", "gige"), (2, "swnode1,swnode2", "fe"), (2, "swnode1,swnode2", "gige")]
    links = dict(db.execute("SELECT run_id, value FROM run_provenance WHERE key = 'launcher.cluster.link_bits'"))
    assert sorted(set(links.values())) == ["100000000", "1000000000"]
    assert current_cluster() is None  # the study took down the cluster it brought up
    from click.testing import CliRunner

    from scalewise.cli.main import cli

    html = store_path(loaded).parent / "report.html"
    result = CliRunner().invoke(cli, ["study", "report", str(loaded.path), "-o", str(html)])
    assert result.exit_code == 0, result.output
    page = html.read_text()
    # B1: performance against the node count, one curve per interconnect; P8: MPI share side by side
    assert 'data-figure="perf-interconnect" data-ref="B1"' in page and 'data-figure="p8-comm-share"' in page


def test_the_same_study_runs_through_slurm_on_the_emulated_nodes(emulation, write_study):
    """nodes x interconnect through --launcher slurm: the interconnect picks nodes by feature (--constraint)."""
    import sqlite3

    from scalewise.campaign.runner import run_study
    from scalewise.campaign.store import store_path
    from scalewise.campaign.study import load_study
    from scalewise.cluster.slurm import slurm_env, start_slurm

    old = os.environ.get("SLURM_CONF")
    try:
        for link in ("fe", "gige"):  # one emulated cluster has one link speed: bring it up at each in turn
            c = cluster_up(2, parse_rate(link))
            os.environ["SLURM_CONF"] = slurm_env()["SLURM_CONF"]
            start_slurm(c)
            loaded = load_study(write_study(f"""name: slurm-{link}
applications:
  sem:
    command: ["{build_dir()}/{{mpi}}/proxies/sem", --size, tiny]
    fom: {{source: result_line}}
axes:
  nodes: [1, 2]
  ranks_per_node: [1]
  interconnect: [{link}]
  mpi: [openmpi, mpich]
timeout: 120
""", name=f"{link}.yaml"))
            summary = run_study(loaded, "slurm")
            assert summary.counts == {"ok": 4}
            db = sqlite3.connect(store_path(loaded))
            assert sorted(db.execute("SELECT mpi, nodes, hosts FROM runs")) == [
                ("mpich", 1, "swnode1"), ("mpich", 2, "swnode1,swnode2"),
                ("openmpi", 1, "swnode1"), ("openmpi", 2, "swnode1,swnode2")]
            jobs = subprocess.run(["scontrol", "-o", "show", "job"], capture_output=True, text=True).stdout
            assert re.findall(r" Features=(\S+)", jobs) == [link] * 4  # each job asked for the link by name
            cluster_down()
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old


def test_memory_probe_runs_across_emulated_nodes(emulation, tmp_path):
    import json

    from click.testing import CliRunner

    from scalewise.cli.main import cli

    result = CliRunner().invoke(cli, ["memory", "--mpi", "openmpi", "--ranks", "2,4", "--peers", "none,all",
                                      "--repeats", "1", "--emulated-nodes", "2", "--nodes", "1..4", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["hosts"] == ["swnode1", "swnode2"]  # the ranks ran on both nodes
    assert [(f["mpi"], f["setup"], f["runs"]) for f in out["fits"]] == [
        ("openmpi", "on-demand", 4), ("openmpi", "eager", 4)]
    assert current_cluster() is None  # brought up for the measurement, taken down after
    uneven = CliRunner().invoke(cli, ["memory", "--mpi", "openmpi", "--ranks", "3", "--emulated-nodes", "2"])
    assert uneven.exit_code == 2
    assert uneven.output == "scalewise: error: --ranks: 3 ranks do not spread evenly over 2 emulated nodes\n"
