#pragma once
// JSON text into nlohmann::ordered_json (objects keep their members' order, as JSON
// Schema's `properties` and tool parameters need) in time linear in the text.
// ordered_json's own parser inserts each member by a linear search of the members
// before it, so an object of N keys costs O(N^2): a 50,000-property schema took 10 s
// of an I/O thread (docs/security.md). Duplicate keys: the last value wins, at the
// first one's place, as nlohmann's parser does.
#include <string_view>

#include <nlohmann/json.hpp>

namespace seer {

// `text` as ordered_json, or a discarded value (is_discarded()) when it is not JSON.
[[nodiscard]] nlohmann::ordered_json parse_ordered_json(std::string_view text);

}  // namespace seer
