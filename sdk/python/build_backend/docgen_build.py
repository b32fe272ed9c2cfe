"""The PEP 517 build backend of docgen_client, in the standard library only.

pip builds a folder it installs with the backend pyproject.toml names, and installs that
backend first, from an index. With this in-tree backend (``backend-path``) there is nothing to
fetch: ``python3 -m pip install --no-index sdk/python`` works on a machine without network or
setuptools. It builds a pure-Python wheel (``py3-none-any``) of the ``docgen_client`` package
and an sdist of the folder; metadata comes from pyproject.toml's ``[project]`` table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "docgen_client"


def _project() -> Dict[str, str]:
    """name, version, description, requires-python and license of pyproject.toml's [project]."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if table is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields = dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"\s*$', table.group(1), re.M))
    license_text = re.search(r'^license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', table.group(1), re.M)
    fields["license"] = license_text.group(1) if license_text else ""
    for required in ("name", "version"):
        if required not in fields:
            raise RuntimeError(f"pyproject.toml [project] has no {required}")
    return fields


def _metadata(project: Dict[str, str]) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"License: {project['license']}",
        f"Requires-Python: {project.get('requires-python', '>=3.8')}",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(lines) + "\n\n" + readme


def _package_files() -> List[Tuple[str, str]]:
    """(path in the archive, path on disk) of the package's modules and py.typed."""
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(base)):
        if name.endswith(".py") or name == "py.typed":
            out.append((f"{PACKAGE}/{name}", os.path.join(base, name)))
    return out


def _dist_name(project: Dict[str, str]) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    project = _project()
    dist = _dist_name(project)
    info = f"{dist}-{project['version']}.dist-info"
    filename = f"{dist}-{project['version']}-py3-none-any.whl"
    entries: List[Tuple[str, bytes]] = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arcname, f.read()))
    entries.append((f"{info}/METADATA", _metadata(project).encode("utf-8")))
    wheel = "Wheel-Version: 1.0\nGenerator: docgen_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries.append((f"{info}/WHEEL", wheel.encode("utf-8")))
    record = io.StringIO()
    for arcname, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.write(f"{arcname},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    entries.append((f"{info}/RECORD", record.getvalue().encode("utf-8")))
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in entries:
            archive.writestr(arcname, data)
    return filename


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    project = _project()
    prefix = f"{_dist_name(project)}-{project['version']}"
    filename = f"{prefix}.tar.gz"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")), ("README.md", os.path.join(ROOT, "README.md"))]
    files += [(f"build_backend/{os.path.basename(__file__)}", os.path.abspath(__file__))]
    files += _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as archive:
        for arcname, path in files:
            archive.add(path, arcname=f"{prefix}/{arcname}")
        metadata = _metadata(project).encode("utf-8")
        entry = tarfile.TarInfo(f"{prefix}/PKG-INFO")
        entry.size = len(metadata)
        archive.addfile(entry, io.BytesIO(metadata))
    return filename
