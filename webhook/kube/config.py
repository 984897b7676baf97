"""An API client from a kubeconfig or the in-cluster service account, as kubectl finds them."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

DEFAULT_KUBECONFIG = "~/.kube/config"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class KubeConfigError(Exception):
    """No usable cluster configuration; the message is one line for the command line."""


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def default_kubeconfig() -> str:
    """``KUBECONFIG``, else ``~/.kube/config``: read now, where the library reads it once, when imported."""
    return os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def api_client(kubeconfig: str | None = None, context: str | None = None) -> client.ApiClient:
    """A client for ``kubeconfig`` if given, else the in-cluster configuration in a pod (unless a
    ``context`` is asked for, which only a kubeconfig has), else the default kubeconfig; with
    ``context``, that context of it rather than the current one, as ``kubectl --context``."""
    config_file = _config_file(kubeconfig, context)
    try:
        if config_file is None:
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            return client.ApiClient(configuration)
        return config.new_client_from_config(config_file=config_file, context=context)
    except (ConfigException, OSError, TypeError, ValueError, yaml.YAMLError) as err:
        where = "in-cluster configuration" if config_file is None else f"kubeconfig {config_file}"
        raise KubeConfigError(f"cannot load {where}: {err}".replace("\n", " ")) from None


def _config_file(kubeconfig: str | None, context: str | None) -> str | None:
    """The kubeconfig to load, or None for the in-cluster configuration."""
    if kubeconfig and not Path(kubeconfig).expanduser().is_file():
        raise KubeConfigError(f"cannot load kubeconfig {kubeconfig}: no such file")
    if kubeconfig:
        return kubeconfig
    if in_cluster() and not context:
        return None
    default = default_kubeconfig()
    if not any(Path(p).expanduser().is_file() for p in default.split(os.pathsep) if p):
        raise KubeConfigError(_none_found(default))
    return default


def _none_found(kubeconfig: str) -> str:
    if os.environ.get("KUBECONFIG"):
        tried = [str(Path(p).expanduser()) for p in kubeconfig.split(os.pathsep) if p]
        none = "which does not exist" if len(tried) == 1 else "none of which exists"
        return f"no kubeconfig found: KUBECONFIG names {', '.join(tried)}, {none} (give --kubeconfig FILE, or run in a pod)"
    return (
        f"no kubeconfig found: {Path(DEFAULT_KUBECONFIG).expanduser()} does not exist and KUBECONFIG is not set "
        "(give --kubeconfig FILE, set KUBECONFIG, or run in a pod)"
    )


def own_namespace(kubeconfig: Path | None, context: str | None = None) -> str:
    """The namespace this process runs in: the service account's in a pod, else the kubeconfig
    context's (``context``, or the current one), else ``default``, as kubectl picks it."""
    if in_cluster() and not context and SERVICE_ACCOUNT_NAMESPACE.is_file():
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return _context_namespace(kubeconfig, context)


def _context_namespace(kubeconfig: Path | None, context: str | None) -> str:
    try:
        contexts, active = config.list_kube_config_contexts(config_file=str(kubeconfig) if kubeconfig else default_kubeconfig())
    except Exception:  # noqa: BLE001 - no usable context: the default namespace
        return "default"
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str((chosen or {}).get("context", {}).get("namespace") or "default")
