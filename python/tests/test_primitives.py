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


def test_other_dtypes_are_refused_not_converted():
    # A numeric array of another dtype was converted silently (300 as a uint8 is 44, -1 a 65535,
    # 3.5 a 3) and the kernel answered for other values; a key past 64 bits named no argument.
    u8, u32, u16 = np.zeros(16, np.uint8), np.zeros(16, np.uint32), np.zeros(32, np.uint16)
    calls = [
        (lambda a: p.lower_bound(a, 50), u8, [np.array([300, 1, 2]), np.array([-1, 5], np.int8),
                                              np.array([1.5, 2.0]), [1, 2, 3]]),
        (lambda a: p.remap_branches(a, u8), u8, [np.arange(4, dtype=np.int64)]),
        (lambda a: p.remap_branches(u8, a), u8, [np.arange(16, dtype=np.int16)]),
        (lambda a: p.rank_table(a), u8, [np.ones(16, np.int64), np.full(16, 0.5)]),
        (lambda a: p.find_u32x16(a, 5), u32, [np.array([2**32 + 5]), np.array([3.5]), np.zeros(4, np.int32)]),
        (lambda a: p.find_min_index(a), u16, [np.arange(32, dtype=np.int64) - 1, np.zeros(32, np.float32)]),
    ]
    for call, good, bad in calls:
        call(good)  # the documented dtype works
        call(good[::-1])  # and a non-contiguous view of it is copied, as before
        for a in bad:
            with pytest.raises(TypeError, match="must be a 1-D numpy array of"):
                call(a)
    for key in (2**40, 2**63, 2**70, -1, 256):
        with pytest.raises(ValueError, match="key"):
            p.lower_bound(u8, key)
    for needle in (2**32, 2**64, -1):
        with pytest.raises(ValueError, match="needle"):
            p.find_u32x16(u32, needle)


def test_read_only_arrays_are_accepted():
    # The kernels only read, but read-only arrays (np.frombuffer of bytes, a read-only memmap)
    # were refused with the self-contradicting "must be a 1-D numpy array of uint8, not ndarray
    # of dtype uint8".
    def ro(a):
        a = a.copy()
        a.setflags(write=False)
        return a

    data = np.frombuffer(bytes(range(200)), np.uint8)
    assert not data.flags.writeable
    assert p.lower_bound(data, 77) == 77
    assert p.lower_bound(data[3:], 77) == 74
    lut = ro(np.arange(16, dtype=np.uint8)[::-1])
    codes = ro(np.array([0x00, 0x1f, 0xf3], np.uint8))
    assert list(p.remap_branches(codes, lut)) == [0xf0, 0xef, 0x03]
    counts = ro(np.array([1, 0] * 8, np.uint8))
    assert list(p.rank_table(counts)) == [i // 2 + i % 2 for i in range(16)]
    assert p.find_u32x16(ro(np.array([4, 5, 6], np.uint32)), 6) == 2
    values = ro(np.arange(64, dtype=np.uint16)[::-1])
    assert p.find_min_index(values) == 63
    assert p.find_min_index(values[:32]) == 31
    with pytest.raises(TypeError, match="must be a 1-D numpy array of uint8"):
        p.lower_bound(ro(np.arange(4, dtype=np.int64)), 1)  # the dtype check still applies


def test_numpy_integer_keys_are_accepted():
    # A key or needle taken from an array is a numpy integer; only a Python int was accepted
    # ("key (a byte) must be an int" for np.uint8(3)). Floats are still refused.
    a = np.arange(10, dtype=np.uint8)
    assert p.lower_bound(a, a[3]) == 3
    assert p.lower_bound(a, np.int64(7)) == 7
    slots = np.arange(5, dtype=np.uint32)
    assert p.find_u32x16(slots, slots[2]) == 2
    assert p.find_u32x16(slots, np.uint64(2**32 - 1)) == 5
    with pytest.raises(ValueError, match="key"):
        p.lower_bound(a, np.int64(256))
    with pytest.raises(ValueError, match="needle"):
        p.find_u32x16(slots, np.int64(-1))
    for bad in (3.0, np.float64(3), "3"):
        with pytest.raises(TypeError, match="must be an int"):
            p.lower_bound(a, bad)
        with pytest.raises(TypeError, match="must be an int"):
            p.find_u32x16(slots, bad)


def test_strided_buffers_are_copied_not_a_bad_cast():
    # A strided buffer that is not a numpy array (a memoryview slice) raised
    # RuntimeError('std::bad_cast'); it is now copied into C order as numpy arrays are.
    raw = bytes(range(64))
    assert p.lower_bound(memoryview(raw)[::2], 10) == 5  # 0, 2, 4, 6, 8
    lut = memoryview(bytes(range(32)))[::2]  # 0, 2, 4, ..., 30
    assert list(p.remap_branches(memoryview(bytes([0x13, 0x21, 0xff]))[::1], lut)) == [0x23, 0x41, 0xef]
    assert list(p.remap_branches(memoryview(bytes([0x13, 0, 0x21]))[::2], lut)) == [0x23, 0x41]
    assert list(p.rank_table(memoryview(bytes([1, 9] * 16))[::2])) == list(range(16))
    slots = memoryview(np.arange(32, dtype=np.uint32).tobytes()).cast("I")[::2]  # 0, 2, ..., 30
    assert p.find_u32x16(slots, 6) == 3 and p.find_u32x16(slots, 7) == 16
    values = memoryview(np.arange(128, 0, -1, dtype=np.uint16).tobytes()).cast("H")[::2]
    assert p.find_min_index(values) == 63


def test_quick_and_general_argument_paths_agree():
    # A contiguous array of the exact dtype takes one cast; every other argument the general
    # checks. Same answers, and still no conversion of a look-alike (bool is not uint8).
    a = np.arange(0, 64, 2, dtype=np.uint8)
    for view in (a, a[::-1][::-1].copy(), np.asfortranarray(a), memoryview(a.tobytes()), a[::1]):
        assert p.lower_bound(view, 9) == 5
    for bad in (a.astype(bool), a.reshape(4, 8), np.uint8(3), np.array(3, np.uint8), a.astype(np.int8)):
        with pytest.raises(TypeError, match="must be a 1-D numpy array of uint8"):
            p.lower_bound(bad, 9)
