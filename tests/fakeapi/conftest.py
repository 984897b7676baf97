"""Makes the fake API server fixtures available to the tests in this folder."""

from .fixtures import fake_api, fake_api_server, kube_api_client, kubeconfig_path  # noqa: F401
