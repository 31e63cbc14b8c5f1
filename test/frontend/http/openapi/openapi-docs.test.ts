import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { inferenceDocument } from '../../../../frontend/openapi/inference-doc.js';
import { managementDocument } from '../../../../frontend/openapi/management-doc.js';
import { metricsDocument } from '../../../../frontend/openapi/metrics-doc.js';
import { openApiPaths } from '../../../../frontend/http/openapi/openapi-builder.js';

describe('the OpenAPI documents', () => {
  for (const [name, doc] of [
    ['inference', inferenceDocument('1.2.3')],
    ['management', managementDocument('1.2.3')],
    ['metrics', metricsDocument('1.2.3')],
  ] as const) {
    it(`should be a valid OpenAPI 3.1 document: the ${name} API (@seriousme/openapi-schema-validator)`, async () => {
      const v = new Validator();
      const r = await v.validate(structuredClone(doc));
      expect({ valid: r.valid, errors: r.errors }).to.deep.equal({ valid: true, errors: undefined });
      expect(v.version).to.equal('3.1');
    });
  }

  it("should fail a document with a parameter 'in' a place OpenAPI does not have, naming the place", async () => {
    const doc = structuredClone(metricsDocument('1')) as {
      paths: Record<string, Record<string, { parameters: Array<Record<string, unknown>> }>>;
    };
    doc.paths['/metrics']!.get!.parameters[0]!.in = 'body';
    const r = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(r.valid).to.equal(false);
    expect(JSON.stringify(r.errors)).to.include('/paths/~1metrics/get/parameters/0');
  });
});

describe('openApiPaths', () => {
  it("should turn express's parameters, optional groups and wildcards into OpenAPI paths", () => {
    expect(openApiPaths('/models/:name{/:version}')).to.deep.equal(['/models/{name}', '/models/{name}/{version}']);
    expect(openApiPaths('/v2/models/:model{/versions/:version}/infer')).to.deep.equal([
      '/v2/models/{model}/infer',
      '/v2/models/{model}/versions/{version}/infer',
    ]);
    expect(openApiPaths('/metrics/{*rest}')).to.deep.equal(['/metrics/{rest}']);
    expect(openApiPaths('/ping')).to.deep.equal(['/ping']);
  });
});
