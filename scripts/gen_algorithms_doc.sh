#!/usr/bin/env bash
# Regenerates the algorithm table of docs/algorithms.md from the registry (fabcoll-info), so the
# table cannot drift from the code; tests/docs/check_algorithms_doc.sh fails when it has.
# Usage: scripts/gen_algorithms_doc.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
INFO=${1:-build}/fabcoll-info
DOC=docs/algorithms.md
python3 - "$DOC" "$("$INFO" --algorithms --markdown)" <<'PY'
import sys
doc, table = sys.argv[1], sys.argv[2]
begin, end = "<!-- BEGIN generated: fabcoll-info --algorithms --markdown -->", "<!-- END generated -->"
s = open(doc).read()
i, j = s.index(begin) + len(begin), s.index(end)
open(doc, "w").write(s[:i] + "\n" + table.strip() + "\n" + s[j:])
PY
