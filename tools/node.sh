#!/usr/bin/env bash
# One real node for a local cluster of tools/cluster.sh, next to its kwok nodes: containerd with
# runc, the CNI bridge, kubelet and kube-proxy as local processes with private state. Pods bound
# to it really run, from the images tools/images.sh builds (nothing is pulled).
#   node.sh up CLUSTER     start the node (needs root), load the images, wait until Ready
#   node.sh load           import the images again into the node that runs (after images.sh build)
#   node.sh down CLUSTER   stop the node and remove everything it made
#   node.sh name CLUSTER   print the node's name
# One real node per machine: it owns host-wide things (iptables rules, a bridge, /run/netns).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
cmd=${1:-}
cluster=${2:-scheduler-operator}
node=$cluster-node
cluster_dir=$cache/kwok/clusters/$cluster
state=$cache/node                # configuration, certificates, kubelet and containerd roots
run=/run/scheduler-operator-node # sockets, pid files, containerd state
socket=$run/containerd.sock
bridge=so-cni0
pod_cidr=10.244.0.0/24

log() { echo "node: $*" >&2; }
fail() { echo "node: $*" >&2; exit 1; }
ctr() { command ctr --address "$socket" --namespace k8s.io "$@"; }

running() { [ -f "$run/$1.pid" ] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

# start NAME COMMAND...: a daemon of the node, logging to $state/logs/NAME.log.
start() {
  local name=$1
  shift
  "$@" >"$state/logs/$name.log" 2>&1 &
  echo $! >"$run/$name.pid"
}

wait_for() { # SECONDS WHAT COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out waiting for $what (logs: $state/logs)"
    sleep 0.5
  done
}

# client_cert NAME SUBJECT: a client certificate signed by the cluster's CA.
client_cert() {
  openssl req -new -newkey rsa:2048 -nodes -subj "$2" \
    -keyout "$state/pki/$1.key" -out "$state/pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$state/pki/$1.csr" -CA "$cluster_dir/pki/ca.crt" \
    -CAkey "$cluster_dir/pki/ca.key" -CAcreateserial -days 30 -sha256 \
    -out "$state/pki/$1.crt" 2>/dev/null
}

kubeconfig_for() { # NAME: a kubeconfig authenticating with NAME's client certificate
  local server
  server=$(sed -n 's/^ *server: *//p' "$cluster_dir/kubeconfig.yaml" | head -1)
  cat >"$state/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$server", certificate-authority: "$cluster_dir/pki/ca.crt"}}]
users: [{name: $1, user: {client-certificate: "$state/pki/$1.crt", client-key: "$state/pki/$1.key"}}]
contexts: [{name: local, context: {cluster: local, user: $1}}]
current-context: local
EOF
}

write_configuration() {
  local ip=$1
  mkdir -p "$state"/{pki,logs,cni,cni-data,kubelet} "$run"
  client_cert kubelet "/O=system:nodes/CN=system:node:$node"
  client_cert kube-proxy "/CN=system:kube-proxy"
  kubeconfig_for kubelet
  kubeconfig_for kube-proxy

  # restrict_oom_score_adj: without CAP_SYS_RESOURCE runc cannot lower a score. hugetlb: the
  # controller is absent from hybrid v1 hierarchies.
  cat >"$state/containerd.toml" <<EOF
version = 2
root = "$state/containerd"
state = "$run/containerd"
[grpc]
  address = "$socket"
[ttrpc]
  address = "$socket.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni"
EOF

  # Pods reach the API server through kube-proxy's rules for the `kubernetes` Service and need
  # nothing else, so no masquerading (nothing per pod is left in iptables if a pod is lost).
  cat >"$state/cni/10-bridge.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "scheduler-operator-node", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$state/cni-data",
            "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF

  # failCgroupV1: this host's controllers are cgroup v1. imageGC at 100%: the images were
  # imported, and one collected could never be pulled back. The kubelet authenticates the API
  # server by the cluster CA and asks it to authorize every request (no anonymous access).
  cat >"$state/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$socket
imageServiceEndpoint: unix://$socket
resolvConf: /etc/resolv.conf
protectKernelDefaults: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
serializeImagePulls: false
maxPods: 30
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$cluster_dir/pki/ca.crt"}
authorization: {mode: Webhook}
EOF

  cat >"$state/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: "$state/kube-proxy.kubeconfig"}
hostnameOverride: $node
clusterCIDR: 10.244.0.0/16
conntrack: {maxPerCore: 0}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
EOF
}

load_images() {
  log "loading $(tr '\n' ' ' < <("$here/images.sh" names))into containerd"
  "$here/images.sh" save "$state/images.tar"
  ctr images import "$state/images.tar" >/dev/null
  rm -f "$state/images.tar"
}

up() {
  [ "$(id -u)" = 0 ] || fail "a real node needs root (it runs containerd and the kubelet)"
  [ -f "$cluster_dir/pki/ca.key" ] || fail "no cluster \"$cluster\" (tools/cluster.sh up $cluster)"
  if running kubelet; then
    [ "$(cat "$run/cluster")" = "$cluster" ] ||
      fail "the real node of cluster \"$(cat "$run/cluster")\" is running; one per machine"
    load_images # the images may have been rebuilt since
    return
  fi
  down_processes
  "$here/host-packages.sh" node
  local bin ip
  bin=$("$here/build-binaries.sh" kubernetes)
  ip=$(ip -4 -o route get 1.1.1.1 | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  [ -n "$ip" ] || fail "no IPv4 address with a default route for the node"
  unmount_node
  rm -rf "$state"
  write_configuration "$ip"
  echo "$cluster" >"$run/cluster"
  sysctl -qw net.ipv4.ip_forward=1
  modprobe br_netfilter 2>/dev/null || true
  sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true

  log "starting containerd, kubelet and kube-proxy for $node ($ip; logs: $state/logs)"
  start containerd containerd --config "$state/containerd.toml"
  wait_for 30 "containerd" ctr version
  load_images
  start kubelet "$bin/kubelet" --config="$state/kubelet.yaml" --kubeconfig="$state/kubelet.kubeconfig" \
    --hostname-override="$node" --node-ip="$ip" --root-dir="$state/kubelet" \
    --cert-dir="$state/kubelet/pki" --v=1
  start kube-proxy "$bin/kube-proxy" --config="$state/kube-proxy.yaml" --v=1
  local kubectl=("$bin/kubectl" --kubeconfig "$cluster_dir/kubeconfig.yaml")
  wait_for 90 "node $node to register" "${kubectl[@]}" get node "$node"
  "${kubectl[@]}" wait --for=condition=Ready "node/$node" --timeout=90s >/dev/null ||
    fail "node $node is not Ready (logs: $state/logs)"
  log "$node is Ready"
}

# kill_pidfile NAME: stops a daemon of the node and waits until it is gone.
kill_pidfile() {
  local pid
  [ -f "$run/$1.pid" ] || return 0
  pid=$(cat "$run/$1.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$run/$1.pid"
}

down_processes() {
  kill_pidfile kubelet
  if running containerd; then
    # Every container dies with its task; the shims then exit on their own.
    local task
    for task in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill -s SIGKILL "$task" 2>/dev/null || true; done
    sleep 1
  fi
  kill_pidfile containerd
  pkill -9 -f "containerd-shim-runc-v2 .*-address $socket" 2>/dev/null || true
  if running kube-proxy || [ -f "$run/kube-proxy.pid" ]; then
    kill_pidfile kube-proxy
    local bin
    bin=$("$here/build-binaries.sh" kubernetes)
    "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
}

# The kubelet's and kube-proxy's chains (KUBE-*), with the rules that jump to them. No other
# program on a machine running this node makes such chains.
clean_iptables() {
  local tool table rule chain
  for tool in iptables ip6tables; do
    command -v "$tool" >/dev/null || continue
    for table in filter nat mangle; do
      "$tool-save" -t "$table" 2>/dev/null | sed -n 's/^-A \([A-Z]* .*-j KUBE-\)/-D \1/p' |
        while read -r rule; do eval "$tool -t $table $rule" 2>/dev/null || true; done
      for chain in $("$tool-save" -t "$table" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$tool" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$tool-save" -t "$table" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$tool" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# Mounts the node made: pods' volumes and root filesystems, and their network namespaces (a
# node whose processes were killed leaves them behind, and its state cannot be removed).
unmount_node() {
  local mount
  awk -v s="$state" '$2 ~ "^"s"/" || $2 ~ "^/run/netns/cni-" || $2 ~ "^'"$run"'/" {print $2}' /proc/self/mounts |
    sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  rm -f /run/netns/cni-*
}

down() {
  [ -d "$run" ] || [ -d "$state" ] || return 0
  # Only this cluster's node (a node left by a cluster that no longer exists counts too).
  if [ -f "$run/cluster" ] && [ "$(cat "$run/cluster")" != "$cluster" ] &&
    [ -d "$cache/kwok/clusters/$(cat "$run/cluster")" ]; then
    return 0
  fi
  down_processes
  unmount_node
  ip link delete "$bridge" 2>/dev/null || true
  clean_iptables
  local dir
  for dir in /sys/fs/cgroup/*/kubepods; do
    [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [ -f "$cluster_dir/kubeconfig.yaml" ]; then
    local bin
    bin=$("$here/build-binaries.sh" kubernetes)
    "$bin/kubectl" --kubeconfig "$cluster_dir/kubeconfig.yaml" delete node "$node" \
      --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$state" "$run"
}

case $cmd in
  up) up ;;
  load)
    if running containerd; then load_images; else log "no real node runs here: nothing to load"; fi
    ;;
  down) down ;;
  name) echo "$node" ;;
  *) echo "usage: node.sh up|load|down|name [CLUSTER]" >&2; exit 2 ;;
esac
