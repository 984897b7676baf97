"""A TCP forwarder into the node's network namespace, run as a process of its own:

    python forward.py NETNS_PATH [--outside HOST:PORT=HOST:PORT] [--inside HOST:PORT=HOST:PORT]

``--outside`` listens in the caller's namespace (the test machine's 127.0.0.1), ``--inside`` in the
node's; every connection is made in the node's namespace. The tests and their tools reach the API
server on 127.0.0.1 as they would any other, and pods reach it at the ``kubernetes`` Service's
address without kube-proxy. Prints ``ready`` once every listener is open.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def listen(where: tuple[str, int]) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(where)
    server.listen(128)
    return server


def pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(server: socket.socket, target: tuple[str, int]) -> None:
    while True:
        client, _ = server.accept()
        try:
            upstream = socket.create_connection(target)
        except OSError:
            client.close()
            continue
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("netns")
    parser.add_argument("--outside", action="append", default=[])
    parser.add_argument("--inside", action="append", default=[])
    options = parser.parse_args()
    pairs = [(listen(address(a)), address(b)) for a, b in (o.split("=") for o in options.outside)]
    fd = os.open(options.netns, os.O_RDONLY)
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
        sys.exit(f"forward: setns {options.netns}: errno {ctypes.get_errno()}")
    os.close(fd)
    pairs += [(listen(address(a)), address(b)) for a, b in (o.split("=") for o in options.inside)]
    threads = [threading.Thread(target=serve, args=pair, daemon=True) for pair in pairs]
    for thread in threads:
        thread.start()
    print("ready", flush=True)
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
