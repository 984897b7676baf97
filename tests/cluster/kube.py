"""The official Python client against the tier's API server, as the project's own code uses it,
and the few steps every scenario needs: wait, get a ServiceAccount token, install CRDs."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

DEADLINE = 30.0
T = TypeVar("T")


def api_client(kubeconfig: Path) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


def wait_for(condition: Callable[[], T], what: str, deadline: float = DEADLINE, interval: float = 0.1) -> T:
    """The first truthy value of ``condition()``, retried until ``deadline`` seconds have passed."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline:g} s waiting for {what}")
        time.sleep(interval)


def service_account_token(api: client.ApiClient, namespace: str, name: str, seconds: int = 7200) -> str:
    """A token for the ServiceAccount from the TokenRequest API, as ``kubectl create token`` gets one."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    answer = client.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, request)
    return str(answer.status.token)


def install_crds(api: client.ApiClient, directory: Path) -> list[str]:
    """Creates every CRD in ``directory`` and waits until each is established; their names."""
    extensions = client.ApiextensionsV1Api(api)
    names = []
    for path in sorted(directory.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CustomResourceDefinition":
                extensions.create_custom_resource_definition(document)
                names.append(document["metadata"]["name"])

    def established() -> bool:
        for name in names:
            conditions = extensions.read_custom_resource_definition(name).status.conditions or []
            if not any(c.type == "Established" and c.status == "True" for c in conditions):
                return False
        return True

    wait_for(established, "Grove's CRDs to be established")
    return names


def create_namespace(api: client.ApiClient, name: str) -> None:
    try:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    except ApiException as err:
        if err.status != 409:
            raise


def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def grove(api: client.ApiClient, plural: str, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """Creates a grove.io/v1alpha1 object; the object as the API server stored it."""
    created: dict[str, Any] = custom(api).create_namespaced_custom_object("grove.io", "v1alpha1", namespace, plural, body)
    return created
