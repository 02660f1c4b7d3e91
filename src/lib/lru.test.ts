import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LongKeyLru, Lru } from './lru.ts';

describe('Lru', () => {
  it('keeps the most recently used entries past its capacity', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.get('a'), 1); // a is now the most recent
    lru.set('c', 3);
    assert.deepEqual([lru.get('a'), lru.get('b'), lru.get('c')], [1, undefined, 3]);
  });
});

describe('LongKeyLru', () => {
  const long = (middle: string, tail = 'T'.repeat(40)) => `${'h'.repeat(100)}${middle}${tail}`;

  it('finds a long key given as another string with the same text', () => {
    const lru = new LongKeyLru<number>(10);
    lru.set(long('x'), 1);
    assert.equal(lru.get([...long('x')].join('')), 1);
    assert.equal(lru.get('short'), undefined);
    lru.set('short', 2);
    assert.equal(lru.get('short'), 2);
  });

  it('never answers for another key that shares its slot', () => {
    // 200 characters, sampled at 0-11, 37-48, 74-85, ...: these two differ at 14 only.
    const long = (c: string) => `${'h'.repeat(14)}${c}${'h'.repeat(185)}`;
    const lru = new LongKeyLru<number>(10);
    lru.set(long('x'), 1);
    assert.equal(lru.get(long('y')), undefined);
    // They share a slot: the newer one takes it, the older one is a miss again.
    lru.set(long('y'), 2);
    assert.deepEqual([lru.get(long('x')), lru.get(long('y'))], [undefined, 2]);
    lru.delete(long('x'));
    assert.equal(lru.get(long('y')), 2);
    lru.delete(long('y'));
    assert.equal(lru.get(long('y')), undefined);
  });

  it('keeps keys apart that differ anywhere but share a head and a tail (certificates, tokens)', () => {
    // PEM certificates share their footer, tokens of one issuer their header.
    const lru = new LongKeyLru<number>(100);
    const keys = Array.from({ length: 64 }, (_, i) => `-----BEGIN${'A'.repeat(400)}${i.toString(36).padStart(2, '0').repeat(300)}${'Z'.repeat(400)}-----END`);
    keys.forEach((key, i) => lru.set(key, i));
    assert.deepEqual(
      keys.map((key) => lru.get(key)),
      keys.map((_, i) => i),
    );
  });

  it('keeps at most its capacity of long keys', () => {
    const lru = new LongKeyLru<number>(3);
    for (let i = 0; i < 5; i++) lru.set(long('', `${i}`.repeat(40)), i);
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => lru.get(long('', `${i}`.repeat(40)))), [undefined, undefined, 2, 3, 4]);
  });
});
