// The analysis page and the compare view (issue 29): replies rendered as Markdown on both sides, the unread
// count near the top and cleared once the thread is seen; heatmap ticks that count ranks; the OST plot on
// I/O time for a slow OST; the header's bytes with their layer; compare with any run (the picker) or with
// the application's usual run; and on a phone, compare numbers as cards with nothing cut.
// User sam (no other spec of this suite uploads as sam) owns the runs; helen (help desk) writes to him.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page, test } from "@playwright/test";
import type { AnalysisOut, PlotData, Report } from "../src/api/client";
import { apiGet, apiUpload, signIn, state, waitDone } from "./helpers";

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.IODIAG_BIN ?? join(resolve(here, "..", ".."), ".venv", "bin", "iodiag");

async function apiSend<T>(method: "POST", path: string, token: string, body?: unknown): Promise<T> {
  const r = await fetch(`${state().apiURL}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${String(r.status)} ${await r.text()}`);
  return (await r.json()) as T;
}

/** The one-click sample (PyDarshan's sample-badost: an ior run with a slow OST), analyzed for `token`. */
async function sample(token: string): Promise<string> {
  const { id } = await apiSend<{ id: string }>("POST", "/api/v1/analyses/sample", token);
  await waitDone(id, token);
  return id;
}

function guard(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

/** axe on the page as it is now: no serious or critical violation (e2e/a11y.spec.ts's bar). */
async function expectAccessible(page: Page, where: string): Promise<void> {
  const r = await new AxeBuilder({ page }).analyze();
  const blocking = r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join(", ")}`);
  expect(blocking, `${where}: serious/critical axe violations`).toEqual([]);
}

/** No cell of these rows is cut: each fits its own box and the window. */
async function expectNothingCut(rows: Locator, where: string): Promise<void> {
  const cut = await rows.evaluateAll((els) =>
    els.flatMap((tr) =>
      Array.from(tr.querySelectorAll("td, th")).flatMap((c) => {
        const el = c as HTMLElement;
        const r = el.getBoundingClientRect();
        const bad = el.scrollWidth > el.clientWidth + 1 || r.right > window.innerWidth + 0.5 || r.left < -0.5;
        return bad ? [`${el.innerText.replace(/\s+/g, " ")} (${String(Math.round(r.left))}–${String(Math.round(r.right))}, scroll ${String(el.scrollWidth)} > ${String(el.clientWidth)})`] : [];
      }),
    ),
  );
  expect(cut, `${where}: cut values`).toEqual([]);
}

test("replies render as Markdown on both sides; the unread count shows, then clears once the thread is seen", async ({ browser }) => {
  const s = state();
  const id = await apiUpload(s.realLog, s.tokens.sam);
  await apiSend("POST", `/api/v1/analyses/${id}/replies`, s.tokens.helen, {
    text: "**Your OST 3 is slow.** Read [Slow Lustre OST](/docs/lustre-slow-ost) and check `lfs df`.\n\n- restripe the directory\n- tell us the next job id",
    drafted: false,
  });
  expect((await apiGet<AnalysisOut>(`/api/v1/analyses/${id}`, s.tokens.sam)).unread_replies).toBe(1);

  const page = await browser.newPage();
  const errors = guard(page);
  // Hold "mark as read" until the count has been seen: the thread may already be in view.
  let release: () => void = () => undefined;
  const gate = new Promise<void>((ok) => {
    release = ok;
  });
  let reads = 0;
  await page.route("**/replies/read", async (route) => {
    reads++;
    await gate;
    await route.continue();
  });
  await signIn(page, s.tokens.sam);
  await page.goto(`${s.baseURL}/analyses/${id}`);
  const link = page.getByTestId("messages-link");
  await expect(link).toHaveText("Messages (1 unread)");
  await expect(link).toBeInViewport();
  const thread = page.getByTestId("reply-thread");
  await link.click();
  await expect(thread).toBeFocused();
  await expect(thread).toBeInViewport();
  release();
  await expect(link).toHaveText("Messages (1)");
  expect(reads).toBeGreaterThan(0);
  await expect.poll(async () => (await apiGet<AnalysisOut>(`/api/v1/analyses/${id}`, s.tokens.sam)).unread_replies).toBe(0);

  // Markdown, not markup: bold, code, a list, and the guide as an in-app link.
  const reply = thread.getByTestId("reply").first();
  await expect(reply.locator(".reply-text strong")).toHaveText("Your OST 3 is slow.");
  await expect(reply.locator(".reply-text code")).toHaveText("lfs df");
  await expect(reply.locator("li")).toHaveCount(2);
  await expect(reply).not.toContainText("**");
  await expect(reply).not.toContainText("](");
  const guide = reply.getByRole("link", { name: "Slow Lustre OST" });
  await expect(guide).toHaveAttribute("href", "/docs/lustre-slow-ost");
  await expect(reply.locator("script")).toHaveCount(0);

  // The owner answers in Markdown; the help desk sees it rendered, and its own unread count.
  await thread.getByTestId("reply-text").fill("Thanks, **restriped**: see [the guide](/docs/lustre-slow-ost).");
  await thread.getByTestId("send-reply").click();
  await expect(thread.getByTestId("reply")).toHaveCount(2);
  await expect(thread.getByTestId("reply").nth(1).locator(".reply-text strong")).toHaveText("restriped");
  await guide.click();
  await page.waitForURL(/\/docs\/lustre-slow-ost$/);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await page.close();

  const staff = await browser.newPage();
  await signIn(staff, s.tokens.helen);
  await staff.goto(`${s.baseURL}/analyses/${id}`);
  const staffLink = staff.getByTestId("messages-link");
  await expect(staffLink).toHaveText(/^Messages( \(1 unread\)| \(2\))$/);
  const theirs = staff.getByTestId("reply-thread").getByTestId("reply").nth(1);
  await expect(theirs.locator(".reply-text strong")).toHaveText("restriped");
  await expect(theirs).not.toContainText("**");
  await staffLink.click();
  await expect(staffLink).toHaveText("Messages (2)");
  await staff.close();
  expect(errors).toEqual([]);
});

test("heatmap y ticks count ranks, for a job with more ranks than rows", async ({ page }) => {
  const s = state();
  const dir = mkdtempSync(join(tmpdir(), "iodiag-e2e-heat-"));
  const yaml = join(dir, "wide.yaml");
  writeFileSync(
    yaml,
    [
      "name: e2e-512-ranks",
      "description: 512 ranks write a shared file (more ranks than heatmap rows)",
      "job: {nprocs: 512, nodes: 8, runtime: 20.0, exe: \"wide-writer\", jobid: 5120512, mounts: [{path: /scratch, fs: lustre, ost_count: 8}, {path: /, fs: ext4}]}",
      "dxt: true",
      "files:",
      "  - {path: /scratch/wide.out, lustre: {stripe_size: 1MiB, stripe_count: 8}}",
      "program:",
      "  - {ranks: all, file: /scratch/wide.out, interface: posix, op: write, count: 2, size: 1MiB, layout: interleaved, seconds_per_op: 0.2}",
      "",
    ].join("\n"),
  );
  const log = join(dir, "wide.darshan");
  execFileSync(bin, ["synth", yaml, "-o", log], { stdio: ["ignore", "ignore", "inherit"] });
  // The body in one buffer (a streamed one met EPIPE once on this loaded machine), and one retry.
  const post = async () => {
    const form = new FormData();
    form.append("file", new Blob([readFileSync(log)]), "wide.darshan");
    return fetch(`${s.apiURL}/api/v1/analyses`, { method: "POST", body: form, headers: { Authorization: `Bearer ${s.tokens.sam}` } });
  };
  const r = await post().catch(async () => post());
  const text = await r.text();
  expect(r.ok, `upload: ${String(r.status)} ${text}`).toBe(true);
  const { id } = JSON.parse(text) as { id: string };
  await waitDone(id, s.tokens.sam);
  const plots = await apiGet<PlotData>(`/api/v1/analyses/${id}/plots`, s.tokens.sam);
  const heat = plots.heatmap;
  expect(heat, "the 512-rank log has a heatmap").toBeTruthy();
  if (!heat) return;
  expect(heat.ranks_total).toBe(512);
  expect(heat.rank.length).toBeLessThan(heat.ranks_total);

  await signIn(page, s.tokens.sam);
  await page.goto(`${s.baseURL}/analyses/${id}`);
  const plot = page.getByTestId("plot-heatmap");
  await plot.scrollIntoViewIfNeeded();
  const canvas = plot.locator("canvas");
  await expect(canvas).toHaveAttribute("data-y-ticks", /\d/);
  const ticks = ((await canvas.getAttribute("data-y-ticks")) ?? "").split("|").map(Number);
  expect(ticks.length).toBeGreaterThan(1);
  const last = ticks[ticks.length - 1] ?? 0;
  expect(last).toBeLessThanOrEqual(heat.ranks_total - 1);
  expect(last).toBeGreaterThanOrEqual(heat.ranks_total / 2);
  for (const t of ticks) expect(heat.rank, `tick ${String(t)} is a row's first rank`).toContain(t);
  await expect(plot.locator(".axis-label.y")).toContainText("rank");
  await expect(plot.locator(".axis-label.y")).toContainText("512 ranks");

  // Hovering the top row names the ranks its tick counts from.
  const box = await canvas.boundingBox();
  if (!box) throw new Error("no heatmap canvas");
  await page.mouse.move(box.x + box.width * 0.5, box.y + 22);
  const tip = plot.locator(".plot-tip");
  await expect(tip).toContainText(/ranks? \d+/);
  const first = Number(/ranks? (\d+)/.exec((await tip.textContent()) ?? "")?.[1] ?? -1);
  expect(first).toBeGreaterThanOrEqual(last);
  expect(first).toBeLessThanOrEqual(heat.ranks_total - 1);
});

test("the sample's OST plot opens on I/O time; Show in plots on the slow OST switches it back to time", async ({ page }) => {
  const s = state();
  test.skip(s.ostLogs === null, "PyDarshan's sample logs are missing");
  const errors = guard(page);
  const id = await sample(s.tokens.sam);
  const report = await apiGet<Report>(`/api/v1/analyses/${id}/report.json`, s.tokens.sam);
  const codes = report.findings.map((f) => f.code);
  expect(codes.some((c) => c === "L04" || c === "L05")).toBe(true);
  await signIn(page, s.tokens.sam);
  await page.goto(`${s.baseURL}/analyses/${id}`);
  const card = page.getByTestId("ost-card");
  await expect(card).toHaveAttribute("data-metric", "time");
  await expect(card.getByRole("radio", { name: "I/O time" })).toBeChecked();
  await card.getByText("Bytes", { exact: true }).click();
  await expect(card).toHaveAttribute("data-metric", "bytes");
  const code = codes.includes("L04") ? "L04" : "L05";
  await page.locator(`#finding-${code}`).getByRole("button", { name: "Show in plots" }).click();
  await expect(card).toHaveAttribute("data-metric", "time");
  await expect(card).toBeFocused();
  expect(errors).toEqual([]);
});

test("the header says which layer its bytes count", async ({ page }) => {
  const s = state();
  const id = await apiUpload(s.realLog, s.tokens.sam);
  const report = await apiGet<Report>(`/api/v1/analyses/${id}/report.json`, s.tokens.sam);
  await signIn(page, s.tokens.sam);
  await page.goto(`${s.baseURL}/analyses/${id}`);
  const layers = (report.interfaces ?? []).filter((i) => i.bytes_read > 0 || i.bytes_written > 0);
  const counted = layers.filter((i) => i.counted).map((i) => i.name);
  test.skip(layers.length < 2, "this log moves bytes through one layer only");
  const facts = page.locator(".head-facts");
  await expect(facts).toContainText(`through ${counted[0] ?? ""}`);
  // A layer beneath (or above) that moved other bytes is named with them.
  const total = report.io_share?.bytes_read ?? 0;
  const other = layers.find((i) => !i.counted && i.bytes_read > 0 && Math.abs(i.bytes_read - total) > 0.005 * Math.max(1, total));
  if (other) await expect(page.getByTestId("fact-read")).toContainText(`through ${other.name}`);
});

test("compare with any run through the picker, and with the application's usual run", async ({ page }) => {
  const s = state();
  const logs = s.ostLogs;
  test.skip(logs === null, "PyDarshan's sample logs are missing");
  if (!logs) return;
  const errors = guard(page);
  const bad = await sample(s.tokens.sam);
  const good = await apiUpload(logs.good, s.tokens.sam);
  const other = await apiUpload(s.realLog, s.tokens.sam);
  const badRun = await apiGet<AnalysisOut>(`/api/v1/analyses/${bad}`, s.tokens.sam);
  await signIn(page, s.tokens.sam);

  // The picker: find the earlier run by executable, then by job id; it opens the compare view.
  await page.goto(`${s.baseURL}/analyses/${good}`);
  const entry = page.getByTestId("compare-entry");
  await entry.getByTestId("compare-pick").click();
  const picker = entry.getByTestId("compare-picker");
  await expect(picker.getByTestId("picker-result").first()).toBeVisible();
  await picker.getByLabel("Executable contains").fill("ior");
  await picker.getByTestId("picker-search").click();
  await expect(picker.getByTestId("picker-result")).not.toHaveCount(0);
  await expect(picker.getByTestId("picker-results")).not.toContainText("mpi-io-test");
  if (badRun.job_id) {
    await picker.getByLabel("Job id").fill(badRun.job_id);
    await picker.getByTestId("picker-search").click();
    await expect(picker.getByTestId("picker-result")).toHaveCount(1);
  }
  const today = new Date();
  const day = `${String(today.getFullYear())}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
  await picker.getByLabel("Submitted from").fill(day);
  await picker.getByLabel("Submitted to").fill(day);
  await picker.getByTestId("picker-search").click();
  const hit = picker.locator(`a[href="/compare/${good}/${bad}"]`);
  await expect(hit).toBeVisible();
  await expectAccessible(page, "the analysis page, the picker open");
  await hit.click();
  await page.waitForURL(new RegExp(`/compare/${good}/${bad}$`));
  await expect(page.getByTestId("compare-verdict")).toBeVisible();
  await expect(page.getByTestId("metrics").getByTestId("metric-row").first()).toBeVisible();

  // Another program, picked the same way: "Compare anyway".
  await page.goto(`${s.baseURL}/analyses/${good}`);
  await page.getByTestId("compare-pick").click();
  const toOther = page.getByTestId("compare-picker").locator(`a[href="/compare/${good}/${other}"]`);
  await toOther.click();
  await expect(page.getByTestId("not-comparable")).toBeVisible();
  await page.getByRole("button", { name: "Compare anyway" }).click();
  await expect(page.getByTestId("forced")).toBeVisible();

  // The usual run: with two runs of ior, the other one is the median.
  await page.goto(`${s.baseURL}/analyses/${good}`);
  await page.getByTestId("compare-median").click();
  await page.waitForURL(new RegExp(`/compare/${good}/median$`));
  await expect(page.getByTestId("median-lead")).toContainText("1 other finished run");
  await expect(page.getByTestId("compare-verdict")).toBeVisible();
  await expect(page.getByTestId("run-a")).toContainText("L04");
  await expectAccessible(page, "compare with the usual run");

  // A program with no other run: the server's one line, shown where the button is.
  await page.goto(`${s.baseURL}/analyses/${other}`);
  await page.getByTestId("compare-median").click();
  await expect(page.getByTestId("median-note")).toBeVisible();
  await expect(page.getByTestId("median-note")).not.toBeEmpty();
  await expect(page.getByTestId("median-note")).toContainText(/^No other finished run of mpi-io-test/);
  await expect(page.getByTestId("median-note").locator("code")).toHaveText("mpi-io-test");
  await expect(page).toHaveURL(new RegExp(`/analyses/${other}$`));
  expect(errors).toEqual([]);
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("compare numbers and the layers across the stack are cards with nothing cut", async ({ page }) => {
    const s = state();
    const logs = s.ostLogs;
    test.skip(logs === null, "PyDarshan's sample logs are missing");
    if (!logs) return;
    const bad = await sample(s.tokens.sam);
    const good = await apiUpload(logs.good, s.tokens.sam);
    await signIn(page, s.tokens.sam);
    await page.goto(`${s.baseURL}/compare/${bad}/${good}`);
    const rows = page.getByTestId("metrics").getByTestId("metric-row");
    await expect(rows.first()).toBeVisible();
    await rows.first().scrollIntoViewIfNeeded();
    await expect(rows.first().getByText("Change %")).toBeVisible();
    await expect(rows.first().getByText("Run B")).toBeVisible();
    await expectNothingCut(rows, "compare numbers");
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await expectAccessible(page, "compare at 390 px");

    const mpi = await apiUpload(s.realLog, s.tokens.sam);
    const report = await apiGet<Report>(`/api/v1/analyses/${mpi}/report.json`, s.tokens.sam);
    test.skip(!report.cross_layer, "this log has no cross-layer summary");
    await page.goto(`${s.baseURL}/analyses/${mpi}`);
    const stack = page.locator("#crosslayer table.crosslayer").first();
    await stack.scrollIntoViewIfNeeded();
    await expect(stack.getByText("median write").first()).toBeVisible();
    await expectNothingCut(stack.locator("tbody tr"), "across the I/O stack");
    await expectAccessible(page, "the analysis page at 390 px");
  });
});
