#pragma once
// The parsed template: expressions and statements, each with the position of its
// first token (runtime errors name it).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "template/lexer.h"
#include "template/value.h"

namespace seer::tmpl {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct KeywordArg {
  std::string name;
  ExprPtr value;
};

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    List,         // items
    Tuple,        // items
    Dict,         // keys[i]: items[i]
    Attr,         // a.name
    Index,        // a[b]
    Slice,        // a[b:c:d] (absent parts are null)
    Call,         // a(args, kwargs)
    Filter,       // a | name(args, kwargs)
    Test,         // a is [not] name(args)
    Unary,        // op a  ("not", "-", "+")
    Binary,       // a op b (and or in "not in" == != < <= > >= + - * / // % ** ~)
    Conditional,  // b if a else c (c may be null)
  };
  Kind kind;
  Pos pos;
  Value value;
  std::string name;  // variable, attribute, filter, test or operator
  bool negated = false;
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items, keys;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
};

// The name a {% filter %} block's rendered body is bound to (no template can spell it).
inline constexpr const char* kFilterBodyName = "\x01filter_body";

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  enum class Kind {
    Text,       // text
    Output,     // {{ expr }}
    If,         // conditions[i] -> bodies[i]; else_body
    For,        // for targets in expr [if cond]: body; else_body
    Set,        // set target = expr (target is a Name, an Attr of a name, or a Tuple)
    SetBlock,   // set name %}body{% endset
    Macro,      // macro name(params): body
    CallBlock,  // call(params) expr: body (the body is `caller`)
    FilterBlock,// filter name(args): body  (expr: the filters applied to kFilterBodyName)
    Do,         // do expr
    Break,
    Continue,
  };
  Kind kind;
  Pos pos;
  std::string text;  // Text; the SetBlock/Macro name
  ExprPtr expr;      // Output, Set value, For iterable, CallBlock call, Do
  ExprPtr target;    // Set, For
  ExprPtr cond;      // For filter
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body, else_body;
  std::vector<MacroParam> params;
};

}  // namespace seer::tmpl
