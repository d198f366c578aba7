"""Network models: a LogGOPS parameter set per message-size range, an eager
limit, read from YAML (docs/whatif.md describes the format and the presets'
sources)."""

from __future__ import annotations

import difflib
import math
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scalewise.errors import ScalewiseError
from scalewise.whatif.trace import COLLECTIVES


class SizeRange(BaseModel):
    """LogGOPS parameters for messages of at most ``upto`` bytes."""

    model_config = ConfigDict(extra="forbid")
    upto: float = Field(gt=0, description="largest message size of the range, bytes (.inf for the last)")
    latency_us: float = Field(ge=0, description="L: wire and switch latency")
    overhead_us: float = Field(ge=0, description="o: CPU time per message at sender and at receiver")
    gap_us: float = Field(0.0, ge=0, description="g: least time between two messages leaving one NIC")
    bandwidth_gbit_s: float = Field(gt=0, description="1/G: payload bandwidth (.inf for none)")

    @property
    def per_byte(self) -> float:
        return 0.0 if math.isinf(self.bandwidth_gbit_s) else 8.0 / (self.bandwidth_gbit_s * 1e9)


class Shaping(BaseModel):
    """A token-bucket rate limit on each rank's outgoing link (tc tbf on the emulated cluster's
    links, a cloud instance's network allowance): ``bucket_bytes`` of credit that refills at
    ``rate_gbit_s``; a message larger than the credit left waits for the rest at that rate.
    The ranges then describe the link without the limit."""

    model_config = ConfigDict(extra="forbid")
    rate_gbit_s: float = Field(gt=0, description="the rate the bucket refills at")
    bucket_bytes: int = Field(ge=0, description="credit a rested link holds")
    payload_share: float = Field(1.0, gt=0, le=1, description="the share of the bucket's bytes that is the "
                                 "messages' payload (the link also carries the packets' headers and the "
                                 "acknowledgements); calibrate measures it")
    source: str = Field("", description="where the numbers come from")

    @property
    def bytes_per_second(self) -> float:
        """The configured rate, in bytes on the wire per second."""
        return self.rate_gbit_s * 1e9 / 8

    @property
    def payload_per_second(self) -> float:
        """Bytes of messages per second the limit lets through."""
        return self.bytes_per_second * self.payload_share

    @property
    def payload_bucket(self) -> float:
        """Bytes of messages a rested bucket lets through at once."""
        return self.bucket_bytes * self.payload_share


class MeasuredCollective(BaseModel):
    """One collective `scalewise calibrate` timed, beside what the replay of its point-to-point
    decomposition predicts for it on the file's ranges.  The replay charges the difference to each
    such call as the library's own per-call cost (whatif/percall.py)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="the MPI function, e.g. MPI_Allreduce")
    bytes: int = Field(ge=0, description="the size the library's rules look at (docs/trace-format.md)")
    ranks: int = Field(ge=2)
    algorithm: str = Field("", description="what the library's rules pick, as the replay names it")
    measured_us: float = Field(gt=0, description="the slowest rank's time, median (or fastest) repetition")
    predicted_us: float = Field(ge=0, description="the replay of one such call on the file's ranges")

    @field_validator("name")
    @classmethod
    def _decomposed(cls, name: str) -> str:
        if name not in COLLECTIVES:
            raise ValueError(f"'{name}' is not a collective the replay decomposes ({', '.join(COLLECTIVES)})")
        return name

    @property
    def error(self) -> float:
        """Predicted over measured, less 1: negative when the replay is too fast."""
        return self.predicted_us / self.measured_us - 1


class Network(BaseModel):
    """A network the replay can predict a run on."""

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    library: str = Field("", description="the MPI library calibrate measured with (its collectives' costs apply "
                                         "to that library's replay only); empty in presets")
    eager_limit: int = Field(ge=0, description="messages of at most this many bytes go eagerly")
    ranges: list[SizeRange] = Field(min_length=1)
    shaping: Shaping | None = None
    duplex: Literal["full", "half"] = Field("full", description="half: a rank's incoming messages take turns with "
                                            "its outgoing ones (a transport that moves one direction at a time); "
                                            "calibrate measures it")
    both_ways: float | None = Field(None, ge=1.0, le=2.0,
                                   description="full duplex: how many times the fastest one way a large message each "
                                               "way at once takes in the median exchange (the link carries the other "
                                               "direction's acknowledgements too); "
                                               "an incoming message's time that overlaps the rank's own sending costs "
                                               "that much; calibrate --cluster measures it; none: 1")
    both_ways_peers: list[float] | None = Field(
        None, min_length=1, description="full duplex, a link exchanging with several nodes at once: entry k-1 is how "
                                        "many times the same messages into one node from k nodes alone the "
                                        "all-to-all of k+1 nodes takes (each sending a large message to every "
                                        "other at once, the median repetition); used in place of both_ways where a "
                                        "link's current stretch of sending goes to k nodes (beyond the list: its "
                                        "last); calibrate --cluster measures it on clusters of 3 or more nodes")
    collectives: list[MeasuredCollective] | None = None
    doubts: list[str] | None = Field(None, description="why calibrate found the measurement not trustworthy")

    @field_validator("both_ways_peers")
    @classmethod
    def _ratios(cls, ratios: list[float] | None) -> list[float] | None:
        if ratios and not all(1.0 <= b <= 2.0 for b in ratios):
            raise ValueError(f"every ratio must be from 1 to 2, got {ratios}")
        return ratios

    @model_validator(mode="after")
    def _ranges_ascend(self) -> Network:
        bounds = [r.upto for r in self.ranges]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ValueError("ranges must be listed by increasing 'upto'")
        if not math.isinf(bounds[-1]):
            raise ValueError("the last range must have 'upto: .inf'")
        return self


def _entry(data: object, loc: tuple) -> str:
    """A collectives entry as a person finds it in the file: its position, name and size."""
    entry = data["collectives"][loc[1]] if isinstance(data, dict) else None
    named = isinstance(entry, dict) and "name" in entry
    what = f" ({entry['name']}, {entry.get('bytes', '?')} B)" if named else ""
    field = ".".join(str(p) for p in loc[2:])
    return f"collectives entry {loc[1] + 1}{what}" + (f": {field}" if field else "")


def _parse(data: object, where: str) -> Network:
    try:
        return Network.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = first["loc"]
        if len(loc) > 1 and loc[0] == "collectives" and isinstance(loc[1], int):
            place = _entry(data, loc)
        else:
            place = ".".join(str(p) for p in loc) or "top level"
        raise ScalewiseError(f"{where}: {place}: {first['msg']}") from None


@cache
def presets() -> dict[str, Network]:
    """The bundled networks (data/networks.yaml), by name."""
    text = resources.files("scalewise.whatif").joinpath("data/networks.yaml").read_text()
    entries = yaml.safe_load(text)["networks"]
    return {e["name"]: _parse(e, f"networks.yaml: {e['name']}") for e in entries}


def load_network(path: str | Path) -> Network:
    """A network from a YAML parameter file (one network, the preset format)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ScalewiseError(f"{path}: cannot read: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise ScalewiseError(f"{path}: not YAML: {str(err).splitlines()[0]}") from None
    return _parse(data, str(path))


def network(name_or_path: str | Path) -> Network:
    """A preset by name, else a parameter file by path."""
    if str(name_or_path) in presets():
        return presets()[str(name_or_path)]
    if Path(name_or_path).suffix in (".yaml", ".yml"):
        return load_network(name_or_path)
    close = difflib.get_close_matches(str(name_or_path), list(presets()), n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise ScalewiseError(f"unknown network '{name_or_path}' ({hint}presets: {', '.join(presets())}; "
                         "or a .yaml parameter file)")
