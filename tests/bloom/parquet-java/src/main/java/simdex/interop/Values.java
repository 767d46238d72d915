package simdex.interop;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.HexFormat;
import java.util.UUID;
import org.apache.parquet.example.data.simple.NanoTime;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.DateLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.DecimalLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.IntLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimestampLogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.UUIDLogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType;

/**
 * A value's text -> what parquet-java stores for the column, by its logical type, with Java's
 * own libraries (java.time, BigDecimal, UUID) as a JVM writer such as Spark converts them:
 * decimals as the unscaled integer (BigInteger.toByteArray's minimal two's complement for BINARY,
 * sign-extended to the width for FIXED_LEN_BYTE_ARRAY), dates as epoch days, timestamps and
 * times as ticks of the column's unit (UTC when the text has no offset), unsigned integers by
 * their bits, INT96 as parquet-java's NanoTime. Raw bytes come as hex (kind X).
 */
final class Values {
  private Values() {}

  static Object typed(PrimitiveType t, String kind, String text) {
    LogicalTypeAnnotation lt = t.getLogicalTypeAnnotation();
    if (kind.equals("X")) return Binary.fromConstantByteArray(HexFormat.of().parseHex(text));
    return switch (t.getPrimitiveTypeName()) {
      case BOOLEAN -> Boolean.parseBoolean(text);
      case INT32 -> {
        long v = integer(lt, text, 32);
        if (v != (int) v && !(lt instanceof IntLogicalTypeAnnotation)) throw new ArithmeticException(text + " overflows INT32");
        yield (int) v;
      }
      case INT64 -> integer(lt, text, 64);
      case FLOAT -> text.startsWith("bits:")
          ? Float.intBitsToFloat(Integer.parseUnsignedInt(text.substring(5), 16))
          : Float.parseFloat(text);
      case DOUBLE -> text.startsWith("bits:")
          ? Double.longBitsToDouble(Long.parseUnsignedLong(text.substring(5), 16))
          : Double.parseDouble(text);
      case BINARY -> lt instanceof DecimalLogicalTypeAnnotation d
          ? Binary.fromConstantByteArray(unscaled(d, text).toByteArray())
          : Binary.fromString(text);
      case FIXED_LEN_BYTE_ARRAY -> Binary.fromConstantByteArray(fixed(t, lt, text));
      case INT96 -> {
        Instant i = instant(text);
        long day = Math.floorDiv(i.getEpochSecond(), 86400);
        long nanos = Math.floorMod(i.getEpochSecond(), 86400) * 1_000_000_000L + i.getNano();
        yield new NanoTime((int) (day + 2440588), nanos).toBinary(); // Julian day of 1970-01-01
      }
    };
  }

  static long integer(LogicalTypeAnnotation lt, String text, int bits) {
    if (lt instanceof DecimalLogicalTypeAnnotation d) return unscaled(d, text).longValueExact();
    if (lt instanceof DateLogicalTypeAnnotation) return LocalDate.parse(text).toEpochDay();
    if (lt instanceof TimestampLogicalTypeAnnotation ts) return ticks(instant(text), ts.getUnit());
    if (lt instanceof TimeLogicalTypeAnnotation tm) {
      return exact(LocalTime.parse(text).toNanoOfDay(), nanosPer(tm.getUnit()));
    }
    if (lt instanceof IntLogicalTypeAnnotation i && !i.isSigned()) {
      long v = bits == 32 ? Integer.toUnsignedLong(Integer.parseUnsignedInt(text)) : Long.parseUnsignedLong(text);
      if (i.getBitWidth() < bits && (v < 0 || v >= 1L << i.getBitWidth())) {
        throw new ArithmeticException(text + " is outside UINT" + i.getBitWidth());
      }
      return v;
    }
    return bits == 32 ? Integer.parseInt(text) : Long.parseLong(text);
  }

  /** The unscaled integer; refuses text with more places than the scale (no rounding). */
  static BigInteger unscaled(DecimalLogicalTypeAnnotation d, String text) {
    return new BigDecimal(text).setScale(d.getScale()).unscaledValue();
  }

  static byte[] fixed(PrimitiveType t, LogicalTypeAnnotation lt, String text) {
    int width = t.getTypeLength();
    if (lt instanceof UUIDLogicalTypeAnnotation) {
      UUID u = UUID.fromString(text);
      return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array();
    }
    if (lt instanceof DecimalLogicalTypeAnnotation d) {
      byte[] minimal = unscaled(d, text).toByteArray();
      if (minimal.length > width) throw new ArithmeticException(text + " does not fit " + width + " bytes");
      byte[] out = new byte[width];
      byte sign = (byte) (minimal[0] < 0 ? -1 : 0);
      for (int i = 0; i < width - minimal.length; i++) out[i] = sign;
      System.arraycopy(minimal, 0, out, width - minimal.length, minimal.length);
      return out;
    }
    throw new IllegalArgumentException("give FIXED_LEN_BYTE_ARRAY values without a logical type as hex (X)");
  }

  /** ISO text with an offset or Z, or without one (then read as UTC). */
  static Instant instant(String text) {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
    }
  }

  static long nanosPer(TimeUnit unit) {
    return switch (unit) {
      case MILLIS -> 1_000_000L;
      case MICROS -> 1_000L;
      case NANOS -> 1L;
    };
  }

  static long ticks(Instant i, TimeUnit unit) {
    long per = nanosPer(unit);
    return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L / per), exact(i.getNano(), per));
  }

  static long exact(long nanos, long per) {
    if (nanos % per != 0) throw new ArithmeticException(nanos + " ns is finer than the column's unit");
    return nanos / per;
  }
}
