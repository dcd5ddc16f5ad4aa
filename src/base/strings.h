// Small string helpers shared by parsers. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb {

std::string_view Trim(std::string_view s);
// ASCII letters in lower case (header names, keywords, file extensions).
std::string ToLower(std::string_view s);
// Splits on `sep`, keeping empty fields.
std::vector<std::string_view> Split(std::string_view s, char sep);
// Splits on runs of spaces and tabs, dropping empty fields.
std::vector<std::string_view> SplitWhitespace(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
// Joins the parts with one allocation ("/proc/", pid, "/task/", tid, "/stat").
std::string Concat(std::initializer_list<std::string_view> parts);

std::optional<int64_t> ParseInt(std::string_view s);
std::optional<uint64_t> ParseUint(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);

// Reads a non-negative decimal integer at `pos`, skipping leading spaces; advances pos.
// The fast path for /proc files, which are large, ASCII and trusted in shape only.
std::optional<uint64_t> ScanUint(std::string_view s, size_t& pos);

// Quotes a string for a POSIX shell when it needs quoting ("it's" -> 'it'\''s').
std::string ShellQuote(std::string_view s);
std::string JoinShellWords(const std::vector<std::string>& words);
// `s` as a JSON string literal, quotes included (control characters escaped; bytes that
// are not UTF-8 written as the text \xHH, EscapeInvalidUtf8).
std::string JsonQuote(std::string_view s);
// Appends `v` as a JSON number, the fewest digits that read back as the same double
// ("0.1", "1.763777e+12"); null for none, NaN or an infinity (JSON has no such numbers).
void AppendJsonNumber(std::string& to, std::optional<double> v);
// `s` as one CSV field (RFC 4180): as it is, or, when it holds a comma, a quote or a line
// break, in double quotes with each quote doubled. Every CSV trainbench writes uses it.
std::string CsvField(std::string_view s);
// `s` as text of HTML, XML or SVG: & < > " escaped.
std::string XmlEscape(std::string_view s);

// The last part of a path: "train.py" of "/home/me/train.py".
std::string BaseName(const std::string& path);
// The folder of a path, as POSIX dirname: "/home/me" of "/home/me/train.py", "/" of "/x",
// "." of "train.py".
std::string DirName(const std::string& path);

// The 64-bit FNV-1a hash of `s`: the same on every machine and build (ids derived from
// names must agree between processes and versions).
uint64_t Fnv1a64(std::string_view s);

// `s` safe to print on a terminal: control characters (escape sequences that would
// recolour, move the cursor or retitle the window) become visible escapes such as \x1b.
std::string Printable(std::string_view s);

// The columns `s` (UTF-8) takes on a terminal: 2 for East Asian wide characters and most
// emoji, 0 for combining marks, 1 for others (an invalid byte too). PadRight pads `s` with
// spaces to `width` columns (none when it is as wide already).
size_t DisplayWidth(std::string_view s);
std::string PadRight(std::string_view s, size_t width);

// `s` with every byte that is not part of valid UTF-8 written as the text \xHH (a Latin-1
// argument "caf\xe9", a path in a legacy encoding): what JSON can hold, the byte still
// readable. Valid UTF-8 (and a backslash) is left as it is.
std::string EscapeInvalidUtf8(std::string_view s);

// How deeply the arrays and objects of JSON text nest (brackets inside strings do not
// count), found without parsing: refuse a document before building it, since building,
// copying and printing a deep one recurse once per level.
int JsonNestingDepth(std::string_view text);

}  // namespace tb
