"""A TCP proxy in front of the fake API server that a test can cut and restore.

An outage as clients meet it: `cut` resets every open connection (watches
included) and refuses new ones, as an API server that went away does;
`restore` listens on the same address again. Point a kubeconfig at the proxy
(`write_kubeconfig`) and the code under test goes through it, while the test
keeps reaching the server directly through its hooks.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from types import TracebackType

from .kubeconfig import write_kubeconfig

_CHUNK = 65536


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to `target` until cut; started on construction."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.port = 0
        self.cuts = 0
        self._listen()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_kubeconfig(self, path: str | Path, namespace: str = "default") -> Path:
        return write_kubeconfig(self.url, path, namespace)

    # ---- outages ---------------------------------------------------------
    def cut(self) -> None:
        """Reset every connection and stop listening: connects are refused until `restore`."""
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, set()
            self.cuts += 1
        if listener is not None:
            _close(listener)
        for sock in connections:
            _close(sock)

    def restore(self) -> None:
        """Listen on the same port again."""
        with self._lock:
            if self._listener is not None:
                return
        self._listen()

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._listener is not None

    def stop(self) -> None:
        self.cut()

    def __enter__(self) -> CuttableProxy:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ---- forwarding ------------------------------------------------------
    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name=f"proxy-{self.port}", daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut: the listener is closed
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:
                    _close(client)
                    _close(upstream)
                    return
                self._connections |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(_CHUNK):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._connections -= {source, sink}
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
