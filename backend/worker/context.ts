/**
 * The `context` every handler stage receives. One object per worker, so a handler that keeps it
 * from `initialize` (as TorchServe handlers keep `self.context`) still sees the current batch's
 * request ids. ONNX sessions opened through it are tracked and released when the worker exits.
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { createSession } from '../onnx/ort.js';
import type { OrtSession } from '../onnx/ort.js';
import type { WorkerMetricsApi } from '../metrics/worker-metrics.js';
import type { HandlerContext, HandlerSession } from '../handlers/types.js';
import { makeRequestError } from '../handlers/request-error.js';
import { resolveInModelDir } from './model-path.js';

/** The context plus the worker's handles on it. */
export class WorkerContext implements HandlerContext {
  readonly modelName: string;
  readonly handlerOptions: Readonly<Record<string, unknown>>;
  private ids: readonly string[] = [];
  private readonly sessions: OrtSession[] = [];

  constructor(
    readonly manifest: ModelConfig,
    /** Real path of the model directory. */
    readonly modelDir: string,
    readonly metrics: WorkerMetricsApi,
  ) {
    this.modelName = manifest.name;
    this.handlerOptions = manifest.handlerOptions ?? {};
  }

  get requestIds(): readonly string[] {
    return this.ids;
  }

  /** Sets the batch in progress (also on the metrics cache, for default request ids). */
  setRequestIds(ids: readonly string[]): void {
    this.ids = Object.freeze(ids.slice());
    this.metrics.setRequestIds(ids);
  }

  async createSession(file: string): Promise<HandlerSession> {
    const resolved = resolveInModelDir(this.modelDir, file);
    if (!resolved.ok) throw new Error(`model file refused: ${resolved.error}`);
    const session = await createSession(resolved.file, { threads: this.manifest.threads });
    this.sessions.push(session);
    return session;
  }

  requestError(message: string, status = 400): Error {
    return makeRequestError(message, status);
  }

  /** Releases every session opened through this context; errors are ignored (we are exiting). */
  async releaseSessions(): Promise<void> {
    const all = this.sessions.splice(0);
    await Promise.all(all.map((s) => s.release().catch(() => undefined)));
  }
}
