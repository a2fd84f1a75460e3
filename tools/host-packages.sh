#!/usr/bin/env bash
# Installs the Debian packages a part of the project needs on this host, when missing.
#   host-packages.sh images   image builds: podman, buildah, mmdebstrap, catatonit
#   host-packages.sh node     a real node: containerd, runc, CNI plugins, iptables
#   host-packages.sh instructions   the instruction guard (make instructions): valgrind
#   host-packages.sh spark  Spark's distribution (the Spark operator's tests): curl to fetch it,
#                           a Java runtime for its spark-submit
# Needs root and apt-get; elsewhere it names what is missing and fails.
set -euo pipefail

declare -A images=([podman]=podman [buildah]=buildah [mmdebstrap]=mmdebstrap
  [/usr/bin/catatonit]=catatonit [runc]=runc [fuse-overlayfs]=fuse-overlayfs)
declare -A node=([containerd]=containerd [runc]=runc [/usr/lib/cni/bridge]=containernetworking-plugins
  [iptables]=iptables [conntrack]=conntrack [ip]=iproute2 [openssl]=openssl [mountpoint]=util-linux)
declare -A instructions=([valgrind]=valgrind [callgrind_annotate]=valgrind)
declare -A spark=([curl]=curl [java]=openjdk-17-jre-headless)

case ${1:-} in
  images) declare -n wanted=images ;;
  node) declare -n wanted=node ;;
  instructions) declare -n wanted=instructions ;;
  spark) declare -n wanted=spark ;;
  *) echo "usage: host-packages.sh images|node|instructions|spark" >&2; exit 2 ;;
esac

missing=()
for tool in "${!wanted[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "$tool" ] || missing+=("${wanted[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "host-packages: missing ${missing[*]} (install them, as root, from Debian's packages)" >&2
  exit 1
fi
# Shown among the progress lines of tools/progress.sh (descriptor $PROGRESS_FD) when a caller sets it.
echo "installing Debian packages: ${missing[*]} (once)" >&"${PROGRESS_FD:-2}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Packaged services (containerd) must not start on their own: the node runs its own.
policy=/usr/sbin/policy-rc.d
[ -e "$policy" ] || { printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; trap 'rm -f "$policy"' EXIT; }
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
