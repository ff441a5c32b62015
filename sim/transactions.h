// Transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH for the client connections of one
// simulated node, after Redis 7.0's multi.c, wrapped around the node's Store.
//
// Every command a connection sends goes through Execute. Outside MULTI it runs on the store at
// once; after MULTI it is checked (name and arity: an error there makes the EXEC fail with
// EXECABORT) and queued ("QUEUED"); EXEC runs the queue atomically and replies with the array
// of their replies, or with nil when a key the connection WATCHes was written since the WATCH
// (by anyone, the connection itself included) or has expired since: the optimistic lock's abort.
// Errors inside an executed transaction are its elements: nothing is rolled back.
//
// What is not modelled: WATCHed keys deleted by the expiry of a key that was already expired
// when it was watched (Redis's `expired` flag subtleties), MULTI around blocking commands (a
// queued BLPOP runs without blocking, as in Redis; WAIT cannot be queued), FLUSHALL touching
// keys that do not exist.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "sim/store.h"

namespace locklab::sim {

// At most this many commands queued by one MULTI, keys watched by one connection.
inline constexpr size_t kMaxQueuedCommands = 10'000;
inline constexpr size_t kMaxWatchedKeys = 1'000;

class Transactions {
 public:
  // Runs `cmd` sent on connection `conn` (any small integer: a client id). Keys written are
  // appended to *touched (may be nullptr) and make every connection watching them dirty.
  // `block` as in Store::Execute (a BLPOP outside MULTI may park).
  Reply Execute(Store& store, int conn, const Command& cmd, int64_t now_ms, std::vector<std::string>* touched,
                BlockRequest* block = nullptr);
  // Keys written at the node by something else than Execute (a parked BLPOP served).
  void NoteWritten(const std::vector<std::string>& keys, size_t from = 0);
  // The connection is gone (client crashed): its MULTI and WATCHes with it.
  void Close(int conn);
  // The node restarted or failed over: every connection is gone.
  void Clear();

  // Is `cmd` one of MULTI, EXEC, DISCARD, WATCH, UNWATCH?
  static bool IsTransactionCommand(const Command& cmd);

 private:
  struct Watched {
    std::string key;
    bool live = false;  // the key existed, unexpired, when it was watched
  };
  struct Conn {
    bool in_multi = false;
    bool dirty_cas = false;   // a watched key was written: EXEC replies nil
    bool dirty_exec = false;  // a command was refused while queuing: EXEC replies EXECABORT
    std::vector<Command> queued;
    std::vector<Watched> watched;
  };

  Reply TransactionCommand(Store& store, int conn, const Command& cmd, int64_t now_ms,
                           std::vector<std::string>* touched);
  Reply Exec(Store& store, int conn, int64_t now_ms, std::vector<std::string>* touched);
  Reply Queue(Conn& c, const Command& cmd);
  Reply Watch(Store& store, int conn, const Command& cmd, int64_t now_ms);
  // Did a watched key that was live at WATCH time expire or vanish since (Redis 7.0 aborts then)?
  static bool WatchedKeyExpired(Store& store, const Conn& c, int64_t now_ms);
  void Unwatch(int conn);
  void Discard(int conn);

  std::map<int, Conn> conns_;                                     // connections with any state
  std::map<std::string, std::vector<int>, std::less<>> watchers_;  // key -> connections watching it
};

}  // namespace locklab::sim
