#!/usr/bin/env bash
# Fails when docs/algorithms.md's table differs from what the registry prints.
set -euo pipefail
INFO=$1
DOC=$2
expected=$("$INFO" --algorithms --markdown)
actual=$(sed -n '/<!-- BEGIN generated/,/<!-- END generated/p' "$DOC" | sed '1d;$d')
if [[ "$expected" != "$actual" ]]; then
  echo "docs/algorithms.md is out of date with the registry; run scripts/gen_algorithms_doc.sh" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  exit 1
fi
echo "docs/algorithms.md matches the registry"
