#!/usr/bin/env bash
# Progress lines for the slow steps of a first run (the virtual environment, the binaries of
# tools/build-binaries.sh, the images of tools/images.sh): before a step, what it builds and how
# long it took on a fresh two-core machine (measured, kept in tools/build-times); after it, how
# long it took here; a single line for a step whose result is cached. Sourced by the scripts, or
#   progress.sh run STEP WHAT WHERE COMMAND...   COMMAND between its two lines
#   progress.sh expected STEP                    STEP's measured cold duration, in seconds
# The lines go to file descriptor $PROGRESS_FD (default 2), so that a caller logging a script's
# standard error can still show them.

progress_times=${PROGRESS_TIMES:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/build-times}

progress_line() { echo "$*" >&"${PROGRESS_FD:-2}"; }

# progress_expected STEP: seconds STEP took cold on two cores, from tools/build-times.
progress_expected() {
  local seconds
  seconds=$(awk -v step="$1" '$1 == step && $2 ~ /^[0-9]+$/ { print $2 }' "$progress_times")
  [ -n "$seconds" ] || {
    echo "progress: $progress_times gives no duration for the step \"$1\"" >&2
    return 1
  }
  echo "$seconds"
}

# progress_about SECONDS: an expected duration as a person reads it ("about 40 s", "about 12 min").
progress_about() {
  if (($1 < 90)); then echo "about $1 s"; else echo "about $((($1 + 30) / 60)) min"; fi
}

# progress_took SECONDS: a measured duration ("40 s", "11 min 42 s").
progress_took() {
  if (($1 < 60)); then echo "$1 s"; else echo "$(($1 / 60)) min $(($1 % 60)) s"; fi
}

# progress_begin STEP WHAT WHERE: the line before a step that builds WHAT into WHERE.
progress_begin() {
  local expected
  expected=$(progress_expected "$1")
  progress_started=$SECONDS progress_what=$2
  progress_line "$2 ($(progress_about "$expected") on 2 cores, once; cached in $3)"
}

# progress_end: the line after the step progress_begin announced, with the time it took.
progress_end() { progress_line "$progress_what: done in $(progress_took $((SECONDS - progress_started)))"; }

# progress_cached WHAT WHERE: the one line of a step whose result is already there.
progress_cached() { progress_line "$1: cached in $2"; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case ${1:-} in
    run)
      progress_begin "$2" "$3" "$4"
      shift 4
      "$@"
      progress_end
      ;;
    expected) progress_expected "$2" ;;
    *) echo "usage: progress.sh run STEP WHAT WHERE COMMAND... | expected STEP" >&2; exit 2 ;;
  esac
fi
