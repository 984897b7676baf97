"""Kubeconfig files and clients for a fake API server.

Tests reach the fake server the way production code reaches a cluster: the
official client loads a kubeconfig. Nothing here touches the client's global
default configuration, so tests do not leak settings into one another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CONTEXT = "fakeapi"


def kubeconfig(url: str, namespace: str = "default") -> dict[str, Any]:
    """A kubeconfig for plain HTTP on loopback with a dummy bearer token."""
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": {"server": url}}],
        "users": [{"name": CONTEXT, "user": {"token": "fakeapi-token"}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT,
                                                    "namespace": namespace}}],
        "current-context": CONTEXT,
    }


def write_kubeconfig(url: str, path: str | Path, namespace: str = "default") -> Path:
    """Write the kubeconfig for `url` to `path` (parents created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig(url, namespace), sort_keys=False))
    return path


def new_api_client(kubeconfig_path: str | Path) -> Any:
    """A ``kubernetes.client.ApiClient`` built from the file, as production code would."""
    from kubernetes import config

    return config.new_client_from_config(config_file=str(kubeconfig_path))
