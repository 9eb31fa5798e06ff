import { basename } from "node:path";
import { expect, type Page, test } from "@playwright/test";
import { dropFile, shot, signIn, state } from "./helpers";

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
  await expect(page.getByTestId("io-verdict")).toContainText("of the run time in I/O");
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
  const rec = page.getByTestId("recommendation").first();
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
    const res = await route.fetch();
    const body = (await res.json()) as Record<string, unknown>;
    if (held++ < 4) Object.assign(body, { status: "running", stage: "analyzing", progress: 0.45, findings: null });
    await route.fulfill({ response: res, json: body });
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
  await page.getByRole("button", { name: "Save" }).click();
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
