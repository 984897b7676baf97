#!/usr/bin/env bash
# Builds the Kubernetes control plane the cluster test tier runs against, from the Go modules of a
# pinned release, into a cache outside the repository. The binaries are named and laid out as
# envtest's KUBEBUILDER_ASSETS directory is (etcd, kube-apiserver, kubectl, plus
# kube-controller-manager, kube-scheduler and helm), so the tier takes either.
#
#   hack/controlplane.sh KUBE_VERSION HELM_VERSION DEST
#
# etcd is built at the version of the etcd client that Kubernetes release requires. Building is
# skipped while DEST/.complete names the same versions.
set -euo pipefail

kube_version=${1:?Kubernetes version, e.g. 1.37.2}
helm_version=${2:?Helm version, e.g. 3.22.0}
dest=${3:?destination directory}

command -v go >/dev/null || { echo "controlplane: Go is needed to build the control plane (or set KUBEBUILDER_ASSETS)" >&2; exit 1; }

stamp="kubernetes v${kube_version} helm v${helm_version}"
if [[ -f "$dest/.complete" && "$(cat "$dest/.complete")" == "$stamp" ]]; then
  echo "controlplane: $dest holds $stamp"
  exit 0
fi

minor=${kube_version#*.}; minor=${minor%%.*}
staging_version="v0.${kube_version#*.}"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
mkdir -p "$dest/src"
started=$(date +%s)

# Kubernetes: a module of our own requires k8s.io/kubernetes and replaces each of its staging
# modules (required at v0.0.0 and replaced by local directories in its own go.mod) by the published
# release of the same minor.
kube_src="$dest/src/kubernetes"
rm -rf "$kube_src"; mkdir -p "$kube_src"
cd "$kube_src"
go mod init controlplane.build/kubernetes >/dev/null 2>&1
kube_mod=$(go mod download -json "k8s.io/kubernetes@v${kube_version}" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
[[ -n "$kube_mod" ]] || { echo "controlplane: cannot download k8s.io/kubernetes v${kube_version}" >&2; exit 1; }
sed -n 's#^\t\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$kube_mod" | while read -r module; do
  go mod edit -replace "${module}=${module}@${staging_version}"
done
go mod edit -require "k8s.io/kubernetes@v${kube_version}"
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
go get $(printf 'k8s.io/kubernetes/cmd/%s@v'"${kube_version}"' ' "${kube_cmds[@]}") >/dev/null
etcd_version=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/client/v3)
version_pkg=k8s.io/component-base/version
client_version_pkg=k8s.io/client-go/pkg/version
ldflags=""
for pkg in "$version_pkg" "$client_version_pkg"; do
  ldflags+=" -X ${pkg}.gitVersion=v${kube_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done
echo "controlplane: building Kubernetes v${kube_version} (${kube_cmds[*]})"
go build -trimpath -ldflags "-s -w${ldflags}" -o "$dest/" $(printf 'k8s.io/kubernetes/cmd/%s ' "${kube_cmds[@]}")

# etcd, at the version of the client Kubernetes requires.
etcd_src="$dest/src/etcd"
rm -rf "$etcd_src"; mkdir -p "$etcd_src"
cd "$etcd_src"
go mod init controlplane.build/etcd >/dev/null 2>&1
go get "go.etcd.io/etcd/server/v3@${etcd_version}" >/dev/null
echo "controlplane: building etcd ${etcd_version}"
go build -trimpath -ldflags "-s -w" -o "$dest/etcd" go.etcd.io/etcd/server/v3

# helm, with the Kubernetes version it assumes when rendering without a cluster set to the one built.
helm_src="$dest/src/helm"
rm -rf "$helm_src"; mkdir -p "$helm_src"
cd "$helm_src"
go mod init controlplane.build/helm >/dev/null 2>&1
go get "helm.sh/helm/v3/cmd/helm@v${helm_version}" >/dev/null
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v${helm_version}"
helm_ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${minor}"
echo "controlplane: building helm v${helm_version}"
go build -trimpath -ldflags "$helm_ldflags" -o "$dest/helm" helm.sh/helm/v3/cmd/helm

rm -rf "$dest/src"
echo "$stamp" > "$dest/.complete"
echo "controlplane: built $stamp (etcd ${etcd_version}) into $dest in $(( $(date +%s) - started )) s"
