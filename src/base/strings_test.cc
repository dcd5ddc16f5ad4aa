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

// Names in listings line up on a terminal whatever script they are written in.
TEST(Strings, DisplayWidthCountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth("resnet"), 6u);
  EXPECT_EQ(DisplayWidth("r\xc3\xa9sum\xc3\xa9"), 6u);      // résumé: 8 bytes
  EXPECT_EQ(DisplayWidth("\xe8\xae\xad\xe7\xbb\x83"), 4u);  // 训练: two wide characters
  EXPECT_EQ(DisplayWidth("e\xcc\x81"), 1u);                 // e and a combining accent
  EXPECT_EQ(DisplayWidth("\xf0\x9f\x9a\x80"), 2u);          // an emoji
  EXPECT_EQ(DisplayWidth("\xff"), 1u);                      // not UTF-8: a byte, a column
  EXPECT_EQ(PadRight("\xe8\xae\xad\xe7\xbb\x83", 6), "\xe8\xae\xad\xe7\xbb\x83  ");
  EXPECT_EQ(PadRight("toolong", 3), "toolong");
}

}  // namespace
}  // namespace tb
