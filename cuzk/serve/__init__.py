"""``cuzk serve``: one :class:`cuzk.Engine` behind Curio's ``cuzk.v1.ProvingEngine`` gRPC API
(docs/serve.md). The only part of cuzk that imports grpc (extra ``serve``)."""
