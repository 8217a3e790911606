#include "common/ordered_json_reader.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace seer {

namespace {

using nlohmann::ordered_json;

// Builds the document as nlohmann's DOM parser does, but finds a member key in a hash
// index of its object instead of the object itself.
class LinearDomBuilder : public nlohmann::json_sax<ordered_json> {
 public:
  explicit LinearDomBuilder(ordered_json& root) : root_(root) {}

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(ordered_json::binary(std::move(v))); }

  bool start_object(std::size_t) override {
    open(put(ordered_json::object()));
    return true;
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override {
    open(put(ordered_json::array()));
    return true;
  }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Open {
    ordered_json* value;
    std::unordered_map<std::string, size_t> members;  // objects: key -> position
  };

  // Places `v` where the parser stands: the root, the next array element or the
  // member named by the last key. Returns where it went.
  ordered_json* put(ordered_json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Open& top = stack_.back();
    if (top.value->is_array()) {
      auto& a = top.value->get_ref<ordered_json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    auto& members = top.value->get_ref<ordered_json::object_t&>();
    using Members = ordered_json::object_t::Container;
    auto& list = static_cast<Members&>(members);
    auto [it, fresh] = top.members.try_emplace(key_, list.size());
    if (!fresh) {
      list[it->second].second = std::move(v);
      return &list[it->second].second;
    }
    list.emplace_back(std::move(key_), std::move(v));
    return &list.back().second;
  }
  void open(ordered_json* v) { stack_.push_back(Open{v, {}}); }
  bool close() {
    stack_.pop_back();
    return true;
  }

  ordered_json& root_;
  std::vector<Open> stack_;
  std::string key_;
};

}  // namespace

ordered_json parse_ordered_json(std::string_view text) {
  ordered_json out;
  LinearDomBuilder builder(out);
  if (!ordered_json::sax_parse(text.begin(), text.end(), &builder, nlohmann::detail::input_format_t::json,
                               /*strict=*/true, /*ignore_comments=*/false))
    return ordered_json(ordered_json::value_t::discarded);
  return out;
}

}  // namespace seer
