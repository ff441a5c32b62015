#include "algorithms/command_words.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace locklab {
namespace {

// memcpy for the short words of a command: fixed-size moves that the compiler inlines (two that
// overlap cover any length between them), instead of a call to the library per word.
template <size_t kWidth>
void CopyOverlapping(char* dst, const char* src, size_t n) {
  char head[kWidth], tail[kWidth];
  std::memcpy(head, src, kWidth);
  std::memcpy(tail, src + n - kWidth, kWidth);
  std::memcpy(dst, head, kWidth);
  std::memcpy(dst + n - kWidth, tail, kWidth);
}

void CopyWord(char* dst, const char* src, size_t n) {
  if (n > 32) {
    std::memcpy(dst, src, n);
  } else if (n >= 16) {
    CopyOverlapping<16>(dst, src, n);
  } else if (n >= 8) {
    CopyOverlapping<8>(dst, src, n);
  } else if (n >= 4) {
    CopyOverlapping<4>(dst, src, n);
  } else if (n > 0) {  // 1 to 3 bytes: the first, middle and last cover them
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

}  // namespace

CommandWords::CommandWords(std::initializer_list<std::string_view> words) { Assign(words.begin(), words.size()); }

CommandWords& CommandWords::operator=(const CommandWords& o) {
  if (this == &o) return *this;
  bytes_ = 0;
  EnsureBytes(o.bytes_);
  if (o.bytes_ > 0) std::memcpy(text(), o.text(), o.bytes_);
  bytes_ = o.bytes_;
  count_ = o.count_;
  std::memcpy(ends_.data(), o.ends_.data(), sizeof ends_);
  more_ends_ = o.more_ends_;
  return *this;
}

void CommandWords::Grow(size_t bytes) {
  if (bytes > UINT32_MAX) throw std::length_error("a command of 4 GiB or more");
  const auto capacity = static_cast<uint32_t>(std::min<size_t>(std::max<size_t>(bytes, 2 * size_t{capacity_}), UINT32_MAX));
  auto heap = std::make_unique_for_overwrite<char[]>(capacity);
  if (bytes_ > 0) std::memcpy(heap.get(), text(), bytes_);
  heap_ = std::move(heap);
  capacity_ = capacity;
}

void CommandWords::SetEnd(size_t i, uint32_t end) {
  if (i < kInlineWords) {
    ends_[i] = end;
  } else {
    more_ends_.push_back(end);
  }
}

template <typename Word>
void CommandWords::AssignWords(const Word* words, size_t n) {
  if (n <= kInlineWords) {  // the usual command: copied as its size is summed, no reserve
    more_ends_.clear();
    char* out = text();
    size_t end = 0;
    size_t i = 0;
    for (; i < n && end + words[i].size() <= capacity_; ++i) {
      CopyWord(out + end, words[i].data(), words[i].size());
      end += words[i].size();
      ends_[i] = static_cast<uint32_t>(end);
    }
    if (i == n) {
      bytes_ = static_cast<uint32_t>(end);
      count_ = n;
      return;
    }
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += words[i].size();
  bytes_ = 0;
  count_ = 0;
  more_ends_.clear();
  reserve(n, bytes);
  char* out = text();
  uint32_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    CopyWord(out + end, words[i].data(), words[i].size());
    end += static_cast<uint32_t>(words[i].size());
    SetEnd(i, end);
  }
  bytes_ = end;
  count_ = n;
}

void CommandWords::Assign(const std::string_view* words, size_t n) { AssignWords(words, n); }

CommandWords::CommandWords(const std::vector<std::string>& words) { AssignWords(words.data(), words.size()); }

void CommandWords::push_back(std::string_view word) {
  EnsureBytes(size_t{bytes_} + word.size());
  CopyWord(text() + bytes_, word.data(), word.size());
  bytes_ += static_cast<uint32_t>(word.size());
  SetEnd(count_, bytes_);
  ++count_;
}

void CommandWords::pop_back() {
  --count_;
  bytes_ = count_ == 0 ? 0 : End(count_ - 1);
  if (count_ >= kInlineWords) more_ends_.pop_back();
}

std::vector<std::string> CommandWords::ToStrings() const { return std::vector<std::string>(begin(), end()); }

bool operator==(const CommandWords& a, const CommandWords& b) {
  if (a.count_ != b.count_ || a.bytes_ != b.bytes_) return false;
  if (a.bytes_ > 0 && std::memcmp(a.text(), b.text(), a.bytes_) != 0) return false;
  for (size_t i = 0; i < a.count_; ++i)
    if (a.End(i) != b.End(i)) return false;
  return true;
}

}  // namespace locklab
