/**
 * `run --provider`: what the Safe-Psych reference sends to each kind of model, and what it records
 * (docs/safe-psych.md, "Runner providers"). The reference (main.py, src/workers/generate_batch.py, src/models/*)
 * always records model_do_sample true, model_temperature 0.7 and model_top_p 0.95 in trajectories.jsonl, but its
 * providers send different things:
 *
 * - `openai` (OpenAIModel.generate): `max_completion_tokens` and the run seed, no temperature or top-p, so the
 *   API's defaults apply although 0.7 / 0.95 are recorded;
 * - `vllm` (VLLMModel.generate): SamplingParams(temperature 0.7, top_p 0.95, max_tokens), the engine seeded with the
 *   run seed — over an OpenAI-compatible vLLM server, `max_tokens`, `temperature`, `top_p` and `seed`;
 * - `anthropic` (ClaudeModel.generate) and `gemini` (GeminiModel.generate): the answer limit only (`max_tokens` /
 *   `max_output_tokens`), no sampling parameters and no seed.
 *
 * Without `--provider` Concord sends what the operator asked for and records exactly that.
 */

export const PROVIDERS = ["openai", "vllm", "anthropic", "gemini"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** main.py's MODEL_TEMPERATURE and MODEL_TOP_P, recorded by every provider (model_do_sample is always true). */
export const REFERENCE_TEMPERATURE = 0.7;
export const REFERENCE_TOP_P = 0.95;

interface Preset {
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  sendsSampling: boolean;
  sendsSeed: boolean;
}

const PRESETS: Record<Provider, Preset> = {
  openai: { maxTokensParam: "max_completion_tokens", sendsSampling: false, sendsSeed: true },
  vllm: { maxTokensParam: "max_tokens", sendsSampling: true, sendsSeed: true },
  anthropic: { maxTokensParam: "max_tokens", sendsSampling: false, sendsSeed: false },
  gemini: { maxTokensParam: "max_tokens", sendsSampling: false, sendsSeed: false },
};

/** run.json's `provider`: the preset, the request parameters it sends besides the messages, what it records. */
export interface ProviderRecord {
  name: Provider;
  sends: string[];
  records: { model_temperature: number; model_top_p: number };
}

export interface ProviderSettings {
  /** What the model requests carry. */
  sent: { temperature: number | null; topP: number | null; seed: boolean; maxTokensParam: Preset["maxTokensParam"] };
  /** What trajectories.jsonl records as model_temperature / model_top_p. */
  recorded: { temperature: number; topP: number };
  record: ProviderRecord;
}

export function providerSettings(name: Provider): ProviderSettings {
  const p = PRESETS[name];
  const sends = [
    "model",
    "messages",
    p.maxTokensParam,
    ...(p.sendsSampling ? ["temperature", "top_p"] : []),
    ...(p.sendsSeed ? ["seed"] : []),
  ];
  return {
    sent: {
      temperature: p.sendsSampling ? REFERENCE_TEMPERATURE : null,
      topP: p.sendsSampling ? REFERENCE_TOP_P : null,
      seed: p.sendsSeed,
      maxTokensParam: p.maxTokensParam,
    },
    recorded: { temperature: REFERENCE_TEMPERATURE, topP: REFERENCE_TOP_P },
    record: { name, sends, records: { model_temperature: REFERENCE_TEMPERATURE, model_top_p: REFERENCE_TOP_P } },
  };
}
