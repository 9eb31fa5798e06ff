import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Locator, type Page } from "@playwright/test";
import type { E2EState } from "./global-setup";

const here = dirname(fileURLToPath(import.meta.url));
let signedInOnce = false;
export const SHOTS = resolve(here, "..", "test-results", "screenshots");

export function state(): E2EState {
  const file = process.env.IODIAG_E2E_STATE;
  if (!file) throw new Error("IODIAG_E2E_STATE is not set: run through `npm run test:e2e`");
  return JSON.parse(readFileSync(file, "utf-8")) as E2EState;
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${state().baseURL}/`);
  await page.getByLabel("API token").fill(token);
  if (!signedInOnce) {
    signedInOnce = true;
    await shot(page, "00-sign-in");
  }
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("who")).toBeVisible();
}

export async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  await settled(page);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

/** Wait until the page and its scrolled panes stop moving (a smooth scroll or a streamed answer's autoscroll
 * caught mid-way shows the sticky header displaced in the picture). */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const where = (): string =>
      [window.scrollY, ...Array.from(document.querySelectorAll<HTMLElement>("*"))
        .filter((e) => e.scrollHeight > e.clientHeight + 1)
        .map((e) => e.scrollTop)].join(",");
    const frame = (): Promise<void> => new Promise((r) => requestAnimationFrame(() => { r(); }));
    let last = where();
    for (let stable = 0, i = 0; stable < 3 && i < 120; i += 1) {
      await frame();
      const now = where();
      stable = now === last ? stable + 1 : 0;
      last = now;
    }
  });
}

/** Drop a file on an element the way a browser does (a real DataTransfer with a File). */
export async function dropFile(page: Page, selector: string, path: string, name: string): Promise<void> {
  const b64 = readFileSync(path).toString("base64");
  const dt = await page.evaluateHandle(
    ({ b64, name }) => {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      const t = new DataTransfer();
      t.items.add(new File([bytes], name, { type: "application/octet-stream" }));
      return t;
    },
    { b64, name },
  );
  await page.dispatchEvent(selector, "dragover", { dataTransfer: dt });
  await page.dispatchEvent(selector, "drop", { dataTransfer: dt });
}

/** GET a JSON document from the backend's API as the holder of `token` (what the page shows is checked against it). */
export async function apiGet<T>(path: string, token: string): Promise<T> {
  const r = await fetch(`${state().apiURL}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  if (!r.ok) throw new Error(`GET ${path}: ${String(r.status)}`);
  return (await r.json()) as T;
}

/** Upload a log through the API as the holder of `token` and wait until its analysis is done; its id. */
export async function apiUpload(path: string, token: string, timeoutMs = 120_000): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([readFileSync(path)]), basename(path));
  const r = await fetch(`${state().apiURL}/api/v1/analyses`, { method: "POST", body: form, headers: { Authorization: `Bearer ${token}` } });
  if (!r.ok) throw new Error(`upload ${path}: ${String(r.status)} ${await r.text()}`);
  const { id } = (await r.json()) as { id: string };
  await waitDone(id, token, timeoutMs);
  return id;
}

/** Wait until an analysis is done (throws if it failed or took too long). */
export async function waitDone(id: string, token: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const a = await apiGet<{ status: string; error?: string | null }>(`/api/v1/analyses/${encodeURIComponent(id)}`, token);
    if (a.status === "done") return;
    if (a.status === "failed") throw new Error(`analysis ${id} failed: ${a.error ?? ""}`);
    if (Date.now() > until) throw new Error(`analysis ${id} is still ${a.status}`);
    await new Promise((res) => setTimeout(res, 300));
  }
}

/** The page does not scroll sideways: nothing is wider than the window. */
export async function expectNoHorizontalOverflow(page: Page, where: string): Promise<void> {
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), { message: `${where}: the page scrolls sideways` })
    .toBeLessThanOrEqual(0);
}

/** Visible, scrolled into view, and would take a click (not covered by anything, enabled). */
export async function expectReachable(target: Locator): Promise<void> {
  await target.scrollIntoViewIfNeeded();
  await expect(target).toBeVisible();
  await expect(target).toBeInViewport();
  await target.click({ trial: true, timeout: 10_000 });
}
