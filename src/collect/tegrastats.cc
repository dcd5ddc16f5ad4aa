#include "collect/tegrastats.h"

#include <cstdlib>

#include "base/strings.h"

namespace tb {
namespace {

std::optional<double> Number(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

// "12%@[1300,1300]", "10%@1300", "@[1000,1000]", "3%@3199": load and the highest frequency.
void LoadAt(std::string_view value, std::optional<double>& load, std::optional<double>& mhz) {
  size_t at = value.find('@');
  if (at == std::string_view::npos) return;
  if (at > 0 && value[at - 1] == '%') load = Number(value.substr(0, at - 1));
  std::string_view freq = value.substr(at + 1);
  if (!freq.empty() && freq.front() == '[') freq = freq.substr(1, freq.find(']') - 1);
  for (std::string_view f : Split(freq, ',')) {
    std::optional<double> v = Number(f);
    if (v && (!mhz || *v > *mhz)) mhz = v;
  }
}

// "5139mW/5139mW/5139mW" or "1155/1155": the current power in mW.
std::optional<double> RailValue(std::string_view value) {
  size_t slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view current = value.substr(0, slash);
  if (current.ends_with("mW")) current.remove_suffix(2);
  if (current.empty() || current.find_first_not_of("0123456789.") != std::string_view::npos)
    return std::nullopt;
  return Number(current);
}

}  // namespace

bool ParseTegrastatsLine(std::string_view line, TegrastatsLine& out) {
  out = TegrastatsLine{};
  std::vector<std::string_view> words;
  for (std::string_view w : Split(line, ' '))
    if (!w.empty()) words.push_back(w);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    std::string_view key = words[i], value = words[i + 1];
    if (key == "RAM") {
      size_t slash = value.find('/');
      if (slash == std::string_view::npos) continue;
      out.ram_used_mb = Number(value.substr(0, slash));
      out.ram_total_mb = Number(value.substr(slash + 1));
    } else if (key == "CPU" && value.starts_with('[') && value.ends_with(']')) {
      for (std::string_view core : Split(value.substr(1, value.size() - 2), ',')) {
        std::optional<double> load, mhz;
        LoadAt(core, load, mhz);
        out.cpu_mhz.push_back(mhz);
      }
    } else if (key == "EMC_FREQ") {
      LoadAt(value, out.emc_load_percent, out.emc_mhz);
    } else if (key == "GR3D_FREQ") {
      LoadAt(value, out.gpu_load_percent, out.gpu_mhz);
    } else if (key != "NC" && key != "SWAP" && key != "IRAM" && key.find_first_of("0123456789") != 0 &&
               key.find('@') == std::string_view::npos && key.find('%') == std::string_view::npos) {
      // A rail: an upper-case name followed by current/average.
      bool upper = key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string_view::npos;
      if (!upper) continue;
      if (std::optional<double> mw = RailValue(value)) {
        out.rails_mw.emplace_back(std::string(key), *mw);
        ++i;
      }
    }
  }
  return out.ram_used_mb || out.gpu_mhz || !out.rails_mw.empty();
}

std::optional<double> BoardPowerMilliwatts(const std::vector<std::pair<std::string, double>>& rails_mw) {
  if (rails_mw.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& [name, mw] : rails_mw) {
    if (name == "VDD_IN" || name == "POM_5V_IN") return mw;
    sum += mw;
  }
  return sum;
}

const std::pair<std::string, double>* GpuRail(const std::vector<std::pair<std::string, double>>& rails_mw) {
  const std::pair<std::string, double>* shared = nullptr;
  for (const auto& rail : rails_mw) {
    if (rail.first == "VDD_GPU" || rail.first == "POM_5V_GPU" || rail.first == "GPU") return &rail;
    if (shared == nullptr && rail.first.find("GPU") != std::string::npos) shared = &rail;
  }
  return shared;
}

}  // namespace tb
