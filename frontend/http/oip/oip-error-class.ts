/** The Open Inference Protocol's refusal of a request, as the codec and the route throw it. */

/** A request the protocol rejects: HTTP status and the `error` message. */
export class OipError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
