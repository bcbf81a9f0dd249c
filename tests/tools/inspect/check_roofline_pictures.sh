#!/usr/bin/env bash
# check_roofline_pictures.sh <build dir> - the roofline pictures in docs/pictures are what tools/gen-roofline.sh
# draws from the current code: regenerate them into a temporary directory and compare byte for byte.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/tools/gen-roofline.sh" "$1" "$tmp" >/dev/null
status=0
for f in roofline-h100-sxm.svg roofline-h100-sxm.txt roofline-b200.svg roofline-b200.txt; do
  if ! cmp -s "$tmp/$f" "$root/docs/pictures/$f"; then
    echo "check_roofline_pictures: docs/pictures/$f differs from what tools/gen-roofline.sh draws now:"
    diff "$root/docs/pictures/$f" "$tmp/$f" | head -20 || true
    status=1
  fi
done
[ $status = 0 ] && echo "check_roofline_pictures: docs/pictures/roofline-* match the tools' output"
[ $status = 0 ] || echo "run tools/gen-roofline.sh <build dir> to regenerate them"
exit $status
