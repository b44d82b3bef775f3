#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Static checks of deploy/helm without helm (not packaged in Debian 12).

Chart.yaml and the values files are plain YAML and are parsed as they are. Templates are Go
templates, not YAML: each is reduced to a YAML skeleton (control lines dropped, an included or
toYaml'd block replaced by one placeholder key at its indentation, inline expressions by a
placeholder scalar) and that skeleton must parse with python3-yaml. An `if` on a value the
checks choose (SHARDED) keeps only the branch that value takes, so the default and the sharded
Role are two skeletons; every other branch is kept whole. The checks then assert the chart's
promises on the skeletons and the template text. A real render is the manual check in
docs/deployment/kubernetes.md.

usage: check_chart.py CHART_DIR        exit 0 on success, 77 when python3-yaml is missing
"""

import os
import re
import sys

try:
    import yaml
except ImportError:
    print("python3-yaml missing", file=sys.stderr)
    sys.exit(77)

CONTROL = re.compile(r"^\s*\{\{-?\s*(if|else|end|with|range|include \"sf2loki.validate\"|\$\w+\s*:=|/\*)")
BLOCK = re.compile(r"^(\s*)\{\{-?\s*(include|toYaml)\b.*\|\s*nindent\s+(\d+)\s*-?\}\}\s*$")
INLINE = re.compile(r"\{\{-?.*?-?\}\}")
IF = re.compile(r"^\s*\{\{-?\s*if\s+(.*?)\s*-?\}\}\s*$")
ELSE = re.compile(r"^\s*\{\{-?\s*else\b")
END = re.compile(r"^\s*\{\{-?\s*end\s*-?\}\}")
OPEN = re.compile(r"^\s*\{\{-?\s*(if|with|range)\b")

# the value the Role's sharded branch reads (values.yaml: config.coordinate.sharding.enabled)
SHARDED = ".Values.config.coordinate.sharding.enabled"

failures = []


def check(cond, message):
    if not cond:
        failures.append(message)


def choose(text, values):
    """@text with each `if` on a key of @values cut to the branch that value takes."""
    out = []
    frames = []  # per open action: None (kept whole), else whether its lines are taken now
    for line in text.splitlines():
        if line.count("{{") != 1:  # no action, or one that also ends on this line: no frame
            if all(f is not False for f in frames):
                out.append(line)
            continue
        cond = IF.match(line)
        if cond and cond.group(1) in values:
            frames.append(bool(values[cond.group(1)]))
        elif OPEN.match(line):
            frames.append(None)
        elif ELSE.match(line) and frames:
            if frames[-1] is not None:
                frames[-1] = not frames[-1]
        elif END.match(line) and frames:
            frames.pop()
        elif all(f is not False for f in frames):
            out.append(line)
    return "\n".join(out) + "\n"


def skeleton(text):
    out = []
    for line in text.splitlines():
        if CONTROL.match(line):
            continue
        block = BLOCK.match(line)
        if block:
            out.append(" " * int(block.group(3)) + "x-templated: block")
            continue
        out.append(INLINE.sub("TEMPLATED", line))
    return "\n".join(out) + "\n"


def main():
    chart = sys.argv[1]
    with open(os.path.join(chart, "Chart.yaml"), encoding="utf-8") as f:
        meta = yaml.safe_load(f)
    check(meta.get("apiVersion") == "v2" and meta.get("name") == "sf2loki", "Chart.yaml")
    values = {}
    for name in ("values.yaml", "values-ha.yaml"):
        with open(os.path.join(chart, name), encoding="utf-8") as f:
            values[name] = yaml.safe_load(f)
    base = values["values.yaml"]
    check(base["replicaCount"] == 1 and base["ha"]["enabled"] is False, "standalone by default")
    check(base["serviceAccount"]["create"] is True, "a dedicated service account by default")
    check(base["config"]["coordinate"]["k8s_lease"]["name"] == base["ha"]["leaseName"],
          "leaseName matches the config")
    ha = values["values-ha.yaml"]
    check(ha["replicaCount"] == 2 and ha["ha"]["enabled"], "values-ha is an HA pair")
    check(ha["config"]["coordinate"]["type"] == "k8s_lease", "values-ha uses k8s_lease")
    check(ha["config"]["state"]["store"] != "file" or ha.get("stateVolume"),
          "values-ha shares the file store through a volume")

    docs = {}
    tdir = os.path.join(chart, "templates")
    for name in sorted(os.listdir(tdir)):
        path = os.path.join(tdir, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check("{{" not in INLINE.sub("", text), f"{name}: an unterminated template action")
        if not name.endswith(".yaml"):
            continue
        try:
            parsed = [d for d in yaml.safe_load_all(skeleton(choose(text, {SHARDED: False})))
                      if d]
        except yaml.YAMLError as exc:
            failures.append(f"{name}: the skeleton does not parse: {exc}")
            continue
        for doc in parsed:
            docs.setdefault(doc.get("kind"), []).append((name, text, doc))

    for kind in ("Deployment", "ConfigMap", "ServiceAccount", "Role", "RoleBinding",
                 "PodDisruptionBudget", "Service"):
        check(kind in docs, f"no {kind}")
    if failures:
        return report()

    _, text, deploy = docs["Deployment"][0]
    pod = deploy["spec"]["template"]["spec"]
    container = pod["containers"][0]
    check(container["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness on /readyz")
    check(container["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness on /healthz")
    sc = container["securityContext"]
    check(sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
          and sc["capabilities"]["drop"] == ["ALL"] and sc["runAsNonRoot"] is True,
          "container security context fixed")
    check(pod["securityContext"]["runAsNonRoot"] is True
          and pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault",
          "pod security context fixed")
    check("automountServiceAccountToken: {{ $k8sLease }}" in text,
          "the token is mounted only for k8s_lease")
    check("resources" in container, "resources set")
    check(any(e["name"] == "POD_NAMESPACE" for e in container["env"]), "POD_NAMESPACE env")

    _, role_text, role = docs["Role"][0]
    rules = role["rules"]
    verbs = sorted(v for r in rules for v in r["verbs"])
    check(verbs == ["create", "get", "update"], f"Role verbs {verbs}")
    check(all(r.get("resourceNames") == ["TEMPLATED"] for r in rules if "get" in r["verbs"]),
          "unsharded, get/update are on the one Lease (ha.leaseName) only")
    check(all(r["apiGroups"] == ["coordination.k8s.io"] and r["resources"] == ["leases"]
              for r in rules), "Role is about leases only")
    check('eq (include "sf2loki.coordinator" .) "k8s_lease"' in role_text,
          "RBAC only with k8s_lease")
    check_sharded_role(base, role_text)

    with open(os.path.join(tdir, "_helpers.tpl"), encoding="utf-8") as f:
        helpers = f.read()
    check("serviceAccount.name is required when serviceAccount.create is false" in helpers,
          "the render fails without a service account name")
    check("replicaCount > 1 needs ha.enabled" in helpers, "replicas need ha.enabled")
    _, sa_text, sa = docs["ServiceAccount"][0]
    check(sa.get("automountServiceAccountToken") is False, "the SA does not automount")
    check_generated_config(chart, base, text, helpers)
    return report()


def check_sharded_role(base, role_text):
    """Sharded, the member store lists by label and deletes member Leases, and both the member
    and the unit Leases are named at run time: get, update, list and delete with no
    resourceNames, which could only ever name whole Leases."""
    check(base["config"]["coordinate"]["sharding"]["enabled"] is False,
          "values.yaml has config.coordinate.sharding.enabled, off by default")
    check(f"if {SHARDED} " in role_text, f"the Role has no branch on {SHARDED}")
    try:
        docs = [d for d in yaml.safe_load_all(skeleton(choose(role_text, {SHARDED: True})))
                if d]
    except yaml.YAMLError as exc:
        failures.append(f"role.yaml sharded: the skeleton does not parse: {exc}")
        return
    roles = [d for d in docs if d.get("kind") == "Role"]
    check(len(roles) == 1, "sharded: one Role")
    if not roles:
        return
    rules = roles[0]["rules"]
    verbs = sorted(v for r in rules for v in r["verbs"])
    check(verbs == ["create", "delete", "get", "list", "update"], f"sharded Role verbs {verbs}")
    check(all("resourceNames" not in r for r in rules),
          "sharded, no rule is limited to named Leases")
    check(all(r["apiGroups"] == ["coordination.k8s.io"] and r["resources"] == ["leases"]
              for r in rules), "sharded Role is about leases only")


def check_generated_config(chart, base, deploy_text, helpers):
    """The config: block `sf2loki config helm-values` generates is what the templates read.

    Without helm this stands in for a render: the ConfigMap holds include "sf2loki.config",
    which is toYaml of .Values.config (tests/data/check-config-schema.py runs that config
    through the schema and `sf2loki check`); here its paths must be the ones the Deployment
    mounts, its port the one the probes use.
    """
    with open(os.path.join(chart, "values.yaml"), encoding="utf-8") as f:
        values_text = f.read()
    begin = values_text.find("# >>> BEGIN generated config")
    end = values_text.find("# >>> END generated config <<<")
    check(0 <= begin < end, "values.yaml lacks the BEGIN/END generated config markers")
    block = yaml.safe_load(values_text[begin:end]) or {}
    check(list(block) == ["config"], "the generated region holds only the config: key")
    with open(os.path.join(chart, "templates", "configmap.yaml"), encoding="utf-8") as f:
        configmap = f.read()
    check('include "sf2loki.config" . | nindent 4' in configmap,
          "the ConfigMap renders the values' config")
    check("deepCopy .Values.config" in helpers and "toYaml $config" in helpers,
          "sf2loki.config is the values' config")
    config = base["config"]
    check(config["state"]["file"]["path"].startswith(base["stateDir"] + "/"),
          "state.file.path is under stateDir, the mounted state volume")
    check(config["coordinate"]["file_lease"]["path"].startswith(base["stateDir"] + "/"),
          "coordinate.file_lease.path is under stateDir")
    check(config["salesforce"]["private_key_file"].startswith("/etc/sf2loki/secrets/")
          and "mountPath: /etc/sf2loki/secrets" in deploy_text,
          "the private key is read from the mounted secret")
    port = config["service"]["health_addr"].rsplit(":", 1)[1]
    check(port == str(base["service"]["port"]) and f"containerPort: {port}" in deploy_text,
          "service.health_addr listens on the container port the probes use")
    check(config["coordinate"]["k8s_lease"]["namespace"] == "${POD_NAMESPACE}",
          "the Lease lives in the pod's namespace")


def report():
    for message in failures:
        print(f"FAIL: {message}", file=sys.stderr)
    if failures:
        return 1
    print("chart checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
