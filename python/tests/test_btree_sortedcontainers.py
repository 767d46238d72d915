"""sortedcontainers' own SortedSet / SortedDict tests, run against simdex's classes.

scripts/setup.sh fetches the suite (the release's source, which has the tests PyPI's sdist
lacks) into <venv>/cache/sortedcontainers-tests. Each upstream module is executed with
``sortedcontainers.SortedSet`` / ``SortedDict`` replaced by simdex's, and each of its test
functions becomes one case here. Tests that cannot apply to containers of numbers ordered by
value are listed in NOT_APPLICABLE with the reason, and skipped with it (docs/btree.md has the
same list).
"""

from __future__ import annotations

import os
import random
import sys
import types
from pathlib import Path

import pytest
import sortedcontainers

from simdex import btree

SUITE = Path(os.environ.get("SIMDEX_SORTEDCONTAINERS_TESTS", Path(sys.prefix) / "cache" / "sortedcontainers-tests")) / "tests"
MODULES = ["test_coverage_sortedset", "test_stress_sortedset", "test_coverage_sorteddict", "test_stress_sorteddict"]

_STR = "string keys (simdex keys are numbers)"
_KEYFN = "a key function (simdex orders keys by value)"
NOT_APPLICABLE = {
    "test_coverage_sortedset": {
        "test_init_key": _KEYFN,
        "test_getitem_key": _KEYFN,
        "test_delitem_key": _KEYFN,
        "test_irange_key": _KEYFN,
        "test_bisect_key": _KEYFN,
        "test_repr": _KEYFN,
        "test_repr_recursion": "a set of sets (keys that are not numbers)",
        "test_pickle": _KEYFN,
    },
    "test_stress_sortedset": {
        "test_init": "reads the load factor of sortedcontainers' internal list (_list._load)",
    },
    "test_coverage_sorteddict": {
        **{
            name: _STR
            for name in (
                "test_init_args test_init_kwargs test_clear test_contains test_delitem test_getitem test_eq test_iter "
                "test_reversed test_islice test_irange test_len test_setitem test_copy test_copy_copy test_fromkeys "
                "test_get test_items test_keys test_values test_pop test_pop2 test_popitem test_popitem3 "
                "test_peekitem test_peekitem2 test_setdefault test_update test_update2 test_repr test_repr_subclass "
                "test_index test_bisect test_keysview test_valuesview test_values_view_index test_itemsview "
                "test_items_view_index test_or test_ror test_ior"
            ).split()
        },
        **{
            name: _KEYFN
            for name in (
                "test_init_key test_iter_key test_reversed_key test_irange_key test_index_key test_bisect_key "
                "test_bisect_key2 test_repr_recursion test_pickle"
            ).split()
        },
        "test_iloc": "string keys, and the iloc attribute sortedcontainers deprecated",
        "test_notgiven": "reads sortedcontainers' private sentinel (_SortedDict__not_given)",
    },
}


class SortedSet(btree.SortedSet):
    """simdex's SortedSet with the two private hooks the suite calls: ``_reset(load)`` tunes
    sortedcontainers' list load factor (simdex has none to tune) and ``_check()`` validates
    the structure; ``_set`` is the keys as a plain set, which the suite compares against."""

    def _reset(self, load):
        pass

    def _check(self):
        self.validate()

    @property
    def _set(self):
        return set(self)


class SortedDict(btree.SortedDict):
    """simdex's SortedDict with the suite's ``_reset`` / ``_check`` hooks."""

    def _reset(self, load):
        pass

    def _check(self):
        self.validate()


def _load(name: str) -> types.ModuleType:
    """Executes one upstream module with simdex's classes in place of sortedcontainers'."""
    package = "_sortedcontainers_upstream"
    if package not in sys.modules:
        pkg = types.ModuleType(package)
        pkg.__path__ = []
        sys.modules[package] = pkg
        shim = types.ModuleType("sortedcontainers")
        shim.__dict__.update({k: getattr(sortedcontainers, k) for k in sortedcontainers.__all__})
        shim.SortedSet, shim.SortedDict = SortedSet, SortedDict
        context = types.ModuleType(f"{package}.context")
        context.sortedcontainers = shim
        sys.modules[context.__name__] = context
    shim = sys.modules[f"{package}.context"].sortedcontainers
    module = types.ModuleType(f"{package}.{name}")
    module.__package__ = package
    module.__file__ = str(SUITE / f"{name}.py")
    real = sys.modules["sortedcontainers"]
    sys.modules["sortedcontainers"] = shim  # for the module's own `from sortedcontainers import ...`
    try:
        exec(compile((SUITE / f"{name}.py").read_text(), module.__file__, "exec"), module.__dict__)
    finally:
        sys.modules["sortedcontainers"] = real
    return module


def _cases():
    if not (SUITE / f"{MODULES[0]}.py").exists():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"sortedcontainers' test suite not found in {SUITE} (scripts/setup.sh fetches it)"))]
    cases = []
    for name in MODULES:
        module = _load(name)
        for attr in sorted(vars(module)):
            if attr.startswith("test_") and callable(getattr(module, attr)):
                why = NOT_APPLICABLE.get(name, {}).get(attr)
                marks = [pytest.mark.skip(reason=f"not applicable: {why}")] if why else []
                cases.append(pytest.param(module, attr, id=f"{name}::{attr}", marks=marks))
    return cases


@pytest.mark.parametrize(("module", "name"), _cases())
def test_upstream(module, name):
    random.seed(0)  # the stress modules draw their actions from the shared generator
    getattr(module, name)()


def test_not_applicable_list_names_real_tests():
    """Every entry of NOT_APPLICABLE names a test the suite has (no stale exclusions)."""
    if not (SUITE / f"{MODULES[0]}.py").exists():
        pytest.skip(f"sortedcontainers' test suite not found in {SUITE}")
    for name, skipped in NOT_APPLICABLE.items():
        module = _load(name)
        missing = [t for t in skipped if not callable(getattr(module, t, None))]
        assert not missing, f"{name}: {missing}"
