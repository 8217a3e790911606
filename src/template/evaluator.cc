#include "template/evaluator.h"

#include "template/filters.h"
#include "template/operators.h"

namespace seer::tmpl {

void fail_at(Pos p, const std::string& msg) {
  throw PositionedError(fmt::format("chat template line {}, column {}: {}", p.line, p.column, msg));
}

const Value* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

std::string Evaluator::render(const Body& body, ScopePtr globals) {
  std::string out;
  auto top = std::make_shared<Scope>();
  top->parent = std::move(globals);
  exec(body, top, out);
  return out;
}

Evaluator::Flow Evaluator::exec(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& s : body) {
    Flow f = exec_one(*s, scope, out);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec_one(const Stmt& s, const ScopePtr& scope, std::string& out) {
  switch (s.kind) {
    case Stmt::Kind::Text: out += s.text; break;
    case Stmt::Kind::Output: out += eval(*s.expr, scope).str(); break;
    case Stmt::Kind::If:
      for (size_t i = 0; i < s.conditions.size(); ++i)
        if (eval(*s.conditions[i], scope).truthy()) return exec(s.bodies[i], scope, out);
      return exec(s.else_body, scope, out);
    case Stmt::Kind::For: exec_for(s, scope, out); break;
    case Stmt::Kind::Set: exec_set(s, scope); break;
    case Stmt::Kind::SetBlock: {
      std::string text;
      exec(s.body, scope, text);
      scope->vars[s.text] = Value(text);
      break;
    }
    case Stmt::Kind::Macro: scope->vars[s.text] = make_macro(s, scope); break;
    case Stmt::Kind::CallBlock: {
      Value caller = make_macro(s, scope);
      Value callee = eval(*s.expr->a, scope);
      if (!callee.is_function()) fail_at(s.pos, "'call' needs a macro, not " + callee.type_name());
      CallArgs args = eval_args(*s.expr, scope);
      args.keyword.emplace_back("caller", caller);
      try {
        out += callee.as_function()(args).str();
      } catch (const PositionedError&) {
        throw;
      } catch (const Error& e) {
        fail_at(s.pos, e.what());
      }
      break;
    }
    case Stmt::Kind::FilterBlock: {
      std::string text;
      exec(s.body, scope, text);
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      inner->vars[kFilterBodyName] = Value(text);
      out += eval(*s.expr, inner).str();
      break;
    }
    case Stmt::Kind::Do: eval(*s.expr, scope); break;
    case Stmt::Kind::Break: return Flow::Break;
    case Stmt::Kind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

void Evaluator::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
  Value seq = eval(*s.expr, scope);
  List items;
  try {
    items = iterate(seq);
  } catch (const Error& e) {
    fail_at(s.expr->pos, e.what());
  }
  if (s.cond) {
    List kept;
    for (const Value& v : items) {
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      assign(*s.target, v, probe, s.pos);
      if (eval(*s.cond, probe).truthy()) kept.push_back(v);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec(s.else_body, scope, out);
    return;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    auto body_scope = std::make_shared<Scope>();
    body_scope->parent = scope;
    Value loop = Value::dict({
        {"index", Value(i + 1)},
        {"index0", Value(i)},
        {"revindex", Value(n - i)},
        {"revindex0", Value(n - i - 1)},
        {"first", Value(i == 0)},
        {"last", Value(i == n - 1)},
        {"length", Value(n)},
        {"previtem", i > 0 ? items[i - 1] : Value::undefined("previtem")},
        {"nextitem", i + 1 < n ? items[i + 1] : Value::undefined("nextitem")},
    });
    loop.set("cycle", Value::function([i](const CallArgs& a) {
      if (a.positional.empty()) fail("loop.cycle() needs at least one value");
      return a.positional[static_cast<size_t>(i) % a.positional.size()];
    }));
    body_scope->vars["loop"] = loop;
    assign(*s.target, items[i], body_scope, s.pos);
    if (exec(s.body, body_scope, out) == Flow::Break) break;
  }
}

void Evaluator::assign(const Expr& target, const Value& v, const ScopePtr& scope, Pos pos) {
  if (target.kind == Expr::Kind::Name) {
    scope->vars[target.name] = v;
    return;
  }
  if (target.kind == Expr::Kind::Tuple) {
    if (!v.is_list()) fail_at(pos, "cannot unpack a value of type " + v.type_name());
    const List& parts = v.as_list();
    if (parts.size() != target.items.size())
      fail_at(pos, fmt::format("cannot unpack {} values into {} names", parts.size(), target.items.size()));
    for (size_t k = 0; k < parts.size(); ++k) assign(*target.items[k], parts[k], scope, pos);
    return;
  }
  // set ns.attr = value
  Value obj = eval(*target.a, scope);
  if (!obj.is_namespace()) fail_at(target.pos, "cannot assign attribute on a non-namespace object");
  obj.set(target.name, v);
}

void Evaluator::exec_set(const Stmt& s, const ScopePtr& scope) { assign(*s.target, eval(*s.expr, scope), scope, s.pos); }

Value Evaluator::make_macro(const Stmt& s, const ScopePtr& scope) {
  const Stmt* def = &s;
  std::weak_ptr<Scope> weak = scope;
  return Value::function([this, def, weak](const CallArgs& args) -> Value {
    auto defining = weak.lock();
    if (!defining) fail("macro '{}' called after its scope ended", def->text);
    if (++depth_ > 200) {
      depth_ = 0;
      fail("macro recursion is deeper than 200 calls");
    }
    auto local = std::make_shared<Scope>();
    local->parent = defining;
    for (size_t k = 0; k < def->params.size(); ++k) {
      const MacroParam& p = def->params[k];
      if (const Value* v = args.get(k, p.name.c_str()))
        local->vars[p.name] = *v;
      else if (p.default_value)
        local->vars[p.name] = eval(*p.default_value, local);
      else
        local->vars[p.name] = Value::undefined(p.name);
    }
    if (const Value* c = args.get(SIZE_MAX, "caller")) local->vars["caller"] = *c;
    std::string out;
    exec(def->body, local, out);
    --depth_;
    return Value(out);
  });
}

}  // namespace seer::tmpl
