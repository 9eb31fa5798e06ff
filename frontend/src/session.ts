import { createContext, useContext } from "react";
import type { Me } from "./api/client";

export interface Session {
  me: Me;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("no session");
  return s;
}

export function isStaff(me: Me): boolean {
  return me.role === "helpdesk" || me.role === "admin";
}
