// The transport every screen reaches Maskflow through, provided once by the app.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Transport } from "./transport";

export const TransportContext = createContext<Transport | null>(null);

export function useTransport(): Transport {
  const t = useContext(TransportContext);
  if (!t) throw new Error("no transport: render inside <TransportContext.Provider>");
  return t;
}
