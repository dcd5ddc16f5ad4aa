#include "http/request_origin.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(RequestOrigin, HostNamesWithoutPortsOrBrackets) {
  EXPECT_EQ(HostName("127.0.0.1:8080"), "127.0.0.1");
  EXPECT_EQ(HostName("[::1]:8080"), "::1");
  EXPECT_EQ(HostName("GPU-Box.Lab:80"), "gpu-box.lab");
  EXPECT_EQ(HostName("localhost."), "localhost");
  EXPECT_EQ(HostName("::1"), "::1");
}

// A page whose DNS name was pointed at 127.0.0.1 sends its own name as Host: refused;
// what a person types or a client is given passes.
TEST(RequestOrigin, OnlyAddressesLocalhostAndGivenNamesAreThisServer) {
  std::vector<std::string> names = {"gpu-box"};
  for (const char* ok : {"127.0.0.1:5000", "[::1]:5000", "10.1.2.3", "localhost:5000", "app.localhost:1",
                         "GPU-BOX:8080", ""}) {
    EXPECT_TRUE(HostAllowed(ok, names)) << ok;
  }
  for (const char* bad : {"attacker.example:5000", "127.0.0.1.nip.io:5000", "localhost.attacker.example",
                          "gpu-box.attacker.example", "xlocalhost"}) {
    EXPECT_FALSE(HostAllowed(bad, names)) << bad;
  }
}

TEST(RequestOrigin, WritesFromAnotherSitesPageAreNamedAndTheServersOwnPass) {
  // A plain form POST or a no-cors fetch from another site, as Chromium and Firefox send it.
  EXPECT_NE(CrossOriginWrite("POST", "127.0.0.1:5000", "http://attacker.example", "cross-site"), "");
  EXPECT_NE(CrossOriginWrite("DELETE", "127.0.0.1:5000", "", "same-site"), "");
  EXPECT_NE(CrossOriginWrite("POST", "127.0.0.1:5000", "http://127.0.0.1:6000", ""), "") << "another port";
  EXPECT_NE(CrossOriginWrite("POST", "127.0.0.1:5000", "null", ""), "") << "a sandboxed page";
  // The web UI's own requests, and clients that are not browsers.
  EXPECT_EQ(CrossOriginWrite("POST", "127.0.0.1:5000", "http://127.0.0.1:5000", "same-origin"), "");
  EXPECT_EQ(CrossOriginWrite("PATCH", "LOCALHOST:5000", "http://localhost:5000", ""), "");
  EXPECT_EQ(CrossOriginWrite("POST", "127.0.0.1:5000", "", ""), "");
  // Reads are left to the browser's same-origin rule.
  EXPECT_EQ(CrossOriginWrite("GET", "127.0.0.1:5000", "http://attacker.example", "cross-site"), "");
}

}  // namespace
}  // namespace tb
