// Drives `seer serve` with the official OpenAI Node client: chat and completions,
// streaming and not, plus an error case. Prints one JSON object with what it saw;
// tests/e2e/openai_node_test.cc checks it.
// Usage: node openai_client.mjs BASE_URL MODEL
import OpenAI from 'openai';

const [, , baseURL, model] = process.argv;
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const messages = [
  { role: 'system', content: 'You tell stories.' },
  { role: 'user', content: 'Once upon a time' },
];
// seer's extension: generate exactly max_tokens (the random test model may hit EOS).
const extra = { ignore_eos: true };
const out = {};

const chat = await client.chat.completions.create({ model, messages, max_tokens: 6, ...extra });
out.chat = {
  object: chat.object,
  content: chat.choices[0].message.content,
  role: chat.choices[0].message.role,
  finish_reason: chat.choices[0].finish_reason,
  usage: chat.usage,
};

const chatStream = await client.chat.completions.create({
  model, messages, max_tokens: 6, stream: true, stream_options: { include_usage: true }, ...extra,
});
out.chat_stream = { chunks: 0, content: '', finish_reason: null, usage: null, role: null };
for await (const chunk of chatStream) {
  out.chat_stream.chunks++;
  if (chunk.usage) out.chat_stream.usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  if (choice.delta?.role) out.chat_stream.role = choice.delta.role;
  out.chat_stream.content += choice.delta?.content ?? '';
  if (choice.finish_reason) out.chat_stream.finish_reason = choice.finish_reason;
}

const completion = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5, ...extra });
out.completion = {
  object: completion.object,
  text: completion.choices[0].text,
  finish_reason: completion.choices[0].finish_reason,
  usage: completion.usage,
};

const completionStream = await client.completions.create({
  model, prompt: [1, 2, 3], max_tokens: 5, stream: true, ...extra,
});
out.completion_stream = { chunks: 0, text: '', finish_reason: null };
for await (const chunk of completionStream) {
  out.completion_stream.chunks++;
  const choice = chunk.choices[0];
  if (!choice) continue;
  out.completion_stream.text += choice.text ?? '';
  if (choice.finish_reason) out.completion_stream.finish_reason = choice.finish_reason;
}

try {
  await client.chat.completions.create({ model, messages, max_tokens: 'many' });
  out.error = null;
} catch (e) {
  out.error = { status: e.status, type: e.type, param: e.param, code: e.code, message: e.message };
}

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

console.log(JSON.stringify(out));
