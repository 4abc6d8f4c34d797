"""Whether this machine can listen on a TCP port, asked before TensorFlow's gRPC servers try.

gRPC servers set SO_REUSEPORT, so TensorFlow would start a second server on a port another gRPC
server holds without a word, and the two would split the connections between them; on a port a
plain program holds, it fails with "Could not start gRPC server" and a traceback. A plain socket,
which does not set SO_REUSEPORT, cannot bind either: that is the test.
"""

from __future__ import annotations

import errno
import socket
from typing import Optional


def why_port_is_taken(port: int) -> Optional[str]:
    """Why a server cannot listen on `port` on every interface (None: it can; port 0 always can)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if socket.has_dualstack_ipv6() else socket.AF_INET
    try:
        socket.create_server(("", port), family=family, dualstack_ipv6=family == socket.AF_INET6).close()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return "the port is in use (by another program, or another xtts process)"
        if exc.errno == errno.EACCES:
            return "binding ports below 1024 needs privileges"
        return (exc.strerror or str(exc)).split(" (while", 1)[0].lower()
    return None
