// Bundles the library pages' sources (lib/src) into lib/dist with esbuild, and writes one
// HTML page per source (lib/<name>.html) that loads ../pages/record.js and the bundle.
// Run after `npm ci --prefix tests/corpus`: node tests/corpus/build.mjs
import { readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "..", "extension", "package.json"));
const esbuild = require("esbuild");  // the extension's pinned esbuild
const src = join(here, "lib", "src"), dist = join(here, "lib", "dist");
mkdirSync(dist, { recursive: true });
for (const file of readdirSync(src)) {
  const { name } = parse(file);
  await esbuild.build({
    entryPoints: [join(src, file)], bundle: true, outfile: join(dist, name + ".js"), minify: true,
    format: "iife", jsx: "automatic", loader: { ".js": "jsx" }, nodePaths: [join(here, "node_modules")],
    define: { "process.env.NODE_ENV": '"production"', __VUE_OPTIONS_API__: "true", __VUE_PROD_DEVTOOLS__: "false", __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false" },
    logLevel: "warning",
  });
  const css = readdirSync(dist).includes(name + ".css") ? `<link rel="stylesheet" href="dist/${name}.css">` : "";
  writeFileSync(join(here, "lib", name + ".html"),
    `<!doctype html><title>${name}</title>${css}<script src="../pages/record.js"></script>\n<div id="root"></div><p id="out"></p>\n<script src="dist/${name}.js"></script>\n`);
}
console.log("built", readdirSync(src).length, "library pages");
