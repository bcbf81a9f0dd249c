#!/usr/bin/env bash
# check_doc_pictures.sh <build dir> - the layout pictures in docs/pictures are what tools/gen-doc-pictures.sh draws
# from the current code: regenerate them into a temporary directory and compare byte for byte.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/tools/gen-doc-pictures.sh" "$1" "$tmp" >/dev/null
status=0
n=0
for f in "$tmp"/*.svg; do
  b=$(basename "$f")
  n=$((n + 1))
  if ! cmp -s "$f" "$root/docs/pictures/$b"; then
    echo "check_doc_pictures: docs/pictures/$b differs from what tools/gen-doc-pictures.sh draws now"
    status=1
  fi
done
[ "$n" -gt 0 ] || { echo "check_doc_pictures: gen-doc-pictures.sh drew nothing"; exit 1; }
if [ $status = 0 ]; then echo "check_doc_pictures: $n pictures match"; else echo "run tools/gen-doc-pictures.sh <build dir>"; fi
exit $status
