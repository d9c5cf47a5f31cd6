// Byte helpers shared by the page's two-server path (HPKE, Prio3's XOF, the upload).

/** Byte concatenation of Uint8Arrays (or arrays of byte values). */
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Unpadded base64url (RFC 4648 §5), as shared/two_server/config.py b64url. */
export function b64url(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of (unpadded or padded) base64url text; null when it is not base64url. Strict, as
 * shared/two_server/config.py from_b64url: incomplete padding, a length of 4n + 1 or bits set
 * past the last byte are refused (atob would ignore the bits). */
export function fromB64url(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) return null;
  const body = text.replace(/=+$/, "");
  if ((body !== text && text.length % 4) || body.length % 4 === 1) return null;
  const b64 = body.replace(/-/g, "+").replace(/_/g, "/");
  let bytes;
  try {
    bytes = Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  return b64url(bytes) === body ? bytes : null;
}
