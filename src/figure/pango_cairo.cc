#include "figure/pango_cairo.h"

namespace tb {

Result<const PangoCairo*> LoadPangoCairo() {
  static const Result<PangoCairo> loaded = []() -> Result<PangoCairo> {
    // pangocairo's dependencies are pango, cairo and gobject: one handle finds them all.
    constexpr const char* kSoname = "libpangocairo-1.0.so.0";
    Result<void*> library = OpenCLibrary(kSoname, "figures (PDF, SVG, PNG)", "libpangocairo-1.0-0");
    if (!library.ok()) return library.status();
    PangoCairo api;
#define TB_BIND(name) TB_RETURN_IF_ERROR(BindCFunction(*library, kSoname, #name, api.name));
    TB_PANGO_CAIRO_FUNCTIONS(TB_BIND)
#undef TB_BIND
    return api;
  }();
  if (!loaded.ok()) return loaded.status();
  return &loaded.value();
}

const PangoCairo& Pc() {
  static const PangoCairo& api = RequireLoaded(LoadPangoCairo());
  return api;
}

}  // namespace tb
