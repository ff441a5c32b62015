// CommandWords: a command's words ("SET", key, token, "NX", "PX", "3000") end to end in one
// buffer, each read as a std::string_view into it. A usual command's words fit in the object
// itself (64 bytes, 8 words): no allocation, where a vector of strings cost one for the vector
// and one per word of over 15 bytes; the simulator builds one per simulated command.
//
// A word's view lives as long as the CommandWords is unchanged (push_back and moves may move
// the buffer). Words may hold any bytes, NUL included.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace locklab {

class CommandWords {
 public:
  // Random access over the words, each a std::string_view (a value, not a reference).
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    Iterator() = default;
    Iterator(const CommandWords* words, size_t i) : words_(words), i_(i) {}
    std::string_view operator*() const { return (*words_)[i_]; }
    std::string_view operator[](difference_type n) const { return (*words_)[Moved(n)]; }
    Iterator& operator++() { ++i_; return *this; }
    Iterator operator++(int) { Iterator t = *this; ++i_; return t; }
    Iterator& operator--() { --i_; return *this; }
    Iterator operator--(int) { Iterator t = *this; --i_; return t; }
    Iterator& operator+=(difference_type n) { i_ = Moved(n); return *this; }
    Iterator& operator-=(difference_type n) { i_ = Moved(-n); return *this; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator& a, const Iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iterator& a, const Iterator& b) { return a.i_ <=> b.i_; }

   private:
    size_t Moved(difference_type n) const { return static_cast<size_t>(static_cast<difference_type>(i_) + n); }
    const CommandWords* words_ = nullptr;
    size_t i_ = 0;
  };

  CommandWords() = default;
  CommandWords(std::initializer_list<std::string_view> words);
  CommandWords(const std::vector<std::string>& words);  // NOLINT: a vector of words is words
  CommandWords(const CommandWords& o) { *this = o; }
  CommandWords(CommandWords&& o) noexcept  // o is left empty
      : heap_(std::move(o.heap_)),
        capacity_(std::exchange(o.capacity_, kInlineBytes)),
        bytes_(std::exchange(o.bytes_, 0)),
        count_(std::exchange(o.count_, 0)),
        more_ends_(std::move(o.more_ends_)) {
    if (!heap_) std::memcpy(inline_, o.inline_, kInlineBytes);  // a fixed size: inlined, not a call
    std::memcpy(ends_.data(), o.ends_.data(), sizeof ends_);     // bytes: unset ones copied as they are
  }
  CommandWords& operator=(const CommandWords& o);
  CommandWords& operator=(CommandWords&& o) noexcept {  // o is left empty
    if (this == &o) return *this;
    heap_ = std::move(o.heap_);  // frees ours, if any
    if (!heap_) std::memcpy(inline_, o.inline_, kInlineBytes);
    capacity_ = std::exchange(o.capacity_, kInlineBytes);
    bytes_ = std::exchange(o.bytes_, 0);
    count_ = std::exchange(o.count_, 0);
    std::memcpy(ends_.data(), o.ends_.data(), sizeof ends_);
    more_ends_ = std::move(o.more_ends_);
    o.more_ends_.clear();
    return *this;
  }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : End(i - 1);
    return std::string_view(text() + begin, End(i) - begin);
  }
  std::string_view front() const { return (*this)[0]; }
  std::string_view back() const { return (*this)[count_ - 1]; }
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, count_); }

  // Replaces the words with the n words at `words`: one allocation at most, each word copied once.
  void Assign(const std::string_view* words, size_t n);
  // Room for `words` more words of `bytes` in all (one allocation for what follows).
  void reserve(size_t words, size_t bytes) {
    EnsureBytes(size_t{bytes_} + bytes);
    if (count_ + words > kInlineWords) more_ends_.reserve(count_ + words - kInlineWords);
  }
  void push_back(std::string_view word);
  void pop_back();  // the last word goes (the command must have one)
  // Appends each word of [first, last) (views or strings).
  template <typename It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(std::string_view(*first));
  }

  // The words end to end, and where word i ends in them (a copy in one piece: command_record.h).
  std::string_view joined() const { return std::string_view(text(), bytes_); }
  uint32_t end_of(size_t i) const { return End(i); }

  // The words as strings (tests, and callers that keep them past the command).
  std::vector<std::string> ToStrings() const;
  friend bool operator==(const CommandWords& a, const CommandWords& b);

 private:
  static constexpr size_t kInlineWords = 8;
  static constexpr uint32_t kInlineBytes = 64;  // SET, a key, a 32-byte token, NX PX and a TTL
  uint32_t End(size_t i) const { return i < kInlineWords ? ends_[i] : more_ends_[i - kInlineWords]; }
  const char* text() const { return heap_ ? heap_.get() : inline_; }
  char* text() { return heap_ ? heap_.get() : inline_; }
  void EnsureBytes(size_t bytes) {  // room for `bytes` in all, the words so far kept
    if (bytes > capacity_) Grow(bytes);
  }
  void Grow(size_t bytes);
  void SetEnd(size_t i, uint32_t end);
  // Assign's work, for views (Assign) and strings (the vector constructor); in the .cc.
  template <typename Word>
  void AssignWords(const Word* words, size_t n);

  // The words end to end: in inline_ while they fit, else in heap_ (capacity_ bytes). inline_ and
  // ends_ are not zeroed (a command is made per simulated command, and zeroing them was the one
  // store loop of its making): only their first bytes_ and count_ are ever read, and they are
  // copied as bytes (memcpy), set or not.
  char inline_[kInlineBytes];
  std::unique_ptr<char[]> heap_;
  uint32_t capacity_ = kInlineBytes;
  uint32_t bytes_ = 0;
  size_t count_ = 0;
  std::array<uint32_t, kInlineWords> ends_;  // where word i ends (it begins where i-1 ends)
  std::vector<uint32_t> more_ends_;          // ... for words past the first kInlineWords
};

}  // namespace locklab
