import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applicationOrder, loadFunctionFiles } from './function-files.ts';

const file = (name: string, body: string) => ({ name, sql: `CREATE OR REPLACE FUNCTION ${name}() RETURNS int LANGUAGE sql AS $$ ${body} $$;` });
const names = (files: { name: string }[]) => files.map((f) => f.name);

describe('function files', () => {
  it('come after the functions they call, otherwise in order of name', () => {
    const files = [file('a_wrapper', 'SELECT b_core(1) + c_other()'), file('b_core', 'SELECT d_leaf()'), file('c_other', 'SELECT 1'), file('d_leaf', 'SELECT 2')];
    assert.deepEqual(names(applicationOrder(files)), ['c_other', 'd_leaf', 'b_core', 'a_wrapper']);
    assert.deepEqual(names(applicationOrder([...files].reverse())), ['c_other', 'd_leaf', 'b_core', 'a_wrapper'], 'whatever order the directory lists them in');
  });

  it('read a call only where a name is followed by "(" outside comments, and never a longer name', () => {
    const files = [
      file('a_caller', '-- z_last() is named in a comment only\n SELECT b_fn_batch()'),
      file('b_fn', 'SELECT z_last()'),
      file('b_fn_batch', 'SELECT 1'),
      file('z_last', 'SELECT 2'),
    ];
    // a_caller waits for neither z_last nor b_fn.
    assert.deepEqual(names(applicationOrder(files)), ['b_fn_batch', 'a_caller', 'z_last', 'b_fn']);
  });

  it('break a cycle (plpgsql functions may call each other) by name', () => {
    const files = [file('b_ping', 'SELECT a_pong()'), file('a_pong', 'SELECT b_ping()'), file('c_user', 'SELECT b_ping()')];
    assert.deepEqual(names(applicationOrder(files)), ['a_pong', 'b_ping', 'c_user']);
  });

  it('each hold one CREATE OR REPLACE FUNCTION of their own name, the callees first', () => {
    const files = loadFunctionFiles();
    assert.ok(files.length > 0);
    const order = names(files);
    assert.ok(order.indexOf('ledger_post') < order.indexOf('pix_transfer_create'));
    assert.ok(order.indexOf('pix_transfer_create') < order.indexOf('pix_transfer_create_batch'));
    for (const f of files) {
      assert.match(f.hash, /^[0-9a-f]{64}$/);
      assert.equal(f.sql.match(/CREATE OR REPLACE FUNCTION/gi)?.length, 1, f.name);
    }
  });
});
