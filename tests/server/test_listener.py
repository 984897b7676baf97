"""The listener: connections past ``--max-connections`` reset before TLS while open ones are served;
a full descriptor table said once, counted, backed off from and recovered from, with ``/readyz``
telling the truth meanwhile; a connection costing no TLS state until its ClientHello is in."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from server.hostile import metric, rss_bytes
from server.rawclient import answer, keep_alive, port_of, post, status
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, poll, serve

REVIEW = body(review(workload_pcs()))


def readyz(tls: ssl.SSLSocket) -> int:
    return status(tls, b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n")


def what_a_new_client_sees(served: Served) -> str:
    """``reset`` at once, or ``kept`` waiting for the rest of its ClientHello."""
    sock = socket.create_connection(("127.0.0.1", port_of(served)), timeout=1)
    try:
        sock.sendall(b"\x16")
        return "closed" if sock.recv(1) == b"" else "answered"
    except ConnectionResetError:
        return "reset"
    except TimeoutError:
        return "kept"
    finally:
        sock.close()


def test_past_max_connections_a_new_one_is_reset_and_open_ones_are_answered(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD), "--max-connections", "16") as server:
        kept = keep_alive(server)
        filler = [socket.create_connection(("127.0.0.1", port_of(server))) for _ in range(15)]
        assert what_a_new_client_sees(server) == "reset"
        assert status(kept, post(VALIDATE, REVIEW)) == 200
        for sock in filler:
            sock.close()
        kept.close()
        poll(lambda: what_a_new_client_sees(server) == "kept" or None, "a slot to free")
        assert metric(server, "webhook_connections_dropped_total", reason="max_connections") >= 1
        assert metric(server, "webhook_connections_limit") == 16


def test_a_connection_waiting_for_its_client_hello_costs_no_tls_state(tmp_path: Path) -> None:
    """Five hundred connections that send nothing, or half a ClientHello, take under 2 MiB (Go's
    server: about 6 MiB); their descriptors are all the server holds for them."""
    with serve(tmp_path, "--objects", str(WORKLOAD), "--header-timeout", "60") as server:
        context = ssl.create_default_context(cafile=server.ca)
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        with pytest.raises(ssl.SSLWantReadError):
            context.wrap_bio(incoming, outgoing, server_hostname="localhost").do_handshake()
        hello = outgoing.read()
        before = rss_bytes(server)
        held = [socket.create_connection(("127.0.0.1", port_of(server))) for _ in range(500)]
        try:
            for sock in held[::2]:
                sock.sendall(hello[: len(hello) // 2])
            poll(lambda: metric(server, "webhook_connections") >= 500, "the server to accept them all")
            assert rss_bytes(server) - before < 2 * 1024 * 1024
            with server.client() as client:
                assert client.post(VALIDATE, content=REVIEW).status_code == 200
        finally:
            for sock in held:
                sock.close()


DESCRIPTORS = 96
LIMITED = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, ({DESCRIPTORS}, {DESCRIPTORS}))
from webhook.cli import main
sys.exit(main(sys.argv[1:]))
"""


def accept_failures(log: str) -> list[str]:
    return [line for line in log.splitlines() if "cannot accept connections" in line]


def failed_accepts(tls: ssl.SSLSocket) -> float:
    """``webhook_accept_errors_total{error="EMFILE"}``, asked on an open connection: no new one can be."""
    text = answer(tls, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")[1].decode()
    return next(
        s.value for f in text_string_to_metric_families(text) for s in f.samples
        if s.name == "webhook_accept_errors_total" and s.labels["error"] == "EMFILE"
    )


def test_a_full_descriptor_table_is_said_once_counted_and_recovered_from(tmp_path: Path) -> None:
    with serve(tmp_path, "--objects", str(WORKLOAD), "--header-timeout", "60", program=("-c", LIMITED)) as server:
        kept = keep_alive(server)
        assert readyz(kept) == 200
        waiting = [socket.create_connection(("127.0.0.1", port_of(server))) for _ in range(DESCRIPTORS + 20)]
        poll(lambda: accept_failures(server.log_text()), "the failed accept to be logged")
        assert readyz(kept) == 503
        assert status(kept, post(VALIDATE, REVIEW)) == 200  # open connections are served meanwhile
        poll(lambda: failed_accepts(kept) >= 3, "the accept to be retried")
        lines = accept_failures(server.log_text())
        assert len(lines) == 1 and "Too many open files" in lines[0] and f"descriptor limit {DESCRIPTORS}" in lines[0], lines
        for sock in waiting:
            sock.close()
        poll(lambda: "accepting connections again after" in server.log_text(), "accepts to succeed again")
        poll(lambda: readyz(kept) == 200, "readiness to come back")
        kept.close()
        with httpx.Client(base_url=server.url, verify=ssl.create_default_context(cafile=server.ca), timeout=10) as client:
            assert client.post(VALIDATE, content=REVIEW).status_code == 200
        assert len(accept_failures(server.log_text())) == 1
