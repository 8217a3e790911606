#pragma once
// Runs a parsed template: statements (evaluator.cc) over expressions
// (expressions.cc), with Jinja's scoping (a for loop's body and a macro's body get
// their own scope; if and set do not open one) and its Undefined rules (an unknown
// name is Undefined: falsy, prints "", iterates as empty; only taking an attribute
// or item of it is an error).
#include <memory>
#include <string>
#include <unordered_map>

#include "common/error.h"
#include "template/ast.h"
#include "template/value.h"

namespace seer::tmpl {

// An error that already names its template position.
class PositionedError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void fail_at(Pos p, const std::string& msg);

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  const Value* lookup(const std::string& name) const;
};
using ScopePtr = std::shared_ptr<Scope>;

class Evaluator {
 public:
  // Renders `body` with `globals` (messages, bos_token, ... and the builtins).
  std::string render(const Body& body, ScopePtr globals);

  Value eval(const Expr& e, const ScopePtr& scope);

 private:
  enum class Flow { Normal, Break, Continue };
  Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec_one(const Stmt& s, const ScopePtr& scope, std::string& out);
  void exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
  void exec_set(const Stmt& s, const ScopePtr& scope);
  Value make_macro(const Stmt& s, const ScopePtr& scope);
  void assign(const Expr& target, const Value& v, const ScopePtr& scope, Pos pos);

  Value eval_attr(const Expr& e, const ScopePtr& scope);
  Value eval_index(const Expr& e, const ScopePtr& scope);
  Value eval_slice(const Expr& e, const ScopePtr& scope);
  Value eval_call(const Expr& e, const ScopePtr& scope);
  Value eval_filter(const Expr& e, const ScopePtr& scope);
  Value eval_test(const Expr& e, const ScopePtr& scope);
  Value eval_binary(const Expr& e, const ScopePtr& scope);
  CallArgs eval_args(const Expr& e, const ScopePtr& scope);

  int depth_ = 0;  // macro recursion guard
};

}  // namespace seer::tmpl
