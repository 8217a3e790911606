// Issue 51 through the official OpenAI Node client: chat logprobs with top_logprobs
// (streamed and not), n choices (streamed and not), legacy completions logprobs and
// usage.prompt_tokens_details.cached_tokens on a repeated long prompt. Prints one
// JSON object with what the client parsed; tests/e2e/openai_node_test.cc checks it.
// Usage: node sampling_client.mjs BASE_URL MODEL
import OpenAI from 'openai';

const [, , baseURL, model] = process.argv;
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const messages = [{ role: 'user', content: 'Once upon a time' }];
const extra = { ignore_eos: true };  // seer's extension: exactly max_tokens
const out = {};

const lp = await client.chat.completions.create({
  model, messages, max_tokens: 4, logprobs: true, top_logprobs: 3, ...extra,
});
out.chat_logprobs = lp.choices[0].logprobs.content.map((e) => ({
  token: e.token, logprob: e.logprob, bytes: e.bytes, top: e.top_logprobs,
}));

const lpStream = await client.chat.completions.create({
  model, messages, max_tokens: 4, logprobs: true, top_logprobs: 3, stream: true, ...extra,
});
out.chat_logprobs_stream = [];
for await (const chunk of lpStream)
  for (const c of chunk.choices) for (const e of c.logprobs?.content ?? []) out.chat_logprobs_stream.push(e);

const n2 = await client.chat.completions.create({ model, messages, max_tokens: 3, n: 2, seed: 7, ...extra });
out.n = {
  indices: n2.choices.map((c) => c.index),
  contents: n2.choices.map((c) => c.message.content),
  finish: n2.choices.map((c) => c.finish_reason),
  usage: n2.usage,
};

const n2Stream = await client.chat.completions.create({
  model, messages, max_tokens: 3, n: 2, seed: 7, stream: true, stream_options: { include_usage: true }, ...extra,
});
out.n_stream = { contents: {}, finish: {}, roles: {}, usage: null };
for await (const chunk of n2Stream) {
  if (chunk.usage) out.n_stream.usage = chunk.usage;
  for (const c of chunk.choices) {
    out.n_stream.contents[c.index] = (out.n_stream.contents[c.index] ?? '') + (c.delta?.content ?? '');
    if (c.delta?.role) out.n_stream.roles[c.index] = c.delta.role;
    if (c.finish_reason) out.n_stream.finish[c.index] = c.finish_reason;
  }
}

const legacy = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 3, logprobs: 2, ...extra });
out.completion_logprobs = legacy.choices[0].logprobs;
out.completion_text = legacy.choices[0].text;

const echo = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 2, echo: true, ...extra });
out.echo_text = echo.choices[0].text;

// A long prompt twice: the second finds the first's K/V in the prefix cache.
const long = [{ role: 'user', content: 'The little dog ran to the park and played with a red ball. '.repeat(3) }];
const first = await client.chat.completions.create({ model, messages: long, max_tokens: 2, ...extra });
const second = await client.chat.completions.create({ model, messages: long, max_tokens: 2, ...extra });
out.cached = {
  first: first.usage.prompt_tokens_details?.cached_tokens ?? null,
  second: second.usage.prompt_tokens_details?.cached_tokens ?? null,
  prompt_tokens: second.usage.prompt_tokens,
  reasoning: second.usage.completion_tokens_details?.reasoning_tokens ?? null,
};
const secondStream = await client.chat.completions.create({
  model, messages: long, max_tokens: 2, stream: true, stream_options: { include_usage: true }, ...extra,
});
for await (const chunk of secondStream)
  if (chunk.usage) out.cached.stream = chunk.usage.prompt_tokens_details?.cached_tokens ?? null;

try {
  await client.chat.completions.create({ model, messages, max_tokens: 2, logprobs: true, top_logprobs: 21 });
  out.error = null;
} catch (e) {
  out.error = { status: e.status, param: e.param ?? e.error?.param ?? null };
}

console.log(JSON.stringify(out));
