import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** What `verifyUpgrade` checks; a subset of `ServeAgentsOptions`. */
export interface UpgradePolicy {
  auth?: (token: string | undefined, request: IncomingMessage) => boolean | Promise<boolean>;
  /** The origins browsers may connect from, or `"*"` for any; left out, any too (the caller decides the default). */
  allowedOrigins?: readonly string[] | "*";
}

/** Why an upgrade is refused, as the HTTP status `ws` answers with. */
export interface UpgradeRefusal {
  status: 401 | 403;
  message: string;
}

/**
 * Checks an upgrade request before any WebSocket exists: origin first (cheap, and a browser on
 * a foreign page must not learn whether its token works), then the token.
 */
export async function verifyUpgrade(
  info: { origin: string | undefined; req: IncomingMessage },
  policy: UpgradePolicy,
): Promise<UpgradeRefusal | undefined> {
  // Browsers always send Origin on a WebSocket upgrade; other clients usually do not, and an
  // origin check protects browsers only, so a missing Origin passes.
  const allowed = policy.allowedOrigins;
  if (allowed !== undefined && allowed !== "*" && info.origin !== undefined && !allowed.includes(info.origin)) {
    return { status: 403, message: "Origin not allowed" };
  }
  if (policy.auth && !(await policy.auth(tokenOf(info.req), info.req))) {
    return { status: 401, message: "Unauthorized" };
  }
  return undefined;
}

/** The token of a request: `Authorization: Bearer <token>`, else the `token` query parameter (browsers cannot set headers on a WebSocket). */
export function tokenOf(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header);
  if (match?.[1] !== undefined) return match[1].trim();
  return queryToken(request.url ?? "/");
}

/**
 * The `token` query parameter of a request target, `undefined` when it has none or is no URL.
 * Why not `new URL` alone: a request line's target such as `http://[/` is no URL, and the throw
 * came back to the client as a 500 rather than the 401 an upgrade without a token gets. (Node
 * 20.0 has no `URL.parse`.)
 */
function queryToken(target: string): string | undefined {
  try {
    return new URL(target, "http://localhost").searchParams.get("token") ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * An `auth` hook that accepts one shared token, compared in constant time.
 *
 * @example serveAgents({ auth: acceptToken(process.env.RXAGENT_TOKEN ?? ""), ... })
 */
export function acceptToken(expected: string): (token: string | undefined) => boolean {
  if (expected === "") throw new TypeError("acceptToken: the token must not be empty.");
  const digest = (text: string) => createHash("sha256").update(text).digest();
  const wanted = digest(expected);
  return (token) => token !== undefined && timingSafeEqual(digest(token), wanted);
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** True for the names of this machine's loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * The origins a page served on `host:port` may have: on loopback the same page is reachable as
 * localhost, 127.0.0.1 and [::1], and all three are the same place. An unspecified address
 * (`0.0.0.0`, `::`) names no page: its pages' origins must be listed.
 */
export function pageOrigins(host: string, port: number): string[] {
  if (isLoopbackHost(host)) return LOOPBACK_NAMES.map((name) => `http://${name}:${port}`);
  if (host === "0.0.0.0" || host === "::" || host === "[::]") return [];
  return [`http://${host.includes(":") ? `[${host}]` : host}:${port}`];
}
