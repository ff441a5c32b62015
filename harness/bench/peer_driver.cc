// Peer driver processes: see peer_driver.h.
#include "harness/bench/peer_driver.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "harness/real/child_process.h"
#include "harness/real/real_clock.h"
#include "harness/run/build_info.h"

namespace locklab {

void SleepUntilUs(int64_t t_us) {
  for (int i = 0; i < 100'000; ++i) {
    const int64_t left = t_us - MonotonicNowUs();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(left, 50'000)));
  }
}

namespace {

// Sorts stdout into the summary line and other JSON lines.
void ReadStdout(const std::string& out, DriverResult* r) {
  std::istringstream in(out);
  std::string line;
  for (int i = 0; i < 100'000 && std::getline(in, line); ++i) {
    if (line.empty() || line[0] != '{') continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("summary")) r->summary = j;
    else r->other_lines.push_back(j);
  }
}

}  // namespace

DriverResult CompleteDriver(const DriverCall& call, bool in_time, int status, const std::string& out,
                            const std::string& stderr_path) {
  DriverResult result;
  DriverResult* r = &result;
  r->exit_status = status;
  ReadStdout(out, r);
  bool have_log = false;
  const std::string log = ReadWholeFile(call.events_path, &have_log);
  const Status parse = have_log ? ParsePeerEventLog(log, &r->log) : Status::Ok();
  const bool parsed = have_log && parse.ok();
  const std::string err_tail = TailOnOneLine(ReadWholeFile(stderr_path), 4);
  if (!in_time) r->error = "did not finish within " + std::to_string(call.timeout_ms) + " ms (killed)";
  else if (status == 127) r->error = "could not start " + call.argv[0];
  else if (status != 0) r->error = "exited with status " + std::to_string(status);
  else if (r->summary.is_null()) r->error = "printed no summary line";
  else if (!have_log) r->error = "wrote no event log " + call.events_path;
  else if (!parsed) r->error = parse.message();
  if (r->error.empty()) {
    r->ok = true;
  } else {
    if (!r->summary.is_null() && r->summary.contains("crashed") && r->summary["crashed"].is_string())
      r->error += " (" + r->summary["crashed"].get<std::string>() + ")";
    if (!err_tail.empty()) r->error += "; stderr: " + err_tail;
    if (have_log && !parsed && r->log.events.empty()) r->log = PeerLog{};
  }
  return result;
}

DriverResult RunDriver(const DriverCall& call) {
  DriverResult r;
  std::error_code ec;
  std::filesystem::remove(call.events_path, ec);
  const std::string err_path = call.events_path + ".stderr";
  ChildProcess child;
  if (Status st = child.Start(call.argv, call.extra_env, err_path); !st.ok()) {
    r.error = "cannot start " + (call.argv.empty() ? std::string("?") : call.argv[0]) + ": " + st.message();
    return r;
  }
  std::string out;
  int status = -1;
  const bool in_time = child.Finish(MonotonicNowUs() + call.timeout_ms * 1000, &out, &status);
  return CompleteDriver(call, in_time, status, out, err_path);
}

std::string DefaultPeerDriversDir() { return std::string(SourceDir()) + "/harness/bench/peers"; }
std::string DefaultPeerModulesDir() { return std::string(BinaryDir()) + "/peers"; }

Result<std::string> Probe(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                          const std::string& tmp_dir) {
  ChildProcess c;
  const std::string err_path = tmp_dir + "/probe.stderr";
  if (Status st = c.Start(argv, extra_env, err_path); !st.ok()) return st;
  std::string out;
  int status = -1;
  const bool in_time = c.Finish(MonotonicNowUs() + 20'000'000, &out, &status);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!in_time || status != 0 || out.empty()) {
    std::string why = status == 127 ? argv[0] + " not found" : TailOnOneLine(ReadWholeFile(err_path), 2);
    if (why.empty()) why = argv[0] + " exited with status " + std::to_string(status);
    return Status::Failed(why);
  }
  return out;
}

}  // namespace locklab
