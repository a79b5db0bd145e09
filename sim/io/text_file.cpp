// Text-format parsing with located, suggestion-bearing error messages.
#include "sim/io/text_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "sim/util/closest_name.h"

namespace clustersim {
namespace {

namespace pb = google::protobuf;

// Collects the first parse error (the parser stops there) as a diagnostic.
class CollectingErrorCollector : public pb::io::ErrorCollector {
 public:
  CollectingErrorCollector(const std::string& path, const pb::Descriptor* root,
                           Diagnostics* diagnostics)
      : path_(path), root_(root), diagnostics_(diagnostics) {}

  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    diagnostics_->add_error({path_, line + 1, column + 1}, "", message + suggestion_for(message));
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    diagnostics_->add_warning({path_, line + 1, column + 1}, "", message);
  }

 private:
  std::string suggestion_for(const std::string& message) const;

  std::string path_;
  const pb::Descriptor* root_;
  Diagnostics* diagnostics_;
};

// Every message type reachable from `root`, each once, in a fixed order.
void collect_types(const pb::Descriptor* type, std::set<const pb::Descriptor*>* seen,
                   std::vector<const pb::Descriptor*>* order) {
  if (!seen->insert(type).second) return;
  order->push_back(type);
  for (int i = 0; i < type->field_count(); ++i) {
    if (const pb::Descriptor* nested = type->field(i)->message_type()) {
      collect_types(nested, seen, order);
    }
  }
}

// Enum value names that a field called `field_name` accepts anywhere under `root`.
std::vector<std::string> enum_values_of_field(const pb::Descriptor* root,
                                              const std::string& field_name) {
  std::set<const pb::Descriptor*> seen;
  std::vector<const pb::Descriptor*> types;
  collect_types(root, &seen, &types);
  std::vector<std::string> values;
  for (const pb::Descriptor* type : types) {
    const pb::FieldDescriptor* field = type->FindFieldByName(field_name);
    if (field == nullptr || field->enum_type() == nullptr) continue;
    for (int i = 0; i < field->enum_type()->value_count(); ++i) {
      values.push_back(field->enum_type()->value(i)->name());
    }
  }
  return values;
}

std::string CollectingErrorCollector::suggestion_for(const std::string& message) const {
  static const std::regex unknown_field(R"re(Message type "([\w.]+)" has no field named "(\w+)")re");
  static const std::regex unknown_enum(R"re(Unknown enumeration value of "(\w+)" for field "(\w+)")re");
  std::smatch match;
  if (std::regex_search(message, match, unknown_field)) {
    const pb::Descriptor* type = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(
        match[1].str());
    if (type == nullptr) return "";
    std::vector<std::string> names;
    for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
    return did_you_mean(match[2].str(), names);
  }
  if (std::regex_search(message, match, unknown_enum)) {
    return did_you_mean(match[1].str(), enum_values_of_field(root_, match[2].str()));
  }
  return "";
}

}  // namespace

bool read_whole_file(const std::string& path, std::string* contents, Diagnostics* diagnostics) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostics->add_error({path, 0, 0}, "", "cannot open file");
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    diagnostics->add_error({path, 0, 0}, "", "cannot read file");
    return false;
  }
  *contents = buffer.str();
  return true;
}

bool parse_text(const std::string& path, const std::string& text, pb::Message* message,
                pb::TextFormat::ParseInfoTree* tree, Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  CollectingErrorCollector collector(path, message->GetDescriptor(), diagnostics);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(tree);
  parser.AllowPartialMessage(true);  // missing fields are reported by the checks, with context
  if (parser.ParseFromString(text, message)) return true;
  if (diagnostics->error_count() == errors_before) diagnostics->add_error({path, 0, 0}, "", "does not parse");
  return false;
}

}  // namespace clustersim
