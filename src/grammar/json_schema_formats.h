#pragma once
// String `format`s as grammars over the string's content: date-time, date, time
// (RFC 3339), duration (RFC 3339 appendix A), email (dot-atom local part @ a host name
// or an address literal), uuid, ipv4, ipv6 (RFC 4291 text forms), hostname (RFC 1123
// labels), uri (RFC 3986 absolute URIs). Where the exact language is impractical the
// grammar is a subset, never a superset: leap seconds only at 23:59:60 UTC, host names
// of at most 253 characters as one label of up to 63 and at most five more of up to 31,
// no "--" in a label's third and fourth characters, no quoted local parts.
#include <optional>
#include <string>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

// The expression for `format`'s content, or nullopt for a format seer does not know.
std::optional<std::string> format_gbnf(RuleSet& rules, const std::string& format);

}  // namespace seer::grammar
