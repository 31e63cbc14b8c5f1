import { expect } from 'chai';
import { DEFAULT_BODY_LIMITS } from '../../../frontend/models/body-limits.js';
import { imageBytesOf, multipartField } from '../../../frontend/http/image-body.js';

const IMG = Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0x01]);

/** A multipart body of `parts` (name → content) with boundary `b`. */
function multipart(b: string, parts: Readonly<Record<string, Buffer>>): Buffer {
  const chunks: Buffer[] = [];
  for (const [name, content] of Object.entries(parts)) {
    chunks.push(
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="${name}"; filename="x"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
    );
    chunks.push(content, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${b}--\r\n`));
  return Buffer.concat(chunks);
}

describe('imageBytesOf (the image of a /predictions body, as TorchServe takes it)', () => {
  it('should take the raw body for image/*, application/octet-stream, curl --data-binary and no content type', () => {
    for (const type of [
      'image/jpeg',
      'image/png; q=1',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
      undefined,
    ])
      expect(imageBytesOf(type, IMG, DEFAULT_BODY_LIMITS), String(type)).to.equal(IMG);
  });

  it('should take the "data" field of a multipart body, else "body", keeping bytes that look like CRLF and dashes', () => {
    const type = 'multipart/form-data; boundary=XyZ';
    expect(multipartField(type, multipart('XyZ', { other: Buffer.from('no'), data: IMG }))).to.deep.equal(IMG);
    expect(multipartField(type, multipart('XyZ', { body: IMG }))).to.deep.equal(IMG);
    expect(
      imageBytesOf('multipart/form-data; boundary="XyZ"', multipart('XyZ', { data: IMG }), DEFAULT_BODY_LIMITS),
    ).to.deep.equal(IMG);
  });

  it('should name the fields a multipart body has when neither data nor body is there, and a missing boundary', () => {
    expect(multipartField('multipart/form-data; boundary=b', multipart('b', { file: IMG, img: IMG }))).to.deep.equal({
      status: 400,
      message: 'multipart/form-data has no field "data" or "body" (fields: "file", "img")',
    });
    expect(multipartField('multipart/form-data', IMG)).to.deep.equal({
      status: 400,
      message: 'multipart/form-data without a boundary parameter',
    });
  });

  it('should decode base64 JSON: a string, {"data"}, {"body"}, a data: URL', () => {
    const b64 = IMG.toString('base64');
    for (const v of [b64, { data: b64 }, { body: b64 }, `data:image/jpeg;base64,${b64}`])
      expect(imageBytesOf('application/json', Buffer.from(JSON.stringify(v)), DEFAULT_BODY_LIMITS)).to.deep.equal(IMG);
  });

  it('should refuse JSON that holds no base64 image, and a content type that is not an image body', () => {
    expect(imageBytesOf('application/json', Buffer.from('{"data":"%%%"}'), DEFAULT_BODY_LIMITS)).to.deep.equal({
      status: 400,
      message: 'field "data" is not base64 (expected the image\'s bytes in base64)',
    });
    expect(imageBytesOf('application/json', Buffer.from('[1,2]'), DEFAULT_BODY_LIMITS)).to.deep.equal({
      status: 400,
      message: 'a JSON body must be the image in base64: a string, or {"data": "<base64>"} (or "body")',
    });
    expect(imageBytesOf('text/plain', IMG, DEFAULT_BODY_LIMITS)).to.deep.equal({
      status: 415,
      message:
        'Content-Type "text/plain" is not an image body: send the image raw (image/jpeg, image/png, image/webp or application/octet-stream), as multipart/form-data field "data", or as base64 in JSON',
    });
  });
});
