// The functions of cairo and pango that figures are drawn and measured with, loaded when
// the first figure is (platform/c_library.h): commands that draw none never load them (nor
// the 30 libraries they bring), and trainbench runs on a machine without them.
#pragma once

#include <cairo-pdf.h>
#include <pango/pangocairo.h>

#include "base/status.h"
#include "platform/c_library.h"

namespace tb {

// clang-format off
#define TB_PANGO_CAIRO_FUNCTIONS(X) \
  X(cairo_clip) \
  X(cairo_close_path) \
  X(cairo_create) \
  X(cairo_destroy) \
  X(cairo_fill) \
  X(cairo_font_options_create) \
  X(cairo_font_options_destroy) \
  X(cairo_font_options_set_hint_metrics) \
  X(cairo_font_options_set_hint_style) \
  X(cairo_image_surface_create) \
  X(cairo_line_to) \
  X(cairo_move_to) \
  X(cairo_pdf_surface_create_for_stream) \
  X(cairo_pdf_surface_set_metadata) \
  X(cairo_rectangle) \
  X(cairo_restore) \
  X(cairo_rotate) \
  X(cairo_save) \
  X(cairo_scale) \
  X(cairo_set_dash) \
  X(cairo_set_line_cap) \
  X(cairo_set_line_join) \
  X(cairo_set_line_width) \
  X(cairo_set_source_rgb) \
  X(cairo_set_source_rgba) \
  X(cairo_show_page) \
  X(cairo_status) \
  X(cairo_status_to_string) \
  X(cairo_stroke) \
  X(cairo_surface_destroy) \
  X(cairo_surface_finish) \
  X(cairo_surface_status) \
  X(cairo_surface_write_to_png_stream) \
  X(cairo_translate) \
  X(g_free) \
  X(g_object_unref) \
  X(pango_cairo_font_map_get_default) \
  X(pango_font_family_get_name) \
  X(pango_font_map_list_families) \
  X(pango_cairo_context_set_font_options) \
  X(pango_cairo_create_layout) \
  X(pango_cairo_show_layout) \
  X(pango_font_description_free) \
  X(pango_font_description_new) \
  X(pango_font_description_set_family) \
  X(pango_font_description_set_absolute_size) \
  X(pango_font_description_set_weight) \
  X(pango_layout_context_changed) \
  X(pango_layout_get_baseline) \
  X(pango_layout_get_context) \
  X(pango_layout_get_extents) \
  X(pango_layout_set_font_description) \
  X(pango_layout_set_text)
// clang-format on
struct PangoCairo {
  // pangocairo's dependencies are pango, cairo and gobject: one handle finds them all.
  static constexpr CLibrary kLibrary{"libpangocairo-1.0.so.0", "figures (PDF, SVG, PNG)",
                                     "libpangocairo-1.0-0"};
  TB_C_LIBRARY_FUNCTIONS(TB_PANGO_CAIRO_FUNCTIONS)
};

// cairo and pango, once LoadCLibrary<PangoCairo>() has succeeded: every entry to drawing
// (RenderPages, RenderFigure, a report's PDF) asks it first.
inline const PangoCairo& Pc() { return LoadedCLibrary<PangoCairo>(); }

}  // namespace tb
