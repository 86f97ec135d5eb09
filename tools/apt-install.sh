#!/usr/bin/env bash
# Installs the given Debian packages with apt-get (through sudo unless running as root). The setup
# scripts call it with what they found missing; nothing to do without arguments.
#   tools/apt-install.sh WHO PACKAGE...   (WHO names the caller in the message)
set -euo pipefail
who=$1
shift
[ $# -gt 0 ] || exit 0
echo "$who: installing $*" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
