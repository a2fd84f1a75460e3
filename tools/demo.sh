#!/usr/bin/env bash
# The full demo on the local cluster (`make demo`), as a user installs the product:
#   0. what it runs, built once (tools/build-binaries.sh control-plane, then the images): a
#      progress line per step, with how long it takes on two cores;
#   1. the local cluster with simulated (kwok) nodes and one real node (tools/node.sh), and the
#      images built here (tools/images.sh);
#   2. `kubectl apply -k manifests`: the operator runs as a real pod under its own
#      ServiceAccount and restricted Pod Security;
#   3. the sample SchedulerProfile manifests/samples/extra-scheduler.yaml: its scheduler runs as
#      a real pod on the real node, leader-elected;
#   4. sample pods that name the scheduler, placed on the simulated nodes;
#   5. `kubectl get schedulerprofiles`, the pods' nodes and the scheduling events.
# Where containers cannot run (no root, no Debian packages), it says so in one line and runs the
# operator and the scheduler as local processes instead, under the same ServiceAccounts.
# The cluster is left running. DEMO_CLUSTER names it (default: scheduler-operator).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
venv=$repo/.venv/bin
cluster=${DEMO_CLUSTER:-scheduler-operator}
work=${TMPDIR:-/tmp}/scheduler-operator-demo
mkdir -p "$work"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

wait_until() { # SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "timed out waiting for $what" >&2
      return 1
    fi
    sleep 1
  done
}

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM

step "The control plane's binaries: Kubernetes, etcd and kwok (built once)"
bin=$(tools/build-binaries.sh control-plane | sed -n 1p)

step "The local cluster \"$cluster\" (log: $work/cluster.log)"
kubeconfig=$(tools/cluster.sh up "$cluster" 2>"$work/cluster.log") || {
  cat "$work/cluster.log" >&2
  exit 1
}
k() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

real=1
if [ "$(id -u)" != 0 ]; then
  reason="the real node needs root"
elif step "The images (built once; log: $work/images.log)"
  # The progress lines on the terminal (descriptor 3), the builds' own output in the log.
  ! PROGRESS_FD=3 tools/images.sh build 3>&2 2>"$work/images.log"; then
  reason="$(tail -n 1 "$work/images.log") (log: $work/images.log)"
elif ! PROGRESS_FD=3 tools/host-packages.sh node 3>&2 2>"$work/node.log" ||
  ! tools/cluster.sh node "$cluster" >/dev/null 2>>"$work/node.log"; then
  reason="$(tail -n 1 "$work/node.log") (log: $work/node.log)"
fi
if [ -n "${reason:-}" ]; then
  real=
  echo "No real node: $reason. The operator and the scheduler run as local processes instead."
  tools/node.sh down "$cluster" >/dev/null 2>&1 || true
else
  cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
  step "The real node: containerd, kubelet and kube-proxy (logs: $cache/node/logs)"
  k get node "$(tools/node.sh name "$cluster")" -o wide
fi

if [ -n "$real" ]; then
  step "Simulated nodes (kwok), tainted as kwok's are: only pods that tolerate it land there"
  taints="[{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]"
else
  # Without a real node, kwok also plays the scheduler's own pod (it cannot run a program).
  step "Simulated nodes (kwok)"
  taints="[]"
fi
for i in 0 1 2 3; do
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: demo-node-$i
  labels: {kubernetes.io/hostname: demo-node-$i, kubernetes.io/os: linux, type: kwok,
           topology.kubernetes.io/zone: zone-$((i % 2))}
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
spec:
  taints: $taints
status:  # kept from creation on, so kwok never writes its own defaults over it
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
EOF
done
k wait --for=condition=Ready node -l type=kwok --timeout=60s >/dev/null
k get nodes -l type=kwok

# A kubeconfig that authenticates as a ServiceAccount: no local part ever runs as admin.
service_account_kubeconfig() { # NAMESPACE NAME FILE
  local token server ca
  token=$(k create token "$2" -n "$1" --duration=2h)
  server=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
  KUBECONFIG=$3 "$bin/kubectl" config set-cluster local --server="$server" \
    --certificate-authority="$ca" --embed-certs >/dev/null
  KUBECONFIG=$3 "$bin/kubectl" config set-credentials "$2" --token="$token" >/dev/null
  KUBECONFIG=$3 "$bin/kubectl" config set-context local --cluster=local --user="$2" >/dev/null
  KUBECONFIG=$3 "$bin/kubectl" config use-context local >/dev/null
}

if [ -n "$real" ]; then
  step "kubectl apply -k manifests: the CRD, the operator's RBAC and its Deployment"
  k apply --server-side -k manifests
  k -n scheduler-operator rollout restart deployment/scheduler-operator >/dev/null # a fresh image
  k -n scheduler-operator rollout status deployment/scheduler-operator --timeout=180s
else
  step "CRD and the operator's RBAC (manifests/); the operator runs locally (log: $work/operator.log)"
  k kustomize manifests |
    "$venv/python" -c 'import sys, yaml; docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] != "Deployment"]; print(yaml.safe_dump_all(docs))' |
    k apply --server-side -f -
  k wait --for=condition=Established crd/schedulerprofiles.scheduling.schedops.io >/dev/null
  service_account_kubeconfig scheduler-operator scheduler-operator "$work/operator.kubeconfig"
  KUBECONFIG=$work/operator.kubeconfig "$venv/scheduler-operator" run \
    --liveness http://127.0.0.1:18080/healthz >"$work/operator.log" 2>&1 &
  pids+=($!)
  wait_until 60 "the operator to be alive" curl -sf http://127.0.0.1:18080/healthz
fi

step "A SchedulerProfile: manifests/samples/extra-scheduler.yaml"
cat manifests/samples/extra-scheduler.yaml
k apply -f manifests/samples/extra-scheduler.yaml
wait_until 60 "the generated configuration" k -n schedulers get configmap extra-scheduler-config

step "What the operator created for it"
k -n schedulers get serviceaccount,role,rolebinding,configmap,networkpolicy,deployment \
  -l app.kubernetes.io/instance=extra-scheduler
k get clusterrolebinding -l app.kubernetes.io/instance=extra-scheduler

if [ -z "$real" ]; then
  step "Its scheduler: the runtime as a local process with that configuration (log: $work/scheduler.log)"
  k -n schedulers get configmap extra-scheduler-config -o jsonpath='{.data.config\.yaml}' \
    >"$work/config.yaml"
  service_account_kubeconfig schedulers extra-scheduler "$work/scheduler.kubeconfig"
  POD_NAME=extra-scheduler-local "$venv/scheduler-runtime" run --config "$work/config.yaml" \
    --kubeconfig "$work/scheduler.kubeconfig" --bind-address 127.0.0.1 >"$work/scheduler.log" 2>&1 &
  pids+=($!)
  # Its secure port, with a self-signed certificate; /readyz needs no credentials.
  wait_until 60 "the scheduler to be ready" curl -sfk https://127.0.0.1:10259/readyz
fi
wait_until 180 "the SchedulerProfile to be Ready" \
  k wait --for=condition=Ready schedulerprofile/extra-scheduler --timeout=1s

step "The operator and the scheduler: real pods on the real node"
if [ -n "$real" ]; then
  k get pods -n scheduler-operator -o wide
  k get pods -n schedulers -l app.kubernetes.io/instance=extra-scheduler -o wide
  k get lease -n schedulers schedulerprofile.extra-scheduler
else
  echo "(local processes: $work/operator.log, $work/scheduler.log)"
fi

step "Sample pods that ask for schedulerName: extra-scheduler"
k get namespace demo >/dev/null 2>&1 || k create namespace demo >/dev/null
k -n demo delete pods -l app=demo --ignore-not-found --wait=true >/dev/null
k -n demo delete events --all >/dev/null # a re-run shows only its own events
for i in 0 1 2 3 4 5; do
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: demo-$i, namespace: demo, labels: {app: demo}}
spec:
  schedulerName: extra-scheduler
  tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
  containers:
    - name: app
      image: registry.k8s.io/pause:3.10
      resources: {requests: {cpu: 500m, memory: 256Mi}}
EOF
done
wait_until 90 "every sample pod to be placed" \
  bash -c "! $bin/kubectl --kubeconfig $kubeconfig -n demo get pods -l app=demo -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -qx ''"

step "An accelerator pod: a device published as a ResourceSlice, asked for through a claim"
k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice  # what a DRA driver on demo-node-0 would publish
metadata: {name: demo-node-0-gpu}
spec:
  driver: gpu.example.com
  nodeName: demo-node-0
  pool: {name: demo-node-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, attributes: {model: {string: a100}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: demo}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
EOF
k -n demo delete pod demo-gpu --ignore-not-found --wait=true >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: demo-gpu, namespace: demo, labels: {app: demo}}
spec:
  schedulerName: extra-scheduler
  tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
    - name: app
      image: registry.k8s.io/pause:3.10
      resources: {claims: [{name: gpu}]}
EOF
wait_until 90 "the accelerator pod to be placed" \
  bash -c "$bin/kubectl --kubeconfig $kubeconfig -n demo get pod demo-gpu -o jsonpath='{.spec.nodeName}' | grep -q ."
k -n demo get resourceclaims -o custom-columns='CLAIM:.metadata.name,DEVICE:.status.allocation.devices.results[*].device,RESERVED FOR:.status.reservedFor[*].name'

step "kubectl get schedulerprofiles"
k get schedulerprofiles -o wide

step "The pods and their nodes"
k -n demo get pods -o custom-columns=POD:.metadata.name,SCHEDULER:.spec.schedulerName,NODE:.spec.nodeName,PHASE:.status.phase

step "Scheduling events"
k -n demo get events --field-selector reason=Scheduled \
  -o custom-columns=REASON:.reason,FROM:.reportingComponent,MESSAGE:.message

cat <<EOF

The cluster "$cluster" is still running:
  export KUBECONFIG=$kubeconfig
  kubectl get schedulerprofiles
Tear it down (with its real node) with:
  tools/cluster.sh down $cluster
EOF
