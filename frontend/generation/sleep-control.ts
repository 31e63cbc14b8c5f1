/**
 * vLLM's dev-mode sleep of one generation model (`POST /sleep`, `POST /wake_up`, `GET
 * /is_sleeping`): sleeping stops the model's workers, so their weights and KV cache are freed,
 * and waking starts them again (they load the model from its files, as a restart does). It is
 * vLLM's level 2 whatever level is asked: the weights already live in CPU memory, so level 1's
 * "offload the weights to CPU" has nowhere to put them. The engines' `sleep_state` gauges say
 * so (`discard_all` 1, `awake` 0, `weights_offloaded` never 1).
 */
import type { GenerationEngine } from './generation-engine.js';

/** What sleeping needs of its model. */
export interface Sleeper {
  name(): string;
  inFlight(): number;
  workers(): { readonly min: number; readonly max: number };
  engines(): readonly GenerationEngine[];
  scale(min: number, max: number): Promise<void>;
}

/** A refusal: status and message. */
export interface SleepRefused {
  readonly status: number;
  readonly message: string;
}

/** Asleep or awake, and the worker counts to restore. */
export class SleepControl {
  private asleep: { readonly min: number; readonly max: number } | null = null;

  constructor(private readonly model: Sleeper) {}

  /** True between a sleep and the next wake-up. */
  get sleeping(): boolean {
    return this.asleep !== null;
  }

  /** Marks each engine asleep and stops the workers; refused (409) while requests run; a no-op when asleep. */
  async sleep(): Promise<SleepRefused | null> {
    if (this.asleep !== null) return null;
    const n = this.model.inFlight();
    if (n > 0) {
      const what = `${n} request${n === 1 ? '' : 's'}`;
      return { status: 409, message: `model ${this.model.name()} has ${what} in flight; sleep once they finish` };
    }
    this.asleep = this.model.workers();
    for (const e of this.model.engines()) e.stats.setSleeping(true);
    await this.model.scale(0, 0);
    return null;
  }

  /** Starts the workers the sleep stopped (their engines bind awake); resolves once scaled; a no-op when awake. */
  async wakeUp(): Promise<void> {
    const was = this.asleep;
    if (was === null) return;
    this.asleep = null;
    await this.model.scale(was.min, was.max);
  }
}
