"""Values -> the bytes a Parquet writer hashed into a bloom filter.

A filter holds XXH64 of each value's PLAIN encoding in the column's *physical* type, so a
logical value (a Decimal, a date, a timestamp, a UUID, text typed at a shell) must first become
exactly what the writer stored: the unscaled integer of a decimal, days since the epoch, ticks
of the column's unit in UTC, the 16 bytes of a UUID. Used by simdex.bloom and the CLI.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
import re
import struct
import uuid as _uuid
from typing import NamedTuple

import numpy as np

from ._simdex import bloom as _native

NULL_MESSAGE = ("None: nulls are never in a bloom filter (Parquet writers leave them out), so a "
                "filter cannot answer for them; use the column chunk's null_count")


class Logical(NamedTuple):
    kind: str = ""          # "", STRING, DECIMAL, DATE, TIME, TIMESTAMP, INT, UUID, FLOAT16, ...
    precision: int = 0
    scale: int = 0
    unit: str = ""          # MILLIS, MICROS, NANOS
    utc: bool = False
    bits: int = 0
    signed: bool = True


_LOGICAL_RE = re.compile(r"^([A-Z0-9]+)(?:\((.*)\))?$")


def parse_logical(text) -> Logical:
    """The footer's compact logical-type text ("DECIMAL(9,2)", "TIMESTAMP(MICROS,UTC)", ...)."""
    if not text:
        return Logical()
    if isinstance(text, Logical):
        return text
    m = _LOGICAL_RE.match(str(text).strip().upper())
    if not m:
        raise ValueError(f"unknown logical type {text!r}")
    kind, args = m.group(1), [a.strip() for a in (m.group(2) or "").split(",") if a.strip()]
    try:
        if kind == "DECIMAL":
            return Logical(kind, precision=int(args[0]), scale=int(args[1]) if len(args) > 1 else 0)
        if kind in ("TIME", "TIMESTAMP"):
            unit = args[0] if args else "MICROS"
            if unit not in ("MILLIS", "MICROS", "NANOS"):
                raise ValueError(unit)
            return Logical(kind, unit=unit, utc=(args[1] == "UTC") if len(args) > 1 else False)
        if kind == "INT":
            return Logical(kind, bits=int(args[0]), signed=(args[1] != "UNSIGNED") if len(args) > 1 else True)
    except (IndexError, ValueError):
        raise ValueError(f"malformed logical type {text!r}") from None
    return Logical(kind)


_TICKS = {"MILLIS": 10**3, "MICROS": 10**6, "NANOS": 10**9}
_NP_UNIT = {"MILLIS": "ms", "MICROS": "us", "NANOS": "ns"}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_JULIAN_EPOCH_DAY = 2440588  # Julian day number of 1970-01-01 (INT96 timestamps)


class _Ns(NamedTuple):
    """A timestamp as whole nanoseconds since the epoch (Python datetimes stop at microseconds)."""
    ns: int


def usable_filter(chunk) -> bool:
    """Whether a column chunk (a footer's chunk dict) has a filter that may answer "absent".
    Never on a BOOLEAN column: parquet-java writes a filter there but puts no value in it (its
    writer hashes no booleans, and its reader never asks such a filter), so those filters say
    "absent" for values that are there; the chunk's statistics tell true from false anyway."""
    return chunk["bloom_filter_offset"] >= 0 and chunk["physical_type"] != "BOOLEAN"


def refuse_ambiguous(path, footer, columns) -> None:
    """ValueError when a dotted column path asked for names more than one leaf of the file (a
    top-level name with a dot, "a.b", beside a struct "a" with a field "b"): values typed by one
    leaf's type and probed against the other's filters answered "absent" for rows that are there."""
    import collections

    counts = collections.Counter(c["path"] for c in footer["columns"])
    for col in columns:
        n = counts[col]
        if n > 1:
            raise ValueError(f"{path}: column path {col!r} names {n} columns (a name with a dot in it and "
                             "a nested field spell the same path); it cannot be told which one is meant")


# ---- text (the CLI) ------------------------------------------------------------------------------

_TS_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
                    r"\s*(Z|[+-]\d{2}:?\d{2})?$", re.IGNORECASE)
_TIME_RE = re.compile(r"^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$")


def _frac_ns(frac):
    return int((frac or "").ljust(9, "0")) if frac else 0


def _parse_timestamp_text(text, lt: Logical):
    m = _TS_RE.match(text.strip())
    if not m:
        raise ValueError("expected an ISO timestamp such as 2024-01-31T12:00:00.123456[+01:00]")
    date = _dt.date.fromisoformat(m.group(1))
    secs = int(m.group(2) or 0) * 3600 + int(m.group(3) or 0) * 60 + int(m.group(4) or 0)
    ns = ((date - _EPOCH.date()).days * 86400 + secs) * 10**9 + _frac_ns(m.group(5))
    zone = m.group(6)
    if zone:
        if lt.kind == "TIMESTAMP" and not lt.utc:
            raise ValueError("the column holds local (not UTC-adjusted) timestamps: give the "
                             "wall-clock value without a zone")
        if zone.upper() != "Z":
            sign = -1 if zone[0] == "-" else 1
            hh, mm = int(zone[1:3]), int(zone[-2:])
            ns -= sign * (hh * 3600 + mm * 60) * 10**9
    return _Ns(ns)


def parse_text(text: str, physical: str, logical="", type_length=None, hex: bool = False):
    """A command-line value for a column: parsed by its logical type, else by its physical type.
    Raw bytes only with hex=True (never text that happens to have the right length)."""
    t, lt = physical.upper(), parse_logical(logical)
    try:
        if hex:
            if t not in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY", "INT96"):
                raise ValueError(f"--hex applies to byte columns, not {t}")
            return bytes.fromhex(text)
        if lt.kind == "DECIMAL":
            return _decimal.Decimal(text.strip())
        if lt.kind == "DATE":
            s = text.strip()
            return int(s) if re.fullmatch(r"[+-]?\d+", s) else _dt.date.fromisoformat(s)
        if lt.kind == "TIMESTAMP" or t == "INT96":
            s = text.strip()
            return int(s) if re.fullmatch(r"[+-]?\d+", s) else _parse_timestamp_text(s, lt)
        if lt.kind == "TIME":
            s = text.strip()
            if re.fullmatch(r"[+-]?\d+", s):
                return int(s)
            m = _TIME_RE.match(s)
            if not m:
                raise ValueError("expected a time such as 12:34:56.789")
            secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)
            return _Ns(secs * 10**9 + _frac_ns(m.group(4)))
        if lt.kind == "UUID":
            return _uuid.UUID(text.strip())
        if lt.kind == "FLOAT16":
            return float(text)
        if t in ("INT32", "INT64"):
            return int(text.strip().replace("_", ""), 0)
        if t in ("FLOAT", "DOUBLE"):
            return float(text)
        if t == "BOOLEAN":
            low = text.strip().lower()
            if low in ("true", "1", "t", "yes"):
                return True
            if low in ("false", "0", "f", "no"):
                return False
            raise ValueError("not a boolean")
        if t == "BYTE_ARRAY":
            return text.encode("utf-8", "surrogateescape")
        raise ValueError(f"a {t} column{' (' + logical + ')' if logical else ''} without a logical "
                         "type the CLI can parse: give the value's bytes with --hex")
    except (ValueError, ArithmeticError) as e:
        what = f"{t} ({logical})" if logical else t
        raise ValueError(f"value {text!r} is not a valid {what}: {e}") from None


# ---- Python values -------------------------------------------------------------------------------

def _int_range(t: str, lt: Logical):
    """[lo, hi) of the integers a column takes. Without a logical type both signed and unsigned
    readings are taken: they name distinct bit patterns except where they overlap exactly."""
    width = 32 if t == "INT32" else 64
    if lt.kind == "INT" and lt.bits:
        return (0, 1 << lt.bits) if not lt.signed else (-(1 << (lt.bits - 1)), 1 << (lt.bits - 1))
    return -(1 << (width - 1)), 1 << width


def _unscaled(v, lt: Logical) -> int:
    if isinstance(v, (float, np.floating)):
        v = _decimal.Decimal(repr(float(v)))  # numpy 2's repr is "np.float64(1.5)"
    elif isinstance(v, (int, np.integer)):
        v = _decimal.Decimal(int(v))
    elif isinstance(v, str):
        v = _decimal.Decimal(v)
    if not isinstance(v, _decimal.Decimal):
        raise ValueError(f"expected a Decimal for DECIMAL({lt.precision},{lt.scale}), got {type(v).__name__}")
    if not v.is_finite():
        raise ValueError(f"{v} is not a finite decimal")
    # In integers: Decimal arithmetic rounds to the context's precision (28 digits by default),
    # which would hash a 38-digit DECIMAL as a different number and answer "absent".
    sign, digits, exp = v.as_tuple()
    coeff = int("".join(map(str, digits))) if digits else 0
    e, ndigits = exp + lt.scale, len(str(coeff))  # the unscaled integer has ndigits + e digits
    if coeff and (e > 4096 or (lt.precision and ndigits + e > lt.precision)):  # before 10**e is built
        raise ValueError(f"{v} does not fit DECIMAL({lt.precision},{lt.scale})")
    if coeff and e < 0 and (-e > ndigits or coeff % 10**-e):
        raise ValueError(f"{v} has more than {lt.scale} decimal places (DECIMAL({lt.precision},{lt.scale}))")
    u = 0 if not coeff else coeff * 10**e if e >= 0 else coeff // 10**-e  # 0E-999999999 builds nothing
    u = -u if sign else u
    return u


def _ticks(v, lt: Logical, unit: str) -> int:
    """A timestamp-like value as ticks of `unit` since the epoch (UTC for UTC columns)."""
    per = _TICKS[unit]
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        v = _dt.datetime(v.year, v.month, v.day)  # a date is its midnight, as pyarrow casts it
    if isinstance(v, _Ns):
        ns = v.ns
    elif isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            if lt.kind == "TIMESTAMP" and not lt.utc:
                raise ValueError("an aware datetime for a column of local (not UTC-adjusted) "
                                 "timestamps: give a naive wall-clock datetime")
            d = v - _EPOCH_UTC
        else:
            d = v - _EPOCH
        ns = (d.days * 86400 + d.seconds) * 10**9 + d.microseconds * 1000
    elif isinstance(v, np.datetime64):
        ns = _datetime64_ns(v)
    elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)  # already in the column's unit
    else:
        raise ValueError(f"expected a datetime for {lt.kind or 'a timestamp'}, got {type(v).__name__}")
    if ns % (10**9 // per):
        if isinstance(v, _Ns):  # parsed text: shown as a datetime and its nanoseconds
            v = f"{_EPOCH + _dt.timedelta(microseconds=ns // 1000)} (+{ns % 1000} ns)"
        raise ValueError(f"{v} is finer than the column's unit ({unit})")
    return ns // (10**9 // per)


# Attoseconds per tick of each numpy datetime64 unit (calendar units go through days).
_AS_PER = {"W": 7 * 86400 * 10**18, "D": 86400 * 10**18, "h": 3600 * 10**18, "m": 60 * 10**18,
           "s": 10**18, "ms": 10**15, "us": 10**12, "ns": 10**9, "ps": 10**6, "fs": 10**3, "as": 1}


def _datetime64_ns(v) -> int:
    """Nanoseconds since the epoch of a datetime64 scalar, in Python ints (a cast to
    datetime64[ns] overflows before 1677 and after 2262)."""
    if np.isnat(v):
        raise ValueError(NULL_MESSAGE)
    unit, count = np.datetime_data(v.dtype)
    if unit in ("Y", "M", "generic"):
        v, (unit, count) = v.astype("datetime64[D]"), ("D", 1)
    total = int(v.astype(np.int64)) * count * _AS_PER[unit]
    if total % 10**9:
        raise ValueError(f"{v} is finer than a nanosecond")
    return total // 10**9


def _time_ticks(v, lt: Logical) -> int:
    per = _TICKS[lt.unit]
    if isinstance(v, _Ns):
        ns = v.ns
    elif isinstance(v, _dt.time):
        ns = ((v.hour * 60 + v.minute) * 60 + v.second) * 10**9 + v.microsecond * 1000
    elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    else:
        raise ValueError(f"expected a datetime.time for TIME, got {type(v).__name__}")
    if ns % (10**9 // per):
        raise ValueError(f"{v} is finer than the column's unit ({lt.unit})")
    return ns // (10**9 // per)


def _to_int(v, t: str, lt: Logical) -> int:
    if lt.kind == "DECIMAL":
        return _unscaled(v, lt)
    if lt.kind == "DATE" or (isinstance(v, _dt.date) and not isinstance(v, _dt.datetime)
                             and lt.kind != "TIMESTAMP" and t != "INT96"):
        if isinstance(v, _dt.datetime):
            raise ValueError("expected a datetime.date for DATE, got a datetime")
        if isinstance(v, _dt.date):
            return (v - _EPOCH.date()).days
        if isinstance(v, np.datetime64):
            return int(v.astype("datetime64[D]").astype(np.int64))
    if lt.kind == "TIMESTAMP" or isinstance(v, (_dt.datetime, _Ns, np.datetime64)):
        return _ticks(v, lt, lt.unit or "MICROS")
    if lt.kind == "TIME" or isinstance(v, _dt.time):
        return _time_ticks(v, lt if lt.unit else lt._replace(unit="MICROS"))
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, _decimal.Decimal) and v.is_finite() and v == v.to_integral_value():
        if v and v.adjusted() > 80:  # far past any integer column; int() of 1E+999999999 would not end
            raise ValueError(f"{v} is out of range for {t}")
        return int(v)
    if isinstance(v, (_dt.timedelta, np.timedelta64)):
        raise ValueError("a duration: Parquet stores it as an INT64 count of the unit the writer "
                         "chose (pyarrow keeps that unit in the file's Arrow schema), so give the count")
    raise ValueError(f"expected an integer for {t}{' (' + lt.kind + ')' if lt.kind else ''}, got {type(v).__name__}")


def _twos_complement(u: int, width) -> bytes:
    """Big-endian two's complement: `width` bytes, or the fewest that hold u (BYTE_ARRAY)."""
    if width is None:
        width = max(1, (u.bit_length() + 8) // 8) if u >= 0 else max(1, ((~u).bit_length() + 8) // 8)
    try:
        return u.to_bytes(width, "big", signed=True)
    except OverflowError:
        raise ValueError(f"unscaled value {u} does not fit {width} bytes") from None


def _to_bytes(v, t: str, lt: Logical, width):
    if lt.kind == "DECIMAL" and not isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
        return _twos_complement(_unscaled(v, lt), width if t == "FIXED_LEN_BYTE_ARRAY" else None)
    if t == "INT96" and not isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
        ns = _ticks(v, Logical("TIMESTAMP", unit="NANOS", utc=True), "NANOS")
        days, nanos = divmod(ns, 86400 * 10**9)
        return nanos.to_bytes(8, "little") + (days + _JULIAN_EPOCH_DAY).to_bytes(4, "little")
    if isinstance(v, _uuid.UUID):
        return v.bytes
    if lt.kind == "UUID" and isinstance(v, str):
        return _uuid.UUID(v).bytes
    if lt.kind == "FLOAT16" and isinstance(v, (float, int, np.floating)):
        return struct.pack("<e", float(v))
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
        return bytes(v)
    raise ValueError(f"expected bytes for {t}{' (' + lt.kind + ')' if lt.kind else ''}, got {type(v).__name__}")


def _from_pyarrow(values, t: str, lt: Logical):
    """pyarrow Scalars / Arrays / ChunkedArrays -> numpy arrays or Python lists, exactly."""
    import pyarrow as pa

    if isinstance(values, pa.Scalar):
        if not values.is_valid:
            raise ValueError(NULL_MESSAGE)
        values = pa.array([values.as_py()], values.type) if not pa.types.is_timestamp(values.type) \
            else pa.array([values.value], pa.int64()).cast(values.type)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        raise ValueError(NULL_MESSAGE)
    typ = values.type
    if pa.types.is_date(typ) and (lt.kind == "TIMESTAMP" or t == "INT96"):
        values = values.cast(pa.timestamp("s"))  # a date is its midnight, as pyarrow casts it
        typ = values.type
    if pa.types.is_timestamp(typ):
        unit = lt.unit if lt.kind == "TIMESTAMP" else ("NANOS" if t == "INT96" else {"s": "MILLIS", "ms": "MILLIS", "us": "MICROS", "ns": "NANOS"}[typ.unit])
        target = pa.timestamp(_NP_UNIT[unit], typ.tz)
        vals = values.cast(target, safe=True).cast(pa.int64()).to_numpy()
        if t == "INT96":
            return [_Ns(int(x)) for x in vals]
        return vals
    if pa.types.is_date(typ):
        return values.cast(pa.date32()).cast(pa.int32()).to_numpy()
    if pa.types.is_time(typ):
        unit = lt.unit or "MICROS"
        # time32/time64 -> the column's unit by way of nanoseconds.
        ns = values.cast(pa.time64("ns")).cast(pa.int64()).to_numpy()
        return [_Ns(int(x)) for x in ns] if unit else ns
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ):
        return values.to_numpy(zero_copy_only=False)
    return values.to_pylist()


def arrow_ready(values, arrow_type):
    """The values as something pyarrow builds an array of arrow_type from: the CLI's parsed
    times (_Ns) as a pyarrow array of their nanoseconds, dates as their midnight and coarse
    datetime64s in seconds for timestamp types; anything else unchanged."""
    if isinstance(values, np.ndarray) or not values:
        return values
    import pyarrow as pa

    if isinstance(values[0], np.datetime64) and all(isinstance(v, np.datetime64) and v.dtype == values[0].dtype
                                                    for v in values):
        # A datetime64 array (Values keeps its elements): pyarrow builds dates and timestamps
        # from the array, not from the scalars; coarse units go through seconds.
        arr = np.array(values)
        if np.datetime_data(arr.dtype)[0] not in ("D", "s", "ms", "us", "ns"):
            arr = arr.astype("datetime64[s]")
        got = pa.array(arr)
        return got.cast(pa.timestamp("s")) if pa.types.is_date(got.type) and pa.types.is_timestamp(arrow_type) \
            else got
    if pa.types.is_fixed_size_binary(arrow_type) and any(isinstance(v, _uuid.UUID) for v in values):
        return [v.bytes if isinstance(v, _uuid.UUID) else v for v in values]
    if any(isinstance(v, _Ns) for v in values):
        ns = pa.array([v.ns if isinstance(v, _Ns) else v for v in values], pa.int64())
        if pa.types.is_time(arrow_type):
            return ns.cast(pa.time64("ns"))
        if pa.types.is_timestamp(arrow_type):
            return ns.cast(pa.timestamp("ns", arrow_type.tz))
        return values
    if not pa.types.is_timestamp(arrow_type):
        return values
    out = []
    for v in values:
        if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
            v = _dt.datetime(v.year, v.month, v.day)
        elif isinstance(v, np.datetime64) and np.datetime_data(v.dtype)[0] in ("Y", "M", "W", "D", "h", "m"):
            v = v.astype("datetime64[us]").astype(object)  # a datetime; pyarrow checks the range
        out.append(v)
    return out


def is_pyarrow(values) -> bool:
    return type(values).__module__.startswith("pyarrow")


def is_pyarrow_scalar(values) -> bool:
    if not is_pyarrow(values):
        return False
    import pyarrow as pa
    return isinstance(values, pa.Scalar)


def is_scalar(values) -> bool:
    if isinstance(values, np.ndarray):
        return values.ndim == 0
    if is_pyarrow(values):
        return is_pyarrow_scalar(values)
    return values is None or isinstance(values, (int, float, str, bytes, bytearray, memoryview, bool, np.generic,
                                                 _dt.date, _dt.time, _dt.timedelta, _decimal.Decimal, _uuid.UUID, _Ns))


_NUMPY_KIND = {np.dtype(np.int32): "INT32", np.dtype(np.int64): "INT64",
               np.dtype(np.uint32): "INT32", np.dtype(np.uint64): "INT64",
               np.dtype(np.int8): "INT32", np.dtype(np.int16): "INT32",
               np.dtype(np.uint8): "INT32", np.dtype(np.uint16): "INT32",
               np.dtype(np.float32): "FLOAT", np.dtype(np.float64): "DOUBLE",
               np.dtype(np.bool_): "BOOLEAN"}


def infer_type(values) -> str:
    if isinstance(values, np.ndarray):
        if values.dtype in _NUMPY_KIND:
            return _NUMPY_KIND[values.dtype]
        if values.dtype.kind in "SUO":
            return "BYTE_ARRAY"
        if values.dtype.kind == "M":
            return "INT32" if values.dtype == np.dtype("datetime64[D]") else "INT64"
        raise ValueError(f"cannot infer a Parquet type for dtype {values.dtype}; pass physical_type=")
    if not len(values):
        return "INT64"
    first = values[0]
    if first is None:
        raise ValueError(NULL_MESSAGE)
    if isinstance(first, np.generic) and first.dtype in _NUMPY_KIND:
        return _NUMPY_KIND[first.dtype]  # as a lone numpy scalar, and as the array they came from
    if isinstance(first, np.datetime64):
        return "INT32" if first.dtype == np.dtype("datetime64[D]") else "INT64"
    if isinstance(first, (bool, np.bool_)):
        return "BOOLEAN"
    if isinstance(first, (int, np.integer, _decimal.Decimal)):
        return "INT64"
    if isinstance(first, (float, np.floating)):
        return "DOUBLE"
    if isinstance(first, (_dt.datetime, _dt.time, np.datetime64)):
        return "INT64"
    if isinstance(first, _dt.date):
        return "INT32"
    if isinstance(first, _uuid.UUID):
        return "FIXED_LEN_BYTE_ARRAY"
    if isinstance(first, (str, bytes, bytearray, memoryview)):
        return "BYTE_ARRAY"
    raise ValueError(f"cannot infer a Parquet type for {type(first).__name__}; pass physical_type=")


# The values each integer dtype can hold: where that fits the column, no pass over the array
# (two reductions that were most of the cost of a short list) is needed to check its range.
_DTYPE_RANGE = {np.dtype(d): (int(np.iinfo(d).min), int(np.iinfo(d).max))
                for d in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}
_DTYPE_RANGE[np.dtype(np.bool_)] = (0, 1)
_INT32_MAX, _INT64_MAX = (1 << 31) - 1, (1 << 63) - 1


def _numpy_ints(arr: np.ndarray, t: str, lt: Logical) -> np.ndarray:
    """A numpy array -> the column's physical integers (as int32/int64 bit patterns)."""
    dtype = np.int32 if t == "INT32" else np.int64
    if arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise ValueError(NULL_MESSAGE)
        if lt.kind == "DATE" or (not lt.kind and t == "INT32"):
            return np.ascontiguousarray(arr.astype("datetime64[D]").astype(np.int64).astype(dtype))
        unit = lt.unit if lt.kind in ("TIMESTAMP",) else None
        if unit:
            conv = arr.astype(f"datetime64[{_NP_UNIT[unit]}]")
            if (conv.astype(arr.dtype) != arr).any():
                raise ValueError(f"datetime64 values finer than the column's unit ({unit})")
            arr = conv
        return np.ascontiguousarray(arr.view(np.int64).astype(dtype))
    if arr.dtype.kind not in "iub":
        raise ValueError(f"expected integers for {t}, got {arr.dtype}")
    lo, hi = _int_range(t, lt)
    mn, mx = _DTYPE_RANGE.get(arr.dtype, (lo - 1, hi))
    if arr.size and not lo <= mn <= mx < hi:  # the dtype alone does not keep the values in range
        mn, mx = int(arr.min()), int(arr.max())
        if mn < lo or mx >= hi:
            bad = mn if mn < lo else mx
            raise ValueError(f"value {bad} out of range for {t}{' ' + _lt_text(lt) if lt.kind else ''} [{lo}, {hi - 1}]")
    if arr.dtype.kind == "u" or (arr.size and mx > (_INT32_MAX if t == "INT32" else _INT64_MAX)):
        # Unsigned values are stored as the same bits in the signed physical type.
        u = np.uint32 if t == "INT32" else np.uint64
        return np.ascontiguousarray(arr.astype(u).view(dtype))
    return np.ascontiguousarray(arr.astype(dtype))


def _lt_text(lt: Logical) -> str:
    if lt.kind == "INT":
        return f"INT({lt.bits},{'SIGNED' if lt.signed else 'UNSIGNED'})"
    return lt.kind


class Physical(NamedTuple):
    """Values in a column's physical form: int32/int64 arrays (INT32/INT64, the stored bit
    patterns), float32/float64 arrays, a bool array (BOOLEAN), a list of bytes (BYTE_ARRAY) or a
    2-D uint8 array, one row per value (FIXED_LEN_BYTE_ARRAY, INT96)."""
    type: str
    data: object
    # Bool mask of the values a filter cannot rule out, or None: NaN of FLOAT, DOUBLE and
    # FLOAT16 columns (many bit patterns, and writers differ on hashing them). Callers answer
    # "maybe" there.
    nan: object = None
    # Bool mask of the zeros of those columns, or None. -0.0 equals 0.0 to every reader but the
    # two hash apart, and a writer hashed only the one it stored: a zero may be present where the
    # filter holds either sign's hash (zero_twins gives the other one's).
    zero: object = None


def _all_of(values, kind) -> bool:
    """Every value is exactly of type kind (not a subclass: bool is not int here)."""
    return not isinstance(values, np.ndarray) and set(map(type, values)) == {kind}


def physical_values(values, physical_type: str, logical="", type_length=None) -> Physical:
    """Values as the column stores them (see Physical); ValueError for nulls, values of the
    wrong kind or out of the column's range."""
    t, lt = physical_type, parse_logical(logical)
    if values is None:
        raise ValueError(NULL_MESSAGE)
    if is_pyarrow(values):
        values = _from_pyarrow(values, t, lt)
    if isinstance(values, (list, tuple)) and values and isinstance(values[0], np.generic):
        kind = values[0].dtype
        if kind.kind in "iufbM" and all(isinstance(v, np.generic) and v.dtype == kind for v in values):
            values = np.array(values, dtype=kind)  # list(array): hashed as the array it came from
    if isinstance(values, np.ndarray) and values.ndim == 0:
        values = values.reshape(1)
    if (isinstance(values, np.ndarray) and values.ndim != 1
            and not (values.ndim == 2 and t in ("FIXED_LEN_BYTE_ARRAY", "INT96"))):
        raise ValueError(f"expected a 1-D array of values, got shape {values.shape}")
    n = len(values)
    if t in ("INT32", "INT64"):
        if n == 0:
            return Physical(t, np.zeros(0, np.int32 if t == "INT32" else np.int64))
        if isinstance(values, np.ndarray) and values.dtype.kind in "iubM" and lt.kind != "DECIMAL":
            return Physical(t, _numpy_ints(values, t, lt))
        if lt.kind in ("", "INT") and _all_of(values, int):
            # Plain ints (bools are not): numpy converts them in C; values past int64 take
            # the loop below, which reads them as unsigned bit patterns.
            try:
                return Physical(t, _numpy_ints(np.array(values, dtype=np.int64), t, lt))
            except OverflowError:
                pass
        ints = []
        for v in values:
            if v is None:
                raise ValueError(NULL_MESSAGE)
            ints.append(_to_int(v, t, lt))
        lo, hi = _int_range(t, lt) if lt.kind not in ("DECIMAL", "DATE", "TIMESTAMP", "TIME") else \
            ((-(1 << 31), 1 << 31) if t == "INT32" else (-(1 << 63), 1 << 63))
        for x in ints:
            if not lo <= x < hi:
                raise ValueError(f"value {x} out of range for {t}{' ' + _lt_text(lt) if lt.kind else ''} [{lo}, {hi - 1}]")
        mask = (1 << (32 if t == "INT32" else 64)) - 1
        u = np.array([x & mask for x in ints], dtype=np.uint32 if t == "INT32" else np.uint64)
        return Physical(t, u.view(np.int32 if t == "INT32" else np.int64))
    if t in ("FLOAT", "DOUBLE"):
        if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
            arr = values
        else:
            if any(v is None for v in values):
                raise ValueError(NULL_MESSAGE)
            if any(not isinstance(v, (int, float, np.integer, np.floating, _decimal.Decimal)) or isinstance(v, bool) for v in values):
                bad = next(v for v in values if not isinstance(v, (int, float, np.integer, np.floating, _decimal.Decimal)) or isinstance(v, bool))
                raise ValueError(f"expected a number for {t}, got {type(bad).__name__}")
            arr = np.array([float(v) for v in values], dtype=np.float64)
        arr = np.ascontiguousarray(arr, dtype=np.float32 if t == "FLOAT" else np.float64)
        return Physical(t, arr, _mask(np.isnan(arr)), _mask(arr == 0))
    if t == "BOOLEAN":
        out = []
        for v in values:
            if v is None:
                raise ValueError(NULL_MESSAGE)
            out.append(bool(v))
        return Physical(t, np.array(out, dtype=bool))
    if t == "BYTE_ARRAY":
        if lt.kind not in ("DECIMAL", "UUID", "FLOAT16"):
            if _all_of(values, str):
                return Physical(t, [v.encode("utf-8") for v in values])
            if _all_of(values, bytes):
                return Physical(t, list(values))
        rows = []
        for v in values:
            if v is None:
                raise ValueError(NULL_MESSAGE)
            rows.append(_to_bytes(v, t, lt, None))
        return Physical(t, rows)
    if t not in ("FIXED_LEN_BYTE_ARRAY", "INT96"):
        raise ValueError(f"unknown physical type {t!r}")
    width = 12 if t == "INT96" else (type_length or (16 if lt.kind == "UUID" else 2 if lt.kind == "FLOAT16" else None))
    if isinstance(values, np.ndarray) and values.ndim == 2:
        arr = np.ascontiguousarray(values, dtype=np.uint8)
        if width is not None and arr.shape[1] != width:
            raise ValueError(f"{t} values must be {width} bytes long, got rows of {arr.shape[1]}")
        return _with_float16_mask(Physical(t, arr), lt)
    rows = []
    for v in values:
        if v is None:
            raise ValueError(NULL_MESSAGE)
        rows.append(_to_bytes(v, t, lt, width))
    if width is None:
        width = len(rows[0]) if rows else 1
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"{t}({width}) value {i} is {len(r)} bytes long, expected {width}")
    if width == 0:
        raise ValueError(f"{t} of width 0")
    return _with_float16_mask(Physical(t, np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), width)), lt)


def _mask(m: np.ndarray):
    return m if m.any() else None


def _with_float16_mask(p: Physical, lt) -> Physical:
    """A FLOAT16 column's values with the NaN and zero masks DOUBLE values get."""
    if lt.kind != "FLOAT16" or p.data.ndim != 2 or p.data.shape[1] != 2:
        return p
    bits = p.data[:, 0].astype(np.uint16) | (p.data[:, 1].astype(np.uint16) << 8)
    nan = ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
    return p._replace(nan=_mask(nan), zero=_mask((bits & 0x7FFF) == 0))


def zero_twins(p: Physical):
    """(indices of p's zeros, XXH64 of each zero with the other sign), or None without zeros.
    A zero may be present wherever a filter holds either of its two hashes."""
    if p.zero is None:
        return None
    idx = np.flatnonzero(p.zero)
    if p.type in ("FLOAT", "DOUBLE"):
        flipped = np.negative(p.data[idx])
    else:  # FLOAT16: two little-endian bytes, the sign the top bit of the second
        flipped = p.data[idx].copy()
        flipped[:, 1] ^= 0x80
    return idx, hash_physical(Physical(p.type, flipped))


def hash_physical(p: Physical) -> np.ndarray:
    """XXH64 of each physical value's PLAIN bytes."""
    if p.type == "INT32":
        return _native.hash_int32(p.data)
    if p.type == "INT64":
        return _native.hash_int64(p.data)
    if p.type == "FLOAT":
        return _native.hash_float(p.data)
    if p.type == "DOUBLE":
        return _native.hash_double(p.data)
    if p.type == "BOOLEAN":
        return np.array([_native.hash_bool(bool(v)) for v in p.data], dtype=np.uint64)
    if p.type == "BYTE_ARRAY":
        return _native.hash_bytes_list(p.data)
    if len(p.data) == 0:
        return np.zeros(0, np.uint64)
    return _native.hash_fixed(p.data)


# One value of the commonest kinds, encoded without numpy: a loop over rows checking one value at
# a time spent ~95% of each call building 1-element arrays. The types the general path reads
# alike, by the column's (physical, logical) type; exact types only (bool, numpy scalars and
# subclasses take the general path, as does anything it may refuse).
_PLAIN_KINDS = {(None, None): (int, float, str, bytes), ("INT64", None): (int,),
                ("DOUBLE", None): (float,), ("BYTE_ARRAY", None): (str, bytes),
                ("BYTE_ARRAY", "STRING"): (str, bytes)}
_INT64_MASK = (1 << 64) - 1
_pack_double = struct.Struct("<d").pack


def plain_bytes(value, physical_type, logical_type):
    """The PLAIN bytes the general path would hash for one value, when that is quick to tell,
    else None (also for a value it refuses: it raises its own error)."""
    try:
        kinds = _PLAIN_KINDS.get((physical_type, logical_type), ())
    except TypeError:  # an unhashable type argument: the general path says what is wrong
        return None
    kind = type(value)
    if kind not in kinds:
        return None
    if kind is int:
        return (value & _INT64_MASK).to_bytes(8, "little") if -(1 << 63) <= value < 1 << 64 else None
    if kind is float:  # NaN and zeros need the general path's masks (Physical.nan, .zero)
        return _pack_double(value) if value == value and value else None
    if kind is str:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: refused by the general path
            return None
    return value


class Hashed(NamedTuple):
    """Values' hashes, with what a filter's answer for them must allow for (Physical.nan and
    Physical.zero)."""
    hashes: np.ndarray
    nan: object = None       # bool mask: always "maybe"
    zero_idx: object = None  # where the zeros are, and
    twins: object = None     # each one's hash with the other sign

    def answer(self, probe):
        """probe(hashes) -> a bool array whose last axis follows the hashes, for these values:
        a zero "maybe" where either sign's hash is, NaN always."""
        out = probe(self.hashes)
        if self.twins is not None:
            out[..., self.zero_idx] |= probe(self.twins)
        if self.nan is not None:
            out[..., self.nan] = True
        return out


def hash_values(values, physical_type: str, logical="", type_length=None) -> Hashed:
    """The values' hashes (``[0]``), and what answering for them needs (Hashed.answer)."""
    p = physical_values(values, physical_type, logical, type_length)
    zero_idx, twins = zero_twins(p) or (None, None)
    return Hashed(hash_physical(p), p.nan, zero_idx, twins)


def is_nan_text(value) -> bool:
    return isinstance(value, float) and math.isnan(value)
