"""A Kubernetes-API-compatible HTTP server for tests, in-process on 127.0.0.1.

Code under test talks to it through the real ``kubernetes`` client and a
kubeconfig, so what it exercises is the same HTTP traffic a cluster would see;
tests set up and check state through the server's hooks. Import it as
``from fakeapi import FakeApiServer`` (pytest puts ``tests/`` on ``sys.path``
for test modules there); fixtures are in `fakeapi.fixtures`.

    from kubernetes import client
    from fakeapi import FakeApiServer

    with FakeApiServer() as api:                       # or the `fake_api` fixture
        kube = api.api_client(tmp_path / "kubeconfig")  # or `kube_api_client`
        client.ResourceV1Api(kube).list_resource_claim_for_all_namespaces()
        api.create({...}); api.get("resourceclaims", "ns", "name")
        api.requests.count("GET", r"/resourceclaims$", watch=True)
        api.fail_next("PUT", r"/podcliques/", 409, "Conflict")
        api.compact(); api.expire_watches()
        api.delay_watch("podcliques", 0.5)             # that resource's events arrive late
        api.authorization.allow(group="devs", namespace="shared")  # SubjectAccessReviews' answers
        api.authorization.reviews; api.hold_next("POST", r"/subjectaccessreviews$", 5.0)

    with CuttableProxy((api.host, api.port)) as proxy:  # an outage between client and server
        proxy.write_kubeconfig(tmp_path / "kubeconfig"); proxy.cut(); proxy.restore()

Modules: `resources` (what is served, as data), `store` and `lifecycle`
(objects, writes, deletion and garbage collection), `watches` (history and
streams; its docstring says what a client sees on 410), `selectors`,
`patching`, `routing`, `app` (HTTP), `discovery`, `errors` (Status bodies),
`server` (the class and its hooks), `authorization` (SubjectAccessReviews),
`requestlog`, `faults`, `proxy`,
`kubeconfig`, `fixtures`, `polling`.
"""

from .kubeconfig import new_api_client, write_kubeconfig
from .polling import wait_until
from .proxy import CuttableProxy
from .requestlog import RecordedRequest, RequestLog
from .resources import DEFAULT_RESOURCES, Registry, ResourceType
from .server import FakeApiServer

__all__ = [
    "DEFAULT_RESOURCES", "CuttableProxy", "FakeApiServer", "RecordedRequest", "Registry", "RequestLog",
    "ResourceType", "new_api_client", "wait_until", "write_kubeconfig",
]
