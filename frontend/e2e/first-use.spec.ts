// A first-time user, on a phone: no analyses yet, so the jobs page and the upload page say what to do
// (upload a .darshan log, where Darshan logs usually are) and offer "Try a sample log", one click that
// analyzes the server's bundled sample (POST /api/v1/analyses/sample) and opens its report.
import { expect, test } from "@playwright/test";
import type { AnalysisPage } from "../src/api/client";
import { apiGet, expectNoHorizontalOverflow, expectReachable, signIn, state } from "./helpers";

test.use({ viewport: { width: 390, height: 844 } });

test("a first-time user is told what to do and tries the sample log in one click", async ({ page }) => {
  const s = state();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await signIn(page, s.tokens.frank);

  // The jobs page: what to do instead of an empty table.
  await expect(page.getByTestId("job-count")).toHaveText(/^0 job/);
  const empty = page.getByTestId("empty-state");
  await expect(empty.getByRole("heading", { name: "No analyses yet" })).toBeVisible();
  await expect(empty).toContainText(".darshan");
  await expect(empty).toContainText("$DARSHAN_LOGPATH/YYYY/M/D/");
  await expect(empty).toContainText("darshan-config --log-path");
  await expect(page.getByTestId("jobs-table")).toHaveCount(0);
  await expectReachable(empty.getByRole("link", { name: "Upload a .darshan log" }));
  await expectReachable(empty.getByRole("button", { name: "Try a sample log" }));
  await expectNoHorizontalOverflow(page, "empty jobs page");

  // The upload page: the same pointers, and the sample on offer.
  await empty.getByRole("link", { name: "Upload a .darshan log" }).click();
  await expect(page.getByRole("heading", { name: "Upload a Darshan log" })).toBeVisible();
  await expect(page.getByTestId("sample-offer").getByRole("button", { name: "Try a sample log" })).toBeVisible();
  const where = page.locator("details.where-logs");
  await expect(where).toHaveAttribute("open", "");
  await expect(where).toContainText("$DARSHAN_LOGPATH/YYYY/M/D/");
  await expectNoHorizontalOverflow(page, "upload page, first time");

  // One click: the sample is analyzed and its report opens.
  await page.goto(`${s.baseURL}/jobs`);
  const submitted = page.waitForResponse((r) => r.url().endsWith("/api/v1/analyses/sample") && r.request().method() === "POST");
  await page.getByTestId("empty-state").getByRole("button", { name: "Try a sample log" }).click();
  const res = await submitted;
  expect([200, 201, 202]).toContain(res.status());
  const out = (await res.json()) as { id: string; status: string; url: string };
  await page.waitForURL(new RegExp(`/analyses/${out.id}$`));
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId("verdict-headline")).toBeVisible();
  await expectNoHorizontalOverflow(page, "the sample's report");
  // Its long command line wraps across the header card's width, not one character per line.
  const head = await page.locator(".report-head").boundingBox();
  const exe = await page.locator(".report-head h1 .exe").boundingBox();
  expect(head?.width ?? 0).toBeGreaterThan(300);
  expect(exe?.width ?? 0).toBeGreaterThan(200);
  await page.evaluate(() => {
    window.scrollTo(0, document.documentElement.scrollHeight);
  });
  await expectNoHorizontalOverflow(page, "the sample's report, scrolled to the end");

  // It is this user's analysis now: the jobs page lists it and no longer shows the first-time help.
  const list = await apiGet<AnalysisPage>("/api/v1/analyses?owner=frank", s.tokens.frank);
  expect(list.items.map((r) => r.id)).toEqual([out.id]);
  await page.getByRole("link", { name: "My jobs" }).click();
  await expect(page.getByTestId("job-row")).toHaveCount(1);
  await expect(page.getByTestId("empty-state")).toHaveCount(0);
  await page.getByRole("link", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Upload a Darshan log" })).toBeVisible();
  await expect(page.getByTestId("sample-offer")).toHaveCount(0);
  expect(errors).toEqual([]);
});
