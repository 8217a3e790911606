// The official OpenAI Node client against `seer serve` with a random-weight model at
// temperature 1: chat.completions.parse with a zod schema of bounded integers and
// numbers, uuid, date, pattern and bounded strings and arrays (with n, top_logprobs,
// max_completion_tokens, user, store, metadata and service_tier), and runTools with a zodFunction (streamed and not). The grammar makes
// the output valid; zod checks it. Prints one JSON object of what the client parsed;
// tests/e2e/client_libraries_test.cc checks it.
// Usage: node openai_zod_client.mjs BASE_URL MODEL SEEDS
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';

import { check, Order, Weather } from './schemas.mjs';

const [, , baseURL, model, seedsArg] = process.argv;
const seeds = Number(seedsArg ?? 3);
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 300_000 });
const messages = [{ role: 'user', content: 'Write an order as JSON.' }];
const out = { parse: [], run_tools: [], run_tools_stream: null };

for (let seed = 0; seed < seeds; seed++) {
  const r = await client.chat.completions.parse({
    model, seed, messages, temperature: 1, max_completion_tokens: 4000, n: 2, logprobs: true, top_logprobs: 2,
    user: 'e2e-user', store: false, metadata: { suite: 'e2e' }, service_tier: 'auto',
    response_format: zodResponseFormat(Order, 'order'),
  });
  const choices = r.choices.map((c) => ({
    index: c.index,
    finish_reason: c.finish_reason,
    parsed: c.message.parsed,
    ...check(Order, c.message.parsed),
    content: c.message.content,
    logprob_text: c.logprobs.content.map((e) => e.token).join(''),
    logprob_tokens: c.logprobs.content.length,
    top_counts: [...new Set(c.logprobs.content.map((e) => e.top_logprobs.length))],
  }));
  out.parse.push({ choices, completion_tokens: r.usage.completion_tokens });
}

// runTools: the named tool is called once with what zod parsed (zodFunction parses the
// arguments with Weather; arguments zod rejects go back to the model, not to getWeather).
const runOnce = async (seed, stream) => {
  const calls = [];
  const runner = client.chat.completions.runTools({
    model, seed, temperature: 1, max_tokens: 2000, stream, parallel_tool_calls: false,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    tools: [zodFunction({ name: 'get_weather', parameters: Weather, function: (args) => { calls.push(args); return { temperature: 21 }; } })],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  const final = await runner.finalChatCompletion();
  const roles = runner.messages.map((m) => m.role);
  const tool = runner.messages.find((m) => m.role === 'tool');
  return {
    calls: calls.map((a) => ({ args: a, ...check(Weather, a) })),
    roles, tool_result: tool?.content ?? null, finish_reason: final.choices[0].finish_reason,
  };
};
for (let seed = 0; seed < seeds; seed++) out.run_tools.push(await runOnce(seed, false));
out.run_tools_stream = await runOnce(seeds, true);

console.log(JSON.stringify(out));
