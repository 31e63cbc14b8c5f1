/**
 * The `/v2` metadata routes over fake served models: the platform each kind of model reports.
 */
import { expect } from 'chai';
import express from 'express';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { oipRouter } from '../../../../frontend/http/oip/oip-router.js';
import type { ServedModel } from '../../../../frontend/models/served-model.js';

/** A model of `handler` whose directory holds no ONNX file (no IO metadata). */
function fakeModel(name: string, handler: string): ServedModel {
  return {
    kind: handler,
    config: { name, version: '1.0', dir: '/nonexistent', handler, modelFile: '' },
  } as unknown as ServedModel;
}

describe('oipRouter model metadata', () => {
  let server: http.Server;
  let base = '';

  before(async () => {
    const models = new Map([
      ['omni', fakeModel('omni', 'pipeline')],
      ['user', fakeModel('user', './handler.js')],
    ]);
    server = http.createServer(express().use(oipRouter({ lookup: (n) => models.get(n) })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('should report a pipeline as Triton reports a chain of models, platform ensemble (regression: onnxruntime_onnx, for a model with no ONNX file of its own)', async () => {
    const answers = await Promise.all(
      ['omni', 'user'].map(async (m) => (await fetch(`${base}/v2/models/${m}`)).json() as Promise<unknown>),
    );
    expect(answers).to.deep.equal([
      { name: 'omni', versions: ['1.0'], platform: 'ensemble', inputs: [], outputs: [] },
      { name: 'user', versions: ['1.0'], platform: 'tsserve_handler', inputs: [], outputs: [] },
    ]);
  });
});
