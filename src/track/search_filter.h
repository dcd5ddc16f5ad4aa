// MLflow's search grammar, for runs/search and experiments/search: a filter is clauses
// joined by AND, each `ENTITY.KEY COMPARATOR VALUE`:
//   metrics.loss < 0.5          params.lr = '0.1'          tags.`my tag` LIKE 'x%'
//   attributes.status = 'FINISHED'    attributes.start_time >= 1700000000000
//   attributes.run_id IN ('a', 'b')   name ILIKE '%resnet%'  (experiments)
//   datasets.name = 'digits'  datasets.context IN ('training', 'eval')  (runs' inputs)
// Entities take MLflow's aliases (metric, param, parameters, tag, attribute, attr, run);
// keys may be quoted with backticks or double quotes; string values with single or double
// quotes. order_by items are `ENTITY.KEY [ASC|DESC]`. Pure functions; errors are
// InvalidArgument with what MLflow would say.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb::tracking {

enum class Entity { kMetric, kParam, kTag, kAttribute, kDataset };

struct Clause {
  Entity entity = Entity::kAttribute;
  std::string key;
  std::string op;                   // =, !=, >, >=, <, <=, LIKE, ILIKE, IN, NOT IN
  std::vector<std::string> values;  // one, or the IN list
  std::optional<double> number;     // the value as a number, where it is one
};

// What a clause is matched against: a run's (or an experiment's) fields by entity.
struct Searchable {
  std::map<std::string, std::string> attributes;  // numeric ones hold decimal text
  std::map<std::string, double> metrics;          // latest values
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> tags;
  // The run's dataset inputs, each {name, digest, context}: a datasets.K clause matches
  // when one of them does.
  std::vector<std::map<std::string, std::string>> datasets;
};

// `attribute_keys`: the attributes the filter may name; `numeric_attributes`: those
// compared as numbers.
Result<std::vector<Clause>> ParseFilter(std::string_view filter,
                                        const std::vector<std::string>& attribute_keys,
                                        const std::vector<std::string>& numeric_attributes);

bool Matches(const std::vector<Clause>& clauses, const Searchable& s,
             const std::vector<std::string>& numeric_attributes);

// SQL's LIKE: % any run of characters, _ one character.
bool Like(std::string_view value, std::string_view pattern, bool ignore_case);

struct OrderKey {
  Entity entity = Entity::kAttribute;
  std::string key;
  bool ascending = true;
};
Result<OrderKey> ParseOrderBy(std::string_view item, const std::vector<std::string>& attribute_keys);

// Whether `a` sorts before `b` by `keys` (missing values last, numbers as numbers).
bool Before(const Searchable& a, const Searchable& b, const std::vector<OrderKey>& keys,
            const std::vector<std::string>& numeric_attributes);

}  // namespace tb::tracking
