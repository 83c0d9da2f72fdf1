// Unit tests of the options page's rules (extension/src/options/options.js, store.js),
// run by tests/extension/test_options_units.py with `node --test`: where a pairing code
// may be sent, and what a stored pairing must hold before the background uses it.
import assert from 'node:assert/strict';
import test from 'node:test';

const { urlRefusal } = await import('../../extension/src/options/options.js');
const { isPairing, configOf } = await import('../../extension/src/options/store.js');

test('ws:// only to this machine, wss:// anywhere', () => {
  for (const ok of ['ws://127.0.0.1:17831', 'ws://localhost:1', 'ws://[::1]:9', 'ws://127.1.2.3:5',
    'wss://bridge.example.org/']) assert.equal(urlRefusal(ok), null, ok);
  for (const bad of ['ws://192.168.1.5:17831', 'ws://example.org/', 'http://127.0.0.1:17831',
    'not a url', 'ws://127.0.0.1.example.org:1']) assert.notEqual(urlRefusal(bad), null, bad);
});

test('a pairing needs every field; the credential becomes the hello token', () => {
  const good = { bridgeUrl: 'ws://127.0.0.1:1', credential: 'c'.repeat(64), device: 'laptop' };
  assert.equal(isPairing(good), true);
  for (const field of Object.keys(good)) {
    assert.equal(isPairing({ ...good, [field]: '' }), false, field);
    assert.equal(isPairing({ ...good, [field]: undefined }), false, field);
  }
  assert.equal(isPairing(null), false);
  assert.deepEqual(configOf(good), { bridgeUrl: good.bridgeUrl, token: good.credential, device: 'laptop' });
  assert.equal(configOf(null), null);
});
