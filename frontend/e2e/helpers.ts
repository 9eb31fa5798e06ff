import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page } from "@playwright/test";
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
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
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
