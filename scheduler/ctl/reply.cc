#include "scheduler/ctl/reply.h"

#include <iostream>

#include "scheduler/ctl/commands.h"

namespace podsched::ctl {

int Report(const CallError& e) {
  std::cerr << "podctl: " << e.message << "\n";
  return e.exit_code;
}

std::string ToJsonText(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  o.add_whitespace = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  return out;
}

void Print(const google::protobuf::Message& m, const std::string& output) {
  std::string json = ToJsonText(m);
  std::cout << (output == "yaml" ? JsonToYaml(json) : json);
  if (output == "yaml") std::cout << "\n";
}

}  // namespace podsched::ctl
