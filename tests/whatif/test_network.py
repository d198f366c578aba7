"""Network presets and the YAML parameter-file format."""

import math

import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError

PRESETS = ["ideal", "gige", "10gige", "qdr-ib", "fdr-ib", "edr-ib", "hdr-ib"]


def test_presets_are_all_there_and_ordered_by_speed():
    nets = whatif.presets()
    assert list(nets) == PRESETS
    assert nets["ideal"].ranges[0].per_byte == 0 and nets["ideal"].ranges[0].latency_us == 0
    big = [nets[n].ranges[-1].per_byte for n in PRESETS[1:]]
    assert big == sorted(big, reverse=True)  # each generation moves a byte faster


def test_parameter_file_round_trip(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: lab\neager_limit: 4096\nranges:\n"
                    "  - {upto: 4096, latency_us: 3, overhead_us: 1, gap_us: 0.5, bandwidth_gbit_s: 8}\n"
                    "  - {upto: .inf, latency_us: 5, overhead_us: 2, bandwidth_gbit_s: 16}\n")
    net = whatif.network(path)
    assert net.name == "lab" and net.eager_limit == 4096
    assert net.ranges[0].per_byte == pytest.approx(1e-9) and math.isinf(net.ranges[1].upto)
    assert net.ranges[1].gap_us == 0
    assert net.duplex == "full" and net.both_ways is None  # an exchange as fast as one way
    path.write_text(path.read_text() + "both_ways: 1.07\n")
    assert whatif.network(path).both_ways == 1.07


@pytest.mark.parametrize("body, message", [
    ("name: x\neager_limit: 1\nranges: []\n", r"bad.yaml: ranges: List should have at least 1 item"),
    ("name: x\neager_limit: 1\nranges:\n  - {upto: 10, latency_us: 1, overhead_us: 1, bandwidth_gbit_s: 1}\n",
     r"bad.yaml: .*'upto: \.inf'"),
    ("name: x\neager_limit: 1\nranges:\n  - {upto: .inf, latency_us: -1, overhead_us: 1, bandwidth_gbit_s: 1}\n",
     r"bad.yaml: ranges.0.latency_us: Input should be greater than or equal to 0"),
    ("name: [unclosed\n", r"bad.yaml: not YAML"),
    ("name: x\neager_limit: 1\nboth_ways: 0.9\nranges:\n"
     "  - {upto: .inf, latency_us: 1, overhead_us: 1, bandwidth_gbit_s: 1}\n",
     r"bad.yaml: both_ways: Input should be greater than or equal to 1"),
])
def test_bad_parameter_files_get_one_line_errors(tmp_path, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ScalewiseError, match=message) as err:
        whatif.network(path)
    assert "\n" not in str(err.value)


def test_unknown_network_name_lists_the_presets():
    with pytest.raises(ScalewiseError, match="unknown network 'infiniband'.*gige, 10gige"):
        whatif.network("infiniband")
