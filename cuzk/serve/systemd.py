"""systemd's readiness protocol (``Type=notify``): ``cuzk serve`` says ``READY=1`` once every
listener is up, so units ordered after it (Curio) start only when the daemon answers, and
``STOPPING=1`` when the graceful stop begins. systemd names the socket in ``$NOTIFY_SOCKET`` (a
path, or ``@name`` in the abstract namespace); without it nothing is sent.

    >>> import os, socket, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "notify")
    >>> systemd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); systemd.bind(path)
    >>> os.environ["NOTIFY_SOCKET"] = path
    >>> notify("READY=1", "STATUS=serving")
    True
    >>> systemd.recv(100)
    b'READY=1\\nSTATUS=serving'
    >>> del os.environ["NOTIFY_SOCKET"]; systemd.close()
    >>> notify("READY=1")   # no $NOTIFY_SOCKET: nothing is sent
    False
"""

from __future__ import annotations

import logging
import os
import socket

__all__ = ["notify"]

_log = logging.getLogger("cuzk.serve")


def notify(*lines: str) -> bool:
    """Send ``lines`` (``"READY=1"``, ``"STATUS=..."``) as one datagram to ``$NOTIFY_SOCKET``. True
    when sent; False when no socket is named or the send failed (logged: the daemon serves on)."""
    addr = os.environ.get("NOTIFY_SOCKET", "")
    if not addr:
        return False
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    elif not addr.startswith("/"):
        _log.warning("NOTIFY_SOCKET %r: only Unix socket paths and @abstract names are supported", addr)
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall("\n".join(lines).encode())
    except OSError as e:
        _log.warning("NOTIFY_SOCKET %r: %s", os.environ.get("NOTIFY_SOCKET"), e)
        return False
    return True
