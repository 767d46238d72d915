"""CPython's own base64 tests of the Base85 / Ascii85 functions, made to call simdex.base85's.

Used by test_base85_cpython_suite.py (pytest) and wheel_smoke.py (a wheel in a fresh venv, where
the interpreter's own suite may have z85 tests the development one lacks). The suite is the
running interpreter's Lib/test/test_base64.py; its module is given, in place of ``base64``, a
copy of the real module whose Base85 functions are simdex's, and the real module is untouched.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import re
import types
import unittest

REPLACED = [n for n in ("b85encode", "b85decode", "a85encode", "a85decode", "z85encode", "z85decode")
            if hasattr(base64, n)]
_CALLS = re.compile(r"\bbase64\.(" + "|".join(REPLACED) + r")\b")


def load():
    """(the suite's module, None), or (None, why it is missing)."""
    try:
        return importlib.import_module("test.test_base64"), None
    except ImportError as e:  # no test package in this interpreter
        return None, (f"CPython's test.test_base64 is not installed ({e}); "
                      "on Debian 12: apt-get install libpython3.11-testsuite")


def cases(suite) -> list[tuple[type, str]]:
    """(TestCase class, method name) of every test method whose source calls a replaced function."""
    out = []
    for cls in vars(suite).values():
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
            for name, fn in sorted(vars(cls).items()):
                if name.startswith("test") and callable(fn) and _CALLS.search(inspect.getsource(fn)):
                    out.append((cls, name))
    return out


def with_simdex(base85) -> types.ModuleType:
    """A copy of base64 whose Base85 functions are simdex.base85's."""
    proxy = types.ModuleType("base64")
    proxy.__dict__.update(vars(base64))
    for name in REPLACED:
        setattr(proxy, name, getattr(base85, name))
    return proxy


def run(cls: type, name: str) -> str:
    """Runs one case; returns the failures' and errors' tracebacks ("" when it passed)."""
    result = unittest.TestResult()
    cls(name).run(result)
    problems = [text for _, text in result.failures + result.errors]
    problems += [f"skipped: {why}" for _, why in result.skipped]
    return "\n".join(problems)
