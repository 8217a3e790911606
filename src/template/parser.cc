#include "template/parser.h"

#include <initializer_list>

#include "common/error.h"

namespace seer::tmpl {

namespace {

ExprPtr make(Expr::Kind k, Pos p) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->pos = p;
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Body parse_template() {
    Body body = parse_body({});
    if (peek().kind != Tok::End) error(peek().pos, "unexpected '{% " + end_tag_ + " %}'");
    return body;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).kind == Tok::Op && peek(k).value == op; }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).kind == Tok::Name && peek(k).value == n; }
  bool accept_op(const char* op) {
    if (!is_op(op)) return false;
    ++i_;
    return true;
  }
  bool accept_name(const char* n) {
    if (!is_name(n)) return false;
    ++i_;
    return true;
  }
  [[noreturn]] void error(Pos p, const std::string& msg) const {
    fail("chat template line {}, column {}: {}", p.line, p.column, msg);
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::End: return "end of template";
      case Tok::BlockEnd: return "'%}'";
      case Tok::VarEnd: return "'}}'";
      case Tok::Text: return "text";
      default: return "'" + t.value + "'";
    }
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) error(peek().pos, std::string("expected '") + op + "', found " + describe(peek()));
  }
  std::string expect_name() {
    if (peek().kind != Tok::Name) error(peek().pos, "expected a name, found " + describe(peek()));
    return next().value;
  }
  void expect_block_end() {
    if (peek().kind != Tok::BlockEnd) error(peek().pos, "expected '%}', found " + describe(peek()));
    ++i_;
  }

  // Parses statements until a block tag whose name is in `ends`; leaves the
  // position at that name (after "{%") and records it in end_tag_.
  Body parse_body(std::initializer_list<const char*> ends) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::End) {
        if (ends.size() == 0) return body;
        error(t.pos, "unexpected end of template: expected '{% " + std::string(*(ends.end() - 1)) + " %}'");
      }
      if (t.kind == Tok::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Text;
        s->pos = t.pos;
        s->text = t.value;
        body.push_back(std::move(s));
        ++i_;
      } else if (t.kind == Tok::VarBegin) {
        ++i_;
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Output;
        s->pos = t.pos;
        s->expr = parse_tuple_expr();
        if (peek().kind != Tok::VarEnd) error(peek().pos, "expected '}}', found " + describe(peek()));
        ++i_;
        body.push_back(std::move(s));
      } else if (t.kind == Tok::BlockBegin) {
        const Token& name = peek(1);
        if (name.kind != Tok::Name) error(name.pos, "expected a statement name, found " + describe(name));
        for (const char* e : ends)
          if (name.value == e) {
            end_tag_ = name.value;
            i_ += 1;
            return body;
          }
        i_ += 1;
        if (auto s = parse_statement()) body.push_back(std::move(s));
      } else {
        error(t.pos, "unexpected " + describe(t));
      }
    }
  }

  // At the statement name; returns null for tags that render nothing themselves.
  std::unique_ptr<Stmt> parse_statement() {
    const Token& nt = next();
    const std::string& n = nt.value;
    auto s = std::make_unique<Stmt>();
    s->pos = nt.pos;
    if (n == "if") {
      s->kind = Stmt::Kind::If;
      s->conditions.push_back(parse_expr());
      expect_block_end();
      while (true) {
        s->bodies.push_back(parse_body({"elif", "else", "endif"}));
        std::string tag = next().value;
        if (tag == "elif") {
          s->conditions.push_back(parse_expr());
          expect_block_end();
        } else if (tag == "else") {
          expect_block_end();
          s->else_body = parse_body({"endif"});
          ++i_;
          expect_block_end();
          break;
        } else {
          expect_block_end();
          break;
        }
      }
    } else if (n == "for") {
      s->kind = Stmt::Kind::For;
      s->target = parse_target();
      if (!accept_name("in")) error(peek().pos, "expected 'in', found " + describe(peek()));
      s->expr = parse_expr(/*no_conditional=*/true);
      if (accept_name("if")) s->cond = parse_expr(true);
      accept_name("recursive");
      expect_block_end();
      s->body = parse_body({"else", "endfor"});
      if (next().value == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"});
        ++i_;
      }
      expect_block_end();
    } else if (n == "set") {
      s->target = parse_target(/*allow_attr=*/true);
      if (accept_op("=")) {
        s->kind = Stmt::Kind::Set;
        s->expr = parse_tuple_expr();
        expect_block_end();
      } else {
        if (s->target->kind != Expr::Kind::Name) error(s->pos, "a block set needs a plain name");
        s->kind = Stmt::Kind::SetBlock;
        s->text = s->target->name;
        expect_block_end();
        s->body = parse_body({"endset"});
        ++i_;
        expect_block_end();
      }
    } else if (n == "macro") {
      s->kind = Stmt::Kind::Macro;
      s->text = expect_name();
      s->params = parse_params();
      expect_block_end();
      s->body = parse_body({"endmacro"});
      ++i_;
      expect_block_end();
    } else if (n == "call") {
      s->kind = Stmt::Kind::CallBlock;
      if (is_op("(")) s->params = parse_params();
      s->expr = parse_expr();
      if (s->expr->kind != Expr::Kind::Call) error(s->pos, "'call' needs a macro call");
      expect_block_end();
      s->body = parse_body({"endcall"});
      ++i_;
      expect_block_end();
    } else if (n == "filter") {
      s->kind = Stmt::Kind::FilterBlock;
      ExprPtr holder = make(Expr::Kind::Name, s->pos);
      holder->name = kFilterBodyName;
      auto f = make(Expr::Kind::Filter, peek().pos);
      f->name = expect_name();
      if (is_op("(")) parse_args(*f);
      f->a = std::move(holder);
      s->expr = parse_filter_chain(std::move(f));
      expect_block_end();
      s->body = parse_body({"endfilter"});
      ++i_;
      expect_block_end();
    } else if (n == "do") {
      s->kind = Stmt::Kind::Do;
      s->expr = parse_tuple_expr();
      expect_block_end();
    } else if (n == "break" || n == "continue") {
      s->kind = n == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
      expect_block_end();
    } else if (n == "generation" || n == "endgeneration") {
      // Hugging Face's marker for assistant-token masks; it renders nothing.
      expect_block_end();
      return nullptr;
    } else {
      error(nt.pos, "unknown statement '" + n + "'");
    }
    return s;
  }

  std::vector<MacroParam> parse_params() {
    std::vector<MacroParam> params;
    expect_op("(");
    while (!accept_op(")")) {
      if (!params.empty()) expect_op(",");
      if (accept_op(")")) break;
      MacroParam p;
      p.name = expect_name();
      if (accept_op("=")) p.default_value = parse_expr();
      params.push_back(std::move(p));
    }
    return params;
  }

  // A name, "a.b" (set only) or "a, b" (a tuple of names).
  ExprPtr parse_target(bool allow_attr = false) {
    Pos p = peek().pos;
    auto one = [&]() {
      auto e = make(Expr::Kind::Name, peek().pos);
      e->name = expect_name();
      if (allow_attr && accept_op(".")) {
        auto a = make(Expr::Kind::Attr, e->pos);
        a->name = expect_name();
        a->a = std::move(e);
        return a;
      }
      return e;
    };
    ExprPtr first = one();
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::Tuple, p);
    t->items.push_back(std::move(first));
    while (accept_op(",")) t->items.push_back(one());
    return t;
  }

  // expr [, expr ...] (a tuple without parentheses)
  ExprPtr parse_tuple_expr() {
    Pos p = peek().pos;
    ExprPtr first = parse_expr();
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::Tuple, p);
    t->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (peek().kind == Tok::VarEnd || peek().kind == Tok::BlockEnd) break;
      t->items.push_back(parse_expr());
    }
    return t;
  }

  // Bounds the recursion of nested expressions and blocks (a hostile template must
  // get an error, not a stack overflow).
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.error(p.peek().pos, "the template nests deeper than 200 levels");
    }
    ~DepthGuard() { --p.depth_; }
  };
  static constexpr int kMaxDepth = 200;

  ExprPtr parse_expr(bool no_conditional = false) {
    DepthGuard guard(*this);
    ExprPtr e = parse_or();
    if (no_conditional) return e;
    while (is_name("if")) {
      Pos p = next().pos;
      auto c = make(Expr::Kind::Conditional, p);
      c->a = parse_or();
      c->b = std::move(e);
      if (accept_name("else")) c->c = parse_expr();
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(const std::string& op, Pos p, ExprPtr l, ExprPtr r) {
    auto e = make(Expr::Kind::Binary, p);
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) {
      Pos p = next().pos;
      e = binary("or", p, std::move(e), parse_and());
    }
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) {
      Pos p = next().pos;
      e = binary("and", p, std::move(e), parse_not());
    }
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      auto e = make(Expr::Kind::Unary, next().pos);
      e->name = "not";
      e->a = parse_not();
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr e = parse_math1();
    while (true) {
      Pos p = peek().pos;
      std::string op;
      if (peek().kind == Tok::Op &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">="))) {
        op = next().value;
      } else if (is_name("in")) {
        ++i_;
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        i_ += 2;
        op = "not in";
      } else {
        return e;
      }
      e = binary(op, p, std::move(e), parse_math1());
    }
  }
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      e = binary(t.value, t.pos, std::move(e), parse_concat());
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (is_op("~")) {
      Pos p = next().pos;
      e = binary("~", p, std::move(e), parse_math2());
    }
    return e;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      e = binary(t.value, t.pos, std::move(e), parse_pow());
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (is_op("**")) {
      Pos p = next().pos;
      e = binary("**", p, std::move(e), parse_unary(true));
    }
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = make(Expr::Kind::Unary, t.pos);
      e->name = t.value;
      DepthGuard guard(*this);
      e->a = parse_unary(false);
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    return with_filter ? parse_filter_chain(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    if (t.kind == Tok::Name) {
      ++i_;
      auto lit = [&](Value v) {
        auto e = make(Expr::Kind::Literal, t.pos);
        e->value = std::move(v);
        return e;
      };
      if (t.value == "true" || t.value == "True") return lit(Value(true));
      if (t.value == "false" || t.value == "False") return lit(Value(false));
      if (t.value == "none" || t.value == "None") return lit(Value::none());
      auto e = make(Expr::Kind::Name, t.pos);
      e->name = t.value;
      return e;
    }
    if (t.kind == Tok::String) {
      auto e = make(Expr::Kind::Literal, t.pos);
      std::string s;
      while (peek().kind == Tok::String) s += next().value;  // adjacent strings join
      e->value = Value(s);
      return e;
    }
    if (t.kind == Tok::Int || t.kind == Tok::Float) {
      ++i_;
      auto e = make(Expr::Kind::Literal, t.pos);
      try {
        e->value = t.kind == Tok::Int ? Value(static_cast<int64_t>(std::stoll(t.value))) : Value(std::stod(t.value));
      } catch (const std::exception&) {
        error(t.pos, "number '" + t.value + "' is out of range");
      }
      return e;
    }
    if (is_op("(")) {
      Pos p = next().pos;
      if (accept_op(")")) return make(Expr::Kind::Tuple, p);
      ExprPtr first = parse_expr();
      if (accept_op(")")) return first;
      auto tup = make(Expr::Kind::Tuple, p);
      tup->items.push_back(std::move(first));
      while (accept_op(",")) {
        if (is_op(")")) break;
        tup->items.push_back(parse_expr());
      }
      expect_op(")");
      return tup;
    }
    if (is_op("[")) {
      auto e = make(Expr::Kind::List, next().pos);
      while (!accept_op("]")) {
        if (!e->items.empty()) expect_op(",");
        if (accept_op("]")) break;
        e->items.push_back(parse_expr());
      }
      return e;
    }
    if (is_op("{")) {
      auto e = make(Expr::Kind::Dict, next().pos);
      while (!accept_op("}")) {
        if (!e->items.empty()) expect_op(",");
        if (accept_op("}")) break;
        e->keys.push_back(parse_expr());
        expect_op(":");
        e->items.push_back(parse_expr());
      }
      return e;
    }
    error(t.pos, "unexpected " + describe(t));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        Pos p = next().pos;
        auto a = make(Expr::Kind::Attr, p);
        if (peek().kind == Tok::Int) {  // x.0 is x[0]
          a->kind = Expr::Kind::Index;
          a->b = make(Expr::Kind::Literal, peek().pos);
          a->b->value = Value(static_cast<int64_t>(std::stoll(next().value)));
        } else {
          a->name = expect_name();
        }
        a->a = std::move(e);
        e = std::move(a);
      } else if (is_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr e) {
    Pos p = next().pos;
    ExprPtr parts[3];
    int n = 0;
    bool slice = false;
    while (true) {
      if (!is_op(":") && !is_op("]")) parts[n] = parse_expr();
      if (accept_op(":")) {
        slice = true;
        if (++n > 2) error(p, "a slice has at most three parts");
        continue;
      }
      expect_op("]");
      break;
    }
    auto s = make(slice ? Expr::Kind::Slice : Expr::Kind::Index, p);
    s->a = std::move(e);
    s->b = std::move(parts[0]);
    s->c = std::move(parts[1]);
    s->d = std::move(parts[2]);
    if (!slice && !s->b) error(p, "empty subscript");
    return s;
  }

  void parse_args(Expr& e) {
    expect_op("(");
    while (!accept_op(")")) {
      if (!e.args.empty() || !e.kwargs.empty()) expect_op(",");
      if (accept_op(")")) break;
      if (peek().kind == Tok::Name && is_op("=", 1)) {
        KeywordArg k;
        k.name = next().value;
        ++i_;
        k.value = parse_expr();
        e.kwargs.push_back(std::move(k));
      } else {
        if (!e.kwargs.empty()) error(peek().pos, "positional argument after keyword argument");
        e.args.push_back(parse_expr());
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto c = make(Expr::Kind::Call, callee->pos);
    c->a = std::move(callee);
    parse_args(*c);
    return c;
  }

  ExprPtr parse_filter_chain(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        Pos p = next().pos;
        auto f = make(Expr::Kind::Filter, p);
        f->name = expect_name();
        while (accept_op(".")) f->name += "." + expect_name();
        if (is_op("(")) parse_args(*f);
        f->a = std::move(e);
        e = std::move(f);
      } else if (is_name("is")) {
        Pos p = next().pos;
        auto t = make(Expr::Kind::Test, p);
        t->negated = accept_name("not");
        if (peek().kind == Tok::Op && (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">=")))
          t->name = next().value;
        else
          t->name = expect_name();
        if (is_op("(")) {
          parse_args(*t);
        } else if ((peek().kind == Tok::Name || peek().kind == Tok::String || peek().kind == Tok::Int ||
                    peek().kind == Tok::Float || is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and") && !is_name("if") && !is_name("in") &&
                   !is_name("not") && !is_name("is")) {
          t->args.push_back(parse_postfix(parse_primary()));
        }
        t->a = std::move(e);
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  std::string end_tag_;
  int depth_ = 0;
};

}  // namespace

Body parse(const std::string& source, const LexOptions& options) { return Parser(lex(source, options)).parse_template(); }

}  // namespace seer::tmpl
