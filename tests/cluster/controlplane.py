"""A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver and, where their binaries are
there, kube-controller-manager and kube-scheduler, each a process with its log in ``workdir/logs``.

The API server runs as a production one does: TLS from the tests' CA, client certificates and
ServiceAccount tokens for authentication, RBAC, the default admission plugins (webhooks and
policies among them) plus NodeRestriction, ``resource.k8s.io/v1`` served. The controller manager
runs only the controllers the tests rely on (the garbage collector, namespaces, ServiceAccounts and
their tokens, DRA's claim controller, Jobs for the chart's pre-delete hook, the type check of
ValidatingAdmissionPolicies); the node lifecycle controller is left out, so Nodes the tests create
stay Ready without a kubelet.
"""

from __future__ import annotations

import datetime
import signal
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import yaml

from cluster.assets import Assets
from cluster.pki import Authority, signing_key
from cluster.ports import free_port

READY_DEADLINE = 60.0
STOP_DEADLINE = 15.0

CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "resourceclaim-controller",
    "job-controller",
    "validatingadmissionpolicy-status-controller",
)
ADMISSION_PLUGINS = ("NodeRestriction",)
"""Enabled beside the API server's defaults (NamespaceLifecycle, ServiceAccount, the webhooks,
ValidatingAdmissionPolicy, ResourceQuota, ...)."""

ADMIN = ("admin", ("system:masters",))
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass
class Component:
    """One control-plane process."""

    name: str
    command: list[str]
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as output:
            output.write(f"--- started: {' '.join(self.command)}\n".encode())
            output.flush()
            self.process = subprocess.Popen(self.command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{tail(self.log)}")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if not self.running():
            return
        assert self.process is not None
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class ControlPlane:
    assets: Assets
    workdir: Path
    feature_gates: dict[str, bool] = field(default_factory=dict)
    audit_policy: dict[str, object] | None = None
    runtime_config: tuple[str, ...] = ()
    """API versions served beside the defaults, e.g. the alpha one an alpha feature gate's objects need."""

    def __post_init__(self) -> None:
        self.logs = self.workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.pki = Authority(self.workdir / "pki")
        self.serving = self.pki.serving("apiserver", ["127.0.0.1", "localhost", "kubernetes.default.svc"])
        self.sa_key, self.sa_pub = signing_key(self.workdir / "pki")
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.audit_log = self.logs / "audit.log"
        self.components: dict[str, Component] = {}
        self.startups: list[tuple[datetime.datetime, datetime.datetime]] = []
        """When kube-apiserver was started and when it was ready, each time: until its caches have
        synced it refuses even requests RBAC allows (403), which a client connecting directly sees."""
        self.admin = self.kubeconfig(*ADMIN)

    @property
    def ca(self) -> Path:
        return self.pki.pair.cert

    # --- kubeconfigs -------------------------------------------------------------------------------

    def _write_kubeconfig(self, name: str, user: dict[str, str], namespace: str = "default") -> Path:
        path = self.workdir / "kubeconfigs" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "test", "cluster": {"server": self.url, "certificate-authority": str(self.ca)}}],
            "users": [{"name": name, "user": user}],
            "contexts": [{"name": name, "context": {"cluster": "test", "user": name, "namespace": namespace}}],
            "current-context": name,
        }
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path

    def kubeconfig(self, user: str, groups: tuple[str, ...] = ()) -> Path:
        """A kubeconfig authenticating as ``user`` in ``groups`` with a client certificate."""
        pair = self.pki.client(user, groups)
        name = user.replace(":", "-")
        return self._write_kubeconfig(name, {"client-certificate": str(pair.cert), "client-key": str(pair.key)})

    def token_kubeconfig(self, name: str, token: str, namespace: str = "default") -> Path:
        """A kubeconfig authenticating with a bearer token (a ServiceAccount's, from TokenRequest)."""
        return self._write_kubeconfig(name, {"token": token}, namespace)

    # --- processes ---------------------------------------------------------------------------------

    def _component(self, name: str, command: list[str]) -> Component:
        component = Component(name, command, self.logs / f"{name}.log")
        self.components[name] = component
        return component

    def start(self) -> None:
        etcd_port, peer_port = free_port(), free_port()
        etcd = f"http://127.0.0.1:{etcd_port}"
        self._component("etcd", [
            str(self.assets.binary("etcd")), "--name=default", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={etcd}", f"--advertise-client-urls={etcd}",
            f"--listen-peer-urls=http://127.0.0.1:{peer_port}", f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-cluster=default=http://127.0.0.1:{peer_port}", "--unsafe-no-fsync", "--log-level=warn",
        ]).start()
        self._component("kube-apiserver", self._apiserver_command(etcd))
        self.start_apiserver()

    def start_controllers(self) -> None:
        """The controller manager and the scheduler, where their binaries are. Started once the
        CRDs are in: the garbage collector looks for new kinds only every 30 s."""
        for name, command in (("kube-controller-manager", self._controller_manager_command),
                              ("kube-scheduler", self._scheduler_command)):
            if self.assets.has(name):
                self._component(name, command()).start()

    def _apiserver_command(self, etcd: str) -> list[str]:
        command = [
            str(self.assets.binary("kube-apiserver")),
            f"--etcd-servers={etcd}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={self.serving.cert}", f"--tls-private-key-file={self.serving.key}",
            f"--client-ca-file={self.ca}",
            "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(ADMISSION_PLUGINS)}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={self.sa_pub}", f"--service-account-signing-key-file={self.sa_key}",
            "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
        ]
        if self.feature_gates:
            gates = ",".join(f"{name}={str(on).lower()}" for name, on in sorted(self.feature_gates.items()))
            command.append(f"--feature-gates={gates}")
        if self.runtime_config:
            command.append(f"--runtime-config={','.join(self.runtime_config)}")
        if self.audit_policy is not None:
            policy = self.workdir / "audit-policy.yaml"
            policy.write_text(yaml.safe_dump(self.audit_policy))
            command += [f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}", "--audit-log-format=json"]
        return command

    def _component_kubeconfig(self, user: str) -> str:
        return str(self.kubeconfig(user))

    def _controller_manager_command(self) -> list[str]:
        kubeconfig = self._component_kubeconfig("system:kube-controller-manager")
        command = [
            str(self.assets.binary("kube-controller-manager")),
            f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=false", "--secure-port=0",
            "--use-service-account-credentials=true", f"--service-account-private-key-file={self.sa_key}",
            f"--root-ca-file={self.ca}", f"--controllers={','.join(CONTROLLERS)}",
            "--concurrent-gc-syncs=5",
        ]
        if self.feature_gates:
            command.append(f"--feature-gates={','.join(f'{n}={str(on).lower()}' for n, on in sorted(self.feature_gates.items()))}")
        return command

    def _scheduler_command(self) -> list[str]:
        kubeconfig = self._component_kubeconfig("system:kube-scheduler")
        command = [
            str(self.assets.binary("kube-scheduler")),
            f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=false", "--secure-port=0",
        ]
        if self.feature_gates:
            command.append(f"--feature-gates={','.join(f'{n}={str(on).lower()}' for n, on in sorted(self.feature_gates.items()))}")
        return command

    def start_apiserver(self) -> None:
        """Starts kube-apiserver (again, after ``stop_apiserver``, on the same port and etcd) and
        waits until it is ready."""
        started = datetime.datetime.now(datetime.timezone.utc)
        self.components["kube-apiserver"].start()
        self.wait_ready()
        self.startups.append((started, datetime.datetime.now(datetime.timezone.utc)))

    def stop_apiserver(self) -> None:
        self.components["kube-apiserver"].stop()

    def wait_ready(self, deadline: float = READY_DEADLINE) -> None:
        end = time.monotonic() + deadline
        admin = self.pki.client(*ADMIN)
        context = ssl.create_default_context(cafile=self.ca)
        context.load_cert_chain(admin.cert, admin.key)
        with httpx.Client(verify=context, timeout=2) as client:
            while True:
                for component in self.components.values():
                    component.check()
                try:
                    # Ready, and the system namespaces made (kube-system comes a moment after /readyz).
                    if client.get(f"{self.url}/readyz").status_code == 200 and all(
                        client.get(f"{self.url}/api/v1/namespaces/{name}").status_code == 200 for name in SYSTEM_NAMESPACES
                    ):
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > end:
                    raise RuntimeError(f"kube-apiserver not ready after {deadline:g} s:\n{tail(self.components['kube-apiserver'].log)}")
                time.sleep(0.1)

    def stop(self) -> None:
        for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            if name in self.components:
                self.components[name].stop()

    def log_tails(self, lines: int = 30) -> str:
        return "\n".join(f"--- {c.name} ({c.log})\n{tail(c.log, lines)}" for c in self.components.values())

