import { createContext, useContext } from "react";

/** The per-response CSP nonce, provided by entry.server so inline scripts carry it. */
export const NonceContext = createContext<string | undefined>(undefined);
export const useNonce = () => useContext(NonceContext);
