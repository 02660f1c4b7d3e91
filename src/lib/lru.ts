/** A small least-recently-used map: hot entries stay, the oldest go past `capacity`. */
export class Lru<K, V> {
  readonly #capacity: number;
  readonly #map = new Map<K, V>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }
}

/** Keys longer than this are looked up by their length and a sample of their characters. */
const LONG_KEY = 96;
const SAMPLES = 6;
const SAMPLE = 12;

/**
 * An Lru for long string keys: bearer tokens, certificate headers of 2 KB. A Map hashes the
 * whole of a key it is given, and a header is a new string on every request, so every lookup
 * hashed kilobytes, a visible part of a balance read. This one hashes a
 * long key's length and six short samples spread over it, and checks a hit against the whole
 * key, so two keys that share the samples only evict each other. Spread, not the tail: every
 * PEM ends with the same footer, and JWTs of one issuer start with the same header.
 * Why, and what was measured: docs/decisions/0024-request-path-costs.md.
 */
export class LongKeyLru<V> {
  readonly #lru: Lru<string | number, { key: string; value: V }>;

  constructor(capacity: number) {
    this.#lru = new Lru(capacity);
  }

  get(key: string): V | undefined {
    const entry = this.#lru.get(bucket(key));
    return entry !== undefined && entry.key === key ? entry.value : undefined;
  }

  set(key: string, value: V): void {
    this.#lru.set(bucket(key), { key, value });
  }

  delete(key: string): void {
    const slot = bucket(key);
    if (this.#lru.get(slot)?.key === key) this.#lru.delete(slot);
  }
}

/**
 * A short key's own text; a long key's length and samples, hashed (FNV-1a) into a number, which
 * a Map hashes for nothing (a string of the samples was hashed again on every lookup).
 */
function bucket(key: string): string | number {
  if (key.length <= LONG_KEY) return key;
  const step = Math.floor((key.length - SAMPLE) / (SAMPLES - 1));
  let h = Math.imul(0x811c9dc5 ^ key.length, 0x01000193);
  for (let i = 0; i < SAMPLES; i++) {
    for (let j = i * step, end = j + SAMPLE; j < end; j++) h = Math.imul(h ^ key.charCodeAt(j), 0x01000193);
  }
  return h;
}
