"""An emulated multi-node cluster on one machine (docs/cluster.md).

Each node is a Linux network and UTS namespace (its own hostname), held by a
sleeping process; nodes are joined by veth pairs to a bridge, each link shaped
with tc.  MPI launches reach the nodes through an rsh-style agent that enters
a node's namespaces, so Open MPI, MPICH and Intel MPI see separate hosts and use
their inter-node transport between them.
"""

from scalewise.cluster.emulated import Cluster, Node, cluster_down, cluster_up, current_cluster
from scalewise.cluster.links import LINK_PRESETS, parse_rate

__all__ = ["Cluster", "Node", "LINK_PRESETS", "cluster_down", "cluster_up", "current_cluster", "parse_rate"]
