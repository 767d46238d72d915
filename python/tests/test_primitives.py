"""simdex.primitives: all five node kernels, each against a numpy reference."""

import numpy as np
import pytest

from simdex import primitives as p

rng = np.random.default_rng(7)


def test_offers_the_five_kernels():
    for name in ("lower_bound", "remap_branches", "rank_table", "find_u32x16", "find_min_index"):
        fn = getattr(p, name)
        assert callable(fn) and fn.__doc__, name


@pytest.mark.parametrize("n", [0, 1, 15, 16, 63, 64, 65, 200, 256])
def test_lower_bound(n):
    a = np.sort(rng.integers(0, 256, n, dtype=np.uint8))
    for key in (0, 1, 127, 128, 255) + tuple(int(k) for k in rng.integers(0, 256, 8)):
        assert p.lower_bound(a, key) == np.searchsorted(a, key, "left")
    with pytest.raises(ValueError):
        p.lower_bound(a, 256)


@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 100, 256])
def test_remap_branches(n):
    codes = rng.integers(0, 256, n, dtype=np.uint8)
    lut = rng.integers(0, 256, 16, dtype=np.uint8)
    want = ((lut[codes >> 4] & 15) << 4) | (codes & 15)
    got = p.remap_branches(codes, lut)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
    assert np.array_equal(codes, codes.copy())  # input untouched
    with pytest.raises(ValueError, match="16"):
        p.remap_branches(codes, lut[:15])


def test_rank_table():
    for _ in range(50):
        counts = rng.integers(0, 3, 16, dtype=np.uint8) * rng.integers(0, 2, 16, dtype=np.uint8)
        want = np.concatenate([[0], np.cumsum(counts != 0)[:-1]]).astype(np.uint8)
        assert np.array_equal(p.rank_table(counts), want)
    with pytest.raises(ValueError, match="16"):
        p.rank_table(np.zeros(17, np.uint8))


@pytest.mark.parametrize("size", [0, 1, 7, 15, 16])
def test_find_u32x16(size):
    slots = rng.integers(0, 50, size, dtype=np.uint32)
    for needle in range(52):
        hits = np.flatnonzero(slots == needle)
        assert p.find_u32x16(slots, needle) == (hits[0] if len(hits) else size)
    with pytest.raises(ValueError):
        p.find_u32x16(np.zeros(17, np.uint32), 0)
    with pytest.raises(ValueError):
        p.find_u32x16(slots, 1 << 32)
    with pytest.raises(ValueError):
        p.find_u32x16(slots, -1)


@pytest.mark.parametrize("n", [32, 64])
def test_find_min_index(n):
    for _ in range(30):
        v = rng.integers(0, 20, n, dtype=np.uint16)
        assert p.find_min_index(v) == int(np.argmin(v))
    with pytest.raises(ValueError):
        p.find_min_index(np.zeros(33, np.uint16))
