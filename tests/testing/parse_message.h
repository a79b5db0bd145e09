// Building schema messages from text format inside tests.
#pragma once

#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>
#include <string>

namespace clustersim::testing {

// Parses a message of type M from text format. Requires: valid text (the test fails otherwise).
template <class M>
M parse_message(const std::string& text) {
  M message;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &message));
  return message;
}

}  // namespace clustersim::testing
