#include "algorithms/command_record.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace locklab {
namespace {

// The record: script (1 byte), num_keys (4), word count n (4), n word ends (4 each), the words
// end to end; then the reply: its type (1), and for an integer its value (8), for a string,
// status or error its length (4) and bytes. An array reply (rare: no lock's hot path) is kept
// as its text: type kArrayText, length and bytes.
constexpr uint8_t kArrayText = 0xff;

template <typename T>
char* Put(char* at, T v) {
  std::memcpy(at, &v, sizeof v);
  return at + sizeof v;
}

// A reply whose record holds bytes after its type: a string, status or error, or an array's text.
bool HasText(const Reply& r) {
  return r.type == Reply::Type::kString || r.type == Reply::Type::kStatus || r.type == Reply::Type::kError ||
         r.type == Reply::Type::kArray;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, Take(sizeof v).data(), sizeof v);
    return v;
  }
  std::string_view Take(size_t n) {
    if (n > bytes_.size() - at_) throw std::logic_error("command record: cut short");
    const std::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

// Writes the record at `at` (AppendCommandRecord's `size` bytes).
void WriteRecord(const Command& cmd, const Reply& reply, std::string_view reply_text, char* at) {
  const CommandWords& w = cmd.argv;
  const std::string_view words = w.joined();
  const uint32_t n = static_cast<uint32_t>(w.size());
  at = Put<uint8_t>(at, static_cast<uint8_t>(cmd.script));
  at = Put<int32_t>(at, cmd.num_keys);
  at = Put<uint32_t>(at, n);
  for (uint32_t i = 0; i < n; ++i) at = Put<uint32_t>(at, w.end_of(i));
  if (!words.empty()) std::memcpy(at, words.data(), words.size());
  at += words.size();
  at = Put<uint8_t>(at, reply.type == Reply::Type::kArray ? kArrayText : static_cast<uint8_t>(reply.type));
  if (reply.type == Reply::Type::kInteger) at = Put<int64_t>(at, reply.integer);
  if (HasText(reply)) {
    at = Put<uint32_t>(at, static_cast<uint32_t>(reply_text.size()));
    if (!reply_text.empty()) std::memcpy(at, reply_text.data(), reply_text.size());
  }
}

}  // namespace

void AppendCommandRecord(const Command& cmd, const Reply& reply, std::string* out) {
  std::string array_text;
  if (reply.type == Reply::Type::kArray) AppendTo(&array_text, reply);
  const std::string_view reply_text = reply.type == Reply::Type::kArray ? std::string_view(array_text) : reply.str;
  const size_t size = 1 + 4 + 4 + 4 * cmd.argv.size() + cmd.argv.joined().size() + 1 +
                      (reply.type == Reply::Type::kInteger ? 8 : 0) + (HasText(reply) ? 4 + reply_text.size() : 0);
  // A usual record is written on the stack and appended in one copy: resize() would fill the
  // room with zeros first, through a call that cost more than the record itself.
  constexpr size_t kStackBytes = 256;
  if (size <= kStackBytes) {
    char record[kStackBytes];
    WriteRecord(cmd, reply, reply_text, record);
    out->append(record, size);
    return;
  }
  const size_t from = out->size();
  out->resize(from + size);
  WriteRecord(cmd, reply, reply_text, out->data() + from);
}

void AppendCommandRecordText(std::string_view record, std::string* out) {
  Reader r(record);
  Command cmd;
  cmd.script = static_cast<Script>(r.Get<uint8_t>());
  cmd.num_keys = r.Get<int32_t>();
  const uint32_t n = r.Get<uint32_t>();
  const std::string_view ends = r.Take(4 * size_t{n});
  const auto end = [&](uint32_t i) {
    uint32_t e;
    std::memcpy(&e, ends.data() + 4 * size_t{i}, sizeof e);
    return e;
  };
  const std::string_view words = r.Take(n == 0 ? 0 : end(n - 1));
  constexpr uint32_t kStackWords = 16;
  std::array<std::string_view, kStackWords> stack_views;
  std::vector<std::string_view> heap_views(n > kStackWords ? n : 0);
  std::string_view* views = n > kStackWords ? heap_views.data() : stack_views.data();
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t begin = i == 0 ? 0 : end(i - 1);
    views[i] = words.substr(begin, end(i) - begin);
  }
  cmd.argv.Assign(views, n);
  // Room for the text at once: the record holds the words and the reply's bytes; add a space per
  // word and room for a script's name, "| ", " -> " and a reply's decoration.
  out->reserve(out->size() + record.size() + n + 64);
  cmd.AppendTo(out);
  *out += " -> ";
  const uint8_t type = r.Get<uint8_t>();
  if (type == kArrayText) {
    *out += r.Take(r.Get<uint32_t>());
    return;
  }
  Reply reply;
  reply.type = static_cast<Reply::Type>(type);
  if (reply.type == Reply::Type::kInteger) reply.integer = r.Get<int64_t>();
  if (HasText(reply)) reply.str = r.Take(r.Get<uint32_t>());
  AppendTo(out, reply);
}

}  // namespace locklab
