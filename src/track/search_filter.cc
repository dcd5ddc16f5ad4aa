#include "track/search_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/strings.h"

namespace tb::tracking {
namespace {

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::optional<Entity> EntityOf(std::string_view word) {
  std::string w = ToLower(word);
  if (w == "metric" || w == "metrics") return Entity::kMetric;
  if (w == "param" || w == "params" || w == "parameter" || w == "parameters") return Entity::kParam;
  if (w == "tag" || w == "tags") return Entity::kTag;
  if (w == "attribute" || w == "attributes" || w == "attr" || w == "run") return Entity::kAttribute;
  if (w == "dataset" || w == "datasets") return Entity::kDataset;
  return std::nullopt;
}

// A cursor over the filter text.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Done() {
    Skip();
    return i_ >= s_.size();
  }
  char Peek() { return Done() ? '\0' : s_[i_]; }
  // A quoted text (the quote is the next character), unquoted.
  std::optional<std::string> Quoted() {
    char q = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) out += s_[i_++];
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  // A run of characters that may make up a bare name or number.
  std::string Word() {
    Skip();
    size_t start = i_;
    while (i_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[i_])) || std::strchr("_.-+:/", s_[i_])))
      ++i_;
    return std::string(s_.substr(start, i_ - start));
  }
  std::string Comparator() {
    Skip();
    for (std::string_view op : {"!=", ">=", "<=", "=", ">", "<"}) {
      if (s_.substr(i_, op.size()) == op) {
        i_ += op.size();
        return std::string(op);
      }
    }
    std::string w = ToLower(Word());
    if (w == "not") {
      if (ToLower(Word()) == "in") return "NOT IN";
      return "";
    }
    if (w == "like" || w == "ilike" || w == "in") {
      for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return w;
    }
    return "";
  }
  bool Take(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  std::string_view Rest() { return s_.substr(std::min(i_, s_.size())); }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

// ENTITY.KEY, or a bare KEY (an attribute, as experiments/search's `name`).
Result<std::pair<Entity, std::string>> ReadKey(Reader& r, const std::vector<std::string>& attribute_keys) {
  std::string head;
  if (r.Peek() == '`' || r.Peek() == '"') {
    std::optional<std::string> q = r.Quoted();
    if (!q) return Bad("Invalid search expression: a quote is not closed");
    head = *q;
  } else {
    head = r.Word();
  }
  if (head.empty())
    return Bad("Invalid search expression: expected ENTITY.KEY at '" + std::string(r.Rest()) + "'");
  size_t dot = head.find('.');
  std::optional<Entity> entity = dot == std::string::npos ? std::nullopt : EntityOf(head.substr(0, dot));
  std::string key;
  if (!entity) {
    entity = Entity::kAttribute;
    key = head;
  } else {
    key = head.substr(dot + 1);
    if (key.empty() && (r.Peek() == '`' || r.Peek() == '"')) {
      std::optional<std::string> q = r.Quoted();
      if (!q) return Bad("Invalid search expression: a quote is not closed");
      key = *q;
    }
  }
  if (key.empty()) return Bad("Invalid search expression: '" + head + "' names no key");
  if (*entity == Entity::kDataset && key != "name" && key != "digest" && key != "context")
    return Bad("Invalid dataset key '" + key + "' specified. Valid keys are 'name', 'digest', 'context'");
  if (*entity == Entity::kAttribute) {
    if (key == "created" || key == "Created") key = "start_time";
    if (key == "run name") key = "run_name";
    if (!Contains(attribute_keys, key)) {
      return Bad("Invalid attribute key '" + key + "' specified. Valid keys are " + [&] {
        std::string all;
        for (const std::string& k : attribute_keys) all += (all.empty() ? "'" : ", '") + k + "'";
        return all;
      }());
    }
  }
  return std::make_pair(*entity, key);
}

Result<std::string> ReadValue(Reader& r) {
  char c = r.Peek();
  if (c == '\'' || c == '"') {
    std::optional<std::string> q = r.Quoted();
    if (!q) return Bad("Invalid search expression: a quote is not closed");
    return *q;
  }
  std::string w = r.Word();
  if (w.empty()) return Bad("Invalid search expression: expected a value at '" + std::string(r.Rest()) + "'");
  return w;
}

}  // namespace

bool Like(std::string_view value, std::string_view pattern, bool ignore_case) {
  auto eq = [&](char a, char b) {
    return ignore_case
               ? std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b))
               : a == b;
  };
  // Iterative wildcard match with backtracking to the last %.
  size_t v = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (v < value.size()) {
    if (p < pattern.size() && (pattern[p] == '_' || (pattern[p] != '%' && eq(pattern[p], value[v])))) {
      ++v;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '%') {
      star = p++;
      mark = v;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      v = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

Result<std::vector<Clause>> ParseFilter(std::string_view filter,
                                        const std::vector<std::string>& attribute_keys,
                                        const std::vector<std::string>& numeric_attributes) {
  std::vector<Clause> clauses;
  Reader r(filter);
  if (r.Done()) return clauses;
  while (true) {
    Result<std::pair<Entity, std::string>> key = ReadKey(r, attribute_keys);
    if (!key.ok()) return key.status();
    Clause c;
    c.entity = key->first;
    c.key = key->second;
    c.op = r.Comparator();
    if (c.op.empty()) return Bad("Invalid search expression: expected a comparator after '" + c.key + "'");
    bool numeric = c.entity == Entity::kMetric ||
                   (c.entity == Entity::kAttribute && Contains(numeric_attributes, c.key));
    if (c.op == "IN" || c.op == "NOT IN") {
      if ((c.entity != Entity::kAttribute && c.entity != Entity::kDataset) || numeric)
        return Bad("Invalid comparator '" + c.op + "': IN takes a list of run ids or names");
      if (!r.Take('(')) return Bad("Invalid search expression: IN needs a list in parentheses");
      do {
        Result<std::string> v = ReadValue(r);
        if (!v.ok()) return v.status();
        c.values.push_back(*v);
      } while (r.Take(','));
      if (!r.Take(')')) return Bad("Invalid search expression: the IN list is not closed");
    } else {
      Result<std::string> v = ReadValue(r);
      if (!v.ok()) return v.status();
      c.values.push_back(*v);
    }
    if (numeric) {
      std::optional<double> n = ParseDouble(c.values[0]);
      if (!n) return Bad("Expected numeric value type for '" + c.key + "', got '" + c.values[0] + "'");
      if (c.op == "LIKE" || c.op == "ILIKE")
        return Bad("Invalid comparator '" + c.op + "' for the numeric key '" + c.key + "'");
      c.number = n;
    } else if (c.op == ">" || c.op == ">=" || c.op == "<" || c.op == "<=") {
      return Bad("Invalid comparator '" + c.op + "' for the text key '" + c.key +
                 "': use =, !=, LIKE or ILIKE");
    }
    clauses.push_back(std::move(c));
    if (r.Done()) break;
    std::string joiner = ToLower(r.Word());
    if (joiner != "and") {
      return Bad("Invalid search expression: clauses are joined by AND (found '" +
                 (joiner.empty() ? std::string(r.Rest()) : joiner) + "')");
    }
  }
  return clauses;
}

namespace {

std::optional<std::string> TextOf(const Searchable& s, Entity e, const std::string& key) {
  const std::map<std::string, std::string>* m = e == Entity::kParam ? &s.params
                                                : e == Entity::kTag ? &s.tags
                                                                    : &s.attributes;
  auto it = m->find(key);
  return it == m->end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::optional<double> NumberOf(const Searchable& s, Entity e, const std::string& key) {
  if (e == Entity::kMetric) {
    auto it = s.metrics.find(key);
    return it == s.metrics.end() ? std::nullopt : std::optional<double>(it->second);
  }
  std::optional<std::string> t = TextOf(s, e, key);
  return t ? ParseDouble(*t) : std::nullopt;
}

template <typename T>
bool Compare(const T& a, const std::string& op, const T& b) {
  if (op == "=") return a == b;
  if (op == "!=") return a != b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "<") return a < b;
  return a <= b;
}

}  // namespace

bool Matches(const std::vector<Clause>& clauses, const Searchable& s,
             const std::vector<std::string>& numeric_attributes) {
  for (const Clause& c : clauses) {
    bool numeric = c.entity == Entity::kMetric ||
                   (c.entity == Entity::kAttribute && Contains(numeric_attributes, c.key));
    if (numeric) {
      std::optional<double> v = NumberOf(s, c.entity, c.key);
      if (!v || !Compare(*v, c.op, *c.number)) return false;
      continue;
    }
    auto holds = [&](const std::string& v) {
      return c.op == "LIKE"     ? Like(v, c.values[0], false)
             : c.op == "ILIKE"  ? Like(v, c.values[0], true)
             : c.op == "IN"     ? Contains(c.values, v)
             : c.op == "NOT IN" ? !Contains(c.values, v)
                                : Compare(v, c.op, c.values[0]);
    };
    if (c.entity == Entity::kDataset) {
      bool any = std::any_of(s.datasets.begin(), s.datasets.end(), [&](const auto& d) {
        auto it = d.find(c.key);
        return it != d.end() && holds(it->second);
      });
      if (!any) return false;
      continue;
    }
    std::optional<std::string> v = TextOf(s, c.entity, c.key);
    if (!v) return false;  // a run without the param or tag never matches, as in MLflow
    if (!holds(*v)) return false;
  }
  return true;
}

Result<OrderKey> ParseOrderBy(std::string_view item, const std::vector<std::string>& attribute_keys) {
  Reader r(item);
  Result<std::pair<Entity, std::string>> key = ReadKey(r, attribute_keys);
  if (!key.ok()) return key.status();
  OrderKey k{key->first, key->second, true};
  if (!r.Done()) {
    std::string dir = ToLower(r.Word());
    if (dir != "asc" && dir != "desc")
      return Bad("Invalid order_by clause '" + std::string(item) + "': expected ASC or DESC at the end");
    k.ascending = dir == "asc";
    if (!r.Done()) return Bad("Invalid order_by clause '" + std::string(item) + "'");
  }
  return k;
}

bool Before(const Searchable& a, const Searchable& b, const std::vector<OrderKey>& keys,
            const std::vector<std::string>& numeric_attributes) {
  for (const OrderKey& k : keys) {
    bool numeric = k.entity == Entity::kMetric ||
                   (k.entity == Entity::kAttribute && Contains(numeric_attributes, k.key));
    if (numeric) {
      // NaN sorts with the missing values, last whichever the direction, as in MLflow's
      // stores (a NaN compared as a number would break the sort's strict order).
      auto number = [&](const Searchable& s) {
        return NumberOf(s, k.entity, k.key).value_or(std::numeric_limits<double>::quiet_NaN());
      };
      double x = number(a), y = number(b);
      if (std::isnan(x) != std::isnan(y)) return std::isnan(y);  // missing or NaN last
      if (std::isnan(x) || x == y) continue;
      return k.ascending ? x < y : x > y;
    }
    std::optional<std::string> x = TextOf(a, k.entity, k.key), y = TextOf(b, k.entity, k.key);
    if (x.has_value() != y.has_value()) return x.has_value();
    if (!x || *x == *y) continue;
    return k.ascending ? *x < *y : *x > *y;
  }
  return false;
}

}  // namespace tb::tracking
