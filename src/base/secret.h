// Secrets: making them, comparing them, and knowing one by its name so that it is not
// written where others read (a run's manifest, a log).
#pragma once

#include <string>
#include <string_view>

namespace tb {

// `bytes` random bytes from the kernel (getrandom), as 2 * bytes lower-case hex digits.
std::string RandomHex(size_t bytes);

// Whether two secrets are equal, in time that does not depend on where they differ.
bool SecretsEqual(std::string_view a, std::string_view b);

// Whether an environment variable's name says it holds a secret: TRAINBENCH_TOKEN,
// MLFLOW_TRACKING_TOKEN, MLFLOW_TRACKING_PASSWORD, AWS_SECRET_ACCESS_KEY, WANDB_API_KEY,
// HF_TOKEN, PGPASSWORD, *_CREDENTIALS, ... (a word TOKEN, SECRET, PASSWORD, PASSWD, PASS,
// KEY, CREDENTIAL(S), AUTH or COOKIE in its name, words split at '_'; PATH is not one).
bool IsSecretName(std::string_view name);

// The URI without its password (scheme://user:***@host/...), for messages and records.
std::string RedactedUri(const std::string& uri);

// What is written in place of a secret's value.
inline constexpr std::string_view kRedacted = "(secret, not recorded)";

}  // namespace tb
