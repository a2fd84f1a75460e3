#!/usr/bin/env bash
# The local control plane: kwokctl runs etcd, kube-apiserver (RBAC on), kube-controller-manager,
# kube-scheduler and kwok as plain processes from the binaries built by build-binaries.sh.
#   cluster.sh up [NAME]          create (or reuse) the cluster; prints its kubeconfig path
#   cluster.sh up NAME FLAGS...   the same, passing extra flags to `kwokctl create cluster`
#                                 (e.g. --disable-qps-limits for benchmarks)
#   cluster.sh node [NAME]        the cluster with one real node (tools/node.sh, needs root)
#                                 next to the kwok nodes; prints its kubeconfig path
#   cluster.sh down [NAME]        delete it, and its real node if it has one
#   cluster.sh kubeconfig [NAME]  print its kubeconfig path
#   cluster.sh kwokctl ARGS...    run the pinned kwokctl against the project's clusters
#   cluster.sh bin [COMPONENT...] the directories of build-binaries.sh's components (default:
#                                 every one, built when missing; the first is Kubernetes')
# KUBE_VERSION=v1.MM.P runs that Kubernetes release instead of the pinned one, and
# SCHEDULER_VERSION another release's kube-scheduler on it (build-binaries.sh, SCHEDULER_VERSION); a cluster
# made with other binaries is made anew.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
export KWOK_WORKDIR=$cache/kwok
[ "${1:-}" = bin ] && exec "$here/build-binaries.sh" "${@:2}"
# Only what a cluster runs: the control plane (the tests' other binaries come with `bin`).
mapfile -t dirs < <("$here/build-binaries.sh" control-plane)
k8s=${dirs[0]} etcd=${dirs[1]} kwok=${dirs[2]}
kwokctl() { "$kwok/kwokctl" "$@"; }
# kwokctl edits ~/.kube/config unless told otherwise: create gets "" (none), delete a file of its own.
own_kubeconfig=$KWOK_WORKDIR/kwokctl.kubeconfig

cmd=${1:-up}
name=${2:-scheduler-operator}
create_flags=("${@:3}")
cluster_dir=$KWOK_WORKDIR/clusters/$name
kubeconfig=$cluster_dir/kubeconfig.yaml

# Every cluster is ready for a real node (tools/node.sh): kwok manages only its own nodes (those
# annotated kwok.x-k8s.io/node=fake), the serving certificate covers the `kubernetes` Service's
# ClusterIP that pods dial, and the API server reaches a kubelet by its address, with a client
# certificate (for logs and exec).
configuration() {
  cat <<EOF
# kubernetes: $k8s
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  kubeApiserverCertSANs: ["10.0.0.1"]
componentsPatches:
  - name: kwok-controller
    extraArgs:
      - {key: manage-all-nodes, value: "false", override: true}
      - {key: manage-nodes-with-annotation-selector, value: kwok.x-k8s.io/node=fake}
  - name: kube-apiserver
    extraArgs:
      - {key: kubelet-preferred-address-types, value: "InternalIP,Hostname"}
      - {key: kubelet-client-certificate, value: "$cluster_dir/pki/admin.crt"}
      - {key: kubelet-client-key, value: "$cluster_dir/pki/admin.key"}
EOF
}

answers() { "$k8s/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; }
# Every component of the cluster runs: once stopped, its ports may have gone to another cluster
# (whose API server would then answer for it).
alive() {
  local pidfile
  for pidfile in "$cluster_dir"/pids/*.pid; do
    [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null || return 1
  done
}

up() {
  local config=$KWOK_WORKDIR/$name.kwokctl.yaml
  mkdir -p "$KWOK_WORKDIR"
  # Flags are part of what a cluster was made with: other flags make it anew.
  {
    configuration
    [ ${#create_flags[@]} -eq 0 ] || echo "# create flags: ${create_flags[*]}"
  } >"$config.new"
  if kwokctl get clusters 2>/dev/null | grep -qx "$name"; then
    # A cluster left from an earlier run is reused when it still runs, answers and was made
    # with this configuration, recreated when not.
    if cmp -s "$config" "$config.new" && alive && answers; then
      rm -f "$config.new"
      echo "$kubeconfig"
      return
    fi
    down || true
  fi
  mv "$config.new" "$config"
  kwokctl create cluster --name "$name" --runtime binary --config "$config" \
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

down() {
  "$here/node.sh" down "$name"
  kwokctl delete cluster --name "$name" --kubeconfig "$own_kubeconfig" >&2
}

case $cmd in
  up) up ;;
  node)
    up >/dev/null
    "$here/node.sh" up "$name"
    echo "$kubeconfig"
    ;;
  down) down ;;
  kubeconfig) echo "$kubeconfig" ;;
  kwokctl) shift; kwokctl "$@" ;;
  *) echo "usage: cluster.sh up|node|down|kubeconfig [NAME] | bin [COMPONENT...] | kwokctl ARGS..." >&2; exit 2 ;;
esac
