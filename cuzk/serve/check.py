"""``cuzk serve --check-config``: what a daemon would refuse at start, found before it starts (a
deploy step, or before ``systemctl reload``/``restart``), without listening anywhere.

Beyond parsing (unknown keys, bad values): the token file gives a token, the TLS key matches its
certificate and the client CA parses (cuzk/serve/credentials.py), and every ``[[circuits]]`` entry
loads as the daemon loads it at start (files present and of their kind, ``module:attr`` imports
to a cuzk Circuit). A missing ``[srs] param_cache`` is a note, not an error: the daemon starts and
refuses Filecoin proofs FAILED_PRECONDITION naming the file.
"""

from __future__ import annotations

__all__ = ["check_config"]


def check_config(cfg) -> list[str]:
    """The checks' findings, one line each; raises ConfigError or InputError (naming the key or
    file) at the first thing the daemon would refuse."""
    from cuzk.serve.circuits import load_entry
    from cuzk.serve.credentials import TlsFiles

    lines = [f"listen: {', '.join(a.target for a in cfg.listen)}"]
    if cfg.token() is not None:
        lines.append(f"[auth] token_file {cfg.token_file}: a token")
    if cfg.tls_cert is not None:
        TlsFiles(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca)
        lines.append(f"[tls] {cfg.tls_cert}: key matches" + (", client CA parses" if cfg.tls_client_ca else ""))
    if cfg.param_cache.is_dir():
        lines.append(f"[srs] param_cache {cfg.param_cache}")
    else:
        lines.append(f"note: [srs] param_cache {cfg.param_cache} does not exist: Filecoin proofs would be refused")
    for entry in cfg.circuits:
        _, key = load_entry(entry)
        lines.append(f"[[circuits]] {entry.name}: loads (key {key})")
    lines.extend(f"note: {key} is a Rust daemon setting cuzk serve ignores" for key in cfg.ignored)
    return lines
