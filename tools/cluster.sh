#!/usr/bin/env bash
# The local control plane: kwokctl runs etcd, kube-apiserver (RBAC on), kube-controller-manager,
# kube-scheduler and kwok as plain processes from the binaries built by build-binaries.sh.
#   cluster.sh up [NAME]          create (or reuse) the cluster; prints its kubeconfig path
#   cluster.sh up NAME FLAGS...   the same, passing extra flags to `kwokctl create cluster`
#                                 (e.g. --disable-qps-limits for benchmarks)
#   cluster.sh down [NAME]        delete it
#   cluster.sh kubeconfig [NAME]  print its kubeconfig path
#   cluster.sh kwokctl ARGS...    run the pinned kwokctl against the project's clusters
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
export KWOK_WORKDIR=$cache/kwok
mapfile -t dirs < <("$here/build-binaries.sh")
k8s=${dirs[0]} etcd=${dirs[1]} kwok=${dirs[2]}
kwokctl() { "$kwok/kwokctl" "$@"; }
# kwokctl edits ~/.kube/config unless told otherwise: create gets "" (none), delete a file of its own.
own_kubeconfig=$KWOK_WORKDIR/kwokctl.kubeconfig

cmd=${1:-up}
name=${2:-scheduler-operator}
create_flags=("${@:3}")
kubeconfig=$KWOK_WORKDIR/clusters/$name/kubeconfig.yaml

up() {
  if kwokctl get clusters 2>/dev/null | grep -qx "$name"; then
    # A cluster left from an earlier run is reused when it answers, recreated when not.
    if "$k8s/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1 ||
      { kwokctl start cluster --name "$name" >&2 &&
        "$k8s/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; }; then
      echo "$kubeconfig"
      return
    fi
    kwokctl delete cluster --name "$name" --kubeconfig "$own_kubeconfig" >&2 || true
  fi
  kwokctl create cluster --name "$name" --runtime binary \
    --kube-authorization --kube-admission \
    --kube-apiserver-binary "$k8s/kube-apiserver" \
    --kube-controller-manager-binary "$k8s/kube-controller-manager" \
    --kube-scheduler-binary "$k8s/kube-scheduler" \
    --kwok-controller-binary "$kwok/kwok" \
    --etcd-binary "$etcd/etcd" \
    --kubeconfig "" \
    "${create_flags[@]}" \
    --wait 120s >&2
  echo "$kubeconfig"
}

case $cmd in
  up) up ;;
  down) kwokctl delete cluster --name "$name" --kubeconfig "$own_kubeconfig" >&2 ;;
  kubeconfig) echo "$kubeconfig" ;;
  bin) printf '%s\n' "${dirs[@]}" ;;
  kwokctl) shift; kwokctl "$@" ;;
  *) echo "usage: cluster.sh up|down|kubeconfig|bin [NAME] | kwokctl ARGS..." >&2; exit 2 ;;
esac
