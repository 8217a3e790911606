#pragma once
// The values a chat template computes with: Jinja's (Python's) data model in small.
// Lists, dicts and namespaces are shared by reference, as Python objects are, so
// `{% do xs.append(1) %}` and `{% set ns.x = 1 %}` are seen through every name that
// holds them. Dicts keep insertion order (Python 3.7+ dicts, JSON input order).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace seer::tmpl {

// Lists and dicts nested in a value from JSON (a template's context) and in what
// tojson prints: both walk it by recursion (docs/security.md).
constexpr int kMaxValueDepth = 100;

class Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;

// Arguments of a call: positional, then keyword (name=value) in source order.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The i-th positional or the keyword `name`; nullptr when neither was given.
  const Value* get(size_t i, const char* name) const;
};
using Function = std::function<Value(const CallArgs&)>;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

  Value() = default;  // Undefined
  static Value undefined(std::string name = {});
  static Value none();
  Value(bool b);
  Value(int64_t i);
  Value(int i) : Value(static_cast<int64_t>(i)) {}
  Value(double d);
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  static Value list(List items = {});
  static Value dict(Dict items = {});
  // A namespace() object: a dict whose attributes can be set.
  static Value namespace_(Dict items = {});
  // A Python tuple: a list that prints as (a, b) (dict items, tuple literals).
  static Value tuple(List items);
  static Value function(Function f);
  // Throws seer::Error when `j` holds more than kMaxValueDepth nested arrays/objects
  // (`depth`: how many enclose it).
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_namespace() const { return kind_ == Kind::Dict && namespace_flag_; }
  bool is_tuple() const { return kind_ == Kind::List && namespace_flag_; }
  bool is_function() const { return kind_ == Kind::Function; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::Int ? static_cast<double>(i_) : kind_ == Kind::Bool ? b_ : d_; }
  const std::string& as_string() const { return *s_; }
  List& as_list() const { return *list_; }
  Dict& as_dict() const { return *dict_; }
  const Function& as_function() const { return *fn_; }
  // The name an Undefined was looked up by ("" when unknown), for error messages.
  const std::string& undefined_name() const;

  // Python truthiness: None, Undefined, False, 0, "", [] and {} are false.
  bool truthy() const;
  // str(x) as Jinja prints it ({{ x }}): None -> "None", True -> "True", lists as repr.
  std::string str() const;
  // repr(x): strings quoted, as inside a printed list.
  std::string repr() const;
  // Python's type name, for error messages ("str", "list", "dict", ...).
  std::string type_name() const;
  nlohmann::ordered_json to_json() const;

  // Dict lookup; nullptr when absent.
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v) const;
  // len(): strings count code points.
  int64_t length() const;

 private:
  Kind kind_ = Kind::Undefined;
  bool namespace_flag_ = false;  // a namespace (Dict) or a tuple (List)
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::shared_ptr<const std::string> s_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Function> fn_;
};

// Python ==: numbers compare by value, lists and dicts element-wise.
bool equal(const Value& a, const Value& b);
// Python <; throws seer::Error for types that do not order (the caller adds the position).
bool less(const Value& a, const Value& b);
// Python's repr of a float (shortest round-trip digits, "1.0", "1e+20", "inf").
std::string float_repr(double d);
// UTF-8 code points of s, one string each (indexing and slicing are by code point).
std::vector<std::string> code_points(const std::string& s);

}  // namespace seer::tmpl
