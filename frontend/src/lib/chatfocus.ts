// Getting to the job page's chat from anywhere on it: the "Skip to chat" link (the first thing a
// keyboard reaches on a report) and, on narrow screens, the floating "Ask" button.
import { createContext, useContext, useEffect } from "react";

export const CHAT_INPUT_ID = "chat-q";

/** Bring the chat into view and put the caret in its question box. */
export function focusChat(): boolean {
  const input = document.getElementById(CHAT_INPUT_ID);
  if (!input) return false;
  const panel = input.closest("[data-testid='chat']") ?? input;
  const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  panel.scrollIntoView({ behavior: smooth ? "smooth" : "auto", block: "start" });
  input.focus({ preventScroll: true });
  return true;
}

/** The app shows "Skip to chat" while a page with a chat says so. */
export const ChatSkipContext = createContext<(on: boolean) => void>(() => undefined);

/** Call from the component that renders the chat: the skip link is offered while it is mounted. */
export function useChatSkip(): void {
  const set = useContext(ChatSkipContext);
  useEffect(() => {
    set(true);
    return () => {
      set(false);
    };
  }, [set]);
}
