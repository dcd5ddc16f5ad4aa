#include "base/strings.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(EscapeInvalidUtf8, KeepsUtf8AndWritesOtherBytesAsHex) {
  // Valid UTF-8 of every length stays as it is.
  for (const char* valid : {"plain", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80", "a\\xb"})
    EXPECT_EQ(EscapeInvalidUtf8(valid), valid);
  EXPECT_EQ(EscapeInvalidUtf8("caf\xe9"), "caf\\xe9");              // Latin-1
  EXPECT_EQ(EscapeInvalidUtf8("\xff\xfe"), "\\xff\\xfe");           // never in UTF-8
  EXPECT_EQ(EscapeInvalidUtf8("\xc0\x80"), "\\xc0\\x80");           // overlong NUL
  EXPECT_EQ(EscapeInvalidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeInvalidUtf8("\xe2\x82"), "\\xe2\\x82");           // cut short
  EXPECT_EQ(EscapeInvalidUtf8("\xe2\x82"
                              "A"),
            "\\xe2\\x82"
            "A");                                                            // cut short by ASCII
  EXPECT_EQ(EscapeInvalidUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(Strings, CsvFieldsQuoteOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

TEST(Strings, DirNameIsPosixDirname) {
  EXPECT_EQ(DirName("/home/me/train.py"), "/home/me");
  EXPECT_EQ(DirName("/x"), "/");
  EXPECT_EQ(DirName("train.py"), ".");
  EXPECT_EQ(DirName("runs/a/stdout.log"), "runs/a");
}

}  // namespace
}  // namespace tb
