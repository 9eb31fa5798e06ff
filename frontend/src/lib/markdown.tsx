// A small, safe Markdown renderer: it builds React elements, so every character of the source is
// text, never markup. Supports what the answers and knowledge documents use: headings, paragraphs,
// lists, fenced code (with a copy button), tables, block quotes, `code`, **bold**, *em*, links
// (http(s) and in-app paths only) and citation markers ([P08], [doc:lustre-striping]).
import { type ReactNode, useRef, useState } from "react";
import { Link } from "./router";
import { ScrollBox, scrollAttrs, useScrolls } from "./scroll";

export interface CiteRenderer {
  finding?: (code: string, key: string) => ReactNode;
  doc?: (id: string, key: string) => ReactNode;
}

interface Options {
  cite?: CiteRenderer;
  /** Each line break in a paragraph is a line break (chat answers). */
  breaks?: boolean;
}

type Block =
  | { t: "h"; level: number; text: string }
  | { t: "p"; lines: string[] }
  | { t: "code"; lang: string; text: string }
  | { t: "ul" | "ol"; items: string[][]; start: number }
  | { t: "quote"; lines: string[] }
  | { t: "table"; head: string[]; rows: string[][] };

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)/;
const BULLET = /^(\s*)[-*+]\s+(.*)$/;
const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

function cells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

export function parseBlocks(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? "").trim().startsWith(marker)) body.push(lines[i++] ?? "");
      i++;
      out.push({ t: "code", lang: fence[2] ?? "", text: body.join("\n") });
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      out.push({ t: "h", level: (h[1] ?? "#").length, text: h[2] ?? "" });
      i++;
      continue;
    }
    if (line.trimStart().startsWith("|") && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1] ?? "")) {
      const head = cells(line);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && (lines[i] ?? "").trimStart().startsWith("|")) rows.push(cells(lines[i++] ?? ""));
      out.push({ t: "table", head, rows });
      continue;
    }
    if (line.startsWith(">")) {
      const q: string[] = [];
      while (i < lines.length && (lines[i] ?? "").startsWith(">")) q.push((lines[i++] ?? "").replace(/^>\s?/, ""));
      out.push({ t: "quote", lines: q });
      continue;
    }
    const b = BULLET.exec(line);
    const o = ORDERED.exec(line);
    if (b || o) {
      const ordered = !b;
      const re = ordered ? ORDERED : BULLET;
      const items: string[][] = [];
      const start = o ? Number(o[2]) : 1;
      while (i < lines.length) {
        const l = lines[i] ?? "";
        const m = re.exec(l);
        if (m && (m[1] ?? "").length < 2) {
          items.push([(ordered ? m[3] : m[2]) ?? ""]);
          i++;
        } else if (items.length && /^\s{2,}\S/.test(l) && !FENCE.test(l)) {
          items[items.length - 1]?.push(l.trim());
          i++;
        } else break;
      }
      out.push({ t: ordered ? "ol" : "ul", items, start });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i] ?? "";
      if (!l.trim() || FENCE.test(l) || HEADING.test(l) || BULLET.test(l) || ORDERED.test(l) || l.startsWith(">")) break;
      para.push(l);
      i++;
    }
    out.push({ t: "p", lines: para });
  }
  return out;
}

const INLINE = /(`+)([^`]+?)\1|\*\*(.+?)\*\*|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|\[([^\]\n]+)\]\(([^)\s]+)\)|\[(doc:[a-z0-9][a-z0-9-]*|[A-Z][0-9]{2})\]/g;

function safeHref(href: string): string | null {
  if (/^https?:\/\//i.test(href)) return href;
  if (href.startsWith("/") && !href.startsWith("//")) return href;
  return null;
}

export function renderInline(text: string, opts: Options, keyBase: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let k = 0;
  for (const m of text.matchAll(INLINE)) {
    const idx = m.index;
    if (idx > last) out.push(text.slice(last, idx));
    const key = `${keyBase}-${k++}`;
    if (m[2] !== undefined) out.push(<code key={key}>{m[2]}</code>);
    else if (m[3] !== undefined) out.push(<strong key={key}>{renderInline(m[3], opts, key)}</strong>);
    else if (m[4] !== undefined) out.push(<em key={key}>{renderInline(m[4], opts, key)}</em>);
    else if (m[5] !== undefined && m[6] !== undefined) {
      const href = safeHref(m[6]);
      if (href === null) out.push(m[0]);
      else if (href.startsWith("/"))
        out.push(
          <Link key={key} to={href}>
            {renderInline(m[5], opts, key)}
          </Link>,
        );
      else
        out.push(
          <a key={key} href={href} target="_blank" rel="noopener noreferrer">
            {renderInline(m[5], opts, key)}
          </a>,
        );
    } else if (m[7] !== undefined) {
      const ref = m[7];
      const node = ref.startsWith("doc:") ? opts.cite?.doc?.(ref.slice(4), key) : opts.cite?.finding?.(ref, key);
      out.push(node ?? m[0]);
    }
    last = idx + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** What a code block holds, for its copy button's name: "command: lfs setstripe -c 8 …". */
export function describeCode(text: string, lang = ""): string {
  const first = (text.split("\n").find((l) => l.trim() && !l.trim().startsWith("#")) ?? text).trim();
  const short = first.length > 60 ? `${first.slice(0, 57).trimEnd()}…` : first;
  const kind = /^(sh|bash|shell|console|zsh|)$/i.test(lang) ? "command" : `${lang} snippet`;
  return `${kind}: ${short}`;
}

/**
 * A copy-to-clipboard button named by what it copies ("Copy command: lfs setstripe …"): `label` is the
 * visible text, `what` completes the accessible name; "Copied" is announced.
 */
export function CopyButton({ text, what, label = "Copy" }: { text: string; what: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn small copy"
        aria-label={`${label} ${what}`}
        title={`${label} ${what}`}
        onClick={() => {
          void navigator.clipboard.writeText(text).then(
            () => {
              setDone(true);
              setTimeout(() => {
                setDone(false);
              }, 1500);
            },
            () => {
              setDone(false);
            },
          );
        }}
      >
        {done ? "Copied" : label}
      </button>
      <span className="sr-only" role="status">
        {done ? "Copied" : ""}
      </span>
    </>
  );
}

export function CodeBlock({ text, lang, what }: { text: string; lang?: string; what?: string }) {
  const name = what ?? describeCode(text, lang);
  // A line too long for the box scrolls sideways: then the keyboard can scroll it too.
  const preRef = useRef<HTMLPreElement>(null);
  const scrolls = useScrolls(preRef);
  return (
    <div className="codeblock">
      <div className="codeblock-bar">
        <span className="muted">{lang || "code"}</span>
        <CopyButton text={text} what={name} />
      </div>
      <pre ref={preRef} {...scrollAttrs(scrolls, name)}>
        <code>{text}</code>
      </pre>
    </div>
  );
}

function lines(ls: string[], opts: Options, key: string): ReactNode[] {
  if (!opts.breaks) return renderInline(ls.join(" "), opts, key);
  const out: ReactNode[] = [];
  ls.forEach((l, j) => {
    if (j) out.push(<br key={`${key}-br${j}`} />);
    out.push(...renderInline(l, opts, `${key}-${j}`));
  });
  return out;
}

/**
 * `topLevel`: the heading level of a `#` heading. 2 by default, for Markdown under the page's own h1 (a chat
 * answer); 1 where the document is the page (a guide: its `#` title is the page's h1, its `##` sections h2).
 */
export function Markdown({ source, cite, breaks, className, topLevel = 2 }: { source: string; className?: string; topLevel?: 1 | 2 } & Options) {
  const opts: Options = { cite, breaks };
  const blocks = parseBlocks(source);
  return (
    <div className={className ?? "md"}>
      {blocks.map((b, i) => {
        const key = `b${i}`;
        switch (b.t) {
          case "h": {
            const level = Math.min(6, b.level + topLevel - 1);
            const Tag = `h${level}` as "h2";
            return <Tag key={key}>{renderInline(b.text, opts, key)}</Tag>;
          }
          case "p":
            return <p key={key}>{lines(b.lines, opts, key)}</p>;
          case "code":
            return <CodeBlock key={key} text={b.text} lang={b.lang} />;
          case "quote":
            return <blockquote key={key}>{lines(b.lines, opts, key)}</blockquote>;
          case "ul":
            return (
              <ul key={key}>
                {b.items.map((it, j) => (
                  <li key={j}>{lines(it, { ...opts, breaks: true }, `${key}-${j}`)}</li>
                ))}
              </ul>
            );
          case "ol":
            return (
              <ol key={key} start={b.start}>
                {b.items.map((it, j) => (
                  <li key={j}>{lines(it, { ...opts, breaks: true }, `${key}-${j}`)}</li>
                ))}
              </ol>
            );
          case "table":
            return (
              <ScrollBox key={key} label={`Table: ${b.head.map((c) => c.replace(/[`*_]/g, "")).join(", ")}`}>
                <table className="md-table">
                  <thead>
                    <tr>
                      {b.head.map((c, j) => (
                        <th key={j}>{renderInline(c, opts, `${key}-h${j}`)}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {b.rows.map((r, j) => (
                      <tr key={j}>
                        {r.map((c, n) => (
                          <td key={n}>{renderInline(c, opts, `${key}-${j}-${n}`)}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
            );
        }
        return null;
      })}
    </div>
  );
}

/** The fenced code blocks of a Markdown document (the copyable snippets of a knowledge doc). */
export function codeBlocks(src: string): { lang: string; text: string }[] {
  return parseBlocks(src).flatMap((b) => (b.t === "code" ? [{ lang: b.lang, text: b.text }] : []));
}
