//===- CtrDataTest.cpp - Criteo reader, datagen, AUC and log-loss ---------===//
//
// Hand-written lines for the parser (including every kind of malformed line
// and random garbage), checkpoint positions and epochs, metrics against
// hand-computed values, and datagen: determinism, a ground-truth AUC in a
// realistic range, and data a logistic regression trained here can learn
// nearly as well as the hidden model.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/CtrData.h"
#include "TestSupport.h"
#include "heterps/Runtime/CtrDataGen.h"
#include "heterps/Runtime/CtrDataMetrics.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace heterps::rt;
using namespace heterps::rt::data;

namespace {

/// A file in the temporary directory, removed with the test.
class TempFile {
public:
  explicit TempFile(const std::string &name)
      : path_(std::string(::testing::TempDir()) + "ctrdata_" +
              std::to_string(getpid()) + "_" + name) {}
  TempFile(const std::string &name, const std::string &contents)
      : TempFile(name) {
    write(contents);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  void write(const std::string &contents) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << contents;
  }
  std::string read() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// A line from its fields: label, 13 dense, 26 sparse.
std::string makeLine(const std::string &label,
                     const std::vector<std::string> &dense,
                     const std::vector<std::string> &sparse) {
  std::string line = label;
  for (int j = 0; j != kNumDense; ++j)
    line += "\t" + (j < int(dense.size()) ? dense[j] : std::string());
  for (int f = 0; f != kNumSparse; ++f)
    line += "\t" + (f < int(sparse.size()) ? sparse[f] : std::string());
  return line;
}

std::string fullLine(int label, int denseValue, const std::string &hex) {
  return makeLine(
      std::to_string(label),
      std::vector<std::string>(kNumDense, std::to_string(denseValue)),
      std::vector<std::string>(kNumSparse, hex));
}

struct Row {
  float label;
  std::vector<float> dense;
  std::vector<int64_t> sparse;
  bool operator==(const Row &other) const {
    return label == other.label && dense == other.dense &&
           sparse == other.sparse;
  }
};

void appendRows(const CtrBatch &batch, std::vector<Row> &rows) {
  ASSERT_EQ(batch.labels.size(), size_t(batch.rows));
  ASSERT_EQ(batch.dense.size(), size_t(batch.rows) * kNumDense);
  ASSERT_EQ(batch.sparse.size(), size_t(batch.rows) * kNumSparse);
  for (int64_t r = 0; r != batch.rows; ++r)
    rows.push_back({batch.labels[r],
                    {batch.denseRow(r), batch.denseRow(r) + kNumDense},
                    {batch.sparseRow(r), batch.sparseRow(r) + kNumSparse}});
}

std::vector<Row> readAll(CriteoReader &reader, int64_t batchRows) {
  std::vector<Row> rows;
  CtrBatch batch;
  while (reader.nextBatch(batch, batchRows))
    appendRows(batch, rows);
  return rows;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

TEST(CriteoReader, ParsesFullAndMissingValues) {
  std::string line1 = makeLine(
      "1", {"0", "-3", "5", "", "100", "1", "", "", "2", "0", "7", "", "-1"},
      {"68fd1e64", "", "0000000a", "FFFFFFFF", "1", "", "", "",        "",
       "",         "", "",         "",         "",  "", "", "",        "",
       "",         "", "",         "",         "",  "", "", "abcdef01"});
  std::string line2 = makeLine("0", {}, {}); // everything missing
  // CRLF line endings and no newline at the end of the file.
  TempFile file("parse.tsv", line1 + "\r\n" + line2);
  CriteoReader reader(file.path());
  CtrBatch batch;
  ASSERT_EQ(reader.nextBatch(batch, 10), 2);
  EXPECT_EQ(reader.nextBatch(batch, 10), 0);
  EXPECT_EQ(reader.stats().malformed, 0u) << reader.stats().summary();
  EXPECT_EQ(reader.stats().lines, 2u);
  EXPECT_EQ(reader.stats().rows, 2u);
  EXPECT_EQ(reader.position().byteOffset, reader.fileSize());

  CriteoReader again(file.path());
  ASSERT_EQ(again.nextBatch(batch, 10), 2);
  EXPECT_EQ(batch.labels[0], 1.0f);
  EXPECT_EQ(batch.labels[1], 0.0f);
  const float *d = batch.denseRow(0);
  // sign(x) log(1 + |x|); missing is 0.
  float expected[kNumDense] = {0,
                               -float(std::log1p(3.0)),
                               float(std::log1p(5.0)),
                               0,
                               float(std::log1p(100.0)),
                               float(std::log1p(1.0)),
                               0,
                               0,
                               float(std::log1p(2.0)),
                               0,
                               float(std::log1p(7.0)),
                               0,
                               -float(std::log1p(1.0))};
  for (int j = 0; j != kNumDense; ++j)
    EXPECT_FLOAT_EQ(d[j], expected[j]) << "dense " << j;
  const int64_t *s = batch.sparseRow(0);
  EXPECT_EQ(s[0], 0x68fd1e64 + 1);
  EXPECT_EQ(s[1], 0); // missing
  EXPECT_EQ(s[2], 0xa + 1);
  EXPECT_EQ(s[3], 0xffffffffLL + 1); // upper case hex
  EXPECT_EQ(s[4], 2);
  EXPECT_EQ(s[25], 0xabcdef01LL + 1);
  for (int j = 0; j != kNumDense; ++j)
    EXPECT_EQ(batch.denseRow(1)[j], 0.0f);
  for (int f = 0; f != kNumSparse; ++f)
    EXPECT_EQ(batch.sparseRow(1)[f], 0);
}

TEST(CriteoReader, TableSizesAndRawDense) {
  TempFile file("tables.tsv", fullLine(1, 9, "0000000a") + "\n" +
                                  fullLine(0, -2, "00000000") + "\n");
  ReaderOptions options;
  options.tableSizes.assign(kNumSparse, 0);
  options.tableSizes[0] = 4; // ids 1..3 for values, 0 for missing
  options.tableSizes[1] = 2; // every present value is id 1
  options.logTransform = false;
  CriteoReader reader(file.path(), options);
  CtrBatch batch;
  ASSERT_EQ(reader.nextBatch(batch, 8), 2);
  EXPECT_EQ(batch.denseRow(0)[0], 9.0f);
  EXPECT_EQ(batch.denseRow(1)[0], -2.0f);
  EXPECT_EQ(batch.sparseRow(0)[0], 1 + 10 % 3);
  EXPECT_EQ(batch.sparseRow(0)[1], 1);
  EXPECT_EQ(batch.sparseRow(0)[2], 11); // no table size
  EXPECT_EQ(batch.sparseRow(1)[0], 1);  // hash 0 is not "missing"
  EXPECT_EQ(batch.sparseRow(1)[2], 1);

  ReaderOptions bad;
  bad.tableSizes = {4, 4};
  EXPECT_THROW(CriteoReader(file.path(), bad), Error);
  bad.tableSizes.assign(kNumSparse, 1);
  EXPECT_THROW(CriteoReader(file.path(), bad), Error);
  EXPECT_THROW(CriteoReader(file.path() + ".missing"), Error);
}

// A last line without its newline is read, and said: a file cut short in
// its last field reads as a valid row with a wrong id.
TEST(CriteoReader, ALastLineWithoutNewlineIsSaid) {
  for (bool newline : {true, false}) {
    TempFile file("end.tsv", fullLine(1, 9, "0000000a") + "\n" +
                                 fullLine(0, 2, "0000000b") +
                                 (newline ? "\n" : ""));
    CriteoReader reader(file.path());
    CtrBatch batch;
    ASSERT_EQ(reader.nextBatch(batch, 8), 2);
    EXPECT_EQ(reader.stats().lastLineUnterminated, !newline);
  }
}

TEST(CriteoReader, MalformedLinesAreCountedAndSkipped) {
  std::vector<std::string> dense(kNumDense, "1");
  std::vector<std::string> sparse(kNumSparse, "deadbeef");
  auto withDense = [&](int j, const std::string &value) {
    auto d = dense;
    d[j] = value;
    return makeLine("0", d, sparse);
  };
  auto withSparse = [&](int f, const std::string &value) {
    auto s = sparse;
    s[f] = value;
    return makeLine("1", dense, s);
  };
  std::string good = makeLine("1", dense, sparse);
  struct Bad {
    std::string line;
    MalformedReason reason;
    int field;
  };
  std::vector<Bad> bad = {
      {"", MalformedReason::FieldCount, 1},
      {good + "\textra", MalformedReason::FieldCount, 41},
      {good.substr(0, good.rfind('\t')), MalformedReason::FieldCount, 39},
      {"2" + good.substr(1), MalformedReason::BadLabel, 0},
      {"1.0" + good.substr(1), MalformedReason::BadLabel, 0},
      {"\t" + good.substr(2), MalformedReason::BadLabel, 0},
      {withDense(0, "1.5"), MalformedReason::BadInteger, 1},
      {withDense(4, "12a"), MalformedReason::BadInteger, 5},
      {withDense(12, "99999999999999999999"), MalformedReason::BadInteger, 13},
      {withDense(3, "+4"), MalformedReason::BadInteger, 4},
      {withDense(3, " 4"), MalformedReason::BadInteger, 4},
      {withSparse(0, "xyz"), MalformedReason::BadHex, 14},
      {withSparse(25, "-1"), MalformedReason::BadHex, 39},
      {withSparse(7, "0x12"), MalformedReason::BadHex, 21},
      {withSparse(7, "00000000000000001"), MalformedReason::BadHex, 21},
      // A bad field and a wrong shape: the shape is what gets reported.
      {"x\t1\t2", MalformedReason::FieldCount, 3},
  };
  // Good lines between the bad ones: good, bad, good, bad, ...
  std::string text;
  for (const Bad &b : bad)
    text += good + "\n" + b.line + "\n";
  text += good + "\n";
  TempFile file("malformed.tsv", text);
  ReaderOptions options;
  options.keepMalformed = 100;
  CriteoReader reader(file.path(), options);
  std::vector<Row> rows = readAll(reader, 3);
  const ReadStats &stats = reader.stats();
  EXPECT_EQ(rows.size(), bad.size() + 1);
  EXPECT_EQ(stats.rows, bad.size() + 1);
  EXPECT_EQ(stats.malformed, bad.size());
  EXPECT_EQ(stats.lines, 2 * bad.size() + 1);
  EXPECT_EQ(stats.bytes, text.size());
  ASSERT_EQ(stats.firstMalformed.size(), bad.size());
  for (size_t i = 0; i != bad.size(); ++i) {
    const MalformedLine &m = stats.firstMalformed[i];
    EXPECT_EQ(m.lineNumber, 2 * i + 2) << i;
    EXPECT_EQ(m.reason, bad[i].reason) << i << ": " << bad[i].line;
    EXPECT_EQ(m.field, bad[i].field) << i << ": " << bad[i].line;
  }
  EXPECT_EQ(stats.byReason[int(MalformedReason::BadHex)], 4u);
  std::string summary = stats.summary();
  EXPECT_NE(summary.find("line 8: bad label in column 1"), std::string::npos)
      << summary;

  // Only the first few are kept; all are counted.
  CriteoReader few(file.path());
  readAll(few, 100);
  EXPECT_EQ(few.stats().firstMalformed.size(), 10u);
  EXPECT_EQ(few.stats().malformed, bad.size());
}

TEST(CriteoReader, LinesLongerThanTheBufferAreSkipped) {
  std::string good = fullLine(1, 3, "a");
  ReaderOptions options;
  options.bufferBytes = 256; // good lines fit, the long ones do not
  ASSERT_LT(good.size() + 1, options.bufferBytes);
  std::string huge(2000, 'x');
  std::string text = good + "\n" + huge + "\n" + good + "\n" +
                     std::string(256, '1') + "\n" + good + "\n" + huge;
  TempFile file("long.tsv", text);
  CriteoReader reader(file.path(), options);
  std::vector<Row> rows = readAll(reader, 2);
  EXPECT_EQ(rows.size(), 3u);
  EXPECT_EQ(reader.stats().malformed, 3u);
  EXPECT_EQ(reader.stats().byReason[int(MalformedReason::LineTooLong)], 3u);
  ASSERT_EQ(reader.stats().firstMalformed.size(), 3u);
  EXPECT_EQ(reader.stats().firstMalformed[0].lineNumber, 2u);
  EXPECT_EQ(reader.stats().firstMalformed[1].lineNumber, 4u);
  EXPECT_EQ(reader.stats().firstMalformed[2].lineNumber, 6u);
  EXPECT_EQ(reader.stats().bytes, text.size());
  EXPECT_EQ(reader.position().byteOffset, text.size());
}

// A file cut short under the reader is an error: it was read as a short
// pass, and checkpoints then held positions in another file.
TEST(CriteoReader, AFileThatShrinksWhileReadIsAnError) {
  std::string text;
  for (int i = 0; i != 200; ++i)
    text += fullLine(i % 2, i, "a") + "\n";
  TempFile file("shrinks.tsv", text);
  ReaderOptions options;
  options.bufferBytes = 1024;
  CriteoReader reader(file.path(), options);
  CtrBatch batch;
  ASSERT_EQ(reader.nextBatch(batch, 4), 4);
  ASSERT_EQ(::truncate(file.path().c_str(), off_t(text.size() / 2)), 0);
  testsupport::expectErrorContaining([&] { readAll(reader, 4); },
                                     "shrank while it was being read");
}

// A byte-order mark (a spreadsheet's export) before the first label is
// not a malformed line, in every pass.
TEST(CriteoReader, AByteOrderMarkIsSkipped) {
  TempFile file("bom.tsv", "\xEF\xBB\xBF" + fullLine(1, 2, "a") + "\n" +
                               fullLine(0, 2, "b") + "\n");
  ReaderOptions options;
  options.loop = true;
  options.maxEpochs = 2;
  CriteoReader reader(file.path(), options);
  std::vector<Row> rows = readAll(reader, 3);
  EXPECT_EQ(rows.size(), 4u);
  EXPECT_EQ(reader.stats().malformed, 0u) << reader.stats().summary();
}

TEST(CriteoReader, AGzipFileIsNamedAsOne) {
  TempFile file("data.tsv.gz", std::string("\x1f\x8b\x08\x00rest", 8));
  testsupport::expectErrorContaining([&] { CriteoReader reader(file.path()); },
                                     "is gzip-compressed");
}

// A corrupt count stays bounded; small negatives stay distinct from 0.
TEST(CriteoReader, DenseValuesAreSignedLogs) {
  EXPECT_FLOAT_EQ(criteoDenseFeature(0), 0);
  EXPECT_FLOAT_EQ(criteoDenseFeature(9999), float(std::log1p(9999.0)));
  EXPECT_FLOAT_EQ(criteoDenseFeature(-2), -float(std::log1p(2.0)));
  EXPECT_NEAR(criteoDenseFeature(std::numeric_limits<int64_t>::min()),
              -std::log1p(9.223372036854775808e18), 1e-4);
}

TEST(CriteoReader, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(7);
  std::string good = fullLine(1, 42, "68fd1e64");
  TempFile file("garbage.tsv");
  for (int trial = 0; trial != 40; ++trial) {
    std::string text;
    if (trial % 2 == 0) {
      // Raw random bytes, with tabs and newlines made common.
      size_t n = rng() % 20000;
      for (size_t i = 0; i != n; ++i) {
        unsigned r = rng() % 16;
        text.push_back(r == 0 ? '\n' : r < 4 ? '\t' : char(rng() & 0xff));
      }
    } else {
      // Valid lines with random bytes flipped, inserted or dropped.
      for (int l = 0; l != 200; ++l) {
        std::string line = good;
        int edits = int(rng() % 3);
        for (int e = 0; e != edits; ++e) {
          size_t at = rng() % line.size();
          switch (rng() % 3) {
          case 0:
            line[at] = char(rng() & 0xff);
            break;
          case 1:
            line.insert(at, 1, "\t0a-\r\n"[rng() % 6]);
            break;
          default:
            line.erase(at, 1);
          }
        }
        text += line + "\n";
      }
    }
    file.write(text);
    ReaderOptions options;
    options.bufferBytes = 64 + rng() % 4096;
    options.tableSizes.assign(kNumSparse, 1000);
    CriteoReader reader(file.path(), options);
    CtrBatch batch;
    int64_t rows = 0;
    ASSERT_NO_THROW(while (int64_t got =
                               reader.nextBatch(batch, 1 + rng() % 64)) {
      rows += got;
      for (int64_t id : batch.sparse)
        ASSERT_TRUE(id >= 0 && id < 1000);
      for (float label : batch.labels)
        ASSERT_TRUE(label == 0.0f || label == 1.0f);
    }) << "trial "
       << trial;
    const ReadStats &stats = reader.stats();
    EXPECT_EQ(uint64_t(rows), stats.rows);
    EXPECT_EQ(stats.lines, stats.rows + stats.malformed) << "trial " << trial;
    EXPECT_EQ(stats.bytes, text.size()) << "trial " << trial;
  }
}

//===----------------------------------------------------------------------===//
// Positions and epochs
//===----------------------------------------------------------------------===//

TEST(CriteoReader, PositionSaveRestoreResumesExactly) {
  TempFile file("resume.tsv");
  CtrGenOptions gen;
  generateCtrData(1000, 3, file.path(), gen);
  // Some malformed lines in the middle, so positions and line numbers are
  // not just rows.
  std::string text = file.read();
  size_t cut = text.find('\n', text.size() / 2) + 1;
  text.insert(cut, "garbage\n\n1\t2\n");
  file.write(text);

  CriteoReader reference(file.path());
  std::vector<Row> all = readAll(reference, 7);
  ASSERT_EQ(all.size(), 1000u);
  EXPECT_EQ(reference.stats().malformed, 3u);

  for (int64_t stopAfter : {0, 1, 37, 499, 500, 501, 999, 1000}) {
    CriteoReader first(file.path());
    CtrBatch batch;
    std::vector<Row> rows;
    int64_t remaining = stopAfter;
    while (remaining > 0) {
      int64_t got = first.nextBatch(batch, std::min<int64_t>(remaining, 13));
      ASSERT_GT(got, 0);
      appendRows(batch, rows);
      remaining -= got;
    }
    // Through a checkpoint manifest and back.
    std::string saved = first.position().toString();
    DataPosition position = DataPosition::parse(saved);
    EXPECT_EQ(position, first.position());

    CriteoReader second(file.path());
    second.seek(position);
    EXPECT_EQ(second.position(), position);
    std::vector<Row> rest = readAll(second, 11);
    rows.insert(rows.end(), rest.begin(), rest.end());
    ASSERT_EQ(rows.size(), all.size()) << "stop after " << stopAfter;
    EXPECT_TRUE(rows == all) << "stop after " << stopAfter;
    // Line numbers carry on from the saved position.
    EXPECT_EQ(second.position().lineNumber, 1003u);
  }

  CriteoReader reader(file.path());
  DataPosition past;
  past.byteOffset = reader.fileSize() + 1;
  EXPECT_THROW(reader.seek(past), Error);
  DataPosition midLine;
  midLine.byteOffset = 5;
  EXPECT_THROW(reader.seek(midLine), Error);
  EXPECT_THROW(DataPosition::parse("offset=1 line=2"), Error);
  EXPECT_THROW(DataPosition::parse("offset=1 line=2 epoch=x"), Error);
  EXPECT_THROW(DataPosition::parse("offset=1 line=2 epoch=3 "), Error);
}

TEST(CriteoReader, EpochsLoopOverTheFile) {
  std::string text;
  for (int i = 0; i != 10; ++i)
    text += fullLine(i % 2, i, "1") + "\n";
  text += "bad line\n";
  TempFile file("epochs.tsv", text);
  ReaderOptions options;
  options.loop = true;
  options.maxEpochs = 3;
  CriteoReader reader(file.path(), options);
  CtrBatch batch;
  // A batch of 4 straddles epoch ends.
  std::vector<Row> rows = readAll(reader, 4);
  ASSERT_EQ(rows.size(), 30u);
  for (size_t i = 0; i != rows.size(); ++i)
    EXPECT_FLOAT_EQ(rows[i].dense[0], float(std::log1p(double(i % 10)))) << i;
  EXPECT_EQ(reader.position().epoch, 2u);
  EXPECT_EQ(reader.stats().malformed, 3u);
  EXPECT_EQ(reader.stats().firstMalformed[2].epoch, 2u);
  EXPECT_EQ(reader.stats().firstMalformed[2].lineNumber, 11u);

  // Resume in the middle of epoch 1 and finish the three epochs.
  CriteoReader first(file.path(), options);
  ASSERT_EQ(first.nextBatch(batch, 14), 14);
  DataPosition position = first.position();
  EXPECT_EQ(position.epoch, 1u);
  EXPECT_EQ(position.lineNumber, 4u);
  CriteoReader second(file.path(), options);
  second.seek(position);
  EXPECT_EQ(readAll(second, 5).size(), 16u);

  // Unlimited epochs keep going.
  options.maxEpochs = 0;
  CriteoReader forever(file.path(), options);
  for (int i = 0; i != 10; ++i)
    ASSERT_EQ(forever.nextBatch(batch, 25), 25);
  EXPECT_EQ(forever.position().epoch, 24u);

  // A file with no valid line ends instead of spinning.
  TempFile empty("empty.tsv", "");
  CriteoReader none(empty.path(), options);
  EXPECT_EQ(none.nextBatch(batch, 4), 0);
  TempFile allBad("allbad.tsv", "x\ny\n");
  CriteoReader bad(allBad.path(), options);
  EXPECT_EQ(bad.nextBatch(batch, 4), 0);
  EXPECT_EQ(bad.stats().malformed, 2u);
}

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

TEST(CtrMetrics, AucHandComputed) {
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<double>{0.1, 0.4, 0.35, 0.8},
                              std::vector<float>{0, 0, 1, 1}),
                   0.75);
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<double>{0.1, 0.2, 0.3},
                              std::vector<float>{0, 1, 1}),
                   1.0);
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<double>{0.1, 0.2, 0.3},
                              std::vector<float>{1, 1, 0}),
                   0.0);
  // Ties count one half: positives {0.4, 0.8}, negatives {0.1, 0.4}:
  // 0.4 beats 0.1 (1) and ties 0.4 (1/2); 0.8 beats both (2): 3.5 / 4.
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<float>{0.1f, 0.4f, 0.4f, 0.8f},
                              std::vector<float>{0, 1, 0, 1}),
                   0.875);
  // All scores equal: 1/2.
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<double>(6, 0.3),
                              std::vector<float>{0, 1, 0, 1, 1, 0}),
                   0.5);
  // Three-way tie among two positives and one negative, plus a clear pair:
  // positives {0.5, 0.5, 0.9}, negatives {0.5, 0.2}:
  // 0.5 vs {0.5, 0.2} = 1.5 twice, 0.9 vs both = 2: 5 / 6.
  EXPECT_DOUBLE_EQ(computeAuc(std::vector<double>{0.5, 0.5, 0.5, 0.9, 0.2},
                              std::vector<float>{1, 1, 0, 1, 0}),
                   5.0 / 6.0);
  EXPECT_TRUE(std::isnan(
      computeAuc(std::vector<double>{0.1, 0.2}, std::vector<float>{1, 1})));
  EXPECT_TRUE(
      std::isnan(computeAuc(std::vector<double>{}, std::vector<float>{})));
  EXPECT_THROW(
      computeAuc(std::vector<double>{0.1, NAN}, std::vector<float>{0, 1}),
      Error);
  EXPECT_THROW(computeAuc(std::vector<double>{0.1}, std::vector<float>{0, 1}),
               Error);
}

TEST(CtrMetrics, AucMatchesPairCounting) {
  std::mt19937 rng(11);
  for (int trial = 0; trial != 20; ++trial) {
    int n = 1 + int(rng() % 300);
    std::vector<float> scores(n), labels(n);
    for (int i = 0; i != n; ++i) {
      scores[i] = float(rng() % 20) / 20; // many ties
      labels[i] = float(rng() % 2);
    }
    double pairs = 0, count = 0;
    for (int i = 0; i != n; ++i)
      for (int j = 0; j != n; ++j)
        if (labels[i] == 1 && labels[j] == 0) {
          count += 1;
          pairs += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
        }
    double auc = computeAuc(scores, labels);
    if (count == 0)
      EXPECT_TRUE(std::isnan(auc));
    else
      EXPECT_NEAR(auc, pairs / count, 1e-12) << "trial " << trial;
  }
}

TEST(CtrMetrics, LogLoss) {
  LogLossMeter meter;
  EXPECT_TRUE(std::isnan(meter.value()));
  meter.add(0.8, 1);
  meter.add(0.8, 0);
  meter.add(0.5, 1);
  EXPECT_EQ(meter.count(), 3u);
  EXPECT_NEAR(meter.value(),
              -(std::log(0.8) + std::log(0.2) + std::log(0.5)) / 3, 1e-12);

  // Logits agree with probabilities, stay finite when extreme, and soft
  // labels are weighted.
  LogLossMeter fromLogits, fromProbabilities;
  for (double x : {-3.0, -0.5, 0.0, 1.0, 4.0})
    for (float y : {0.0f, 0.3f, 1.0f}) {
      fromLogits.addLogit(x, y);
      fromProbabilities.add(1 / (1 + std::exp(-x)), y);
    }
  EXPECT_NEAR(fromLogits.value(), fromProbabilities.value(), 1e-9);
  LogLossMeter extreme;
  extreme.addLogit(1000, 0);
  extreme.addLogit(-1000, 0);
  EXPECT_NEAR(extreme.value(), 500, 1e-9);
  LogLossMeter clamped;
  clamped.add(1.0, 0);
  EXPECT_NEAR(clamped.value(), -std::log(LogLossMeter::kEpsilon), 1e-6);

  // Batches and merging give the same mean as one stream.
  float p[] = {0.1f, 0.6f, 0.9f, 0.3f}, y[] = {0, 1, 1, 0};
  LogLossMeter whole, a, b;
  whole.add(p, y, 4);
  a.add(p, y, 2);
  b.add(p + 2, y + 2, 2);
  a.merge(b);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_NEAR(a.value(), whole.value(), 1e-12);
  a.reset();
  EXPECT_EQ(a.count(), 0u);
}

//===----------------------------------------------------------------------===//
// Datagen
//===----------------------------------------------------------------------===//

TEST(CtrDatagen, DeterministicPerSeedAndWellFormed) {
  TempFile a("gen_a.tsv"), b("gen_b.tsv"), c("gen_c.tsv");
  CtrGenResult ra = generateCtrData(20000, 42, a.path());
  CtrGenResult rb = generateCtrData(20000, 42, b.path());
  CtrGenResult rc = generateCtrData(20000, 43, c.path());
  EXPECT_EQ(a.read(), b.read());
  EXPECT_NE(a.read(), c.read());
  EXPECT_EQ(ra.groundTruthAuc, rb.groundTruthAuc);
  EXPECT_EQ(ra.positives, rb.positives);
  EXPECT_EQ(ra.bytes, a.read().size());
  // No temporary left behind.
  EXPECT_NE(
      access((a.path() + ".tmp." + std::to_string(getpid())).c_str(), F_OK), 0);

  ReaderOptions options;
  CriteoReader reader(a.path(), options);
  std::vector<Row> rows = readAll(reader, 1000);
  EXPECT_EQ(rows.size(), 20000u);
  EXPECT_EQ(reader.stats().malformed, 0u) << reader.stats().summary();
  int64_t positives = 0, missingDense = 0, missingSparse = 0, negative = 0;
  for (const Row &row : rows) {
    positives += row.label == 1;
    for (float v : row.dense) {
      missingDense += v == 0;
      negative += v < 0;
    }
    for (int64_t id : row.sparse)
      missingSparse += id == 0;
  }
  EXPECT_EQ(positives, ra.positives);
  EXPECT_GT(missingDense, 0);
  EXPECT_GT(missingSparse, 0);
  EXPECT_GT(negative, 0);
  // A CTR-like click rate.
  double ctr = double(ra.positives) / double(ra.rows);
  EXPECT_GT(ctr, 0.1);
  EXPECT_LT(ctr, 0.4);
  EXPECT_NEAR(ra.meanProbability, ctr, 0.02);
}

TEST(CtrDatagen, GroundTruthAucInRealisticRange) {
  TempFile file("gen_auc.tsv");
  CtrGenOptions options;
  options.keepProbabilities = true;
  CtrGenResult result = generateCtrData(100000, 5, file.path(), options);
  EXPECT_GE(result.groundTruthAuc, 0.70);
  EXPECT_LE(result.groundTruthAuc, 0.85);
  EXPECT_GT(result.groundTruthLogLoss, 0.3);
  EXPECT_LT(result.groundTruthLogLoss, 0.6);
  // The reported AUC is the true probabilities' AUC on the labels written.
  CriteoReader reader(file.path());
  std::vector<Row> rows = readAll(reader, 4096);
  ASSERT_EQ(rows.size(), result.probabilities.size());
  std::vector<float> labels;
  for (const Row &row : rows)
    labels.push_back(row.label);
  EXPECT_NEAR(computeAuc(result.probabilities, labels), result.groundTruthAuc,
              1e-9);
  LogLossMeter meter;
  for (size_t i = 0; i != rows.size(); ++i)
    meter.add(result.probabilities[i], labels[i]);
  EXPECT_NEAR(meter.value(), result.groundTruthLogLoss, 1e-6);
}

TEST(CtrDatagen, ModelSeedSharesTheModel) {
  // Same model, different samples: a train file and a held-out file.
  TempFile a("model_a.tsv"), b("model_b.tsv");
  CtrGenOptions options;
  options.modelSeed = 99;
  CtrGenResult ra = generateCtrData(30000, 1, a.path(), options);
  CtrGenResult rb = generateCtrData(30000, 2, b.path(), options);
  EXPECT_NE(a.read(), b.read());
  EXPECT_NEAR(ra.groundTruthAuc, rb.groundTruthAuc, 0.015);
  EXPECT_NEAR(ra.meanProbability, rb.meanProbability, 0.01);
}

TEST(CtrDatagen, ErrorsAndCommand) {
  std::string dir = ::testing::TempDir();
  std::string missingDir = dir + "no_such_dir_" + std::to_string(getpid());
  EXPECT_THROW(generateCtrData(10, 1, missingDir + "/x.tsv"), Error);
  EXPECT_THROW(generateCtrData(0, 1, dir + "zero.tsv"), Error);
  CtrGenOptions bad;
  bad.vocabSizes = {1, 2, 3};
  EXPECT_THROW(generateCtrData(10, 1, dir + "bad.tsv", bad), Error);

  TempFile file("command.tsv");
  std::ostringstream report;
  EXPECT_EQ(runDatagenCommand(5000, 7, file.path(), report), 0);
  EXPECT_NE(report.str().find("wrote 5000 rows"), std::string::npos)
      << report.str();
  EXPECT_NE(report.str().find("ground-truth AUC 0."), std::string::npos)
      << report.str();
  CriteoReader reader(file.path());
  EXPECT_EQ(readAll(reader, 512).size(), 5000u);

  std::ostringstream failure;
  EXPECT_EQ(runDatagenCommand(10, 7, missingDir + "/x.tsv", failure), 1);
  EXPECT_EQ(failure.str().rfind("error: ", 0), 0u) << failure.str();
  EXPECT_EQ(runDatagenCommand(-1, 7, file.path(), failure), 1);
  // Rows past the machine's memory (the ground-truth AUC keeps every
  // score) are refused before anything is written, not killed for memory.
  std::ostringstream huge;
  EXPECT_EQ(runDatagenCommand(int64_t(1) << 50, 7, dir + "huge.tsv", huge), 1);
  EXPECT_NE(huge.str().find("GiB of memory for its ground-truth AUC"),
            std::string::npos)
      << huge.str();
  // A path that is not a regular file (a FIFO, a device) is not replaced.
  const std::string fifo = dir + "fifo_" + std::to_string(getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ostringstream special;
  EXPECT_EQ(runDatagenCommand(10, 7, fifo, special), 1);
  EXPECT_NE(special.str().find("is not a regular file; not replacing it"),
            std::string::npos)
      << special.str();
  struct stat kept {};
  ASSERT_EQ(::lstat(fifo.c_str(), &kept), 0);
  EXPECT_TRUE(S_ISFIFO(kept.st_mode));
  ::unlink(fifo.c_str());
}

/// Logistic regression over the reader's features: one weight per
/// (field, id) in a hashed table, one per dense field, AdaGrad.
class LogisticRegression {
public:
  LogisticRegression() : sparse_(kTable, 0.0f), sparseG_(kTable, 1e-6f) {}

  double logit(const CtrBatch &batch, int64_t r, uint32_t *slots) const {
    double z = bias_;
    for (int j = 0; j != kNumDense; ++j)
      z += dense_[j] * batch.denseRow(r)[j];
    for (int f = 0; f != kNumSparse; ++f) {
      uint64_t key = uint64_t(batch.sparseRow(r)[f]) * 0x9e3779b97f4a7c15ULL +
                     uint64_t(f + 1) * 0xc2b2ae3d27d4eb4fULL;
      slots[f] = uint32_t((key ^ (key >> 29)) % kTable);
      z += sparse_[slots[f]];
    }
    return z;
  }

  void train(const CtrBatch &batch, int64_t r) {
    uint32_t slots[kNumSparse];
    double p = 1 / (1 + std::exp(-logit(batch, r, slots)));
    double g = p - batch.labels[r];
    auto step = [&](float &w, float &acc, double grad) {
      acc += float(grad * grad);
      w -= float(kRate * grad / std::sqrt(acc));
    };
    step(bias_, biasG_, g);
    for (int j = 0; j != kNumDense; ++j)
      step(dense_[j], denseG_[j], g * batch.denseRow(r)[j]);
    for (int f = 0; f != kNumSparse; ++f)
      step(sparse_[slots[f]], sparseG_[slots[f]], g + kL2 * sparse_[slots[f]]);
  }

private:
  static constexpr uint32_t kTable = 1u << 22;
  static constexpr double kRate = 0.05, kL2 = 1e-3;
  std::vector<float> sparse_, sparseG_;
  float dense_[kNumDense] = {};
  float denseG_[kNumDense] = {1e-6f, 1e-6f, 1e-6f, 1e-6f, 1e-6f, 1e-6f, 1e-6f,
                              1e-6f, 1e-6f, 1e-6f, 1e-6f, 1e-6f, 1e-6f};
  float bias_ = 0, biasG_ = 1e-6f;
};

TEST(CtrDatagen, LogisticRegressionApproachesGroundTruth) {
  constexpr int64_t kRows = 400000, kTrain = 320000;
  TempFile file("learn.tsv");
  CtrGenOptions options;
  options.keepProbabilities = true;
  CtrGenResult gen = generateCtrData(kRows, 2024, file.path(), options);

  LogisticRegression model;
  CtrBatch batch;
  for (int epoch = 0; epoch != 2; ++epoch) {
    CriteoReader reader(file.path());
    int64_t seen = 0;
    while (seen < kTrain &&
           reader.nextBatch(batch, std::min<int64_t>(4096, kTrain - seen))) {
      for (int64_t r = 0; r != batch.rows; ++r)
        model.train(batch, r);
      seen += batch.rows;
    }
  }
  // Held out: the last rows, scored by the model and by the ground truth.
  CriteoReader reader(file.path());
  std::vector<float> scores, labels;
  std::vector<double> truth;
  int64_t row = 0;
  LogLossMeter loss, truthLoss;
  while (reader.nextBatch(batch, 4096))
    for (int64_t r = 0; r != batch.rows; ++r, ++row) {
      if (row < kTrain)
        continue;
      uint32_t slots[kNumSparse];
      double z = model.logit(batch, r, slots);
      scores.push_back(float(z));
      labels.push_back(batch.labels[r]);
      truth.push_back(gen.probabilities[size_t(row)]);
      loss.addLogit(z, batch.labels[r]);
      truthLoss.add(gen.probabilities[size_t(row)], batch.labels[r]);
    }
  double learnedAuc = computeAuc(scores, labels);
  double truthAuc = computeAuc(truth, labels);
  std::printf("ground truth AUC %.4f (all rows %.4f), log-loss %.4f; "
              "logistic regression AUC %.4f, log-loss %.4f\n",
              truthAuc, gen.groundTruthAuc, truthLoss.value(), learnedAuc,
              loss.value());
  EXPECT_LE(learnedAuc, truthAuc + 0.005);
  EXPECT_GT(learnedAuc, truthAuc - 0.02);
  EXPECT_LT(loss.value(), truthLoss.value() + 0.02);
}

} // namespace
