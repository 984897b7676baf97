"""Building an API client from a kubeconfig or the in-cluster service account."""

from __future__ import annotations

import os

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException


class KubeConfigError(Exception):
    """No usable cluster configuration; the message is one line for the command line."""


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def api_client(kubeconfig: str | None = None) -> client.ApiClient:
    """A client for ``kubeconfig`` if given, else in-cluster config when running in a pod, else the
    default kubeconfig (``KUBECONFIG`` or ``~/.kube/config``)."""
    try:
        if kubeconfig:
            return config.new_client_from_config(config_file=kubeconfig)
        if in_cluster():
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            return client.ApiClient(configuration)
        return config.new_client_from_config()
    except (ConfigException, OSError, TypeError, ValueError, yaml.YAMLError) as err:
        where = kubeconfig or ("in-cluster configuration" if in_cluster() else "the default kubeconfig")
        raise KubeConfigError(f"cannot load {where}: {err}".replace("\n", " ")) from None
