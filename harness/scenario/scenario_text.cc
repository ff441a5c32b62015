#include "harness/scenario/scenario_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "harness/check/checkers.h"
#include "harness/report/report_text.h"
#include "harness/report/text_table.h"

namespace locklab {
namespace {

std::string Name(const std::vector<std::string>& names, int c) {
  if (c < 0) return "";
  return static_cast<size_t>(c) < names.size() ? names[static_cast<size_t>(c)] : "c" + std::to_string(c);
}

double UsToMs(int64_t us) { return std::round(static_cast<double>(us)) / 1000.0; }

// Random tokens are 32 hex digits: their first 6 tell clients apart in a table.
std::string ShortenTokens(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && std::isxdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j - i >= 16) {
      out.append(text, i, 6).append("..");
      i = j;
    } else if (j > i) {
      out.append(text, i, j - i);
      i = j;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

std::string RowText(const TimelineRow& r) {
  if (r.event == nullptr) return "... " + std::to_string(r.hidden) + " more commands";
  if (r.event->type == Ev::kCommand)
    return "[n" + std::to_string(r.event->value) + "] " + ShortenTokens(r.event->detail);
  return ShortenTokens(EventText(*r.event));
}

}  // namespace

std::vector<TimelineRow> TimelineRows(const std::vector<Event>& events, int holders_allowed, size_t* rows_dropped) {
  // Pass 1: per client, find runs of consecutive commands and decide which to hide.
  std::vector<bool> hide(events.size(), false);
  std::vector<size_t> marker_at;  // index of the first hidden event of each run
  std::vector<int64_t> marker_count;
  {
    std::vector<std::vector<size_t>> runs;  // per client: indices of its current run of commands
    auto close = [&](std::vector<size_t>& run) {
      if (run.size() > 2 * kTimelineKeep + 1) {
        for (size_t k = kTimelineKeep; k + kTimelineKeep < run.size(); ++k) hide[run[k]] = true;
        marker_at.push_back(run[kTimelineKeep]);
        marker_count.push_back(static_cast<int64_t>(run.size() - 2 * kTimelineKeep));
      }
      run.clear();
    };
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (e.client < 0) continue;
      if (static_cast<size_t>(e.client) >= runs.size()) runs.resize(static_cast<size_t>(e.client) + 1);
      auto& run = runs[static_cast<size_t>(e.client)];
      if (e.type == Ev::kCommand) {
        run.push_back(i);
      } else {
        close(run);
      }
    }
    for (auto& run : runs) close(run);
  }
  // Pass 2: rows in time order, holders (and writers among them) counted as the checker counts them.
  std::vector<TimelineRow> rows;
  std::vector<char> holding;  // per client: 0 not holding, 'w' a writer's hold, 'r' a reader's
  int holders = 0, writers = 0;
  size_t dropped = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const int before = holders;
    bool too_many = TooManyHolders(holders, writers, holders_allowed);
    if (e.client >= 0) {
      if (static_cast<size_t>(e.client) >= holding.size()) holding.resize(static_cast<size_t>(e.client) + 1, 0);
      char& slot = holding[static_cast<size_t>(e.client)];
      if (e.type == Ev::kEnter && slot == 0) {
        slot = e.detail == kReadHold ? 'r' : 'w';
        ++holders;
        writers += slot == 'w' ? 1 : 0;
      } else if ((e.type == Ev::kExit || e.type == Ev::kCrash) && slot != 0) {
        writers -= slot == 'w' ? 1 : 0;
        slot = 0;
        --holders;
      }
    }
    too_many = too_many || TooManyHolders(holders, writers, holders_allowed);
    auto marker = std::find(marker_at.begin(), marker_at.end(), i);
    if (marker != marker_at.end()) {
      TimelineRow m;
      m.t_us = e.t_us;
      m.client = e.client;
      m.hidden = marker_count[static_cast<size_t>(marker - marker_at.begin())];
      m.holders = holders;
      m.too_many = TooManyHolders(holders, writers, holders_allowed);
      if (rows.size() < kMaxTimelineRows) rows.push_back(m); else ++dropped;
    }
    if (hide[i]) continue;
    TimelineRow r;
    r.event = &e;
    r.t_us = e.t_us;
    r.client = e.client;
    r.holders = std::max(before, holders);
    r.too_many = too_many;
    if (rows.size() < kMaxTimelineRows) rows.push_back(r); else ++dropped;
  }
  if (rows_dropped != nullptr) *rows_dropped = dropped;
  return rows;
}

std::string ScenarioTimelineTable(const std::vector<std::string>& names, const std::vector<Event>& events,
                                  int holders_allowed) {
  size_t dropped = 0;
  std::vector<TimelineRow> rows = TimelineRows(events, holders_allowed, &dropped);
  int clients = static_cast<int>(names.size());
  bool other = false;
  for (const auto& r : rows) {
    clients = std::max(clients, r.client + 1);
    other = other || r.client < 0;
  }
  std::vector<std::string> header = {"", "t ms"};
  for (int c = 0; c < clients; ++c) header.push_back(Name(names, c));
  if (other) header.push_back("nodes / faults");
  TextTable t(header);
  for (const auto& r : rows) {
    std::vector<std::string> cells(header.size());
    cells[0] = r.too_many ? "!!" : "";
    cells[1] = Fixed(static_cast<double>(r.t_us) / 1000.0, 1);
    const size_t col = r.client >= 0 ? 2 + static_cast<size_t>(r.client) : header.size() - 1;
    cells[col] = RowText(r);
    t.AddRow(cells);
  }
  std::string out = t.ToString();
  if (dropped > 0) out += "(" + std::to_string(dropped) + " more rows: see the report)\n";
  return out;
}

nlohmann::json ScenarioTimelineJson(const std::vector<std::string>& names, const std::vector<Event>& events) {
  size_t dropped = 0;
  std::vector<TimelineRow> rows = TimelineRows(events, 1, &dropped);  // the JSON shows counts, not marks
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"t_ms", UsToMs(r.t_us)},
                        {"client", r.client >= 0 ? Name(names, r.client) : ""},
                        {"event", r.event != nullptr ? EvName(r.event->type) : "more_commands"},
                        {"text", RowText(r)},
                        {"holders", r.holders}};
    out.push_back(j);
  }
  if (dropped > 0) out.push_back({{"rows_not_shown", dropped}});
  return out;
}

std::string ScenarioMatrix(const std::vector<MatrixRow>& rows) {
  TextTable t({"scenario", "variant", "backend", "algorithm", "expected", "observed", "viol", "overlap ms", "damage",
               "stuck ms", "acq", "rel fail", "verdict"});
  for (const auto& m : rows) {
    const RunResult& r = *m.result;
    const auto& res = r.check.resource;
    t.AddRow({m.scenario, m.variant, m.backend, m.algorithm, m.judged ? m.verdict.expected : "-",
              m.verdict.observed.empty() ? "-" : m.verdict.observed, std::to_string(r.check.safety.violations),
              Fixed(r.check.safety.overlap_ms_total, 0),
              std::to_string(res.LostOrOversold() + res.stale_writes_accepted),
              Fixed(r.check.liveness.stuck_ms_max, 0), std::to_string(r.check.liveness.acquired),
              std::to_string(r.check.liveness.releases_failed),
              !m.judged ? "-" : m.verdict.matches ? "as expected" : "DIFFERS"});
  }
  return t.ToString();
}

}  // namespace locklab
