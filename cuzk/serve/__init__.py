"""``cuzk serve``: one :class:`cuzk.Engine` behind Curio's ``cuzk.v1.ProvingEngine`` gRPC API, plus
cuzk's ``CircuitProver`` extension (docs/serve.md). The only part of cuzk that imports grpc
(extra ``serve``); importing this package does not, until :class:`Client` or :class:`Server` is
used.

    >>> from cuzk.serve import load_config, Client, Server      # doctest: +SKIP
"""

from cuzk.serve.config import CircuitConfig, ServeConfig, default_config, load_config, parse_config

__all__ = ["Client", "Server", "ServeConfig", "CircuitConfig", "load_config", "parse_config", "default_config"]


def __getattr__(name):
    if name == "Client":
        from cuzk.serve.client import Client

        return Client
    if name == "Server":
        from cuzk.serve.server import Server

        return Server
    raise AttributeError(f"module 'cuzk.serve' has no attribute {name!r}")
