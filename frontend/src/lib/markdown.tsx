// Markdown for answers, replies and guides, rendered by react-markdown (remark-gfm for tables, remark-breaks
// for chat line breaks). It builds React elements and no raw HTML: an HTML tag in the source (a file name
// such as `<run>.log`) is shown as text. Links go out only to http(s) and in-app paths; citation markers
// ([P08], [doc:lustre-striping]) become the caller's links; fenced code gets a copy button, and wide tables
// and code scroll with the keyboard.
import type { Element, ElementContent } from "hast";
import type { Root as MdRoot, RootContent, Text } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { type ReactNode, useRef, useState } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkBreaks from "remark-breaks";
import remarkGfm from "remark-gfm";
import { SKIP, visit } from "unist-util-visit";
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

const CITE = /\[(doc:[a-z0-9][a-z0-9-]*|[A-Z][0-9]{2})\]/g;

function safeHref(href: string): string | null {
  if (/^https?:\/\//i.test(href)) return href;
  if (href.startsWith("/") && !href.startsWith("//")) return href;
  return null;
}

/** remark: citation markers in text (never in code) become `<span data-cite>` for the caller to link. */
function remarkCitations() {
  return (tree: MdRoot) => {
    visit(tree, "text", (node: Text, index, parent) => {
      if (!parent || index === undefined || !node.value.match(CITE)) return;
      const parts: RootContent[] = [];
      let last = 0;
      for (const m of node.value.matchAll(CITE)) {
        if (m.index > last) parts.push({ type: "text", value: node.value.slice(last, m.index) });
        parts.push({ type: "text", value: m[0], data: { hName: "span", hProperties: { dataCite: m[1] } } });
        last = m.index + m[0].length;
      }
      if (last < node.value.length) parts.push({ type: "text", value: node.value.slice(last) });
      (parent.children as RootContent[]).splice(index, 1, ...parts);
      return [SKIP, index + parts.length];
    });
  };
}

/** remark: raw HTML in the source is data (a file name, a pasted tag), shown as the text it is. */
function remarkHtmlAsText() {
  return (tree: MdRoot) => {
    visit(tree, "html", (node: RootContent) => {
      const n = node as unknown as { type: string; value: string };
      n.type = "text";
    });
  };
}

function hastText(node: ElementContent | Element | undefined): string {
  if (!node) return "";
  if (node.type === "text") return node.value;
  if (node.type === "element") return node.children.map((c) => hastText(c)).join("");
  return "";
}

function findElement(node: Element, tag: string): Element | undefined {
  for (const c of node.children) {
    if (c.type !== "element") continue;
    if (c.tagName === tag) return c;
    const inner = findElement(c, tag);
    if (inner) return inner;
  }
  return undefined;
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


const HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"] as const;

function components(cite: CiteRenderer | undefined, topLevel: 1 | 2): Components {
  const shifted: Components = {};
  HEADINGS.forEach((tag, i) => {
    const Tag = HEADINGS[Math.min(5, i + topLevel - 1)] ?? "h6";
    shifted[tag] = ({ children }) => <Tag>{children}</Tag>;
  });
  return {
    ...shifted,
    a: ({ href, children }) => {
      const safe = href ? safeHref(href) : null;
      if (safe === null) return <>{children}</>;
      if (safe.startsWith("/")) return <Link to={safe}>{children}</Link>;
      return (
        <a href={safe} target="_blank" rel="noopener noreferrer">
          {children}
        </a>
      );
    },
    span: ({ node, children, ...rest }) => {
      const ref = node?.properties.dataCite;
      if (typeof ref === "string") {
        const key = `cite-${ref}-${String(node?.position?.start.offset ?? 0)}`;
        const linked = ref.startsWith("doc:") ? cite?.doc?.(ref.slice(4), key) : cite?.finding?.(ref, key);
        return <>{linked ?? `[${ref}]`}</>;
      }
      return <span {...rest}>{children}</span>;
    },
    pre: ({ node }) => {
      const code = node ? findElement(node, "code") : undefined;
      const cls = code?.properties.className;
      const tag = Array.isArray(cls) ? cls.find((c) => typeof c === "string" && c.startsWith("language-")) : undefined;
      const lang = typeof tag === "string" ? tag.slice("language-".length) : "";
      return <CodeBlock text={hastText(code).replace(/\n$/, "")} lang={lang} />;
    },
    table: ({ node, children }) => {
      const head = node ? findElement(node, "thead") : undefined;
      const cells = head ? head.children.flatMap((r) => (r.type === "element" ? r.children : [])) : [];
      const label = cells.map((c) => hastText(c).trim()).filter(Boolean).join(", ");
      return (
        <ScrollBox label={`Table: ${label}`}>
          <table className="md-table">{children}</table>
        </ScrollBox>
      );
    },
  };
}

/**
 * `topLevel`: the heading level of a `#` heading. 2 by default, for Markdown under the page's own h1 (a chat
 * answer); 1 where the document is the page (a guide: its `#` title is the page's h1, its `##` sections h2).
 */
export function Markdown({ source, cite, breaks, className, topLevel = 2 }: { source: string; className?: string; topLevel?: 1 | 2 } & Options) {
  const plugins = breaks ? [remarkGfm, remarkBreaks, remarkCitations, remarkHtmlAsText] : [remarkGfm, remarkCitations, remarkHtmlAsText];
  return (
    <div className={className ?? "md"}>
      <ReactMarkdown remarkPlugins={plugins} components={components(cite, topLevel)} urlTransform={(url) => safeHref(url) ?? ""}>
        {source}
      </ReactMarkdown>
    </div>
  );
}

/** The fenced code blocks of a Markdown document (the copyable snippets of a knowledge doc). */
export function codeBlocks(src: string): { lang: string; text: string }[] {
  const out: { lang: string; text: string }[] = [];
  visit(fromMarkdown(src), "code", (node: { lang?: string | null; value: string }) => {
    out.push({ lang: node.lang ?? "", text: node.value });
  });
  return out;
}
