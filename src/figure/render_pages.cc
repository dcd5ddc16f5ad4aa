// RenderPages: pages drawn through a Painter into one PDF, SVG or PNG document.
#include <zlib.h>

#include <cmath>
#include <functional>

#include "base/strings.h"
#include "figure/painter.h"
#include "figure/pango_cairo.h"
#include "figure/render.h"

namespace tb {
namespace {

cairo_status_t AppendToString(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// A PNG's pHYs chunk (pixels per metre), so that a document places it at its DPI.
std::string WithResolution(std::string png, int dpi) {
  constexpr size_t kAfterHeader = 8 + 25;  // signature, IHDR chunk
  if (png.size() < kAfterHeader) return png;
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  auto ppm = static_cast<uint32_t>(std::lround(dpi / 0.0254));
  std::string body = "pHYs" + be32(ppm) + be32(ppm) + std::string(1, '\1');
  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()));
  std::string chunk = be32(9) + body + be32(static_cast<uint32_t>(crc));
  png.insert(kAfterHeader, chunk);
  return png;
}

}  // namespace

Result<std::string> RenderPages(FigureFormat format, double width, double height, int dpi,
                                const std::string& title,
                                const std::vector<std::function<void(Painter&)>>& pages) {
  if (pages.empty() || (format != FigureFormat::kPdf && pages.size() != 1))
    return Status::InvalidArgument("only a PDF has more than one page, and every document has one");
  // Text is measured with pango in every format, SVG's too.
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
  if (format == FigureFormat::kSvg) {
    SvgPainter svg(width, height);
    svg.Rect(0, 0, width, height, {1, 1, 1}, 1);
    pages[0](svg);
    return svg.Finish();
  }
  std::string out;
  cairo_surface_t* surface = nullptr;
  if (format == FigureFormat::kPdf) {
    surface = Pc().cairo_pdf_surface_create_for_stream(AppendToString, &out, width, height);
    Pc().cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "trainbench");
    if (!title.empty()) Pc().cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title.c_str());
  } else {
    double scale = dpi / 72.0;
    surface = Pc().cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(std::ceil(width * scale)),
                                              static_cast<int>(std::ceil(height * scale)));
  }
  cairo_t* cr = Pc().cairo_create(surface);
  if (format == FigureFormat::kPng) Pc().cairo_scale(cr, dpi / 72.0, dpi / 72.0);
  for (const auto& draw : pages) {
    CairoPainter painter(cr);
    painter.Rect(0, 0, width, height, {1, 1, 1}, 1);
    draw(painter);
    Pc().cairo_show_page(cr);
  }
  cairo_status_t status = Pc().cairo_status(cr);
  Pc().cairo_destroy(cr);
  if (format == FigureFormat::kPng && status == CAIRO_STATUS_SUCCESS)
    status = Pc().cairo_surface_write_to_png_stream(surface, AppendToString, &out);
  Pc().cairo_surface_finish(surface);
  if (status == CAIRO_STATUS_SUCCESS) status = Pc().cairo_surface_status(surface);
  Pc().cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    return Status::IoError(Concat({"cannot draw the figure: ", Pc().cairo_status_to_string(status)}));
  return format == FigureFormat::kPng ? WithResolution(std::move(out), dpi) : out;
}

}  // namespace tb
