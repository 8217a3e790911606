// LangChain (@langchain/openai's ChatOpenAI) against `seer serve` with a random-weight
// model at temperature 1: withStructuredOutput on a zod schema by JSON schema and by
// function calling (LangChain parses with zod), bindTools with tool_choice 'required'
// (tool_calls come back parsed), and stream against invoke on the same seed. Prints
// one JSON object of what LangChain parsed; tests/e2e/client_libraries_test.cc checks it.
// Usage: node langchain_client.mjs BASE_URL MODEL SEEDS
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';

import { check, Order, Weather } from './schemas.mjs';

const [, , baseURL, model, seedsArg] = process.argv;
const seeds = Number(seedsArg ?? 3);
const chat = (extra = {}) => new ChatOpenAI({
  model, apiKey: 'not-needed', configuration: { baseURL: `${baseURL}/v1` }, temperature: 1, maxTokens: 4000,
  maxRetries: 0, user: 'e2e-user', service_tier: 'auto', ...extra,
});
const out = { json_schema: [], function_calling: [], tools: [], stream: null };

const structured = async (method, seed) => {
  const s = chat().withStructuredOutput(Order, { name: 'order', method, strict: true, includeRaw: true });
  const r = await s.invoke('Write an order as JSON.', { seed });
  return {
    finish_reason: r.raw.response_metadata?.finish_reason ?? null, parsed: r.parsed, ...check(Order, r.parsed),
  };
};
const getWeather = tool(async (input) => JSON.stringify({ temperature: 21, city: input.city }), {
  name: 'get_weather', description: 'The weather in a city', schema: Weather,
});
for (let seed = 0; seed < seeds; seed++) {
  out.json_schema.push(await structured('jsonSchema', seed));
  out.function_calling.push(await structured('functionCalling', seed));
  const m = await chat().bindTools([getWeather], { tool_choice: 'required', strict: true, parallel_tool_calls: false }).invoke('What is the weather in Paris?', { seed });
  out.tools.push({
    finish_reason: m.response_metadata?.finish_reason ?? null,
    calls: m.tool_calls.map((c) => ({ name: c.name, args: c.args, id_ok: /^call_/.test(c.id ?? ''), ...check(Weather, c.args) })),
    invalid: m.invalid_tool_calls.length,
  });
}

// Unconstrained text: the chunks assemble into what the same seed gives whole.
const text = chat({ maxTokens: 24, streamUsage: true });
const whole = await text.invoke('Tell me a story.', { seed: 11 });
let assembled = null, chunks = 0;
for await (const chunk of await text.stream('Tell me a story.', { seed: 11 })) {
  assembled = assembled === null ? chunk : assembled.concat(chunk);
  chunks++;
}
out.stream = {
  text: assembled.content, whole: whole.content, chunks,
  usage: assembled.usage_metadata, whole_usage: whole.usage_metadata,
  finish_reason: assembled.response_metadata?.finish_reason ?? null,
};

console.log(JSON.stringify(out));
