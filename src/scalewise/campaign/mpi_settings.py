"""MPI settings a run applies: transports and named parameter sets.

MPI tuning is kept structured rather than as opaque environment strings: an
Open MPI MCA parameter, an MPICH control variable (CVAR) and a plain
environment variable are different things, apply to different libraries, and
are recorded separately in the results.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from scalewise.campaign.rules import string_mapping
from scalewise.launch.mpis import family_of

class MpiSettings(BaseModel):
    """One named set of MPI settings (a transport or a parameter set).

    ``mca`` applies to Open MPI runs only (``--mca name value`` /
    ``OMPI_MCA_name``), ``cvars`` to MPICH runs only (``MPIR_CVAR_`` prefix
    optional), ``openmpi_env``/``mpich_env`` to one library, ``env`` to all.
    """

    model_config = ConfigDict(extra="forbid")

    mca: dict[str, str] = {}
    cvars: dict[str, str] = {}
    env: dict[str, str] = {}
    openmpi_env: dict[str, str] = {}
    mpich_env: dict[str, str] = {}

    @field_validator("mca", "cvars", "env", "openmpi_env", "mpich_env", mode="before")
    @classmethod
    def _strings(cls, value: object, info) -> dict[str, str]:
        return string_mapping(value, "variable" if "env" in info.field_name else "parameter")

    @field_validator("cvars")
    @classmethod
    def _cvar_prefix(cls, value: dict[str, str]) -> dict[str, str]:
        return {k if k.startswith("MPIR_CVAR_") else f"MPIR_CVAR_{k}": v for k, v in value.items()}

    def applied(self, mpi: str) -> list[tuple[str, str, str]]:
        """The ``(kind, name, value)`` triples this set applies to an ``mpi`` run."""
        out = [("env", k, v) for k, v in sorted(self.env.items())]
        mpi = family_of(mpi)  # a study's own name or an identity: its library's family
        if mpi == "openmpi":
            out += [("mca", k, v) for k, v in sorted(self.mca.items())]
            out += [("env", k, v) for k, v in sorted(self.openmpi_env.items())]
        elif mpi == "mpich":
            out += [("cvar", k, v) for k, v in sorted(self.cvars.items())]
            out += [("env", k, v) for k, v in sorted(self.mpich_env.items())]
        return out


# Transports every study knows without defining them.  Open MPI: pml ob1 with
# the named BTLs (pml ucx would bypass the BTLs).  MPICH 4.0 in Debian is built
# ch4:ucx: MPIR_CVAR_NOLOCAL=1 alone still lets UCX use its own shared memory
# (measured: 0.74 us ping-pong either way), so TCP also needs UCX_TLS=tcp,self
# (9.5 us).  ch3's MPIR_CVAR_CH3_NOLOCAL does not exist in this build.
BUILTIN_TRANSPORTS: dict[str, MpiSettings] = {
    "default": MpiSettings(),
    "shm": MpiSettings(mca={"pml": "ob1", "btl": "self,vader"}),
    "tcp": MpiSettings(mca={"pml": "ob1", "btl": "self,tcp"},
                       cvars={"MPIR_CVAR_NOLOCAL": "1"}, mpich_env={"UCX_TLS": "tcp,self"}),
}

BUILTIN_PARAMS: dict[str, MpiSettings] = {"default": MpiSettings()}
