"""Ready-made circuits: :func:`porep_like` (the storage-proof-shaped demo family) and :class:`Cube`.

    >>> from cuzk.circuits import porep_like, Cube
"""

from cuzk.circuits.cube import Cube
from cuzk.circuits.porep import PorepLike, porep_like

__all__ = ["porep_like", "PorepLike", "Cube"]
