#!/usr/bin/env bash
# Builds binaries from the Go module proxy into a cache outside the repository, by component:
#   kubernetes          kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, and a
#                       real node's kubelet and kube-proxy
#   etcd                etcd
#   kwok                kwok, kwokctl
#   prometheus          prometheus, promtool (the tests only)
#   helm                helm (the tests only)
#   scheduler-plugins   scheduler-plugins' kube-scheduler and controller (the tests only)
# and two groups: control-plane (kubernetes, etcd, kwok: what a local cluster and the demo run)
# and all (the components above, the default: what the tests use). Built only when named, by
# the tests that run them:
#   e2e-scheduling      the release's sig-scheduling e2e suite (make e2e-upstream)
#   mpi-operator        Kubeflow's MPI operator's manager
#   kuberay             KubeRay's operator
#   kueue               Kueue's manager
#   jobset              JobSet's manager
#   lws                 LeaderWorkerSet's manager
#   trainer             Kubeflow Trainer's controller manager
#   spark-operator      Kubeflow's Spark operator (its controller and webhook, one binary)
#   spark               Apache Spark's distribution, for spark-submit (the Spark operator's
#                       controller runs it); from its PyPI release, and Debian's Java runtime
#   build-binaries.sh [COMPONENT|GROUP...]   builds what is missing; prints the directories
#   build-binaries.sh --list                 the components, one a line
# Each component lives in a directory named after its pinned version, so a cached build is
# reused until tools/versions.env changes. Each step prints a progress line (tools/progress.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=progress.sh
source "$here/progress.sh"

# Every component, in the order their directories are printed (tools/cluster.sh and the tests
# read the first three by position).
components=(kubernetes etcd kwok prometheus helm scheduler-plugins e2e-scheduling mpi-operator kuberay
  kueue jobset lws trainer spark-operator spark)
declare -A groups=([control-plane]="kubernetes etcd kwok" [all]="${components[*]:0:6}")
# KUBE_VERSION runs another Kubernetes release than the pinned one (the version matrix, the
# upgrade kit); it is built into its own cache directory like the pinned one.
KUBERNETES_VERSION=${KUBE_VERSION:-$KUBERNETES_VERSION}
# SCHEDULER_VERSION puts another release's kube-scheduler beside that control plane: the upgrade
# kit's judge when a new release's control plane cannot be built yet. GO_REPLACES
# ("MODULE=MODULE@VERSION ...") builds a release with a module version the Go module proxy
# serves in place of one it refuses.
SCHEDULER_VERSION=${SCHEDULER_VERSION:-$KUBERNETES_VERSION}
GO_REPLACES=${GO_REPLACES:-}
cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
export CGO_ENABLED=0 GOFLAGS=-trimpath GOTOOLCHAIN=${GOTOOLCHAIN:-auto}

# Where each component is built: a directory per pinned version.
dir_kubernetes=$cache/kubernetes-$KUBERNETES_VERSION
if [ "$SCHEDULER_VERSION" != "$KUBERNETES_VERSION" ]; then
  dir_kubernetes+=+kube-scheduler-$SCHEDULER_VERSION
fi
dir_etcd=$cache/etcd-$ETCD_VERSION
dir_kwok=$cache/kwok-$KWOK_VERSION
dir_prometheus=$cache/prometheus-$PROMETHEUS_VERSION
dir_helm=$cache/helm-$HELM_VERSION
dir_scheduler_plugins=$cache/scheduler-plugins-$SCHEDULER_PLUGINS_VERSION
dir_e2e_scheduling=$cache/e2e-scheduling-$KUBERNETES_VERSION
dir_mpi_operator=$cache/mpi-operator-$MPI_OPERATOR_VERSION
dir_kuberay=$cache/kuberay-$KUBERAY_VERSION
dir_kueue=$cache/kueue-$KUEUE_VERSION
dir_jobset=$cache/jobset-$JOBSET_VERSION
dir_lws=$cache/lws-$LWS_VERSION
dir_trainer=$cache/trainer-$TRAINER_VERSION
dir_spark_operator=$cache/spark-operator-$SPARK_OPERATOR_VERSION
dir_spark=$cache/spark-$SPARK_VERSION

# The components the arguments name (every one without arguments), in the printed order.
declare -A wanted=()
for arg in "${@:-all}"; do
  case $arg in
    --list) printf '%s\n' "${components[@]}"; exit 0 ;;
  esac
  if [ -n "${groups[$arg]:-}" ]; then
    for c in ${groups[$arg]}; do wanted[$c]=1; done
  elif [[ " ${components[*]} " == *" $arg "* ]]; then
    wanted[$arg]=1
  else
    echo "build-binaries: unknown component \"$arg\" (components: ${components[*]}; groups: control-plane, all)" >&2
    exit 2
  fi
done

# One build at a time per cache: a build waits for the others' and then looks again (they may
# have built the same). What is cached already is used at once, never waiting for a build of
# something else.
mkdir -p "$cache"
lock_held=
hold_build_lock() {
  [ -n "$lock_held" ] && return
  exec 9>"$cache/.build.lock"
  flock 9
  lock_held=1
}

# quiet CMD...: runs a noisy go command, showing its output only when it fails.
quiet() {
  local out
  out=$("$@" 2>&1) || { echo "$out" >&2; return 1; }
}

# new_module DIR NAME: an empty wrapper module in DIR (outside the repository).
new_module() {
  rm -rf "$1" && mkdir -p "$1"
  (cd "$1" && go mod init "$2" >/dev/null 2>&1)
}

# finish DIR: marks a build complete only after every binary linked.
finish() {
  touch "$1/.complete"
  progress_end
}

# cached DIR WHAT: whether DIR holds a complete build (saying so in one line); one that does
# not is asked again under the build lock, which the build that follows then holds.
cached() {
  if [ ! -f "$1/.complete" ]; then
    hold_build_lock
    [ -f "$1/.complete" ] || return 1
  fi
  progress_cached "$2" "$1"
}

# replaced_alike DIR: a Kubernetes build in DIR made with other GO_REPLACES than now's
# (DIR/.replaces records them) is no longer complete, so it is made anew.
replaced_alike() {
  [ "$(cat "$1/.replaces" 2>/dev/null)" = "$GO_REPLACES" ] || rm -f "$1/.complete"
}

# finish_replaced DIR: finish, recording the GO_REPLACES the build was made with.
finish_replaced() {
  if [ -n "$GO_REPLACES" ]; then echo "$GO_REPLACES" >"$1/.replaces"; else rm -f "$1/.replaces"; fi
  finish "$1"
}

# kubernetes_module DIR NAME VERSION: a wrapper module requiring k8s.io/kubernetes VERSION.
# k8s.io/kubernetes points its staging modules at ./staging; a dependent module must replace
# each of them with the published v0.<minor>.<patch> release instead.
kubernetes_module() {
  local mod=$1 v=$3 staging minor
  new_module "$mod" "$2"
  staging=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  minor=${v#v1.}
  {
    echo "require k8s.io/kubernetes $v"
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 v0.'"$minor"'#p' "$staging"
    local replace target
    for replace in $GO_REPLACES; do
      target=${replace#*=}
      printf '\t%s => %s %s\n' "${replace%%=*}" "${target%@*}" "${target##*@}"
    done
    echo ")"
  } >>"$mod/go.mod"
}

build_kubernetes() {
  [ "$SCHEDULER_VERSION" != "$KUBERNETES_VERSION" ] && { build_kube_scheduler_beside; return; }
  local out=$dir_kubernetes v=$KUBERNETES_VERSION
  # The control plane, kubectl, and what a real node runs (kubelet, kube-proxy). A cache
  # missing some of them builds just those.
  local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
  local missing=() cmd
  for cmd in "${cmds[@]}"; do [ -x "$out/$cmd" ] || missing+=("$cmd"); done
  replaced_alike "$out"
  [ ${#missing[@]} -eq 0 ] && cached "$out" "Kubernetes $v binaries" && return
  [ -z "$lock_held" ] && { hold_build_lock; build_kubernetes; return; }
  rm -f "$out/.complete"
  progress_begin kubernetes "building Kubernetes $v binaries: ${missing[*]}" "$out"
  local mod="$out/src"
  kubernetes_module "$mod" local.build/kubernetes "$v"
  local pkgs=("${missing[@]/#/k8s.io/kubernetes/cmd/}")
  (cd "$mod" && quiet go get -tool "${pkgs[@]/%/@$v}")
  (cd "$mod" && go build -ldflags "$(kube_version_ldflags "$v")" -o "$out/" "${pkgs[@]}")
  finish_replaced "$out"
}

# SCHEDULER_VERSION's kube-scheduler, with the control plane of KUBERNETES_VERSION (built into
# its own directory, without GO_REPLACES) linked beside it.
build_kube_scheduler_beside() {
  local out=$dir_kubernetes v=$SCHEDULER_VERSION base=$cache/kubernetes-$KUBERNETES_VERSION
  replaced_alike "$out"
  cached "$out" "kube-scheduler $v beside Kubernetes $KUBERNETES_VERSION" && return
  dir_kubernetes=$base SCHEDULER_VERSION=$KUBERNETES_VERSION GO_REPLACES= build_kubernetes
  progress_begin kube-scheduler "building kube-scheduler $v to run beside Kubernetes $KUBERNETES_VERSION" "$out"
  rm -rf "$out" && mkdir -p "$out"
  local cmd
  for cmd in kube-apiserver kube-controller-manager kubectl kubelet kube-proxy; do
    ln -s "$base/$cmd" "$out/$cmd"
  done
  kubernetes_module "$out/src" local.build/kube-scheduler "$v"
  (cd "$out/src" && quiet go get -tool "k8s.io/kubernetes/cmd/kube-scheduler@$v" &&
    go build -ldflags "$(kube_version_ldflags "$v")" -o "$out/" k8s.io/kubernetes/cmd/kube-scheduler)
  finish_replaced "$out"
}

# kube_version_ldflags VERSION: linker flags that stamp a binary as Kubernetes VERSION. Its
# components derive the version they emulate, and so every feature gate's state, from it.
kube_version_ldflags() {
  local v=$1 major minor pkg key val ldflags="-s -w"
  major=${v#v}; major=${major%%.*}
  minor=${v#v*.}; minor=${minor%%.*}
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    for key in gitVersion:"$v" gitMajor:"$major" gitMinor:"$minor" gitTreeState:clean \
      buildDate:"$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
      val=${key#*:}; key=${key%%:*}
      ldflags+=" -X $pkg.$key=$val"
    done
  done
  echo "$ldflags"
}

build_etcd() {
  local out=$dir_etcd
  cached "$out" "etcd $ETCD_VERSION" && return
  progress_begin etcd "building etcd $ETCD_VERSION" "$out"
  new_module "$out/src" local.build/etcd
  (cd "$out/src" && quiet go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
    go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
  finish "$out"
}

build_kwok() {
  local out=$dir_kwok
  cached "$out" "kwok $KWOK_VERSION" && return
  progress_begin kwok "building kwok $KWOK_VERSION" "$out"
  new_module "$out/src" local.build/kwok
  local cmds=(sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl)
  (cd "$out/src" && quiet go get -tool "${cmds[@]/%/@$KWOK_VERSION}" &&
    go build -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" -o "$out/" "${cmds[@]}")
  finish "$out"
}

# Prometheus 3.MM.P is published as the Go module v0.3MM.P. Built without the `builtinassets`
# tag, whose web UI is an npm build the module does not carry: the HTTP API, the rules and
# promtool are all there, and the UI pages answer 404. `remove_all_sd` leaves out the cloud
# service discoveries (static and file targets remain), a third of the build.
build_prometheus() {
  local out=$dir_prometheus v=$PROMETHEUS_VERSION
  local release=${v#v0.}
  release="3.$((10#${release%%.*} - 300)).${release#*.}"
  cached "$out" "Prometheus $release" && return
  progress_begin prometheus "building Prometheus $release ($v)" "$out"
  new_module "$out/src" local.build/prometheus
  local cmds=(github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool)
  local pkg=github.com/prometheus/common/version
  (cd "$out/src" && quiet go get -tool "${cmds[@]/%/@$v}" &&
    go build -tags remove_all_sd -ldflags "-s -w -X $pkg.Version=$release -X $pkg.Branch=HEAD \
      -X $pkg.BuildUser=scheduler-operator -X $pkg.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
      -o "$out/" "${cmds[@]}")
  finish "$out"
}

build_helm() {
  local out=$dir_helm v=$HELM_VERSION
  cached "$out" "helm $v" && return
  progress_begin helm "building helm $v" "$out"
  new_module "$out/src" local.build/helm
  local major=${v%%.*} pkg
  pkg=helm.sh/helm/$major/internal/version
  (cd "$out/src" && quiet go get -tool "helm.sh/helm/$major/cmd/helm@$v" &&
    go build -ldflags "-s -w -X $pkg.version=$v -X $pkg.metadata= -X $pkg.gitTreeState=clean" \
      -o "$out/helm" "helm.sh/helm/$major/cmd/helm")
  finish "$out"
}

# scheduler-plugins' kube-scheduler (kube-scheduler with Coscheduling and the project's other
# plugins) and its controller (PodGroup status). Like k8s.io/kubernetes, its module pins the
# k8s.io modules with replace directives, which a dependent module ignores: they are copied
# into the wrapper module from the release's own go.mod.
build_scheduler_plugins() {
  local out=$dir_scheduler_plugins v=$SCHEDULER_PLUGINS_VERSION
  cached "$out" "scheduler-plugins $v" && return
  progress_begin scheduler-plugins "building scheduler-plugins $v" "$out"
  local mod="$out/src" gomod
  new_module "$mod" local.build/scheduler-plugins
  gomod=$(cd "$mod" && go mod download -json "sigs.k8s.io/scheduler-plugins@$v" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    echo "require sigs.k8s.io/scheduler-plugins $v"
    sed -n '/^replace (/,/^)/p; /^replace [^(]/p' "$gomod"
  } >>"$mod/go.mod"
  local pkg=sigs.k8s.io/scheduler-plugins/cmd kube ldflags
  (cd "$mod" && quiet go get -tool "$pkg/scheduler@$v" "$pkg/controller@$v")
  # Stamped as the Kubernetes release it is built from (its own v0.MINOR would make its
  # kube-scheduler emulate Kubernetes 0.MINOR, where every feature gate is pre-alpha).
  kube=$(sed -n 's#^\s*k8s.io/kubernetes => k8s.io/kubernetes \(v[0-9.]*\)\s*$#\1#p' "$gomod")
  ldflags=$(kube_version_ldflags "${kube:?no k8s.io/kubernetes replace in the go.mod of the release}")
  (cd "$mod" && go build -ldflags "$ldflags" -o "$out/kube-scheduler" "$pkg/scheduler" &&
    go build -ldflags "$ldflags" -o "$out/controller" "$pkg/controller")
  finish "$out"
}

# The sig-scheduling end-to-end suite of the release (test/e2e/scheduling registered into the
# small test main tools/e2e-upstream/suite_test.go), compiled with `go test -c`: a fraction of
# the whole test/e2e (no storage, network or cloud-provider specs), for `make e2e-upstream`.
build_e2e_scheduling() {
  local out=$dir_e2e_scheduling v=$KUBERNETES_VERSION
  cached "$out" "the sig-scheduling e2e suite of Kubernetes $v" && return
  progress_begin e2e-scheduling "building the sig-scheduling e2e suite of Kubernetes $v" "$out"
  local mod="$out/src" e2e=k8s.io/kubernetes/test/e2e
  kubernetes_module "$mod" local.build/e2e-scheduling "$v"
  cp "$here/e2e-upstream/suite_test.go" "$mod/"
  (cd "$mod" && quiet go get "$e2e/scheduling@$v" "$e2e/framework@$v" &&
    go test -c -ldflags "$(kube_version_ldflags "$v")" -o "$out/e2e-scheduling.test" .)
  finish "$out"
}

# build_operator NAME DIR MODULE PACKAGE BINARY: a batch operator's manager, built from its
# release on the Go module proxy, into DIR/BINARY (src/ keeps the wrapper module, whose `go mod
# download` finds the release's CRDs in the module cache). Its go.mod's replace directives, if
# any, are copied as for scheduler-plugins.
build_operator() {
  local name=$1 out=$2 module=$3 pkg=$4 binary=$5 v=${2##*-} gomod
  local mod="$out/src"
  new_module "$mod" "local.build/$name"
  gomod=$(cd "$mod" && go mod download -json "$module@$v" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    echo "require $module $v"
    sed -n '/^replace (/,/^)/p; /^replace [^(]/p' "$gomod"
  } >>"$mod/go.mod"
  (cd "$mod" && quiet go get -tool "$pkg@$v" && go build -ldflags "-s -w" -o "$out/$binary" "$pkg")
  finish "$out"
}

build_mpi_operator() {
  cached "$dir_mpi_operator" "mpi-operator $MPI_OPERATOR_VERSION" && return
  progress_begin mpi-operator "building mpi-operator $MPI_OPERATOR_VERSION" "$dir_mpi_operator"
  build_operator mpi-operator "$dir_mpi_operator" github.com/kubeflow/mpi-operator \
    github.com/kubeflow/mpi-operator/cmd/mpi-operator mpi-operator
}

build_kuberay() {
  cached "$dir_kuberay" "kuberay $KUBERAY_VERSION" && return
  progress_begin kuberay "building kuberay $KUBERAY_VERSION" "$dir_kuberay"
  build_operator kuberay "$dir_kuberay" github.com/ray-project/kuberay/ray-operator \
    github.com/ray-project/kuberay/ray-operator ray-operator
}

build_kueue() {
  cached "$dir_kueue" "kueue $KUEUE_VERSION" && return
  progress_begin kueue "building kueue $KUEUE_VERSION" "$dir_kueue"
  build_operator kueue "$dir_kueue" sigs.k8s.io/kueue sigs.k8s.io/kueue/cmd/kueue kueue
}

build_jobset() {
  cached "$dir_jobset" "jobset $JOBSET_VERSION" && return
  progress_begin jobset "building jobset $JOBSET_VERSION" "$dir_jobset"
  build_operator jobset "$dir_jobset" sigs.k8s.io/jobset sigs.k8s.io/jobset jobset
}

build_lws() {
  cached "$dir_lws" "lws $LWS_VERSION" && return
  progress_begin lws "building lws $LWS_VERSION" "$dir_lws"
  build_operator lws "$dir_lws" sigs.k8s.io/lws sigs.k8s.io/lws/cmd lws
}

build_trainer() {
  cached "$dir_trainer" "trainer $TRAINER_VERSION" && return
  progress_begin trainer "building trainer $TRAINER_VERSION" "$dir_trainer"
  build_operator trainer "$dir_trainer" github.com/kubeflow/trainer/v2 \
    github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager trainer-controller-manager
}

build_spark_operator() {
  cached "$dir_spark_operator" "spark-operator $SPARK_OPERATOR_VERSION" && return
  progress_begin spark-operator "building spark-operator $SPARK_OPERATOR_VERSION" "$dir_spark_operator"
  build_operator spark-operator "$dir_spark_operator" github.com/kubeflow/spark-operator/v2 \
    github.com/kubeflow/spark-operator/v2/cmd/operator spark-operator
}

# Spark's distribution as its PyPI release (pyspark's sdist) carries it under deps/: bin/ and
# jars/ are a SPARK_HOME, whose spark-submit runs on Debian's Java runtime.
build_spark() {
  local out=$dir_spark archive
  cached "$out" "spark $SPARK_VERSION" && return
  progress_begin spark "fetching spark $SPARK_VERSION" "$out"
  "$here/host-packages.sh" spark
  rm -rf "$out" && mkdir -p "$out"
  archive="$out/pyspark-$SPARK_VERSION.tar.gz"
  curl -fsSL --retry 3 -o "$archive" "$SPARK_DIST_URL"
  echo "$SPARK_DIST_SHA256  $archive" | sha256sum --check --quiet
  tar -xzf "$archive" -C "$out" --strip-components=2 "pyspark-$SPARK_VERSION/deps/bin" \
    "pyspark-$SPARK_VERSION/deps/jars"
  rm "$archive"
  finish "$out"
}

for c in "${components[@]}"; do
  if [ -n "${wanted[$c]:-}" ]; then "build_${c//-/_}"; fi
done
# One directory a line, in the order of $components.
for c in "${components[@]}"; do
  if [ -n "${wanted[$c]:-}" ]; then dir=dir_${c//-/_} && echo "${!dir}"; fi
done
