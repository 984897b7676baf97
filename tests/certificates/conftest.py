"""The fake API server fixtures, for the certificate controller's tests."""

from fakeapi.fixtures import fake_api, fake_api_server, kube_api_client, kubeconfig_path  # noqa: F401
