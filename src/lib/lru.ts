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
