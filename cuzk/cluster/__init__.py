"""cuzk on a Ray cluster: :class:`RayEngine` (the :class:`cuzk.Engine` API; prover actors per
GPU, synthesis as Ray tasks, retries on lost workers, one merged timeline). Needs the ``ray``
extra (``pip install 'cuzk[ray]'``); importing this package does not. See docs/cluster.md.

    >>> from cuzk.cluster import RayEngine, ClusterTimeline
    >>> RayEngine.register.__doc__.split("\\n")[0]
    'Register a circuit on every prover actor (arguments as :meth:`cuzk.Engine.register`;'
"""

from cuzk.cluster.engine import RayEngine
from cuzk.cluster.timeline import ClusterTimeline

__all__ = ["RayEngine", "ClusterTimeline"]
