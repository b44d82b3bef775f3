#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""`make msi`: the sf2loki MSI from a Windows build's dist/ folder, with wixl.

usage: build-msi.py --build-dir build-win [--version X.Y.Z] [--out FILE]
                    [--sign-cert CERT.pem --sign-key KEY.pem]

Reads the build's dist/ (sf2loki.exe and the DLLs scripts/win-collect-dlls.sh put there) and
its sfl-msi-action.exe (packaging/msi/meson.build), fills packaging/msi/sf2loki.wxs.in with one
component per file (wixl-heat wraps top-level files in a bogus Directory Name=".", so the list
is made here) and runs `wixl -a x64`. The version is the one the build's binaries report
(meson's project version, or the build's -Dpackage_version); --version (VERSION= in make)
sets the MSI's ProductVersion alone. With --sign-cert and --sign-key (MSI_SIGN_CERT and
MSI_SIGN_KEY), osslsigncode signs sf2loki.exe and the custom action program before they are
packaged, and then the .msi. Prints the path of the .msi.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# One for every version, forever: Windows Installer finds the installed sf2loki by it
UPGRADE_CODE = "6449A8BB-9D55-4E2C-B16A-D6CA9D3E424D"
# component GUIDs are derived from the file name, so a file keeps its component across
# versions (the component rules), and a new DLL gets a new one
COMPONENT_NAMESPACE = uuid.UUID("86ee3f5f-397d-43eb-b2ad-c2f0558f7e44")

# how long the uninstall (and so an upgrade) waits for a running service to finish its drain:
# the default service.shutdown_grace (25 s), the final commit, and room for a slow machine
STOP_WAIT_SECONDS = 90


def component_guid(name):
    return str(uuid.uuid5(COMPONENT_NAMESPACE, "sf2loki-msi/" + name.lower())).upper()


def identifier(name):
    """A file name as an MSI identifier (letters, digits, '_' and '.')."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


def build_version(build_dir):
    """What the build's binaries report: -Dpackage_version, else the project version."""
    def introspect(what):
        out = subprocess.run(["meson", "introspect", build_dir, what], check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)

    for opt in introspect("--buildoptions"):
        if opt["name"] == "package_version" and opt["value"]:
            return opt["value"]
    return introspect("--projectinfo")["version"]


def msi_version(version):
    """ProductVersion is major.minor.build, at most 255.255.65535: no suffixes."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    if not m or int(m.group(1)) > 255 or int(m.group(2)) > 255 or int(m.group(3)) > 65535:
        sys.exit("build-msi: version %r is not an MSI ProductVersion (major.minor.build, at "
                 "most 255.255.65535)" % version)
    return version


def sign(path, cert, key, description):
    signed = path + ".signed"
    subprocess.run(["osslsigncode", "sign", "-certs", cert, "-key", key, "-h", "sha256",
                    "-n", description, "-in", path, "-out", signed], check=True,
                   stdout=subprocess.DEVNULL)
    os.replace(signed, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--version", help="the MSI's ProductVersion (default: the build's)")
    ap.add_argument("--out", help="default: BUILD_DIR/sf2loki-VERSION-x64.msi")
    ap.add_argument("--sign-cert")
    ap.add_argument("--sign-key")
    ap.add_argument("--keep-wxs", action="store_true", help="leave the filled .wxs beside --out")
    opts = ap.parse_args()
    if bool(opts.sign_cert) != bool(opts.sign_key):
        ap.error("--sign-cert and --sign-key go together")

    dist = os.path.join(opts.build_dir, "dist")
    action = os.path.join(opts.build_dir, "packaging", "msi", "sfl-msi-action.exe")
    for path, hint in ((os.path.join(dist, "sf2loki.exe"), "make win-build"),
                       (os.path.join(dist, "share", "glib-2.0", "schemas", "gschemas.compiled"),
                        "make win-build"),
                       (action, "meson compile -C %s sfl-msi-action" % opts.build_dir)):
        if not os.path.isfile(path):
            sys.exit("build-msi: %s is missing (%s)" % (path, hint))
    version = msi_version(opts.version or build_version(opts.build_dir))
    out = opts.out or os.path.join(opts.build_dir, "sf2loki-%s-x64.msi" % version)

    work = tempfile.mkdtemp(prefix="sfl-msi.")
    try:
        # the payload is staged so that signing never touches the build's own dist/
        stage = os.path.join(work, "dist")
        shutil.copytree(dist, stage)
        staged_action = os.path.join(work, "sfl-msi-action.exe")
        shutil.copy2(action, staged_action)
        shutil.copy2(os.path.join(HERE, "config.example.yaml"), work)
        if opts.sign_cert:
            sign(os.path.join(stage, "sf2loki.exe"), opts.sign_cert, opts.sign_key, "sf2loki")
            sign(staged_action, opts.sign_cert, opts.sign_key, "sf2loki installer action")

        dlls = sorted((f for f in os.listdir(stage) if f.lower().endswith(".dll")),
                      key=str.lower)
        if not dlls:
            sys.exit("build-msi: no DLL in %s: was it made by make win-build?" % dist)
        components, refs = [], []
        for name in dlls:
            ident = identifier(name)
            components.append(
                '          <Component Id="C_%s" Guid="%s" Win64="yes">\n'
                '            <File Id="F_%s" Name="%s" Source="%s" KeyPath="yes" />\n'
                '          </Component>' % (ident, component_guid(name), ident, name,
                                            "dist/" + name))
            refs.append('      <ComponentRef Id="C_%s" />' % ident)

        with open(os.path.join(HERE, "sf2loki.wxs.in"), encoding="utf-8") as f:
            wxs = f.read()
        fill = {
            "VERSION": version,
            "UPGRADE_CODE": UPGRADE_CODE,
            "GUID_SERVICE": component_guid("sf2loki.exe"),
            "GUID_CONFIG_EXAMPLE": component_guid("config.example.yaml"),
            "GUID_GSCHEMA": component_guid("share/glib-2.0/schemas/gschemas.compiled"),
            "GUID_MSI_ACTION": component_guid("sfl-msi-action.exe"),
            # wixl takes sources relative to where it runs (it asserts on absolute ones)
            "DIST": "dist",
            "CONFIG_EXAMPLE": "config.example.yaml",
            "ACTION_EXE": "sfl-msi-action.exe",
            "STOP_WAIT_SECONDS": str(STOP_WAIT_SECONDS),
            "DLL_COMPONENTS": "\n".join(components),
            "DLL_COMPONENT_REFS": "\n".join(refs),
        }
        for key, value in fill.items():
            wxs = wxs.replace("@%s@" % key, value)
        left = re.findall(r"@[A-Z_]+@", wxs)
        if left:
            sys.exit("build-msi: unfilled placeholders %s" % ", ".join(sorted(set(left))))
        wxs_path = os.path.join(work, "sf2loki.wxs")
        with open(wxs_path, "w", encoding="utf-8") as f:
            f.write(wxs)

        tmp_out = os.path.abspath(out + ".tmp")
        res = subprocess.run(["wixl", "-a", "x64", "-o", tmp_out, "sf2loki.wxs"], cwd=work,
                             capture_output=True, text=True)
        # wixl reports an attribute it does not know as a GLib warning and carries on
        if res.returncode != 0 or "WARNING" in res.stderr or "CRITICAL" in res.stderr:
            if os.path.exists(tmp_out):
                os.unlink(tmp_out)
            sys.exit("build-msi: wixl failed (exit %d):\n%s" % (res.returncode, res.stderr))
        if opts.sign_cert:
            sign(tmp_out, opts.sign_cert, opts.sign_key, "sf2loki %s" % version)
        os.replace(tmp_out, out)
        if opts.keep_wxs:
            shutil.copy2(wxs_path, os.path.splitext(out)[0] + ".wxs")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
