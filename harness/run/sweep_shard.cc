#include "harness/run/sweep_shard.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string_view>

#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/parallel_runs.h"

namespace locklab {
namespace {

// A positive decimal number of at most 9 digits (no sign, no spaces); -1 otherwise.
int ParsePositive(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  for (char c : s)
    if (c < '0' || c > '9') return -1;
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

uint64_t Fnv1a(std::string_view text, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A sweep's hash starts from the build that ran it (SweepHash and HashSweep).
uint64_t SweepHashStart() { return Fnv1a(std::string(ToolVersion()) + " " + GitSha() + "\n"); }

// What HashSweep makes of one spec: the text SweepHash hashes for it (its JSON and a newline)
// with where its seed's digits are in it, and its ConfigHash. Or, for a spec whose JSON differs
// from the one before it in its seed alone, nothing but that (from_previous).
struct SpecTexts {
  std::string with_seed;
  size_t seed_at = std::string::npos;
  size_t seed_size = 0;
  std::string config_hash;
  bool from_previous = false;
};

// j.dump() with a newline (where its seed's digits are) and the hash of j.dump() without j's
// "seed" (j an object), from one dump of each member: the compact form is {"key":value,...} in
// j's key order, so both texts share every other member's.
SpecTexts DumpWithAndWithoutSeed(const nlohmann::json& j) {
  SpecTexts out;
  out.with_seed = "{";
  std::string without = "{";
  std::string member;
  for (auto it = j.begin(); it != j.end(); ++it) {
    member = nlohmann::json(it.key()).dump();
    member += ':';
    const size_t value_at = member.size();
    member += it.value().dump();
    if (out.with_seed.size() > 1) out.with_seed += ',';
    if (it.key() == "seed") {
      out.seed_at = out.with_seed.size() + value_at;
      out.seed_size = member.size() - value_at;
      out.with_seed += member;
      continue;
    }
    out.with_seed += member;
    if (without.size() > 1) without += ',';
    without += member;
  }
  out.with_seed += "}\n";
  without += '}';
  out.config_hash = HashHex(without);
  return out;
}

std::string Hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

Result<Shard> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  const std::string bad = "--shard " + text + ": ";
  if (slash == std::string::npos) return Status::Invalid(bad + "give I/N, e.g. 2/8 (I from 1 to N)");
  Shard s;
  s.index = ParsePositive(text.substr(0, slash));
  s.count = ParsePositive(text.substr(slash + 1));
  if (s.count < 1 || s.count > kMaxShards)
    return Status::Invalid(bad + "N must be from 1 to " + std::to_string(kMaxShards));
  if (s.index < 1 || s.index > s.count) return Status::Invalid(bad + "I must be from 1 to N (1-based)");
  return s;
}

std::vector<size_t> ShardRuns(size_t total, const Shard& shard) {
  std::vector<size_t> out;
  for (size_t i = static_cast<size_t>(shard.index - 1); i < total; i += static_cast<size_t>(shard.count))
    out.push_back(i);
  return out;
}

std::string HashHex(const std::string& text) { return Hex(Fnv1a(text)); }

std::string ConfigHash(const RunSpec& spec) {
  nlohmann::json j = ToJson(spec);
  j.erase("seed");
  return HashHex(j.dump());
}

std::string SweepHash(const std::vector<RunSpec>& specs) {
  uint64_t h = SweepHashStart();
  for (const RunSpec& s : specs) h = Fnv1a(ToJson(s).dump() + "\n", h);
  return Hex(h);
}

SweepHashes HashSweep(const std::vector<RunSpec>& specs, int jobs) {
  SweepHashes out;
  out.configs.reserve(specs.size());
  uint64_t h = SweepHashStart();
  SpecTexts last;  // the last spec dumped whole: a sweep over seeds reuses it with the seed changed
  // Per spec (on the threads): its texts, or only that the one before has them; in order here.
  RunInOrder<SpecTexts>(
      specs.size(), jobs, 64 * static_cast<size_t>(std::max(jobs, 1)),
      [&](size_t i) {
        if (i > 0 && SameJsonButSeed(specs[i], specs[i - 1])) {
          SpecTexts reuse;
          reuse.from_previous = true;
          return reuse;
        }
        return DumpWithAndWithoutSeed(ToJson(specs[i]));
      },
      [&](size_t i, SpecTexts&& t) {
        if (t.from_previous && last.seed_at != std::string::npos) {
          const std::string_view text = last.with_seed;
          h = Fnv1a(text.substr(0, last.seed_at), h);
          h = Fnv1a(std::to_string(specs[i].seed), h);  // a number's dump: its decimal digits
          h = Fnv1a(text.substr(last.seed_at + last.seed_size), h);
          out.configs.push_back(last.config_hash);
          return;
        }
        last = t.from_previous ? DumpWithAndWithoutSeed(ToJson(specs[i])) : std::move(t);
        h = Fnv1a(last.with_seed, h);
        out.configs.push_back(last.config_hash);
      });
  out.sweep = Hex(h);
  return out;
}

}  // namespace locklab
