"""The listening socket, accepted here rather than by the event loop's own server, so that a
connection costs nothing in user space until its client has sent a whole TLS record, the number of
connections is capped, and an accept that fails is said aloud and backed off from (DECISIONS.md
§2.3 has why; operations.md, Limits, what a client sees).

An accepted socket waits, with nothing but a readiness callback and a timer, until its first TLS
record (the ClientHello) is in the kernel's buffer: only then is it handed, through asyncio's
``loop.connect_accepted_socket``, to the event loop's TLS and uvicorn's protocol, whose buffers
(OpenSSL's and a 256 KiB read buffer of the event loop's TLS) cost tens of kilobytes a connection.
``SO_RCVLOWAT`` makes the kernel wake the wait only when the whole record is there (or the client
has gone), so that a ClientHello sent a byte at a time is no busy loop.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import select
import socket
import ssl
import struct
import time
from collections.abc import Callable

from webhook.server.limits import ConnectionGuard, Connections, Lifecycle

log = logging.getLogger("webhook.server.listener")

ACCEPT_ERRORS = ("EMFILE", "ENFILE", "ENOBUFS", "ENOMEM", "other")
"""The ``error`` label of ``webhook_accept_errors_total``: descriptors of the process or of the
system, kernel memory, and anything else."""

FIRST_DELAY, LONGEST_DELAY = 0.005, 1.0
"""Seconds the listener rests after a failed accept, doubling from the first to the longest, as
Go's ``net/http`` server does."""

BATCH = 128
"""Connections accepted in one turn of the event loop at most, so that a flood of them cannot keep
requests on open connections waiting."""

HANDSHAKE = 0x16
"""The content type of a TLS handshake record, the first byte of any client's first record."""
RECORD_HEADER = 5
LONGEST_RECORD = 16384 + 2048
"""A TLS record's longest body: one announcing more is handed over at once, for OpenSSL to refuse."""

RESET = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on with a zero timeout: ``close`` resets the connection rather than closing it."""


def first_record(peeked: bytes) -> int | None:
    """The bytes a whole first TLS record takes, from its header; None when ``peeked`` does not begin
    a handshake record (plain HTTP, say), for the TLS layer to answer it at once as it does."""
    if peeked[0] != HANDSHAKE:
        return None
    if len(peeked) < RECORD_HEADER:
        return RECORD_HEADER
    length = int.from_bytes(peeked[3:5], "big")
    return RECORD_HEADER + length if length <= LONGEST_RECORD else None


def hung_up(sock: socket.socket) -> bool:
    """Whether the client has closed its side (or the connection failed): the readiness the kernel
    reports, without reading."""
    poller = select.poll()
    poller.register(sock, getattr(select, "POLLRDHUP", 0) | select.POLLERR | select.POLLHUP)  # RDHUP: Linux's
    return bool(poller.poll(0))


class AcceptErrors:
    """Accepts that failed, by error, and the burst under way: logged once when it begins (with what
    is open and the descriptor limit) and once when accepts succeed again (with how many failed)."""

    def __init__(self, lifecycle: Lifecycle) -> None:
        self.lifecycle = lifecycle
        self.counts: dict[str, int] = dict.fromkeys(ACCEPT_ERRORS, 0)
        self.failed = 0
        self.since = 0.0

    def count(self, err: OSError, open_connections: int) -> None:
        name = errno.errorcode.get(err.errno or 0, "")
        self.counts[name if name in self.counts else "other"] += 1
        self.failed += 1
        if self.failed == 1:
            self.since = time.monotonic()
            self.lifecycle.accept_error = f"cannot accept connections: {err.strerror or err}"
            log.warning(
                "cannot accept connections: %s (%d open, descriptor limit %d); retrying in %g ms, backing off to %g s",
                err.strerror or err, open_connections, resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                FIRST_DELAY * 1000, LONGEST_DELAY,
            )

    def recovered(self) -> None:
        if self.failed:
            log.warning("accepting connections again after %d failed accepts in %.3g s", self.failed, time.monotonic() - self.since)
            self.failed = 0
            self.lifecycle.accept_error = None


class Acceptor:
    """Accepts the connections of one listening socket for one uvicorn server: at most ``limit``
    open at once (more are reset as they are accepted), each handed to TLS and to
    ``protocol()`` once its first TLS record has arrived."""

    def __init__(
        self,
        sock: socket.socket,
        connections: Connections,
        context: ssl.SSLContext,
        protocol: Callable[[], ConnectionGuard],
        limit: int,
        errors: AcceptErrors,
        backlog: int,
    ) -> None:
        self.sock = sock
        self.connections = connections
        self.context = context
        self.protocol = protocol
        self.limit = limit
        self.errors = errors
        self.backlog = backlog
        self.loop = asyncio.get_running_loop()
        self.delay = 0.0
        self.resting: asyncio.TimerHandle | None = None
        self.waiting: set[Opening] = set()
        self.handshakes: set[asyncio.Task[None]] = set()
        self.closed = False

    def start(self) -> None:
        self.sock.listen(self.backlog)
        self.sock.setblocking(False)
        self.loop.add_reader(self.sock.fileno(), self.accept)

    def accept(self) -> None:
        for _ in range(BATCH):
            try:
                conn, _peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # the client gave up before it was accepted
            except OSError as err:
                self.rest(err)
                return
            self.delay = 0.0
            self.errors.recovered()
            if self.connections.count >= self.limit:
                self.connections.dropped["max_connections"] += 1
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
                conn.close()
                continue
            self.connections.count += 1
            Opening(self, conn)

    def rest(self, err: OSError) -> None:
        """Stops accepting for a while after a failed accept: the connections wait in the kernel's
        backlog meanwhile, as they do for Go's server."""
        self.errors.count(err, self.connections.count)
        self.delay = min(self.delay * 2, LONGEST_DELAY) if self.delay else FIRST_DELAY
        self.loop.remove_reader(self.sock.fileno())
        self.resting = self.loop.call_later(self.delay, self.resume)

    def resume(self) -> None:
        self.resting = None
        if not self.closed:
            self.loop.add_reader(self.sock.fileno(), self.accept)
            self.accept()

    def hand_over(self, conn: socket.socket, seconds: float) -> None:
        task = self.loop.create_task(self.handshake(conn, seconds))
        self.handshakes.add(task)
        task.add_done_callback(self.handshakes.discard)

    async def handshake(self, conn: socket.socket, seconds: float) -> None:
        made: list[ConnectionGuard] = []

        def protocol() -> ConnectionGuard:
            made.append(self.protocol())
            return made[0]

        try:
            await self.loop.connect_accepted_socket(protocol, conn, ssl=self.context, ssl_handshake_timeout=seconds)
        except (OSError, asyncio.CancelledError) as err:
            # A failed handshake (asyncio's TLS closed the socket) is no concern of the server's: the
            # client is told by TLS. The guard counts a connection it was told of.
            if not (made and made[0].made):
                self.connections.ended()
            if isinstance(err, asyncio.CancelledError):
                raise

    def close(self) -> None:
        """Stops accepting: the listening socket is closed; connections accepted stay."""
        if self.closed:
            return
        self.closed = True
        if self.resting is not None:
            self.resting.cancel()
        else:
            self.loop.remove_reader(self.sock.fileno())
        self.sock.close()

    def drop_all(self) -> None:
        """Closes the connections that never reached uvicorn (at the drain's end)."""
        for opening in list(self.waiting):
            opening.close()
        for task in list(self.handshakes):
            task.cancel()


class Opening:
    """An accepted connection until its first TLS record has arrived, within ``--header-timeout``."""

    __slots__ = ("acceptor", "sock", "timer", "due", "needed")

    def __init__(self, acceptor: Acceptor, sock: socket.socket) -> None:
        self.acceptor = acceptor
        self.sock = sock
        self.needed = 0
        loop = acceptor.loop
        seconds = acceptor.connections.settings.header_timeout
        self.due = loop.time() + seconds
        self.timer = loop.call_later(seconds, self.expire)
        sock.setblocking(False)
        acceptor.waiting.add(self)
        loop.add_reader(sock.fileno(), self.readable)

    def readable(self) -> None:
        try:
            peeked = self.sock.recv(RECORD_HEADER + LONGEST_RECORD, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.close()
            return
        if not peeked:
            self.close()
            return
        needed = first_record(peeked)
        if needed is None or len(peeked) >= needed:
            self.hand_over()
        elif needed == self.needed and hung_up(self.sock):
            self.close()  # part of a record, and no more to come
        else:
            self.needed = needed
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, needed)

    def hand_over(self) -> None:
        if not self.stop():
            return
        if self.needed:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1)
        self.acceptor.hand_over(self.sock, max(self.due - self.acceptor.loop.time(), 0.001))

    def expire(self) -> None:
        self.acceptor.connections.dropped["header_timeout"] += 1
        self.close()

    def stop(self) -> bool:
        """Ends the wait; False if it had ended already."""
        if self not in self.acceptor.waiting:
            return False
        self.acceptor.waiting.discard(self)
        self.timer.cancel()
        self.acceptor.loop.remove_reader(self.sock.fileno())
        return True

    def close(self) -> None:
        if self.stop():
            self.sock.close()
            self.acceptor.connections.ended()
