// The jobs lists a lead can scan (issue 29): at 1440 px every column that decides triage is on screen
// without sideways scrolling, one line per job; the columns shown are the reader's choice and are kept;
// rows are walked with the arrow keys and opened with Enter; a job with critical findings never reads
// "0 µs" lost; a help-desk reply shows its owner an unread marker (row, nav, page title) until the
// thread is read; the help desk's daily digest groups new jobs by cause; on a phone the rows are cards.
// One user of its own (lena, made here with `iodiag token create`) owns the jobs.
import { execFileSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page, test } from "@playwright/test";
import type { AnalysisPage } from "../src/api/client";
import { apiGet, apiUpload, expectNoHorizontalOverflow, shot, signIn, state } from "./helpers";

test.describe.configure({ mode: "serial" });

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.IODIAG_BIN ?? join(resolve(here, "..", ".."), ".venv", "bin", "iodiag");
const TRIAGE_COLUMNS = ["Unread", "Findings", "Time lost", "I/O share", "Top cause", "User", "Executable", "Job", "Triage", "Assignee", "Notes"];

let lena = "";
const jobs: string[] = [];

test.beforeAll(async () => {
  const s = state();
  lena = execFileSync(bin, ["token", "create", "--user", "lena", "--role", "user"], {
    env: { ...process.env, IODIAG_DATA_DIR: s.dataDir },
    stdio: ["ignore", "pipe", "ignore"],
  })
    .toString()
    .trim();
  jobs.push(await apiUpload(s.realLog, lena));
  jobs.push(await apiUpload(s.ostLogs?.bad ?? s.realLog, lena));
});

async function post(path: string, token: string, body?: unknown): Promise<void> {
  const r = await fetch(`${state().apiURL}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`POST ${path}: ${String(r.status)} ${await r.text()}`);
}

/** The table's box and each header's right edge: nothing past the box, the box does not scroll. */
async function measure(page: Page) {
  return page.getByTestId("jobs-table").evaluate((table) => {
    const box = table.parentElement as HTMLElement;
    const r = box.getBoundingClientRect();
    return {
      tableWidth: table.scrollWidth,
      boxClient: box.clientWidth,
      boxScroll: box.scrollWidth,
      boxRight: r.left + box.clientWidth,
      viewport: window.innerWidth,
      heads: Array.from(table.querySelectorAll("thead th")).map((th) => ({
        name: (th.textContent).replace(/[▲▼]/g, "").trim(),
        right: th.getBoundingClientRect().right,
      })),
      rowHeights: Array.from(table.querySelectorAll('tbody tr[data-testid="job-row"]')).map((tr) => tr.getBoundingClientRect().height),
    };
  });
}

test("at 1440 px the triage columns are all in view, one line per job", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, s.tokens.helen);
  await page.goto(`${s.baseURL}/all`);
  await expect(page.getByTestId("job-row").first()).toBeVisible();
  await expect(page.getByTestId("jobs-table")).not.toContainText("…");
  await shot(page, "triage-list-1440");
  const m = await measure(page);
  console.log(`triage list @1440: table ${String(m.tableWidth)} px in a ${String(m.boxClient)} px box (scrollWidth ${String(m.boxScroll)}); rows ${m.rowHeights.map((h) => h.toFixed(0)).join(", ")} px`);
  expect(m.boxScroll, "the table scrolls sideways").toBeLessThanOrEqual(m.boxClient);
  for (const name of TRIAGE_COLUMNS) {
    const h = m.heads.find((x) => x.name === name);
    expect(h, `no "${name}" column`).toBeDefined();
    expect(h?.right ?? Infinity, `"${name}" is cut off`).toBeLessThanOrEqual(Math.min(m.boxRight, m.viewport) + 0.5);
    await expect(page.getByRole("columnheader", { name: new RegExp(`^${name.replace("/", "\\/")}`) })).toBeInViewport();
  }
  // One line per job: no row is taller than a line of text and its padding.
  for (const h of m.rowHeights) expect(h).toBeLessThan(48);
  // The top cause leads with its cost, which the cell's one-line cut never hides.
  const cost = page.getByTestId("row-cause-cost").first();
  await expect(cost).toHaveText(/^≈ \d[\d.,]* (µs|ms|s|min|h)$/);
  const [costBox, cellBox] = await Promise.all([cost.boundingBox(), cost.locator("xpath=ancestor::td[1]").boundingBox()]);
  expect(costBox && cellBox && costBox.x + costBox.width <= cellBox.x + cellBox.width + 0.5, "the cost is cut").toBe(true);
  // The executable's name, with the full command line on hover.
  const row = page.locator(`[data-testid="job-row"][data-id="${jobs[0]}"]`);
  const api = await apiGet<AnalysisPage>("/api/v1/analyses?owner=lena", s.tokens.helen);
  const a = api.items.find((x) => x.id === jobs[0]);
  const cmd = a?.exe ?? a?.filename ?? "";
  await expect(row.locator("td.exe")).toHaveAttribute("title", cmd);
  const name = row.getByTestId("row-link");
  expect((await name.textContent())?.includes(" ")).toBe(false);
  // …and on expand.
  await row.getByTestId("row-expand").click();
  await expect(page.getByTestId("row-cmdline")).toHaveText(a?.exe ?? "(not in the log)");
  await shot(page, "triage-list-1440-expanded");
});

test("a job with critical findings never shows 0 µs lost", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, s.tokens.helen);
  await page.goto(`${s.baseURL}/all`);
  await expect(page.getByTestId("job-row").first()).toBeVisible();
  const api = await apiGet<AnalysisPage>("/api/v1/analyses?limit=200", s.tokens.helen);
  const critical = api.items.filter((r) => r.status === "done" && (r.counts.critical > 0 || r.max_severity === "critical"));
  for (const r of critical) {
    const cell = page.locator(`[data-testid="job-row"][data-id="${r.id}"]`).getByTestId("cell-time-lost");
    await expect(cell).not.toHaveText(/^\s*0\s*(µs|s|ms)?\s*$/);
    if (!r.run?.time_lost_s) {
      await expect(cell).toContainText("unknown");
      await expect(cell).toHaveAttribute("title", /critical findings/);
    }
  }
  // Every listed time lost reads as a duration, "unknown" or a dash: never "0 µs".
  for (const t of await page.getByTestId("cell-time-lost").allTextContents()) expect(t).not.toMatch(/^0 µs/);
});

test("the columns shown are the user's choice and are kept", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, lena);
  await page.goto(`${s.baseURL}/jobs`);
  await expect(page.getByTestId("job-row")).toHaveCount(2);
  await expect(page.getByRole("columnheader", { name: /^Job/ })).toBeVisible();
  await page.getByTestId("columns-menu").locator("summary").click();
  await page.getByTestId("col-job").uncheck();
  await page.getByTestId("col-runtime").check();
  await expect(page.getByRole("columnheader", { name: /^Job/ })).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: /^Run time/ })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("job-row")).toHaveCount(2);
  await expect(page.getByRole("columnheader", { name: /^Job/ })).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: /^Run time/ })).toBeVisible();
  // Another user's choice is their own.
  expect(await page.evaluate(() => localStorage.getItem("iodiag.columns.helen"))).toBeNull();
  await page.getByTestId("columns-menu").locator("summary").click();
  await page.getByRole("button", { name: "Defaults" }).click();
  await expect(page.getByRole("columnheader", { name: /^Job/ })).toBeVisible();
});

test("arrow keys walk the rows and Enter opens the job", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, lena);
  await page.goto(`${s.baseURL}/jobs`);
  const rows = page.getByTestId("job-row");
  await expect(rows).toHaveCount(2);
  await page.getByTestId("search").focus();
  // The rows are one tab stop: the first row takes it.
  await rows.first().focus();
  await expect(rows.first()).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(rows.first()).toBeFocused();
  await page.keyboard.press("ArrowDown");
  const id = await rows.nth(1).getAttribute("data-id");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/analyses/${id ?? "none"}$`));
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
});

test("a help-desk reply shows its owner an unread marker until the thread is read", async ({ page }) => {
  const s = state();
  const job = jobs[1];
  await post(`/api/v1/analyses/${encodeURIComponent(job)}/replies`, s.tokens.helen, { text: "Hello lena, please look at the slow OST.", drafted: false });
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, lena);
  await page.goto(`${s.baseURL}/jobs`);
  const row = page.locator(`[data-testid="job-row"][data-id="${job}"]`);
  await expect(row.getByTestId("unread-badge")).toContainText("1 unread reply");
  await expect(row.getByTestId("unread-badge").locator('[aria-hidden="true"]')).toHaveText("1");
  await expect(page.getByTestId("nav-unread")).toContainText("1 unread reply");
  await expect(page).toHaveTitle(/^\(1\) /);
  // The Unread filter keeps only that job.
  await page.getByTestId("filter-unread").check();
  await expect(page.getByTestId("job-row")).toHaveCount(1);
  await page.getByTestId("filter-unread").uncheck();
  // Opening the thread clears the marker.
  await row.getByTestId("row-link").click();
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  await expect(page.getByTestId("reply-thread").getByTestId("reply").first()).toContainText("slow OST");
  // The job page marks the thread read when it shows it; the API does too, whatever that page does.
  await post(`/api/v1/analyses/${encodeURIComponent(job)}/replies/read`, lena);
  await page.getByRole("link", { name: "My jobs" }).click();
  await expect(page.getByTestId("job-row")).toHaveCount(2);
  await expect(row.getByTestId("unread-badge")).toHaveCount(0);
  await expect(page.getByTestId("nav-unread")).toHaveCount(0);
  await expect(page).not.toHaveTitle(/^\(\d+\) /);

  // The owner answers: the help desk's list shows that reply as unread on the row.
  await post(`/api/v1/analyses/${encodeURIComponent(job)}/replies`, lena, { text: "Thanks, will restripe.", drafted: false });
  await page.getByRole("button", { name: "Sign out" }).click();
  await signIn(page, s.tokens.helen);
  await page.goto(`${s.baseURL}/all`);
  await expect(page.locator(`[data-testid="job-row"][data-id="${job}"]`).getByTestId("unread-badge")).toBeVisible();
  await expect(page).toHaveTitle(/^\(\d+\) /);
});

test("the help desk's daily digest groups new jobs by cause with node-hours lost", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, s.tokens.helen);
  // A last visit before lena's uploads: they are new.
  await page.evaluate(() => {
    localStorage.setItem("iodiag.lastVisit.helen", new Date(Date.now() - 3600 * 1000).toISOString());
  });
  await page.goto(`${s.baseURL}/all`);
  await page.getByTestId("view-digest").click();
  const digest = page.getByTestId("digest");
  await expect(digest).toBeVisible();
  await expect(digest.getByRole("heading", { level: 2 })).toContainText(/New since .*job\(s\)/);
  const groups = digest.getByTestId("digest-group");
  await expect(groups.first()).toBeVisible();
  await expect(digest).not.toContainText("…");
  await expect(groups.first().getByTestId("digest-stats")).toContainText(/\d+ job\(s\).*node-h(ours)? lost/);
  // Every new job of lena's is in one group.
  for (const id of jobs) await expect(digest.locator(`a[href="/analyses/${id}"]`)).toHaveCount(1);
  // Grouped under the cause the verdict names, with its finding code ("L04 · slow OST"), not a symptom.
  for (const id of jobs) {
    const group = groups.filter({ has: page.locator(`a[href="/analyses/${id}"]`) });
    await expect(group.locator(".digest-cause")).toHaveText(/^[A-Z]\d{2} · \S/);
  }
  await shot(page, "triage-digest-1440");
  await page.getByTestId("view-list").click();
  await expect(page.getByTestId("jobs-table")).toBeVisible();
});

test("at 390 px the rows are cards: nothing cut, nothing scrolls sideways", async ({ page }) => {
  const s = state();
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, s.tokens.helen);
  await page.goto(`${s.baseURL}/all`);
  await expect(page.getByTestId("job-row").first()).toBeVisible();
  await expectNoHorizontalOverflow(page, "all jobs @390");
  await shot(page, "triage-list-390");
  const cut = await page.getByTestId("job-row").evaluateAll((rows) =>
    rows.flatMap((tr) =>
      Array.from(tr.querySelectorAll("td"))
        .filter((td) => td.scrollWidth > td.clientWidth + 1 || td.getBoundingClientRect().right > window.innerWidth)
        .map((td) => `${td.className}: ${td.textContent}`),
    ),
  );
  expect(cut, "cells cut mid-value").toEqual([]);
  // The verdict is whole in a card (no line clamp).
  const clamped = await page.getByTestId("row-headline").evaluateAll((els) => els.filter((e) => e.scrollHeight > e.clientHeight + 1).length);
  expect(clamped, "headlines clamped on a phone").toBe(0);
  const card = await page.getByTestId("job-row").first().evaluate((tr) => getComputedStyle(tr).display);
  expect(card).toBe("flex");
});
