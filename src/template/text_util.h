#pragma once
// Python's str methods that filters and methods share.
#include <string>
#include <vector>

namespace seer::tmpl {

// str.strip/lstrip/rstrip: chars empty means whitespace.
std::string strip(const std::string& s, const std::string& chars, bool left, bool right);
// str.split(sep, maxsplit): sep empty splits on runs of whitespace.
std::vector<std::string> split(const std::string& s, const std::string& sep, int64_t maxsplit = -1);
// str.replace(old, new, count); count < 0 replaces all.
std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count = -1);
std::string upper(const std::string& s);
std::string lower(const std::string& s);
// str.title(): the first letter of each run of letters upper, the rest lower.
std::string title(const std::string& s);
// str.capitalize(): the first character upper, the rest lower.
std::string capitalize(const std::string& s);

}  // namespace seer::tmpl
