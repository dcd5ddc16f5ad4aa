// Bundles the web UI (src/main.ts and uPlot) into dist/ with esbuild: one script, one
// stylesheet and index.html. `node build.mjs` from web/ or any directory.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "dist");
mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [join(here, "src", "main.ts")],
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "iife",
  target: ["chrome110", "firefox110"],
  outfile: join(out, "app.js"),
  loader: { ".css": "css" },
  logLevel: "warning",
});
copyFileSync(join(here, "index.html"), join(out, "index.html"));
copyFileSync(join(here, "src", "style.css"), join(out, "style.css"));
copyFileSync(join(here, "node_modules", "uplot", "dist", "uPlot.min.css"), join(out, "uPlot.min.css"));
