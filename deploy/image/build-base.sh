#!/usr/bin/env bash
# The image's base without a registry: Debian bookworm made with debootstrap (minbase, like
# bookworm-slim) and imported into podman as localhost/crawler-base:bookworm. Kept once made.
set -euo pipefail
BASE=${BASE:-localhost/crawler-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if podman image exists "$BASE"; then
  echo "base image $BASE exists"
  exit 0
fi
work=$(mktemp -d /var/tmp/crawler-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$MIRROR" >/dev/null
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
echo "base image $BASE made"
