// Structured outputs and tool calls through the official OpenAI Node client against
// `seer serve` with a random-weight model (an unconstrained sample is garbage, so
// whatever parses here parses because of the grammar). Prints one JSON object;
// tests/e2e/openai_structured_test.cc checks it.
// Usage: node structured_client.mjs BASE_URL MODEL SEEDS
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';

const [, , baseURL, model, seedsArg] = process.argv;
const seeds = Number(seedsArg ?? 5);
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 120_000 });
const out = { zod: [], zod_stream: null, tools: [], tool_stream: null };

// 1. response_format from a zod schema; .parse() validates the reply with zod itself.
const Person = z.object({
  name: z.string(),
  age: z.number(),
  tags: z.array(z.enum(['red', 'green'])),
  address: z.object({ city: z.string() }),
  nick: z.string().nullable(),
});
for (let seed = 0; seed < seeds; seed++) {
  const r = await client.chat.completions.parse({
    model, seed, max_tokens: 3000,
    messages: [{ role: 'user', content: 'Describe a person as JSON.' }],
    response_format: zodResponseFormat(Person, 'person'),
  });
  const m = r.choices[0].message;
  out.zod.push({ finish_reason: r.choices[0].finish_reason, parsed: m.parsed !== null, valid: Person.safeParse(m.parsed).success });
}
{
  const stream = await client.chat.completions.create({
    model, seed: 7, max_tokens: 3000, stream: true,
    messages: [{ role: 'user', content: 'Describe a person as JSON.' }],
    response_format: zodResponseFormat(Person, 'person'),
  });
  let text = '', finish = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  let valid = false;
  try { valid = Person.safeParse(JSON.parse(text)).success; } catch { valid = false; }
  out.zod_stream = { finish_reason: finish, valid };
}

// 2. A tool-calling round trip: forced call -> tool result -> final answer.
const Weather = z.object({ city: z.string(), unit: z.enum(['C', 'F']) });
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'The current weather in a city', strict: true,
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
                  required: ['city', 'unit'], additionalProperties: false },
  },
}];
for (let seed = 0; seed < seeds; seed++) {
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const first = await client.chat.completions.create({ model, seed, messages, tools, tool_choice: 'required', max_tokens: 3000 });
  const choice = first.choices[0];
  const call = choice.message.tool_calls?.[0];
  let args = null;
  try { args = JSON.parse(call.function.arguments); } catch { args = null; }
  const entry = {
    finish_reason: choice.finish_reason, name: call?.function?.name ?? null, id_ok: /^call_/.test(call?.id ?? ''),
    type: call?.type ?? null, args_valid: Weather.safeParse(args).success,
  };
  messages.push(choice.message);
  messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 21, unit: 'C' }) });
  const second = await client.chat.completions.create({ model, seed, messages, tools, tool_choice: 'none', max_tokens: 8, ignore_eos: true });
  entry.final_finish = second.choices[0].finish_reason;
  entry.final_is_text = typeof second.choices[0].message.content === 'string';
  out.tools.push(entry);
}
{
  const stream = await client.chat.completions.create({
    model, seed: 3, stream: true, max_tokens: 3000, tools, parallel_tool_calls: false,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
  });
  const calls = [];
  let finish = null;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    for (const d of c.delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: '', name: '', arguments: '' };
      if (d.id) calls[d.index].id = d.id;
      if (d.function?.name) calls[d.index].name += d.function.name;
      if (d.function?.arguments) calls[d.index].arguments += d.function.arguments;
    }
    finish = c.finish_reason ?? finish;
  }
  let args = null;
  try { args = JSON.parse(calls[0]?.arguments ?? ''); } catch { args = null; }
  out.tool_stream = { finish_reason: finish, count: calls.length, name: calls[0]?.name ?? null, args_valid: Weather.safeParse(args).success };
}
console.log(JSON.stringify(out));
