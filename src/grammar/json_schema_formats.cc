#include "grammar/json_schema_formats.h"

#include <map>

#include <fmt/format.h>

namespace seer::grammar {
namespace {

// Rule bodies with {p} for the rule-name prefix; each format names its start rule.
constexpr const char* kDate = R"({p}-date ::= {p}-year "-" ( {p}-month31 "-" {p}-day31 | {p}-month30 "-" {p}-day30 | "02-" {p}-day28 ) | {p}-leap-year "-02-29"
{p}-year ::= [0-9]{4}
{p}-month31 ::= "01" | "03" | "05" | "07" | "08" | "10" | "12"
{p}-month30 ::= "04" | "06" | "09" | "11"
{p}-day28 ::= "0" [1-9] | "1" [0-9] | "2" [0-8]
{p}-day30 ::= {p}-day28 | "29" | "30"
{p}-day31 ::= {p}-day30 | "31"
{p}-leap-year ::= [0-9] [0-9] ( [02468] [48] | [13579] [26] | [2468] "0" ) | ( [02468] [048] | [13579] [26] ) "00"
)";

constexpr const char* kTime = R"({p}-time ::= {p}-hhmm ":" [0-5] [0-9] {p}-secfrac {p}-offset | "23:59:60" {p}-secfrac {p}-utc
{p}-hhmm ::= ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9]
{p}-secfrac ::= ( "." [0-9]{1,9} )?
{p}-offset ::= [Zz] | [-+] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9]
{p}-utc ::= [Zz] | [-+] "00:00"
)";

constexpr const char* kDuration = R"({p}-duration ::= "P" ( {p}-dur-date | {p}-dur-time | {p}-dur-n "W" )
{p}-dur-n ::= [0-9]{1,9}
{p}-dur-date ::= ( {p}-dur-n "Y" ( {p}-dur-n "M" ( {p}-dur-n "D" )? )? | {p}-dur-n "M" ( {p}-dur-n "D" )? | {p}-dur-n "D" ) {p}-dur-time?
{p}-dur-time ::= "T" ( {p}-dur-n "H" ( {p}-dur-n "M" ( {p}-dur-n "S" )? )? | {p}-dur-n "M" ( {p}-dur-n "S" )? | {p}-dur-n "S" )
)";

constexpr const char* kUuid = R"({p}-uuid ::= {p}-hex{8} "-" {p}-hex{4} "-" {p}-hex{4} "-" {p}-hex{4} "-" {p}-hex{12}
{p}-hex ::= [0-9a-fA-F]
)";

constexpr const char* kIpv4 = R"({p}-ipv4 ::= {p}-octet "." {p}-octet "." {p}-octet "." {p}-octet
{p}-octet ::= [0-9] | [1-9] [0-9] | "1" [0-9] [0-9] | "2" [0-4] [0-9] | "25" [0-5]
)";

// RFC 4291 section 2.2 / RFC 3986's IPv6address.
constexpr const char* kIpv6 = R"({p}-ipv6 ::= {p}-h16c{6} {p}-ls32 | "::" {p}-h16c{5} {p}-ls32 | {p}-h16? "::" {p}-h16c{4} {p}-ls32 | ( {p}-h16c{0,1} {p}-h16 )? "::" {p}-h16c{3} {p}-ls32 | ( {p}-h16c{0,2} {p}-h16 )? "::" {p}-h16c{2} {p}-ls32 | ( {p}-h16c{0,3} {p}-h16 )? "::" {p}-h16c {p}-ls32 | ( {p}-h16c{0,4} {p}-h16 )? "::" {p}-ls32 | ( {p}-h16c{0,5} {p}-h16 )? "::" {p}-h16 | ( {p}-h16c{0,6} {p}-h16 )? "::"
{p}-h16 ::= [0-9a-fA-F]{1,4}
{p}-h16c ::= {p}-h16 ":"
{p}-ls32 ::= {p}-h16 ":" {p}-h16 | {p}-ipv4
)";

constexpr const char* kHostname = R"({p}-hostname ::= {p}-label63 ( "." {p}-label31 ){0,5}
{p}-an ::= [a-zA-Z0-9]
{p}-anh ::= [a-zA-Z0-9-]
{p}-label63 ::= {p}-an | {p}-an {p}-an | {p}-an {p}-anh {p}-an | {p}-an {p}-anh {p}-anh {p}-an | {p}-an {p}-anh ( {p}-an {p}-anh | "-" {p}-an ) {p}-anh{0,58} {p}-an
{p}-label31 ::= {p}-an | {p}-an {p}-an | {p}-an {p}-anh {p}-an | {p}-an {p}-anh {p}-anh {p}-an | {p}-an {p}-anh ( {p}-an {p}-anh | "-" {p}-an ) {p}-anh{0,26} {p}-an
)";

constexpr const char* kEmail = R"({p}-email ::= {p}-atom ( "." {p}-atom ){0,31} "@" ( {p}-hostname | "[" {p}-ipv4 "]" | "[IPv6:" {p}-ipv6 "]" )
{p}-atom ::= [a-zA-Z0-9!#$%&'*+/=?^_`{|}~\-]{1,64}
)";

// RFC 3986: scheme ":" hier-part [ "?" query ] [ "#" fragment ].
constexpr const char* kUri = R"({p}-uri ::= [a-zA-Z] [a-zA-Z0-9+.\-]{0,31} ":" {p}-hier ( "?" {p}-query )? ( "#" {p}-query )?
{p}-hier ::= "//" {p}-authority {p}-segs | "/" ( {p}-pchar+ {p}-segs )? | {p}-pchar+ {p}-segs | ""
{p}-authority ::= ( {p}-userchar* "@" )? {p}-host ( ":" [0-9]{0,5} )?
{p}-host ::= "[" {p}-ipv6 "]" | {p}-regchar*
{p}-segs ::= ( "/" {p}-pchar* )*
{p}-query ::= ( {p}-pchar | [/?] )*
{p}-pchar ::= {p}-regchar | [:@]
{p}-userchar ::= {p}-regchar | ":"
{p}-regchar ::= [a-zA-Z0-9\-._~!$&'()*+,;=] | "%" [0-9a-fA-F] [0-9a-fA-F]
)";

struct Format {
  const char* start;
  std::vector<const char*> parts;
};

const std::map<std::string, Format>& formats() {
  static const std::map<std::string, Format> kFormats = {
      {"date", {"date", {kDate}}},
      {"time", {"time", {kTime}}},
      {"date-time", {"date-time", {kDate, kTime}}},
      {"duration", {"duration", {kDuration}}},
      {"uuid", {"uuid", {kUuid}}},
      {"ipv4", {"ipv4", {kIpv4}}},
      {"ipv6", {"ipv6", {kIpv6, kIpv4}}},
      {"hostname", {"hostname", {kHostname}}},
      {"email", {"email", {kEmail, kHostname, kIpv4, kIpv6}}},
      {"uri", {"uri", {kUri, kIpv6, kIpv4}}},
  };
  return kFormats;
}

}  // namespace

std::optional<std::string> format_gbnf(RuleSet& rules, const std::string& format) {
  auto it = formats().find(format);
  if (it == formats().end()) return std::nullopt;
  const std::string p = rules.prefix() + "-fmt";
  for (const char* part : it->second.parts)
    (void)rules.memo(std::string("format-part ") + part, [&] {
      std::string text = part;
      for (size_t i; (i = text.find("{p}")) != std::string::npos;) text.replace(i, 3, p);
      size_t start = 0;
      while (start < text.size()) {
        const size_t end = text.find('\n', start);
        const std::string line = text.substr(start, end - start);
        const size_t def = line.find(" ::= ");
        rules.emit(line.substr(0, def), line.substr(def + 5));
        start = end + 1;
      }
      return std::string();
    });
  if (format == "date-time") return rules.memo("format date-time", [&] {
      return rules.rule("date-time", p + "-date [Tt] " + p + "-time");
    });
  return p + "-" + it->second.start;
}

}  // namespace seer::grammar
