// The looks of lines, defined once for the figures and the web UI (web/build.mjs reads this
// file into web/src/generated/palette.ts): colours, dash patterns, markers, and the
// sequential map for a sweep over an ordered parameter.
//
// Line k's look: colour kLineColors[k % 5], dash kLineDashes[(k / 5) % 4], marker
// kLineMarkers[(k / 20) % 3]; every one of the first 60 lines differs from the others. The
// five colours step in lightness (CIELAB L* 21, 35, 45, 57, 70: at least 10 apart, so they
// print as five greys) and stay at least 23 apart (CIELAB distance) for readers with
// deuteranopia, protanopia or tritanopia (Machado et al.'s 2009 simulation);
// figure_palette_test.cc holds them to it. Monochrome: black and dark grey with
// kMonoDashes, then markers.
#pragma once

#include <cstddef>
#include <string_view>

namespace tb {

inline constexpr std::string_view kLineColors[] = {"#08306b", "#a50f15", "#00796b", "#e0650a", "#58b5e8"};
// Dash and gap lengths in multiples of the line width; "" is solid.
inline constexpr std::string_view kLineDashes[] = {"", "6 3", "1.5 2.5", "8 3 1.5 3"};
inline constexpr std::string_view kMonoDashes[] = {"",     "8 4", "2 3", "10 3 2 3",
                                                   "14 5", "4 4", "1 4", "16 4 4 4"};
// Drawn every few points along a line (and in its legend swatch).
inline constexpr std::string_view kLineMarkers[] = {"", "dot", "ring"};
// A sweep: lines coloured by their parameter's value, from the map's dark end (the least)
// to its light end (the greatest); viridis from 0 to 0.9, where it is still seen on white.
inline constexpr std::string_view kSequentialStops[] = {"#440154", "#482878", "#3e4989", "#31688e", "#26828e",
                                                        "#1f9e89", "#35b779", "#6ece58", "#b5de2b"};

inline constexpr size_t kLineColorCount = std::size(kLineColors);
inline constexpr size_t kLineDashCount = std::size(kLineDashes);

}  // namespace tb
