// The screenshots in docs/screenshots/: sign-in, upload (a first-time user), the jobs page empty and with
// jobs, the top of a report, its plots and the chat with an answer, at 1440 px (desktop-*) and 390 px
// (phone-*), plus the report in the dark theme, and the timeline of a 384-rank job: its density view and a
// zoomed window at full resolution. Viewport-sized (never full-page), device scale 1, so
// each PNG stays small. Run with `make screenshots` (or `npm run screenshots` after `npm run build`);
// the normal `npx playwright test` does not pick this file up (playwright.screens.config.ts does).
import { mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page, test } from "@playwright/test";
import { apiGet, apiUpload, signIn, state } from "./helpers";

const OUT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "screenshots");
const MAX_BYTES = 400 * 1024;
const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;
type Size = keyof typeof SIZES;

async function snap(page: Page, size: Size, name: string): Promise<void> {
  // Let smooth scrolling and the plots' redraw settle.
  await page.waitForTimeout(400);
  const path = join(OUT, `${size}-${name}.png`);
  await page.screenshot({ path, animations: "disabled", caret: "hide" });
  expect(statSync(path).size, `${path} is over 400 KB`).toBeLessThan(MAX_BYTES);
}

async function scrollTo(page: Page, selector: string): Promise<void> {
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (el) window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 8);
  }, selector);
}

test("screenshots of the main pages at 1440 px and 390 px", async ({ page }) => {
  test.setTimeout(300_000);
  mkdirSync(OUT, { recursive: true });
  const s = state();
  await page.emulateMedia({ colorScheme: "light", reducedMotion: "reduce" });

  // Before any analysis: sign-in, the empty jobs page, the upload page for a first-time user.
  for (const size of ["desktop", "phone"] as const) {
    await page.setViewportSize(SIZES[size]);
    await page.goto(`${s.baseURL}/`);
    // Signed out: the token lives in sessionStorage.
    await page.evaluate(() => {
      sessionStorage.clear();
    });
    await page.reload();
    await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
    await snap(page, size, "01-sign-in");
    await signIn(page, s.tokens.sam);
    await expect(page.getByTestId("empty-state")).toBeVisible();
    await snap(page, size, "02-jobs-empty");
    await page.getByRole("link", { name: "Upload", exact: true }).click();
    await expect(page.getByTestId("sample-offer")).toBeVisible();
    await snap(page, size, "03-upload");
  }

  // Two analyses: the real DXT log and the sample (a slow OST, with Lustre plots).
  await page.setViewportSize(SIZES.desktop);
  await page.goto(`${s.baseURL}/jobs`);
  await page.getByTestId("empty-state").getByRole("button", { name: "Try a sample log" }).click();
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible({ timeout: 120_000 });
  const id = await apiUpload(s.realLog, s.tokens.sam);

  for (const size of ["desktop", "phone"] as const) {
    await page.setViewportSize(SIZES[size]);
    await page.goto(`${s.baseURL}/jobs`);
    await expect(page.getByTestId("job-row")).toHaveCount(2);
    await expect(page.getByTestId("jobs-table")).not.toContainText("…");
    await snap(page, size, "04-jobs");

    await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(id)}`);
    await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
    await expect(page.getByTestId("plot-timeline")).toBeVisible();
    await snap(page, size, "05-report-top");

    await scrollTo(page, "#plots");
    await snap(page, size, "06-plots");

    const chat = page.getByTestId("chat");
    if (size === "phone") await page.getByTestId("ask-fab").click();
    const answers = chat.getByTestId("provenance");
    const before = await answers.count();
    await chat.getByRole("button", { name: "Why is my job slow?" }).click();
    await expect(answers).toHaveCount(before + 1, { timeout: 120_000 });
    if (size === "phone") await scrollTo(page, "[data-testid='chat']");
    await snap(page, size, "07-chat");
  }

  // The sample (sample-badost: a slow OST) at the top of its report, and the help desk's triage list.
  await page.setViewportSize(SIZES.desktop);
  const page1 = await apiGet<{ items: { id: string; filename: string }[] }>("/api/v1/analyses?limit=10", s.tokens.sam);
  const sample = page1.items.find((i) => i.filename === "sample-badost.darshan");
  if (sample) {
    await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(sample.id)}`);
    await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
    await snap(page, "desktop", "11-badost-report");
  }
  const signInAs = async (token: string): Promise<void> => {
    await page.evaluate(() => {
      sessionStorage.clear();
    });
    await signIn(page, token);
  };
  await signInAs(s.tokens.helen);
  await page.goto(`${s.baseURL}/all`);
  await expect(page.getByTestId("job-row").first()).toBeVisible();
  await snap(page, "desktop", "12-triage-list");
  await signInAs(s.tokens.sam);

  // The report in the dark theme.
  await page.setViewportSize(SIZES.desktop);
  await page.emulateMedia({ colorScheme: "dark", reducedMotion: "reduce" });
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(id)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await snap(page, "desktop", "08-report-dark");

  // The timeline at scale (the shared corpus's 384-rank DXT log): the density view, then a zoomed window.
  const scale = s.scaleLog;
  if (!scale) return;
  await page.emulateMedia({ colorScheme: "light", reducedMotion: "reduce" });
  const big = await apiUpload(scale, s.tokens.sam);
  for (const size of ["desktop", "phone"] as const) {
    await page.setViewportSize(SIZES[size]);
    await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(big)}`);
    const card = page.getByTestId("plot-timeline");
    await expect(card.locator(".plot-foot")).toHaveAttribute("data-mode", "density");
    // The card's heading just under the report's sticky bar.
    await page.evaluate(() => {
      const el = document.getElementById("plot-timeline");
      if (el) window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 100);
    });
    await snap(page, size, "09-timeline-density");
    for (let i = 0; i < 4; i++) await card.getByRole("button", { name: "Zoom in" }).click();
    await expect(card.locator(".plot-foot")).toHaveAttribute("data-mode", "window");
    await snap(page, size, "10-timeline-zoomed");
  }
});
