"""The fake API server fixtures for the cluster store tests."""

from fakeapi.fixtures import fake_api, fake_api_server, kube_api_client, kubeconfig_path  # noqa: F401
