"""Where no mount namespace can keep the cluster's hosts file to itself (a chroot whose root is not a mount
point), its lines go first in /etc/hosts between two marks and leave with Slurm: on a file of its own here."""

from scalewise.cluster.slurm import HOSTS_END, HOSTS_MARK, add_hosts_lines, remove_hosts_lines

ORIGINAL = "127.0.0.1\tlocalhost\n127.0.1.1\tvm\n"
LINES = "127.0.0.1 localhost\n10.213.0.254 vm\n10.213.0.1 swnode1\n"


def test_the_clusters_names_come_first_and_leave_the_file_as_it_was(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text(ORIGINAL)
    add_hosts_lines(LINES, hosts)
    text = hosts.read_text()
    assert text == f"{HOSTS_MARK}\n{LINES}{HOSTS_END}\n{ORIGINAL}"
    assert text.index("10.213.0.254 vm") < text.index("127.0.1.1\tvm")  # the first line naming vm wins
    add_hosts_lines(LINES, hosts)  # a second start replaces its block, never stacks two
    assert hosts.read_text() == text
    remove_hosts_lines(hosts)
    assert hosts.read_text() == ORIGINAL
    remove_hosts_lines(hosts)
    assert hosts.read_text() == ORIGINAL

