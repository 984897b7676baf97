"""HTTP framing no API server sends, answered as Go's ``net/http`` answers it (perf/goref, run
against each case), or as DECISIONS.md §2.3 says and why: a transfer coding other than ``chunked``
is 501; a path with ``%2F`` is the path it decodes to; JSON text that is not UTF-8, or a lone
surrogate escape, is read as U+FFFD and decided; two equal ``Content-Length`` headers and a
chunk-size line longer than Go's 4 KiB are where the two differ."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

import orjson
import pytest
from server.rawclient import answer, keep_alive, port_of, post
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import Served, serve

REVIEW = body(review(workload_pcs()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("framing"), "--objects", str(WORKLOAD)) as served:
        yield served


def chunked(codings: str, content: bytes, size_line: bytes | None = None) -> bytes:
    head = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: {codings}\r\n\r\n"
    return head.encode() + (size_line or b"%x" % len(content)) + b"\r\n" + content + b"\r\n0\r\n\r\n"


def sent(server: Served, request: bytes) -> tuple[int, bytes]:
    tls = keep_alive(server)
    try:
        return answer(tls, request)
    finally:
        tls.close()


@pytest.mark.parametrize("codings", ["gzip, chunked", "identity, chunked"])
def test_a_coding_before_chunked_is_not_implemented(server: Served, codings: str) -> None:
    status, content = sent(server, chunked(codings, REVIEW))
    assert status == 501
    assert orjson.loads(content) == {"error": f'unsupported transfer encoding "{codings}": only chunked is taken'}


@pytest.mark.parametrize("codings", ["chunked", "Chunked"])
def test_chunked_alone_is_read(server: Served, codings: str) -> None:
    assert sent(server, chunked(codings, REVIEW))[0] == 200


def test_an_encoded_slash_is_the_path_it_decodes_to_as_in_gos_mux(server: Served) -> None:
    assert sent(server, post(VALIDATE.replace("s/v", "s%2Fv"), REVIEW))[0] == 200


@pytest.mark.parametrize(
    ("written", "read"),
    [
        pytest.param(b"fr\xff\xe2\x82ontend", "fr\ufffd\ufffd\ufffdontend", id="not-utf-8-byte-by-byte"),
        pytest.param(b"frontend\\ud800\\u0041", "frontend\ufffdA", id="lone-high-surrogate"),
        pytest.param(b"\\udc00frontend", "\ufffdfrontend", id="lone-low-surrogate"),
    ],
)
def test_text_go_reads_as_replacement_characters_is_decided(server: Served, written: bytes, read: str) -> None:
    """Grove's decoder (perf/groveref) reads these as U+FFFD and names the clique as read."""
    pcs = workload_pcs()
    pcs["spec"]["template"]["resourceSharing"][2]["filter"]["childCliqueNames"] = ["PLACEHOLDER"]
    content = body(review(pcs)).replace(b"PLACEHOLDER", written)
    status, answered = sent(server, post(VALIDATE, content))
    assert status == 200
    message = orjson.loads(answered)["response"]["status"]["message"]
    assert message == f'spec.template.resourceSharing[2].filter.childCliqueNames[0]: Not found: "{read}"'


def test_two_equal_content_lengths_are_refused_where_go_takes_them(server: Served) -> None:
    """DECISIONS.md §2.3: httptools refuses the head before any code of ours sees it."""
    head = f"POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(REVIEW)}\r\nContent-Length: {len(REVIEW)}\r\n\r\n"
    context = ssl.create_default_context(cafile=server.ca)
    with context.wrap_socket(socket.create_connection(("127.0.0.1", port_of(server))), server_hostname="localhost") as tls:
        tls.sendall(head.encode() + REVIEW)
        assert tls.recv(65536).startswith(b"HTTP/1.1 400 ")


def test_a_long_chunk_size_line_is_held_to_the_head_limit_not_gos_4_kib(server: Served) -> None:
    """DECISIONS.md §2.3: a chunk's framing counts against --max-header-bytes, as a head does."""
    assert sent(server, chunked("chunked", REVIEW, b"0" * 100_000 + b"%x" % len(REVIEW)))[0] == 200
