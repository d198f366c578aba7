#!/usr/bin/env bash
# Installs the Debian packages scalewise needs, only those that are missing.
# Usage: setup-system.sh [group...]   groups: core (default), browser, slurm, cluster, validate
set -euo pipefail

# gdb: the tests see which collective algorithm a library enters (tests/mpis/test_pypi_tuning.py)
core="make gcc gfortran pkg-config zlib1g-dev libdeflate-dev python3 python3-venv openmpi-bin libopenmpi-dev mpich libmpich-dev clang-format gdb"
browser="chromium"
slurm="slurm-wlm slurmctld slurmd slurm-client munge"
cluster="iproute2 util-linux"  # ip and tc for emulated nodes; unshare, nsenter, taskset
# The real applications of `make validate` (validate/*/manifest.toml name theirs):
# 270 MB to download, 1.2 GB installed, so no other target installs them.
validate="netpipe-openmpi netpipe-mpich2 hpcc lammps lammps-examples openfoam openfoam-examples
          nwchem-openmpi nwchem-mpich nwchem-data quantum-espresso quantum-espresso-data"

wanted=""
for g in "${@:-core}"; do
    case "$g" in
        core) wanted="$wanted $core" ;;
        browser) wanted="$wanted $browser" ;;
        slurm) wanted="$wanted $slurm" ;;
        cluster) wanted="$wanted $cluster" ;;
        validate) wanted="$wanted $validate" ;;
        *) echo "setup-system: unknown package group '$g'" >&2; exit 2 ;;
    esac
done

missing=""
for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "setup-system: missing Debian packages:$missing (run as root, or install them; without root and with an MPI module, see README's quick start without root)" >&2
    exit 1
fi
echo "setup-system: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
