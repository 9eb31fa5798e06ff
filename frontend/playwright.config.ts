import { defineConfig } from "@playwright/test";

// Browser tests against a real backend: e2e/global-setup.ts starts `iodiag serve` on a free port
// with a temporary data dir and tokens, and the tests drive Debian's Chromium (no browser download).
export default defineConfig({
  testDir: "./e2e",
  outputDir: "./test-results",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 180_000,
  expect: { timeout: 20_000 },
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    viewport: { width: 1280, height: 720 },
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" },
    screenshot: "only-on-failure",
    trace: "off",
    acceptDownloads: true,
  },
});
