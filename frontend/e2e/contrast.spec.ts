// WCAG AA contrast in both themes, measured on the live page: the colour tokens are read with
// getComputedStyle(document.documentElement) and every text/background pair the UI draws (e2e/contrast.ts)
// must reach 4.5:1 (text) or 3:1 (large text and graphics). The dark theme comes either from the system
// (prefers-color-scheme) or from the toggle (html[data-theme]); both must give the same tokens.
import { expect, type Page, test } from "@playwright/test";
import { contrast, PAIRS, parseColor } from "./contrast";
import { state } from "./helpers";

type Tokens = Record<string, string>;

async function tokens(page: Page): Promise<Tokens> {
  const names = Array.from(new Set(PAIRS.flatMap((p) => [p.fg, p.bg])));
  return page.evaluate((ns) => {
    const cs = getComputedStyle(document.documentElement);
    return Object.fromEntries(ns.map((n) => [n, cs.getPropertyValue(`--${n}`).trim()]));
  }, names);
}

async function themed(page: Page, system: "light" | "dark", toggle: boolean): Promise<Tokens> {
  await page.emulateMedia({ colorScheme: system });
  await page.goto(`${state().baseURL}/`);
  // Follow the system until the toggle is used (it remembers a choice in localStorage).
  await page.evaluate(() => {
    localStorage.removeItem("iodiag.theme");
  });
  await page.reload();
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
  if (toggle) {
    const to = system === "light" ? "dark" : "light";
    await page.getByRole("button", { name: `Switch to ${to} theme` }).click();
    await expect(page.locator("html")).toHaveAttribute("data-theme", to);
  } else {
    await expect(page.locator("html")).toHaveAttribute("data-theme", system);
  }
  return tokens(page);
}

function check(theme: string, t: Tokens): string[] {
  const failures: string[] = [];
  const rows: string[] = [];
  for (const p of PAIRS) {
    const fg = parseColor(t[p.fg] ?? "");
    const bg = parseColor(t[p.bg] ?? "");
    if (!fg || !bg) {
      failures.push(`${theme}: --${p.fg} (${t[p.fg] ?? ""}) on --${p.bg} (${t[p.bg] ?? ""}): not a solid colour`);
      continue;
    }
    const r = contrast(fg, bg);
    const ok = r >= p.min;
    rows.push(`${theme.padEnd(5)} ${`--${p.fg}`.padEnd(16)} on ${`--${p.bg}`.padEnd(13)} ${r.toFixed(2).padStart(5)}:1  (≥ ${String(p.min)})${ok ? "" : "  FAIL"}  ${p.use}`);
    if (!ok) failures.push(`${theme}: --${p.fg} ${t[p.fg] ?? ""} on --${p.bg} ${t[p.bg] ?? ""} is ${r.toFixed(2)}:1, needs ${String(p.min)}:1 (${p.use})`);
  }
  if (process.env.IODIAG_CONTRAST_TABLE) console.log(rows.join("\n"));
  return failures;
}

test("every text and graphic colour pair meets WCAG AA in the light and the dark theme", async ({ page }) => {
  const light = await themed(page, "light", false);
  const dark = await themed(page, "dark", false);
  const failures = [...check("light", light), ...check("dark", dark)];
  expect(failures, failures.join("\n")).toEqual([]);
});

test("the theme toggle gives the same tokens as the system theme", async ({ page }) => {
  const light = await themed(page, "light", false);
  const dark = await themed(page, "dark", false);
  expect(await themed(page, "light", true)).toEqual(dark);
  expect(await themed(page, "dark", true)).toEqual(light);
});
