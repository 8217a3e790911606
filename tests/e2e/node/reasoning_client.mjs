// Issue 51, reasoning, through the official OpenAI Node client: reasoning_content of
// a thinking model's reply (streamed and not), usage.completion_tokens_details.
// reasoning_tokens, chat_template_kwargs / reasoning_effort switching thinking off,
// a bad reasoning_effort, and max_reasoning_tokens closing the reasoning. Random
// weights do not think on their own, so the reply is made to: a GBNF grammar (the
// `grammar` extension) for a Qwen3-template model, and DeepSeek-R1's generation
// prompt, which opens <think> itself. Prints one JSON object; reasoning_e2e_test.cc
// checks it.
// Usage: node reasoning_client.mjs QWEN3_URL R1_URL BUDGET
import OpenAI from 'openai';

const [, , qwenURL, r1URL, budgetArg] = process.argv;
const client = (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const qwen = client(qwenURL);
const r1 = client(r1URL);
const messages = [{ role: 'user', content: 'Is the sky blue?' }];
const grammar = 'root ::= "<think>\\n" [a-z] [a-z ]{2,12} [a-z] "\\n</think>\\n\\n" [a-z] [a-z ]{2,12} [a-z]';
const think = { model: 'q', messages, grammar, temperature: 0, max_tokens: 80 };
const out = {};

const whole = await qwen.chat.completions.create(think);
out.whole = { message: whole.choices[0].message, usage: whole.usage, finish: whole.choices[0].finish_reason };

const stream = await qwen.chat.completions.create({ ...think, stream: true, stream_options: { include_usage: true } });
out.stream = { reasoning: '', content: '', reasoning_chunks: 0, usage: null };
for await (const chunk of stream) {
  if (chunk.usage) out.stream.usage = chunk.usage;
  for (const c of chunk.choices) {
    if (c.delta?.reasoning_content) {
      out.stream.reasoning += c.delta.reasoning_content;
      out.stream.reasoning_chunks += 1;
    }
    out.stream.content += c.delta?.content ?? '';
  }
}

const prompt = async (extra) =>
  (await qwen.chat.completions.create({ model: 'q', messages, max_tokens: 1, ...extra })).usage.prompt_tokens;
out.prompt_tokens = {
  thinking: await prompt({}),
  kwargs_off: await prompt({ chat_template_kwargs: { enable_thinking: false } }),
  effort_none: await prompt({ reasoning_effort: 'none' }),
  effort_high: await prompt({ reasoning_effort: 'high' }),
};

try {
  await qwen.chat.completions.create({ model: 'q', messages, max_tokens: 1, reasoning_effort: 'extreme' });
  out.bad_effort = null;
} catch (e) {
  out.bad_effort = { status: e.status, param: e.param ?? e.error?.param };
}

const budget = Number(budgetArg);
const capped = { model: 'r', messages, temperature: 0, max_tokens: budget + 20, ignore_eos: true, max_reasoning_tokens: budget };
const r1Whole = await r1.chat.completions.create(capped);
out.budget = { message: r1Whole.choices[0].message, usage: r1Whole.usage };
const r1Stream = await r1.chat.completions.create({ ...capped, stream: true, stream_options: { include_usage: true } });
out.budget_stream = { reasoning: '', content: '', usage: null };
for await (const chunk of r1Stream) {
  if (chunk.usage) out.budget_stream.usage = chunk.usage;
  for (const c of chunk.choices) {
    out.budget_stream.reasoning += c.delta?.reasoning_content ?? '';
    out.budget_stream.content += c.delta?.content ?? '';
  }
}

console.log(JSON.stringify(out));
