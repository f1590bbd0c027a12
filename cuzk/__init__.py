"""cuzk: a Groth16 proving SDK for BLS12-381.

Synthesis runs as Numba-JIT kernels on the CPU; MSM and NTT run as CUDA kernels through
CuPy on a GPU, with Numba kernels as the fallback; a :class:`Pipeline` overlaps the two
stages and a :class:`Timeline` records what happened so hosts can query utilization.

    >>> import cuzk
    >>> cuzk.__version__
    '0.1.0'
"""

from cuzk._version import __version__
from cuzk._runtime import configure_numba as _configure_numba

_configure_numba()

from cuzk import errors  # noqa: E402
from cuzk import field  # noqa: E402

__all__ = ["__version__", "errors", "field"]
