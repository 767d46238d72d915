"""Find CPython interpreters by version, for building and checking wheels.

    python3 scripts/pythons.py 3.9 3.12 3.13     # prints "VERSION PATH" for each one found

Looks, in order, at $SIMDEX_PYTHON_<major>_<minor> (a path), pythonX.Y on PATH, pyenv's
versions ($PYENV_ROOT or ~/.pyenv: newest patch release first), /usr/local/bin and /usr/bin.
An interpreter counts only if it runs, reports that version, has venv and pip, and is not
itself inside a venv.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

# A venv's python stands for its base interpreter: take the base one, found further on.
_PROBE = "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2] if sys.prefix == sys.base_prefix else 'venv')"


def _works(path: str, version: str) -> bool:
    try:
        r = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and r.stdout.strip() == version


def _patch(path: str) -> tuple[int, ...]:
    name = path.split(os.sep + "versions" + os.sep)[-1].split(os.sep)[0]
    return tuple(int(p) if p.isdigit() else -1 for p in name.split("."))


def candidates(version: str) -> list[str]:
    out = []
    env = os.environ.get("SIMDEX_PYTHON_" + version.replace(".", "_"))
    if env:
        out.append(env)
    on_path = shutil.which(f"python{version}")
    if on_path:
        out.append(on_path)
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    out += sorted(found, key=_patch, reverse=True)
    out += [f"/usr/local/bin/python{version}", f"/usr/bin/python{version}"]
    return out


def find(version: str) -> str | None:
    """The path of a working CPython ``version`` ("3.9"), or None."""
    for path in candidates(version):
        if os.path.isfile(path) and _works(path, version):
            return path
    return None


if __name__ == "__main__":
    for v in sys.argv[1:]:
        p = find(v)
        if p:
            print(v, p)
