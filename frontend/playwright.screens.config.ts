import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// The screenshots in docs/screenshots/ (`make screenshots` or `npm run screenshots`): the main pages at
// 1440 px and 390 px against a real backend (the same global setup as the browser tests). Not part of
// `npx playwright test`: the file is e2e/screens.shots.ts, which the default config's testMatch skips.
export default defineConfig({
  ...base,
  testMatch: /screens\.shots\.ts$/,
  outputDir: "./test-results/screens",
  use: { ...base.use, deviceScaleFactor: 1, screenshot: "off" },
});
