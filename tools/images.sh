#!/usr/bin/env bash
# Container images built on this machine, for the real node of the local cluster and for
# `make image`. No registry is needed: the base comes from Debian packages (mmdebstrap).
#   images.sh build            the project image (Dockerfile, on the local base), the upstream
#                              engine's image (the cached kube-scheduler) and the pause image
#   images.sh save FILE        all three as one archive, for `ctr images import`
#   images.sh names            the image names, one per line
# With BASE=<image> the project image is built on that base instead (e.g. the published
# python:3.11.11-slim-bookworm where a registry is reachable).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=progress.sh
source "$here/progress.sh"
cache=${SCHEDULER_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-operator}
# runc, not crun (crun refuses hybrid cgroups), and rlimits this machine can grant.
export CONTAINERS_CONF=$here/containers.conf

# The names the operator and the manifests use, read from the one place that sets them; the
# upstream engine's image is tagged with the release of the binary it holds, as the operator
# names kube-scheduler's image of the cluster's release.
read -r project_image kube_scheduler_repository < <(python3 -c '
import runpy, sys
v = runpy.run_path(sys.argv[1])
print(v["IMAGE"], v["KUBE_SCHEDULER_REPOSITORY"])' "$repo/operator/scheduler_operator/version.py")
kube_scheduler_image=$kube_scheduler_repository:${KUBE_VERSION:-$KUBERNETES_VERSION}

# The base: Debian bookworm with Python, from Debian's packages. Its tag follows the package
# list, so changing the list builds a new base.
base_packages=python3,python3-venv,ca-certificates,netbase,tzdata,libstdc++6
base_image=localhost/scheduler-operator-base:bookworm-$(echo "$base_packages" | sha256sum | cut -c1-12)

store="the local image store"

build_base() {
  podman image exists "$base_image" && { progress_cached "the base image $base_image" "$store"; return; }
  progress_begin base-image "building the base image $base_image from Debian packages" "$store"
  local tar
  tar=$(mktemp --suffix=.tar)
  # Documentation and translations are of no use in an image.
  mmdebstrap --quiet --variant=minbase --include="$base_packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$tar" http://deb.debian.org/debian \
    "deb http://deb.debian.org/debian-security bookworm-security main" >&2
  podman import --quiet "$tar" "$base_image" >/dev/null
  rm -f "$tar"
  progress_end
}

# Build steps that download (pip) trust what the host trusts, e.g. a proxy's CA; the bundle
# is mounted for the build only, never copied into the image.
ca_mount=()
host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$host_ca" ] && ca_mount=(--volume "$host_ca:/etc/ssl/certs/ca-certificates.crt:ro")

build_project() {
  local base=${BASE:-}
  [ -n "$base" ] || { build_base; base=$base_image; }
  # Rebuilt each time from the layers it has in the store: seconds unless the code changed.
  progress_begin project-image "building the image $project_image on $base" "$store"
  buildah bud --quiet --layers "${ca_mount[@]}" --build-arg "BASE=$base" \
    --tag "$project_image" "$repo" >/dev/null
  progress_end
}

# A Containerfile from stdin, built in a context holding FILE (copied in as its basename).
build_from() { # IMAGE FILE
  local context
  context=$(mktemp -d)
  cp "$2" "$context/"
  cat >"$context/Containerfile"
  buildah bud --quiet --layers --tag "$1" "$context" >/dev/null
  rm -rf "$context"
}

# The upstream engine's image, from the kube-scheduler binary built for the local cluster,
# laid out as the published one (/usr/local/bin/kube-scheduler, non-root).
build_kube_scheduler() {
  local bin
  # Its one "cached" line goes with this script's own output, not among the progress lines.
  bin=$(PROGRESS_FD=2 "$here/build-binaries.sh" kubernetes)/kube-scheduler
  progress_begin kube-scheduler-image "building the image $kube_scheduler_image from $bin" "$store"
  build_from "$kube_scheduler_image" "$bin" <<'EOF'
FROM scratch
COPY kube-scheduler /usr/local/bin/kube-scheduler
ENV PATH=/usr/local/bin
USER 65532:65532
EOF
  progress_end
}

# The pod sandbox ("pause") image: Debian's static catatonit holding the pod's namespaces.
build_pause() {
  podman image exists "$PAUSE_IMAGE" && { progress_cached "the pause image $PAUSE_IMAGE" "$store"; return; }
  progress_begin pause-image "building the pause image $PAUSE_IMAGE from catatonit" "$store"
  build_from "$PAUSE_IMAGE" /usr/bin/catatonit <<'EOF'
FROM scratch
COPY catatonit /pause
USER 65535:65535
ENTRYPOINT ["/pause", "-P"]
EOF
  progress_end
}

names() { printf '%s\n' "$project_image" "$kube_scheduler_image" "$PAUSE_IMAGE"; }

case ${1:-build} in
  build)
    "$here/host-packages.sh" images
    build_project
    build_kube_scheduler
    build_pause
    ;;
  save)
    rm -f "$2"
    podman save --quiet --multi-image-archive --output "$2" $(names)
    ;;
  names) names ;;
  *) echo "usage: images.sh build | save FILE | names" >&2; exit 2 ;;
esac
