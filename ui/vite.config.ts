// Builds the UI into dist/ for both shells: the Tauri window (WebKitGTK,
// hence the safari13 target) and `maskflow serve`, which embeds dist/.
// Everything is bundled: nothing is loaded from a CDN at run time.
import { defineConfig } from "vitest/config";
import preact from "@preact/preset-vite";

export default defineConfig({
  plugins: [preact()],
  base: "./",
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    target: "safari13",
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
  },
});
