#include "algorithms/command.h"

#include <cctype>

namespace locklab {

std::string_view ScriptName(Script s) {
  switch (s) {
    case Script::kNone: return "none";
    case Script::kCompareAndDelete: return "compare_and_delete";
    case Script::kCompareAndPexpire: return "compare_and_pexpire";
    case Script::kSetNxPxIncrFence: return "set_nx_px_incr_fence";
    case Script::kNotifyOne: return "notify_one";
    case Script::kFifoAcquire: return "fifo_acquire";
    case Script::kFifoRelease: return "fifo_release";
    case Script::kFifoLeave: return "fifo_leave";
    case Script::kStockDecrement: return "stock_decrement";
    case Script::kSemaphoreAcquire: return "semaphore_acquire";
    case Script::kReentrantAcquire: return "reentrant_acquire";
    case Script::kReentrantRelease: return "reentrant_release";
    case Script::kRwReadAcquire: return "rw_read_acquire";
    case Script::kRwWriteAcquire: return "rw_write_acquire";
    case Script::kCount: break;
  }
  return "unknown";
}

std::string Command::Name() const {
  if (script != Script::kNone) return std::string(ScriptName(script));
  if (argv.empty()) return "";
  std::string n(argv[0]);
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

std::string Command::ToString() const {
  std::string s;
  AppendTo(&s);
  return s;
}

void Command::AppendTo(std::string* out) const {
  const size_t start = out->size();
  if (script != Script::kNone) *out += ScriptName(script);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (out->size() > start) *out += ' ';
    if (script != Script::kNone && static_cast<int>(i) == num_keys) *out += "| ";
    *out += argv[i];
  }
}

}  // namespace locklab
