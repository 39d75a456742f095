#!/usr/bin/env bash
# Makes today's public contract the baseline: run when cutting a release
# (after its changelog entry in docs/API.md), never to silence the check.
# What a release has shipped is what later changes are checked against;
# something added and removed again between two releases was never shipped.
#
#   proto/contract/update_baseline.sh      # then review `git diff proto/contract/baseline`
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proto=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
protoc -I"$proto" --include_imports --descriptor_set_out="$tmp/edge.desc" scrabble/v1/edge.proto
/usr/bin/python3 "$here/check.py" write-baseline --current "$tmp/edge.desc" --out "$here/baseline/edge.txtpb"
cp "$proto/scrabble/v1/reasons.txt" "$here/baseline/reasons.txt"
echo "baseline updated: proto/contract/baseline/{edge.txtpb,reasons.txt}"
