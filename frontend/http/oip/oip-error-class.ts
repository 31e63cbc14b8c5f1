/** The Open Inference Protocol's refusal of a request, as the codec and the route throw it. */
import { capMessage } from '../../../schema/echo.js';

/** A request the protocol rejects: HTTP status and the `error` message. */
export class OipError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    // Capped once here: a refusal echoing an input name, datatype or shape stays bounded.
    super(capMessage(message));
  }
}
