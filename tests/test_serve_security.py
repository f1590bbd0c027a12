"""``cuzk serve``'s refusals: no token or a wrong one (UNAUTHENTICATED, compared in constant time),
a plain client against TLS, a client without the certificate a client CA asks for, a message over
the size bound; the daemon answering a good client after each. Certificates are made in the test
(the ``cryptography`` package, else the ``openssl`` command; skipped without either)."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.direct import DirectCalls  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import config_text, cube_entry  # noqa: E402

TOKEN = "s3cret-token-0123456789abcdef"


def _openssl_cert(folder: Path, name: str, ca: tuple | None):
    key, crt = folder / f"{name}.key", folder / f"{name}.crt"
    subj = ["-subj", f"/CN={name}"]
    if ca is None:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", crt, "-days", "2", *subj, "-addext", "subjectAltName=IP:127.0.0.1",
                        "-addext", "basicConstraints=critical,CA:TRUE"], check=True, capture_output=True)
    else:
        csr = folder / f"{name}.csr"
        subprocess.run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", csr, *subj], check=True, capture_output=True)
        ext = folder / f"{name}.ext"
        ext.write_text("subjectAltName=IP:127.0.0.1\n")
        subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0], "-CAcreateserial",
                        "-out", crt, "-days", "2", "-extfile", ext], check=True, capture_output=True)
    return key, crt


def _crypto_cert(folder: Path, name: str, ca: tuple | None):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    if ca is None:
        issuer, signer = subject, key
    else:
        ca_cert = x509.load_pem_x509_certificate(ca[1].read_bytes())
        issuer = ca_cert.subject
        signer = serialization.load_pem_private_key(ca[0].read_bytes(), None)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=ca is None, path_length=None), True)
            .sign(signer, hashes.SHA256()))
    kp, cp = folder / f"{name}.key", folder / f"{name}.crt"
    kp.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    cp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return kp, cp


def make_cert(folder: Path, name: str, ca: tuple | None = None):
    """(key path, cert path): self-signed (a CA) when ``ca`` is None, else signed by ``ca``."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl command is here to make a certificate")
        return _openssl_cert(folder, name, ca)
    return _crypto_cert(folder, name, ca)


def _refused(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code()


@pytest.mark.parametrize("transport", ["call-api", "grpcio-handlers"])
def test_bearer_token(cube, transport, monkeypatch):
    folder, params = cube
    if transport == "grpcio-handlers":  # the daemon's transport where grpc-core's call API is missing
        monkeypatch.setattr(DirectCalls, "attach", classmethod(lambda cls, *a, **k: None))
    (folder / "token").write_text(TOKEN + "\n")
    cfg = parse_config(config_text(folder, circuits=cube_entry(params), extra="") + f'[auth]\ntoken_file = "{folder / "token"}"\n')
    with Server(cfg) as srv:
        for bad in (None, "wrong-token-0123456789abcdef", TOKEN[:-1], TOKEN + "x", ""):
            with Client(srv.tcp_address, token=bad, timeout=30) as c:
                assert _refused(c.status) == grpc.StatusCode.UNAUTHENTICATED
                assert _refused(lambda: c.prove_circuit("cube", {"x": 1, "out": 7})) == grpc.StatusCode.UNAUTHENTICATED
        with Client(srv.tcp_address, token=TOKEN, timeout=60) as c:
            assert c.prove_circuit("cube", {"x": 1, "out": 7}).result.status == pb.AwaitProofResponse.COMPLETED
            assert 'cuzk_serve_rpcs_total{code="UNAUTHENTICATED",method="GetStatus"}' in c.metrics()
        # methods a client makes up are refused before grpc routes them, and counted under one
        # label: their names never reach the daemon's counters or /metrics
        with grpc.insecure_channel(srv.tcp_address) as ch:
            for i in range(200):
                made_up = ch.unary_unary(f"/cuzk.v1.ProvingEngine/Made{i}") if i % 2 else ch.unary_unary(f"/x{i}.Y/Z")
                assert _refused(lambda: made_up(b"", timeout=30)) == grpc.StatusCode.UNAUTHENTICATED
        with Client(srv.tcp_address, token=TOKEN, timeout=60) as c:
            text = c.metrics()
        assert 'cuzk_serve_rpcs_total{code="UNAUTHENTICATED",method="unknown"} 200' in text
        assert "Made1" not in text and "x0.Y" not in text and "x0" not in text


def test_tls_with_client_certificates(cube, tmp_path):
    folder, params = cube
    ca = make_cert(tmp_path, "ca")
    server_key, server_crt = make_cert(tmp_path, "server", ca)
    client_key, client_crt = make_cert(tmp_path, "client", ca)
    other_ca = make_cert(tmp_path, "other-ca")
    stranger = make_cert(tmp_path, "stranger", other_ca)
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) +
                       f'[tls]\ncert = "{server_crt}"\nkey = "{server_key}"\nclient_ca = "{ca[1]}"\n')
    with Server(cfg) as srv:
        addr = srv.tcp_address
        with Client(addr, timeout=10) as plain:  # no TLS at all
            assert _refused(plain.status) == grpc.StatusCode.UNAVAILABLE
        with Client(addr, tls={"ca": ca[1]}, timeout=10) as no_cert:  # TLS, but no client certificate
            assert _refused(no_cert.status) == grpc.StatusCode.UNAVAILABLE
        with Client(addr, tls={"ca": ca[1], "cert": stranger[1], "key": stranger[0]}, timeout=10) as wrong:
            assert _refused(wrong.status) == grpc.StatusCode.UNAVAILABLE
        with Client(addr, tls={"ca": other_ca[1], "cert": client_crt, "key": client_key}, timeout=10) as untrusting:
            assert _refused(untrusting.status) == grpc.StatusCode.UNAVAILABLE  # the server's cert is not its CA's
        with Client(addr, tls={"ca": ca[1], "cert": client_crt, "key": client_key}, timeout=60) as good:
            assert good.status().backend == "cpu"
            assert good.prove_circuit("cube", {"x": 2, "out": 15}).result.status == pb.AwaitProofResponse.COMPLETED


def test_server_only_tls(cube, tmp_path):
    folder, params = cube
    key, crt = make_cert(tmp_path, "solo")
    cfg = parse_config(config_text(folder) + f'[tls]\ncert = "{crt}"\nkey = "{key}"\n')
    with Server(cfg) as srv:
        with Client(srv.tcp_address, tls={"ca": crt}, timeout=30) as c:
            assert c.status().backend == "cpu"
        with Client(srv.tcp_address, timeout=10) as plain:
            assert _refused(plain.status) == grpc.StatusCode.UNAVAILABLE


def test_messages_over_the_bound_are_refused(cube):
    folder, params = cube
    cfg = parse_config(config_text(folder, circuits=cube_entry(params), extra='max_message_bytes = "64KiB"'))
    with Server(cfg) as srv, Client(srv.tcp_address, timeout=30) as c:
        big = dict(proof_kind=3, sector_size=2048, registered_proof=10, vanilla_proofs=[bytes(100_000)],
                   randomness=bytes(32))
        assert _refused(lambda: c.submit(**big)) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert c.prove_circuit("cube", {"x": 1, "out": 7}).result.status == pb.AwaitProofResponse.COMPLETED


def test_a_busy_unix_socket_is_not_taken_over(cube):
    folder, params = cube
    sock = folder / "busy" / "cuzk.sock"
    cfg = parse_config(config_text(folder, listen=[f"unix://{sock}"]))
    from cuzk.errors import ConfigError

    with Server(cfg):
        with pytest.raises(ConfigError, match="in use"):
            Server(cfg)
    with Server(cfg):  # once the first daemon stopped, the path is free again
        pass


def test_a_start_that_fails_late_stops_what_it_started(cube):
    # the status port is taken: the gRPC server had started by then, and must not keep its port,
    # its calls thread or its pool after the error
    import socket
    import threading

    folder, params = cube
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        grpc_port = probe.getsockname()[1]
    held = socket.create_server(("127.0.0.1", 0))
    try:
        extra = f'status_listen = "127.0.0.1:{held.getsockname()[1]}"'
        cfg = parse_config(config_text(folder, listen=[f"127.0.0.1:{grpc_port}"], extra=extra))
        before = {t.name for t in threading.enumerate()}
        with pytest.raises(Exception):
            Server(cfg)
        left = {t.name for t in threading.enumerate() if t.is_alive()} - before
        assert not [n for n in left if n.startswith("cuzk-serve")], left
        with socket.socket() as again:  # the gRPC port is free again
            again.bind(("127.0.0.1", grpc_port))
    finally:
        held.close()
