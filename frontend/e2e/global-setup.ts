// Starts a real iodiag backend for the browser tests: `iodiag serve` on a free port, a temporary
// data dir (IODIAG_DATA_DIR), tokens from `iodiag token create`, a real Darshan log, a
// synthesized one whose file name is an HTML payload, and two runs of one program (PyDarshan's
// sample logs: a slow OST, then none) for the compare view. The narrator runs without a model
// (IODIAG_LLM_PROVIDER=none: template answers). If the server does not serve the built UI at `/`
// (ui.install not mounted), `vite preview` serves dist/ with the API proxied to it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const frontend = resolve(here, "..");
const repo = resolve(frontend, "..");
const bin = process.env.IODIAG_BIN ?? join(repo, ".venv", "bin", "iodiag");

export interface E2EState {
  baseURL: string;
  apiURL: string;
  dataDir: string;
  /** One user per spec file that needs its own jobs (axel: accessibility, erin: responsive, frank: first use, gwen: report tools, sam: screenshots). */
  tokens: { alice: string; axel: string; bob: string; helen: string; carol: string; dave: string; erin: string; frank: string; gwen: string; sam: string; tina: string; zoe: string };
  realLog: string;
  /** The 384-rank DXT log of the shared corpus (26,000 segments: the timeline's density view); null without it. */
  scaleLog: string | null;
  xssLog: string;
  /** Two runs of ior (bad: a slow OST; good: none, later) and a run of another program; null without PyDarshan's test logs. */
  ostLogs: { bad: string; good: string; other: string } | null;
  uiFrom: "iodiag serve" | "vite preview";
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => {
        ok(port);
      });
    });
  });
}

async function waitFor(url: string, ok: (r: Response) => boolean, what: string, proc: ChildProcess, ms = 90_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${String(proc.exitCode)}`);
    try {
      const r = await fetch(url);
      if (ok(r)) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > until) throw new Error(`${what} did not come up at ${url}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The real DXT log of the shared corpus; without it, a synthesized log of the same shape. */
function realLog(env: NodeJS.ProcessEnv, dataDir: string): string {
  if (process.env.IODIAG_E2E_LOG) return process.env.IODIAG_E2E_LOG;
  const dir = resolve(repo, "..", "shared", "logs", "darshan-logs", "mpi_io_test_with_dxt");
  if (existsSync(dir)) {
    const f = readdirSync(dir).find((n) => n.endsWith(".darshan"));
    if (f) return join(dir, f);
  }
  const out = join(dataDir, "mpi-io-test.darshan");
  console.log(`e2e: ${dir} is missing; using a synthesized log of the same shape (e2e/fixtures/fallback.yaml)`);
  execFileSync(bin, ["synth", join(here, "fixtures", "fallback.yaml"), "-o", out], { env, stdio: ["ignore", "ignore", "inherit"] });
  return out;
}

/** The shared corpus's 384-rank DXT log, or null (the timeline-at-scale test is then skipped). */
function scaleLog(): string | null {
  const dir = resolve(repo, "..", "shared", "logs", "drishti");
  const f = existsSync(dir) ? readdirSync(dir).find((n) => n.endsWith(".darshan")) : undefined;
  if (!f) console.log(`e2e: no log in ${dir}; the timeline-at-scale test is skipped`);
  return f ? join(dir, f) : null;
}

/** PyDarshan's sample logs, in the darshan package the backend's virtualenv installs. */
function ostLogs(env: NodeJS.ProcessEnv): E2EState["ostLogs"] {
  const python = join(dirname(bin), "python");
  if (!existsSync(python)) return null;
  let pkg = "";
  try {
    pkg = execFileSync(python, ["-c", "import darshan, os; print(os.path.dirname(darshan.__file__))"], { env, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return null;
  }
  const dir = join(pkg, "tests", "input");
  const logs = { bad: join(dir, "sample-badost.darshan"), good: join(dir, "sample-goodost.darshan"), other: join(dir, "sample.darshan") };
  if (!Object.values(logs).every((f) => existsSync(f))) {
    console.log(`e2e: PyDarshan's sample logs are not in ${dir}; the compare test is skipped`);
    return null;
  }
  return logs;
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(bin)) throw new Error(`no iodiag at ${bin}: run \`make install\` at the repository root (or set IODIAG_BIN)`);
  const dataDir = mkdtempSync(join(tmpdir(), "iodiag-e2e-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    IODIAG_DATA_DIR: dataDir,
    IODIAG_LLM_PROVIDER: "none",
    IODIAG_WORKERS: "1",
    IODIAG_POLL_S: "0.2",
  };
  delete env.IODIAG_DATABASE_URL;

  // The knowledge index takes ~40 s to embed: build it once into a cache, then copy it in.
  const cache = join(frontend, "node_modules", ".cache", "iodiag-e2e");
  mkdirSync(cache, { recursive: true });
  execFileSync(bin, ["knowledge", "build"], { env: { ...env, IODIAG_DATA_DIR: cache }, stdio: ["ignore", "ignore", "inherit"] });
  cpSync(join(cache, "knowledge-index"), join(dataDir, "knowledge-index"), { recursive: true });

  const token = (user: string, role: string) =>
    execFileSync(bin, ["token", "create", "--user", user, "--role", role], { env, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  const tokens = {
    alice: token("alice", "user"),
    axel: token("axel", "user"),
    bob: token("bob", "user"),
    helen: token("helen", "helpdesk"),
    carol: token("carol", "user"),
    dave: token("dave", "user"),
    erin: token("erin", "user"),
    frank: token("frank", "user"),
    gwen: token("gwen", "user"),
    sam: token("sam", "user"),
    tina: token("tina", "user"),
    zoe: token("zoe", "user"),
  };

  const xssLog = join(dataDir, "xss.darshan");
  execFileSync(bin, ["synth", join(here, "fixtures", "xss.yaml"), "-o", xssLog], { env, stdio: ["ignore", "ignore", "inherit"] });

  const port = await freePort();
  const apiURL = `http://127.0.0.1:${String(port)}`;
  const procs: ChildProcess[] = [];
  const server = spawn(bin, ["serve", "--port", String(port), "--workers", "1", "--log-level", "warning"], {
    env,
    stdio: ["ignore", "inherit", "inherit"],
    detached: true,
  });
  procs.push(server);
  const stop = async () => {
    for (const p of procs.reverse()) {
      if (p.exitCode === null && p.pid) {
        try {
          process.kill(-p.pid, "SIGTERM");
        } catch {
          /* gone */
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(`${apiURL}/readyz`, (r) => r.ok, "iodiag serve", server);
    let baseURL = apiURL;
    let uiFrom: E2EState["uiFrom"] = "iodiag serve";
    const root = await fetch(`${apiURL}/`);
    const html = root.ok ? await root.text() : "";
    if (!html.includes('<div id="root">')) {
      if (!existsSync(join(frontend, "dist", "index.html"))) throw new Error("no dist/: run `npm run build` first");
      const uiPort = await freePort();
      const vite = spawn(join(frontend, "node_modules", ".bin", "vite"), ["preview", "--port", String(uiPort), "--strictPort", "--host", "127.0.0.1"], {
        cwd: frontend,
        env: { ...process.env, IODIAG_API: apiURL },
        stdio: ["ignore", "ignore", "inherit"],
        detached: true,
      });
      procs.push(vite);
      baseURL = `http://127.0.0.1:${String(uiPort)}`;
      uiFrom = "vite preview";
      await waitFor(baseURL, (r) => r.ok, "vite preview", vite);
    }
    console.log(`e2e: backend ${apiURL} (data ${dataDir}); UI from ${uiFrom} at ${baseURL}`);
    const state: E2EState = { baseURL, apiURL, dataDir, tokens, realLog: realLog(env, dataDir), scaleLog: scaleLog(), xssLog, ostLogs: ostLogs(env), uiFrom };
    const stateFile = join(dataDir, "e2e-state.json");
    writeFileSync(stateFile, JSON.stringify(state));
    process.env.IODIAG_E2E_STATE = stateFile;
  } catch (e) {
    await stop();
    throw e;
  }
  return stop;
}
