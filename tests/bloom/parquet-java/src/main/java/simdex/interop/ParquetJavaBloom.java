package simdex.interop;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.values.bloomfilter.BloomFilter;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.compat.RowGroupFilter;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * parquet-java's side of simdex's bloom filter interop tests. Three subcommands, all on plain
 * text so the Python test knows exactly what went in and what came out:
 *
 * <pre>
 *   write OUT.parquet SPEC   write a file with parquet-java's writer and bloom filters
 *   probe FILE PROBES        every chunk's filter location, and parquet-java's answers for values
 *   scan FILE                read every row back and check each value against its chunk's filter
 * </pre>
 *
 * SPEC and PROBES are UTF-8 lines of tab-separated fields; see {@link Spec}. Values are text that
 * {@link Values} turns into what parquet-java stores (its own conversions, as Spark would make
 * them), so the test does not hand both sides the same precomputed bytes.
 */
public final class ParquetJavaBloom {
  private ParquetJavaBloom() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("write")) {
      write(Path.of(args[1]), Spec.read(Path.of(args[2])));
    } else if (args.length == 3 && args[0].equals("probe")) {
      probe(Path.of(args[1]), Spec.read(Path.of(args[2])));
    } else if (args.length == 2 && args[0].equals("scan")) {
      scan(Path.of(args[1]));
    } else {
      System.err.println("usage: write OUT.parquet SPEC | probe FILE PROBES | scan FILE");
      System.exit(2);
    }
  }

  /**
   * The input files. Directives, one a line:
   *
   * <pre>
   *   schema TAB message m { optional int32 a (DATE); ... }   (write)
   *   rows_per_group TAB N         row groups of exactly N rows (write)
   *   writer_version TAB v1|v2     data page version and encodings (write)
   *   dictionary TAB on|off        (write)
   *   dictionary_page_size TAB N   a dictionary past N bytes falls back to plain/delta (write)
   *   codec TAB UNCOMPRESSED|SNAPPY|GZIP|ZSTD   (write)
   *   adaptive TAB on              adaptive filters for columns without an ndv (write)
   *   max_bloom_bytes TAB N        (write)
   *   bloom TAB COLUMN TAB ndv=N|default [TAB fpp]   a filter on COLUMN (write)
   *   column TAB COLUMN            the values that follow are COLUMN's, one a line:
   *     S TAB text                 text parsed by the column's type (\\ \t \n \r escaped)
   *     X TAB hex                  raw bytes (BINARY, FIXED_LEN_BYTE_ARRAY, INT96)
   *     N                          null
   * </pre>
   */
  static final class Spec {
    String schema;
    int rowsPerGroup = 0;
    ParquetProperties.WriterVersion writerVersion = ParquetProperties.WriterVersion.PARQUET_1_0;
    boolean dictionary = true;
    int dictionaryPageSize = 0;
    boolean adaptive = false;
    int maxBloomBytes = 0;
    CompressionCodecName codec = CompressionCodecName.UNCOMPRESSED;
    final Map<String, String[]> bloom = new LinkedHashMap<>();
    final Map<String, List<String[]>> columns = new LinkedHashMap<>();

    static Spec read(Path file) throws IOException {
      Spec s = new Spec();
      List<String[]> current = null;
      int number = 0;
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        number++;
        String[] f = line.split("\t", -1);
        switch (f[0]) {
          case "schema" -> s.schema = f[1];
          case "rows_per_group" -> s.rowsPerGroup = Integer.parseInt(f[1]);
          case "writer_version" -> s.writerVersion = f[1].equals("v2")
              ? ParquetProperties.WriterVersion.PARQUET_2_0
              : ParquetProperties.WriterVersion.PARQUET_1_0;
          case "dictionary" -> s.dictionary = f[1].equals("on");
          case "dictionary_page_size" -> s.dictionaryPageSize = Integer.parseInt(f[1]);
          case "adaptive" -> s.adaptive = f[1].equals("on");
          case "max_bloom_bytes" -> s.maxBloomBytes = Integer.parseInt(f[1]);
          case "codec" -> s.codec = CompressionCodecName.valueOf(f[1]);
          case "bloom" -> s.bloom.put(f[1], f);
          case "column" -> {
            current = new ArrayList<>();
            s.columns.put(f[1], current);
          }
          case "S", "X", "N" -> {
            if (current == null) throw new IOException(file + ":" + number + ": a value before any column line");
            current.add(f[0].equals("N") ? null : new String[] {f[0], f[0].equals("S") ? unescape(f[1]) : f[1]});
          }
          case "" -> {}
          default -> throw new IOException(file + ":" + number + ": unknown directive " + f[0]);
        }
      }
      return s;
    }

    static String unescape(String text) {
      StringBuilder b = new StringBuilder(text.length());
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        if (c != '\\' || i + 1 == text.length()) {
          b.append(c);
          continue;
        }
        char e = text.charAt(++i);
        b.append(e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e);
      }
      return b.toString();
    }
  }

  // ---- write ----------------------------------------------------------------------------------

  static void write(Path out, Spec spec) throws IOException {
    MessageType schema = MessageTypeParser.parseMessageType(spec.schema);
    ExampleParquetWriter.Builder b = ExampleParquetWriter.builder(new LocalOutputFile(out))
        .withConf(new PlainParquetConfiguration()) // not Hadoop's (only the codecs make one: pom.xml)
        .withType(schema)
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withCompressionCodec(spec.codec)
        .withWriterVersion(spec.writerVersion)
        .withDictionaryEncoding(spec.dictionary)
        .withAdaptiveBloomFilterEnabled(spec.adaptive);
    if (spec.rowsPerGroup > 0) b = b.withRowGroupRowCountLimit(spec.rowsPerGroup);
    if (spec.dictionaryPageSize > 0) b = b.withDictionaryPageSize(spec.dictionaryPageSize);
    if (spec.maxBloomBytes > 0) b = b.withMaxBloomFilterBytes(spec.maxBloomBytes);
    for (String[] f : spec.bloom.values()) {
      b = b.withBloomFilterEnabled(f[1], true);
      if (f[2].startsWith("ndv=")) b = b.withBloomFilterNDV(f[1], Long.parseLong(f[2].substring(4)));
      if (f.length > 3) b = b.withBloomFilterFPP(f[1], Double.parseDouble(f[3]));
    }
    int rows = 0;
    for (List<String[]> v : spec.columns.values()) rows = Math.max(rows, v.size());
    SimpleGroupFactory groups = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = b.build()) {
      for (int r = 0; r < rows; r++) {
        Group g = groups.newGroup();
        for (Map.Entry<String, List<String[]>> c : spec.columns.entrySet()) {
          String[] v = r < c.getValue().size() ? c.getValue().get(r) : null;
          if (v == null) continue; // null (the field is optional)
          PrimitiveType t = schema.getType(c.getKey()).asPrimitiveType();
          Object x = Values.typed(t, v[0], v[1]);
          switch (t.getPrimitiveTypeName()) {
            case BOOLEAN -> g.add(c.getKey(), (Boolean) x);
            case INT32 -> g.add(c.getKey(), (Integer) x);
            case INT64 -> g.add(c.getKey(), (Long) x);
            case FLOAT -> g.add(c.getKey(), (Float) x);
            case DOUBLE -> g.add(c.getKey(), (Double) x);
            default -> g.add(c.getKey(), (Binary) x); // BINARY, FIXED_LEN_BYTE_ARRAY, INT96
          }
        }
        w.write(g);
      }
    }
  }

  // ---- probe ----------------------------------------------------------------------------------

  /**
   * Prints one line per column chunk:
   *   chunk TAB rg TAB column TAB type TAB bloom_filter_offset TAB bloom_filter_length TAB bitset bytes TAB values
   * and, for each column of PROBES, one line per row group:
   *   answer TAB rg TAB column TAB direct TAB filter2
   * where direct holds a character per probe value from the chunk's filter read by
   * ParquetFileReader.readBloomFilter (1 maybe, 0 absent, - no filter, E refused) and filter2 the same from
   * RowGroupFilter at the BLOOMFILTER level, the path Spark's row-group pruning takes
   * (1 kept, 0 dropped, E refused, - not a type filter2 takes).
   */
  static void probe(Path file, Spec probes) throws IOException {
    try (ParquetFileReader reader = open(file);
        PrintWriter out = stdout()) {
      List<BlockMetaData> blocks = reader.getRowGroups();
      MessageType schema = reader.getFooter().getFileMetaData().getSchema();
      for (int rg = 0; rg < blocks.size(); rg++) {
        for (ColumnChunkMetaData c : blocks.get(rg).getColumns()) {
          long offset = c.getBloomFilterOffset();
          BloomFilter f = offset >= 0 ? reader.readBloomFilter(c) : null;
          out.printf("chunk\t%d\t%s\t%s\t%d\t%d\t%d\t%d%n", rg, c.getPath().toDotString(),
              c.getPrimitiveType().getPrimitiveTypeName(), offset, c.getBloomFilterLength(),
              f == null ? -1 : f.getBitsetSize(), c.getValueCount());
        }
      }
      for (Map.Entry<String, List<String[]>> col : probes.columns.entrySet()) {
        PrimitiveType t = schema.getType(col.getKey()).asPrimitiveType();
        List<Object> values = new ArrayList<>();
        for (String[] v : col.getValue()) values.add(Values.typed(t, v[0], v[1]));
        char[][] kept = filter2(reader, t, col.getKey(), values, blocks);
        for (int rg = 0; rg < blocks.size(); rg++) {
          ColumnChunkMetaData c = chunk(blocks.get(rg), col.getKey());
          BloomFilter f = c.getBloomFilterOffset() >= 0 ? reader.readBloomFilter(c) : null;
          StringBuilder direct = new StringBuilder();
          for (Object v : values) direct.append(f == null ? '-' : find(f, v));
          out.printf("answer\t%d\t%s\t%s\t%s%n", rg, col.getKey(), direct, new String(kept[rg]));
        }
      }
    }
  }

  static char find(BloomFilter f, Object v) {
    try {
      return f.findHash(f.hash(v)) ? '1' : '0';
    } catch (RuntimeException e) {
      return 'E'; // a type BloomFilter.hash refuses (BOOLEAN)
    }
  }

  static char[][] filter2(ParquetFileReader reader, PrimitiveType t, String column, List<Object> values,
      List<BlockMetaData> blocks) {
    char[][] kept = new char[blocks.size()][values.size()];
    for (int i = 0; i < values.size(); i++) {
      FilterPredicate p = eq(t, column, values.get(i));
      List<BlockMetaData> left = null;
      char mark = '-';
      if (p != null) {
        try {
          left = RowGroupFilter.filterRowGroups(
              List.of(RowGroupFilter.FilterLevel.BLOOMFILTER), FilterCompat.get(p), blocks, reader);
        } catch (RuntimeException e) {
          mark = 'E';
        }
      }
      for (int rg = 0; rg < blocks.size(); rg++) {
        kept[rg][i] = left == null ? mark : left.contains(blocks.get(rg)) ? '1' : '0';
      }
    }
    return kept;
  }

  static FilterPredicate eq(PrimitiveType t, String column, Object v) {
    return switch (t.getPrimitiveTypeName()) {
      case INT32 -> FilterApi.eq(FilterApi.intColumn(column), (Integer) v);
      case INT64 -> FilterApi.eq(FilterApi.longColumn(column), (Long) v);
      case FLOAT -> FilterApi.eq(FilterApi.floatColumn(column), (Float) v);
      case DOUBLE -> FilterApi.eq(FilterApi.doubleColumn(column), (Double) v);
      case BINARY, FIXED_LEN_BYTE_ARRAY -> FilterApi.eq(FilterApi.binaryColumn(column), (Binary) v);
      case BOOLEAN -> FilterApi.eq(FilterApi.booleanColumn(column), (Boolean) v);
      default -> null; // filter2 takes no INT96
    };
  }

  static ColumnChunkMetaData chunk(BlockMetaData block, String column) {
    for (ColumnChunkMetaData c : block.getColumns()) {
      if (c.getPath().toDotString().equals(column)) return c;
    }
    throw new IllegalArgumentException("no column " + column);
  }

  // ---- scan -----------------------------------------------------------------------------------

  /**
   * Reads every row with parquet-java's record reader and checks each non-null value against its
   * chunk's filter. Prints rows TAB N, then for each chunk that has a filter
   *   scan TAB rg TAB column TAB non-null values TAB values the filter calls absent TAB first such
   */
  static void scan(Path file) throws IOException {
    try (ParquetFileReader reader = open(file);
        PrintWriter out = stdout()) {
      MessageType schema = reader.getFooter().getFileMetaData().getSchema();
      MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
      List<BlockMetaData> blocks = reader.getRowGroups();
      List<Type> fields = schema.getFields();
      long rows = 0;
      PageReadStore pages;
      for (int rg = 0; (pages = reader.readNextRowGroup()) != null; rg++) {
        BloomFilter[] filters = new BloomFilter[fields.size()];
        long[] seen = new long[fields.size()];
        long[] absent = new long[fields.size()];
        String[] first = new String[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
          ColumnChunkMetaData c = chunk(blocks.get(rg), fields.get(i).getName());
          if (c.getBloomFilterOffset() >= 0) filters[i] = reader.readBloomFilter(c);
        }
        RecordReader<Group> records = io.getRecordReader(pages, new GroupRecordConverter(schema));
        for (long r = 0; r < pages.getRowCount(); r++, rows++) {
          Group g = records.read();
          for (int i = 0; i < fields.size(); i++) {
            if (filters[i] == null || g.getFieldRepetitionCount(i) == 0) continue;
            Object v = stored(g, i, fields.get(i).asPrimitiveType());
            if (v == null) continue; // BOOLEAN: BloomFilter has no hash for it
            seen[i]++;
            if (!filters[i].findHash(filters[i].hash(v))) {
              if (absent[i]++ == 0) first[i] = v.toString();
            }
          }
        }
        for (int i = 0; i < fields.size(); i++) {
          if (filters[i] == null) continue;
          out.printf("scan\t%d\t%s\t%d\t%d\t%s%n", rg, fields.get(i).getName(), seen[i], absent[i],
              first[i] == null ? "" : first[i].replace('\t', ' ').replace('\n', ' '));
        }
      }
      out.printf("rows\t%d%n", rows);
    }
  }

  static Object stored(Group g, int field, PrimitiveType t) {
    return switch (t.getPrimitiveTypeName()) {
      case INT32 -> g.getInteger(field, 0);
      case INT64 -> g.getLong(field, 0);
      case FLOAT -> g.getFloat(field, 0);
      case DOUBLE -> g.getDouble(field, 0);
      case INT96 -> g.getInt96(field, 0);
      case BINARY, FIXED_LEN_BYTE_ARRAY -> g.getBinary(field, 0);
      default -> null;
    };
  }

  static ParquetFileReader open(Path file) throws IOException {
    // Options from a PlainParquetConfiguration: the default one is Hadoop's Configuration.
    return ParquetFileReader.open(
        new LocalInputFile(file), ParquetReadOptions.builder(new PlainParquetConfiguration()).build());
  }

  static PrintWriter stdout() {
    return new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
  }
}
