import { existsSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page, test } from "@playwright/test";
import type { AnalysisPage, Comparison, Report } from "../src/api/client";
import { apiGet, dropFile, shot, signIn, state } from "./helpers";

test.describe.configure({ mode: "serial" });

let aliceJob = "";
let bobJob = "";

/** Fail the test if any dialog (alert, confirm) opens, and collect page errors. */
function guard(page: Page): { dialogs: string[]; errors: string[] } {
  const seen = { dialogs: [] as string[], errors: [] as string[] };
  page.on("dialog", (d) => {
    seen.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("pageerror", (e) => seen.errors.push(e.message));
  return seen;
}

async function uploadAndWait(page: Page, path: string, how: "drop" | "pick", screenshot?: string): Promise<string> {
  await page.getByRole("link", { name: "Upload", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Upload a Darshan log" })).toBeVisible();
  if (how === "drop") await dropFile(page, '[data-testid="dropzone"]', path, basename(path));
  else await page.getByTestId("file-input").setInputFiles(path);
  await expect(page.getByTestId("dropzone")).toContainText(basename(path));
  if (screenshot) await shot(page, screenshot);
  await page.getByRole("button", { name: "Upload and analyze" }).click();
  await page.waitForURL(/\/analyses\/[0-9a-f-]+$/);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible({ timeout: 120_000 });
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
}

test("a user uploads a log, reads the report and asks why the job is slow", async ({ page }) => {
  const seen = guard(page);
  const s = state();
  await signIn(page, s.tokens.alice);
  await expect(page.getByTestId("job-count")).toHaveText(/^0 job/);
  await shot(page, "01-my-jobs-empty");
  aliceJob = await uploadAndWait(page, s.realLog, "drop", "01b-upload");

  // Header: job, exe, ranks, runtime, I/O share with a verdict.
  await expect(page.getByRole("heading", { level: 1 })).toContainText("mpi-io-test");
  await expect(page.getByTestId("io-share")).toContainText("of the run time in I/O");
  await expect(page.getByTestId("verdict-headline")).toBeVisible();
  await expect(page.getByTestId("counts")).toContainText("critical");
  await expect(page.getByTestId("finding").first()).toBeVisible();
  // Plots drawn from the plot data.
  await expect(page.getByTestId("plot-timeline")).toBeVisible();
  await expect(page.getByTestId("plot-sizes")).toBeVisible();
  await shot(page, "02-report-top");

  // Zoom and pan a plot with the wheel and a drag; Reset becomes available.
  const canvas = page.getByTestId("plot-timeline").locator("canvas");
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  if (!box) throw new Error("no timeline canvas");
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  const reset = page.getByTestId("plot-timeline").getByRole("button", { name: "Reset" });
  await expect(reset).toBeEnabled();
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 120, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await shot(page, "03-timeline-zoomed");
  await reset.click();
  await expect(reset).toBeDisabled();
  await page.getByTestId("plot-timeline").locator("..").getByText("All layers").click();
  await shot(page, "03b-timeline-all-layers");

  // Selecting a finding with ranks highlights them in the plots.
  const withRanks = page.getByTestId("finding").filter({ has: page.getByRole("button", { name: "Show in plots" }) }).first();
  if ((await withRanks.count()) > 0) {
    await withRanks.getByRole("button", { name: "Show in plots" }).click();
    await expect(page.getByTestId("highlight-banner")).toBeVisible();
    await shot(page, "04-finding-highlighted");
  }

  // Chat: a suggested question, streamed answer, citations, provenance.
  const chat = page.getByTestId("chat");
  await chat.getByRole("button", { name: "Why is my job slow?" }).click();
  await expect(chat.getByTestId("msg-user")).toContainText("Why is my job slow?");
  await expect(chat.getByTestId("provenance")).toHaveText("template", { timeout: 120_000 });
  const cites = chat.getByTestId("citations");
  await expect(cites).toBeVisible();
  // The answer is rendered Markdown: its finding markers are buttons, no raw markup shows.
  const answer = chat.getByTestId("msg-assistant").last();
  await expect(answer.locator("button.cite-inline").first()).toBeVisible();
  await expect(answer).not.toContainText("**");
  await expect(answer).not.toContainText(/\[[A-Z][0-9]{2}\]/);
  await expect(cites.getByRole("button").first()).toBeVisible();
  await shot(page, "05-chat-answer");
  // A finding citation scrolls to its card.
  const first = cites.getByRole("button").first();
  const code = ((await first.textContent()) ?? "").split(" ")[0] ?? "";
  await first.click();
  await expect(page.locator(`#finding-${code}`)).toBeInViewport();
  // A doc citation opens the knowledge document.
  const doc = cites.getByRole("link").first();
  if ((await doc.count()) > 0) {
    await doc.click();
    await expect(page.getByRole("button", { name: "← Back" })).toBeVisible();
    await shot(page, "06-knowledge-doc");
    await page.goBack();
    await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  }

  // The token is in sessionStorage only: not in the URL, not in localStorage.
  expect(page.url()).not.toContain(s.tokens.alice);
  const stored = await page.evaluate(() => JSON.stringify(localStorage));
  expect(stored).not.toContain(s.tokens.alice);

  // Recommendations link to the knowledge documents and carry copyable snippets.
  // (the first one that has a guide: a recommendation new to the registry may not have one yet)
  const rec = page.getByTestId("recommendation").filter({ has: page.getByRole("link") }).first();
  await rec.scrollIntoViewIfNeeded();
  await expect(rec.getByRole("link").first()).toHaveAttribute("href", /^\/docs\//);
  const snippets = rec.locator("details.snippets");
  if ((await snippets.count()) > 0) {
    await snippets.locator("summary").click();
    await expect(snippets.getByRole("button", { name: "Copy" }).first()).toBeVisible();
  }
  await shot(page, "02b-recommendation");

  // Exports: the Markdown goes to the clipboard for a ticket reply, or downloads.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy Markdown" }).click();
  await expect(page.getByText("Markdown copied")).toBeVisible();
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  expect(clip).toContain("mpi-io-test");
  const [md] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download .md" }).click()]);
  expect(md.suggestedFilename()).toMatch(/\.md$/);
  const [html] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download HTML" }).click()]);
  expect(html.suggestedFilename()).toMatch(/\.html$/);

  expect(seen.dialogs).toEqual([]);
  expect(seen.errors).toEqual([]);
});

test("a file named <img src=x onerror=alert(1)> shows literally and runs nothing", async ({ page }) => {
  const seen = guard(page);
  const s = state();
  await signIn(page, s.tokens.bob);
  // Show the live status page for a few polls (the real answers, held at "running"), so it can be seen.
  let held = 0;
  await page.route(/\/api\/v1\/analyses\/[0-9a-f-]+$/, async (route) => {
    try {
      const res = await route.fetch();
      const body = (await res.json()) as Record<string, unknown>;
      if (held++ < 4) Object.assign(body, { status: "running", stage: "analyzing", progress: 0.45, findings: null });
      await route.fulfill({ response: res, json: body });
    } catch {
      // The page moved on while this poll was in flight: its response is gone.
    }
  });
  const done = uploadAndWait(page, s.xssLog, "pick");
  await expect(page.getByTestId("progress")).toContainText("analyzing");
  await shot(page, "07a-analysis-progress");
  bobJob = await done;
  await page.unroute(/\/api\/v1\/analyses\/[0-9a-f-]+$/);
  const payload = "/scratch/<img src=x onerror=alert(1)>.dat";
  await expect(page.getByTestId("file-path").filter({ hasText: payload }).first()).toBeVisible();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("./app <script>alert('exe')</script>");
  // Source lines (from the log's call stacks) are text too.
  const src = page.locator(".source-lines").filter({ hasText: "<b>io</b>.c:42" }).first();
  await expect(src).toBeVisible();
  await src.scrollIntoViewIfNeeded();
  await shot(page, "07c-source-lines");
  expect(await page.locator("main b").count()).toBe(0);
  // No element was made from the payload.
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await page.locator("main script").count()).toBe(0);
  // The plots' file legend and a chat answer naming the file show it as text too.
  await expect(page.getByTestId("plot-spatiality")).toContainText(payload);
  const chat = page.getByTestId("chat");
  await chat.getByRole("button", { name: "Which file is worst?" }).click();
  await expect(chat.getByTestId("provenance")).toBeVisible({ timeout: 120_000 });
  await expect(chat.getByTestId("msg-assistant")).toContainText("<img src=x onerror=alert(1)>");
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  await shot(page, "07-xss-literal");
  await page.locator("#plots").scrollIntoViewIfNeeded();
  await shot(page, "07b-plots-lustre", true);
  await page.waitForTimeout(500);
  expect(seen.dialogs).toEqual([]);
  expect(seen.errors).toEqual([]);
});

test("a user cannot open another user's job", async ({ page }) => {
  const s = state();
  expect(aliceJob).not.toBe("");
  await signIn(page, s.tokens.bob);
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(aliceJob)}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await shot(page, "08-not-yours");
  // And the job list shows only bob's own job.
  await page.getByRole("link", { name: "My jobs" }).click();
  await expect(page.getByTestId("job-row")).toHaveCount(1);
  await expect(page.getByTestId("job-row")).toHaveAttribute("data-id", bobJob);
});

test("help desk triages all jobs: filter, search, status and notes", async ({ page }) => {
  const s = state();
  await signIn(page, s.tokens.helen);
  await page.getByRole("link", { name: "All jobs" }).click();
  const rows = page.getByTestId("job-row");
  await expect(rows).toHaveCount(2);
  // Top findings are filled in.
  await expect(page.getByTestId("jobs-table")).not.toContainText("…");
  await shot(page, "09-all-jobs");

  // Server-side filter: a finding code only bob's job has.
  await page.getByTestId("filter-code").fill("P06");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("bob");
  await page.getByTestId("filter-code").fill("");
  await expect(rows).toHaveCount(2);
  // Client-side search.
  await page.getByTestId("search").fill("mpi-io-test");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("alice");
  await page.getByTestId("search").fill("");

  // Triage: status and a note on alice's job.
  const alice = rows.filter({ hasText: "alice" });
  await alice.getByTestId("triage-select").selectOption("in-progress");
  await expect(alice.getByTestId("triage-select")).toHaveValue("in-progress");
  await alice.getByRole("button", { name: "Add note" }).click();
  await page.getByLabel("Assignee").fill("helen");
  await page.getByTestId("triage-note").fill("Asked the user to enable collective buffering.");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(alice).toContainText("helen");
  // Filter by triage status (server-side).
  await page.getByTestId("filter-triage").selectOption("in-progress");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("alice");
  await shot(page, "10-triage-filtered");
  // Sorting by user flips the order.
  await page.getByTestId("filter-triage").selectOption("");
  await expect(rows).toHaveCount(2);
  await page.getByRole("button", { name: "User" }).click();
  await expect(rows.first()).toContainText("alice");
  await page.getByRole("button", { name: "User" }).click();
  await expect(rows.first()).toContainText("bob");
});

test("keyboard navigation, visible focus and the dark theme", async ({ page }) => {
  const s = state();
  await page.emulateMedia({ colorScheme: "dark" });
  await signIn(page, s.tokens.alice);
  // Tab reaches the skip link first, then the navigation.
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const focused = page.locator(":focus");
  const outline = await focused.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe("none");
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(aliceJob)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe("rgb(246, 247, 249)");
  // A plot canvas takes keyboard focus and zooms with "+".
  const canvas = page.getByTestId("plot-timeline").locator("canvas");
  await canvas.focus();
  await page.keyboard.press("+");
  await expect(page.getByTestId("plot-timeline").getByRole("button", { name: "Reset" })).toBeEnabled();
  await shot(page, "11-report-dark");
  // The toggle switches to light.
  await page.getByRole("button", { name: "Switch to light theme" }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  await shot(page, "12-report-light-full", true);
});

test("the owner deletes a job", async ({ page }) => {
  const s = state();
  await signIn(page, s.tokens.bob);
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(bobJob)}`);
  await expect(page.getByRole("heading", { name: "Findings" })).toBeVisible();
  await page.getByRole("button", { name: "Delete…" }).click();
  await page.getByRole("button", { name: "Delete for good" }).click();
  await page.waitForURL(/\/jobs$/);
  await expect(page.getByTestId("job-count")).toHaveText(/^0 job/);
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(bobJob)}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
});

// The verdict: computed once by the backend (report.verdict) and only displayed. The page is checked
// against the report the API serves, so the numbers may change with the analysis; the structure may not.
const logs = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "shared", "logs", "darshan-logs");
const CAUSES_LOG = process.env.IODIAG_E2E_CAUSES_LOG ?? resolve(logs, "e3sm_io_heatmaps_and_dxt", "e3sm_io_heatmap_only.darshan");
const QUIET_LOG = process.env.IODIAG_E2E_QUIET_LOG ?? resolve(logs, "apmpi", "darshan-apmpi-2nodes-64mpi.darshan");

/** True when `first` comes before `second` in the document. */
async function before(page: Page, first: string, second: string): Promise<boolean> {
  return page.evaluate(
    ([a, b]) => {
      const x = document.querySelector(a);
      const y = document.querySelector(b);
      return x !== null && y !== null && (x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    },
    [first, second] as const,
  );
}

test("the report leads with the backend's verdict: headline, ranked causes, then costed findings", async ({ page }) => {
  test.skip(!existsSync(CAUSES_LOG), `${CAUSES_LOG} is missing`);
  const seen = guard(page);
  const s = state();
  await signIn(page, s.tokens.carol);
  const id = await uploadAndWait(page, CAUSES_LOG, "pick");
  const report = await apiGet<Report>(`/api/v1/analyses/${encodeURIComponent(id)}/report.json`, s.tokens.carol);
  const v = report.verdict;
  expect(v.io_matters).toBe(true);
  expect(["critical", "warning"]).toContain(v.level);
  const causes = v.causes ?? [];
  expect(causes.length).toBeGreaterThan(0);
  const top = causes[0];

  // The headline, exactly as the backend wrote it, in the verdict's tone, before any finding card.
  const verdict = page.getByTestId("verdict");
  await expect(verdict).toHaveAttribute("data-level", v.level);
  await expect(page.getByTestId("verdict-headline")).toHaveText(v.headline.replaceAll("`", ""));
  await expect(page.getByTestId("finding").first()).toBeVisible();
  expect(await before(page, '[data-testid="verdict-headline"]', '[data-testid="finding"]')).toBe(true);

  // The ranked causes: code, title, "≈ X (Y % of the run)", summary, action, in the backend's order.
  const items = verdict.getByTestId("cause");
  await expect(items).toHaveCount(causes.length);
  await expect(items.first()).toHaveAttribute("data-code", top.code);
  await expect(items.first()).toContainText(top.code);
  await expect(items.first()).toContainText(top.title);
  await expect(items.first().getByTestId("cause-cost")).toHaveText(/^≈ [0-9.]+ (µs|ms|s|min|h) \((<1|>99|[0-9]+) % of the run\)$/);
  await expect(items.first()).toContainText(top.summary.replaceAll("`", "").slice(0, 60));
  if (top.action) await expect(items.first()).toContainText("What to do:");
  expect(await items.evaluateAll((els) => els.map((e) => e.getAttribute("data-code")))).toEqual(causes.map((c) => c.code));
  if (v.where_time_went) await expect(page.getByTestId("where-time-went")).toHaveText(v.where_time_went.replaceAll("`", ""));
  // Backticked names and commands show as code, never as raw markup, in the verdict and on the cards
  expect(await verdict.innerText()).not.toContain("`");
  expect((await page.getByTestId("finding").allInnerTexts()).join("\n")).not.toContain("`");
  if ((v.caveats ?? []).length > 0) await expect(page.getByTestId("caveats").locator("li")).toHaveCount((v.caveats ?? []).length);
  expect(await before(page, '[data-testid="verdict-causes"]', '[data-testid="finding"]')).toBe(true);

  // Counts carry their severity; the interfaces table shows each module's bytes.
  await expect(page.getByTestId("counts")).toContainText(`${String(report.counts.critical)} critical`);
  const ifaces = report.interfaces ?? [];
  if (ifaces.length > 0) {
    await expect(page.getByTestId("interface-row")).toHaveCount(ifaces.length);
    await expect(page.getByTestId("interfaces")).toContainText(ifaces[0]?.name ?? "");
  }
  await shot(page, "13-verdict-causes");

  // Finding cards say what they cost; a card graded away from its detection rule says so.
  await expect(page.getByTestId("finding-cost").filter({ hasText: "costs ≈" }).first()).toBeVisible();
  const costed = report.findings.find((f) => f.severity !== "ok" && f.impact?.seconds !== null && f.impact?.seconds !== undefined);
  if (costed) await expect(page.locator(`#finding-${costed.code}`).getByTestId("finding-cost")).toContainText("costs ≈");
  const regraded = report.findings.find((f) => f.severity !== "ok" && f.detected_severity !== f.severity);
  if (regraded) {
    await expect(page.locator(`#finding-${regraded.code}`).getByTestId("detected-severity")).toHaveText(
      `detection rule alone: ${regraded.detected_severity}`,
    );
  }
  const descriptive = report.findings.find((f) => f.severity !== "ok" && !f.impact && f.detected_severity === f.severity);
  if (descriptive) await expect(page.locator(`#finding-${descriptive.code}`).getByTestId("finding-cost")).toHaveCount(0);

  // The top cause's card shows this job's concrete setting, as the API computed it.
  const topFinding = report.findings.find((f) => f.code === top.code);
  const firstAction = topFinding?.actions?.[0];
  if (firstAction) {
    await expect(page.locator(`#finding-${top.code}`).getByTestId("actions")).toContainText(firstAction.command);
  }

  // A cause's code takes the reader to its finding card.
  await verdict.getByRole("button", { name: top.code, exact: true }).first().click();
  await expect(page.locator(`#finding-${top.code}`)).toBeInViewport();
  await shot(page, "14-finding-cost");
  expect(seen.dialogs).toEqual([]);
  expect(seen.errors).toEqual([]);
});

const PYC_LOG = resolve(logs, "hdf5_diagonal_write_only", "hdf5_file_opens_only.darshan");

test("names and commands in backticks show as code on the cards, never as raw markup", async ({ page }) => {
  test.skip(!existsSync(PYC_LOG), `${PYC_LOG} is missing`);
  const s = state();
  await signIn(page, s.tokens.carol);
  const id = await uploadAndWait(page, PYC_LOG, "pick");
  const report = await apiGet<Report>(`/api/v1/analyses/${encodeURIComponent(id)}/report.json`, s.tokens.carol);
  const storm = report.findings.find((f) => f.code === "J03");
  expect(storm?.message).toContain("`*.pyc`");
  const card = page.locator("#finding-J03");
  await expect(card.locator(".message code").filter({ hasText: "*.pyc" })).toBeVisible();
  expect(await card.locator(".message").innerText()).not.toContain("`");
});

test("a job whose I/O does not matter says so first and shows no critical finding", async ({ page }) => {
  test.skip(!existsSync(QUIET_LOG), `${QUIET_LOG} is missing`);
  const seen = guard(page);
  const s = state();
  await signIn(page, s.tokens.carol);
  const id = await uploadAndWait(page, QUIET_LOG, "pick");
  const report = await apiGet<Report>(`/api/v1/analyses/${encodeURIComponent(id)}/report.json`, s.tokens.carol);
  expect(report.verdict.io_matters).toBe(false);

  const headline = page.getByTestId("verdict-headline");
  await expect(headline).toContainText("I/O is not why this job is slow");
  await expect(headline).toHaveText(report.verdict.headline);
  await expect(page.getByTestId("verdict")).toHaveAttribute("data-level", "ok");
  await expect(page.getByTestId("verdict-causes")).toHaveCount(0);
  await expect(page.getByTestId("counts")).toContainText("0 critical");
  await expect(page.locator('[data-testid="finding"].sev-critical')).toHaveCount(0);
  if (report.findings.some((f) => f.severity !== "ok")) {
    await expect(page.getByTestId("finding").first()).toBeVisible();
    expect(await before(page, '[data-testid="verdict-headline"]', '[data-testid="finding"]')).toBe(true);
  }
  await shot(page, "15-verdict-io-does-not-matter");
  expect(seen.dialogs).toEqual([]);
  expect(seen.errors).toEqual([]);
});

test("a user compares two runs of one application: run history, then the compare view", async ({ page }) => {
  const s = state();
  const logs = s.ostLogs;
  test.skip(logs === null, "PyDarshan's sample logs are missing");
  if (!logs) return;
  const seen = guard(page);
  await signIn(page, s.tokens.dave);

  // The first run of ior: no other runs yet, and the CLI that compares two logs.
  const bad = await uploadAndWait(page, logs.bad, "pick");
  await expect(page.getByTestId("history-empty")).toContainText("iodiag compare A.darshan B.darshan");

  // The second, later run: the card shows both runs on a trend and lists the other one.
  const good = await uploadAndWait(page, logs.good, "pick");
  const card = page.getByTestId("run-history");
  await expect(card.getByRole("heading", { name: "Runs of this application" })).toBeVisible();
  await expect(card.getByTestId("trend").locator("svg circle")).toHaveCount(4);
  const rows = card.getByTestId("history-row");
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toHaveAttribute("data-id", good);
  await expect(rows.first()).toContainText("this run");
  const other = card.locator(`[data-testid="history-row"][data-id="${bad}"]`);
  await expect(other).toContainText("6265799");
  await card.scrollIntoViewIfNeeded();
  await shot(page, "16-run-history");

  // Compare with the earlier run: it is run A, this one run B.
  await other.getByRole("link", { name: /^Compare with/ }).click();
  await page.waitForURL(new RegExp(`/compare/${bad}/${good}$`));
  const cmp = await apiGet<Comparison>(`/api/v1/analyses/${bad}/compare/${good}`, s.tokens.dave);
  const verdict = page.getByTestId("compare-verdict");
  await expect(verdict).toHaveText(/^I\/O time fell/);
  await expect(verdict).toHaveText(cmp.verdict.replaceAll("`", ""));
  // Both runs' own verdicts, side by side: A's top cause was the slow OST.
  await expect(page.getByTestId("run-a-headline")).toHaveText(cmp.a.headline.replaceAll("`", ""));
  await expect(page.getByTestId("run-b-headline")).toHaveText(cmp.b.headline.replaceAll("`", ""));
  await expect(page.getByTestId("run-a")).toContainText("L04");
  // The slow OST (L04) is resolved, with what it cost in run A and the change.
  const l04 = page.getByTestId("findings-resolved").locator('[data-testid="finding-change"][data-code="L04"]');
  await expect(l04).toContainText("Slow OST");
  await expect(l04).toContainText("not found");
  await expect(l04).toContainText("−");
  await expect(page.getByTestId("findings-new").getByTestId("finding-change")).toHaveCount(cmp.findings_new.length);
  await expect(page.getByTestId("metrics").getByTestId("metric-row")).toHaveCount(cmp.metrics.length);
  await expect(page.getByTestId("metrics")).toContainText("I/O time, busiest rank");
  if ((cmp.notes ?? []).length > 0) await expect(page.getByTestId("compare-notes").locator("li")).toHaveCount((cmp.notes ?? []).length);
  await shot(page, "17-compare-top");

  // Both runs' plots, A above B, on the same axes: zooming one zooms the other.
  const plotA = page.getByTestId("compare-plot-a").first();
  const plotB = page.getByTestId("compare-plot-b").first();
  await expect(plotA.locator("canvas")).toBeVisible();
  await expect(plotB.locator("canvas")).toBeVisible();
  await expect(plotA).toContainText("Run A");
  await expect(plotB).toContainText("Run B");
  const canvas = plotA.locator("canvas");
  await canvas.scrollIntoViewIfNeeded();
  await canvas.focus();
  await page.keyboard.press("+");
  await expect(plotB.getByRole("button", { name: "Reset" })).toBeEnabled();
  await plotB.getByRole("button", { name: "Reset" }).click();
  await expect(plotA.getByRole("button", { name: "Reset" })).toBeDisabled();
  await shot(page, "18-compare-plots", true);

  // The jobs list shows each run's verdict headline.
  await page.getByRole("link", { name: "My jobs" }).click();
  const list = await apiGet<AnalysisPage>("/api/v1/analyses?owner=dave", s.tokens.dave);
  const headline = list.items.find((r) => r.id === good)?.run?.headline ?? "";
  expect(headline).not.toBe("");
  await expect(page.locator(`[data-testid="job-row"][data-id="${good}"]`).getByTestId("row-headline")).toHaveText(headline.replaceAll("`", ""));
  await shot(page, "19-jobs-headlines");

  // Another program's run cannot be compared, unless asked to.
  const vpic = await uploadAndWait(page, logs.other, "pick");
  await page.goto(`${s.baseURL}/compare/${bad}/${vpic}`);
  await expect(page.getByTestId("not-comparable")).toContainText("different executables");
  await page.getByRole("button", { name: "Compare anyway" }).click();
  await expect(page.getByTestId("forced")).toBeVisible();
  await expect(page.getByTestId("compare-verdict")).toBeVisible();
  // Someone else's run: not found.
  expect(aliceJob).not.toBe("");
  await page.goto(`${s.baseURL}/compare/${bad}/${encodeURIComponent(aliceJob)}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
  expect(seen.dialogs).toEqual([]);
  expect(seen.errors).toEqual([]);
});

test("a factual question is answered in the first sentence with this job's numbers", async ({ page }) => {
  test.skip(!aliceJob, "needs the job uploaded by the first test");
  const s = state();
  const report = await apiGet<Report>(`/api/v1/analyses/${aliceJob}/report.json`, s.tokens.alice);
  await signIn(page, s.tokens.alice);
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(aliceJob)}`);
  const chat = page.getByTestId("chat");
  const badges = chat.getByTestId("provenance");
  await expect(chat.getByTestId("msg-user").first()).toBeVisible();
  await expect(badges.first()).toBeVisible();
  const firstSentence = async (question: string): Promise<string> => {
    const before = await badges.count();
    await chat.getByLabel("Your question").fill(question);
    await chat.getByRole("button", { name: "Ask", exact: true }).click();
    await expect(badges).toHaveCount(before + 1, { timeout: 120_000 });
    const text = (await chat.getByTestId("msg-assistant").last().innerText()).trim();
    return text.split(/(?<=[.!?])\s/)[0] ?? "";
  };
  // Which interface moved most bytes: the one the report's own interface totals name, each file once (POSIX
  // without the files opened through MPI-IO).
  const moved = (i: { own_bytes_read?: number; own_bytes_written?: number }): number =>
    (i.own_bytes_read ?? 0) + (i.own_bytes_written ?? 0);
  const counted = (report.interfaces ?? []).filter((i) => i.counted && moved(i) > 0);
  counted.sort((a, b) => moved(b) - moved(a));
  expect(await firstSentence("which interface did most of the I/O?")).toMatch(
    new RegExp(`^${counted[0]?.name ?? "POSIX"} did most of the I/O: `),
  );
  // Per-rank bytes: rank 0's own records, or that it has none.
  const rank0 = report.rank_table?.ranks?.find((r) => r.rank === 0);
  expect(await firstSentence("how many bytes did rank 0 write?")).toMatch(
    rank0
      ? /^Rank 0 wrote [0-9.,]+ [KMGTP]?i?B (in [0-9,]+ writes of [0-9.,]+ [KMGTP]?i?B on average )?through its own records/
      : /^(Rank 0 has no file records of its own|Darshan kept rank 0 as the (fastest|slowest) rank of the shared file)/,
  );
  // The file system of the busiest file, as the report names it.
  const fs = report.top_files?.find((f) => f.file_system)?.file_system;
  if (fs) expect((await firstSentence("what file system was that file on?")).toLowerCase()).toContain(fs.toLowerCase());
});

test("the three suggested questions each get their own, specific answer", async ({ page }) => {
  test.skip(!aliceJob, "needs the job uploaded by the first test");
  const s = state();
  const report = await apiGet<Report>(`/api/v1/analyses/${aliceJob}/report.json`, s.tokens.alice);
  await signIn(page, s.tokens.alice);
  await page.goto(`${s.baseURL}/analyses/${encodeURIComponent(aliceJob)}`);
  const chat = page.getByTestId("chat");
  const badges = chat.getByTestId("provenance");
  const answers: string[] = [];
  // The first test asked here already: wait for that conversation to load before counting answers.
  await expect(chat.getByTestId("msg-user").first()).toBeVisible();
  await expect(badges.first()).toBeVisible();
  const before = await badges.count();
  const asks = ["Why is my job slow?", "Which file is worst?", "What exactly should I set?"];
  for (const [i, q] of asks.entries()) {
    await chat.getByRole("button", { name: q }).click();
    await expect(badges).toHaveCount(before + i + 1, { timeout: 120_000 });
    answers.push((await chat.getByTestId("msg-assistant").last().innerText()).trim());
  }
  expect(new Set(answers).size).toBe(3);
  // Why slow: the verdict; which file: the file that took the time, by name; what to set: a concrete setting.
  expect(answers[0]).toContain(report.verdict.headline.split(" ")[0]);
  const top = report.top_files?.[0];
  if (top) expect(answers[1]).toContain(top.path.split("/").pop() ?? top.path);
  await expect(chat.getByTestId("msg-assistant").last().locator("code").first()).toBeVisible();
  expect(answers[2]).not.toEqual(answers[0]);
});
