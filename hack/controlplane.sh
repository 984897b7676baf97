#!/usr/bin/env bash
# Builds the Kubernetes control plane the cluster test tier runs against, and the tools the tests
# drive it with, from the Go modules of pinned releases into a cache outside the repository. The
# binaries are named and laid out as envtest's KUBEBUILDER_ASSETS directory is (etcd,
# kube-apiserver, kubectl, plus kube-controller-manager, kube-scheduler, helm and promtool), so the
# tier takes either; kubelet beside them is for the node tier (tests/node), which starts a real node.
#
#   hack/controlplane.sh KUBE_VERSION HELM_VERSION PROMETHEUS_VERSION DEST
#
# etcd is built at the version of the etcd client that Kubernetes release requires. Each part is
# built only while its stamp in DEST (.kubernetes, .kubelet, .helm, .promtool) does not name the
# version asked. kubelet is built from the same module, flags and module set as the control plane's
# binaries, so Go's build cache serves the packages they share.
set -euo pipefail

kube_version=${1:?Kubernetes version, e.g. 1.37.2}
helm_version=${2:?Helm version, e.g. 3.22.0}
prometheus_version=${3:?Prometheus module version, e.g. 0.316.0}
dest=${4:?destination directory}

command -v go >/dev/null || { echo "controlplane: Go is needed to build the control plane (or set KUBEBUILDER_ASSETS)" >&2; exit 1; }

minor=${kube_version#*.}; minor=${minor%%.*}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
mkdir -p "$dest"

current() { [[ -f "$dest/.$1" && "$(cat "$dest/.$1")" == "$2" ]]; }

# A cache made before the parts had stamps of their own: "kubernetes vX helm vY" in .complete.
if [[ -f "$dest/.complete" ]]; then
  read -r _ kube_built _ helm_built < "$dest/.complete"
  echo "$kube_built" > "$dest/.kubernetes"; echo "$helm_built" > "$dest/.helm"
fi

# A module of our own in a scratch directory, removed once its binaries are built.
module() {
  local src="$dest/src/$1"
  rm -rf "$src"; mkdir -p "$src"; cd "$src"
  go mod init "controlplane.build/$1" >/dev/null 2>&1
}

# The module k8s.io/kubernetes's commands are built in, the same for every one of them (so Go's
# build cache is shared between builds): k8s.io/kubernetes requires its staging modules at v0.0.0
# and replaces them by local directories in its own go.mod; each is replaced by the published
# release of the same minor. Sets kube_ldflags.
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)
kube_ldflags=""
kube_module() {
  module kubernetes
  local kube_mod staging_version=v0.${kube_version#*.} pkg
  kube_mod=$(go mod download -json "k8s.io/kubernetes@v${kube_version}" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -n "$kube_mod" ]] || { echo "controlplane: cannot download k8s.io/kubernetes v${kube_version}" >&2; exit 1; }
  sed -n 's#^\t\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$kube_mod" | while read -r staged; do
    go mod edit -replace "${staged}=${staged}@${staging_version}"
  done
  go get $(printf 'k8s.io/kubernetes/cmd/%s@v'"${kube_version}"' ' "${kube_cmds[@]}") >/dev/null
  kube_ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kube_ldflags+=" -X ${pkg}.gitVersion=v${kube_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    kube_ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
}

kubernetes() {
  current kubernetes "v${kube_version}" && return
  local started=$SECONDS
  kube_module
  local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
  echo "controlplane: building Kubernetes v${kube_version} (${cmds[*]})"
  go build -trimpath -ldflags "-s -w${kube_ldflags}" -o "$dest/" $(printf 'k8s.io/kubernetes/cmd/%s ' "${cmds[@]}")
  local etcd_version
  etcd_version=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/client/v3)
  module etcd
  go get "go.etcd.io/etcd/server/v3@${etcd_version}" >/dev/null
  echo "controlplane: building etcd ${etcd_version}"
  go build -trimpath -ldflags "-s -w" -o "$dest/etcd" go.etcd.io/etcd/server/v3
  echo "v${kube_version}" > "$dest/.kubernetes"
  echo "controlplane: Kubernetes v${kube_version} and etcd ${etcd_version} built in $((SECONDS - started)) s"
}

kubelet() {
  current kubelet "v${kube_version}" && return
  # The node tier's kubelet: the same release, module set and flags as the binaries above.
  local started=$SECONDS
  kube_module
  echo "controlplane: building kubelet v${kube_version}"
  go build -trimpath -ldflags "-s -w${kube_ldflags}" -o "$dest/kubelet" k8s.io/kubernetes/cmd/kubelet
  echo "v${kube_version}" > "$dest/.kubelet"
  echo "controlplane: kubelet v${kube_version} built in $((SECONDS - started)) s"
}

helm() {
  current helm "v${helm_version}" && return
  # Told the Kubernetes version it assumes when rendering without a cluster: the one built.
  module helm
  go get "helm.sh/helm/v3/cmd/helm@v${helm_version}" >/dev/null
  local ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v${helm_version}"
  ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${minor}"
  echo "controlplane: building helm v${helm_version}"
  go build -trimpath -ldflags "$ldflags" -o "$dest/helm" helm.sh/helm/v3/cmd/helm
  echo "v${helm_version}" > "$dest/.helm"
}

promtool() {
  current promtool "v${prometheus_version}" && return
  # The chart's alerting rules are checked and unit-tested with Prometheus' own promtool.
  module promtool
  go get "github.com/prometheus/prometheus/cmd/promtool@v${prometheus_version}" >/dev/null
  echo "controlplane: building promtool of github.com/prometheus/prometheus v${prometheus_version}"
  go build -trimpath -ldflags "-s -w" -o "$dest/promtool" github.com/prometheus/prometheus/cmd/promtool
  echo "v${prometheus_version}" > "$dest/.promtool"
}

kubernetes
kubelet
helm
promtool
rm -rf "$dest/src"
# Kept for caches read by earlier versions of this script.
echo "kubernetes $(cat "$dest/.kubernetes") helm $(cat "$dest/.helm")" > "$dest/.complete"
echo "controlplane: $dest holds Kubernetes $(cat "$dest/.kubernetes"), kubelet $(cat "$dest/.kubelet"), helm $(cat "$dest/.helm"), promtool $(cat "$dest/.promtool")"
