"""wheel_backend.py: the PEP 517 build backend of the gatelab package.

It needs nothing beyond the standard library, so `pip install ./python`
works offline: pip's isolated build environment has nothing to fetch
(pyproject.toml's build-system requires is empty), where setuptools would
be downloaded from the index. It writes a pure-Python wheel of every
gatelab/*.py, and an editable wheel (a .pth file naming this folder) for
`pip install -e ./python`. Name, version, summary and Python requirement
come from pyproject.toml's [project] table.
"""
import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "gatelab"
EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed member times: the same sources give the same wheel


def _project():
    """pyproject.toml's [project] name, version, description, requires-python."""
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib
        return tomllib.loads(text)["project"]
    except ImportError:  # Python < 3.11: the four plain strings the table holds
        table = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', table, re.M))


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if p.get("description"):
        lines.append("Summary: " + p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: " + p["requires-python"])
    return ("\n".join(lines) + "\n").encode()


def _write(wheel_directory, files):
    """The wheel of files (archive name -> bytes) plus its dist-info; its name."""
    p = _project()
    dist = "%s-%s" % (p["name"].replace("-", "_"), p["version"])
    name = dist + "-py3-none-any.whl"
    info = dist + ".dist-info/"
    files = dict(files)
    files[info + "METADATA"] = _metadata(p)
    files[info + "WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: gatelab wheel_backend\n"
                             b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc in sorted(files):
            data = files[arc]
            z.writestr(zipfile.ZipInfo(arc, EPOCH), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append("%s,sha256=%s,%d" % (arc, digest.decode(), len(data)))
        record.append(info + "RECORD,,")
        z.writestr(zipfile.ZipInfo(info + "RECORD", EPOCH), "\n".join(record) + "\n")
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    src = os.path.join(HERE, PACKAGE)
    files = {}
    for f in sorted(os.listdir(src)):
        if f.endswith(".py"):
            with open(os.path.join(src, f), "rb") as fh:
                files[PACKAGE + "/" + f] = fh.read()
    return _write(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write(wheel_directory, {PACKAGE + ".pth": (HERE + "\n").encode()})
