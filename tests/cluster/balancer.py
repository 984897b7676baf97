"""A small TCP balancer standing in for a Service's endpoints: each new connection goes to the next
backend whose ``/readyz`` answered 200 at the last poll, as kube-proxy sends new connections only to
ready endpoints; bytes are copied both ways until either side closes. The backends' CA file is read
again at every poll, as a renewal adds a CA to it."""

from __future__ import annotations

import asyncio
import itertools
import ssl
import threading
from pathlib import Path

import httpx

POLL = 0.2


class Balancer:
    def __init__(self, port: int, backends: list[int], ca: Path) -> None:
        self.port = port
        self.backends = backends
        self.ca = ca
        self.ready: list[int] = []
        self.connections = 0
        self._open: set[asyncio.StreamWriter] = set()
        self._turn = itertools.count()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="balancer", daemon=True)

    def __enter__(self) -> Balancer:
        self._thread.start()
        self._started.wait(10)
        return self

    def all_ready(self) -> bool:
        """Every backend is an endpoint, as a rollout waits for before it stops the next pod."""
        return set(self.ready) == set(self.backends)

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connect, "127.0.0.1", self.port)
        poller = asyncio.create_task(self._poll())
        self._started.set()
        async with server:
            await self._stop.wait()
        poller.cancel()
        # Connections it carried end with it, as a Service's do when its endpoints go.
        for writer in list(self._open):
            writer.close()
        await asyncio.sleep(0)

    async def _poll(self) -> None:
        while True:
            try:
                context = ssl.create_default_context(cafile=str(self.ca))
            except (OSError, ssl.SSLError):
                self.ready = []
            else:
                async with httpx.AsyncClient(verify=context, timeout=0.5) as client:
                    self.ready = [port for port in self.backends if await _ready(client, port)]
            await asyncio.sleep(POLL)

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ready = self.ready
        if not ready:
            writer.close()
            return
        port = ready[next(self._turn) % len(ready)]
        self.connections += 1
        try:
            backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return
        self._open.update((writer, backend_writer))
        try:
            await asyncio.gather(_copy(reader, backend_writer), _copy(backend_reader, writer))
        finally:
            self._open.difference_update((writer, backend_writer))


async def _ready(client: httpx.AsyncClient, port: int) -> bool:
    try:
        return (await client.get(f"https://127.0.0.1:{port}/readyz")).status_code == 200
    except httpx.TransportError:
        return False


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
