"""A single-node Kubernetes inside a network namespace of the tier's own: the cluster tier's control
plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), Debian's containerd with runc
and the ``bridge`` and ``host-local`` CNI plugins, and a kubelet of the same release, each started
with ``nsenter --net``. Found needed on these machines (docs/testing.md): kubelet ``failCgroupV1:
false``, ``cgroupDriver: cgroupfs`` and ``oomScoreAdj: 0``, containerd ``restrict_oom_score_adj``,
kube-apiserver ``--enable-aggregator-routing`` (webhooks are called at their Service's endpoints:
there is no kube-proxy), kubelet's volume plugin directory inside the tier's.

The API server listens on the same port inside the namespace and, through ``forward.py``, on the
test machine's 127.0.0.1, so one kubeconfig serves the tests, the tools and the components; pods
reach it at the ``kubernetes`` Service's address, which ``forward.py`` serves inside too.

``stop`` takes away everything the node made: its pods (and so their sandboxes' network namespaces
and CNI state), containerd's shims, the mounts kubelet and containerd made under the tier's
directory, containerd's images and snapshots, the cgroups under the tier's cgroup root, and the
network namespace with its interfaces.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kubernetes import client

from cluster.assets import Assets
from cluster.controlplane import Component, ControlPlane, tail
from cluster.ports import free_port
from node.host import (CNI_BIN, NODE_IP, POD_CIDR, SERVICE_IP, CgroupRoot, NetworkNamespace, kill_processes_using,
                       mounts_under, remove_stale, run, unmount_under)

NODE_NAME = "node-0"
PREFIX = "gsw-node-"
"""Of the node's network namespace and cgroups, followed by the pid of the run that made them."""
NETWORK = "grove-node"
"""The CNI network of the pods."""
CONTROLLERS = (
    "garbage-collector-controller", "namespace-controller", "serviceaccount-controller", "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller", "deployment-controller", "replicaset-controller", "endpoints-controller",
    "endpointslice-controller", "disruption-controller", "job-controller", "ttl-after-finished-controller",
    "pod-garbage-collector-controller", "node-lifecycle-controller", "resourceclaim-controller", "validatingadmissionpolicy-status-controller",
)
"""What a cluster runs for the chart's objects: Deployments and their ReplicaSets, the Service's
endpoints, the PodDisruptionBudget's status, the hook's Job, the namespace's CA ConfigMap every
pod's token volume holds, and the node lifecycle controller, which lifts the not-ready taint a new
Node is given once kubelet reports it Ready."""
READY_DEADLINE = 90.0
FORWARD = Path(__file__).with_name("forward.py")


class NodeControlPlane(ControlPlane):
    """The cluster tier's control plane, each process started in the node's network namespace."""

    netns: NetworkNamespace

    def __post_init__(self) -> None:
        super().__post_init__()
        self.serving = self.pki.serving("apiserver", ["127.0.0.1", "localhost", SERVICE_IP, NODE_IP, "kubernetes",
                                                      "kubernetes.default", "kubernetes.default.svc",
                                                      "kubernetes.default.svc.cluster.local"])
        self.kubelet_client = self.pki.client("kube-apiserver-kubelet-client", ("system:masters",))

    def _component(self, name: str, command: list[str]) -> Component:
        return super()._component(name, self.netns.command(*command))

    def _apiserver_command(self, etcd: str) -> list[str]:
        command = super()._apiserver_command(etcd)
        replaced = {"--bind-address=127.0.0.1": "--bind-address=0.0.0.0", "--advertise-address=127.0.0.1": f"--advertise-address={NODE_IP}"}
        command = [replaced.get(arg, arg) for arg in command]
        return command + ["--enable-aggregator-routing=true", f"--kubelet-client-certificate={self.kubelet_client.cert}",
                          f"--kubelet-client-key={self.kubelet_client.key}",
                          "--kubelet-preferred-address-types=InternalIP"]

    def _controller_manager_command(self) -> list[str]:
        command = [arg for arg in super()._controller_manager_command() if not arg.startswith("--controllers=")]
        plugins = self.workdir / "flexvolume"
        plugins.mkdir(exist_ok=True)
        return command + [f"--controllers={','.join(CONTROLLERS)}", f"--flex-volume-plugin-dir={plugins}"]


@dataclass
class Containerd:
    """Debian's containerd with a root, state and socket of its own under ``workdir``."""

    netns: NetworkNamespace
    workdir: Path
    pause: str
    process: Component | None = None

    def __post_init__(self) -> None:
        self.root, self.state = self.workdir / "root", self.workdir / "state"
        self.socket = self.workdir / "containerd.sock"
        self.cni = self.workdir / "cni"
        self.log = self.workdir / "containerd.log"

    @property
    def ctr(self) -> list[str]:
        return ["ctr", "--address", str(self.socket)]

    def config(self) -> str:
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return f"""version = 2
root = "{self.root}"
state = "{self.state}"
# No plugin writes outside the directories above (opt installs into /opt).
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{self.socket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[{cri}]
  sandbox_image = "{self.pause}"
  # Root here lacks CAP_SYS_RESOURCE: containers may not be given a lower OOM score than containerd's.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[{cri}.containerd.runtimes.runc.options]
  BinaryName = "/usr/sbin/runc"
  SystemdCgroup = false
[{cri}.cni]
  bin_dir = "{CNI_BIN}"
  conf_dir = "{self.cni / 'net.d'}"
"""

    def network(self) -> dict[str, object]:
        return {"cniVersion": "0.4.0", "name": NETWORK, "plugins": [{
            "type": "bridge", "bridge": "gswbr0", "isGateway": True, "ipMasq": False, "hairpinMode": True,
            "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR}]], "routes": [{"dst": "0.0.0.0/0"}],
                     "dataDir": str(self.cni / "ipam")}}]}

    def start(self) -> None:
        (self.cni / "net.d").mkdir(parents=True, exist_ok=True)
        (self.cni / "net.d" / f"10-{NETWORK}.conflist").write_text(json.dumps(self.network(), indent=2))
        config = self.workdir / "config.toml"
        config.write_text(self.config())
        self.process = Component("containerd", self.netns.command("containerd", "--config", config), self.log)
        self.process.start()
        end = time.monotonic() + 30
        while run(*self.ctr, "version", check=False).returncode:
            self.process.check()
            if time.monotonic() > end:
                raise RuntimeError(f"containerd did not start:\n{tail(self.log)}")
            time.sleep(0.1)

    def sandbox_netns(self) -> list[Path]:
        """The network namespaces (bind mounts in /run/netns) of the pods' sandboxes."""
        found = []
        listed = run(*self.ctr, "-n", "k8s.io", "containers", "ls", "-q", check=False).stdout.split()
        for container in listed:
            info = run(*self.ctr, "-n", "k8s.io", "containers", "info", container, check=False).stdout
            try:
                namespaces = json.loads(info)["Spec"]["linux"]["namespaces"]
            except (ValueError, KeyError, TypeError):
                continue
            found += [Path(n["path"]) for n in namespaces if n.get("type") == "network" and n.get("path")]
        return found

    def stop(self) -> list[Path]:
        """Kills every task, stops containerd and its shims; the sandboxes' network namespaces left."""
        left: list[Path] = []
        if self.process is not None and self.process.running():
            left = self.sandbox_netns()
            for task in run(*self.ctr, "-n", "k8s.io", "tasks", "ls", "-q", check=False).stdout.split():
                run(*self.ctr, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", task, check=False)
            self.process.stop()
        kill_processes_using(str(self.socket))
        return [path for path in left if path.exists()]


@dataclass
class Kubelet:
    netns: NetworkNamespace
    workdir: Path
    binary: Path
    plane: NodeControlPlane
    containerd: Containerd
    cgroup_root: CgroupRoot
    process: Component | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.workdir / "kubelet.log"
        self.root = self.workdir / "root"
        self.pod_logs = self.workdir / "pod-logs"

    def config(self) -> dict[str, object]:
        serving = self.plane.pki.serving("kubelet", [NODE_IP, NODE_NAME])
        endpoint = f"unix://{self.containerd.socket}"
        resolv = self.workdir / "resolv.conf"
        resolv.write_text("")  # no DNS: nothing in the tier looks names up
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            # These machines: cgroup v1 (hybrid), and root without CAP_SYS_RESOURCE.
            "failCgroupV1": False, "cgroupDriver": "cgroupfs", "oomScoreAdj": 0,
            "cgroupRoot": f"/{self.cgroup_root.name}", "cgroupsPerQOS": True,
            "containerRuntimeEndpoint": endpoint, "imageServiceEndpoint": endpoint,
            "address": NODE_IP, "port": free_port(), "readOnlyPort": 0, "healthzPort": 0,
            "tlsCertFile": str(serving.cert), "tlsPrivateKeyFile": str(serving.key),
            "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                               "x509": {"clientCAFile": str(self.plane.ca)}},
            "authorization": {"mode": "Webhook"},
            "volumePluginDir": str(self.workdir / "volume-plugins"), "podLogsDir": str(self.pod_logs),
            "resolvConf": str(resolv), "failSwapOn": False, "serializeImagePulls": False,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%",
                             "nodefs.inodesFree": "1%"},
            "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
            "syncFrequency": "10s", "fileCheckFrequency": "10s", "nodeStatusReportFrequency": "10s",
            "registerNode": True, "maxPods": 110, "rotateCertificates": False, "serverTLSBootstrap": False,
            "shutdownGracePeriod": "0s", "containerLogMaxSize": "10Mi",
        }

    def start(self) -> None:
        config = self.workdir / "kubelet.yaml"
        config.write_text(yaml.safe_dump(self.config()))
        kubeconfig = self.plane.kubeconfig(f"system:node:{NODE_NAME}", ("system:nodes",))
        command = self.netns.command(
            self.binary, f"--config={config}", f"--kubeconfig={kubeconfig}", f"--root-dir={self.root}",
            f"--hostname-override={NODE_NAME}", f"--node-ip={NODE_IP}", f"--cert-dir={self.workdir / 'pki'}", "--v=1")
        self.process = Component("kubelet", command, self.log)
        self.process.start()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


@dataclass
class Node:
    """The whole node: network namespace, control plane, containerd, kubelet."""

    assets: Assets
    workdir: Path
    pause: str
    images: list[Path]
    name: str = field(default_factory=lambda: f"{PREFIX}{os.getpid()}")
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.netns = NetworkNamespace(self.name)
        self.cgroups = CgroupRoot(self.name)
        self.forwarder: subprocess.Popen[bytes] | None = None
        self.plane: NodeControlPlane | None = None
        self.containerd = Containerd(self.netns, self.workdir / "containerd", self.pause)
        self.kubelet: Kubelet | None = None
        self.stale: list[str] = []
        """What runs killed before their end had left, removed before this node started."""
        # Directories of the host that ip netns, containerd 1.6, CNI and kubelet use whatever the
        # node's own are: removed at the end if this node made them and they are empty again.
        host_directories = ("/run/netns", "/var/lib/cni", "/var/lib/cni/results", "/var/log/containers")
        self.made = [Path(path) for path in host_directories if not Path(path).exists()]

    @property
    def log_paths(self) -> list[Path]:
        """The logs a failing test's report shows the tails of (some not written yet)."""
        logs = self.workdir / "controlplane" / "logs"
        return [self.containerd.log, self.workdir / "kubelet" / "kubelet.log",
                *(logs / f"{name}.log" for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"))]

    def start(self) -> None:
        started = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.stale = remove_stale(PREFIX, NETWORK)
        self.netns.create()
        self.cgroups.create()
        self.containerd.workdir.mkdir(parents=True, exist_ok=True)
        self.containerd.start()
        for archive in self.images:
            run(*self.containerd.ctr, "-n", "k8s.io", "images", "import", archive, timeout=300)
        self.timings["containerd and images"] = time.monotonic() - started
        plane = NodeControlPlane(self.assets, self.workdir / "controlplane")
        plane.netns = self.netns
        self.plane = plane
        self._forward(plane.port)
        plane.start()
        plane.start_controllers()
        self.kubelet = Kubelet(self.netns, self.workdir / "kubelet", self.assets.binary("kubelet"), plane, self.containerd, self.cgroups)
        self.kubelet.workdir.mkdir(parents=True, exist_ok=True)
        self.kubelet.start()
        self.wait_node_ready()
        self.timings["node up"] = time.monotonic() - started

    def _forward(self, port: int) -> None:
        log = self.workdir / "forward.log"
        command = [sys.executable, str(FORWARD), str(self.netns.path), "--outside", f"127.0.0.1:{port}=127.0.0.1:{port}",
                   "--inside", f"{SERVICE_IP}:443=127.0.0.1:{port}"]
        self.forwarder = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log.open("ab"), start_new_session=True)
        assert self.forwarder.stdout is not None
        if self.forwarder.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"forward.py did not start: {log.read_text()}")

    def wait_node_ready(self, deadline: float = READY_DEADLINE) -> None:
        assert self.plane is not None and self.kubelet is not None and self.kubelet.process is not None
        core = client.CoreV1Api(self.admin())
        end = time.monotonic() + deadline
        while True:
            self.kubelet.process.check()
            try:
                node = core.read_node(NODE_NAME)
                if any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or []):
                    return
            except client.exceptions.ApiException as err:
                if err.status != 404:
                    raise
            if time.monotonic() > end:
                raise RuntimeError(f"node not Ready within {deadline:g} s:\n{tail(self.kubelet.log)}")
            time.sleep(0.2)

    def admin(self) -> client.ApiClient:
        from cluster.kube import api_client

        assert self.plane is not None
        return api_client(self.plane.admin)

    def _delete_pods(self, deadline: float = 60) -> None:
        """Every pod deleted through the API, and their containers gone from containerd: kubelet
        stops their sandboxes, which removes their network namespaces and CNI state."""
        assert self.plane is not None
        for name in ("kube-controller-manager", "kube-scheduler"):  # nothing makes them again
            if name in self.plane.components:
                self.plane.components[name].stop()
        core = client.CoreV1Api(self.admin())
        end = time.monotonic() + deadline
        for pod in core.list_pod_for_all_namespaces().items:
            try:
                core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
            except client.exceptions.ApiException:
                pass
        while time.monotonic() < end:
            tasks = run(*self.containerd.ctr, "-n", "k8s.io", "tasks", "ls", check=False).stdout.splitlines()[1:]
            if not [t for t in tasks if "RUNNING" in t]:
                break
            time.sleep(0.5)
        # Then the sandboxes kubelet has stopped (their network torn down) are removed with the state.
        while time.monotonic() < end and self.containerd.sandbox_netns() and any(p.exists() for p in self.containerd.sandbox_netns()):
            time.sleep(0.5)

    def stop(self) -> list[str]:
        """Takes everything away; what could not be removed (for the report)."""
        problems: list[str] = []
        steps = [
            ("pods", self._delete_pods if self.kubelet is not None and self.plane is not None else None),
            ("kubelet", self.kubelet.stop if self.kubelet is not None else None),
        ]
        for what, step in steps:
            if step is None:
                continue
            try:
                step()
            except Exception as err:  # keep going: everything else must still go
                problems.append(f"{what}: {err}")
        left = self.containerd.stop()
        for path in left:  # sandboxes whose network kubelet did not tear down
            run("umount", "--lazy", path, check=False)
            path.unlink(missing_ok=True)
        if self.plane is not None:
            self.plane.stop()
        if self.forwarder is not None and self.forwarder.poll() is None:
            self.forwarder.send_signal(signal.SIGTERM)
            self.forwarder.wait(10)
        unmount_under(self.workdir)
        problems += [f"cgroup left: {p}" for p in self.cgroups.remove()]
        self.netns.delete()
        for directory in reversed(self.made):
            try:
                directory.rmdir()
            except OSError:
                pass
        for link in Path("/var/log/containers").glob("*.log") if Path("/var/log/containers").is_dir() else []:
            if link.is_symlink() and str(os.readlink(link)).startswith(str(self.workdir)):
                link.unlink()
        for heavy in (self.containerd.root, self.containerd.state, self.workdir / "kubelet" / "root"):
            if heavy.exists() and not mounts_under(heavy):
                shutil.rmtree(heavy, ignore_errors=True)
            elif heavy.exists():
                problems.append(f"mounts left under {heavy}")
        return problems
