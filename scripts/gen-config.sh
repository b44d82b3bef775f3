#!/bin/sh
# Regenerates the files rendered from the configuration tables (a unit test fails while any
# of them differs): config.example.yaml, docs/config-reference.md, config.schema.json,
# data/org.sf2loki.gschema.xml and the marked config: block of deploy/helm/values.yaml.
#
# usage: gen-config.sh SF2LOKI_BINARY      (run from the source root; `make gen-config`)
set -eu

bin=$1
"$bin" config example >config.example.yaml
"$bin" config reference >docs/config-reference.md
"$bin" config schema >config.schema.json
"$bin" config gschema >data/org.sf2loki.gschema.xml
"$bin" config helm-values >deploy/helm/.values-block.tmp
# everything outside the markers is the chart's own and is kept as it is
/usr/bin/python3 - deploy/helm/values.yaml deploy/helm/.values-block.tmp <<'PY'
import sys

values_path, block_path = sys.argv[1], sys.argv[2]
BEGIN, END = "# >>> BEGIN generated config", "# >>> END generated config <<<"
with open(values_path, encoding="utf-8") as f:
    lines = f.read().splitlines(keepends=True)
with open(block_path, encoding="utf-8") as f:
    block = f.read()
begin = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
end = next(i for i, line in enumerate(lines) if line.startswith(END))
with open(values_path, "w", encoding="utf-8") as f:
    f.write("".join(lines[:begin]) + block + "".join(lines[end + 1:]))
PY
rm -f deploy/helm/.values-block.tmp
