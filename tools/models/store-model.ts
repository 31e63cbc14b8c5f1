/** One model of the demo store: a name and a writer that fills its directory. */
export interface StoreModel {
  /** Directory name inside the store, and the model's name. */
  readonly name: string;
  /** One line for `tsserve models generate --help` and its progress output. */
  readonly summary: string;
  /** Writes the model's files (model-config.yaml and the rest) into `dir`, which exists and is empty. */
  write(dir: string): void | Promise<void>;
}
