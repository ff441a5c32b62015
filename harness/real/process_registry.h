// The process-wide registry of the processes and temporary directories that locklab's real
// backend owns (redis-server, redis-sentinel): what must go when locklab goes.
//
// Fixed-size tables of atomics, so that a signal handler can walk them. InstallCleanupHooks()
// (idempotent) makes SIGINT/SIGTERM and exit() kill and reap every registered pid, then remove
// every registered directory; after a signal the process exits with 128 + signal (or the
// handler that was there before runs). Owners still stop their own children themselves (kill,
// waitpid, UnregisterChildPid) on the ordinary paths; a pid that is no longer registered when
// its owner gets to it was already killed and reaped by a hook.
//
// Register a child right after fork (ForkManagedChild, redis_server.h), unregister it after
// waitpid. Thread-safe (atomics); the registry holds at most 4096 pids and 256 directories.
#pragma once

#include <sys/types.h>

#include <string>

namespace locklab {

void InstallCleanupHooks();

// false when the table is full (the caller must then kill the child itself).
bool RegisterChildPid(pid_t pid);
bool IsChildPidRegistered(pid_t pid);
void UnregisterChildPid(pid_t pid);

// A slot for UnregisterTempDir, or -1 when the path is too long or the table is full.
int RegisterTempDir(const std::string& dir);
void UnregisterTempDir(int slot);
// Removes `dir` and what is in it, three levels deep at most (raw system calls only).
void RemoveTempDirNow(const std::string& dir);

}  // namespace locklab
