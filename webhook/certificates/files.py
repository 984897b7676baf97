"""The serving pair as files, where the TLS stack loads it from: Python's ``ssl`` reads a
certificate and key only from paths. Each file is replaced atomically (a reader sees the old or
the new one, never half of one), the key first; keys are never readable by others."""

from __future__ import annotations

import os
from pathlib import Path


def write_pair(cert_path: Path, key_path: Path, cert: bytes, key: bytes) -> None:
    write_atomically(key_path, key, 0o600)
    write_atomically(cert_path, cert, 0o644)


def write_atomically(path: Path, content: bytes, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, content)
    finally:
        os.close(fd)
    os.replace(temporary, path)
