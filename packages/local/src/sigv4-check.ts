/**
 * Checks an AWS Signature Version 4 on a request that reached an embedded
 * emulator, with the stack's own secret: the emulators hold every tenant's
 * records, and neither dynalite nor fauxqs checks a signature. The whole
 * signature is verified (not only the access key id), because the access key
 * id is not a secret here: every presigned upload URL handed to a tenant
 * carries it in `X-Amz-Credential`; the secret key never leaves this process.
 *
 * The canonical request is built as the AWS SDK's signer (`@smithy/signature-v4`)
 * builds it: the path escaped once more for every service but S3, the query
 * sorted and escaped, the signed headers trimmed, and the payload's hash from
 * `x-amz-content-sha256` when the client sent one (S3, presigned URLs) or from
 * the body.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** The emulators' credentials, as the SDK clients sign with them. */
export interface EmulatorCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The parts of a request a signature covers. */
export interface SignedRequest {
  method: string;
  /** Path and query as they came on the wire (`req.url`). */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body, when the payload hash is not declared in a header. */
  body?: Buffer;
}

/** How far a header-signed request's `X-Amz-Date` may be from now (AWS allows 15 minutes). */
const MAX_SKEW_MS = 15 * 60 * 1000;

/**
 * Whether the request's payload hash is declared (S3's `x-amz-content-sha256`,
 * or a presigned URL): then the body need not be read to check the signature.
 */
export function declaresPayloadHash(url: string, headers: IncomingHttpHeaders): boolean {
  if (query(url).has("X-Amz-Signature")) return true;
  if (headers["x-amz-content-sha256"] === undefined) return false;
  // Only S3's bodies (large, streamed) pass on unread. DynamoDB's and SQS's
  // clients declare the hash too, but their bodies are small: they are read and
  // checked against it, so a signed request cannot carry another body.
  return /\/s3\/aws4_request/.test(String(headers.authorization ?? ""));
}

/**
 * Returns why the signature does not hold, or null when it was made with
 * `credentials`' secret for this very request.
 *
 * @example
 * signatureProblem({ method: "POST", url: "/", headers: req.headers, body }, creds, Date.now())
 */
export function signatureProblem(
  request: SignedRequest,
  credentials: EmulatorCredentials,
  now: number,
): string | null {
  const params = query(request.url);
  const presigned = params.has("X-Amz-Signature");
  let credential: string;
  let signedHeaders: string;
  let signature: string;
  let amzDate: string | undefined;
  if (presigned) {
    credential = params.get("X-Amz-Credential")?.[0] ?? "";
    signedHeaders = params.get("X-Amz-SignedHeaders")?.[0] ?? "";
    signature = params.get("X-Amz-Signature")?.[0] ?? "";
    amzDate = params.get("X-Amz-Date")?.[0];
  } else {
    const auth = String(request.headers.authorization ?? "");
    if (!auth.startsWith("AWS4-HMAC-SHA256 "))
      return "the request is not signed (AWS4-HMAC-SHA256)";
    const fields = Object.fromEntries(
      auth
        .slice("AWS4-HMAC-SHA256 ".length)
        .split(",")
        .map((part) => {
          const at = part.indexOf("=");
          return [part.slice(0, at).trim(), part.slice(at + 1).trim()];
        }),
    );
    credential = fields.Credential ?? "";
    signedHeaders = fields.SignedHeaders ?? "";
    signature = fields.Signature ?? "";
    amzDate = header(request.headers, "x-amz-date");
  }
  const [keyId, ...scopeParts] = credential.split("/");
  if (keyId !== credentials.accessKeyId) return "the request is signed with another access key";
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) return "the request has no valid X-Amz-Date";
  const signedAt = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  if (presigned) {
    const expires = Number(params.get("X-Amz-Expires")?.[0] ?? Number.NaN);
    if (!(now <= signedAt + expires * 1000)) return "the presigned URL has expired";
  } else if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
    return "the signature's date is more than 15 minutes from now";
  }
  const [date, region, service, terminator] = scopeParts;
  if (!date || !region || !service || terminator !== "aws4_request" || !amzDate.startsWith(date)) {
    return "the credential scope is malformed";
  }

  const names = signedHeaders.split(";").filter(Boolean);
  if (!names.includes("host")) return "the signature does not cover the host header";
  const unsigned = unsignedAmzHeader(request.headers, names);
  if (unsigned !== undefined) return `the header ${unsigned} is not signed`;
  const canonicalHeaders = names
    .map((name) => `${name}:${(header(request.headers, name) ?? "").trim().replace(/\s+/g, " ")}`)
    .join("\n");
  const declared = header(request.headers, "x-amz-content-sha256");
  if (!presigned && request.body !== undefined && declared !== undefined) {
    if (declared !== sha256Hex(request.body)) {
      return "the body does not match the hash the signature covers (x-amz-content-sha256)";
    }
  }
  const payloadHash = presigned
    ? (params.get("X-Amz-Content-Sha256")?.[0] ??
      header(request.headers, "x-amz-content-sha256") ??
      "UNSIGNED-PAYLOAD")
    : (header(request.headers, "x-amz-content-sha256") ??
      sha256Hex(request.body ?? Buffer.alloc(0)));
  const canonicalRequest = [
    request.method,
    canonicalPath(request.url, service),
    canonicalQuery(params),
    `${canonicalHeaders}\n`,
    names.join(";"),
    payloadHash,
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [region, service, "aws4_request"]) key = hmac(key, part);
  const expected = Buffer.from(hmac(key, stringToSign).toString("hex"));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return "the signature does not match (signed with another secret, or the request was changed)";
  }
  return null;
}

/**
 * The first `x-amz-*` header the signature does not cover, as S3 refuses it
 * (`HeadersNotSigned`). A presigned URL signs the host (and the content type)
 * only, and its holder may add any header: `x-amz-copy-source` on a presigned
 * PUT would turn an upload into a copy of any object of the bucket, another
 * tenant's included. The SDK clients sign every `x-amz-*` header they send.
 */
function unsignedAmzHeader(headers: IncomingHttpHeaders, signed: string[]): string | undefined {
  return Object.keys(headers).find(
    (name) => name.toLowerCase().startsWith("x-amz-") && !signed.includes(name.toLowerCase()),
  );
}

/** The query's parameters, decoded, in wire order (a key may repeat). */
function query(url: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  const at = url.indexOf("?");
  if (at < 0) return params;
  for (const pair of url.slice(at + 1).split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? "" : decode(pair.slice(eq + 1));
    params.set(key, [...(params.get(key) ?? []), value]);
  }
  return params;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** As the SDK's signer: every parameter but the signature, escaped, sorted by key then value. */
function canonicalQuery(params: Map<string, string[]>): string {
  const pairs: string[] = [];
  const keys = [...params.keys()]
    .filter((key) => key.toLowerCase() !== "x-amz-signature")
    .map((key) => [escapeUri(key), key] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [escaped, key] of keys) {
    const values = (params.get(key) ?? []).map(escapeUri).sort();
    for (const value of values) pairs.push(`${escaped}=${value}`);
  }
  return pairs.join("&");
}

/** S3 signs the path as sent; every other service escapes its normalized path once more. */
function canonicalPath(url: string, service: string): string {
  const at = url.indexOf("?");
  const path = at < 0 ? url : url.slice(0, at);
  if (service === "s3") return path;
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith("/") ? "/" : ""}${segments.join("/")}${segments.length > 0 && path.endsWith("/") ? "/" : ""}`;
  return escapeUri(normalized).replace(/%2F/g, "/");
}

/** RFC 3986 escaping, as SigV4 wants it. */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}
