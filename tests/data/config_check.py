"""What the configuration checks share (check-presets.py, check-config-schema.py): merging
configuration fragments the way presets and Helm values files stack, pointing every
private_key_file at a test key, a throwaway RSA key, and `sf2loki check` on a YAML text."""

import copy
import os
import subprocess


def merge(base, over, null_deletes=False):
    """Mappings merge key by key, anything else is replaced; with @null_deletes a None in
    @over removes the key (Helm: a null in a later values file deletes it)."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            if v is None and null_deletes:
                out.pop(k, None)
            else:
                out[k] = merge(base.get(k), v, null_deletes) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def repoint_keys(node, key_path):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "private_key_file":
                node[k] = key_path
            else:
                repoint_keys(v, key_path)
    elif isinstance(node, list):
        for v in node:
            repoint_keys(v, key_path)


def make_key(tmp):
    key = os.path.join(tmp, "private-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                    "rsa_keygen_bits:2048", "-out", key], check=True, stderr=subprocess.DEVNULL)
    return key


def run_check(binary, path, text, env_extra):
    """`sf2loki check` on @text written to @path, under the environment without SF2LOKI_*."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SF2LOKI_")}
    env.update(env_extra)
    return subprocess.run([binary, "check", "--config", path], capture_output=True, text=True,
                          env=env)
