#include "sim/transactions.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "sim/store_words.h"

namespace locklab::sim {
using namespace words;  // NOLINT: the store's own helpers
namespace {

enum class TxCmd { kNone, kMulti, kExec, kDiscard, kWatch, kUnwatch };

TxCmd Kind(const Command& cmd) {
  if (cmd.script != Script::kNone || cmd.argv.empty()) return TxCmd::kNone;
  const std::string_view w = cmd.argv[0];
  if (EqNoCase(w, "multi")) return TxCmd::kMulti;
  if (EqNoCase(w, "exec")) return TxCmd::kExec;
  if (EqNoCase(w, "discard")) return TxCmd::kDiscard;
  if (EqNoCase(w, "watch")) return TxCmd::kWatch;
  if (EqNoCase(w, "unwatch")) return TxCmd::kUnwatch;
  return TxCmd::kNone;
}

}  // namespace

bool Transactions::IsTransactionCommand(const Command& cmd) { return Kind(cmd) != TxCmd::kNone; }

Reply Transactions::Execute(Store& store, int conn, const Command& cmd, int64_t now_ms,
                            std::vector<std::string>* touched, BlockRequest* block) {
  if (IsTransactionCommand(cmd)) return TransactionCommand(store, conn, cmd, now_ms, touched);
  if (!conns_.empty()) {
    auto it = conns_.find(conn);
    if (it != conns_.end() && it->second.in_multi) return Queue(it->second, cmd);
  }
  if (watchers_.empty()) return store.Execute(cmd, now_ms, touched, block);
  std::vector<std::string> local;
  std::vector<std::string>* keys = touched != nullptr ? touched : &local;
  const size_t from = keys->size();
  Reply r = store.Execute(cmd, now_ms, keys, block);
  NoteWritten(*keys, from);
  return r;
}

void Transactions::NoteWritten(const std::vector<std::string>& keys, size_t from) {
  if (watchers_.empty()) return;
  for (size_t i = from; i < keys.size(); ++i) {
    auto it = watchers_.find(keys[i]);
    if (it == watchers_.end()) continue;
    for (int c : it->second) conns_[c].dirty_cas = true;
  }
}

// A flat switch: one transaction command each, after its arity (an arity error inside MULTI
// fails the EXEC, as every command Redis rejects while queuing does).
Reply Transactions::TransactionCommand(Store& store, int conn, const Command& cmd, int64_t now_ms,
                                       std::vector<std::string>* touched) {
  const TxCmd kind = Kind(cmd);
  const size_t argc = cmd.argv.size();
  const bool bad_arity = kind == TxCmd::kWatch ? argc < 2 : argc != 1;
  if (bad_arity) {
    std::string name(cmd.argv[0]);
    for (char& ch : name) ch = static_cast<char>(ch | 0x20);
    Reply error = ArityError(name);
    if (kind == TxCmd::kExec) {
      // server.c rejectCommand: a rejected EXEC aborts the transaction (and its WATCHes) with its
      // reason, inside MULTI or not.
      Discard(conn);
      return Reply::Error("EXECABORT Transaction discarded because of: " + error.str.substr(4));
    }
    auto it = conns_.find(conn);
    if (it != conns_.end() && it->second.in_multi) it->second.dirty_exec = true;
    return error;
  }
  switch (kind) {
    case TxCmd::kMulti: {
      Conn& c = conns_[conn];
      if (c.in_multi) return Reply::Error("ERR MULTI calls can not be nested");
      c.in_multi = true;
      return Reply::Status("OK");
    }
    case TxCmd::kExec: return Exec(store, conn, now_ms, touched);
    case TxCmd::kDiscard: {
      auto it = conns_.find(conn);
      if (it == conns_.end() || !it->second.in_multi) return Reply::Error("ERR DISCARD without MULTI");
      Discard(conn);
      return Reply::Status("OK");
    }
    case TxCmd::kWatch: return Watch(store, conn, cmd, now_ms);
    case TxCmd::kUnwatch: {
      auto it = conns_.find(conn);
      if (it != conns_.end() && it->second.in_multi) return Queue(it->second, cmd);
      Unwatch(conn);
      return Reply::Status("OK");
    }
    case TxCmd::kNone: break;
  }
  return Reply::Error("ERR locklab: not a transaction command");  // not reached
}

Reply Transactions::Queue(Conn& c, const Command& cmd) {
  if (!IsTransactionCommand(cmd)) {
    if (std::optional<Reply> error = Store::CheckNameAndArity(cmd)) {
      c.dirty_exec = true;
      return *error;
    }
  }
  if (c.queued.size() >= kMaxQueuedCommands) {
    c.dirty_exec = true;
    return Reply::Error("ERR locklab: more than " + std::to_string(kMaxQueuedCommands) + " commands in one MULTI");
  }
  c.queued.push_back(cmd);
  return Reply::Status("QUEUED");
}

Reply Transactions::Watch(Store& store, int conn, const Command& cmd, int64_t now_ms) {
  Conn& c = conns_[conn];
  if (c.in_multi) return Reply::Error("ERR WATCH inside MULTI is not allowed");
  for (size_t i = 1; i < cmd.argv.size(); ++i) {
    const std::string key(cmd.argv[i]);
    const bool already = std::any_of(c.watched.begin(), c.watched.end(), [&](const Watched& w) { return w.key == key; });
    if (already) continue;
    if (c.watched.size() >= kMaxWatchedKeys)
      return Reply::Error("ERR locklab: more than " + std::to_string(kMaxWatchedKeys) + " keys watched");
    c.watched.push_back(Watched{key, store.IsLiveRaw(key, now_ms)});
    watchers_[key].push_back(conn);
  }
  return Reply::Status("OK");
}

bool Transactions::WatchedKeyExpired(Store& store, const Conn& c, int64_t now_ms) {
  for (const Watched& w : c.watched) {
    if (w.live && !store.IsLiveRaw(w.key, now_ms)) return true;
  }
  return false;
}

Reply Transactions::Exec(Store& store, int conn, int64_t now_ms, std::vector<std::string>* touched) {
  auto it = conns_.find(conn);
  if (it == conns_.end() || !it->second.in_multi) return Reply::Error("ERR EXEC without MULTI");
  Conn& c = it->second;
  if (c.dirty_exec) {
    Discard(conn);
    return Reply::Error("EXECABORT Transaction discarded because of previous errors.");
  }
  if (c.dirty_cas || WatchedKeyExpired(store, c, now_ms)) {
    Discard(conn);
    return Reply::Nil();
  }
  std::vector<Command> queued = std::move(c.queued);
  Discard(conn);  // unwatches first: the transaction's own writes do not dirty it
  std::vector<std::string> local;
  std::vector<std::string>* keys = touched != nullptr ? touched : &local;
  const size_t from = keys->size();
  Reply out = Reply::Array();
  for (const Command& q : queued) {
    // Inside a transaction nothing blocks (no BlockRequest): a BLPOP with nothing to pop is nil.
    out.elements.push_back(Kind(q) == TxCmd::kUnwatch ? Reply::Status("OK") : store.Execute(q, now_ms, keys));
  }
  NoteWritten(*keys, from);
  return out;
}

void Transactions::Unwatch(int conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  for (const Watched& w : it->second.watched) {
    auto wit = watchers_.find(w.key);
    if (wit == watchers_.end()) continue;
    std::erase(wit->second, conn);
    if (wit->second.empty()) watchers_.erase(wit);
  }
  it->second.watched.clear();
  it->second.dirty_cas = false;
  if (!it->second.in_multi) conns_.erase(it);
}

void Transactions::Discard(int conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  c.in_multi = false;
  c.dirty_exec = false;
  c.queued.clear();
  Unwatch(conn);  // and forgets the connection, which has no state left
}

void Transactions::Close(int conn) { Discard(conn); }

void Transactions::Clear() {
  conns_.clear();
  watchers_.clear();
}

}  // namespace locklab::sim
