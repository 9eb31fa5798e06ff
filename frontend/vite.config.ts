import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Development: `iodiag serve` on IODIAG_API (default http://127.0.0.1:8000), the UI on :5173 with
// the API proxied, so the browser sees one origin as in production (where `iodiag serve` serves dist/).
const api = process.env.IODIAG_API ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      "/api": { target: api, changeOrigin: false },
      "/healthz": api,
      "/readyz": api,
    },
  },
  preview: { proxy: { "/api": api } },
  build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 600 },
});
