"""Failures to reach the API server, told apart from its answers and said in one line: urllib3's
texts name the connection object and repeat the URL.
"""

from __future__ import annotations

import urllib3
from kubernetes.client.exceptions import ApiException

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (urllib3.exceptions.HTTPError, OSError)


def is_connection_error(err: BaseException) -> bool:
    """The request got no answer from the API server (as opposed to an error answer)."""
    return isinstance(err, CONNECTION_ERRORS) or (isinstance(err, ApiException) and err.status == 0)


def connection_problem(err: BaseException) -> str:
    """One line: what failed, without the client's object names."""
    if isinstance(err, urllib3.exceptions.MaxRetryError) and err.reason is not None:
        return connection_problem(err.reason)
    if isinstance(err, urllib3.exceptions.HTTPError):
        return _transport_problem(err)
    if isinstance(err, ApiException):
        return " ".join(f"API error {err.status} {err.reason or ''}".split())
    return _one_line(err)


def _transport_problem(err: urllib3.exceptions.HTTPError) -> str:
    if isinstance(err, urllib3.exceptions.NewConnectionError):
        return f"cannot connect to the API server: {str(err).split('Failed to establish a new connection: ', 1)[-1]}"
    if isinstance(err, (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ConnectTimeoutError)):
        return "the API server did not answer in time"
    if isinstance(err, urllib3.exceptions.ProtocolError):
        inner = err.args[1] if len(err.args) > 1 else None
        return "connection to the API server lost" + (f": {type(inner).__name__}" if isinstance(inner, BaseException) else "")
    return _one_line(err)


def _one_line(err: BaseException) -> str:
    return " ".join((str(err) or type(err).__name__).split())
