// Which requests a web page could have made a browser send: the checks that keep another
// site's page from using a server on this machine through its user's browser. Pure.
//
// Two attacks are answered. DNS rebinding: a page at http://attacker.example:PORT whose
// name is pointed at 127.0.0.1 is, to the browser, the same origin as its own answers, so
// it reads them; its requests carry `Host: attacker.example:PORT`, which no client of
// ours sends. Cross-site requests: a plain form POST, or fetch() in no-cors mode, reaches
// the server from any page (it cannot read the answer, but the deed is done); browsers
// name the page's origin in `Origin` and say `Sec-Fetch-Site` on such requests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tb {

// The name a Host header value gives, in lower case, without its port or an IPv6
// address's brackets ("[::1]:8080" -> "::1").
std::string HostName(std::string_view host_header);

// Whether a request's Host header names this server: an IP address (a browser sends one
// only when its user typed it), "localhost" or a name under .localhost (browsers resolve
// those to loopback themselves), or one of `names` (case does not matter). A request
// without a Host header (HTTP/1.0 clients) passes.
bool HostAllowed(std::string_view host_header, const std::vector<std::string>& names);

// Why a request that may change something (any method but GET, HEAD and OPTIONS) was
// sent by a page of another origin, "" when it was not: `Sec-Fetch-Site` other than
// same-origin or none (a person's own typing), or an `Origin` that is not
// http(s)://<host_header>. Clients that are not browsers send neither and pass.
std::string CrossOriginWrite(std::string_view method, std::string_view host_header, std::string_view origin,
                             std::string_view fetch_site);

}  // namespace tb
