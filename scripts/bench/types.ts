export interface Figure {
  value: number;
  unit: string;
  /** Human-readable target such as "<= 50"; null for a figure that is only reported. */
  target: string | null;
  pass: boolean | null;
}
export type Figures = Record<string, Figure>;
export interface Benchmark {
  name: string;
  run: (ctx: { log: (line: string) => void }) => Promise<Figures>;
}
