#include "figure/figure_spec.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace tb {
namespace {

using json = nlohmann::json;

Status Wrong(std::string_view field, std::string_view wants) {
  return Status::InvalidArgument(Concat({"figure: '", field, "' takes ", wants}));
}

}  // namespace

Result<FigureFormat> ParseFigureFormat(std::string_view text) {
  if (text == "pdf") return FigureFormat::kPdf;
  if (text == "svg") return FigureFormat::kSvg;
  if (text == "png") return FigureFormat::kPng;
  return Status::InvalidArgument(Concat({"unknown figure format '", text, "': pdf, svg or png"}));
}

Result<FigureFormat> FigureFormatOfPath(std::string_view path) {
  size_t dot = path.rfind('.');
  std::string ext = ToLower(dot == std::string_view::npos ? "" : path.substr(dot + 1));
  Result<FigureFormat> format = ParseFigureFormat(ext);
  if (!format.ok()) {
    return Status::InvalidArgument(
        Concat({"cannot tell the figure's format from '", path, "': name it .pdf, .svg or .png"}));
  }
  return format;
}

std::string_view FigureFormatName(FigureFormat format) {
  switch (format) {
    case FigureFormat::kPdf:
      return "pdf";
    case FigureFormat::kSvg:
      return "svg";
    case FigureFormat::kPng:
      return "png";
  }
  return "pdf";
}

std::string_view FigureContentType(FigureFormat format) {
  switch (format) {
    case FigureFormat::kPdf:
      return "application/pdf";
    case FigureFormat::kSvg:
      return "image/svg+xml";
    case FigureFormat::kPng:
      return "image/png";
  }
  return "application/octet-stream";
}

Result<double> ParseLength(std::string_view text) {
  std::string_view t = Trim(text);
  struct Unit {
    std::string_view suffix;
    double points;
  };
  static constexpr Unit kUnits[] = {{"in", 72}, {"cm", 72 / 2.54}, {"mm", 72 / 25.4}, {"pt", 1}};
  double factor = 1;
  for (const Unit& u : kUnits) {
    if (t.ends_with(u.suffix)) {
      factor = u.points;
      t = Trim(t.substr(0, t.size() - u.suffix.size()));
      break;
    }
  }
  std::optional<double> v = ParseDouble(t);
  if (!v || !std::isfinite(*v) || *v <= 0) {
    return Status::InvalidArgument(
        Concat({"'", text, "' is not a length: write it as 3.3in, 8.4cm, 85mm or 240pt"}));
  }
  double pt = *v * factor;
  if (pt < 36 || pt > 72 * 40) {
    return Status::InvalidArgument(
        Concat({"a figure of '", text, "' is too small or too large: 0.5in to 40in"}));
  }
  return pt;
}

Result<FigureSpec> FigureSpecFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("figure: a JSON object is expected");
  FigureSpec s;
  auto strings = [&](const char* field, std::vector<std::string>& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    if (!j[field].is_array()) return Wrong(field, "a list of strings");
    for (const json& v : j[field]) {
      if (!v.is_string()) return Wrong(field, "a list of strings");
      out.push_back(v.get<std::string>());
    }
    return Status::Ok();
  };
  auto text = [&](const char* field, std::string& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    if (!j[field].is_string()) return Wrong(field, "a string");
    out = j[field].get<std::string>();
    return Status::Ok();
  };
  auto optional_text = [&](const char* field, std::optional<std::string>& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    if (!j[field].is_string()) return Wrong(field, "a string");
    out = j[field].get<std::string>();
    return Status::Ok();
  };
  auto number = [&](const char* field, std::optional<double>& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    if (!j[field].is_number() || !std::isfinite(j[field].get<double>())) return Wrong(field, "a number");
    out = j[field].get<double>();
    return Status::Ok();
  };
  auto flag = [&](const char* field, bool& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    if (!j[field].is_boolean()) return Wrong(field, "true or false");
    out = j[field].get<bool>();
    return Status::Ok();
  };
  auto length = [&](const char* field, double& out) -> Status {
    if (!j.contains(field) || j[field].is_null()) return Status::Ok();
    Result<double> pt = j[field].is_number()   ? Result<double>(j[field].get<double>())
                        : j[field].is_string() ? ParseLength(j[field].get<std::string>())
                                               : Result<double>(Wrong(field, "a length such as \"3.3in\""));
    if (!pt.ok()) return pt.status();
    out = *pt;
    return Status::Ok();
  };
  std::optional<double> smoothing, font, line, dpi, utc;
  std::string x_name;
  for (Status st : {strings("runs", s.runs),
                    strings("workloads", s.workloads),
                    text("metric", s.metric),
                    optional_text("labels", s.labels),
                    text("x", x_name),
                    number("from", s.from),
                    number("to", s.to),
                    number("smoothing", smoothing),
                    length("width", s.width_pt),
                    length("height", s.height_pt),
                    number("font_size", font),
                    text("font", s.font),
                    text("color_by", s.color_by),
                    number("line_width", line),
                    text("title", s.title),
                    optional_text("x_title", s.x_title),
                    optional_text("y_title", s.y_title),
                    text("legend", s.legend),
                    flag("show_legend", s.show_legend),
                    strings("hidden", s.hidden),
                    flag("mono", s.mono),
                    flag("events", s.events),
                    flag("phases", s.phases),
                    text("phases_of", s.phases_of),
                    number("y_min", s.y_min),
                    number("y_max", s.y_max),
                    flag("log_y", s.log_y),
                    flag("percent", s.percent),
                    number("dpi", dpi),
                    number("utc_offset_min", utc)}) {
    if (!st.ok()) return st;
  }
  if (s.metric.empty()) return Wrong("metric", "the metric to plot, e.g. \"gpu.utilization.gpu_ratio\"");
  if (s.runs.empty() && s.workloads.empty())
    return Status::InvalidArgument("figure: name 'runs' or 'workloads' to plot");
  if (!x_name.empty()) {
    std::optional<XAxis> x = ParseXAxis(x_name);
    if (!x) return Wrong("x", "relative, wall or step");
    s.x = *x;
  }
  if (s.from && s.to && *s.from >= *s.to)
    return Status::InvalidArgument("figure: 'from' must be before 'to'");
  if (s.y_min && s.y_max && *s.y_min >= *s.y_max)
    return Status::InvalidArgument("figure: 'y_min' must be below 'y_max'");
  if (s.log_y && s.y_min && *s.y_min <= 0)
    return Status::InvalidArgument("figure: a log scale needs 'y_min' above 0");
  if (smoothing) {
    if (*smoothing < 0 || *smoothing > 99) return Wrong("smoothing", "0 to 99");
    s.smoothing = static_cast<int>(*smoothing);
  }
  if (font) {
    if (*font < 4 || *font > 48) return Wrong("font_size", "4 to 48 points");
    s.font_pt = *font;
  }
  if (s.font.empty() || s.font.size() > 100 || s.font.find_first_of("<>\"&;\n") != std::string::npos)
    return Wrong("font", "a font family such as \"DejaVu Serif\"");
  if (line) {
    if (*line < 0.1 || *line > 10) return Wrong("line_width", "0.1 to 10 points");
    s.line_pt = *line;
  }
  if (dpi) {
    if (*dpi < 36 || *dpi > 1200) return Wrong("dpi", "36 to 1200");
    s.dpi = static_cast<int>(*dpi);
  }
  if (utc) s.utc_offset_min = static_cast<int>(*utc);
  if (s.height_pt != 0 && (s.height_pt < 36 || s.height_pt > 72 * 40))
    return Wrong("height", "0.5in to 40in");
  if (s.width_pt < 36 || s.width_pt > 72 * 40) return Wrong("width", "0.5in to 40in");
  return s;
}

Status CheckFigurePixels(double width_pt, double height_pt, int dpi) {
  double pixels = width_pt / 72 * dpi * (height_pt / 72 * dpi);
  if (pixels <= static_cast<double>(kMaxFigurePixels)) return Status::Ok();
  int fits =
      static_cast<int>(std::sqrt(static_cast<double>(kMaxFigurePixels) / (width_pt / 72 * height_pt / 72)));
  return Status::InvalidArgument(
      "figure: " + std::to_string(static_cast<int64_t>(pixels / 1e6)) + " million pixels at " +
      std::to_string(dpi) + " dpi; at most " + std::to_string(kMaxFigurePixels / 1000000) +
      " million are drawn (a PNG of that size): ask for dpi " + std::to_string(fits) +
      " or less, a smaller size, or a PDF or SVG, which scale without pixels");
}

Result<FigureSpec> ParseFigureSpec(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("figure: not valid JSON");
  return FigureSpecFromJson(j);
}

std::string FigureSpecJson(const FigureSpec& s) {
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto opt_text = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"runs", s.runs},
            {"workloads", s.workloads},
            {"metric", s.metric},
            {"labels", opt_text(s.labels)},
            {"x", std::string(XAxisName(s.x))},
            {"from", opt(s.from)},
            {"to", opt(s.to)},
            {"smoothing", s.smoothing},
            {"width", std::to_string(s.width_pt) + "pt"},
            {"height", s.height_pt > 0 ? json(std::to_string(s.height_pt) + "pt") : json(nullptr)},
            {"font_size", s.font_pt},
            {"font", s.font},
            {"color_by", s.color_by},
            {"line_width", s.line_pt},
            {"title", s.title},
            {"x_title", opt_text(s.x_title)},
            {"y_title", opt_text(s.y_title)},
            {"legend", s.legend},
            {"show_legend", s.show_legend},
            {"hidden", s.hidden},
            {"mono", s.mono},
            {"events", s.events},
            {"phases", s.phases},
            {"phases_of", s.phases_of},
            {"y_min", opt(s.y_min)},
            {"y_max", opt(s.y_max)},
            {"log_y", s.log_y},
            {"percent", s.percent},
            {"dpi", s.dpi},
            {"utc_offset_min", s.utc_offset_min}};
  return j.dump(2) + "\n";
}

}  // namespace tb
